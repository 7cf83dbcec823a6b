"""``SQLiteStore``: the embedded default — one file, no server, safe across threads and processes.

Layout (created on first use; every name starts with ``threadline_`` so the tables can live in
an application's own database)::

    CREATE TABLE threadline_messages (
        conversation_id TEXT NOT NULL,
        seq             INTEGER NOT NULL,   -- 0, 1, 2... in conversation order
        message         TEXT NOT NULL,      -- the message's JSON, as Message.model_dump_json()
        message_id      TEXT,               -- the message's id (NULL only in rows an older
                                            -- threadline wrote after this one opened the file)
        PRIMARY KEY (conversation_id, seq)
    );
    CREATE INDEX threadline_messages_by_id ON threadline_messages (conversation_id, message_id);
    CREATE TABLE threadline_conversations (  -- the index list_conversations() reads
        conversation_id TEXT PRIMARY KEY NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE threadline_versions (       -- version(): one row per conversation written
        conversation_id TEXT PRIMARY KEY NOT NULL,  -- since versions exist, kept after a
        version         INTEGER NOT NULL            -- delete so that a version never goes back
    ) WITHOUT ROWID;
    CREATE TABLE threadline_parents (        -- parent(): one row per branch fork() made,
        conversation_id TEXT PRIMARY KEY NOT NULL,  -- removed with the branch
        parent_id       TEXT NOT NULL,
        at              INTEGER NOT NULL            -- the parent's messages it started with
    ) WITHOUT ROWID;
    CREATE TABLE threadline_writes (         -- load_after(): the conversation's last seq
        conversation_id TEXT NOT NULL,              -- (-1: none) after each of its latest
        version         INTEGER NOT NULL,           -- writes since its last replace, delete
        seq             INTEGER NOT NULL,           -- or fork (at most 1,000 of them)
        PRIMARY KEY (conversation_id, version)
    ) WITHOUT ROWID;
    CREATE TABLE threadline_meta (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
    -- ('schema_version', '1')

Why it holds up:

- **Append is O(1) in the conversation's length.** A batch is one ``BEGIN IMMEDIATE``
  transaction that reads ``MAX(seq)`` through the primary-key index and inserts one row per
  message; nothing already stored is rewritten.
- **A retried write stores nothing twice.** Message ids are unique within a conversation: in
  the same transaction, ``append`` looks the batch's ids up through the ``message_id`` index
  and skips the messages already stored with the same JSON (a batch sent again after its
  reply was lost), or refuses the batch when an id names a different message. A file an
  older threadline wrote gets the column and the index (filled from the stored JSON) when
  this version first opens it.
- **Batches and replaces are atomic.** Each is one transaction; readers run on WAL snapshots,
  so a ``load`` sees every committed batch or replace entirely, or not at all.
- **Writers in other threads and processes wait, they do not fail.** ``BEGIN IMMEDIATE`` takes
  the write lock up front and the busy timeout makes a second writer wait for it, so the
  ``MAX(seq)`` it reads cannot go stale.
- **Versions are checked and bumped in the write's transaction.** ``append`` and ``replace``
  read the conversation's version under the ``BEGIN IMMEDIATE`` lock, so ``expected_version``
  is compared with the version no other writer can change before the commit. A conversation
  written before versions existed (no ``threadline_versions`` row) is at version
  ``MAX(seq) + 1`` (its message count) until its next write, which adds the row.
- **A crash loses at most the batch in flight.** ``synchronous=FULL``: a commit is on disk when
  ``append`` returns; after a crash (even SIGKILL mid-write) SQLite rolls the WAL back to the last
  commit, so ``load`` returns a prefix of what was appended, every message whole.
- **A fork is one transaction.** ``fork`` loads the parent, then, in one ``BEGIN IMMEDIATE``
  transaction, checks that the new id holds no message and no parent row, inserts the copied
  rows, steps the branch's version and adds its ``threadline_parents`` row (a table added on
  first use, so files an older threadline wrote keep working).
- **``load_after`` reads only what changed.** Every write records, in its transaction, the
  conversation's last ``seq`` after it in ``threadline_writes`` (a ``replace``, ``delete`` or
  ``fork`` first drops the conversation's older records). In one read transaction,
  ``load_after(cid, v)`` reads the version, the record of version ``v`` and the rows after that
  ``seq``; with no record of every write since ``v`` (a replace since, a caller more than
  1,000 writes behind, or writes an older threadline made), it returns the whole conversation
  as ``replaced``.
- **Load is one query and one validation.** The rows' JSON texts are joined into one JSON array
  and validated in a single pydantic call, which costs about what ``load_json`` does.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from threadline.errors import StoreError
from threadline.messages import Message
from threadline.stores._appended import Appended
from threadline.stores._closing import Closing
from threadline.stores._listing import ConversationInfo
from threadline.stores._replays import Batch
from threadline.stores._rows import JsonRows
from threadline.stores._sqlite import SQLiteDatabase
from threadline.stores._watch import PollingWatch
from threadline.stores.base import check_list_page
from threadline.stores.base import check_load_after
from threadline.stores.base import check_write
from threadline.stores.base import conflict
from threadline.stores.base import validate_conversation_id
from threadline.stores.base import wrap_driver_errors
from threadline.stores.blobs import DEFAULT_BLOB_THRESHOLD
from threadline.stores.blobs import BlobStore
from threadline.stores.forks import fork_source
from threadline.stores.forks import taken

__all__ = ["SQLiteStore"]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS threadline_messages ("
    " conversation_id TEXT NOT NULL,"
    " seq INTEGER NOT NULL,"
    " message TEXT NOT NULL,"
    " message_id TEXT,"
    " PRIMARY KEY (conversation_id, seq))",
    "CREATE TABLE IF NOT EXISTS threadline_conversations ("
    " conversation_id TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS threadline_versions ("
    " conversation_id TEXT PRIMARY KEY NOT NULL, version INTEGER NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS threadline_parents ("
    " conversation_id TEXT PRIMARY KEY NOT NULL, parent_id TEXT NOT NULL,"
    " at INTEGER NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS threadline_writes ("
    " conversation_id TEXT NOT NULL, version INTEGER NOT NULL, seq INTEGER NOT NULL,"
    " PRIMARY KEY (conversation_id, version)) WITHOUT ROWID",
)
_LOGGED_WRITES = 1000  # the latest writes of a conversation that load_after can tell apart
_LOG_WRITE = (
    "INSERT OR REPLACE INTO threadline_writes (conversation_id, version, seq) VALUES (?, ?, ?)"
)
_PRUNE_WRITES = "DELETE FROM threadline_writes WHERE conversation_id = ? AND version <= ?"
_WRITE_AT = "SELECT seq FROM threadline_writes WHERE conversation_id = ? AND version = ?"
_WRITES_SINCE = (
    "SELECT count(*) FROM threadline_writes"
    " WHERE conversation_id = ? AND version > ? AND version <= ?"
)
_ROWS_FROM = (
    "SELECT CAST(message AS BLOB) FROM threadline_messages"
    " WHERE conversation_id = ? AND seq > ? ORDER BY seq"
)
_MAX_SEQ = 2**63 - 1  # SQLite's largest INTEGER
_INSERT = (
    "INSERT INTO threadline_messages (conversation_id, seq, message, message_id)"
    " VALUES (?, ?, ?, ?)"
)
_HELD = (
    "SELECT message_id, message FROM threadline_messages"
    " WHERE conversation_id = ? AND message_id IN ({})"
)
_VERSION = "SELECT version FROM threadline_versions WHERE conversation_id = ?"
_LAST_SEQ = "SELECT MAX(seq) FROM threadline_messages WHERE conversation_id = ?"
# A page of ids: after '' (below every id) for the first page; LIMIT -1 for no limit.
_PAGE = (
    "SELECT conversation_id FROM threadline_conversations WHERE conversation_id > ?"
    " ORDER BY conversation_id LIMIT ?"
)
_INFO = (
    "SELECT (SELECT version FROM threadline_versions WHERE conversation_id = :cid),"
    " (SELECT count(*) FROM threadline_messages WHERE conversation_id = :cid),"
    " (SELECT MAX(seq) FROM threadline_messages WHERE conversation_id = :cid),"
    " p.parent_id, p.at FROM (SELECT 1) LEFT JOIN threadline_parents AS p"
    " ON p.conversation_id = :cid"
)
_SET_VERSION = (
    "INSERT INTO threadline_versions (conversation_id, version) VALUES (?, ?)"
    " ON CONFLICT (conversation_id) DO UPDATE SET version = excluded.version"
)
_IN_USE = (
    "SELECT EXISTS (SELECT 1 FROM threadline_messages WHERE conversation_id = ?)"
    " OR EXISTS (SELECT 1 FROM threadline_parents WHERE conversation_id = ?)"
)
_LOOKUP_CHUNK = 500  # ids per lookup: far below SQLite's limit on bound parameters


def _add_message_ids(connection: sqlite3.Connection) -> None:
    """Give a table an older threadline created its ``message_id`` column, filled, and index."""
    columns = {row[1] for row in connection.execute("PRAGMA table_info(threadline_messages)")}
    if "message_id" not in columns:
        connection.execute("ALTER TABLE threadline_messages ADD COLUMN message_id TEXT")
        connection.execute(
            "UPDATE threadline_messages SET message_id = json_extract(message, '$.id')"
        )
    connection.execute(
        "CREATE INDEX IF NOT EXISTS threadline_messages_by_id"
        " ON threadline_messages (conversation_id, message_id)"
    )


class SQLiteStore(JsonRows, PollingWatch, Closing):
    """Conversations in an SQLite file (WAL), one row per message; the embedded default.

    Safe to share between threads (each thread gets its own connection) and between processes
    (SQLite's file locks and the busy timeout). Use it as a context manager, or call
    [`close`][], to close the connections.

    Args:
        path: the database file; created with its tables when missing (its directory must
            exist). It may be an application's own database: every table is ``threadline_*``.
        blobs: where to keep file bytes longer than ``blob_threshold`` instead of in the
            message rows (for example ``SQLiteBlobStore(path)``, the same file). ``None``
            keeps all bytes inline.
        blob_threshold: file bytes longer than this go to ``blobs``.
        timeout: seconds a writer waits for another writer (thread or process) before
            failing with [`StoreError`][].

    Raises:
        ValueError: ``path`` is ``":memory:"`` or empty (use
            [`MemoryStore`][threadline.MemoryStore]).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        blobs: BlobStore | None = None,
        blob_threshold: int = DEFAULT_BLOB_THRESHOLD,
        timeout: float = 30.0,
    ) -> None:
        self.path = Path(path)
        self.blobs = blobs
        self.blob_threshold = blob_threshold
        self._db = SQLiteDatabase(
            path,
            schema=_SCHEMA,
            timeout=timeout,
            owner=repr(self),
            migrate=_add_message_ids,
            migrated=("threadline_messages_by_id",),
        )

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r})"

    def _failing(self, doing: str, *errors: type[Exception]) -> AbstractContextManager[None]:
        """Raise SQLite's errors (and ``errors``) as `StoreError`."""
        return wrap_driver_errors(f"{self!r} could not {doing}", sqlite3.Error, *errors)

    def load(self, conversation_id: str) -> list[Message]:
        """The conversation's messages, oldest first; ``[]`` when it holds none.

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: the database cannot be read, a row is not a valid message,
                or a referenced blob is corrupt or unreadable (a missing one loads as a
                placeholder).
        """
        validate_conversation_id(conversation_id)
        with self._failing(f"load conversation {conversation_id!r}", ValueError):
            # CAST to BLOB hands the stored UTF-8 over as bytes, with no str decoding per row.
            rows = (
                self._db.connection()
                .execute(
                    "SELECT CAST(message AS BLOB) FROM threadline_messages"
                    " WHERE conversation_id = ? ORDER BY seq",
                    (conversation_id,),
                )
                .fetchall()
            )
            payload = b"[" + b",".join([row[0] for row in rows]) + b"]" if rows else None
            messages = self._messages(payload)
        return self._restored(messages, payload, conversation_id)

    def version(self, conversation_id: str) -> int:
        """The conversation's version: 0 when never written, one more after each write.

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: the database cannot be read.
        """
        validate_conversation_id(conversation_id)
        with self._failing(f"read the version of conversation {conversation_id!r}"):
            connection = self._db.connection()
            # One read transaction: the two SELECTs see the same snapshot.
            connection.execute("BEGIN")
            try:
                return _version(connection, conversation_id)
            finally:
                connection.execute("COMMIT")

    def load_after(self, conversation_id: str, version: int) -> Appended:
        """What was appended to the conversation after ``version``, in one read transaction.

        Cost follows what changed: the rows after the count recorded for ``version`` (see
        ``threadline_writes`` in this module's layout).

        Args:
            conversation_id: the conversation.
            version: the version the caller holds it at.

        Returns:
            The messages appended since and the version now; or, ``replaced``, all of the
            conversation (replaced or deleted since, ``version`` newer than the store's, or
            more than 1,000 writes ago).

        Raises:
            threadline.ValidationError: the id or ``version`` is invalid.
            threadline.StoreError: the database cannot be read, a row is not a valid message,
                or a referenced blob is corrupt or unreadable.
        """
        after = check_load_after(conversation_id, version, "SQLiteStore.load_after")
        with self._failing(f"load conversation {conversation_id!r} after a version", ValueError):
            connection = self._db.connection()
            connection.execute("BEGIN")  # one snapshot: the version and the rows agree
            try:
                current = _version(connection, conversation_id)
                if after == current:
                    return Appended(current)
                last = _logged_seq(connection, conversation_id, after, current)
                rows = connection.execute(
                    _ROWS_FROM, (conversation_id, -1 if last is None else last)
                ).fetchall()
            finally:
                connection.execute("COMMIT")
            payload = b"[" + b",".join([row[0] for row in rows]) + b"]" if rows else None
            messages = self._messages(payload)
        restored = self._restored(messages, payload, conversation_id)
        return Appended(current, restored, replaced=last is None)

    def append(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        """Add ``messages`` at the end of the conversation, in one transaction.

        A message whose id the conversation already holds with the same JSON is skipped (a
        batch sent again after its reply was lost).

        Args:
            conversation_id: the conversation.
            messages: the batch.
            expected_version: write only if the conversation is at this version (checked
                in the write's transaction).

        Raises:
            threadline.ValidationError: the id is invalid, an item is not a ``Message``, or a
                message reuses the id of a different one (nothing was appended).
            threadline.ConflictError: the conversation is not at ``expected_version``
                (nothing was appended).
            threadline.StoreError: the database cannot be written (nothing was appended).
        """
        items, expected = check_write(
            conversation_id, messages, expected_version, "SQLiteStore.append"
        )
        if not items:
            return
        with self._failing(f"append to conversation {conversation_id!r}"):
            batch = Batch(
                conversation_id, items, self._rows(items, conversation_id), "SQLiteStore.append"
            )
            with self._db.transaction() as connection:
                (last,) = connection.execute(_LAST_SEQ, (conversation_id,)).fetchone()
                row = connection.execute(_VERSION, (conversation_id,)).fetchone()
                current = row[0] if row is not None else _legacy_version(last)
                if expected is not None and current != expected:
                    raise conflict("SQLiteStore.append", conversation_id, expected, current)
                held = _held(connection, conversation_id, batch.ids)
                ids, texts = batch.without_replays(held)
                if not texts:
                    return
                start = _next_seq(last, len(texts), conversation_id, self)
                connection.executemany(
                    _INSERT,
                    [
                        (conversation_id, start + i, text, message_id)
                        for i, (text, message_id) in enumerate(zip(texts, ids, strict=True))
                    ],
                )
                connection.execute(
                    "INSERT OR IGNORE INTO threadline_conversations (conversation_id) VALUES (?)",
                    (conversation_id,),
                )
                connection.execute(_SET_VERSION, (conversation_id, current + 1))
                _log_write(connection, conversation_id, current + 1, start + len(texts) - 1)

    def replace(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        """Make ``messages`` the whole conversation in one transaction; ``[]`` deletes it.

        A message repeating an earlier one's id with the same JSON is skipped.

        Args:
            conversation_id: the conversation.
            messages: the new contents.
            expected_version: write only if the conversation is at this version (checked
                in the write's transaction).

        Raises:
            threadline.ValidationError: the id is invalid, an item is not a ``Message``, or
                two different messages share an id (nothing changed).
            threadline.ConflictError: the conversation is not at ``expected_version``
                (nothing changed).
            threadline.StoreError: the database cannot be written (nothing changed).
        """
        items, expected = check_write(
            conversation_id, messages, expected_version, "SQLiteStore.replace"
        )
        with self._failing(f"replace conversation {conversation_id!r}"):
            batch = Batch(
                conversation_id, items, self._rows(items, conversation_id), "SQLiteStore.replace"
            )
            ids, texts = batch.without_replays({})
            with self._db.transaction() as connection:
                self._delete(
                    connection, conversation_id, expected, "SQLiteStore.replace", len(texts)
                )
                if texts:
                    rows = zip(ids, texts, strict=True)
                    connection.executemany(
                        _INSERT,
                        [(conversation_id, i, text, mid) for i, (mid, text) in enumerate(rows)],
                    )
                    connection.execute(
                        "INSERT INTO threadline_conversations (conversation_id) VALUES (?)",
                        (conversation_id,),
                    )

    def delete(self, conversation_id: str) -> None:
        """Remove the conversation, and step its version (even when it does not exist).

        Blobs its messages referred to stay in the blob store (other conversations may share
        them).

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: the database cannot be written.
        """
        validate_conversation_id(conversation_id)
        with (
            self._failing(f"delete conversation {conversation_id!r}"),
            self._db.transaction() as connection,
        ):
            self._delete(connection, conversation_id)

    def list_conversations(self, limit: int | None = None, after: str | None = None) -> list[str]:
        """The ids of the conversations that hold at least one message, in code point order
        (SQLite's ``BINARY`` collation: byte order, the same for ASCII ids).

        One query on the primary key of ``threadline_conversations``
        (``WHERE conversation_id > ? ORDER BY conversation_id LIMIT ?``): a page costs its
        length and a search of the index, however many conversations the file holds.

        Args:
            limit: at most this many ids (``None``: all of them).
            after: only the ids after this one (the last id of the page before).

        Raises:
            threadline.ValidationError: ``limit`` is not ``None`` or an ``int`` >= 1, or
                ``after`` is not ``None`` or a conversation id.
            threadline.StoreError: the database cannot be read.
        """
        limit, after = check_list_page(limit, after, "SQLiteStore.list_conversations")
        with self._failing("list conversations"):
            rows = (
                self._db.connection()
                .execute(_PAGE, ("" if after is None else after, -1 if limit is None else limit))
                .fetchall()
            )
        return [row[0] for row in rows]

    def conversation_info(self, conversation_id: str) -> ConversationInfo | None:
        """The conversation's version, message count and parent, in one query (one snapshot);
        ``None`` when it holds no message and is no branch.

        The count reads the conversation's rows of the primary-key index. The store keeps no
        times: ``created_at`` and ``updated_at`` are ``None``.

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: the database cannot be read.
        """
        validate_conversation_id(conversation_id)
        with self._failing(f"read the info of conversation {conversation_id!r}"):
            row = self._db.connection().execute(_INFO, {"cid": conversation_id}).fetchone()
        version, held, last, parent_id, at = row
        if not held and parent_id is None:
            return None
        parent = None if parent_id is None else (str(parent_id), int(at))
        version = int(version) if version is not None else _legacy_version(last)
        return ConversationInfo(conversation_id, version, int(held), parent)

    def fork(self, conversation_id: str, new_id: str, at: int | None = None) -> None:
        """Copy the first ``at`` messages (all when ``None``) into the new conversation
        ``new_id`` and record its parent, in one transaction.

        Raises:
            threadline.ValidationError: an id is invalid, the parent holds no message, ``at``
                is past its end, or ``new_id`` is in use (nothing was written).
            threadline.StoreError: the database cannot be read or written (nothing was
                written).
        """
        items, point = fork_source(self.load, conversation_id, new_id, at, "SQLiteStore.fork")
        with self._failing(f"fork conversation {conversation_id!r} into {new_id!r}"):
            texts = self._rows(items, new_id)
            with self._db.transaction() as connection:
                if connection.execute(_IN_USE, (new_id, new_id)).fetchone()[0]:
                    raise taken(new_id, "SQLiteStore.fork")
                current = _version(connection, new_id)
                rows = zip(items, texts, strict=True)
                connection.executemany(
                    _INSERT, [(new_id, i, text, m.id) for i, (m, text) in enumerate(rows)]
                )
                if texts:
                    connection.execute(
                        "INSERT INTO threadline_conversations (conversation_id) VALUES (?)",
                        (new_id,),
                    )
                connection.execute(_SET_VERSION, (new_id, current + 1))
                _log_write(connection, new_id, current + 1, len(texts) - 1, reset=True)
                connection.execute(
                    "INSERT INTO threadline_parents (conversation_id, parent_id, at)"
                    " VALUES (?, ?, ?)",
                    (new_id, conversation_id, point),
                )

    def parent(self, conversation_id: str) -> tuple[str, int] | None:
        """``(parent id, at)`` of a conversation made by [`fork`][]; ``None`` otherwise.

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: the database cannot be read.
        """
        validate_conversation_id(conversation_id)
        with self._failing(f"read the parent of conversation {conversation_id!r}"):
            row = (
                self._db.connection()
                .execute(
                    "SELECT parent_id, at FROM threadline_parents WHERE conversation_id = ?",
                    (conversation_id,),
                )
                .fetchone()
            )
        return None if row is None else (str(row[0]), int(row[1]))

    def close(self) -> None:
        """Close this store's connections (in every thread); the store cannot be used after."""
        self._db.close()

    @staticmethod
    def _delete(
        connection: sqlite3.Connection,
        conversation_id: str,
        expected: int | None = None,
        where: str = "SQLiteStore.delete",
        held: int = 0,
    ) -> None:
        """In a write transaction: check ``expected``, step the version, remove the rows
        (and the parent row, unless a replace writes ``held`` messages: it keeps it)."""
        current = _version(connection, conversation_id)
        if expected is not None and current != expected:
            raise conflict(where, conversation_id, expected, current)
        connection.execute(_SET_VERSION, (conversation_id, current + 1))
        _log_write(connection, conversation_id, current + 1, held - 1, reset=True)
        connection.execute(
            "DELETE FROM threadline_messages WHERE conversation_id = ?", (conversation_id,)
        )
        connection.execute(
            "DELETE FROM threadline_conversations WHERE conversation_id = ?", (conversation_id,)
        )
        if not held:
            connection.execute(
                "DELETE FROM threadline_parents WHERE conversation_id = ?", (conversation_id,)
            )


def _version(connection: sqlite3.Connection, conversation_id: str) -> int:
    """The conversation's version, read in the caller's transaction."""
    row = connection.execute(_VERSION, (conversation_id,)).fetchone()
    if row is not None:
        return int(row[0])
    (last,) = connection.execute(_LAST_SEQ, (conversation_id,)).fetchone()
    return _legacy_version(last)


def _log_write(
    connection: sqlite3.Connection,
    conversation_id: str,
    version: int,
    last: int,
    *,
    reset: bool = False,
) -> None:
    """In a write transaction: record that the conversation's last seq was ``last`` (-1: it
    holds nothing) at ``version``, dropping the records ``load_after`` no longer needs (all
    older ones after a ``reset``: a replace, delete or fork)."""
    oldest = version - 1 if reset else version - _LOGGED_WRITES
    if oldest >= 1:  # records start at version 1: below it there is nothing to drop
        connection.execute(_PRUNE_WRITES, (conversation_id, oldest))
    connection.execute(_LOG_WRITE, (conversation_id, version, last))


def _logged_seq(
    connection: sqlite3.Connection, conversation_id: str, after: int, current: int
) -> int | None:
    """In a read transaction: the conversation's last seq at version ``after`` (-1: none),
    when every write from then to ``current`` was an append that recorded itself; else
    ``None``."""
    if after == 0:
        return -1  # version 0 holds nothing: all the conversation was written since
    if after > current:
        return None
    row = connection.execute(_WRITE_AT, (conversation_id, after)).fetchone()
    if row is None:
        return None
    (logged,) = connection.execute(_WRITES_SINCE, (conversation_id, after, current)).fetchone()
    return int(row[0]) if logged == current - after else None


def _legacy_version(last: object) -> int:
    """The version of a conversation without a version row: 0 when it holds nothing, else
    ``MAX(seq) + 1`` (what its appends of one message each would have counted)."""
    return last + 1 if type(last) is int and last >= 0 else 0


def _next_seq(last: object, count: int, conversation_id: str, store: SQLiteStore) -> int:
    """The seq after ``last`` (the conversation's ``MAX(seq)``), checked so that ``count`` more
    messages fit: a row edited by hand must fail the append clearly, not with a Python error.

    Raises:
        threadline.StoreError: ``last`` is not an integer, or the batch would pass SQLite's
            largest integer.
    """
    if last is None:
        return 0
    if type(last) is not int:
        problem = f"its largest seq is {last!r}, not an integer"
    elif last > _MAX_SEQ - count:
        problem = f"its largest seq is {last}, and {count} more would pass SQLite's largest integer"
    else:
        return last + 1
    raise StoreError(
        f"{store!r} could not append to conversation {conversation_id!r}: {problem}; the "
        "threadline_messages rows were edited outside threadline. Renumber them (seq 0, 1, 2... "
        "in order) or replace() the conversation"
    )


def _held(connection: sqlite3.Connection, conversation_id: str, ids: list[str]) -> dict[str, str]:
    """The stored JSON of the conversation's messages whose id is in ``ids``, by id."""
    held: dict[str, str] = {}
    unique = list(dict.fromkeys(ids))
    for start in range(0, len(unique), _LOOKUP_CHUNK):
        chunk = unique[start : start + _LOOKUP_CHUNK]
        query = _HELD.format(",".join("?" * len(chunk)))
        held.update(connection.execute(query, (conversation_id, *chunk)).fetchall())
    return held
