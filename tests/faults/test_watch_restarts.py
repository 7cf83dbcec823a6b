"""A watch through a Redis restart and a PostgreSQL connection kill: it catches up from its last
version, and sees every append exactly once, in order (the store's final order)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

import threadline as tl
from tests.faults._servers import HANG_GUARD

pytestmark = pytest.mark.requires_server

COUNT = 80


def _write(store: Any, stop_at_failure: threading.Event, halfway: threading.Event) -> None:
    """Append COUNT messages one by one; a failed write (server down) is sent again (ids make
    it idempotent)."""
    for k in range(COUNT):
        message = tl.user_message(f"m{k}", id=f"m{k}")
        deadline = time.monotonic() + HANG_GUARD
        while True:
            try:
                store.append("watched", [message])
                break
            except tl.StoreError:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        if k == COUNT // 2:
            halfway.set()
        time.sleep(0.01)


async def _watch_while(store: Any, disturb: Any, writer_store: Any) -> list[str]:
    watch = store.watch("watched", after_version=await store.version("watched"))
    seen: list[str] = []

    async def collect() -> None:
        while len(seen) < COUNT:
            seen.extend(message.text for message in await watch.__anext__())

    task = asyncio.ensure_future(collect())
    await asyncio.sleep(0.3)
    halfway = threading.Event()
    writer = threading.Thread(target=_write, args=(writer_store, threading.Event(), halfway))
    writer.start()
    try:
        await asyncio.to_thread(halfway.wait, HANG_GUARD)
        await disturb()
        await asyncio.wait_for(task, HANG_GUARD)
    finally:
        await asyncio.to_thread(writer.join, HANG_GUARD)
        await watch.aclose()
    return seen


def test_a_redis_watch_catches_up_through_a_restart(private_redis: Any) -> None:
    from threadline.stores.redis import AsyncRedisStore
    from threadline.stores.redis import RedisStore

    writer_store = RedisStore(private_redis.url)

    async def restart() -> None:
        private_redis.kill()
        await asyncio.sleep(0.3)  # the watch and the writer both fail meanwhile
        await asyncio.to_thread(private_redis.start)

    async def main() -> list[str]:
        store = AsyncRedisStore(private_redis.url)
        try:
            return await _watch_while(store, restart, writer_store)
        finally:
            await store.aclose()

    seen = asyncio.run(main())
    writer_store.close()
    assert seen == [f"m{k}" for k in range(COUNT)]


def test_a_postgres_watch_catches_up_after_its_connection_is_killed(
    postgres_dsn: str, postgres_prefix: str
) -> None:
    import psycopg

    from threadline.stores.postgres import AsyncPostgresStore
    from threadline.stores.postgres import PostgresStore

    writer_store = PostgresStore(postgres_dsn, table_prefix=postgres_prefix)
    killed: list[int] = []
    name = f"watched {postgres_prefix}"  # its watch's connection: "watched <prefix> watch"

    async def kill_listener() -> None:
        async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as admin:
            # Only this test's listener: the server is shared with tests running beside this
            # one, whose watches must not die.
            cursor = await admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = %s",
                (f"{name} watch",),
            )
            killed.extend(1 for row in await cursor.fetchall() if row[0])

    async def main() -> list[str]:
        store = AsyncPostgresStore(
            postgres_dsn, table_prefix=postgres_prefix, connect_kwargs={"application_name": name}
        )
        try:
            return await _watch_while(store, kill_listener, writer_store)
        finally:
            await store.aclose()

    seen = asyncio.run(main())
    writer_store.close()
    assert killed, "no LISTEN connection was found to kill"
    assert seen == [f"m{k}" for k in range(COUNT)]
