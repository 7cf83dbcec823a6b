"""Unit tests for History.bind / abind / flush: a history persisted in a store as it changes."""

from __future__ import annotations

import asyncio
import copy
import pickle
import threading
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import threadline as tl
from threadline.context import RollingSummary
from threadline.context import is_summary
from threadline.history import History
from threadline.history import HistoryEvent
from threadline.stores import Appended
from threadline.stores import MemoryStore
from threadline.stores import SQLiteStore


def make(n: int, prefix: str = "m") -> list[tl.Message]:
    return [tl.user_message(f"text {i}", id=f"{prefix}{i}") for i in range(n)]


def ids(messages: Any) -> list[str]:
    return [m.id for m in messages]


class Recording(MemoryStore):
    """A MemoryStore that records writes and fails them on demand, like a store whose
    server went away."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[tuple[str, list[str]]] = []
        self.failing = False
        self.fail_loads = False

    def load(self, conversation_id: str) -> list[tl.Message]:
        if self.fail_loads:
            raise tl.StoreError("load failed: server unreachable")
        return super().load(conversation_id)

    def load_after(self, conversation_id: str, version: int) -> Appended:
        if self.fail_loads:  # bind reads through load_after(id, 0): the version and the rows
            raise tl.StoreError("load failed: server unreachable")
        return super().load_after(conversation_id, version)

    def append(
        self,
        conversation_id: str,
        messages: Sequence[tl.Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        if self.failing:
            raise tl.StoreError("append failed: server unreachable")
        self.writes.append(("append", ids(messages)))
        super().append(conversation_id, messages, expected_version=expected_version)

    def replace(
        self,
        conversation_id: str,
        messages: Sequence[tl.Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        if self.failing:
            raise tl.StoreError("replace failed: server unreachable")
        self.writes.append(("replace", ids(messages)))
        super().replace(conversation_id, messages, expected_version=expected_version)


class AsyncRecording:
    """An AsyncStore over a Recording store (no server needed), yielding to the loop on every
    call so that other tasks can run in between."""

    def __init__(self) -> None:
        self.inner = Recording()

    async def load(self, conversation_id: str) -> list[tl.Message]:
        await asyncio.sleep(0)
        return self.inner.load(conversation_id)

    async def append(
        self,
        conversation_id: str,
        messages: Sequence[tl.Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        await asyncio.sleep(0)
        self.inner.append(conversation_id, messages)

    async def replace(
        self,
        conversation_id: str,
        messages: Sequence[tl.Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        await asyncio.sleep(0)
        self.inner.replace(conversation_id, messages)

    async def version(self, conversation_id: str) -> int:
        return self.inner.version(conversation_id)

    async def delete(self, conversation_id: str) -> None:
        self.inner.delete(conversation_id)

    async def list_conversations(
        self, limit: int | None = None, after: str | None = None
    ) -> list[str]:
        return self.inner.list_conversations(limit, after)

    async def conversation_info(self, conversation_id: str) -> tl.ConversationInfo | None:
        return self.inner.conversation_info(conversation_id)

    async def fork(self, conversation_id: str, new_id: str, at: int | None = None) -> None:
        self.inner.fork(conversation_id, new_id, at)

    async def parent(self, conversation_id: str) -> tuple[str, int] | None:
        return self.inner.parent(conversation_id)

    async def load_after(self, conversation_id: str, version: int) -> tl.Appended:
        return self.inner.load_after(conversation_id, version)


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "memory":
        yield MemoryStore()
        return
    sqlite = SQLiteStore(tmp_path / "threadline.db")
    yield sqlite
    sqlite.close()


# -- bind --------------------------------------------------------------------------------------


class TestBind:
    def test_round_trip_through_every_mutation(self, store: Any) -> None:
        history = History([tl.system_message("rules", id="s")]).bind(store, "c1")
        assert ids(store.load("c1")) == ["s"]  # the current messages start the conversation
        history.append(tl.user_message("hi", id="u"))
        history.extend(make(3))
        assert ids(store.load("c1")) == ids(history) == ["s", "u", "m0", "m1", "m2"]
        history.restore(make(2, "r"))
        assert ids(store.load("c1")) == ["r0", "r1"]
        history.reset()
        assert store.load("c1") == []
        history.append(tl.user_message("again", id="a"))
        reloaded = History().bind(store, "c1")
        assert list(reloaded) == list(history)

    def test_binding_to_an_existing_conversation_loads_it(self, store: Any) -> None:
        store.append("c1", make(3))
        history = History([tl.user_message("discarded", id="x")])
        events: list[HistoryEvent] = []
        history.subscribe(events.append)
        assert history.bind(store, "c1") is history
        assert ids(history) == ["m0", "m1", "m2"]
        assert [e.kind for e in events] == ["restore"]
        assert ids(store.load("c1")) == ["m0", "m1", "m2"]  # nothing written by the load

    def test_extend_is_one_store_batch(self) -> None:
        store = Recording()
        history = History().bind(store, "c1")
        history.extend(make(3))
        history.append(tl.user_message("one", id="one"))
        history.extend([])
        assert store.writes == [("append", ["m0", "m1", "m2"]), ("append", ["one"])]

    def test_the_window_is_not_written_through_and_applies_again_on_load(self, store: Any) -> None:
        history = History(max_messages=2).bind(store, "c1")
        history.extend(make(5))
        assert ids(history) == ["m3", "m4"]
        assert ids(store.load("c1")) == ids(make(5))  # the full log
        reloaded = History(max_messages=3).bind(store, "c1")
        assert ids(reloaded) == ["m2", "m3", "m4"]

    def test_a_failed_write_raises_and_changes_nothing(self) -> None:
        store = Recording()
        history = History(make(2)).bind(store, "c1")
        events: list[HistoryEvent] = []
        history.subscribe(events.append)
        before = history.snapshot()
        store.failing = True
        mutation: Callable[[], object]
        for mutation in (
            lambda: history.append(tl.user_message("lost?")),
            lambda: history.extend(make(2, "x")),
            lambda: history.restore(make(1, "r")),
            history.reset,
        ):
            with pytest.raises(tl.StoreError, match="server unreachable"):
                mutation()
            assert history.snapshot() is before
            assert history.version == 0
        assert events == []
        assert store.load("c1") == list(history)
        store.failing = False
        history.append(tl.user_message("now it works", id="ok"))
        assert store.load("c1") == list(history)

    def test_a_failed_write_with_a_window_changes_nothing_either(self) -> None:
        store = Recording()
        history = History(max_tokens=1000).bind(store, "c1")
        history.extend(make(3))
        store.failing = True
        with pytest.raises(tl.StoreError):
            history.append(tl.user_message("x"))
        assert ids(history) == ["m0", "m1", "m2"]
        assert history.total_tokens == sum(map(tl.tokens.estimate_tokens, history))

    def test_a_failed_load_leaves_the_history_unbound(self) -> None:
        store = Recording()
        store.fail_loads = True
        history = History()
        with pytest.raises(tl.StoreError):
            history.bind(store, "c1")
        history.append(tl.user_message("x"))
        assert store.writes == []
        store.fail_loads = False
        history.bind(store, "c1")  # may be bound after all
        assert ids(store.load("c1")) == ids(history)

    def test_a_bad_conversation_id_is_refused(self) -> None:
        with pytest.raises(tl.ValidationError, match="conversation id"):
            History().bind(MemoryStore(), "../escape")

    def test_binding_twice_is_refused(self) -> None:
        history = History().bind(MemoryStore(), "c1")
        with pytest.raises(RuntimeError, match="bound already"):
            history.bind(MemoryStore(), "c2")

    def test_bind_takes_a_blocking_store(self) -> None:
        with pytest.raises(TypeError, match="abind"):
            History().bind(AsyncRecording(), "c1")  # type: ignore[arg-type]

    def test_copies_and_pickles_are_not_bound(self) -> None:
        store = Recording()
        history = History(make(1)).bind(store, "c1")
        for clone in (history.copy(), copy.copy(history), pickle.loads(pickle.dumps(history))):
            clone.append(tl.user_message("only in the clone"))
            assert clone.pending_writes == 0
            clone.bind(store, "c2")  # a clone can be bound on its own
        assert ids(store.load("c1")) == ["m0"]

    def test_a_summary_is_written_as_a_replace(self) -> None:
        store = Recording()
        history = History(make(6)).bind(store, "c1")
        history.use(RollingSummary(lambda messages, previous: "the gist"))
        asyncio.run(history.reduce(max_messages=2))
        assert store.writes[-1][0] == "replace"
        assert store.load("c1") == list(history)
        assert is_summary(store.load("c1")[0])

    def test_concurrent_appends_reach_the_store_in_the_history_order(self) -> None:
        store = MemoryStore()
        history = History().bind(store, "c1")

        def worker(name: str) -> None:
            for i in range(100):
                history.append(tl.user_message(f"{name}{i}", id=f"{name}{i}"))

        threads = [threading.Thread(target=worker, args=(f"t{n}-",)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert len(history) == 400
        assert store.load("c1") == list(history)


# -- abind and flush ---------------------------------------------------------------------------


class TestAbind:
    def test_writes_queue_in_order_and_flush_sends_them(self) -> None:
        async def main() -> tuple[History, AsyncRecording]:
            store = AsyncRecording()
            history = await History([tl.system_message("rules", id="s")]).abind(store, "c1")
            assert store.inner.writes == [("replace", ["s"])]  # the start, written at once
            history.append(tl.user_message("hi", id="u"))
            history.extend(make(2))
            history.append(tl.user_message("bye", id="b"))
            assert history.pending_writes == 3
            assert ids(store.inner.load("c1")) == ["s"]  # nothing sent yet
            await history.flush()
            assert history.pending_writes == 0
            # Consecutive appends go as one batch, in order.
            assert store.inner.writes[1:] == [("append", ["u", "m0", "m1", "b"])]
            return history, store

        history, store = asyncio.run(main())
        assert store.inner.load("c1") == list(history)

    def test_a_replace_supersedes_the_writes_queued_before_it(self) -> None:
        async def main() -> AsyncRecording:
            store = AsyncRecording()
            history = await History().abind(store, "c1")
            history.extend(make(3))
            history.restore(make(1, "r"))
            history.append(tl.user_message("after", id="a"))
            history.reset()
            history.append(tl.user_message("last", id="l"))
            await history.flush()
            assert store.inner.load("c1") == list(history)
            return store

        store = asyncio.run(main())
        assert store.inner.writes == [("replace", []), ("append", ["l"])]

    def test_a_failed_flush_raises_keeps_the_writes_queued_and_retries(self) -> None:
        async def main() -> None:
            store = AsyncRecording()
            history = await History().abind(store, "c1")
            history.extend(make(2))
            store.inner.failing = True
            with pytest.raises(tl.StoreError, match="server unreachable"):
                await history.flush()
            assert history.pending_writes == 1
            assert ids(history) == ["m0", "m1"]  # nothing lost from memory
            history.append(tl.user_message("while down", id="w"))
            with pytest.raises(tl.StoreError):
                await history.flush()
            store.inner.failing = False
            await history.flush()
            assert history.pending_writes == 0
            assert store.inner.load("c1") == list(history)
            assert store.inner.writes == [("append", ["m0", "m1", "w"])]

        asyncio.run(main())

    def test_a_failed_replace_stays_ahead_of_later_appends(self) -> None:
        async def main() -> None:
            store = AsyncRecording()
            history = await History(make(2)).abind(store, "c1")
            history.restore(make(1, "r"))
            history.append(tl.user_message("x", id="x"))
            store.inner.failing = True
            with pytest.raises(tl.StoreError):
                await history.flush()
            store.inner.failing = False
            await history.flush()
            assert ids(store.inner.load("c1")) == ["r0", "x"]

        asyncio.run(main())

    def test_concurrent_flushes_send_each_write_once(self) -> None:
        async def main() -> AsyncRecording:
            store = AsyncRecording()
            history = await History().abind(store, "c1")
            for i in range(5):
                history.append(tl.user_message(f"{i}", id=f"m{i}"))
                await asyncio.gather(history.flush(), history.flush())
            assert store.inner.load("c1") == list(history)
            return store

        store = asyncio.run(main())
        assert [name for _, batch in store.inner.writes for name in batch] == ids(make(5))

    def test_abind_loads_an_existing_conversation(self) -> None:
        async def main() -> History:
            store = AsyncRecording()
            store.inner.append("c1", make(3))
            history = History(max_messages=2)
            return await history.abind(store, "c1")

        assert ids(asyncio.run(main())) == ["m1", "m2"]

    def test_abind_takes_an_async_store_and_binds_once(self) -> None:
        async def main() -> None:
            with pytest.raises(TypeError, match="bind"):
                await History().abind(MemoryStore(), "c1")  # type: ignore[arg-type]
            history = await History().abind(AsyncRecording(), "c1")
            with pytest.raises(RuntimeError, match="bound already"):
                await history.abind(AsyncRecording(), "c1")

        asyncio.run(main())

    def test_flush_without_queued_writes_does_nothing(self) -> None:
        async def main() -> None:
            await History().flush()  # unbound
            history = History().bind(MemoryStore(), "c1")
            history.append(tl.user_message("x"))
            await history.flush()  # bound with bind: written already
            assert history.pending_writes == 0

        asyncio.run(main())


def test_abind_writes_again_what_changed_while_it_wrote_the_start() -> None:
    class Slow(AsyncRecording):
        def __init__(self, history: History) -> None:
            super().__init__()
            self.history = history

        async def replace(
            self,
            conversation_id: str,
            messages: Sequence[tl.Message],
            *,
            expected_version: int | None = None,
        ) -> None:
            if len(self.inner.writes) == 0:
                self.history.append(tl.user_message("sneaked in", id="late"))
            await super().replace(conversation_id, messages, expected_version=expected_version)

    async def main() -> tuple[History, Slow]:
        history = History(make(1))
        store = Slow(history)
        await history.abind(store, "c1")
        return history, store

    history, store = asyncio.run(main())
    assert ids(store.inner.load("c1")) == ids(history) == ["m0", "late"]
    assert history.pending_writes == 0
