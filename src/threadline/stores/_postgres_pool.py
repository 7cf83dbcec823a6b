"""The connections of the Postgres stores: their options, and one small pool per store.

A pool holds at most ``max_connections`` connections; idle ones are reused. A pooled connection
the server has closed (a restart, an idle timeout) is noticed before use and replaced, with no
round trip, so a restart between calls raises nothing. After ``fork()`` the child opens its
own connections and leaves the parent's alone. Only `threadline.stores.postgres` imports
this module, after checking that the driver is installed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import threading
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import asynccontextmanager
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.pq import TransactionStatus
from psycopg.rows import TupleRow

from threadline.errors import StoreError

__all__ = [
    "AsyncConnection",
    "AsyncPool",
    "Connection",
    "Pool",
    "PoolLimits",
    "check_size",
    "connect_options",
    "describe",
    "reusable",
]


Connection = psycopg.Connection[TupleRow]
AsyncConnection = psycopg.AsyncConnection[TupleRow]


def describe(dsn: object) -> str:
    """Where ``dsn`` points, without its password (reprs end up in error messages and logs)."""
    if not isinstance(dsn, str):
        raise ValueError(
            f"dsn must be a str like 'postgresql://user@host:5432/db', not {type(dsn).__name__}"
        )
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.Error as error:
        raise ValueError(
            f"dsn is not a PostgreSQL connection string or URI ({error}); use for example "
            "'postgresql://user:password@127.0.0.1:5432/db'"
        ) from None
    user = f"{params['user']}@" if params.get("user") else ""
    host = str(params.get("host") or params.get("hostaddr") or "")
    port = f":{params['port']}" if params.get("port") else ""
    dbname = f"/{params['dbname']}" if params.get("dbname") else ""
    return f"postgresql://{user}{host}{port}{dbname}"


def connect_options(
    dsn: str, extra: Mapping[str, Any] | None, pgbouncer: bool = False
) -> dict[str, Any]:
    """The arguments of ``psycopg.connect`` for a store: ``extra`` (``connect_kwargs``), a
    default ``application_name``, ``autocommit``; behind a transaction pooler (``pgbouncer``),
    no automatic prepared statements (``prepare_threshold=None``: a statement prepared on one
    server connection is unknown on the next one the pooler hands out)."""
    options: dict[str, Any] = dict(extra or {})
    if pgbouncer is True:
        if options.get("prepare_threshold") is not None:
            raise ValueError(
                "pgbouncer=True turns psycopg's prepared statements off, but connect_kwargs "
                f"sets prepare_threshold={options['prepare_threshold']!r}: drop one of them"
            )
        options["prepare_threshold"] = None
    if "application_name" not in options and "application_name" not in conninfo_to_dict(dsn):
        options["application_name"] = "threadline"  # so operators can tell these sessions apart
    options["autocommit"] = True  # transactions are exactly the blocks written in this module
    return options


def watch_options(dsn: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` for a watch's ``LISTEN`` connection: named ``<application name> watch``, so
    operators (and a test on a shared server) tell it from the store's pooled sessions."""
    listening = dict(options)
    name = listening.get("application_name") or conninfo_to_dict(dsn).get("application_name")
    if name:
        listening["application_name"] = f"{name} watch"
    return listening


def check_size(max_connections: int) -> int:
    if not isinstance(max_connections, int) or max_connections < 1:
        raise ValueError(f"max_connections must be an int of at least 1, not {max_connections!r}")
    return max_connections


def reusable(connection: Connection | AsyncConnection) -> bool:
    """Whether a pooled connection can take the next call without a round trip to check.

    An idle connection never has anything to read: if its socket is readable, the server
    closed it (a restart, ``idle_session_timeout``) or sent a notice, and it is replaced.
    """
    if connection.closed or connection.broken:
        return False
    if connection.info.transaction_status != TransactionStatus.IDLE:
        return False
    try:
        readable, _, _ = select.select([connection.fileno()], [], [], 0)
    except (OSError, ValueError, psycopg.Error):
        return False
    return not readable


# Connections inherited through fork(): the child must not close them (libpq would end the
# parent's sessions) and should not drop them (psycopg warns about an unclosed connection), so
# it keeps them here, untouched.
_INHERITED: list[object] = []


class PoolLimits:
    """What both pools share: the bound, the wait, and the errors of a closed or busy pool."""

    def __init__(self, size: int, timeout: float, owner: str) -> None:
        self._size = size
        self._timeout = timeout
        self._owner = owner
        self._closed = False

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"{self._owner} is closed")

    def _busy(self) -> StoreError:
        return StoreError(
            f"{self._owner}: all {self._size} connections stayed busy for "
            f"{self._timeout:g} s; raise max_connections or timeout"
        )


class Pool(PoolLimits):
    """At most ``size`` connections of one store; idle ones are reused, stale ones replaced."""

    def __init__(
        self, connect: Callable[[], Connection], size: int, timeout: float, owner: str
    ) -> None:
        super().__init__(size, timeout, owner)
        self._connect = connect
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self._pid = os.getpid()
        self._slots = threading.BoundedSemaphore(self._size)
        self._idle: list[Connection] = []

    @contextmanager
    def connection(self) -> Iterator[Connection]:
        """A connection for one call, returned to the pool afterwards.

        Raises:
            psycopg.Error: a connection could not be opened.
            threadline.StoreError: the store is closed, or every connection stayed busy for
                ``timeout`` seconds.
        """
        self._check_open()
        with self._lock:
            if self._pid != os.getpid():
                _INHERITED.extend(self._idle)
                self._reset()
            slots = self._slots
        if not slots.acquire(timeout=self._timeout):
            raise self._busy()
        try:
            connection = self._take()
            try:
                yield connection
            finally:
                self._give_back(connection)
        finally:
            slots.release()

    def close(self) -> None:
        """Close the idle connections; busy ones close when their call ends."""
        with self._lock:
            self._closed = True
            idle = self._idle if self._pid == os.getpid() else []
            self._idle = []
        for connection in idle:
            with contextlib.suppress(Exception):
                connection.close()

    def _take(self) -> Connection:
        while True:
            with self._lock:
                connection = self._idle.pop() if self._idle else None
            if connection is None:
                return self._connect()
            if reusable(connection):
                return connection
            with contextlib.suppress(Exception):
                connection.close()

    def _give_back(self, connection: Connection) -> None:
        with self._lock:
            if not self._closed and self._pid == os.getpid() and reusable(connection):
                self._idle.append(connection)
                return
        if self._pid == os.getpid():
            with contextlib.suppress(Exception):
                connection.close()
        else:
            _INHERITED.append(connection)


class AsyncPool(PoolLimits):
    """The async `Pool`: at most ``size`` connections, idle ones reused."""

    def __init__(
        self,
        connect: Callable[[], Awaitable[AsyncConnection]],
        size: int,
        timeout: float,
        owner: str,
    ) -> None:
        super().__init__(size, timeout, owner)
        self._connect = connect
        self._slots = asyncio.Semaphore(size)
        self._idle: list[AsyncConnection] = []

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[AsyncConnection]:
        """A connection for one call, returned to the pool afterwards (as `Pool.connection`
        raises)."""
        self._check_open()
        try:
            if self._slots.locked():  # wait_for only when waiting: it costs a task
                await asyncio.wait_for(self._slots.acquire(), self._timeout)
            else:
                await self._slots.acquire()
        except asyncio.TimeoutError:
            raise self._busy() from None
        try:
            connection = await self._take()
            try:
                yield connection
            finally:
                await self._give_back(connection)
        finally:
            self._slots.release()

    async def aclose(self) -> None:
        """Close the idle connections; busy ones close when their call ends."""
        self._closed = True
        idle, self._idle = self._idle, []
        for connection in idle:
            with contextlib.suppress(Exception):
                await connection.close()

    async def _take(self) -> AsyncConnection:
        while self._idle:
            connection = self._idle.pop()
            if reusable(connection):
                return connection
            with contextlib.suppress(Exception):
                await connection.close()
        return await self._connect()

    async def _give_back(self, connection: AsyncConnection) -> None:
        if not self._closed and reusable(connection):
            self._idle.append(connection)
            return
        with contextlib.suppress(Exception):
            await connection.close()
