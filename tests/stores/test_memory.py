"""MemoryStore: copies in and out, and the same contract details as the persistent stores."""

from __future__ import annotations

import pytest

import threadline as tl
from threadline.stores import MemoryStore


def test_caller_lists_are_copied_in_and_out() -> None:
    store = MemoryStore()
    given = [tl.user_message("a", id="a")]
    store.append("c", given)
    given.append(tl.user_message("b", id="b"))
    loaded = store.load("c")
    loaded.append(tl.user_message("z", id="z"))
    assert [m.id for m in store.load("c")] == ["a"]
    assert store.load("c") is not store.load("c")


def test_replay_is_not_kept() -> None:
    store = MemoryStore()
    message = tl.user_message("a", id="a").model_copy(update={"replay": True})
    store.replace("c", [message])
    assert store.load("c") == [message.model_copy(update={"replay": False})]
    assert message.replay  # the caller's message is untouched


def test_non_messages_are_refused_naming_the_index() -> None:
    store = MemoryStore()
    with pytest.raises(tl.ValidationError, match=r"messages\[1\].*dict"):
        store.append("c", [tl.user_message("a"), {"role": "user"}])  # type: ignore[list-item]
    with pytest.raises(tl.ValidationError, match="wrap a single message in a list"):
        store.append("c", tl.user_message("a"))  # type: ignore[arg-type]
    assert store.list_conversations() == []


def test_repr_counts_conversations() -> None:
    store = MemoryStore()
    store.append("c", [tl.user_message("a")])
    assert repr(store) == "MemoryStore(<1 conversations>)"
