"""Every store and every twin watches (issue 40, item 5): the async twins of the local stores
(``AsyncMemoryStore``, ``AsyncSQLiteStore``, ``AsyncJsonlStore``) and the blocking
``RedisStore`` and ``PostgresStore`` keep the watch kit's contract, and ``watch`` always returns
a `Watch` (an async iterator)."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import threadline as tl
from tests.support import delete_redis_prefix
from tests.support import drop_postgres_tables
from tests.support import new_postgres_prefix
from tests.support import new_redis_prefix
from tests.support import require_module
from threadline import ConversationReplacedError
from threadline import ValidationError
from threadline import user_message
from threadline.stores import AsyncJsonlStore
from threadline.stores import AsyncMemoryStore
from threadline.stores import AsyncSQLiteStore
from threadline.stores import AsyncStore
from threadline.stores import Store
from threadline.stores import Watch
from threadline.testing import check_async_watch
from threadline.testing import check_watch

TWINS = [
    "memory",
    pytest.param("sqlite", marks=pytest.mark.slow),  # about a second each (polling)
    pytest.param("jsonl", marks=pytest.mark.slow),
]


def twins(kind: str, root: Path) -> tuple[Callable[[], AsyncStore], Callable[[Any], AsyncStore]]:
    """A factory of fresh twins of ``kind`` and the ``reopen`` that opens another twin on the
    same file or directory (an ``AsyncMemoryStore`` is its own second object)."""
    counter = itertools.count()
    places: dict[int, Path] = {}

    def open_at(place: Path) -> AsyncStore:
        if kind == "sqlite":
            return AsyncSQLiteStore(f"{place}.db")
        return AsyncJsonlStore(place)

    def make() -> AsyncStore:
        if kind == "memory":
            return AsyncMemoryStore()
        place = root / f"{kind}-{next(counter)}"
        store = open_at(place)
        places[id(store)] = place
        return store

    def reopen(store: Any) -> AsyncStore:
        return store if kind == "memory" else open_at(places[id(store)])

    return make, reopen


@pytest.mark.parametrize("kind", TWINS)
def test_async_local_twins_keep_the_watch_contract(kind: str, tmp_path: Path) -> None:
    asyncio.run(check_async_watch(*twins(kind, tmp_path)))


def test_a_twin_watch_is_a_watch_and_checks_its_arguments(tmp_path: Path) -> None:
    store = AsyncSQLiteStore(tmp_path / "a.db")
    try:
        assert isinstance(store.watch("c1"), Watch)
        with pytest.raises(ValidationError, match="after_version"):
            store.watch("c1", after_version=-1)
        with pytest.raises(ValidationError, match="conversation id"):
            store.watch("../c1")
        with pytest.raises(ValueError, match="poll_interval"):
            store.watch("c1", poll_interval=0)
    finally:
        asyncio.run(store.aclose())


def test_a_twin_watch_sees_a_blocking_writer_on_the_same_file(tmp_path: Path) -> None:
    from threadline.stores import SQLiteStore

    async def run() -> list[str]:
        store = AsyncSQLiteStore(tmp_path / "a.db")
        writer = SQLiteStore(tmp_path / "a.db")
        try:
            watch = store.watch("c1", after_version=0, poll_interval=0.01)
            await asyncio.to_thread(writer.append, "c1", [user_message("hi", id="m1")])
            try:
                batch = await asyncio.wait_for(watch.__anext__(), 60)
            except ConversationReplacedError as error:
                # A polling store keeps no log: a write before the watch's first read may come
                # as the whole conversation.
                batch = list(error.messages)
            await watch.aclose()
            return [m.id for m in batch]
        finally:
            writer.close()
            await store.aclose()

    assert asyncio.run(run()) == ["m1"]


@pytest.mark.requires_server
def test_blocking_redis_store_keeps_the_watch_contract(redis_url: str) -> None:
    require_module("redis", 'pip install "threadline[redis]"')
    from threadline.stores.redis import RedisStore

    used: list[str] = []

    def make() -> Store:
        used.append(new_redis_prefix())
        return RedisStore(redis_url, prefix=used[-1])

    def reopen(store: Store) -> Store:
        return RedisStore(redis_url, prefix=used[-1])

    try:
        check_watch(make, reopen)
    finally:
        for prefix in used:
            delete_redis_prefix(redis_url, prefix)


@pytest.mark.requires_server
def test_blocking_postgres_store_keeps_the_watch_contract(postgres_dsn: str) -> None:
    require_module("psycopg", 'pip install "threadline[postgres]"')
    from threadline.stores.postgres import PostgresStore

    used: list[str] = []

    def make() -> Store:
        used.append(new_postgres_prefix())
        return PostgresStore(postgres_dsn, table_prefix=used[-1])

    def reopen(store: Store) -> Store:
        return PostgresStore(postgres_dsn, table_prefix=used[-1])

    try:
        check_watch(make, reopen)
    finally:
        drop_postgres_tables(postgres_dsn, used)


@pytest.mark.requires_server
def test_blocking_postgres_watch_behind_pgbouncer_says_what_to_configure(
    postgres_dsn: str,
) -> None:
    require_module("psycopg", 'pip install "threadline[postgres]"')
    from threadline import StoreError
    from threadline.stores.postgres import PostgresStore

    store = PostgresStore(postgres_dsn, table_prefix=new_postgres_prefix(), pgbouncer=True)
    try:
        with pytest.raises(StoreError, match="listen_dsn"):
            store.watch("c1")
    finally:
        store.close()


@pytest.mark.requires_server
@pytest.mark.parametrize("kind", ["redis", "postgres"])
def test_a_history_bound_to_a_blocking_server_store_follows_it(
    kind: str, request: pytest.FixtureRequest
) -> None:
    stores: list[Any] = []
    if kind == "redis":
        require_module("redis", 'pip install "threadline[redis]"')
        from threadline.stores.redis import RedisStore

        url = request.getfixturevalue("redis_url")
        prefix = new_redis_prefix()
        stores = [RedisStore(url, prefix=prefix) for _ in range(2)]
    else:
        require_module("psycopg", 'pip install "threadline[postgres]"')
        from threadline.stores.postgres import PostgresStore

        dsn = request.getfixturevalue("postgres_dsn")
        prefix = new_postgres_prefix()
        stores = [PostgresStore(dsn, table_prefix=prefix) for _ in range(2)]
    store, other = stores

    async def main() -> list[str]:
        live = tl.History().bind(store, "c1", follow=True)
        await asyncio.to_thread(other.append, "c1", [user_message("theirs", id="u1")])

        async def heard() -> None:
            while len(live) < 1:
                await asyncio.sleep(0.01)

        await asyncio.wait_for(heard(), 60)  # a guard against a hang only
        await live.unfollow()
        return [m.id for m in live]

    try:
        assert asyncio.run(main()) == ["u1"]
    finally:
        for each in stores:
            each.close()
        if kind == "redis":
            delete_redis_prefix(request.getfixturevalue("redis_url"), prefix)
        else:
            drop_postgres_tables(request.getfixturevalue("postgres_dsn"), [prefix])
