"""Content-addressed blob stores that keep large file bytes out of the message JSON.

A store given ``blobs=`` and ``blob_threshold=`` writes each :class:`~threadline.FilePart` whose
``data`` is longer than the threshold (at the top of a message or inside a tool result's content)
to the blob store first, and stores a reference part in its place::

    FilePart(data=<bytes>, media_type="image/png", filename="cat.png", metadata={...})
    # is stored as
    FilePart(url="threadline-blob:sha256:<64 hex digits>", media_type="image/png",
             filename="cat.png", metadata={..., "threadline.blob": "sha256:<64 hex digits>"})

``load`` turns each reference back into the exact original part (equal to what was appended).
A reference needs both marks — the ``threadline-blob:`` URL and the ``threadline.blob``
metadata key — so an application's own URL is never mistaken for one. Blobs are written (and
fsynced) before the messages that refer to them, so a stored message never points at a missing
blob; a crash in between leaves only an unreferenced blob. Blobs are keyed by the SHA-256 of
their bytes, so the same image sent twice is stored once, and are never deleted by a store: one
blob may be shared by many conversations.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import sqlite3
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol, TypeAlias, runtime_checkable

from threadline._json import freeze_json_map
from threadline.errors import StoreError
from threadline.messages import FilePart, Message, Part, TextPart, ToolResultPart
from threadline.stores._files import fsync_directory
from threadline.stores._sqlite import SQLiteDatabase
from threadline.stores.base import wrap_driver_errors

__all__ = [
    "BLOB_METADATA_KEY",
    "BLOB_URL_PREFIX",
    "DEFAULT_BLOB_THRESHOLD",
    "BlobStore",
    "FileBlobStore",
    "SQLiteBlobStore",
    "blob_key",
    "may_hold_references",
    "offload_files",
    "restore_files",
]

BLOB_URL_PREFIX = "threadline-blob:"
"""The URL scheme of a reference part: ``threadline-blob:sha256:<hex>``."""
BLOB_METADATA_KEY = "threadline.blob"
"""The metadata key that marks a reference part; its value is the blob key."""
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


class SQLiteBlobStore:
    """Blobs in the table ``threadline_blobs(key TEXT PRIMARY KEY, data BLOB)`` of an SQLite file.

    It may share the file of an :class:`~threadline.stores.SQLiteStore`
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

    def __enter__(self) -> SQLiteBlobStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def offload_files(messages: Iterable[Message], blobs: BlobStore, threshold: int) -> list[Message]:
    """Move file bytes longer than ``threshold`` to ``blobs``; return messages with references.

    Messages without such a file are returned as they are (the same objects).

    Raises:
        threadline.StoreError: the blob store failed.
    """
    out: list[Message] = []
    for message in messages:
        parts = tuple(_offload_part(part, blobs, threshold) for part in message.parts)
        changed = any(new is not old for new, old in zip(parts, message.parts, strict=True))
        out.append(message.model_copy(update={"parts": parts}) if changed else message)
    return out


def restore_files(messages: list[Message], blobs: BlobStore, where: str) -> list[Message]:
    """Replace each reference part in ``messages`` by the original part, bytes from ``blobs``.

    Args:
        messages: messages as stored.
        blobs: the blob store the references point into.
        where: the store and conversation, for error messages.

    Raises:
        threadline.StoreError: a referenced blob is missing or corrupt.
    """
    out: list[Message] = []
    for message in messages:
        parts = tuple(_restore_part(part, blobs, where, message.id) for part in message.parts)
        changed = any(new is not old for new, old in zip(parts, message.parts, strict=True))
        out.append(message.model_copy(update={"parts": parts}) if changed else message)
    return out


def may_hold_references(raw_json: bytes) -> bool:
    """Whether stored JSON could hold a reference part (a cheap scan that skips restoring)."""
    return _REFERENCE_MARK in raw_json


def _offload_part(part: Part, blobs: BlobStore, threshold: int) -> Part:
    if type(part) is FilePart:
        return _offload_file(part, blobs, threshold)
    if type(part) is ToolResultPart and not isinstance(part.content, str):
        content = tuple(_offload_file(item, blobs, threshold) for item in part.content)
        if any(new is not old for new, old in zip(content, part.content, strict=True)):
            return dataclasses.replace(part, content=content)
    return part


def _offload_file(part: _Content, blobs: BlobStore, threshold: int) -> _Content:
    if (
        type(part) is not FilePart
        or part.data is None
        or len(part.data) <= threshold
        or BLOB_METADATA_KEY in part.metadata  # reserved: kept inline so it round-trips exactly
    ):
        return part
    key = blobs.put(part.data)
    metadata = freeze_json_map({**part.metadata, BLOB_METADATA_KEY: key})
    return dataclasses.replace(part, data=None, url=BLOB_URL_PREFIX + key, metadata=metadata)


def _restore_part(part: Part, blobs: BlobStore, where: str, message_id: str) -> Part:
    if type(part) is FilePart:
        return _restore_file(part, blobs, where, message_id)
    if type(part) is ToolResultPart and not isinstance(part.content, str):
        content = tuple(_restore_file(item, blobs, where, message_id) for item in part.content)
        if any(new is not old for new, old in zip(content, part.content, strict=True)):
            return dataclasses.replace(part, content=content)
    return part


def _restore_file(part: _Content, blobs: BlobStore, where: str, message_id: str) -> _Content:
    if type(part) is not FilePart or part.url is None:
        return part
    key = part.metadata.get(BLOB_METADATA_KEY)
    if not isinstance(key, str) or part.url != BLOB_URL_PREFIX + key:
        return part
    try:
        data = blobs.get(key)
    except KeyError:
        raise StoreError(
            f"{where}: message {message_id!r} refers to blob {key}, which {blobs!r} does not "
            "hold; open the store with the blob store it was written with"
        ) from None
    metadata = freeze_json_map({k: v for k, v in part.metadata.items() if k != BLOB_METADATA_KEY})
    return dataclasses.replace(part, data=data, url=None, metadata=metadata)
