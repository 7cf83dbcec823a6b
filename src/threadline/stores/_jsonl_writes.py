"""How `JsonlStore` writes whole files: the bytes of a batch, a new
file, and a fork's branch with its parent record, each durable before it counts.

Only `threadline.stores.jsonl` imports this module (a fork's branch needs ``flock``: POSIX).
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from threadline.stores._files import temporary_path
from threadline.stores._jsonl_versions import ParentFile
from threadline.stores._jsonl_versions import VersionFile

if sys.platform != "win32":
    import fcntl

__all__ = ["write_all", "write_branch", "write_new_file"]


def write_all(fd: int, data: bytes, offset: int) -> None:
    # One pwrite for the whole batch; the loop only matters if the kernel writes part of it.
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)
        view = view[written:]
        offset += written


def write_new_file(path: Path, data: bytes) -> int:
    """Write ``data`` to the new file ``path`` (a `temporary_path`: one a writer that crashed
    left there is removed first), fsynced; its inode."""
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        write_all(fd, data, 0)
        os.fsync(fd)
        return os.fstat(fd).st_ino
    finally:
        os.close(fd)


def write_branch(path: Path, data: bytes, record: str, version: int, lines: int) -> None:
    """Put a fork's branch (``data``, ``lines`` lines) at ``path`` with its parent ``record``
    and ``version``, so that a crash at any instant leaves no branch or all of it.

    The caller holds ``path``'s exclusive lock and checked it holds nothing. The branch is
    written whole to its temporary file and locked; the record names that file (so it counts
    only once the file is in place) and the version describes it; the rename makes the branch
    appear, whole, with its record. The record is then rewritten on its own while the new
    file's lock keeps everyone else out. A crash before the rename leaves a record naming a
    file that is not the conversation's, which counts for nothing; the next fork or replace
    of the id removes or overwrites it and reuses the temporary file.
    """
    parent = ParentFile(path)
    temporary = temporary_path(path)
    temporary.unlink(missing_ok=True)  # left by a writer that crashed
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        try:
            write_all(fd, data, 0)
            os.fsync(fd)
            fcntl.flock(fd, fcntl.LOCK_EX)  # a new file: whoever opens the branch waits
            inode = os.fstat(fd).st_ino
            parent.write(record, inode)
            VersionFile(path).write(version, lines, inode)
            os.replace(temporary, path)
        except BaseException:
            temporary.unlink(missing_ok=True)
            parent.remove()
            raise
        # The branch is whole and its record counts as it is; this only frees the record from
        # the file's inode. Should it fail, the next replace does it (see ParentFile).
        with contextlib.suppress(OSError):
            parent.write(record)
    finally:
        os.close(fd)
