"""Connections to one SQLite file, shared by `SQLiteStore` and `SQLiteBlobStore`.

Each thread gets its own connection (``sqlite3`` connections must not be used by two threads at
once), opened in autocommit mode so that transactions are exactly the ``BEGIN IMMEDIATE`` ...
``COMMIT`` blocks written here. The file is switched to WAL once (readers never block the
writer and see a committed snapshot); every connection sets ``synchronous=FULL`` (a commit is
on disk when it returns) and a busy timeout (writers in other processes wait for the lock
instead of failing).
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path

from threadline.errors import StoreError

__all__ = ["SCHEMA_VERSION", "SQLiteDatabase"]

SCHEMA_VERSION = 1
"""The layout version written to ``threadline_meta``; a newer one is refused, not misread."""

_META = (
    "CREATE TABLE IF NOT EXISTS threadline_meta ("
    " key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID",
    f"INSERT OR IGNORE INTO threadline_meta (key, value) VALUES ('schema_version', "
    f"'{SCHEMA_VERSION}')",
)

_CREATED = re.compile(r"^CREATE (?:TABLE|INDEX) IF NOT EXISTS (\w+)")

# Connections inherited through fork(): SQLite must not use or close them in the child (closing
# could disturb the parent's locks), so the child drops them here and opens its own.
_INHERITED: list[sqlite3.Connection] = []


class _Held:
    """A thread's connection and the process that opened it (connections are not weakref-able)."""

    __slots__ = ("__weakref__", "connection", "pid")

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        self.pid = os.getpid()

    def __del__(self) -> None:
        # The thread ended or the store was dropped: close explicitly rather than leave it to
        # the connection's finalizer (which warns from Python 3.13 on). Not after fork: the
        # child must not touch the parent's connection.
        if self.pid == os.getpid():
            with contextlib.suppress(Exception):
                self.connection.close()


class SQLiteDatabase:
    """One SQLite file: a connection per thread, the schema created on first use.

    Args:
        path: the database file (created when missing; its directory must exist).
        schema: the ``CREATE ... IF NOT EXISTS`` statements of the caller's tables.
        migrate: brings tables an older threadline created up to date (run after ``schema``,
            in the same transaction, once per store).
        migrated: the names of the schema objects ``migrate`` creates last: when they and
            every table and index ``schema`` creates are there, at this schema version, the
            file is opened with one read and no write transaction (the usual case).
        timeout: seconds a writer waits for another writer's lock before failing.
        owner: how the owning store prints itself, for error messages.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        schema: Sequence[str],
        timeout: float,
        owner: str,
        migrate: Callable[[sqlite3.Connection], None] | None = None,
        migrated: Sequence[str] = (),
    ) -> None:
        text = os.fspath(path)
        if text in ("", ":memory:") or text.startswith("file:"):
            raise ValueError(
                f"{owner} needs a file path, not {text!r}: each thread would get its own "
                "private database. Use MemoryStore() for an in-memory store"
            )
        self.path = Path(text)
        self._schema = (*_META, *schema)
        self._names = (
            *(match.group(1) for match in map(_CREATED.search, self._schema) if match),
            *migrated,
        )
        self._migrate = migrate
        self._timeout = timeout
        self._owner = owner
        self._local = threading.local()
        self._lock = threading.Lock()
        self._held: weakref.WeakSet[_Held] = weakref.WeakSet()
        self._ready = False
        self._closed = False

    def connection(self) -> sqlite3.Connection:
        """This thread's connection, opened (and the schema created) on first use.

        Raises:
            sqlite3.Error: the file cannot be opened or the schema cannot be created.
            threadline.StoreError: the database was closed, or holds a newer schema.
        """
        if self._closed:
            raise StoreError(f"{self._owner} is closed")
        held: _Held | None = getattr(self._local, "held", None)
        if held is None or held.pid != os.getpid():
            if held is not None:
                _INHERITED.append(held.connection)
            held = _Held(self._connect())
            self._local.held = held
            with self._lock:
                self._held.add(held)
        if not self._ready:
            self._create_schema(held.connection)
        return held.connection

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: ``BEGIN IMMEDIATE`` (waits for other writers), then ``COMMIT``.

        Taking the write lock up front means the reads inside (``MAX(seq)``) cannot be made
        stale by another writer, and the transaction never has to be retried.
        """
        connection = self.connection()
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield connection
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                # The original error says what went wrong; SQLite rolls back on close anyway.
                with contextlib.suppress(sqlite3.Error):
                    connection.execute("ROLLBACK")
            raise

    def close(self) -> None:
        """Close every connection this process opened; later calls raise `StoreError`."""
        self._closed = True
        with self._lock:
            held = [item for item in self._held if item.pid == os.getpid()]
            self._held.clear()
        for item in held:
            item.connection.close()

    def _connect(self) -> sqlite3.Connection:
        # check_same_thread=False only so close() can close every thread's connection; each
        # connection is otherwise used by the thread that opened it.
        connection = sqlite3.connect(
            self.path, timeout=self._timeout, isolation_level=None, check_same_thread=False
        )
        try:
            connection.execute("PRAGMA synchronous=FULL")
        except BaseException:
            connection.close()
            raise
        return connection

    def _enable_wal(self, connection: sqlite3.Connection) -> None:
        """Switch the file to WAL (a setting kept in the file, so once per store suffices).

        The switch needs an exclusive lock, and SQLite refuses it at once (no busy wait, to
        avoid a deadlock) while another connection is opening the same new file; so retry
        until the busy timeout.
        """
        deadline = time.monotonic() + self._timeout
        while True:
            try:
                connection.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
            time.sleep(0.005)

    def _create_schema(self, connection: sqlite3.Connection) -> None:
        with self._lock:
            if self._ready:
                return
            self._enable_wal(connection)
            if self._settled(connection):
                self._ready = True
                return
            connection.execute("BEGIN IMMEDIATE")
            try:
                for statement in self._schema:
                    connection.execute(statement)
                if self._migrate is not None:
                    self._migrate(connection)
                row = connection.execute(
                    "SELECT value FROM threadline_meta WHERE key = 'schema_version'"
                ).fetchone()
                connection.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    connection.execute("ROLLBACK")
                raise
            if row is None or row[0] != str(SCHEMA_VERSION):
                raise StoreError(
                    f"{self._owner}: the database's threadline schema version is "
                    f"{row[0] if row else None!r}, but this threadline reads version "
                    f"{SCHEMA_VERSION}; upgrade threadline to open it"
                )
            self._ready = True

    def _settled(self, connection: sqlite3.Connection) -> bool:
        """Whether the file already holds every table and index of the schema (migrations
        done) at this schema version: one read, so opening an existing database takes no
        write lock. Anything else (a new file, an older layout, a newer version) goes the
        ``BEGIN IMMEDIATE`` way, which creates, migrates or refuses."""
        marks = ", ".join("?" * len(self._names))
        try:
            row = connection.execute(
                f"SELECT (SELECT count(*) FROM sqlite_master WHERE name IN ({marks})),"
                " (SELECT value FROM threadline_meta WHERE key = 'schema_version')",
                self._names,
            ).fetchone()
        except sqlite3.OperationalError:  # no threadline_meta yet
            return False
        return bool(row == (len(self._names), str(SCHEMA_VERSION)))
