"""File-system helpers shared by the file-backed stores: durable renames, and file names for
conversation ids that stay apart on every filesystem."""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

__all__ = [
    "conversation_id_from_stem",
    "conversation_stem",
    "fsync_directory",
    "temporary_path",
]

# Filesystems that cannot fsync a directory say so with one of these; anything else (EIO) is a
# real failure to make a rename durable and must not be hidden.
_UNSUPPORTED = frozenset({errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP})


_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def conversation_stem(conversation_id: str) -> str:
    """The file name (without suffix) for a valid conversation id, distinct for every id even
    on a case-insensitive filesystem (macOS and Windows by default).

    A lower-case id is its own name (``support-42``). Otherwise the name is the id in lower
    case, ``+``, and in base 36 the bit mask of its upper-case positions (bit 0 for the first
    character): ``Chat`` is ``chat+1``, ``userID-7`` is ``userid-7+1c``. No id holds ``+``, so
    the two forms never meet, and the name fits in 255 bytes for ids of up to 200 characters.
    """
    lower = conversation_id.lower()
    if lower == conversation_id:
        return lower
    mask = 0
    for index, (original, folded) in enumerate(zip(conversation_id, lower, strict=True)):
        if original != folded:
            mask |= 1 << index
    digits = ""
    while mask:
        mask, digit = divmod(mask, 36)
        digits = _DIGITS[digit] + digits
    return f"{lower}+{digits}"


def conversation_id_from_stem(stem: str) -> str | None:
    """The conversation id whose `conversation_stem` is ``stem``; ``None`` when there is
    none (a name this module would not write: not ours)."""
    lower, plus, digits = stem.partition("+")
    candidate = lower
    if plus:
        try:
            mask = int(digits, 36)
        except ValueError:
            return None
        candidate = "".join(
            char.upper() if mask >> index & 1 else char for index, char in enumerate(lower)
        )
    return candidate if conversation_stem(candidate) == stem else None


def temporary_path(path: Path) -> Path:
    """Where the new contents of ``path`` are written before they are renamed over it:
    ``.<name>.tmp`` beside it.

    One name per file, not a random one: only the holder of the conversation's exclusive lock
    writes it, and a writer that finds one left by a writer that crashed removes it first, so
    temporary files never pile up. A conversation's longest name (``<stem>.version``, 248
    bytes for a 200-character id) gives a 253-byte temporary name, within the 255 bytes a
    file name may hold.
    """
    return path.with_name(f".{path.name}.tmp")


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
