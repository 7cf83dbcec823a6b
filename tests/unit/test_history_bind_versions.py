"""History.bind with versions: the policy argument, the start of a conversation two workers
bind at once, a store without versions, and expected_version's own validation."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

import threadline as tl
from threadline.stores import MemoryStore


def ids(history: tl.History) -> list[str]:
    return [m.id for m in history.snapshot()]


def test_on_conflict_must_be_raise_or_reload() -> None:
    with pytest.raises(ValueError, match="on_conflict must be"):
        tl.History().bind(MemoryStore(), "c", on_conflict="merge")  # type: ignore[arg-type]


class StartRace(MemoryStore):
    """Another worker writes the conversation's start between this worker's load and write."""

    def __init__(self) -> None:
        super().__init__()
        self.raced = False

    def replace(
        self,
        conversation_id: str,
        messages: Sequence[tl.Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        if not self.raced:
            self.raced = True
            super().append(conversation_id, [tl.system_message("theirs", id="theirs")])
        super().replace(conversation_id, messages, expected_version=expected_version)


def test_a_start_written_first_by_another_worker_is_taken_with_reload() -> None:
    store = StartRace()
    history = tl.History([tl.system_message("mine", id="mine")])
    history.bind(store, "c", on_conflict="reload")
    assert ids(history) == ["theirs"]
    assert [m.id for m in store.load("c")] == ["theirs"]
    history.append(tl.user_message("hi", id="u"))
    assert [m.id for m in store.load("c")] == ["theirs", "u"]


def test_a_start_written_first_by_another_worker_raises_and_leaves_it_unbound() -> None:
    store = StartRace()
    history = tl.History([tl.system_message("mine", id="mine")])
    with pytest.raises(tl.ConflictError):
        history.bind(store, "c")
    assert ids(history) == ["mine"]
    assert [m.id for m in store.load("c")] == ["theirs"]
    history.bind(store, "c")  # not bound: binding again works, and takes what is stored
    assert ids(history) == ["theirs"]


class Unversioned:
    """A store written before versions: no version(), no expected_version."""

    def __init__(self) -> None:
        self.inner = MemoryStore()

    def load(self, conversation_id: str) -> list[tl.Message]:
        return self.inner.load(conversation_id)

    def append(self, conversation_id: str, messages: Sequence[tl.Message]) -> None:
        self.inner.append(conversation_id, messages)

    def replace(self, conversation_id: str, messages: Sequence[tl.Message]) -> None:
        self.inner.replace(conversation_id, messages)

    def delete(self, conversation_id: str) -> None:
        self.inner.delete(conversation_id)

    def list_conversations(self) -> list[str]:
        return self.inner.list_conversations()


def test_a_store_without_versions_is_bound_unversioned() -> None:
    store = Unversioned()
    a = tl.History().bind(store, "c")  # type: ignore[arg-type]
    b = tl.History().bind(store, "c")  # type: ignore[arg-type]
    a.append(tl.user_message("a", id="a"))
    b.append(tl.user_message("b", id="b"))  # no version to check: written as before
    assert [m.id for m in store.load("c")] == ["a", "b"]


def test_whether_a_store_takes_versions_is_read_per_method_each_bind() -> None:
    """The answer is kept per method, so a subclass overriding ``append`` without
    ``expected_version``, or an instance given its own ``append``, is read anew even after
    its parent class was bound."""
    from threadline._binding import takes_versions

    class OldAppend(MemoryStore):
        def append(self, conversation_id: str, messages: Sequence[tl.Message]) -> None:  # type: ignore[override]
            super().append(conversation_id, messages)

    assert takes_versions(MemoryStore())
    assert not takes_versions(OldAppend())
    assert takes_versions(MemoryStore())
    patched = MemoryStore()
    patched.append = lambda conversation_id, messages: None  # type: ignore[method-assign,assignment,misc]
    assert not takes_versions(patched)
    assert takes_versions(MemoryStore())


def test_a_write_whose_reply_was_lost_counts_as_done() -> None:
    class LostReply(MemoryStore):
        lose = True

        def append(
            self,
            conversation_id: str,
            messages: Sequence[tl.Message],
            *,
            expected_version: int | None = None,
        ) -> None:
            super().append(conversation_id, messages, expected_version=expected_version)
            if self.lose:
                self.lose = False
                raise tl.StoreError("the connection dropped after the commit")

    store = LostReply()
    history = tl.History().bind(store, "c")
    message = tl.user_message("once", id="m")
    with pytest.raises(tl.StoreError):
        history.append(message)
    assert ids(history) == []
    history.append(message)  # sent again: its own write, stored already, is recognised
    assert ids(history) == ["m"]
    assert [m.id for m in store.load("c")] == ["m"]
    history.append(tl.user_message("next", id="n"))
    assert store.version("c") == 2


@pytest.mark.parametrize("bad", [-1, True, 1.0, "1"])
def test_expected_version_must_be_a_non_negative_int(bad: object) -> None:
    store = MemoryStore()
    with pytest.raises(tl.ValidationError, match="expected_version"):
        store.append("c", [tl.user_message("x")], expected_version=bad)  # type: ignore[arg-type]
    with pytest.raises(tl.ValidationError, match="expected_version"):
        store.replace("c", [], expected_version=bad)  # type: ignore[arg-type]
    assert store.version("c") == 0
