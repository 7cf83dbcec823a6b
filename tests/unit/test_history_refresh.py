"""``History.refresh`` and ``arefresh``: a bound history takes in what other writers stored with
one ``load_after`` read, as events its subscribers see, and keeps its own unsent writes.

A hypothesis law: after random writes by another worker (appends, replaces, deletes), a
refreshed history holds what a fresh bind loads, and its next write does not conflict.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import threadline as tl
from tests.support import examples
from threadline.history import History
from threadline.stores import AsyncMemoryStore
from threadline.stores import MemoryStore
from threadline.stores import SQLiteStore


def ids(messages: Iterable[tl.Message]) -> list[str]:
    return [m.id for m in messages]


def user(message_id: str) -> tl.Message:
    return tl.user_message(message_id, id=message_id)


class Counting(MemoryStore):
    """Counts the reads a refresh makes."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[str] = []

    def load(self, conversation_id: str) -> list[tl.Message]:
        self.reads.append("load")
        return super().load(conversation_id)

    def load_after(self, conversation_id: str, version: int) -> tl.Appended:
        self.reads.append(f"load_after {version}")
        return super().load_after(conversation_id, version)


def test_refresh_takes_new_messages_in_as_one_extend_with_one_read() -> None:
    store = Counting()
    mine = History().bind(store, "c")
    other = History().bind(store, "c")
    events: list[tuple[str, list[str]]] = []
    mine.subscribe(lambda event: events.append((event.kind, ids(event.messages))))
    other.extend([user("a"), user("b")])
    store.reads.clear()
    result = mine.refresh()
    assert store.reads == ["load_after 0"]
    assert result == tl.Appended(1, [user("a"), user("b")], False)
    assert events == [("extend", ["a", "b"])]
    assert ids(mine) == ["a", "b"]
    mine.append(user("c"))  # writes with the version read: no conflict
    assert ids(store.load("c")) == ["a", "b", "c"]
    assert mine.refresh() == tl.Appended(2, [], False)
    assert events[-1] == ("append", ["c"])


def test_refresh_after_a_replace_restores_the_stored_conversation(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "r.db")
    mine = History().bind(store, "c")
    mine.extend([user("a"), user("b")])
    other = History().bind(store, "c")
    other.restore([user("x")])
    kinds: list[str] = []
    mine.subscribe(lambda event: kinds.append(event.kind))
    result = mine.refresh()
    assert result.replaced
    assert ids(result.messages) == ["x"]
    assert kinds == ["restore"]
    assert ids(mine) == ["x"]
    mine.append(user("y"))
    assert ids(store.load("c")) == ["x", "y"]
    store.close()


def test_refresh_of_an_unchanged_conversation_sends_no_event() -> None:
    store = MemoryStore()
    history = History().bind(store, "c")
    history.append(user("a"))
    kinds: list[str] = []
    history.subscribe(lambda event: kinds.append(event.kind))
    assert history.refresh() == tl.Appended(1, [], False)
    assert kinds == []


def test_refresh_keeps_the_window() -> None:
    store = MemoryStore()
    store.append("c", [user(f"m{i}") for i in range(3)])
    history = History(max_messages=2).bind(store, "c")
    store.append("c", [user("m3")])
    history.refresh()
    assert ids(history) == ["m2", "m3"]


def test_refresh_needs_a_blocking_binding() -> None:
    with pytest.raises(RuntimeError, match="not bound"):
        History().refresh()

    async def main() -> None:
        history = await History().abind(AsyncMemoryStore(), "c")
        with pytest.raises(TypeError, match="arefresh"):
            history.refresh()
        with pytest.raises(RuntimeError, match="not bound"):
            await History().arefresh()
        blocking = History().bind(MemoryStore(), "c")
        with pytest.raises(TypeError, match=r"history\.refresh\(\)"):
            await blocking.arefresh()

    asyncio.run(main())


class Older(MemoryStore):
    """A store written before load_after."""

    def __getattribute__(self, name: str) -> Any:
        if name == "load_after":
            raise AttributeError(name)
        return super().__getattribute__(name)


def test_a_store_without_load_after_is_loaded_whole() -> None:
    store = Older()
    history = History().bind(store, "c")
    store.append("c", [user("a")])
    result = history.refresh()
    assert result.replaced
    assert ids(result.messages) == ["a"]
    assert result.version == 1
    assert ids(history) == ["a"]


def test_arefresh_puts_stored_messages_before_the_unsent_ones() -> None:
    async def main() -> None:
        store = AsyncMemoryStore()
        mine = await History().abind(store, "c")
        other = await History().abind(store, "c")
        other.append(user("theirs"))
        await other.flush()
        mine.append(user("mine"))  # queued, not sent
        kinds: list[str] = []
        mine.subscribe(lambda event: kinds.append(event.kind))
        result = await mine.arefresh()
        assert ids(result.messages) == ["theirs"]
        assert not result.replaced
        assert ids(mine) == ["theirs", "mine"]
        assert mine.pending_writes == 1
        assert kinds == ["restore"]
        await mine.flush()
        assert ids(await store.load("c")) == ["theirs", "mine"]

    asyncio.run(main())


def test_arefresh_does_not_send_again_what_the_store_holds() -> None:
    async def main() -> None:
        store = AsyncMemoryStore()
        mine = await History().abind(store, "c")
        mine.append(user("a"))
        await store.append("c", [user("a")])  # stored already (an earlier flush's lost reply)
        await mine.arefresh()
        assert mine.pending_writes == 0
        assert ids(mine) == ["a"]
        mine.append(user("b"))
        await mine.flush()
        assert ids(await store.load("c")) == ["a", "b"]

    asyncio.run(main())


def test_a_queued_replace_wins_over_what_others_stored() -> None:
    async def main() -> None:
        store = AsyncMemoryStore()
        mine = await History().abind(store, "c", on_conflict="reload")
        mine.append(user("a"))
        await mine.flush()
        mine.restore([user("r")])  # queued replace
        await store.append("c", [user("theirs")])
        await mine.arefresh()
        assert ids(mine) == ["r"]
        await mine.flush()
        assert ids(await store.load("c")) == ["r"]

    asyncio.run(main())


_OTHER_WRITES = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(1, 3)),
        st.tuples(st.just("replace"), st.integers(0, 3)),
        st.tuples(st.just("delete"), st.just(0)),
        st.tuples(st.just("refresh"), st.just(0)),
        st.tuples(st.just("mine"), st.just(1)),
    ),
    max_size=12,
)


@settings(
    max_examples=examples(100),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(writes=_OTHER_WRITES)
def test_a_refreshed_history_holds_what_the_store_holds(writes: list[tuple[str, int]]) -> None:
    store = MemoryStore()
    mine = History().bind(store, "c")
    mirror: list[str] = []
    mine.subscribe(lambda event: mirror.__setitem__(slice(None), ids(mine)))
    for number, (write, count) in enumerate(writes):
        batch = [user(f"w{number}-{i}") for i in range(count)]
        if write == "append":
            store.append("c", batch)
        elif write == "replace":
            store.replace("c", batch)
        elif write == "delete":
            store.delete("c")
        elif write == "refresh":
            mine.refresh()
            assert ids(mine) == ids(store.load("c")) == mirror
        else:
            mine.refresh()
            mine.extend(batch)  # expects the version the refresh read: never a conflict
            assert ids(mine) == ids(store.load("c"))
    mine.refresh()
    assert ids(mine) == ids(store.load("c"))
