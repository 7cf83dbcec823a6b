"""``PostgresStore`` and ``AsyncPostgresStore``: conversations in PostgreSQL, one row per message.

Layout, for the default ``table_prefix="threadline_"`` ([`schema_sql`][] gives the DDL for any
prefix; [`SCHEMA_SQL`][] is this one)::

    CREATE TABLE threadline_conversations (     -- the index list_conversations() reads, and
        conversation_id text COLLATE "C" PRIMARY KEY,  -- the row a writer locks
        next_seq        bigint NOT NULL         -- the seq the next appended message gets
    );
    CREATE TABLE threadline_messages (
        conversation_id text COLLATE "C" NOT NULL,
        seq             bigint NOT NULL,        -- 0, 1, 2... in conversation order
        message         text NOT NULL,          -- the message's JSON (Message.model_dump_json())
        message_id      text,                   -- the message's id (NULL in rows written before
        PRIMARY KEY (conversation_id, seq)      -- threadline kept it)
    );
    CREATE UNIQUE INDEX threadline_messages_by_id
        ON threadline_messages (conversation_id, message_id);
    CREATE TABLE threadline_versions (          -- version(); a row is kept after a delete,
        conversation_id text COLLATE "C" PRIMARY KEY,  -- so a version never goes back
        version         bigint NOT NULL
    );
    CREATE TABLE threadline_parents (           -- parent(): a row per branch fork() made,
        conversation_id text COLLATE "C" PRIMARY KEY,  -- removed with the branch
        parent_id       text COLLATE "C" NOT NULL,
        at              bigint NOT NULL         -- the parent's messages it started with
    );

Why it holds up:

- **An append is one statement, so one transaction.** An upsert on the conversation's row
  reserves ``seq`` numbers for the whole batch (``next_seq = next_seq + n``) and holds that
  row's lock until commit; the same statement inserts the batch. A second writer to the same
  conversation waits on the lock and then reserves the numbers after it, so writers on any
  number of machines lose nothing and never interleave inside a batch, and batches commit in
  ``seq`` order. Nothing stored is rewritten: appending costs the same at any length.
- **A retried write stores nothing twice.** Message ids are unique within a conversation (the
  ``message_id`` index). An append whose ids are all new is still the one statement; one that
  names an id already stored fails on the index and runs again as a transaction that locks the
  conversation's row, looks the ids up, skips the messages stored with the same JSON (a batch
  sent again after its reply was lost) and refuses the batch when an id names a different
  message. Tables an older threadline created get the column and the index on first use; their
  earlier rows have no ``message_id``, so a replay of those is not recognised.
- **``replace`` and ``delete`` are one transaction each**, taking the same row locks first, so
  they never mix with a concurrent append.
- **Versions are checked and stepped under the version row's lock.** An append's statement
  first upserts the conversation's ``versions`` row, stepping it only when it holds
  ``expected_version`` (re-checked on the locked, latest row), and writes nothing when it does
  not; ``replace`` and ``delete`` lock the row, compare and step it in their transaction.
  Every writer locks the version row before the conversation's row, so writers never
  deadlock. A conversation written before versions existed (no ``versions`` row: the table is
  added on first use) is at version ``next_seq`` (its message count) until its next write.
- **A fork is one transaction.** ``fork`` loads the parent, then locks the new id's version
  row, checks that the id holds no message and no ``parents`` row, inserts the copied rows,
  steps the version and adds the ``parents`` row (a table added on first use).
- **``load`` is one statement**, so it reads one snapshot: whole batches, and the old or the new
  history around a ``replace``. The server joins the rows' JSON with ``string_agg`` and the
  result is validated in a single pydantic call.
- **The JSON is kept as ``text``, not ``jsonb``.** ``text`` keeps exactly the bytes threadline
  wrote and hands them back without re-serializing; ``jsonb`` would cost a parse on every
  insert and a rendering on every load, and refuses ``\\u0000``, which a message may hold. Cast
  to query it: ``message::jsonb ->> 'role'``.
- **The tables are created on first use** (unless ``auto_create_schema=False``): the store
  checks that they exist and, if not, creates them under an advisory lock, so workers starting
  together do not race. To manage migrations yourself, apply [`schema_sql`][] or call
  [`PostgresStore.create_schema`][] from your migration.

Connections: each store keeps a small pool of its own (at most ``max_connections`` open; idle
ones are reused). A pooled connection the server has closed (a restart, an idle timeout) is
noticed before use and replaced, so a restart between calls raises nothing; a call in flight
when the server goes away raises [`StoreError`][] and changes nothing (its
transaction rolls back). After ``fork()`` the child opens its own connections. A store's
watches share one ``LISTEN`` connection per event loop (`threadline.stores._postgres_listen`);
the blocking store's watch is the async one's, its reads run in worker threads. A page of
``list_conversations`` is an index range scan of the conversations table's primary key (in
``"C"`` order, which is code point order).

The driver (``psycopg`` 3, the extra ``threadline[postgres]``) is imported with this module,
which ``threadline.stores`` loads only when one of these stores is first used.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import AsyncIterator
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import AbstractContextManager
from contextlib import asynccontextmanager
from contextlib import contextmanager
from typing import Any
from typing import ClassVar

from threadline.messages import Message
from threadline.stores._closing import AsyncClosing
from threadline.stores._closing import Closing
from threadline.stores._replays import Batch
from threadline.stores._rows import JsonRows
from threadline.stores._watch import Watch
from threadline.stores._watch import check_after_version
from threadline.stores.base import check_write
from threadline.stores.base import conflict
from threadline.stores.base import validate_conversation_id
from threadline.stores.blobs import DEFAULT_BLOB_THRESHOLD
from threadline.stores.blobs import BlobStore
from threadline.stores.forks import afork_source
from threadline.stores.forks import fork_source
from threadline.stores.forks import taken

try:
    import psycopg
    import psycopg.errors
except ImportError as error:  # pragma: no cover - exercised in a subprocess
    raise ImportError(
        'PostgresStore and AsyncPostgresStore need psycopg 3: pip install "threadline[postgres]"',
        name="psycopg",
    ) from error

# The machinery, after the check above: these modules import the driver too.
from threadline.stores._postgres_after import AsyncPostgresLoadAfter
from threadline.stores._postgres_after import PostgresLoadAfter
from threadline.stores._postgres_listen import store_listeners
from threadline.stores._postgres_listing import AsyncPostgresListing
from threadline.stores._postgres_listing import PostgresListing
from threadline.stores._postgres_pool import AsyncConnection
from threadline.stores._postgres_pool import AsyncPool
from threadline.stores._postgres_pool import Connection
from threadline.stores._postgres_pool import Pool
from threadline.stores._postgres_pool import check_size
from threadline.stores._postgres_pool import connect_options
from threadline.stores._postgres_pool import describe
from threadline.stores._postgres_sql import Append
from threadline.stores._postgres_sql import Queries
from threadline.stores._postgres_sql import aensure_schema
from threadline.stores._postgres_sql import driver_errors
from threadline.stores._postgres_sql import ensure_schema
from threadline.stores._postgres_sql import json_array
from threadline.stores._postgres_sql import schema_statements
from threadline.stores._postgres_watch import PostgresSource

__all__ = [
    "DEFAULT_TABLE_PREFIX",
    "SCHEMA_SQL",
    "AsyncPostgresStore",
    "PostgresStore",
    "schema_sql",
]

DEFAULT_TABLE_PREFIX = "threadline_"
"""The default start of the tables' names: ``threadline_messages``, ``threadline_conversations``."""

_PREFIX = re.compile(r"[a-z_][a-z0-9_]{0,39}")


def schema_sql(table_prefix: str = DEFAULT_TABLE_PREFIX) -> str:
    """The DDL of the tables a Postgres store with this ``table_prefix`` uses.

    Apply it yourself (in a migration) when the application's database role may not create
    tables, and open the store with ``auto_create_schema=False``.

    Args:
        table_prefix: the start of the tables' names.

    Raises:
        ValueError: ``table_prefix`` is not 1 to 40 lower-case letters, digits and ``_``,
            starting with a letter or ``_``.
    """
    return ";\n".join(schema_statements(_check_prefix(table_prefix))) + ";\n"


def _check_prefix(table_prefix: object) -> str:
    if not isinstance(table_prefix, str) or _PREFIX.fullmatch(table_prefix) is None:
        raise ValueError(
            f"table_prefix {table_prefix!r} is not usable in a table name: use 1 to 40 "
            "lower-case letters, digits and '_', starting with a letter or '_' (for example "
            f"{DEFAULT_TABLE_PREFIX!r}). To use another schema, set search_path in the dsn"
        )
    return table_prefix


SCHEMA_SQL = schema_sql()
"""The DDL for the default ``table_prefix`` (``threadline_``)."""


class _PostgresStoreBase(JsonRows):
    """What `PostgresStore` and `AsyncPostgresStore` share: the arguments, the
    SQL, the batches and the errors. The twins only open connections and run the statements.
    """

    _NAME: ClassVar[str]

    def __init__(
        self,
        dsn: str,
        *,
        table_prefix: str = DEFAULT_TABLE_PREFIX,
        auto_create_schema: bool = True,
        blobs: BlobStore | None = None,
        blob_threshold: int = DEFAULT_BLOB_THRESHOLD,
        max_connections: int = 10,
        timeout: float = 30.0,
        connect_kwargs: Mapping[str, Any] | None = None,
        pgbouncer: bool = False,
        listen_dsn: str | None = None,
    ) -> None:
        self.table_prefix = _check_prefix(table_prefix)
        self.blobs = blobs
        self.blob_threshold = blob_threshold
        self.auto_create_schema = auto_create_schema
        self._where = describe(dsn)
        self._sql = Queries(table_prefix)
        self._schema_ready = False
        options = connect_options(dsn, connect_kwargs, pgbouncer)
        channel = self._sql.channel
        self._listeners = store_listeners(dsn, listen_dsn, options, pgbouncer, channel)
        self._open_pool(dsn, options, check_size(max_connections), timeout)

    def watch(self, conversation_id: str, after_version: int | None = None) -> Watch:
        """An async iterator of the batches appended to the conversation after
        ``after_version`` (see [`Watch`][threadline.stores.Watch]).

        Pushed: every write notifies (``pg_notify`` in its transaction); the store's one
        ``LISTEN`` connection (outside ``max_connections``; one per event loop) wakes the
        watches of that conversation only, which read what changed in one snapshot on a pooled
        connection (in a worker thread, for the blocking ``PostgresStore``: iterate its watch
        in async code, and close it before its event loop ends). A dropped connection (a
        restart, ``pg_terminate_backend``) only delays them: they reconnect and catch up from
        their own last version, never skipping or repeating.

        Args:
            conversation_id: the conversation to watch.
            after_version: the version the caller has seen; ``None`` watches from the version
                at the first read. The store keeps no log of writes, so a watch whose first
                read finds the conversation past ``after_version`` raises
                [`ConversationReplacedError`][threadline.ConversationReplacedError] with the
                whole conversation first.

        Raises:
            threadline.ValidationError: the id or ``after_version`` is invalid.
            threadline.StoreError: ``pgbouncer=True`` without a ``listen_dsn``.
        """
        validate_conversation_id(conversation_id)
        after = check_after_version(after_version, f"{self._NAME}.watch")
        self._listeners.check(f"{self._NAME}.watch")
        source = PostgresSource(self, conversation_id, self._listeners)
        return Watch(source, conversation_id, after)

    def _open_pool(self, dsn: str, options: dict[str, Any], size: int, timeout: float) -> None:
        """Make ``self._pool``: at most ``size`` connections to ``dsn``, opened with ``options``."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{self._NAME}({self._where!r}, table_prefix={self.table_prefix!r})"

    def _failing(self, doing: str) -> AbstractContextManager[None]:
        """Raise psycopg's errors (and invalid stored JSON) as `StoreError`."""
        return driver_errors(f"{self!r} could not {doing}")

    def _batch(self, conversation_id: str, items: list[Message], texts: list[str]) -> Append:
        return Append(conversation_id, items, texts, f"{self._NAME}.append")

    def _replace_steps(
        self, conversation_id: str, items: list[Message], texts: list[str]
    ) -> list[tuple[str, Any]]:
        """The statements of a replace, to run in one transaction after `_locked_version`
        and the version check."""
        batch = Batch(conversation_id, items, texts, f"{self._NAME}.replace")
        ids, texts = batch.without_replays({})
        # Lock the conversation's row before deleting: a writer holding it commits first, and
        # the DELETE (a new statement, so a new snapshot) then sees its rows.
        steps: list[tuple[str, Any]] = [
            (self._sql.bump_version, {"cid": conversation_id}),
            (self._sql.notify, (conversation_id,)),
            (self._sql.lock_for_replace, (conversation_id, len(texts))),
            (self._sql.delete_messages, (conversation_id,)),
        ]
        if texts:
            steps.append((self._sql.insert_all, (conversation_id, texts, ids)))
        else:
            steps.append((self._sql.delete_conversation, (conversation_id,)))
            steps.append((self._sql.delete_parent, (conversation_id,)))
        return steps

    def _delete_steps(self, conversation_id: str) -> list[tuple[str, Any]]:
        # The conversation's row first, for the same reason as in _replace_steps.
        return [
            (self._sql.bump_version, {"cid": conversation_id}),
            (self._sql.notify, (conversation_id,)),
            (self._sql.delete_conversation, (conversation_id,)),
            (self._sql.delete_messages, (conversation_id,)),
            (self._sql.delete_parent, (conversation_id,)),
        ]

    def _fork_steps(
        self, conversation_id: str, new_id: str, point: int, items: list[Message], texts: list[str]
    ) -> list[tuple[str, Any]]:
        """The statements of a fork, to run in one transaction after `_locked_version` on
        ``new_id`` and the check that it is unused."""
        steps: list[tuple[str, Any]] = [(self._sql.bump_version, {"cid": new_id})]
        if texts:
            ids = [message.id for message in items]
            steps.append((self._sql.lock_for_replace, (new_id, len(texts))))
            steps.append((self._sql.insert_all, (new_id, texts, ids)))
        steps.append((self._sql.add_parent, (new_id, conversation_id, point)))
        return steps

    @staticmethod
    def _parent_of(row: Any) -> tuple[str, int] | None:
        return None if row is None else (str(row[0]), int(row[1]))

    def _check_version(
        self, row: Any, conversation_id: str, expected: int | None, method: str
    ) -> int:
        """The version the lock returned, checked against ``expected``.

        Raises:
            threadline.ConflictError: it is not ``expected``.
        """
        version = int(row[0])
        if expected is not None and version != expected:
            raise conflict(f"{self._NAME}.{method}", conversation_id, expected, version)
        return version

    def _conflict(self, row: Any, conversation_id: str, expected: int | None) -> Exception:
        """The conflict of an append whose statement found another version (read since)."""
        return conflict(f"{self._NAME}.append", conversation_id, expected or 0, int(row[0]))


class PostgresStore(PostgresLoadAfter, PostgresListing, _PostgresStoreBase, Closing):
    """Conversations in PostgreSQL, one row per message; for many workers on many machines.

    Safe to share between threads (each call takes a connection from the store's own small
    pool) and between processes and machines (the server's row locks order the writers). Use
    it as a context manager, or call [`close`][], to close the connections.

    Args:
        dsn: the server, as a libpq URI (``postgresql://user:password@host:5432/db``) or
            key/value string (``"host=... dbname=..."``). To keep the tables in another
            schema, set ``options=-csearch_path=myschema`` in it.
        table_prefix: the start of the tables' names (``<prefix>messages``,
            ``<prefix>conversations``): 1 to 40 lower-case letters, digits and ``_``.
        auto_create_schema: create the tables on first use when they are missing. Turn it off
            when you apply [`schema_sql`][] yourself.
        blobs: where to keep file bytes longer than ``blob_threshold`` instead of in the
            message rows; ``None`` keeps them inline.
        blob_threshold: file bytes longer than this go to ``blobs``.
        max_connections: how many connections this store opens at most; a call waits for a
            free one when all are busy.
        timeout: seconds a call waits for a free connection before raising
            [`StoreError`][].
        connect_kwargs: extra arguments for ``psycopg.connect``. The store always uses
            ``autocommit=True`` and writes in explicit transactions.
        pgbouncer: the dsn points at PgBouncer (or another pooler) in transaction mode: turn
            off psycopg's automatic prepared statements (``prepare_threshold=None``).
        listen_dsn: a direct connection to the server for ``watch``'s one ``LISTEN``
            connection (``LISTEN`` does not work through a transaction pooler); by default
            the store listens on ``dsn``, and with ``pgbouncer=True`` and no ``listen_dsn``
            ``watch`` raises [`StoreError`][] saying so.

    Raises:
        ValueError: ``dsn`` or ``listen_dsn`` is not a connection string, ``table_prefix`` is
            not usable, ``max_connections`` is less than 1, or ``pgbouncer=True`` comes with
            a ``prepare_threshold`` in ``connect_kwargs``.
    """

    _NAME = "PostgresStore"

    def _open_pool(self, dsn: str, options: dict[str, Any], size: int, timeout: float) -> None:
        self._pool = Pool(
            lambda: psycopg.Connection.connect(dsn, **options), size, timeout, repr(self)
        )
        # Close idle connections when the store is dropped without close(), quietly.
        weakref.finalize(self, self._pool.close)

    def load(self, conversation_id: str) -> list[Message]:
        """The conversation's messages, oldest first; ``[]`` when it holds none.

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: the server cannot be reached or refused the query, a row is
                not a valid message, or a
                referenced blob is corrupt or unreadable (a missing one loads as a placeholder).
        """
        validate_conversation_id(conversation_id)
        with self._failing(f"load conversation {conversation_id!r}"):
            with self._connection() as connection:
                row = connection.execute(self._sql.load, (conversation_id,)).fetchone()
            payload = json_array(row)
            messages = self._messages(payload)
        return self._restored(messages, payload, conversation_id)

    def version(self, conversation_id: str) -> int:
        """The conversation's version: 0 when never written, one more after each write.

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: the server cannot be reached or refused the query.
        """
        validate_conversation_id(conversation_id)
        with (
            self._failing(f"read the version of conversation {conversation_id!r}"),
            self._connection() as connection,
        ):
            row = connection.execute(self._sql.version, {"cid": conversation_id}).fetchone()
        return int(row[0]) if row is not None else 0

    def append(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        """Add ``messages`` at the end of the conversation, in one transaction.

        With ``expected_version``, the batch is written only if the conversation is still at
        that version (checked under the version row's lock).

        Raises:
            threadline.ValidationError: the id is invalid or an item is not a ``Message``.
            threadline.ConflictError: the conversation is not at ``expected_version``
                (nothing was appended).
            threadline.StoreError: the server cannot be reached or refused the statement. If
                the connection dropped while committing, the batch may have been stored
                (whole); otherwise nothing was. Either way, sending it again is safe.
            threadline.ValidationError: (also) a message reuses the id of a different one;
                nothing was appended.
        """
        items, expected = check_write(
            conversation_id, messages, expected_version, f"{self._NAME}.append"
        )
        if not items:
            return
        with self._failing(f"append to conversation {conversation_id!r}"):
            batch = self._batch(conversation_id, items, self._rows(items, conversation_id))
            with self._connection() as connection:
                try:
                    cursor = connection.execute(self._sql.append, batch.params(expected))
                except psycopg.errors.UniqueViolation:
                    pass  # an id is stored already: look at what holds it
                else:
                    if cursor.rowcount == 0:  # the version was not the expected one
                        version = connection.execute(self._sql.version, {"cid": conversation_id})
                        raise self._conflict(version.fetchone(), conversation_id, expected)
                    return
                with connection.transaction():
                    row = connection.execute(self._sql.lock_version, {"cid": conversation_id})
                    current = self._check_version(
                        row.fetchone(), conversation_id, expected, "append"
                    )
                    connection.execute(self._sql.lock_for_append, (conversation_id,))
                    held = connection.execute(self._sql.held, batch.lookup()).fetchall()
                    fresh = batch.fresh(held, current)
                    if fresh is not None:
                        connection.execute(self._sql.append, fresh)

    def replace(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        """Make ``messages`` the whole conversation in one transaction; ``[]`` deletes it.

        Raises:
            threadline.ValidationError: the id is invalid or an item is not a ``Message``.
            threadline.ConflictError: the conversation is not at ``expected_version``
                (nothing changed).
            threadline.StoreError: the server cannot be reached or refused a statement
                (nothing changed).
        """
        items, expected = check_write(
            conversation_id, messages, expected_version, f"{self._NAME}.replace"
        )
        with self._failing(f"replace conversation {conversation_id!r}"):
            texts = self._rows(items, conversation_id)
            steps = self._replace_steps(conversation_id, items, texts)
            with self._connection() as connection, connection.transaction():
                row = connection.execute(self._sql.lock_version, {"cid": conversation_id})
                self._check_version(row.fetchone(), conversation_id, expected, "replace")
                for query, params in steps:
                    connection.execute(query, params)

    def delete(self, conversation_id: str) -> None:
        """Remove the conversation, and step its version (even when it does not exist).

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: the server cannot be reached or refused a statement.
        """
        validate_conversation_id(conversation_id)
        with (
            self._failing(f"delete conversation {conversation_id!r}"),
            self._connection() as connection,
            connection.transaction(),
        ):
            connection.execute(self._sql.lock_version, {"cid": conversation_id})
            for query, params in self._delete_steps(conversation_id):
                connection.execute(query, params)

    def fork(self, conversation_id: str, new_id: str, at: int | None = None) -> None:
        """Copy the first ``at`` messages (all when ``None``) into the new conversation
        ``new_id`` and record its parent, in one transaction.

        Raises:
            threadline.ValidationError: an id is invalid, the parent holds no message, ``at``
                is past its end, or ``new_id`` is in use (nothing was written).
            threadline.StoreError: the server cannot be reached or refused a statement
                (nothing was written).
        """
        items, point = fork_source(self.load, conversation_id, new_id, at, "PostgresStore.fork")
        with self._failing(f"fork conversation {conversation_id!r} into {new_id!r}"):
            texts = self._rows(items, new_id)
            steps = self._fork_steps(conversation_id, new_id, point, items, texts)
            with self._connection() as connection, connection.transaction():
                connection.execute(self._sql.lock_version, {"cid": new_id})
                row = connection.execute(self._sql.in_use, (new_id, new_id)).fetchone()
                if row is not None and row[0]:
                    raise taken(new_id, "PostgresStore.fork")
                for query, params in steps:
                    connection.execute(query, params)

    def parent(self, conversation_id: str) -> tuple[str, int] | None:
        """``(parent id, at)`` of a conversation made by [`fork`][]; ``None`` otherwise.

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: the server cannot be reached or refused the query.
        """
        validate_conversation_id(conversation_id)
        with (
            self._failing(f"read the parent of conversation {conversation_id!r}"),
            self._connection() as connection,
        ):
            return self._parent_of(
                connection.execute(self._sql.parent, (conversation_id,)).fetchone()
            )

    def create_schema(self) -> None:
        """Create the tables if they do not exist (what happens on first use anyway).

        Safe to call from several processes at once: creation runs under an advisory lock.

        Raises:
            threadline.StoreError: the server cannot be reached, or the role may not create
                tables.
        """
        with self._failing("create its tables"):
            with self._pool.connection() as connection:
                ensure_schema(connection, self._sql)
            self._schema_ready = True

    def close(self) -> None:
        """Close this store's connections; the store cannot be used after."""
        self._pool.close()

    @contextmanager
    def _connection(self) -> Iterator[Connection]:
        with self._pool.connection() as connection:
            if not self._schema_ready:
                if self.auto_create_schema:
                    ensure_schema(connection, self._sql)
                self._schema_ready = True
            yield connection


class AsyncPostgresStore(
    AsyncPostgresLoadAfter, AsyncPostgresListing, _PostgresStoreBase, AsyncClosing
):
    """The async twin of [`PostgresStore`][] (``psycopg.AsyncConnection``): same tables, same
    guarantees, the same arguments.

    A ``PostgresStore`` and an ``AsyncPostgresStore`` with the same ``table_prefix`` share
    conversations. Use one store per event loop. Close it with ``await store.aclose()`` or
    ``async with``. A ``blobs`` store's blocking ``put`` and ``get`` run in a worker thread.

    Raises:
        ValueError: as for [`PostgresStore`][].
    """

    _NAME = "AsyncPostgresStore"

    def _open_pool(self, dsn: str, options: dict[str, Any], size: int, timeout: float) -> None:
        self._pool = AsyncPool(
            lambda: psycopg.AsyncConnection.connect(dsn, **options), size, timeout, repr(self)
        )

    async def load(self, conversation_id: str) -> list[Message]:
        """The conversation's messages, oldest first; ``[]`` when it holds none.

        Raises:
            threadline.ValidationError: as for [`PostgresStore.load`][].
            threadline.StoreError: as for [`PostgresStore.load`][].
        """
        validate_conversation_id(conversation_id)
        with self._failing(f"load conversation {conversation_id!r}"):
            async with self._connection() as connection:
                cursor = await connection.execute(self._sql.load, (conversation_id,))
                payload = json_array(await cursor.fetchone())
            messages = self._messages(payload)
        return await self._restored_async(messages, payload, conversation_id)

    async def version(self, conversation_id: str) -> int:
        """The conversation's version, as for [`PostgresStore.version`][].

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: the server cannot be reached or refused the query.
        """
        validate_conversation_id(conversation_id)
        with self._failing(f"read the version of conversation {conversation_id!r}"):
            async with self._connection() as connection:
                cursor = await connection.execute(self._sql.version, {"cid": conversation_id})
                row = await cursor.fetchone()
        return int(row[0]) if row is not None else 0

    async def append(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        """Add ``messages`` at the end of the conversation, in one transaction.

        Raises:
            threadline.ValidationError: as for [`PostgresStore.append`][].
            threadline.ConflictError: as for [`PostgresStore.append`][].
            threadline.StoreError: as for [`PostgresStore.append`][].
        """
        items, expected = check_write(
            conversation_id, messages, expected_version, f"{self._NAME}.append"
        )
        if not items:
            return
        cid = {"cid": conversation_id}
        with self._failing(f"append to conversation {conversation_id!r}"):
            texts = await self._rows_async(items, conversation_id)
            batch = self._batch(conversation_id, items, texts)
            async with self._connection() as connection:
                try:
                    cursor = await connection.execute(self._sql.append, batch.params(expected))
                except psycopg.errors.UniqueViolation:
                    pass  # an id is stored already: look at what holds it
                else:
                    if cursor.rowcount == 0:  # the version was not the expected one
                        cursor = await connection.execute(self._sql.version, cid)
                        raise self._conflict(await cursor.fetchone(), conversation_id, expected)
                    return
                async with connection.transaction():
                    cursor = await connection.execute(self._sql.lock_version, cid)
                    row = await cursor.fetchone()
                    current = self._check_version(row, conversation_id, expected, "append")
                    await connection.execute(self._sql.lock_for_append, (conversation_id,))
                    cursor = await connection.execute(self._sql.held, batch.lookup())
                    fresh = batch.fresh(await cursor.fetchall(), current)
                    if fresh is not None:
                        await connection.execute(self._sql.append, fresh)

    async def replace(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        """Make ``messages`` the whole conversation in one transaction; ``[]`` deletes it.

        Raises:
            threadline.ValidationError: as for [`PostgresStore.replace`][].
            threadline.ConflictError: as for [`PostgresStore.replace`][].
            threadline.StoreError: as for [`PostgresStore.replace`][].
        """
        items, expected = check_write(
            conversation_id, messages, expected_version, f"{self._NAME}.replace"
        )
        with self._failing(f"replace conversation {conversation_id!r}"):
            texts = await self._rows_async(items, conversation_id)
            steps = self._replace_steps(conversation_id, items, texts)
            async with self._connection() as connection, connection.transaction():
                cursor = await connection.execute(self._sql.lock_version, {"cid": conversation_id})
                self._check_version(await cursor.fetchone(), conversation_id, expected, "replace")
                for query, params in steps:
                    await connection.execute(query, params)

    async def delete(self, conversation_id: str) -> None:
        """Remove the conversation, and step its version (even when it does not exist).

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: the server cannot be reached or refused a statement.
        """
        validate_conversation_id(conversation_id)
        with self._failing(f"delete conversation {conversation_id!r}"):
            async with self._connection() as connection, connection.transaction():
                await connection.execute(self._sql.lock_version, {"cid": conversation_id})
                for query, params in self._delete_steps(conversation_id):
                    await connection.execute(query, params)

    async def fork(self, conversation_id: str, new_id: str, at: int | None = None) -> None:
        """Copy the first ``at`` messages into ``new_id``, as [`PostgresStore.fork`][] does.

        Raises:
            threadline.ValidationError: as for [`PostgresStore.fork`][].
            threadline.StoreError: as for [`PostgresStore.fork`][].
        """
        items, point = await afork_source(
            self.load, conversation_id, new_id, at, "AsyncPostgresStore.fork"
        )
        with self._failing(f"fork conversation {conversation_id!r} into {new_id!r}"):
            texts = await self._rows_async(items, new_id)
            steps = self._fork_steps(conversation_id, new_id, point, items, texts)
            async with self._connection() as connection, connection.transaction():
                await connection.execute(self._sql.lock_version, {"cid": new_id})
                cursor = await connection.execute(self._sql.in_use, (new_id, new_id))
                row = await cursor.fetchone()
                if row is not None and row[0]:
                    raise taken(new_id, "AsyncPostgresStore.fork")
                for query, params in steps:
                    await connection.execute(query, params)

    async def parent(self, conversation_id: str) -> tuple[str, int] | None:
        """``(parent id, at)`` of a branch, as for [`PostgresStore.parent`][].

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: as for [`PostgresStore.parent`][].
        """
        validate_conversation_id(conversation_id)
        with self._failing(f"read the parent of conversation {conversation_id!r}"):
            async with self._connection() as connection:
                cursor = await connection.execute(self._sql.parent, (conversation_id,))
                return self._parent_of(await cursor.fetchone())

    async def create_schema(self) -> None:
        """Create the tables if they do not exist (what happens on first use anyway).

        Raises:
            threadline.StoreError: the server cannot be reached, or the role may not create
                tables.
        """
        with self._failing("create its tables"):
            async with self._pool.connection() as connection:
                await aensure_schema(connection, self._sql)
            self._schema_ready = True

    async def aclose(self) -> None:
        """Close this store's connections; the store cannot be used after."""
        await self._listeners.aclose()
        await self._pool.aclose()

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[AsyncConnection]:
        async with self._pool.connection() as connection:
            if not self._schema_ready:
                if self.auto_create_schema:
                    await aensure_schema(connection, self._sql)
                self._schema_ready = True
            yield connection
