"""``JsonlStore.load_after``: the lines appended after a version, read from the file's end.

A conversation's version grows with its file's line count between two ``replace`` or
``delete`` calls (see `threadline.stores._jsonl_versions`), so the lines written after a version
are the file's last ``version now - version`` lines. ``load_after`` finds them by scanning back
from the end for newlines, under the file's lock, and decodes only them: its cost follows what
changed, not the conversation's length (after the store's first write or read of the file in a
process, which indexes it once).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from threadline.stores._appended import Appended
from threadline.stores._jsonl_lines import decode_file
from threadline.stores._jsonl_lines import drop_torn_tail
from threadline.stores._jsonl_lines import tail_start
from threadline.stores._jsonl_versions import VersionFile
from threadline.stores.base import check_load_after

__all__ = ["LoadAfter"]


class LoadAfter:
    """Mixed into [`JsonlStore`][threadline.JsonlStore]: ``load_after``."""

    def load_after(self, conversation_id: str, version: int) -> Appended:
        """What was appended to the conversation after ``version``, read under the file's
        exclusive lock (which, as ``version`` does, first removes a torn last line).

        Cost follows what changed: only the file's last lines are read and decoded.

        Args:
            conversation_id: the conversation.
            version: the version the caller holds it at.

        Returns:
            The messages appended since and the version now; or, ``replaced``, all of the
            conversation (replaced or deleted since, or ``version`` newer than the store's).

        Raises:
            threadline.ValidationError: the id or ``version`` is invalid.
            threadline.StoreError: the file cannot be read, is damaged, a line holds an
                invalid message, or a referenced blob is corrupt or unreadable.
        """

        after = check_load_after(conversation_id, version, "JsonlStore.load_after")
        store: Any = self
        path: Path = store._path(conversation_id)
        with store._failing(f"load conversation {conversation_id!r} after a version"):
            with store._locked(path, exclusive=True) as fd:
                if fd is None:  # nothing is held; a writer that makes a file adds to the version
                    current = VersionFile(path).version(0, None)
                    return Appended(current, [], replaced=after not in (0, current))
                size = drop_torn_tail(fd, path)
                lines = store._ids.current(path, fd, size).count
                inode = os.fstat(fd).st_ino
                versions = VersionFile(path)
                current = versions.version(lines, inode)
                if after == current:
                    return Appended(current)
                held = versions.lines_at(after, lines, inode) if after < current else None
                start = 0 if held is None else tail_start(fd, size, lines - held)
                data = os.pread(fd, size - start, start) if size > start else b""
            messages = decode_file(data, path)
        restored = store._restored(messages, data, conversation_id)
        return Appended(current, restored, replaced=held is None and after != 0)
