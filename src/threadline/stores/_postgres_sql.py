"""The SQL of the Postgres stores: the schema (and the migration of older tables), the
statements for one table prefix, the append batch, and what the driver's errors mean.

Only `threadline.stores.postgres` imports this module, after checking that the driver is
installed. Only a prefix that passed its check is formatted into the SQL, so names need no
quoting.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import psycopg.errors
from psycopg.rows import TupleRow

from threadline.errors import StoreError
from threadline.errors import ValidationError
from threadline.stores._postgres_pool import AsyncConnection
from threadline.stores._postgres_pool import Connection
from threadline.stores._replays import Batch

__all__ = [
    "Append",
    "Queries",
    "aensure_schema",
    "driver_errors",
    "ensure_schema",
    "json_array",
    "schema_statements",
]


def schema_statements(prefix: str) -> tuple[str, ...]:
    """The DDL for ``prefix``, one statement each; it also brings an older threadline's tables
    up to date."""
    return (
        f"CREATE TABLE IF NOT EXISTS {prefix}conversations (\n"
        '    conversation_id text COLLATE "C" PRIMARY KEY,\n'
        "    next_seq        bigint NOT NULL\n"
        ")",
        f"CREATE TABLE IF NOT EXISTS {prefix}messages (\n"
        '    conversation_id text COLLATE "C" NOT NULL,\n'
        "    seq             bigint NOT NULL,\n"
        "    message         text NOT NULL,\n"
        "    message_id      text,\n"
        "    PRIMARY KEY (conversation_id, seq)\n"
        ")",
        # Tables an older threadline created lack the column; both statements are no-ops later.
        f"ALTER TABLE {prefix}messages ADD COLUMN IF NOT EXISTS message_id text",
        f"CREATE UNIQUE INDEX IF NOT EXISTS {prefix}messages_by_id\n"
        f"    ON {prefix}messages (conversation_id, message_id)",
        # Added with versions; kept after a delete, so that a version never goes back.
        f"CREATE TABLE IF NOT EXISTS {prefix}versions (\n"
        '    conversation_id text COLLATE "C" PRIMARY KEY,\n'
        "    version         bigint NOT NULL\n"
        ")",
        # Added with fork(): a branch's parent, removed with the branch.
        f"CREATE TABLE IF NOT EXISTS {prefix}parents (\n"
        '    conversation_id text COLLATE "C" PRIMARY KEY,\n'
        '    parent_id       text COLLATE "C" NOT NULL,\n'
        "    at              bigint NOT NULL\n"
        ")",
    )


class Queries:
    """The SQL for one table prefix (one the store has checked, so the names need no quoting)."""

    def __init__(self, prefix: str) -> None:
        conversations, messages = f"{prefix}conversations", f"{prefix}messages"
        versions, parents = f"{prefix}versions", f"{prefix}parents"
        # Every write notifies this channel with the conversation's id, in its transaction (so
        # on commit, and never for a write rolled back): what a watch LISTENs to.
        self.channel = f"{prefix}changes"
        self.notify = f"SELECT pg_notify('{self.channel}', %s)"
        self.tables = (conversations, messages, f"{prefix}messages_by_id", versions, parents)
        self.create = schema_statements(prefix)
        # A conversation without a version row (written before versions existed) is at
        # version next_seq: its message count, as appends of one message each would count.
        current = (
            f"COALESCE((SELECT version FROM {versions} WHERE conversation_id = %(cid)s),"
            f" (SELECT next_seq FROM {conversations} WHERE conversation_id = %(cid)s), 0)"
        )
        self.version = f"SELECT {current}"
        # Every writer locks the version row first, then the conversation's row: one order,
        # so writers never deadlock. The upsert steps the version only when it is the
        # expected one (re-checked on the locked, latest row); when it is not, it returns no
        # row, so nothing after it writes and the statement inserts no message.
        # The upsert on the conversation's row reserves the batch's seq numbers and locks that
        # row until commit; the outer INSERT writes the batch at those numbers, all in one
        # statement.
        self.append = (
            f"WITH bumped AS ("
            f" INSERT INTO {versions} AS v (conversation_id, version)"
            f" SELECT %(cid)s, cur.version + 1 FROM (SELECT {current} AS version) AS cur"
            f" WHERE %(expected)s::bigint IS NULL OR cur.version = %(expected)s::bigint"
            f" ON CONFLICT (conversation_id) DO UPDATE SET version = v.version + 1"
            f" WHERE %(expected)s::bigint IS NULL OR v.version = %(expected)s::bigint"
            f" RETURNING version),"
            f" reserved AS ("
            f" INSERT INTO {conversations} AS c (conversation_id, next_seq)"
            f" SELECT %(cid)s, %(count)s FROM bumped"
            f" ON CONFLICT (conversation_id)"
            f" DO UPDATE SET next_seq = c.next_seq + EXCLUDED.next_seq"
            f" RETURNING next_seq - %(count)s AS first),"
            f" notified AS (SELECT pg_notify('{self.channel}', %(cid)s) FROM reserved)"
            f" INSERT INTO {messages} (conversation_id, seq, message, message_id)"
            f" SELECT %(cid)s, reserved.first + batch.ord - 1, batch.message, batch.message_id"
            f" FROM reserved, notified, unnest(%(messages)s::text[], %(ids)s::text[])"
            f" WITH ORDINALITY AS batch(message, message_id, ord)"
        )
        # For an append that names a stored id: lock the row first (a new statement, so the
        # lookup after it sees every batch committed before the lock was granted).
        self.lock_for_append = (
            f"INSERT INTO {conversations} AS c (conversation_id, next_seq) VALUES (%s, 0)"
            f" ON CONFLICT (conversation_id) DO UPDATE SET next_seq = c.next_seq"
        )
        self.held = (
            f"SELECT message_id, message FROM {messages}"
            f" WHERE conversation_id = %s AND message_id = ANY(%s::text[])"
        )
        # Locks the version row (made when missing) and returns the version.
        self.lock_version = (
            f"INSERT INTO {versions} AS v (conversation_id, version) SELECT %(cid)s, {current}"
            f" ON CONFLICT (conversation_id) DO UPDATE SET version = v.version"
            f" RETURNING version"
        )
        self.bump_version = (
            f"UPDATE {versions} SET version = version + 1 WHERE conversation_id = %(cid)s"
        )
        self.lock_for_replace = (
            f"INSERT INTO {conversations} AS c (conversation_id, next_seq) VALUES (%s, %s)"
            f" ON CONFLICT (conversation_id) DO UPDATE SET next_seq = EXCLUDED.next_seq"
        )
        self.insert_all = (
            f"INSERT INTO {messages} (conversation_id, seq, message, message_id)"
            f" SELECT %s, batch.ord - 1, batch.message, batch.message_id"
            f" FROM unnest(%s::text[], %s::text[])"
            f" WITH ORDINALITY AS batch(message, message_id, ord)"
        )
        self.delete_conversation = f"DELETE FROM {conversations} WHERE conversation_id = %s"
        self.delete_messages = f"DELETE FROM {messages} WHERE conversation_id = %s"
        self.load = (
            f"SELECT string_agg(message, ',' ORDER BY seq) FROM {messages}"
            f" WHERE conversation_id = %s"
        )
        # What a watch reads, in one snapshot: the version, the message count, digests of the
        # first %(n)s messages and of all of them, and the messages from the %(n)s-th on.
        self.since = (
            f"SELECT {current}, count(*),"
            f" md5(string_agg(message, ',' ORDER BY seq) FILTER (WHERE seq < %(n)s)),"
            f" md5(string_agg(message, ',' ORDER BY seq)),"
            f" string_agg(message, ',' ORDER BY seq) FILTER (WHERE seq >= %(n)s)"
            f" FROM {messages} WHERE conversation_id = %(cid)s"
        )
        # A page of ids on the primary key, in "C" (code point) order: after '' (below every
        # id) for the first page; LIMIT NULL is no limit.
        self.page = (
            f"SELECT conversation_id FROM {conversations}"
            f' WHERE conversation_id > %(after)s COLLATE "C"'
            f' ORDER BY conversation_id COLLATE "C" LIMIT %(limit)s'
        )
        # conversation_info: the version, the message count and the parent, in one statement.
        self.info = (
            f"SELECT {current},"
            f" (SELECT count(*) FROM {messages} WHERE conversation_id = %(cid)s),"
            f" p.parent_id, p.at FROM (SELECT 1) AS one"
            f" LEFT JOIN {parents} AS p ON p.conversation_id = %(cid)s"
        )
        self.exists = (
            "SELECT to_regclass(%s) IS NOT NULL AND to_regclass(%s) IS NOT NULL"
            " AND to_regclass(%s) IS NOT NULL AND to_regclass(%s) IS NOT NULL"
            " AND to_regclass(%s) IS NOT NULL"
        )
        self.in_use = (
            f"SELECT EXISTS (SELECT 1 FROM {messages} WHERE conversation_id = %s)"
            f" OR EXISTS (SELECT 1 FROM {parents} WHERE conversation_id = %s)"
        )
        self.add_parent = (
            f"INSERT INTO {parents} (conversation_id, parent_id, at) VALUES (%s, %s, %s)"
        )
        self.parent = f"SELECT parent_id, at FROM {parents} WHERE conversation_id = %s"
        self.delete_parent = f"DELETE FROM {parents} WHERE conversation_id = %s"
        self.schema_lock = "SELECT pg_advisory_xact_lock(hashtext(%s))"
        self.schema_lock_key = f"threadline schema {prefix}"


@contextmanager
def driver_errors(action: str) -> Iterator[None]:
    """psycopg's errors (and invalid stored JSON) as `StoreError`, the original as cause."""
    try:
        yield
    except ValidationError:
        raise  # the caller's messages, not the driver: a ValueError to keep as it is
    except (psycopg.errors.UndefinedTable, psycopg.errors.UndefinedColumn) as error:
        raise StoreError(
            f"{action}: {type(error).__name__}: {error}. The store's tables do not exist: "
            "call create_schema(), apply threadline.stores.postgres.schema_sql(), or leave "
            "auto_create_schema on"
        ) from error
    except (psycopg.Error, ValueError) as error:
        raise StoreError(f"{action}: {type(error).__name__}: {error}") from error


class Append(Batch):
    """An append's rows and ids: the statement's parameters, and on a stored id, the rest."""

    def params(self, expected: int | None) -> dict[str, object]:
        return _append_params(self.conversation_id, self.texts, self.ids, expected)

    def lookup(self) -> tuple[str, list[str]]:
        """The parameters of the query for the stored messages the batch's ids name."""
        return (self.conversation_id, self.ids)

    def fresh(self, held: list[Any], version: int) -> dict[str, object] | None:
        """The append's parameters for the messages that are not replays (``None``: none are).

        Raises:
            threadline.ValidationError: an id names a different message (stored or in the
                batch).
        """
        ids, texts = self.without_replays(dict(held))
        if not ids:
            return None
        return _append_params(self.conversation_id, texts, ids, version)


def _append_params(
    conversation_id: str, texts: list[str], ids: list[str], expected: int | None
) -> dict[str, object]:
    return {
        "cid": conversation_id,
        "count": len(texts),
        "messages": texts,
        "ids": ids,
        "expected": _bigint(expected),
    }


_BIGINT_MAX = 2**63 - 1
_NO_VERSION = -1  # no conversation is at it: versions start at 0


def _bigint(expected: int | None) -> int | None:
    """``expected`` as the statement's bigint: a version past a bigint's range (no
    conversation reaches it) becomes -1, which no conversation is at either, so the append
    finds another version and raises `ConflictError` as for any other, instead of the driver
    failing with "bigint out of range"."""
    if expected is not None and expected > _BIGINT_MAX:
        return _NO_VERSION
    return expected


def json_array(row: TupleRow | None) -> str | None:
    """The JSON array of the messages a ``load`` row joined; ``None`` when it found none."""
    if row is None or row[0] is None:
        return None
    return f"[{row[0]}]"


def ensure_schema(connection: Connection, sql: Queries) -> None:
    """Create the tables ``sql`` names unless they exist, under an advisory lock."""
    exists = connection.execute(sql.exists, sql.tables).fetchone()
    if exists is not None and exists[0]:
        return  # checked first: CREATE ... IF NOT EXISTS needs CREATE rights even when it exists
    with connection.transaction():
        # Concurrent CREATE TABLE IF NOT EXISTS can fail on the catalog's unique index.
        connection.execute(sql.schema_lock, (sql.schema_lock_key,))
        for statement in sql.create:
            connection.execute(statement)


async def aensure_schema(connection: AsyncConnection, sql: Queries) -> None:
    """`ensure_schema` on an async connection."""
    cursor = await connection.execute(sql.exists, sql.tables)
    exists = await cursor.fetchone()
    if exists is not None and exists[0]:
        return
    async with connection.transaction():
        await connection.execute(sql.schema_lock, (sql.schema_lock_key,))
        for statement in sql.create:
            await connection.execute(statement)
