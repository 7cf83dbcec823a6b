"""A PostgreSQL watch whose connection dies in the middle of a read (after the snapshot's row
came, before the batch was handed over: ``pg_terminate_backend`` landing on the commit) reads
that batch again after reconnecting: nothing is skipped (the flaky hang of
``test_watch_restarts``: the watch had moved on to a version it never yielded)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import threadline as tl
from threadline.messages import Message

pytestmark = pytest.mark.requires_server

GUARD = 30.0  # seconds: against a hang only


def test_a_read_lost_with_its_connection_is_read_again(
    postgres_dsn: str, postgres_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg

    from threadline.stores import _postgres_watch
    from threadline.stores.postgres import AsyncPostgresStore

    real = _postgres_watch.PostgresSource._messages
    real_wait = _postgres_watch.PostgresSource.wait
    failures: list[int] = []
    waiting: list[asyncio.Event] = []

    async def wait(self: Any) -> None:
        waiting[-1].set()  # the watch has read: an append now comes after its version
        await real_wait(self)

    async def dying(self: Any, payload: str | None, rows: str | None) -> list[Message]:
        if rows is not None and not failures:
            failures.append(1)
            await self.close()  # the connection is gone, as after a kill
            raise psycopg.OperationalError("terminating connection (injected)")
        return await real(self, payload, rows)

    monkeypatch.setattr(_postgres_watch.PostgresSource, "_messages", dying)
    monkeypatch.setattr(_postgres_watch.PostgresSource, "wait", wait)

    async def main() -> list[list[str]]:
        async with AsyncPostgresStore(postgres_dsn, table_prefix=postgres_prefix) as store:
            await store.append("c", [tl.user_message("before")])
            async with store.watch("c", after_version=await store.version("c")) as watch:
                batches: list[list[str]] = []
                for text in ("m0", "m1"):
                    waiting.append(asyncio.Event())
                    batch_task = asyncio.ensure_future(watch.__anext__())
                    await asyncio.wait_for(waiting[-1].wait(), GUARD)
                    await store.append("c", [tl.user_message(text)])
                    batch = await asyncio.wait_for(batch_task, GUARD)
                    batches.append([message.text for message in batch])
                return batches

    assert asyncio.run(main()) == [["m0"], ["m1"]]
    assert failures, "the injected connection loss never happened"
