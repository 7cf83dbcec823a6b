"""The versions of `JsonlStore` conversations, with no extra write
per append.

An append adds one line to the conversation's file, so between two ``replace`` or ``delete``
calls the version grows with the file's line count. Only those two write a small side file,
``<name>.version``, holding ``V L INODE``: the version they set, the lines the file had then,
and which file that was (its inode). The version is then::

    V + lines - L    when the conversation's file is that file (the same inode)
    V + lines        otherwise (no file, or a file the side file does not describe)
    lines            when there is no side file (a file written before versions existed)

Both are written under the conversation file's exclusive ``flock``, so readers (who hold it
too) never see one without the other. The side file is replaced atomically (a temporary file,
fsynced, renamed) *before* the conversation's file is renamed or removed, so a crash between
the two leaves a side file that does not describe the file still there, and the version reads
as ``V + lines``: larger than before, never smaller. So a version never goes back.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from threadline.stores._files import fsync_directory
from threadline.stores._files import temporary_path

__all__ = ["ParentFile", "VersionFile"]

SUFFIX = ".version"
PARENT_SUFFIX = ".parent"


class VersionFile:
    """The side file of one conversation's file ``path`` (``<name>.version`` beside it)."""

    __slots__ = ("directory", "path")

    def __init__(self, conversation_path: Path) -> None:
        self.directory = conversation_path.parent
        self.path = conversation_path.with_suffix(SUFFIX)

    def version(self, lines: int, inode: int | None) -> int:
        """The version, given the conversation file's line count and inode (``None``: none).

        The caller holds the conversation file's lock.
        """
        recorded = self._read()
        if recorded is None:
            return lines
        version, then, recorded_inode = recorded
        if inode is not None and inode == recorded_inode:
            return version + lines - then
        return version + lines

    def lines_at(self, version: int, lines: int, inode: int | None) -> int | None:
        """How many of the file's lines it held at ``version``, when the file now has
        ``lines`` lines and ``inode`` (``None``: no file) and was only appended to since
        that version; ``None`` when it was replaced or deleted since (or ``version`` is not
        one this file had). The caller holds the conversation file's lock.
        """
        recorded = self._read()
        if recorded is None:
            start, first = 0, 0  # versions count the lines from the first
        elif inode is not None and inode == recorded[2]:
            start, first = recorded[0], recorded[1]
        else:
            start, first = recorded[0], 0
        held = first + version - start
        return held if start <= version and held <= lines else None

    def write(self, version: int, lines: int, inode: int) -> None:
        """Record ``version`` for a file of ``lines`` lines with ``inode`` (0: no file).

        Atomic and durable: a temporary file, fsynced, renamed over the side file.

        Raises:
            OSError: the file cannot be written.
        """
        _write_atomically(self.path, f"{version} {lines} {inode}\n".encode())

    def _read(self) -> tuple[int, int, int] | None:
        try:
            text = self.path.read_text(encoding="ascii")
        except FileNotFoundError:
            return None
        try:
            version, lines, inode = (int(field) for field in text.split())
        except ValueError:
            raise OSError(
                f"{self.path}: not a version file (expected 'VERSION LINES INODE', got "
                f"{text[:60]!r}); remove it to count the version from the file's lines again"
            ) from None
        return version, lines, inode


class ParentFile:
    """The side file ``<name>.parent`` of a branch made by ``fork``: its parent record (the
    JSON of `threadline.stores.forks.encode_parent`). Written and removed under the
    conversation file's exclusive lock; it goes with the branch on ``delete``.

    A fork writes the record before it renames the branch's file into place, so the record
    first names that file: ``RECORD\nINODE\n``. Such a record counts only while the
    conversation's file is that file, so a fork that crashed before the rename leaves no
    branch (the record names a file that never arrived); once the rename is done, the fork
    rewrites it as ``RECORD`` alone, which counts whatever the file (a record of a branch of no
    message, which has no file, is written so from the start). A ``replace`` settles a
    record that still names a file before it swaps the file: it keeps the record of a fork
    that finished, drops the one of a fork that did not.
    """

    __slots__ = ("path",)

    def __init__(self, conversation_path: Path) -> None:
        self.path = conversation_path.with_suffix(PARENT_SUFFIX)

    def read(self, inode: int | None) -> str | None:
        """The record's text; ``None`` when the conversation is no branch: no record, or the
        record of a fork that did not finish.

        Args:
            inode: the conversation file's inode (``None``: it has no file), read under its
                lock.

        Raises:
            OSError: the file cannot be read, or names a file in a form this module never
                writes.
        """
        recorded = self._read()
        if recorded is None:
            return None
        text, named = recorded
        if named is not None and named != inode:
            return None
        return text

    def write(self, text: str, inode: int | None = None) -> None:
        """Record ``text`` (for the file ``inode`` only, when given), atomically and durably.

        Raises:
            OSError: the file cannot be written.
        """
        data = text if inode is None else f"{text}\n{inode}\n"
        _write_atomically(self.path, data.encode())

    def settle(self, inode: int) -> None:
        """Before the conversation's file (``inode``) is swapped: a record that names it
        keeps its text only, one that names another file (a fork that crashed) goes.

        Raises:
            OSError: the file cannot be read or written.
        """
        recorded = self._read()
        if recorded is None or recorded[1] is None:
            return
        text, named = recorded
        if named == inode:
            self.write(text)
        else:
            self.remove()

    def remove(self) -> None:
        """Drop the record (nothing happens when there is none)."""
        self.path.unlink(missing_ok=True)

    def _read(self) -> tuple[str, int | None] | None:
        try:
            content = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        text, _, named = content.partition("\n")
        if not named:
            return text, None
        try:
            return text, int(named)
        except ValueError:
            raise OSError(
                f"{self.path}: not a parent record (expected the record's JSON, then "
                f"optionally a line with an inode number; got {content[:80]!r})"
            ) from None


def _write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path``: a temporary file, fsynced, renamed over it, the directory
    synced. The caller holds the conversation file's exclusive lock (`temporary_path`)."""
    temporary = temporary_path(path)
    try:
        temporary.unlink(missing_ok=True)  # left by a writer that crashed
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    fsync_directory(path.parent)
