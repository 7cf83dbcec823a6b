"""Content-addressed blob stores that keep large file bytes out of the message JSON.

A store given ``blobs=`` and ``blob_threshold=`` writes each [`FilePart`][] whose
``data`` is longer than the threshold (at the top of a message or inside a tool result's content)
to the blob store first, and stores a reference part in its place::

    FilePart(data=<bytes>, media_type="image/png", filename="cat.png", metadata={...})
    # is stored as
    FilePart(url="threadline-blob:sha256:<64 hex digits>", media_type="image/png",
             filename="cat.png", metadata={..., "threadline.blob": "sha256:<64 hex digits>"})

``load`` turns each reference back into the exact original part (equal to what was appended).
A reference needs both marks — the ``threadline-blob:`` URL and the ``threadline.blob``
metadata key — so an application's own URL is never mistaken for one.

**References are scoped to their conversation.** The blob a store writes holds a header naming
the conversation, then the file's bytes, and its key is the SHA-256 of both; ``load`` gives
back only bytes whose header names the conversation being loaded. So a reference copied or
forged into another conversation names nothing that conversation may read, and the key of a
file in one conversation cannot be computed from the file alone. The reserved key is also
refused on input: a store with blobs refuses messages that carry it (``ValidationError``), as do
``load_json`` and the ``History`` methods given mappings, and ``sanitize_untrusted`` drops it.

**A reference that cannot be resolved does not make the conversation unloadable.** A missing
blob, one stored for another conversation, or a key that is not a blob key is replaced by a
placeholder [`TextPart`][] (``"[file unavailable: image/png 'cat.png']"``,
metadata ``"threadline.missing_blob"``: the key, media type and filename) and reported with a
[`StoreRecoveryWarning`][] naming the conversation, the message and the key.
A blob whose bytes do not match its key (corruption) or a blob store that fails still raises
[`StoreError`][].

Blobs are written (and fsynced) before the messages that refer to them, so a stored message
never points at a missing blob; a crash in between leaves only an unreferenced blob. The same
file sent twice in one conversation is stored once; blobs are never deleted by a store.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import sqlite3
import tempfile
import warnings
from collections.abc import Iterable
from collections.abc import Sequence
from pathlib import Path
from typing import Final
from typing import Protocol
from typing import TypeAlias
from typing import runtime_checkable

from threadline._blob_marks import BLOB_METADATA_KEY
from threadline._blob_marks import BLOB_URL_PREFIX
from threadline._blob_marks import refuse_blob_marks
from threadline._json import freeze_json_map
from threadline.errors import StoreError
from threadline.errors import StoreRecoveryWarning
from threadline.messages import FilePart
from threadline.messages import Message
from threadline.messages import Part
from threadline.messages import TextPart
from threadline.messages import ToolResultPart
from threadline.stores._closing import Closing
from threadline.stores._files import fsync_directory
from threadline.stores._sqlite import SQLiteDatabase
from threadline.stores.base import wrap_driver_errors

__all__ = [
    "BLOB_METADATA_KEY",
    "BLOB_URL_PREFIX",
    "DEFAULT_BLOB_THRESHOLD",
    "MISSING_BLOB_KEY",
    "BlobStore",
    "FileBlobStore",
    "SQLiteBlobStore",
    "blob_key",
    "may_hold_references",
    "offload_files",
    "restore_files",
    "scoped_blob_key",
]

MISSING_BLOB_KEY: Final = "threadline.missing_blob"
"""The metadata key of the placeholder part ``load`` puts where a blob cannot be read; its value
is ``{"key": ..., "media_type": ..., "filename": ...}`` of the file that was there."""
DEFAULT_BLOB_THRESHOLD = 64 * 1024
"""File bytes longer than this (in bytes) go to the blob store when a store has one."""

_Content: TypeAlias = "TextPart | FilePart"

_KEY = re.compile(r"sha256:[0-9a-f]{64}")
_REFERENCE_MARK = b'"url":"' + BLOB_URL_PREFIX.encode() + b"sha256:"


@runtime_checkable
class BlobStore(Protocol):
    """Bytes stored under the key ``sha256:<hex digest of the bytes>``.

    ``put`` must make the bytes durable before it returns: a message referring to the key is
    written right after.
    """

    def put(self, data: bytes) -> str:
        """Store ``data`` (once, however often it is put) and return its key."""
        ...

    def get(self, key: str) -> bytes:
        """The bytes stored under ``key``; raise ``KeyError`` when there are none."""
        ...


def blob_key(data: bytes) -> str:
    """The content address of ``data``: ``"sha256:"`` and its hex SHA-256 digest."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def scoped_blob_key(conversation_id: str, data: bytes) -> str:
    """The key under which a store keeps ``data`` for ``conversation_id``.

    It is the content address of the blob the store writes: a header naming the conversation,
    then ``data``. So the same file has a different key in every conversation, and a reference
    resolves only in the conversation it was written for.
    """
    digest = hashlib.sha256(_scope_header(conversation_id))
    digest.update(data)
    return "sha256:" + digest.hexdigest()


def _scope_header(conversation_id: str) -> bytes:
    # Length-prefixed, so no conversation's header is a prefix of another's.
    name = conversation_id.encode("utf-8", "surrogatepass")
    return b"threadline-blob\x00%d:%b\x00" % (len(name), name)


def _check_key(key: str, owner: object) -> str:
    if not isinstance(key, str) or _KEY.fullmatch(key) is None:
        raise StoreError(
            f"{owner}: {key!r} is not a blob key; keys are 'sha256:' and 64 lowercase hex digits"
        )
    return key


def _verified(data: bytes, key: str, owner: object) -> bytes:
    if blob_key(data) != key:
        raise StoreError(f"{owner}: blob {key} is corrupt: its bytes do not hash to its key")
    return data


class FileBlobStore:
    """Blobs as files: ``<directory>/<first 2 hex digits>/<64 hex digits>``.

    Each blob is written to a temporary file, fsynced, renamed into place and its directory
    fsynced, so a blob is either whole or absent. ``get`` checks the bytes against the key.

    Args:
        directory: where blobs live; created when missing.

    Raises:
        threadline.StoreError: the directory cannot be created.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        with wrap_driver_errors(f"{self!r} could not create its directory", OSError):
            self.directory.mkdir(parents=True, exist_ok=True)

    def __repr__(self) -> str:
        return f"FileBlobStore({str(self.directory)!r})"

    def put(self, data: bytes) -> str:
        """Store ``data`` and return its key (``sha256:<hex>``); storing it again is free.

        Raises:
            threadline.StoreError: the file cannot be written.
        """
        key = blob_key(data)
        path = self._path(key)
        if path.exists():
            return key
        with wrap_driver_errors(f"{self!r} could not write blob {key}", OSError):
            folder = path.parent
            new_folder = not folder.exists()
            folder.mkdir(exist_ok=True)
            fd, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as file:
                    file.write(data)
                    file.flush()
                    os.fsync(file.fileno())
                os.replace(temporary, path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
            fsync_directory(folder)
            if new_folder:
                fsync_directory(self.directory)
        return key

    def get(self, key: str) -> bytes:
        """The bytes stored under ``key``.

        Raises:
            KeyError: no blob has that key.
            threadline.StoreError: ``key`` is not a blob key, the file cannot be read, or its
                bytes do not match the key.
        """
        path = self._path(_check_key(key, self))
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise KeyError(key) from None
        except OSError as error:
            raise StoreError(f"{self!r} could not read blob {key}: {error}") from error
        return _verified(data, key, self)

    def _path(self, key: str) -> Path:
        digest = key.removeprefix("sha256:")
        return self.directory / digest[:2] / digest


class SQLiteBlobStore(Closing):
    """Blobs in the table ``threadline_blobs(key TEXT PRIMARY KEY, data BLOB)`` of an SQLite file.

    It may share the file of an [`SQLiteStore`][threadline.SQLiteStore]
    (``SQLiteStore("app.db", blobs=SQLiteBlobStore("app.db"))``), so one file holds everything.
    A blob is committed in its own transaction before the messages referring to it.

    Args:
        path: the database file (created when missing).
        timeout: seconds to wait for another writer's lock.
    """

    _SCHEMA = (
        "CREATE TABLE IF NOT EXISTS threadline_blobs ("
        " key TEXT PRIMARY KEY NOT NULL, data BLOB NOT NULL)",
    )

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 30.0) -> None:
        self.path = Path(path)
        self._db = SQLiteDatabase(path, schema=self._SCHEMA, timeout=timeout, owner=repr(self))

    def __repr__(self) -> str:
        return f"SQLiteBlobStore({str(self.path)!r})"

    def put(self, data: bytes) -> str:
        """Store ``data`` and return its key (``sha256:<hex>``); storing it again is free.

        Raises:
            threadline.StoreError: the database cannot be written.
        """
        key = blob_key(data)
        with wrap_driver_errors(f"{self!r} could not write blob {key}", sqlite3.Error):
            connection = self._db.connection()
            found = connection.execute("SELECT 1 FROM threadline_blobs WHERE key = ?", (key,))
            if found.fetchone() is not None:
                return key
            with self._db.transaction() as connection:
                connection.execute(
                    "INSERT OR IGNORE INTO threadline_blobs (key, data) VALUES (?, ?)", (key, data)
                )
        return key

    def get(self, key: str) -> bytes:
        """The bytes stored under ``key``.

        Raises:
            KeyError: no blob has that key.
            threadline.StoreError: ``key`` is not a blob key, the database cannot be read, or
                the bytes do not match the key.
        """
        _check_key(key, self)
        with wrap_driver_errors(f"{self!r} could not read blob {key}", sqlite3.Error):
            row = (
                self._db.connection()
                .execute("SELECT data FROM threadline_blobs WHERE key = ?", (key,))
                .fetchone()
            )
        if row is None:
            raise KeyError(key)
        return _verified(bytes(row[0]), key, self)

    def close(self) -> None:
        """Close this store's connections."""
        self._db.close()


def offload_files(
    messages: Iterable[Message], blobs: BlobStore, threshold: int, conversation_id: str
) -> list[Message]:
    """Move file bytes longer than ``threshold`` to ``blobs``; return messages with references.

    Each blob is scoped to ``conversation_id`` (see [`scoped_blob_key`][]). Messages without
    such a file are returned as they are (the same objects). The messages are checked before
    any blob is written.

    Raises:
        threadline.ValidationError: a message carries the reserved ``threadline.blob`` metadata
            key, which only references this function writes may hold; nothing was written.
        threadline.StoreError: the blob store failed.
    """
    items = list(messages)
    refuse_blob_marks(items, f"refused to store messages in conversation {conversation_id!r}")
    header = _scope_header(conversation_id)
    out: list[Message] = []
    for message in items:
        parts = tuple(_offload_part(part, blobs, threshold, header) for part in message.parts)
        changed = any(new is not old for new, old in zip(parts, message.parts, strict=True))
        out.append(message.model_copy(update={"parts": parts}) if changed else message)
    return out


def restore_files(
    messages: Sequence[Message], blobs: BlobStore, conversation_id: str, *, owner: object
) -> list[Message]:
    """Replace each reference part in ``messages`` by the original part, bytes from ``blobs``.

    Only blobs written for ``conversation_id`` are read back. A reference that cannot be
    resolved (the blob is missing, was written for another conversation, or the key is not a
    blob key) becomes a placeholder [`TextPart`][] whose metadata
    [`MISSING_BLOB_KEY`][] describes the file, with a
    [`StoreRecoveryWarning`][]; the other messages load as stored.

    Args:
        messages: messages as stored.
        blobs: the blob store the references point into.
        conversation_id: the conversation the messages belong to.
        owner: the store loading them (its ``repr`` names it in warnings).

    Raises:
        threadline.StoreError: a referenced blob is corrupt, or the blob store failed.
    """
    restoring = _Restoring(blobs, conversation_id, owner)
    out: list[Message] = []
    for index, message in enumerate(messages):
        restoring.at = (index, message.id)
        parts = tuple(restoring.part(part) for part in message.parts)
        changed = any(new is not old for new, old in zip(parts, message.parts, strict=True))
        out.append(message.model_copy(update={"parts": parts}) if changed else message)
    return out


def may_hold_references(raw_json: bytes) -> bool:
    """Whether stored JSON could hold a reference part (a cheap scan that skips restoring)."""
    return _REFERENCE_MARK in raw_json


def _offload_part(part: Part, blobs: BlobStore, threshold: int, header: bytes) -> Part:
    if type(part) is FilePart:
        return _offload_file(part, blobs, threshold, header)
    if type(part) is ToolResultPart and not isinstance(part.content, str):
        content = tuple(_offload_file(item, blobs, threshold, header) for item in part.content)
        if any(new is not old for new, old in zip(content, part.content, strict=True)):
            return dataclasses.replace(part, content=content)
    return part


def _offload_file(part: _Content, blobs: BlobStore, threshold: int, header: bytes) -> _Content:
    if type(part) is not FilePart or part.data is None or len(part.data) <= threshold:
        return part
    key = blobs.put(header + part.data)
    metadata = freeze_json_map({**part.metadata, BLOB_METADATA_KEY: key})
    return dataclasses.replace(part, data=None, url=BLOB_URL_PREFIX + key, metadata=metadata)


class _Restoring:
    """One load's references being resolved: where they are, for the warnings."""

    def __init__(self, blobs: BlobStore, conversation_id: str, owner: object) -> None:
        self.blobs = blobs
        self.conversation_id = conversation_id
        self.owner = owner
        self.header = _scope_header(conversation_id)
        self.at: tuple[int, str] = (0, "")

    def part(self, part: Part) -> Part:
        if type(part) is FilePart:
            return self.file(part)
        if type(part) is ToolResultPart and not isinstance(part.content, str):
            content = tuple(self.file(item) for item in part.content)
            if any(new is not old for new, old in zip(content, part.content, strict=True)):
                return dataclasses.replace(part, content=content)
        return part

    def file(self, part: _Content) -> _Content:
        if type(part) is not FilePart or part.url is None:
            return part
        key = part.metadata.get(BLOB_METADATA_KEY)
        if not isinstance(key, str) or part.url != BLOB_URL_PREFIX + key:
            return part
        if _KEY.fullmatch(key) is None:
            return self.placeholder(part, key, "which is not a blob key")
        try:
            stored = self.blobs.get(key)
        except KeyError:
            return self.placeholder(part, key, f"which {self.blobs!r} does not hold")
        if not stored.startswith(self.header):
            return self.placeholder(part, key, "which was not stored for this conversation")
        metadata = freeze_json_map(
            {name: value for name, value in part.metadata.items() if name != BLOB_METADATA_KEY}
        )
        data = stored[len(self.header) :]
        return dataclasses.replace(part, data=data, url=None, metadata=metadata)

    def placeholder(self, part: FilePart, key: str, problem: str) -> TextPart:
        index, message_id = self.at
        shown = key if len(key) <= 80 else key[:77] + "..."
        warnings.warn(
            f"{self.owner!r} loaded conversation {self.conversation_id!r} with a placeholder: "
            f"message {index} ({message_id!r}) refers to blob {shown!r}, {problem}. The file "
            f"is replaced by a text part whose metadata {MISSING_BLOB_KEY!r} names it; open "
            "the store with the blob store it was written with to get the file back (writing "
            "the conversation back keeps the placeholder)",
            StoreRecoveryWarning,
            stacklevel=2,
        )
        described = {"key": key, "media_type": part.media_type, "filename": part.filename}
        kept = {name: value for name, value in part.metadata.items() if name != BLOB_METADATA_KEY}
        name = f" {part.filename!r}" if part.filename else ""
        return TextPart(
            text=f"[file unavailable: {part.media_type}{name}]",
            metadata=freeze_json_map({**kept, MISSING_BLOB_KEY: described}),
        )
