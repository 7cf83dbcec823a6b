"""``JsonlStore``: one append-only JSON Lines file per conversation, greppable and crash-safe.

File format: ``<directory>/<name>.jsonl``, UTF-8, one line per ``append`` call. The name is
the conversation id when it has no upper-case letter (``support-42.jsonl``); otherwise it is the
id in lower case, ``+`` and a mask of its upper-case positions (``Chat`` is ``chat+1.jsonl``), so
no two ids share a file even on a case-insensitive filesystem. Each line is a batch:

- a batch of one message is that message's JSON object (``Message.model_dump_json()``);
- a batch of several is a JSON array of them, on one line;
- ``replace`` writes a fresh file with one message object per line.

So every line is a whole batch. To read every message with ``jq``:
``jq -c 'if type == "array" then .[] else . end' conversation.jsonl``.

Why it holds up (POSIX, on a local filesystem):

- **A batch is atomic.** It is one line written by one ``pwrite`` under an exclusive
  ``flock``, then ``fsync``-ed before ``append`` returns. A crash mid-write can leave only the
  last line torn (cut short, or without its newline), and ``load`` skips a torn last line with a
  [`StoreRecoveryWarning`][] naming the file and the line: the whole batch is
  dropped, never part of it.
- **A torn tail never glues onto new data.** ``append`` checks the last line under the lock and
  truncates a torn one (with a warning) before writing, so a damaged line can only ever be the
  last one. A damaged line anywhere else is corruption: ``load`` raises
  [`StoreError`][] naming the line rather than return a history with a hole.
- **Concurrent writers never interleave.** Writers (threads or processes) hold an exclusive
  ``flock`` on the file while writing; readers hold a shared one, so they never see a line
  being written.
- **A retried write stores nothing twice.** Message ids are unique within a conversation:
  under the lock, ``append`` looks the batch's ids up in an index of the file's ids (built
  from the file once per process, then kept up to date from the lines appended since) and
  skips the messages the file holds unchanged (a batch sent again after its reply was lost),
  or refuses the batch when an id names a different message.
- **``replace`` is atomic.** It writes a temporary file, fsyncs it, renames it over the old one
  (``os.replace``) and fsyncs the directory; a reader opens either the old file or the new one.
  Every locker re-checks after locking that the path still names the file it locked, so a
  writer that waited on the old file retries on the new one instead of appending to a deleted
  file.
- **A fork leaves no branch or the whole branch**, at whatever instant it is killed. Under the
  new file's exclusive lock, after checking that it holds nothing and is no branch, it writes
  the whole branch to a temporary file, then the ``<name>.parent`` side file (the parent
  record) naming that file (by inode), then renames the file into place: the record counts
  only while its file is the conversation's, so before the rename there is no branch and after
  it there is all of it. The record is then rewritten without the inode. A crashed fork's
  leftovers never block a later fork of the id.
- **Versions cost an append nothing.** A conversation's version is counted from its file's
  lines (one per batch) and, after a ``replace`` or ``delete``, a small ``<name>.version`` side
  file written with them. ``expected_version`` is compared under the exclusive lock, before the
  line is written. A file written before versions existed is at version "its line count" (its
  batches).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import AbstractContextManager
from contextlib import contextmanager
from datetime import datetime
from datetime import timezone
from pathlib import Path

import pydantic_core

from threadline.errors import StoreError
from threadline.messages import Message
from threadline.serialization import messages_from_json
from threadline.serialization import messages_to_json
from threadline.stores._files import conversation_id_from_stem
from threadline.stores._files import conversation_stem
from threadline.stores._files import fsync_directory
from threadline.stores._files import temporary_path
from threadline.stores._jsonl_after import LoadAfter
from threadline.stores._jsonl_lines import decode_file
from threadline.stores._jsonl_lines import drop_torn_tail
from threadline.stores._jsonl_lines import read_batch_lines
from threadline.stores._jsonl_versions import ParentFile
from threadline.stores._jsonl_versions import VersionFile
from threadline.stores._jsonl_writes import write_all
from threadline.stores._jsonl_writes import write_branch
from threadline.stores._jsonl_writes import write_new_file
from threadline.stores._listing import ConversationInfo
from threadline.stores._listing import page_of
from threadline.stores._rows import JsonRows
from threadline.stores._watch import PollingWatch
from threadline.stores.base import check_list_page
from threadline.stores.base import check_write
from threadline.stores.base import conflict
from threadline.stores.base import replayed
from threadline.stores.base import validate_conversation_id
from threadline.stores.base import wrap_driver_errors
from threadline.stores.blobs import DEFAULT_BLOB_THRESHOLD
from threadline.stores.blobs import BlobStore
from threadline.stores.blobs import offload_files
from threadline.stores.forks import decode_parent
from threadline.stores.forks import encode_parent
from threadline.stores.forks import fork_source
from threadline.stores.forks import taken

if sys.platform != "win32":
    import fcntl

__all__ = ["JsonlStore", "read_batch_lines"]

_SUFFIX = ".jsonl"
_CHUNK = 64 * 1024
_INDEXED_FILES = 256  # files whose id index a store keeps (least recently appended dropped)
_TAIL = 64  # bytes before an index's end that must still match for the index to be reused


class JsonlStore(JsonRows, LoadAfter, PollingWatch):
    """Conversations as JSON Lines files in a directory, one file per conversation.

    Needs POSIX file locks (Linux, macOS) on a local filesystem. Ids that differ only in case
    get files whose names differ in more than case, so they stay apart on a case-insensitive
    filesystem (macOS by default) too.

    Args:
        directory: where the files live; created when missing.
        blobs: where to keep file bytes longer than ``blob_threshold`` instead of in the lines
            (for example ``FileBlobStore(directory / "blobs")``). ``None`` keeps them inline.
        blob_threshold: file bytes longer than this go to ``blobs``.

    Raises:
        threadline.StoreError: the directory cannot be created, or the platform has no
            ``flock`` (Windows).
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        blobs: BlobStore | None = None,
        blob_threshold: int = DEFAULT_BLOB_THRESHOLD,
    ) -> None:
        self.directory = Path(directory)
        self.blobs = blobs
        self.blob_threshold = blob_threshold
        if sys.platform == "win32":
            raise StoreError("JsonlStore needs POSIX flock; on Windows use SQLiteStore")
        with self._failing("create its directory"):
            self.directory.mkdir(parents=True, exist_ok=True)
        self._ids = _IdIndexes()

    def __repr__(self) -> str:
        return f"JsonlStore({str(self.directory)!r})"

    def _failing(self, doing: str, *errors: type[Exception]) -> AbstractContextManager[None]:
        """Raise the file system's errors (and ``errors``) as `StoreError`."""
        return wrap_driver_errors(f"{self!r} could not {doing}", OSError, *errors)

    def load(self, conversation_id: str) -> list[Message]:
        """The conversation's messages, oldest first; ``[]`` when it holds none.

        A torn last line (left by a writer that crashed) is skipped with a
        [`StoreRecoveryWarning`][]; the next ``append`` removes it.

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: the file cannot be read, a line other than the last is
                damaged, a line holds an invalid message, or a
                referenced blob is corrupt or unreadable (a missing one loads as a placeholder).
        """
        validate_conversation_id(conversation_id)
        path = self._path(conversation_id)
        with self._failing(f"load conversation {conversation_id!r}"):
            with self._locked(path, exclusive=False) as fd:
                if fd is None:
                    return []
                data = _read_all(fd)
            messages = decode_file(data, path)
        return self._restored(messages, data, conversation_id)

    def version(self, conversation_id: str) -> int:
        """The conversation's version: 0 when never written, one more after each write.

        It counts the file's lines under the exclusive lock, so, as ``append`` does, it first
        removes a torn last line (with a [`StoreRecoveryWarning`][]).

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: the file cannot be read, or is damaged.
        """
        validate_conversation_id(conversation_id)
        path = self._path(conversation_id)
        with self._failing(f"read the version of conversation {conversation_id!r}"):
            with self._locked(path, exclusive=True) as fd:
                if fd is not None:
                    return self._version(path, fd, drop_torn_tail(fd, path))
            # No file: nothing to lock, and a writer that makes one only adds to the version.
            return VersionFile(path).version(0, None)

    def append(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        """Add ``messages`` at the end of the conversation as one line, fsynced.

        A message whose id the file already holds, unchanged, is skipped (a batch sent again
        after its reply was lost).

        Args:
            conversation_id: the conversation.
            messages: the batch.
            expected_version: write only if the conversation is at this version (compared
                under the file's exclusive lock).

        Raises:
            threadline.ValidationError: the id is invalid, an item is not a ``Message``, or a
                message reuses the id of a different one (nothing was appended).
            threadline.ConflictError: the conversation is not at ``expected_version``
                (nothing was appended).
            threadline.StoreError: the file cannot be written (nothing was appended).
        """
        items, expected = check_write(
            conversation_id, messages, expected_version, "JsonlStore.append"
        )
        if not items:
            return
        path = self._path(conversation_id)
        with self._failing(f"append to conversation {conversation_id!r}"):
            items = self._offloaded(items, conversation_id)
            with self._locked(path, exclusive=True, create=True) as fd:
                assert fd is not None  # create=True
                size = drop_torn_tail(fd, path)
                index = self._ids.current(path, fd, size)
                if expected is not None:
                    current = VersionFile(path).version(index.count, os.fstat(fd).st_ino)
                    if current != expected:
                        raise conflict("JsonlStore.append", conversation_id, expected, current)
                items = _without_replays(conversation_id, items, index, fd)
                if not items:
                    return
                line = _batch_line(items)
                try:
                    write_all(fd, line, size)
                    os.fsync(fd)
                except BaseException:
                    _truncate_quietly(fd, size)
                    raise
                index.add(items, size, size + len(line), line)
                if size == 0:  # a new file: make its directory entry durable too
                    fsync_directory(self.directory)

    def replace(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        """Make ``messages`` the whole conversation, atomically; ``[]`` deletes it.

        The new history is written to a temporary file, fsynced and renamed over the old one.
        A message repeating an earlier one's id, unchanged, is skipped.

        Args:
            conversation_id: the conversation.
            messages: the new contents.
            expected_version: write only if the conversation is at this version (compared
                under the file's exclusive lock).

        Raises:
            threadline.ValidationError: the id is invalid, an item is not a ``Message``, or
                two different messages share an id (nothing changed).
            threadline.ConflictError: the conversation is not at ``expected_version``
                (nothing changed).
            threadline.StoreError: the file cannot be written (nothing changed).
        """
        items, expected = check_write(
            conversation_id, messages, expected_version, "JsonlStore.replace"
        )
        ids = [message.id for message in items]
        if len(set(ids)) != len(ids):
            texts = [message.model_dump_json() for message in items]
            skip = replayed(conversation_id, ids, texts, {}, "JsonlStore.replace")
            items = [m for m, skipped in zip(items, skip, strict=True) if not skipped]
        if not items:
            self._delete(conversation_id, expected, "JsonlStore.replace")
            return
        path = self._path(conversation_id)
        with self._failing(f"replace conversation {conversation_id!r}"):
            data = b"".join(line + b"\n" for line in self._message_lines(items, conversation_id))
            temporary = temporary_path(path)
            with self._locked(path, exclusive=True, create=True) as held:
                assert held is not None  # create=True
                current = self._version(path, held, drop_torn_tail(held, path))
                if expected is not None and current != expected:
                    raise conflict("JsonlStore.replace", conversation_id, expected, current)
                ParentFile(path).settle(os.fstat(held).st_ino)  # before the file changes
                try:
                    inode = write_new_file(temporary, data)
                    VersionFile(path).write(current + 1, len(items), inode)
                    os.replace(temporary, path)
                    self._ids.forget(path)
                except BaseException:
                    temporary.unlink(missing_ok=True)
                    raise
                fsync_directory(self.directory)

    def delete(self, conversation_id: str) -> None:
        """Remove the conversation's file, and step its version (even when it does not exist).

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: the file cannot be removed.
        """
        validate_conversation_id(conversation_id)
        self._delete(conversation_id, None, "JsonlStore.delete")

    def list_conversations(self, limit: int | None = None, after: str | None = None) -> list[str]:
        """The ids of the conversations whose file holds something, in code point order.

        Every call lists and sorts the whole directory (one ``scandir`` and a ``stat`` per
        file): a page costs as much as the whole list, O(n log n) for n files. For a million
        conversations, use a database store.

        Args:
            limit: at most this many ids (``None``: all of them).
            after: only the ids after this one (the last id of the page before).

        Raises:
            threadline.ValidationError: ``limit`` is not ``None`` or an ``int`` >= 1, or
                ``after`` is not ``None`` or a conversation id.
            threadline.StoreError: the directory cannot be read.
        """
        limit, after = check_list_page(limit, after, "JsonlStore.list_conversations")
        ids = []
        with self._failing("list conversations"):
            for entry in os.scandir(self.directory):
                name = entry.name
                if not name.endswith(_SUFFIX) or name.startswith("."):
                    continue
                conversation_id = conversation_id_from_stem(name[: -len(_SUFFIX)])
                if conversation_id is None:
                    continue  # a name this store never writes: not ours
                if after is not None and conversation_id <= after:
                    continue
                try:
                    validate_conversation_id(conversation_id)
                    if entry.is_file() and entry.stat().st_size > 0:
                        ids.append(conversation_id)
                except (ValueError, FileNotFoundError):
                    continue  # not ours, or deleted while listing
        return page_of(sorted(ids), limit, None)

    def conversation_info(self, conversation_id: str) -> ConversationInfo | None:
        """The conversation's version, message count, parent and last write time, read under
        the file's exclusive lock (as ``version`` reads it, removing a torn last line first);
        ``None`` when it holds no message and is no branch.

        The count comes from the store's index of the file's message ids: the first call in
        a process reads the whole file, later ones only the lines appended since.
        ``updated_at`` is the file's modification time; the store keeps no creation time
        (``created_at`` is ``None``).

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: the file or its side files cannot be read, or are damaged.
        """
        validate_conversation_id(conversation_id)
        path = self._path(conversation_id)
        held, inode, updated = 0, None, None
        with (
            self._failing(f"read the info of conversation {conversation_id!r}", ValueError),
            self._locked(path, exclusive=True) as fd,
        ):
            if fd is None:
                version = VersionFile(path).version(0, None)
            else:
                index = self._ids.current(path, fd, drop_torn_tail(fd, path))
                stat = os.fstat(fd)
                inode, held = stat.st_ino, len(index.lines)
                version = VersionFile(path).version(index.count, inode)
                if held:
                    updated = datetime.fromtimestamp(stat.st_mtime, timezone.utc)
            parent = decode_parent(ParentFile(path).read(inode))
        if not held and parent is None:
            return None
        return ConversationInfo(conversation_id, version, held, parent, None, updated)

    def fork(self, conversation_id: str, new_id: str, at: int | None = None) -> None:
        """Copy the first ``at`` messages (all when ``None``) into the new conversation
        ``new_id`` and record its parent (a ``<name>.parent`` side file).

        Raises:
            threadline.ValidationError: an id is invalid, the parent holds no message, ``at``
                is past its end, or ``new_id`` is in use (nothing was written).
            threadline.StoreError: a file cannot be read or written (nothing was written).
        """
        items, point = fork_source(self.load, conversation_id, new_id, at, "JsonlStore.fork")
        path = self._path(new_id)
        with self._failing(f"fork conversation {conversation_id!r} into {new_id!r}"):
            data = b"".join(line + b"\n" for line in self._message_lines(items, new_id))
            record = encode_parent(conversation_id, point)
            parent = ParentFile(path)
            with self._locked(path, exclusive=True, create=True) as held:
                assert held is not None  # create=True
                inode = os.fstat(held).st_ino
                if drop_torn_tail(held, path) or parent.read(inode) is not None:
                    raise taken(new_id, "JsonlStore.fork")
                current = self._version(path, held, 0)
                if not items:  # a branch of no message yet: no file, as after a delete
                    VersionFile(path).write(current + 1, 0, 0)
                    parent.write(record)  # the branch exists from here on
                    path.unlink()
                else:
                    write_branch(path, data, record, current + 1, len(items))
                self._ids.forget(path)
                fsync_directory(self.directory)

    def parent(self, conversation_id: str) -> tuple[str, int] | None:
        """``(parent id, at)`` of a conversation made by [`fork`][]; ``None`` otherwise.

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: the side file cannot be read or is not a parent record.
        """
        validate_conversation_id(conversation_id)
        path = self._path(conversation_id)
        with self._failing(f"read the parent of conversation {conversation_id!r}", ValueError):
            with self._locked(path, exclusive=False) as fd:
                inode = None if fd is None else os.fstat(fd).st_ino
                text = ParentFile(path).read(inode)
            return decode_parent(text)

    def path(self, conversation_id: str) -> Path:
        """The file that holds the conversation (it exists once something was appended).

        ``<directory>/<id>.jsonl`` for an id without upper-case letters; otherwise the id in
        lower case, ``+`` and the base-36 mask of its upper-case positions (``Chat`` is
        ``chat+1.jsonl``), so that ids differing only in case never share a file, even on a
        case-insensitive filesystem.

        Raises:
            threadline.ValidationError: the id is invalid.
        """
        return self._path(validate_conversation_id(conversation_id))

    def _delete(self, conversation_id: str, expected: int | None, where: str) -> None:
        """Remove the file (after recording the next version), checking ``expected``."""
        path = self._path(conversation_id)
        # Lock (making an empty file when there is none): the version steps even then.
        with (
            self._failing(f"delete conversation {conversation_id!r}"),
            self._locked(path, True, True) as fd,
        ):
            assert fd is not None  # create=True
            current = self._version(path, fd, drop_torn_tail(fd, path))
            if expected is not None and current != expected:
                raise conflict(where, conversation_id, expected, current)
            VersionFile(path).write(current + 1, 0, 0)
            ParentFile(path).remove()
            path.unlink()
            self._ids.forget(path)
            fsync_directory(self.directory)

    def _version(self, path: Path, fd: int, size: int) -> int:
        """The version of the file ``fd`` (locked exclusively, ``size`` bytes of whole lines)."""
        index = self._ids.current(path, fd, size)
        return VersionFile(path).version(index.count, os.fstat(fd).st_ino)

    def _path(self, conversation_id: str) -> Path:
        return self.directory / (conversation_stem(conversation_id) + _SUFFIX)

    def _message_lines(self, messages: list[Message], conversation_id: str) -> list[bytes]:
        return [row.encode() for row in self._rows(messages, conversation_id)]

    def _offloaded(self, messages: list[Message], conversation_id: str) -> list[Message]:
        """``messages`` as written: with large file bytes moved to the blob store."""
        if self.blobs is None:
            return messages
        return offload_files(messages, self.blobs, self.blob_threshold, conversation_id)

    @contextmanager
    def _locked(self, path: Path, exclusive: bool, create: bool = False) -> Iterator[int | None]:
        """The file at ``path``, open and ``flock``-ed; ``None`` when it does not exist.

        After locking, the path must still name the locked file: ``replace`` and ``delete``
        swap or remove it while holding the lock, and whoever waited on the old file must not
        write to it (the write would be lost) or read it (it would be stale).
        """
        flags = (os.O_RDWR if exclusive else os.O_RDONLY) | (os.O_CREAT if create else 0)
        fd = _open_locked(path, flags, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            yield fd
        finally:
            if fd is not None:
                os.close(fd)  # also releases the lock


def _batch_line(messages: list[Message]) -> bytes:
    array = messages_to_json(messages)
    # pydantic writes compact JSON, so a one-message array is exactly "[" + object + "]".
    return (array[1:-1] if len(messages) == 1 else array) + b"\n"


def _without_replays(
    conversation_id: str, items: list[Message], index: _IdIndex, fd: int
) -> list[Message]:
    """``items`` without the messages the file (or the batch, earlier) holds unchanged.

    Raises:
        threadline.ValidationError: an id names a different message.
    """
    ids = [message.id for message in items]
    known = [i for i in dict.fromkeys(ids) if i in index.lines]
    if not known and len(set(ids)) == len(ids):
        return items  # the usual case: every id is new
    # Compared as JSON, as written: ``replay`` is runtime-only and never part of it.
    held = {i: _stored_message(fd, index.lines[i], i).model_dump_json() for i in known}
    texts = [message.model_dump_json() for message in items]
    skip = replayed(conversation_id, ids, texts, held, "JsonlStore.append")
    return [m for m, skipped in zip(items, skip, strict=True) if not skipped]


def _stored_message(fd: int, offset: int, message_id: str) -> Message:
    """The message with ``message_id`` on the line that starts at ``offset``."""
    batch = _batch_messages(_read_line(fd, offset))
    return next(message for message in batch if message.id == message_id)


def _batch_messages(line: bytes) -> list[Message]:
    """The messages of a batch line: one message's object, or an array of them."""
    return messages_from_json(line if line[:1] == b"[" else b"[" + line + b"]")


def _read_line(fd: int, offset: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = os.pread(fd, _CHUNK, offset)
        end = chunk.find(b"\n")
        if end >= 0 or not chunk:
            chunks.append(chunk if end < 0 else chunk[:end])
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


class _IdIndex:
    """The message ids one file holds, each with the offset of its line, up to ``size``.

    ``tail`` (the bytes just before ``size``) tells a stale index from a current one when the
    file was deleted and made again with the same inode number.
    """

    __slots__ = ("count", "device", "inode", "lines", "size", "tail")

    def __init__(self, device: int, inode: int) -> None:
        self.device = device
        self.inode = inode
        self.count = 0  # the lines (batches) up to size: the version's share of the file
        self.lines: dict[str, int] = {}
        self.size = 0
        self.tail = b""

    def matches(self, fd: int, stat: os.stat_result, size: int) -> bool:
        if (self.device, self.inode) != (stat.st_dev, stat.st_ino) or self.size > size:
            return False
        return os.pread(fd, len(self.tail), self.size - len(self.tail)) == self.tail

    def read(self, fd: int, size: int, path: Path) -> None:
        """Index the lines from ``self.size`` to ``size`` (whole lines: the lock is held).

        Raises:
            threadline.StoreError: a line is not JSON (the file is damaged).
        """
        offset = self.size
        data = os.pread(fd, size - offset, offset) if size > offset else b""
        for line in data.split(b"\n"):
            if line:
                self.count += 1
                try:
                    value = pydantic_core.from_json(line)
                except ValueError as error:
                    raise StoreError(
                        f"{path}: the line at byte {offset} is not JSON ({error}), and it is "
                        "not a torn last line but a damaged file; restore it from a backup or "
                        "remove the line"
                    ) from error
                for item in value if isinstance(value, list) else [value]:
                    if isinstance(item, dict) and isinstance(item.get("id"), str):
                        self.lines.setdefault(item["id"], offset)
            offset += len(line) + 1
        self._end(fd, size, data[-_TAIL:] if len(data) >= _TAIL else None)

    def add(self, items: list[Message], offset: int, size: int, line: bytes) -> None:
        """Note a batch just written at ``offset`` as ``line``."""
        self.count += 1
        for message in items:
            self.lines.setdefault(message.id, offset)
        self.size = size
        self.tail = (self.tail + line)[-_TAIL:]

    def _end(self, fd: int, size: int, tail: bytes | None) -> None:
        self.size = size
        if tail is None:
            start = max(0, size - _TAIL)
            tail = os.pread(fd, size - start, start)
        self.tail = tail


class _IdIndexes:
    """A store's id index of each file it appended to recently (an LRU of them)."""

    def __init__(self) -> None:
        self._indexes: OrderedDict[Path, _IdIndex] = OrderedDict()
        self._lock = threading.Lock()

    def current(self, path: Path, fd: int, size: int) -> _IdIndex:
        """The index of the file ``fd`` (locked exclusively) up to ``size``, brought up to date."""
        stat = os.fstat(fd)
        with self._lock:
            index = self._indexes.pop(path, None)
        if index is None or not index.matches(fd, stat, size):
            index = _IdIndex(stat.st_dev, stat.st_ino)
        if index.size < size:
            index.read(fd, size, path)
        with self._lock:
            self._indexes[path] = index
            while len(self._indexes) > _INDEXED_FILES:
                self._indexes.popitem(last=False)
        return index

    def forget(self, path: Path) -> None:
        """Drop the index of a file that was replaced or deleted."""
        with self._lock:
            self._indexes.pop(path, None)


def _open_locked(path: Path, flags: int, operation: int) -> int | None:
    while True:
        try:
            fd = os.open(path, flags, 0o644)
        except FileNotFoundError:
            if flags & os.O_CREAT:
                raise  # the directory is gone
            return None
        try:
            fcntl.flock(fd, operation)
            if _names_file(path, fd):
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # replaced or deleted while we waited: lock the file the path names now


def _names_file(path: Path, fd: int) -> bool:
    try:
        current = os.stat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(fd)
    return (current.st_dev, current.st_ino) == (opened.st_dev, opened.st_ino)


def _read_all(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    chunks: list[bytes] = []
    offset = 0
    while True:
        chunk = os.pread(fd, max(size - offset, _CHUNK), offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


def _truncate_quietly(fd: int, size: int) -> None:
    # The write's own error is the one to report; if this fails, the next append drops the tail.
    with contextlib.suppress(OSError):
        os.ftruncate(fd, size)
