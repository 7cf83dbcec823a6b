"""``AsyncPostgresStore.watch``: woken by the store's one ``LISTEN`` connection, read what
changed in one snapshot.

Every write notifies the store's channel (``<table_prefix>changes``) with the conversation's id;
the store's `threadline.stores._postgres_listen.Listener` wakes the watches of that conversation
only. A notification is only a wake-up: the watch reads, on a connection of the store's pool, in
one ``REPEATABLE READ`` transaction, the version, the message count, a digest of the messages it
knows and the messages after them, so a notification lost with a dropped connection costs
nothing but time. A replace or delete since is told apart from appends by the digest of the
messages the watch knows (they no longer start the conversation).

Only `threadline.stores.postgres` imports this module, after checking that the driver is
installed.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import psycopg

from threadline.messages import Message
from threadline.stores._postgres_listen import WAIT_SECONDS
from threadline.stores._postgres_listen import Listeners
from threadline.stores._postgres_listen import Subscription
from threadline.stores._postgres_sql import json_array
from threadline.stores._watch import UNLOGGED
from threadline.stores._watch import Since

__all__ = ["WAIT_SECONDS", "PostgresSource"]

_UNKNOWN = 2**62  # a message count no conversation reaches: "read no messages yet"

_Known = tuple[int, int, "str | None"]  # the version, message count and digest last read
_Snapshot = tuple[int, int, "str | None", str, "str | None"]  # as _Known, the kind, the rows


class PostgresSource:
    """A watch's reads and waits on PostgreSQL (see `threadline.stores._watch.Source`), for an
    `AsyncPostgresStore` or a blocking `PostgresStore` (whose reads run in a worker thread)."""

    transient: tuple[type[BaseException], ...] = (psycopg.OperationalError,)

    def __init__(self, store: Any, conversation_id: str, listeners: Listeners) -> None:
        self._store = store
        self._conversation_id = conversation_id
        self._listeners = listeners
        self._subscription: Subscription | None = None
        self._known: _Known | None = None
        self._blocking = not inspect.iscoroutinefunction(store.load)

    async def _subscribed(self) -> Subscription:
        subscription = self._subscription
        if subscription is not None and not subscription.lost:
            return subscription
        await self.close()
        listener = self._listeners.current()
        self._subscription = await listener.subscribe(self._conversation_id)
        return self._subscription

    async def read(self, after: int | None) -> Since:
        await self._subscribed()  # listening before reading: nothing falls between
        known = self._known
        if self._blocking:
            snapshot = await asyncio.to_thread(self._snapshot_blocking, known, after)
        else:
            snapshot = await self._snapshot(known, after)
        version, count, whole, kind, rows = snapshot
        # The watch moves on only once the whole read succeeded: when the connection dies in
        # the middle (a kill landing on the commit), the next read starts from the same place,
        # so the batch this one lost comes then, not never.
        if kind == "same":
            return Since(version)
        if kind == "appended":
            since = Since(version, [(version, await self._messages(f"[{rows}]", rows))])
        elif kind == "rewritten":
            # Without a known start, what changed since ``after`` is unknown.
            cause = UNLOGGED if known is None else None
            since = Since(version, whole=await self._messages(rows, rows), cause=cause)
        else:
            since = Since(version)
        self._known = (version, count, whole)
        return since

    def _params(self, known: _Known | None) -> dict[str, object]:
        return {"cid": self._conversation_id, "n": known[1] if known else _UNKNOWN}

    @staticmethod
    def _kind(row: Any, known: _Known | None, after: int | None) -> _Snapshot:
        """What the snapshot's first row says: the conversation unchanged (``same``),
        ``appended`` to (with the rows after ``known``), ``rewritten`` (its rows are to be
        read), or at a first version to start from (``moved``)."""
        assert row is not None  # an aggregate always returns one row
        version, count, head, whole = int(row[0]), int(row[1]), row[2], row[3]
        if known is not None and version == known[0]:
            return version, count, whole, "same", None
        if known is not None and count >= known[1] and head == known[2]:
            return version, count, whole, "appended", row[4]
        if known is not None or after not in (None, version):
            return version, count, whole, "rewritten", None
        return version, count, whole, "moved", None

    async def _snapshot(self, known: _Known | None, after: int | None) -> _Snapshot:
        sql = self._store._sql
        async with self._store._connection() as connection, connection.transaction():
            await connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            cursor = await connection.execute(sql.since, self._params(known))
            snapshot = self._kind(await cursor.fetchone(), known, after)
            if snapshot[3] == "rewritten":
                cursor = await connection.execute(sql.load, (self._conversation_id,))
                snapshot = (*snapshot[:4], json_array(await cursor.fetchone()))
        return snapshot

    def _snapshot_blocking(self, known: _Known | None, after: int | None) -> _Snapshot:
        """`_snapshot` on a blocking store's pool (run in a worker thread)."""
        sql = self._store._sql
        with self._store._connection() as connection, connection.transaction():
            connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            cursor = connection.execute(sql.since, self._params(known))
            snapshot = self._kind(cursor.fetchone(), known, after)
            if snapshot[3] == "rewritten":
                cursor = connection.execute(sql.load, (self._conversation_id,))
                snapshot = (*snapshot[:4], json_array(cursor.fetchone()))
        return snapshot

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
        # A write that committed while the watch was reading has woken the subscription
        # already, so none falls between a read and the next wait. A lost listening
        # connection raises the transient error: the watch reads again once reconnected.
        subscription = self._subscription
        if subscription is None:  # closed since the read: it may have missed a write
            raise psycopg.OperationalError("the watch stopped listening; read again")
        await subscription.wait()

    async def close(self) -> None:
        subscription, self._subscription = self._subscription, None
        if subscription is not None:
            await subscription.listener.unsubscribe(subscription)
