"""The watch kit (``check_watch``, ``check_async_watch``) over every store that has ``watch``:
another store object's writes seen exactly once, in order, from ``after_version``; catch-up
from an old version; and stores that break a promise are named."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support import delete_redis_prefix
from tests.support import drop_postgres_tables
from tests.support import new_postgres_prefix
from tests.support import new_redis_prefix
from tests.support import require_module
from threadline import Message
from threadline.stores import JsonlStore
from threadline.stores import MemoryStore
from threadline.stores import SQLiteStore
from threadline.stores import Store
from threadline.testing import ConformanceError
from threadline.testing import _store_kit_watch
from threadline.testing import check_async_watch
from threadline.testing import check_watch

LOCAL = [
    "memory",
    pytest.param("sqlite", marks=pytest.mark.slow),  # about a second each (polling)
    pytest.param("jsonl", marks=pytest.mark.slow),
]


def local_stores(kind: str, root: Path) -> tuple[Callable[[], Store], Callable[[Store], Store]]:
    """A factory of fresh stores of ``kind`` and the ``reopen`` that opens a second object on
    the same file or directory (a ``MemoryStore`` is its own second object)."""
    counter = itertools.count()
    places: dict[int, Path] = {}

    def make() -> Store:
        place = root / f"{kind}-{next(counter)}"
        store: Store
        if kind == "memory":
            store = MemoryStore()
        elif kind == "sqlite":
            store = SQLiteStore(f"{place}.db")
        else:
            store = JsonlStore(place)
        places[id(store)] = place
        return store

    def reopen(store: Store) -> Store:
        if kind == "memory":
            return store
        place = places[id(store)]
        return SQLiteStore(f"{place}.db") if kind == "sqlite" else JsonlStore(place)

    return make, reopen


@pytest.mark.parametrize("kind", LOCAL)
def test_local_stores_keep_the_watch_contract(kind: str, tmp_path: Path) -> None:
    check_watch(*local_stores(kind, tmp_path))


@pytest.mark.requires_server
def test_async_redis_store_keeps_the_watch_contract(redis_url: str) -> None:
    require_module("redis", 'pip install "threadline[redis]"')
    from threadline.stores.redis import AsyncRedisStore

    used: list[str] = []

    def make() -> AsyncRedisStore:
        used.append(new_redis_prefix())
        return AsyncRedisStore(redis_url, prefix=used[-1])

    def reopen(store: Any) -> AsyncRedisStore:
        return AsyncRedisStore(redis_url, prefix=used[-1])

    try:
        asyncio.run(check_async_watch(make, reopen))
    finally:
        for prefix in used:
            delete_redis_prefix(redis_url, prefix)


@pytest.mark.requires_server
def test_async_postgres_store_keeps_the_watch_contract(postgres_dsn: str) -> None:
    require_module("psycopg", 'pip install "threadline[postgres]"')
    from threadline.stores.postgres import AsyncPostgresStore

    used: list[str] = []

    def make() -> AsyncPostgresStore:
        used.append(new_postgres_prefix())
        return AsyncPostgresStore(postgres_dsn, table_prefix=used[-1])

    def reopen(store: Any) -> AsyncPostgresStore:
        return AsyncPostgresStore(postgres_dsn, table_prefix=used[-1])

    try:
        asyncio.run(check_async_watch(make, reopen))
    finally:
        drop_postgres_tables(postgres_dsn, used)


# ---------------------------------------------------------------------------------------------
# Broken watches are named


class _Wrapped:
    """A watch that passes ``inner``'s batches through ``alter``."""

    def __init__(self, inner: Any, alter: Callable[[list[Message], int], list[Message]]) -> None:
        self.inner = inner
        self.alter = alter
        self.count = 0

    @property
    def version(self) -> int | None:
        version: int | None = self.inner.version
        return version

    def __aiter__(self) -> AsyncIterator[list[Message]]:
        return self

    async def __anext__(self) -> list[Message]:
        batch: list[Message] = await self.inner.__anext__()
        self.count += 1
        return self.alter(batch, self.count)

    async def aclose(self) -> None:
        await self.inner.aclose()


class RepeatingStore(MemoryStore):
    """Its watch yields the first message of each batch twice."""

    def watch(self, conversation_id: str, after_version: int | None = None, **kw: Any) -> Any:
        inner = super().watch(conversation_id, after_version, poll_interval=0.01)
        return _Wrapped(inner, lambda batch, _: [batch[0], *batch])


class SkippingStore(MemoryStore):
    """Its watch drops the third batch."""

    def watch(self, conversation_id: str, after_version: int | None = None, **kw: Any) -> Any:
        inner = super().watch(conversation_id, after_version, poll_interval=0.01)
        return _Wrapped(inner, lambda batch, count: [] if count == 3 else batch)


class ReplacingStore(MemoryStore):
    """Its watch says every change is a replace (legal only before the first read)."""

    def watch(self, conversation_id: str, after_version: int | None = None, **kw: Any) -> Any:
        inner = super().watch(conversation_id, after_version, poll_interval=0.01)
        store = self

        def alter(batch: list[Message], _: int) -> list[Message]:
            from threadline.stores._watch import replaced

            whole = store.load(conversation_id)
            raise replaced(conversation_id, None, store.version(conversation_id), whole)

        return _Wrapped(inner, alter)


@pytest.mark.parametrize(
    ("store_class", "words"),
    [
        (RepeatingStore, "expected"),
        (SkippingStore, "the watch yielded nothing in 1 s"),
        (ReplacingStore, "ConversationReplacedError for appends"),
    ],
)
def test_a_broken_watch_fails_the_kit_naming_the_check(
    store_class: type[MemoryStore], words: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_store_kit_watch, "_TIMEOUT", 1.0)  # a skipped write never comes
    with pytest.raises(ConformanceError, match="check 'watch_sees_other_writes' failed") as caught:
        check_watch(store_class)
    assert words in str(caught.value)
    assert isinstance(caught.value, AssertionError)


def test_check_async_watch_takes_awaitable_factories() -> None:
    from threadline.stores import Watch

    class AsyncMemory:
        """An async face on one MemoryStore, whose watch polls it."""

        def __init__(self) -> None:
            self.store = MemoryStore()

        async def append(self, conversation_id: str, messages: list[Message]) -> None:
            self.store.append(conversation_id, messages)

        async def version(self, conversation_id: str) -> int:
            return self.store.version(conversation_id)

        def watch(self, conversation_id: str, after_version: int | None = None) -> Watch:
            return self.store.watch(conversation_id, after_version, poll_interval=0.01)

    async def make() -> Any:
        return AsyncMemory()

    async def reopen(store: Any) -> Any:
        return store

    asyncio.run(check_async_watch(make, reopen))
