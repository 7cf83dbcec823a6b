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


class PostgresSource:
    """A watch's reads and waits on PostgreSQL (see `threadline.stores._watch.Source`)."""

    transient: tuple[type[BaseException], ...] = (psycopg.OperationalError,)

    def __init__(self, store: Any, conversation_id: str, listeners: Listeners) -> None:
        self._store = store
        self._conversation_id = conversation_id
        self._listeners = listeners
        self._subscription: Subscription | None = None
        self._known: tuple[int, int, str | None] | None = None  # version, count, digest

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
        sql = self._store._sql
        params = {"cid": self._conversation_id, "n": known[1] if known else _UNKNOWN}
        tail: str | None = None  # the messages appended since ``known``, as JSON rows
        payload: str | None = None  # the whole conversation, when it was not only appended to
        async with self._store._connection() as connection, connection.transaction():
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
