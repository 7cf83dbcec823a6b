"""Shared by the store tests: store factories and an async adapter for ``check_async_store``."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Sequence
from pathlib import Path

from threadline import Message
from threadline.stores import (
    FileBlobStore,
    JsonlStore,
    MemoryStore,
    SQLiteBlobStore,
    SQLiteStore,
    Store,
)

KINDS = ("memory", "sqlite", "sqlite+blobs", "jsonl", "jsonl+blobs")
"""Every store configuration the contract suite runs over."""

SMALL_THRESHOLD = 1_000
"""A blob threshold the contract's sample conversation crosses (its big files are larger)."""


def store_factory(kind: str, root: Path) -> Callable[[], Store]:
    """A factory of fresh, empty stores of ``kind`` under ``root``."""
    counter = itertools.count()

    def make() -> Store:
        place = root / f"{kind}-{next(counter)}"
        if kind == "memory":
            return MemoryStore()
        if kind == "sqlite":
            return SQLiteStore(f"{place}.db")
        if kind == "sqlite+blobs":
            path = f"{place}.db"
            return SQLiteStore(path, blobs=SQLiteBlobStore(path), blob_threshold=SMALL_THRESHOLD)
        if kind == "jsonl":
            return JsonlStore(place)
        if kind == "jsonl+blobs":
            return JsonlStore(
                place, blobs=FileBlobStore(place / "blobs"), blob_threshold=SMALL_THRESHOLD
            )
        raise AssertionError(kind)

    return make


class ThreadedAsyncStore:
    """An :class:`AsyncStore` that runs a blocking store in worker threads (a real one's shape)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def __repr__(self) -> str:
        return f"ThreadedAsyncStore({self.store!r})"

    async def load(self, conversation_id: str) -> list[Message]:
        return await asyncio.to_thread(self.store.load, conversation_id)

    async def append(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        if expected_version is None:  # so stores without versions still run the other checks
            await asyncio.to_thread(self.store.append, conversation_id, messages)
        else:
            await asyncio.to_thread(
                self.store.append, conversation_id, messages, expected_version=expected_version
            )

    async def replace(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        if expected_version is None:
            await asyncio.to_thread(self.store.replace, conversation_id, messages)
        else:
            await asyncio.to_thread(
                self.store.replace, conversation_id, messages, expected_version=expected_version
            )

    async def version(self, conversation_id: str) -> int:
        return await asyncio.to_thread(self.store.version, conversation_id)

    async def delete(self, conversation_id: str) -> None:
        await asyncio.to_thread(self.store.delete, conversation_id)

    async def list_conversations(self) -> list[str]:
        return await asyncio.to_thread(self.store.list_conversations)

    async def aclose(self) -> None:
        close = getattr(self.store, "close", None)
        if close is not None:
            close()
