"""``abind`` writes with versions: each flush expects the version the history last saw, and a
conflict is handled as ``bind`` handles it: ``on_conflict="raise"`` raises and writes nothing,
``"reload"`` takes the other writer's messages in before the unsent ones, then writes."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import threadline as tl
from tests.stores._helpers import AsyncLostReply
from threadline.history import History
from threadline.stores import AsyncMemoryStore
from threadline.stores import AsyncSQLiteStore


def ids(messages: Sequence[tl.Message]) -> list[str]:
    return [m.id for m in messages]


class Recording(AsyncMemoryStore):
    """Records the ``expected_version`` of every write."""

    def __init__(self) -> None:
        super().__init__()
        self.expected: list[int | None] = []

    async def append(
        self, conversation_id: str, messages: Sequence[tl.Message], **options: Any
    ) -> None:
        self.expected.append(options.get("expected_version"))
        await super().append(conversation_id, messages, **options)


@pytest.fixture(params=["memory", "sqlite"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def open_store(kind: str, tmp_path: Path) -> Any:
    """A second object on the same storage for SQLite (another worker), the same for memory."""
    if kind == "memory":
        return _SHARED.setdefault(str(tmp_path), AsyncMemoryStore())
    return AsyncSQLiteStore(tmp_path / "threads.db")


_SHARED: dict[str, AsyncMemoryStore] = {}


def test_a_flush_writes_with_the_version_last_seen() -> None:
    async def main() -> None:
        store = Recording()
        await store.append("c", [tl.system_message("s", id="s")])
        history = await History().abind(store, "c")
        history.append(tl.user_message("one", id="u1"))
        await history.flush()
        history.append(tl.user_message("two", id="u2"))
        await history.flush()
        assert store.expected == [None, 1, 2]

    asyncio.run(main())


def test_raise_refuses_a_flush_after_another_writer_and_writes_nothing(
    kind: str, tmp_path: Path
) -> None:
    async def main() -> None:
        store = open_store(kind, tmp_path)
        worker_a = await History([tl.system_message("s", id="s")]).abind(store, "c")
        worker_b = await History().abind(open_store(kind, tmp_path), "c")
        worker_a.append(tl.user_message("from A", id="a1"))
        await worker_a.flush()
        worker_b.append(tl.user_message("from B", id="b1"))
        with pytest.raises(tl.ConflictError) as caught:
            await worker_b.flush()
        assert (caught.value.expected, caught.value.actual) == (1, 2)
        assert "on_conflict" in str(caught.value)
        assert ids(await store.load("c")) == ["s", "a1"]
        assert await store.version("c") == 2
        assert ids(worker_b.snapshot()) == ["s", "b1"]
        assert worker_b.pending_writes == 1  # kept, not lost
        with pytest.raises(tl.ConflictError):
            await worker_b.flush()
        assert ids(await store.load("c")) == ["s", "a1"]

    asyncio.run(main())


def test_reload_takes_the_other_writers_messages_first_then_writes(
    kind: str, tmp_path: Path
) -> None:
    async def main() -> None:
        store = open_store(kind, tmp_path)
        worker_a = await History([tl.system_message("s", id="s")]).abind(store, "c")
        other = open_store(kind, tmp_path)
        worker_b = await History().abind(other, "c", on_conflict="reload")
        heard: list[tuple[str, list[str]]] = []
        worker_b.subscribe(lambda event: heard.append((event.kind, ids(event.messages))))
        worker_a.append(tl.user_message("from A", id="a1"))
        await worker_a.flush()
        worker_b.append(tl.user_message("from B", id="b1"))
        await worker_b.flush()
        assert ids(await store.load("c")) == ["s", "a1", "b1"]
        assert ids(worker_b.snapshot()) == ["s", "a1", "b1"]
        assert heard == [("append", ["b1"]), ("restore", ["s", "a1", "b1"])]
        assert worker_b.pending_writes == 0
        worker_b.append(tl.user_message("again", id="b2"))
        await worker_b.flush()  # the version is right now: no conflict, no event but its own
        assert heard[-1] == ("append", ["b2"])
        assert await store.version("c") == 4
        # A replace by another writer: the stored conversation, then the unsent messages.
        await store.replace("c", [tl.user_message("summary", id="sum")])
        worker_b.append(tl.user_message("after", id="b3"))
        await worker_b.flush()
        assert ids(await store.load("c")) == ["sum", "b3"]
        assert ids(worker_b.snapshot()) == ["sum", "b3"]

    asyncio.run(main())


def test_reload_lets_a_queued_replace_win(kind: str, tmp_path: Path) -> None:
    async def main() -> None:
        store = open_store(kind, tmp_path)
        worker_b = await History([tl.system_message("s", id="s")]).abind(
            store, "c", on_conflict="reload"
        )
        await open_store(kind, tmp_path).append("c", [tl.user_message("other", id="o1")])
        worker_b.restore([tl.user_message("fresh start", id="f")])
        await worker_b.flush()
        assert ids(await store.load("c")) == ["f"]
        assert ids(worker_b.snapshot()) == ["f"]

    asyncio.run(main())


def test_a_lost_reply_found_stored_is_not_a_conflict() -> None:
    async def main() -> None:
        flaky = AsyncLostReply(AsyncMemoryStore())
        history = await History().abind(flaky, "c")  # on_conflict="raise"
        heard: list[str] = []
        history.subscribe(lambda event: heard.append(event.kind))
        history.append(tl.user_message("one", id="m1"))
        flaky.lose = True
        with contextlib.suppress(asyncio.CancelledError):
            await history.flush()  # stored, but the reply was lost: still queued
        flaky.lose = False
        history.append(tl.user_message("two", id="m2"))  # grows the queued append
        await history.flush()
        assert ids(await flaky.load("c")) == ["m1", "m2"]
        assert await flaky.version("c") == 2
        assert heard == ["append", "append"]
        assert history.pending_writes == 0

    asyncio.run(main())


def test_raise_when_another_worker_writes_the_start_first() -> None:
    class Racing(AsyncMemoryStore):
        """Another worker writes the conversation's start while this one is about to."""

        async def replace(
            self, conversation_id: str, messages: Sequence[tl.Message], **options: Any
        ) -> None:
            if not await self.load(conversation_id):
                await super().append(conversation_id, [tl.user_message("theirs", id="t")])
            await super().replace(conversation_id, messages, **options)

    async def main() -> None:
        with pytest.raises(tl.ConflictError):
            await History([tl.user_message("mine", id="m")]).abind(Racing(), "c")
        reloaded = await History([tl.user_message("mine", id="m")]).abind(
            Racing(), "c", on_conflict="reload"
        )
        assert ids(reloaded.snapshot()) == ["t"]

    asyncio.run(main())


def test_on_conflict_is_checked() -> None:
    async def main() -> None:
        with pytest.raises(ValueError, match="on_conflict"):
            await History().abind(AsyncMemoryStore(), "c", on_conflict="merge")  # type: ignore[arg-type]

    asyncio.run(main())
