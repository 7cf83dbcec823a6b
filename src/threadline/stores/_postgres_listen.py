"""One ``LISTEN`` connection per Postgres store (and event loop) for all of its watches.

Every write notifies the store's channel (``<table_prefix>changes``) with the conversation's id
as the payload, inside its transaction, so listeners hear of it once it commits. A
[`Listener`][] holds the one connection that ``LISTEN``s on that channel for every watch of the
store in one event loop, and a task that reads its notifications and wakes, by the payload, the
watches of that conversation only: a write to one conversation costs the other watches nothing.

The channel name is the table prefix (at most 40 characters) and ``changes``, within
PostgreSQL's 63; the payload is a conversation id (at most 200 ASCII characters of a restricted set,
far under the 8,000-byte limit), never formatted into SQL. A payload that names no watched
conversation is dropped without a wake-up.

Lifetime: the connection opens with the first watch's first read and closes when the last watch
ends (or the store closes). It is checked every [`WAIT_SECONDS`][] of silence with a round trip:
when it dropped (a restart, ``pg_terminate_backend``, a dead network), every watch is told its
wake-ups may be lost (its wait raises the transient ``psycopg.OperationalError``), and reads
again from its own last version once the next read has reconnected and ``LISTEN``ed: nothing
falls between. A subscription registers before its watch reads, so a write that commits after
the read always wakes it.

Only `threadline.stores.postgres` and `threadline.stores._postgres_watch` import this
module, after checking that the driver is installed.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections import Counter
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

import psycopg

from threadline.errors import StoreError
from threadline.stores._postgres_pool import AsyncConnection
from threadline.stores._postgres_pool import describe
from threadline.stores._postgres_pool import watch_options

__all__ = ["WAIT_SECONDS", "Listener", "Listeners", "Subscription", "store_listeners"]

WAIT_SECONDS = 5.0
"""Seconds of silence after which a listener checks, with a round trip, that its connection is
alive (a dead one is dropped and every watch reads again)."""

_LOST = "the listening connection was lost; notifications may be missing"


class Subscription:
    """One watch's place at a `Listener`: woken by the writes to its conversation."""

    def __init__(self, listener: Listener, conversation_id: str) -> None:
        self.listener = listener
        self.conversation_id = conversation_id
        self.woken = asyncio.Event()
        self.lost = False
        self.closed = False

    async def wait(self) -> None:
        """Return once a write to the conversation may have committed since the last return.

        Raises:
            psycopg.OperationalError: the listening connection was lost since this subscription
                started, so a write may have gone unnoticed: read again, after a new
                `Listener.subscribe`.
        """
        if not self.lost:
            await self.woken.wait()
        if self.lost:
            raise psycopg.OperationalError(_LOST)
        self.woken.clear()  # before the read that follows: a write during it wakes again


class Listener:
    """The ``LISTEN`` connection of one store in one event loop, and its watches."""

    def __init__(
        self,
        connect: Callable[[], Awaitable[AsyncConnection]],
        channel: str,
        on_idle: Callable[[Listener], None],
    ) -> None:
        self._connect = connect
        self._channel = channel
        self._on_idle = on_idle
        self._watching: dict[str, set[Subscription]] = {}
        self._connection: AsyncConnection | None = None
        self._task: asyncio.Task[None] | None = None
        self._opening = asyncio.Lock()
        self.connections = 0
        """How many connections this listener has opened (one, unless one was lost)."""
        self.wakeups: Counter[str] = Counter()
        """Wake-ups handed to watches, per conversation id (one per watch woken)."""

    @property
    def open(self) -> bool:
        """Whether the listening connection is open."""
        return self._connection is not None

    def watched(self) -> int:
        """How many subscriptions this listener holds."""
        return sum(len(subscriptions) for subscriptions in self._watching.values())

    async def subscribe(self, conversation_id: str) -> Subscription:
        """A subscription to the writes of ``conversation_id``, once the connection is
        ``LISTEN``ing (so a read made after this returns misses no later write).

        Raises:
            psycopg.Error: the connection could not be opened (nothing is left subscribed).
        """
        subscription = Subscription(self, conversation_id)
        self._watching.setdefault(conversation_id, set()).add(subscription)
        try:
            await self._listening()
        except BaseException:
            await self.unsubscribe(subscription)
            raise
        return subscription

    async def unsubscribe(self, subscription: Subscription) -> None:
        """Remove ``subscription``; the last one closes the connection."""
        if subscription.closed:
            return
        subscription.closed = True
        subscriptions = self._watching.get(subscription.conversation_id)
        if subscriptions is not None:
            subscriptions.discard(subscription)
            if not subscriptions:
                del self._watching[subscription.conversation_id]
        if not self._watching:
            await self.close()

    async def close(self) -> None:
        """Close the connection and tell every subscription that its wake-ups are lost."""
        task, self._task = self._task, None
        connection, self._connection = self._connection, None
        self._lose_all()
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if connection is not None:
            with contextlib.suppress(Exception):
                await connection.close()
        if not self._watching:
            self._on_idle(self)

    async def _listening(self) -> None:
        async with self._opening:
            if self._connection is not None:
                return
            connection = await self._connect()
            try:
                self.connections += 1
                await connection.execute(f"LISTEN {self._channel}")
            except BaseException:  # killed between connecting and listening: not left open
                with contextlib.suppress(Exception):
                    await connection.close()
                raise
            if not self._watching:  # every watch ended while this connected
                with contextlib.suppress(Exception):
                    await connection.close()
                return
            self._connection = connection
            self._task = asyncio.get_running_loop().create_task(self._serve(connection))

    async def _serve(self, connection: AsyncConnection) -> None:
        try:
            while True:
                heard = False
                async for notify in connection.notifies(timeout=WAIT_SECONDS):
                    heard = True
                    self._wake(notify.payload)
                if not heard:  # silence: make sure the connection is still there
                    await asyncio.wait_for(connection.execute("SELECT 1"), WAIT_SECONDS)
        except (psycopg.Error, OSError, asyncio.TimeoutError):
            pass  # lost: every watch reads again, and the next read reconnects
        if self._connection is connection:
            self._task = None
            self._connection = None
            self._lose_all()
            with contextlib.suppress(Exception):
                await connection.close()

    def _wake(self, conversation_id: str) -> None:
        for subscription in self._watching.get(conversation_id, ()):
            self.wakeups[conversation_id] += 1
            subscription.woken.set()

    def _lose_all(self) -> None:
        for subscriptions in self._watching.values():
            for subscription in subscriptions:
                subscription.lost = True
                subscription.woken.set()


class Listeners:
    """A store's listeners, one per event loop its watches run in (an async store has one).

    ``refusal``, when set, is why this store cannot ``LISTEN`` (it is behind a transaction
    pooler and has no direct ``listen_dsn``): `check` raises it when a watch starts.
    """

    def __init__(
        self,
        connect: Callable[[], Awaitable[AsyncConnection]],
        channel: str,
        refusal: str | None = None,
    ) -> None:
        self._connect = connect
        self._channel = channel
        self._refusal = refusal
        self.connections = 0
        """How many listening connections this store has opened, in every event loop."""
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Listener] = (
            weakref.WeakKeyDictionary()
        )

    def check(self, where: str) -> None:
        """Raise, when a watch starts, if this store cannot ``LISTEN``.

        Raises:
            threadline.StoreError: the store was opened with ``pgbouncer=True`` and no
                ``listen_dsn``; the message says what to configure.
        """
        if self._refusal is not None:
            raise StoreError(f"{where}: {self._refusal}")

    def current(self) -> Listener:
        """The listener of the running event loop (made on first use)."""
        loop = asyncio.get_running_loop()
        listener = self._by_loop.get(loop)
        if listener is None:
            listener = Listener(self._counted, self._channel, self._forget)
            self._by_loop[loop] = listener
        return listener

    async def _counted(self) -> AsyncConnection:
        self.connections += 1
        return await self._connect()

    def _forget(self, listener: Listener) -> None:
        for loop, held in list(self._by_loop.items()):
            if held is listener:
                del self._by_loop[loop]

    async def aclose(self) -> None:
        """Close the running loop's listener (the store is closing)."""
        listener = self._by_loop.get(asyncio.get_running_loop())
        if listener is not None:
            await listener.close()


def store_listeners(
    dsn: str,
    listen_dsn: str | None,
    options: Mapping[str, Any],
    pgbouncer: bool,
    channel: str,
) -> Listeners:
    """The listeners of a store opened on ``dsn`` with connection ``options``: on
    ``listen_dsn`` when given (a direct connection to the server), else on ``dsn`` unless the
    store is behind a transaction pooler (``pgbouncer``), where ``LISTEN`` cannot work.

    Raises:
        ValueError: ``listen_dsn`` is not a connection string, or ``pgbouncer`` not a bool.
    """
    if not isinstance(pgbouncer, bool):
        raise ValueError(f"pgbouncer must be True or False, not {pgbouncer!r}")
    if listen_dsn is not None:
        try:
            describe(listen_dsn)
        except ValueError as error:
            raise ValueError(f"listen_dsn: {error}") from None
    target = listen_dsn if listen_dsn is not None else dsn
    listening = watch_options(target, options)

    async def connect() -> AsyncConnection:
        return await psycopg.AsyncConnection.connect(target, **listening)

    refusal = None
    if pgbouncer and listen_dsn is None:
        refusal = (
            "watch needs LISTEN, which PgBouncer in transaction mode does not keep (a LISTEN "
            "lasts only as long as the server connection it ran on, and the pooler hands that "
            "connection to other clients between transactions). Open the store with "
            "listen_dsn='postgresql://user:password@db-host:5432/db', a direct connection to "
            "the PostgreSQL server (not through the pooler); the store then holds one such "
            "connection for all of its watches"
        )
    return Listeners(connect, channel, refusal)
