"""``AsyncPostgresStore.watch``: ``LISTEN`` on a connection of its own, read what changed in one
snapshot.

Every write notifies the store's channel (``<table_prefix>changes``) with the conversation's id,
inside its transaction, so listeners hear of it once it commits. A notification is only a
wake-up: the watch reads, in one ``REPEATABLE READ`` transaction, the version, the message count,
a digest of the messages it knows and the messages after them, so a notification lost with a
dropped connection costs nothing but time. A replace or delete since is told apart from appends
by the digest of the messages the watch knows (they no longer start the conversation).

Only `threadline.stores.postgres` imports this module, after checking that the driver is
installed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import psycopg

from threadline.messages import Message
from threadline.stores._postgres_pool import AsyncConnection
from threadline.stores._postgres_sql import json_array
from threadline.stores._watch import Since

__all__ = ["WAIT_SECONDS", "PostgresSource"]

WAIT_SECONDS = 5.0
"""How long one wait for a notification lasts before the watcher reads again anyway."""

_UNKNOWN = 2**62  # a message count no conversation reaches: "read no messages yet"


class PostgresSource:
    """A watch's reads and waits on PostgreSQL (see `threadline.stores._watch.Source`)."""

    transient: tuple[type[BaseException], ...] = (psycopg.OperationalError,)

    def __init__(
        self, store: Any, conversation_id: str, connect: Callable[[], Awaitable[AsyncConnection]]
    ) -> None:
        self._store = store
        self._conversation_id = conversation_id
        self._connect = connect
        self._connection: AsyncConnection | None = None
        self._known: tuple[int, int, str | None] | None = None  # version, count, digest

    async def _listening(self) -> AsyncConnection:
        connection = self._connection
        if connection is not None and not connection.closed and not connection.broken:
            return connection
        await self.close()
        async with self._store._connection():
            pass  # the tables exist (or are created) before the first read
        connection = await self._connect()
        await connection.execute(f"LISTEN {self._store._sql.channel}")
        self._connection = connection
        return connection

    async def read(self, after: int | None) -> Since:
        connection = await self._listening()  # listening before reading: nothing falls between
        known = self._known
        sql = self._store._sql
        params = {"cid": self._conversation_id, "n": known[1] if known else _UNKNOWN}
        async with connection.transaction():
            await connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            cursor = await connection.execute(sql.since, params)
            row = await cursor.fetchone()
            assert row is not None  # an aggregate always returns one row
            version, count, head, whole, tail = int(row[0]), int(row[1]), row[2], row[3], row[4]
            if known is None:
                self._known = (version, count, whole)
                if after is None or after == version:
                    return Since(version)
            elif version == known[0]:
                return Since(version)
            elif count >= known[1] and head == known[2]:
                self._known = (version, count, whole)
                return Since(version, [(version, await self._messages(f"[{tail}]", tail))])
            self._known = (version, count, whole)
            cursor = await connection.execute(sql.load, (self._conversation_id,))
            payload = json_array(await cursor.fetchone())
        return Since(version, whole=await self._messages(payload, payload))

    async def _messages(self, payload: str | None, rows: str | None) -> list[Message]:
        store = self._store
        if rows is None:
            return []
        with store._failing(f"watch conversation {self._conversation_id!r}"):
            messages: list[Message] = store._messages(payload)
        restored: list[Message] = await store._restored_async(
            messages, payload, self._conversation_id
        )
        return restored

    async def wait(self) -> None:
        # Notifications that came while the connection was reading are yielded first
        # (psycopg keeps them), so none falls between a read and the next wait.
        connection = await self._listening()
        async for notify in connection.notifies(timeout=WAIT_SECONDS):
            if notify.payload == self._conversation_id:
                break

    async def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            with contextlib.suppress(psycopg.Error):
                await connection.close()
