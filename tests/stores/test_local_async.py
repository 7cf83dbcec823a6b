"""The async twins of the local stores: ``AsyncMemoryStore``, ``AsyncJsonlStore`` and
``AsyncSQLiteStore`` keep the async contract, share files with their blocking stores, and close
as the server stores' twins do. (Cancellation: ``tests/faults/test_cancellation.py``.)"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

import threadline as tl
from tests.stores._helpers import SMALL_THRESHOLD
from threadline.stores import AsyncJsonlStore
from threadline.stores import AsyncMemoryStore
from threadline.stores import AsyncSQLiteStore
from threadline.stores import AsyncStore
from threadline.stores import FileBlobStore
from threadline.stores import JsonlStore
from threadline.stores import SQLiteBlobStore
from threadline.stores import SQLiteStore
from threadline.testing import check_async_store

TWINS = ("memory", "sqlite", "sqlite+blobs", "jsonl", "jsonl+blobs")


def twin_factory(kind: str, root: Path) -> Callable[[], AsyncStore]:
    counter = itertools.count()

    def make() -> AsyncStore:
        place = root / f"{kind}-{next(counter)}"
        if kind == "memory":
            return AsyncMemoryStore()
        if kind == "sqlite":
            return AsyncSQLiteStore(f"{place}.db")
        if kind == "sqlite+blobs":
            path = f"{place}.db"
            return AsyncSQLiteStore(
                path, blobs=SQLiteBlobStore(path), blob_threshold=SMALL_THRESHOLD
            )
        if kind == "jsonl":
            return AsyncJsonlStore(place)
        if kind == "jsonl+blobs":
            files = FileBlobStore(place / "blobs")
            return AsyncJsonlStore(place, blobs=files, blob_threshold=SMALL_THRESHOLD)
        raise AssertionError(kind)

    return make


@pytest.mark.parametrize("kind", TWINS)
def test_async_twin_keeps_the_contract(kind: str, tmp_path: Path) -> None:
    asyncio.run(check_async_store(twin_factory(kind, tmp_path)))


@pytest.mark.parametrize("kind", TWINS)
def test_async_twins_satisfy_the_protocol(kind: str, tmp_path: Path) -> None:
    store = twin_factory(kind, tmp_path)()
    assert isinstance(store, AsyncStore)
    asyncio.run(store.aclose())  # type: ignore[attr-defined]


def test_twins_and_blocking_stores_share_conversations(tmp_path: Path) -> None:
    async def run() -> None:
        async with AsyncSQLiteStore(tmp_path / "a.db") as sqlite:
            await sqlite.append("c", [tl.user_message("async")])
        async with AsyncJsonlStore(tmp_path / "files") as files:
            await files.append("c", [tl.user_message("async")])
            await files.fork("c", "b")

    asyncio.run(run())
    with SQLiteStore(tmp_path / "a.db") as store:
        assert [m.text for m in store.load("c")] == ["async"]
    assert JsonlStore(tmp_path / "files").parent("b") == ("c", 1)
    files = str(tmp_path / "files")
    assert repr(AsyncJsonlStore(files)) == f"AsyncJsonlStore({files!r})"


def test_a_history_binds_an_async_twin(tmp_path: Path) -> None:
    async def run() -> list[str]:
        async with AsyncSQLiteStore(tmp_path / "a.db") as store:
            history = await tl.History().abind(store, "c")
            history.append(tl.user_message("hi"))
            await history.flush()
            return [m.text for m in await store.load("c")]

    assert asyncio.run(run()) == ["hi"]


@pytest.mark.parametrize("make", [AsyncSQLiteStore, AsyncJsonlStore])
def test_a_closed_twin_refuses_calls(make: Callable[[Path], AsyncStore], tmp_path: Path) -> None:
    async def run() -> None:
        store = make(tmp_path / "s")
        await store.append("c", [tl.user_message("a")])
        await store.aclose()  # type: ignore[attr-defined]
        await store.aclose()  # type: ignore[attr-defined]  # twice does nothing
        with pytest.raises(tl.StoreError, match="is closed"):
            await store.load("c")

    asyncio.run(run())


def test_aclose_waits_for_a_write_in_flight(tmp_path: Path) -> None:
    started, release = threading.Event(), threading.Event()

    class SlowBlobs(SQLiteBlobStore):
        def put(self, data: bytes) -> str:
            started.set()
            release.wait(30)
            return super().put(data)

    async def run() -> None:
        path = tmp_path / "a.db"
        store = AsyncSQLiteStore(path, blobs=SlowBlobs(path), blob_threshold=10)
        big = tl.user_message(tl.file_part(b"x" * 100, "text/plain"))
        write = asyncio.ensure_future(store.append("c", [big]))
        await asyncio.to_thread(started.wait, 30)
        write.cancel()  # the write keeps running in its thread
        closing = asyncio.ensure_future(store.aclose())
        await asyncio.sleep(0.05)
        assert not closing.done(), "aclose returned while a write was running"
        release.set()
        await closing

    asyncio.run(run())
    with SQLiteStore(tmp_path / "a.db", blobs=SQLiteBlobStore(tmp_path / "a.db")) as store:
        assert len(store.load("c")) == 1, "a cancelled write that had started was not completed"


def test_max_threads_is_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="max_threads must be an int >= 1"):
        AsyncSQLiteStore(tmp_path / "a.db", max_threads=0)
    with pytest.raises(ValueError, match="max_threads"):
        AsyncJsonlStore(tmp_path / "j", max_threads=True)
