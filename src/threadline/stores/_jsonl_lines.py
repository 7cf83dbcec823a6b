"""The lines of a `JsonlStore` file: reading batches under the torn-last-line rule, repairing a
torn tail, and finding where the file's last lines start.

A batch is one line, and a crash mid-write can damage only the last line: ``load`` skips a torn
last line with a warning, a writer (and ``version``, ``load_after``) truncates it first, and a
damaged line anywhere else is corruption. ``JsonlStore`` and its ``load_after`` share these.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

import pydantic
import pydantic_core

from threadline._validation import translate_errors
from threadline.errors import StoreError
from threadline.errors import StoreRecoveryWarning
from threadline.messages import Message
from threadline.serialization import messages_from_json

__all__ = ["decode_file", "drop_torn_tail", "read_batch_lines", "tail_start"]

_CHUNK = 64 * 1024

_Line = TypeVar("_Line", str, bytes)
_Value = TypeVar("_Value")


def read_batch_lines(
    lines: Sequence[tuple[int, _Line]],
    parse: Callable[[int, _Line], _Value],
    *,
    torn: Callable[[int, _Line], None],
    damaged: Callable[[int, ValueError], Exception],
) -> Iterator[tuple[int, _Value]]:
    """Each line's JSON value, in order, under the rule for a write cut short: only the last
    line can be torn.

    [`JsonlStore`][] writes a batch as one line, so a crash mid-write can damage the last
    line only. A line that ``parse`` refuses is therefore a torn write when it is the last of
    ``lines``: ``torn(number, line)`` is called and reading stops, the batch dropped whole.
    Anywhere else it is a damaged file: the exception ``damaged(number, error)`` returns is
    raised, from the parse error. Lines are parsed as the values are asked for, so a caller
    that validates each value as it comes reports the first problem in the file's order.

    ``JsonlStore.load`` reads its files with it, and so does ``threadline check`` (and the
    other commands) for JSON Lines input.

    Args:
        lines: the lines that hold a batch, each with its number in the file (from 1).
        parse: reads the JSON value of line ``number``; raises ``ValueError`` when the line is
            not JSON (any other exception goes to the caller as it is).
        torn: called with a torn last line, before reading stops.
        damaged: the error for a line that is not JSON and not the last.

    Yields:
        ``(number, value)`` of each line, up to a torn last one.

    Raises:
        Exception: what ``damaged`` returns, for a line before the last that is not JSON.
    """
    for position, (number, line) in enumerate(lines):
        try:
            value = parse(number, line)
        except ValueError as error:
            if position == len(lines) - 1:
                torn(number, line)
                return
            raise damaged(number, error) from error
        yield number, value


def decode_file(data: bytes, path: Path) -> list[Message]:
    """Messages from a file's bytes: one validation for the whole file when it is sound."""
    lines = data.split(b"\n")
    torn = lines.pop()  # what follows the last newline: b"" unless a write was cut short
    if torn:
        _warn_torn(path, len(lines) + 1, len(torn), stacklevel=4)
    # A batch line is stripped of its brackets only when it has both: a line whose "]" was
    # damaged stays whole, which makes the joined array invalid and sends it to the per-line
    # check (never "[a,b}" read as "a,b" with its last byte dropped).
    items = [line[1:-1] if line[:1] == b"[" and line[-1:] == b"]" else line for line in lines]
    try:
        return messages_from_json(b"[" + b",".join(filter(None, items)) + b"]")
    except pydantic.ValidationError:
        return _decode_lines(lines, path)  # find the bad line, and say which


def _decode_lines(lines: list[bytes], path: Path) -> list[Message]:
    messages: list[Message] = []
    values = read_batch_lines(
        list(enumerate(lines, start=1)),
        lambda _, line: pydantic_core.from_json(line),
        # A last line that is complete, but whose bytes never reached the disk whole. The
        # warning points at load's caller: _warn_torn, this lambda, read_batch_lines,
        # _decode_lines, _decode and load come first.
        torn=lambda number, line: _warn_torn(path, number, len(line), stacklevel=7),
        damaged=lambda number, error: StoreError(
            f"{path}:{number}: the line is not JSON ({error}), and it is not the last line, "
            "so it is not a torn write but a damaged file; restore it from a backup or "
            "remove the line"
        ),
    )
    for number, value in values:
        line = lines[number - 1]
        try:
            messages.extend(messages_from_json(line if isinstance(value, list) else b"[%s]" % line))
        except pydantic.ValidationError as error:
            raise StoreError(
                f"{path}:{number}: the line holds an invalid message (written by another "
                "program, or by a newer threadline)"
            ) from translate_errors(error, f"{path}:{number}: invalid message")
    return messages


def _warn_torn(path: Path, line: int, size: int, *, stacklevel: int) -> None:
    warnings.warn(
        f"{path}:{line}: skipped a torn last line ({size} bytes) left by a write that was cut "
        "short (a crash); the batch it held was never completely written. The next append "
        "removes it",
        StoreRecoveryWarning,
        stacklevel=stacklevel,
    )


def drop_torn_tail(fd: int, path: Path) -> int:
    """Truncate a torn last line (with a warning) so a new line never glues onto it.

    Returns:
        The file's size after repair: where the next line goes.
    """
    size = os.fstat(fd).st_size
    if size == 0:
        return 0
    complete = os.pread(fd, 1, size - 1) == b"\n"
    end = size - 1 if complete else size
    start = _line_start(fd, end)
    if complete:
        try:
            pydantic_core.from_json(os.pread(fd, end - start, start))
        except ValueError:
            pass
        else:
            return size
    line = _count_newlines(fd, start) + 1
    warnings.warn(
        f"{path}:{line}: removed a torn last line ({size - start} bytes) left by a write that "
        "was cut short (a crash) before appending; the batch it held was never completely "
        "written",
        StoreRecoveryWarning,
        stacklevel=3,
    )
    os.ftruncate(fd, start)
    os.fsync(fd)
    return start


def _line_start(fd: int, end: int) -> int:
    """The offset just after the last newline before ``end`` (0 when there is none)."""
    position = end
    while position > 0:
        low = max(0, position - _CHUNK)
        found = os.pread(fd, position - low, low).rfind(b"\n")
        if found >= 0:
            return low + found + 1
        position = low
    return 0


def _count_newlines(fd: int, end: int) -> int:
    count = 0
    for low in range(0, end, _CHUNK):
        count += os.pread(fd, min(_CHUNK, end - low), low).count(b"\n")
    return count


def tail_start(fd: int, size: int, count: int) -> int:
    """The offset where the last ``count`` lines of the file (``size`` bytes of whole lines,
    each ending with a newline) start."""
    if count <= 0:
        return size
    remaining = count + 1  # the last line's own newline, then one before each line
    position = size
    while position > 0:
        low = max(0, position - _CHUNK)
        chunk = os.pread(fd, position - low, low)
        end = len(chunk)
        while True:
            end = chunk.rfind(b"\n", 0, end)
            if end < 0:
                break
            remaining -= 1
            if remaining == 0:
                return low + end + 1
        position = low
    return 0
