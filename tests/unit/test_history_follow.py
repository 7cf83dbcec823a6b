"""``bind(..., follow=True)`` and ``abind(..., follow=True)``: other writers' appends reach the
history (and its subscribers) as ``extend`` events, a replace as a ``restore``; the history's own
writes are not applied twice; ``unfollow`` stops it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import threadline as tl
from tests.stores._helpers import ThreadedAsyncStore
from tests.stores._helpers import store_factory
from threadline.stores import MemoryStore
from threadline.stores import SQLiteStore
from threadline.stores._watch import PollingWatch

GUARD = 30.0  # seconds: against a hang only


class WatchedAsyncStore(ThreadedAsyncStore, PollingWatch):
    """An async store with a polling watch (what the async twins get)."""

    async def version(self, conversation_id: str) -> int:
        return await asyncio.to_thread(self.store.version, conversation_id)

    async def replace(
        self,
        conversation_id: str,
        messages: Sequence[tl.Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        await asyncio.to_thread(self.store.replace, conversation_id, messages)


def texts(messages: Iterable[tl.Message]) -> list[str]:
    return [message.text for message in messages]


async def until(condition: Any) -> None:
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), GUARD)


@pytest.mark.parametrize("kind", ["memory", "sqlite", "jsonl"])
def test_a_following_history_sees_other_writers(kind: str, tmp_path: Path) -> None:
    store = store_factory(kind, tmp_path)()
    other = store if kind == "memory" else type(store)(*_arguments(store, tmp_path, kind))
    store.append("c", [tl.user_message("start")])
    events: list[tuple[str, list[str]]] = []

    async def main() -> None:
        history = tl.History().bind(store, "c", follow=True)
        history.subscribe(lambda event: events.append((event.kind, texts(event.messages))))
        other.append("c", [tl.assistant_message("from B"), tl.user_message("again B")])
        await until(lambda: len(history) == 3)
        history.append(tl.user_message("from A"))  # written with the version it followed
        other.append("c", [tl.assistant_message("B answers")])
        await until(lambda: len(history) == 5)
        other.replace("c", [tl.user_message("fresh")])
        await until(lambda: texts(history) == ["fresh"])
        await history.unfollow()
        other.append("c", [tl.user_message("unseen")])
        await asyncio.sleep(0.2)
        assert texts(history) == ["fresh"]

    asyncio.run(main())
    assert events == [
        ("extend", ["from B", "again B"]),
        ("append", ["from A"]),
        ("extend", ["B answers"]),
        ("restore", ["fresh"]),
    ]
    assert texts(store.load("c")) == ["fresh", "unseen"]


def _arguments(store: Any, tmp_path: Path, kind: str) -> tuple[Any, ...]:
    """A second handle on the same files: another writer, as another process would be."""
    if kind == "sqlite":
        return (store.path,)
    return (store.directory,)


def test_an_async_history_follows_and_skips_its_own_writes() -> None:
    backing = MemoryStore()
    store = WatchedAsyncStore(backing)
    events: list[tuple[str, list[str]]] = []

    async def main() -> None:
        history = await tl.History([tl.user_message("hi")]).abind(store, "c", follow=True)
        history.subscribe(lambda event: events.append((event.kind, texts(event.messages))))
        history.append(tl.user_message("mine"))
        await history.flush()
        backing.append("c", [tl.assistant_message("theirs")])
        await until(lambda: len(history) == 3)
        await asyncio.sleep(0.2)  # its own write came back through the watch: skipped
        await history.unfollow()
        await history.unfollow()  # twice is fine

    asyncio.run(main())
    assert events == [("append", ["mine"]), ("extend", ["theirs"])]


def test_follow_needs_a_running_loop_and_a_watch(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "a.db")
    history = tl.History()
    with pytest.raises(RuntimeError, match="running event loop"):
        history.bind(store, "c", follow=True)
    history.bind(store, "c")  # nothing was bound by the refused call

    class NoWatch(MemoryStore):
        watch = None  # type: ignore[assignment]

    async def main() -> None:
        with pytest.raises(TypeError, match="no watch"):
            tl.History().bind(NoWatch(), "c", follow=True)
        with pytest.raises(TypeError, match="follow must be"):
            tl.History().bind(MemoryStore(), "c", follow=1)  # type: ignore[arg-type]

    asyncio.run(main())


def test_unfollow_without_following_does_nothing() -> None:
    asyncio.run(tl.History().unfollow())


class _SwallowsOneCancel:
    """A watch whose driver turns the first cancellation into an error it retries (as a lost
    connection): following must stop anyway."""

    version: int | None = 0

    def __init__(self) -> None:
        self.swallowed = 0
        self.closed = False

    def __aiter__(self) -> _SwallowsOneCancel:
        return self

    async def __anext__(self) -> list[tl.Message]:
        while True:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                if self.swallowed:
                    raise
                self.swallowed += 1  # "reconnect" and wait again

    async def aclose(self) -> None:
        self.closed = True


def test_unfollow_stops_a_watch_that_swallows_a_cancellation() -> None:
    watch = _SwallowsOneCancel()

    class Store(WatchedAsyncStore):
        def watch(
            self,
            conversation_id: str,
            after_version: int | None = None,
            *,
            poll_interval: float = 0.0,
        ) -> Any:
            return watch

    async def main() -> None:
        history = await tl.History().abind(Store(MemoryStore()), "c", follow=True)
        await asyncio.sleep(0.05)  # the follow task is waiting in the watch
        await asyncio.wait_for(history.unfollow(), 10)  # it waited forever before

    asyncio.run(main())
    assert watch.swallowed == 1
    assert watch.closed
