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
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

import psycopg

from threadline.messages import Message
from threadline.stores._postgres_pool import AsyncConnection
from threadline.stores._postgres_sql import json_array
from threadline.stores._watch import UNLOGGED
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
        try:
            await connection.execute(f"LISTEN {self._store._sql.channel}")
        except BaseException:  # killed between connecting and listening: not left open
            with contextlib.suppress(psycopg.Error):
                await connection.close()
            raise
        self._connection = connection
        return connection

    async def read(self, after: int | None) -> Since:
        connection = await self._listening()  # listening before reading: nothing falls between
        known = self._known
        sql = self._store._sql
        params = {"cid": self._conversation_id, "n": known[1] if known else _UNKNOWN}
        tail: str | None = None  # the messages appended since ``known``, as JSON rows
        payload: str | None = None  # the whole conversation, when it was not only appended to
        async with connection.transaction():
            await connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            cursor = await connection.execute(sql.since, params)
            row = await cursor.fetchone()
            assert row is not None  # an aggregate always returns one row
            version, count, head, whole = int(row[0]), int(row[1]), row[2], row[3]
            if known is not None and version == known[0]:
                return Since(version)
            appended = known is not None and count >= known[1] and head == known[2]
            rewritten = not appended and (known is not None or after not in (None, version))
            if appended:
                tail = row[4]
            elif rewritten:
                cursor = await connection.execute(sql.load, (self._conversation_id,))
                payload = json_array(await cursor.fetchone())
        # The watch moves on only once the whole read succeeded: when the connection dies in
        # the middle (a kill landing on the commit), the next read starts from the same place,
        # so the batch this one lost comes then, not never.
        if appended:
            since = Since(version, [(version, await self._messages(f"[{tail}]", tail))])
        elif rewritten:
            # Without a known start, what changed since ``after`` is unknown.
            cause = UNLOGGED if known is None else None
            since = Since(version, whole=await self._messages(payload, payload), cause=cause)
        else:
            since = Since(version)
        self._known = (version, count, whole)
        return since

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
