"""Shared by the store tests: store factories, an async adapter for ``check_async_store``, and
stores whose replies get lost (for the retry tests)."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from collections.abc import Coroutine
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from threadline import Message
from threadline import StoreError
from threadline import ValidationError
from threadline import user_message
from threadline.stores import Appended
from threadline.stores import AsyncStore
from threadline.stores import ConversationInfo
from threadline.stores import FileBlobStore
from threadline.stores import JsonlStore
from threadline.stores import MemoryStore
from threadline.stores import SQLiteBlobStore
from threadline.stores import SQLiteStore
from threadline.stores import Store

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

    async def load_after(self, conversation_id: str, version: int) -> Appended:
        return await asyncio.to_thread(self.store.load_after, conversation_id, version)

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

    async def list_conversations(
        self, limit: int | None = None, after: str | None = None
    ) -> list[str]:
        return await asyncio.to_thread(self.store.list_conversations, limit, after)

    async def conversation_info(self, conversation_id: str) -> ConversationInfo | None:
        return await asyncio.to_thread(self.store.conversation_info, conversation_id)

    async def fork(self, conversation_id: str, new_id: str, at: int | None = None) -> None:
        await asyncio.to_thread(self.store.fork, conversation_id, new_id, at)

    async def parent(self, conversation_id: str) -> tuple[str, int] | None:
        return await asyncio.to_thread(self.store.parent, conversation_id)

    async def aclose(self) -> None:
        close = getattr(self.store, "close", None)
        if close is not None:
            close()


def check_bad_batches(
    store: Store, write_async: Callable[[Any], Coroutine[Any, Any, None]]
) -> None:
    """A bad batch is reported by ``store`` (and by its async twin, through ``write_async``)
    with the ``ErrorDetail`` shape of every entry point, and nothing is written."""
    name = type(store).__name__
    for method in (store.append, store.replace):
        with pytest.raises(ValidationError) as caught:
            method("c", [user_message("a"), 42])  # type: ignore[list-item]
        assert [(d.path, d.type) for d in caught.value.errors] == [("messages[1]", "message_type")]
        assert str(caught.value).startswith(f"{name}.{method.__name__}: invalid messages")
        with pytest.raises(ValidationError) as caught:
            method("c", 42)  # type: ignore[arg-type]
        assert [(d.path, d.type) for d in caught.value.errors] == [("messages", "messages_type")]
    with pytest.raises(ValidationError, match=r"Async\w+Store\.append: invalid") as caught:
        asyncio.run(write_async([user_message("a"), {"role": "user"}]))
    assert [(d.path, d.type) for d in caught.value.errors] == [("messages[1]", "message_type")]
    assert store.list_conversations() == []


class LostReply:
    """A blocking store whose ``append`` is applied, then, while ``lose`` is set, fails as a
    connection that dropped after the commit does: stored, but the caller is told it failed."""

    def __init__(self, store: Store, *, lose: bool = False) -> None:
        self.store = store
        self.lose = lose

    def load(self, conversation_id: str) -> list[Message]:
        return list(self.store.load(conversation_id))

    def append(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        self.store.append(conversation_id, messages, expected_version=expected_version)
        if self.lose:
            raise StoreError("the connection dropped after the write was applied")

    def replace(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        self.store.replace(conversation_id, messages, expected_version=expected_version)

    def version(self, conversation_id: str) -> int:
        return self.store.version(conversation_id)

    def delete(self, conversation_id: str) -> None:
        self.store.delete(conversation_id)

    def list_conversations(self, limit: int | None = None, after: str | None = None) -> list[str]:
        return list(self.store.list_conversations(limit, after))

    def conversation_info(self, conversation_id: str) -> ConversationInfo | None:
        return self.store.conversation_info(conversation_id)

    def fork(self, conversation_id: str, new_id: str, at: int | None = None) -> None:
        self.store.fork(conversation_id, new_id, at)

    def parent(self, conversation_id: str) -> tuple[str, int] | None:
        return self.store.parent(conversation_id)

    def load_after(self, conversation_id: str, version: int) -> Appended:
        return self.store.load_after(conversation_id, version)


class AsyncLostReply:
    """An async store whose ``append`` is applied, then, while ``lose`` is set, raises
    ``CancelledError`` as a task cancelled while it awaits the reply."""

    def __init__(self, store: AsyncStore, *, lose: bool = False) -> None:
        self.store = store
        self.lose = lose

    async def load(self, conversation_id: str) -> list[Message]:
        return list(await self.store.load(conversation_id))

    async def append(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        await self.store.append(conversation_id, messages, expected_version=expected_version)
        if self.lose:
            raise asyncio.CancelledError  # cancelled while waiting for the reply

    async def replace(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        await self.store.replace(conversation_id, messages, expected_version=expected_version)

    async def version(self, conversation_id: str) -> int:
        return await self.store.version(conversation_id)

    async def delete(self, conversation_id: str) -> None:
        await self.store.delete(conversation_id)

    async def list_conversations(
        self, limit: int | None = None, after: str | None = None
    ) -> list[str]:
        return list(await self.store.list_conversations(limit, after))

    async def conversation_info(self, conversation_id: str) -> ConversationInfo | None:
        return await self.store.conversation_info(conversation_id)

    async def fork(self, conversation_id: str, new_id: str, at: int | None = None) -> None:
        await self.store.fork(conversation_id, new_id, at)

    async def parent(self, conversation_id: str) -> tuple[str, int] | None:
        return await self.store.parent(conversation_id)

    async def load_after(self, conversation_id: str, version: int) -> Appended:
        return await self.store.load_after(conversation_id, version)
