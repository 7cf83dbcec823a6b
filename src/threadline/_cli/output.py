"""What the command line prints, and how it fails: exit statuses, `CliError`, and the
escaping of every character a terminal would act on instead of showing."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable
from typing import Any
from typing import Final
from typing import TextIO

from threadline.errors import ThreadlineError
from threadline.errors import ValidationError

__all__ = [
    "EXIT_ISSUES",
    "EXIT_OK",
    "EXIT_UNREADABLE",
    "PROG",
    "STDIN",
    "CliError",
    "json_printable",
    "json_problem",
    "one_line",
    "plural",
    "print_json",
    "print_lines",
    "print_text",
    "printable",
    "quoted",
    "warn",
]

EXIT_OK: Final = 0
"""The command did what it was asked; ``check`` found no issue."""
EXIT_ISSUES: Final = 1
"""``check`` found integrity issues, or ``repair`` / ``convert`` met issues they cannot fix."""
EXIT_UNREADABLE: Final = 2
"""The input (or an option) could not be read or written."""

PROG: Final = "threadline"
STDIN: Final = "<stdin>"


class CliError(Exception):
    """A problem to report to the user as one line; ``code`` is the exit status."""

    def __init__(self, message: str, code: int = EXIT_UNREADABLE) -> None:
        super().__init__(message)
        self.code = code


def print_text(text: str) -> None:
    print(text, file=sys.stdout)


def print_lines(lines: Iterable[str], file: TextIO | None = None) -> None:
    """Print lines of plain text, escaping what a terminal would act on in each."""
    print("\n".join(map(printable, lines)), file=file or sys.stdout)


def print_json(value: Any) -> None:
    print_text(json_printable(json.dumps(value, indent=2, ensure_ascii=False)))


def warn(message: str) -> None:
    print(f"{PROG}: warning: {printable(message)}", file=sys.stderr)


# What a terminal acts on instead of showing: C0 controls (ESC starts the sequences that move
# the cursor, clear the screen, set the title or write the clipboard), DEL, C1 controls (CSI is
# ESC [ in one character), the bidirectional overrides and isolates that reorder a line as it is
# shown ("Trojan Source"), and lone surrogates, which UTF-8 cannot even encode.
_UNSAFE: Final = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNSAFE_IN_TEXT: Final = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
# JSON text: json.dumps escapes C0 controls in strings already, and these occur only in strings.
_UNSAFE_IN_JSON: Final = re.compile(r"[\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_ESCAPES: Final = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def printable(value: str, *, text: bool = False) -> str:
    """``value`` with every character a terminal would act on written as its Python escape.

    Args:
        value: what to print, from the file (or naming it).
        text: keep newlines and tabs (message text laid out over lines); otherwise they are
            escaped too, so an id or a name cannot start a line of its own.
    """
    return (_UNSAFE_IN_TEXT if text else _UNSAFE).sub(_escape, value)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return _ESCAPES.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def json_printable(text: str) -> str:
    """JSON text with what a terminal would act on escaped inside its strings (``\\u009b``):
    the same JSON value, safe to print."""
    return _UNSAFE_IN_JSON.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def one_line(error: BaseException) -> str:
    """An error as one line: a ValidationError's summary and its first problem."""
    if isinstance(error, ValidationError) and error.errors:
        summary = re.sub(r": \d+ problems?$", "", str(error).splitlines()[0])
        first = str(error.errors[0])
        if summary.endswith(first):  # a one-problem error that says it all in its summary
            return summary
        more = len(error.errors) - 1
        tail = f" (and {plural(more, 'more problem')})" if more else ""
        return f"{summary}: {first}{tail}"
    if isinstance(error, ThreadlineError):
        return " ".join(line.strip() for line in str(error).splitlines() if line.strip())
    return " ".join(str(error).split()) or type(error).__name__


def json_problem(error: json.JSONDecodeError) -> str:
    return f"{error.msg} at line {error.lineno} column {error.colno}"


def plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


def quoted(name: str) -> str:
    return name if re.fullmatch(r"[\w./-]+", name) else json.dumps(name)
