"""File-system helpers shared by the file-backed stores."""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

__all__ = ["fsync_directory"]

# Filesystems that cannot fsync a directory say so with one of these; anything else (EIO) is a
# real failure to make a rename durable and must not be hidden.
_UNSUPPORTED = frozenset({errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP})


def fsync_directory(directory: Path) -> None:
    """Make a rename, a new file or a deleted file in ``directory`` durable.

    Raises:
        OSError: the directory cannot be opened or synced.
    """
    if sys.platform == "win32":  # Windows cannot open a directory; NTFS journals renames
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as error:
        if error.errno not in _UNSUPPORTED:
            raise
    finally:
        os.close(fd)
