"""``stores/_replays.Batch`` (issue 20): the one place the SQLite, Redis and PostgreSQL stores
apply the replay rule to a write's rows."""

from __future__ import annotations

import pytest

import threadline as tl
from threadline.stores._replays import Batch

A = tl.user_message("a", id="m1")
B = tl.assistant_message("b", id="m2")
OTHER_A = tl.user_message("not a", id="m1")


def _batch(*messages: tl.Message) -> Batch:
    items = list(messages)
    return Batch("c", items, [m.model_dump_json() for m in items], "S.append")


def test_a_batch_of_new_distinct_ids_keeps_every_row() -> None:
    batch = _batch(A, B)
    assert batch.ids == ["m1", "m2"]
    assert batch.kept({}) == [0, 1]
    assert batch.without_replays({}) == (["m1", "m2"], batch.texts)


def test_replays_of_the_stored_messages_or_of_the_batch_are_dropped() -> None:
    batch = _batch(A, B, B)
    assert batch.kept({}) == [0, 1]
    assert batch.kept({"m1": A.model_dump_json()}) == [1]
    assert batch.without_replays({"m1": A.model_dump_json()}) == (["m2"], [batch.texts[1]])


def test_an_id_naming_another_message_refuses_the_batch() -> None:
    with pytest.raises(tl.ValidationError, match=r"S\.append"):
        _batch(A, OTHER_A).kept({})
    with pytest.raises(tl.ValidationError, match=r"S\.append"):
        _batch(A).kept({"m1": OTHER_A.model_dump_json()})


def test_a_subclass_compares_its_own_keys() -> None:
    class Digests(Batch):
        def _keys(self) -> list[str]:
            return ["same" for _ in self.ids]

    batch = Digests("c", [A, OTHER_A], [A.model_dump_json(), OTHER_A.model_dump_json()], "S")
    assert batch.kept({}) == [0]  # equal keys: a replay, whatever the texts say
