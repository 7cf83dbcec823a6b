"""The ``threadline`` command line: look into, repair and convert stored conversations.

A conversation that broke in production is usually a file by the time someone looks at it: a
``History.to_json()`` dump, a :class:`~threadline.stores.JsonlStore` file, or the request body a
provider refused. Five commands work on such a file (``-`` reads standard input)::

    threadline check   FILE [--strict] [--json] [--from PROVIDER]
    threadline repair  FILE [-o OUT] [--from PROVIDER]
    threadline convert FILE --to PROVIDER [--from PROVIDER] [--system TEXT]
    threadline show    FILE [--full] [--color WHEN] [--from PROVIDER]
    threadline stats   FILE [--json] [--from PROVIDER]

Input is read as the neutral JSON envelope (or a bare list of messages), as JSON Lines the way
``JsonlStore`` writes them (one message object, or an array of messages, per line; a torn last
line is skipped with a warning, as the store does), or, with ``--from PROVIDER``, as a provider
payload read by :func:`threadline.decode`.

Exit status: 0 success; 1 the history has integrity issues (``check``), or issues that stop
``repair`` or ``convert``; 2 the input cannot be read (and argparse's usage errors). Errors are one
line on standard error; ``--debug`` adds the traceback. The module uses the standard library
only, so the command costs no dependency beyond threadline's own.

The file may be hostile, and what is printed from it goes to a terminal: every character a
terminal would act on instead of showing (C0 and C1 controls, DEL, the bidirectional overrides
and isolates) is printed escaped, as Python writes it (``\\x1b``, ``\\u202e``), in every output;
JSON output escapes them inside its strings (``\\u001b``), so it is still the same JSON. Only the
newlines and tabs of message text are kept as they are. A lone surrogate or an integer too long
to read is an input error.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import sys
import tempfile
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TextIO, TypeAlias, cast

import pydantic
from typing_extensions import assert_never

from threadline._validation import translate_errors
from threadline.codecs import codec_names, decode, encode
from threadline.errors import (
    CodecError,
    IntegrityError,
    ThreadlineError,
    UnsupportedContentError,
    ValidationError,
)
from threadline.integrity import IntegrityIssue, check_messages, repair_messages
from threadline.limits import Limits
from threadline.messages import (
    FilePart,
    HookPart,
    Message,
    Part,
    ProviderToolCallPart,
    ProviderToolResultPart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from threadline.serialization import dump_json, load_json
from threadline.stores.jsonl import read_batch_lines
from threadline.tokens import estimate_tokens

__all__ = ["EXIT_ISSUES", "EXIT_OK", "EXIT_UNREADABLE", "main"]

EXIT_OK: Final = 0
"""The command did what it was asked; ``check`` found no issue."""
EXIT_ISSUES: Final = 1
"""``check`` found integrity issues, or ``repair`` / ``convert`` met issues they cannot fix."""
EXIT_UNREADABLE: Final = 2
"""The input (or an option) could not be read or written."""

PROG: Final = "threadline"
_STDIN: Final = "<stdin>"

# Stripped before every model call in both modes, and normal in a stored history (UI and resume
# state): a plain `check` does not count them, `check --strict` does.
_INTERNAL_CODES: Final = frozenset({"internal-message", "internal-part"})

# Keys that give away a provider request body given without --from.
_PROVIDER_KEYS: Final = frozenset({"messages", "contents", "input", "system", "systemInstruction"})


class CliError(Exception):
    """A problem to report to the user as one line; ``code`` is the exit status."""

    def __init__(self, message: str, code: int = EXIT_UNREADABLE) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Loaded:
    """A history read from a file, and what to call the file in messages."""

    name: str
    messages: list[Message]


# ---------------------------------------------------------------------------------------------
# Entry point


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``threadline`` command line and return its exit status.

    Args:
        argv: the arguments after the program name; ``None`` reads ``sys.argv[1:]``.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    command: Callable[[argparse.Namespace], int] = args.run
    try:
        return command(args)
    except CliError as error:
        return _fail(args, str(error), error.code)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # A reader such as `head` closed the pipe: nothing left to say to it.
        _silence_stdout()
        return EXIT_OK
    except Exception as error:  # a bug: still one line, the traceback with --debug
        return _fail(
            args,
            f"unexpected {type(error).__name__}: {_one_line(error)} "
            "(run with --debug for the traceback, and please report it)",
            EXIT_UNREADABLE,
        )


def _fail(args: argparse.Namespace, message: str, code: int) -> int:
    if getattr(args, "debug", False):
        traceback.print_exc(file=sys.stderr)
    print(f"{PROG}: error: {printable(message)}", file=sys.stderr)
    return code


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass  # stdout is not a real file (tests): nothing will flush into the closed pipe


# ---------------------------------------------------------------------------------------------
# The parser


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the examples in each epilog laid out as written."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for ``threadline`` and its five commands."""
    from threadline import __version__

    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Check, repair, convert and read stored LLM conversation histories.",
        epilog=_dedent(
            """
            FILE is a neutral JSON history (History.to_json, dump_json), a JsonlStore file, or,
            with --from PROVIDER, a provider request body; '-' reads standard input.

            examples:
              threadline check conversation.jsonl
              threadline show history.json | less -R
              threadline convert claude-request.json --from anthropic --to openai_chat

            exit status: 0 ok, 1 integrity issues, 2 unreadable input or bad usage
            """
        ),
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--debug", action="store_true", help="print tracebacks with errors")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    common = _common_options()

    check = commands.add_parser(
        "check",
        parents=[common],
        formatter_class=_Formatter,
        help="report integrity issues (exit 1 if any)",
        description=(
            "Report the integrity issues of a stored history: tool calls without results, "
            "results without calls, duplicate ids, malformed arguments. Internal content "
            "(internal messages, hook parts) is normal in stored history and is stripped "
            "before every model call, so it counts only with --strict."
        ),
        epilog=_dedent(
            """
            examples:
              threadline check history.json
              threadline check --strict --json conversation.jsonl
              threadline check --from anthropic request-that-got-a-400.json

            exit status: 0 clean, 1 issues found, 2 unreadable input
            """
        ),
    )
    check.add_argument(
        "--strict",
        action="store_true",
        help="count every change a model call would make, internal content included",
    )
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.set_defaults(run=run_check)

    repair = commands.add_parser(
        "repair",
        parents=[common],
        formatter_class=_Formatter,
        help="write the model-ready history and print what changed",
        description=(
            "Write the prepared history, what prepare_messages would send to a model (internal "
            "content dropped, interrupted tool calls answered with an error result, misplaced "
            "results moved, malformed arguments set to {}), and print the report of every "
            "change. With -o the history goes to OUT and the report to standard output; "
            "without it the history goes to standard output and the report to standard error."
        ),
        epilog=_dedent(
            """
            examples:
              threadline repair broken.json -o fixed.json
              threadline repair conversation.jsonl -o conversation.fixed.jsonl
              threadline repair - < broken.json > fixed.json

            exit status: 0 written, 1 issues repair cannot fix (nothing written),
            2 unreadable input or unwritable output
            """
        ),
    )
    repair.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="where to write the history ('-' or absent: standard output); replaced atomically",
    )
    repair.add_argument(
        "--format",
        choices=("json", "jsonl"),
        help="neutral JSON envelope or JSON Lines (default: jsonl when OUT ends in .jsonl)",
    )
    repair.add_argument(
        "--rename-duplicate-ids",
        action="store_true",
        help="rename a reused tool-call id (and its result) when the pairing is unambiguous",
    )
    repair.set_defaults(run=run_repair)

    convert = commands.add_parser(
        "convert",
        parents=[common],
        formatter_class=_Formatter,
        help="print the history as a provider's request payload",
        description=(
            "Print the history as the history part of a provider request (threadline.encode), "
            "as JSON. Bedrock payloads hold file bytes as bytes (boto3's shape); in this JSON "
            "they are standard base64 text, which threadline.decode(..., provider='bedrock') "
            "and the Converse wire format accept."
        ),
        epilog=_dedent(
            f"""
            examples:
              threadline convert history.json --to anthropic --system "You are terse."
              threadline convert claude-request.json --from anthropic --to openai_responses

            providers: {", ".join(codec_names())}
            exit status: 0 converted, 1 issues the conversion cannot fix, 2 unreadable input
            """
        ),
    )
    convert.add_argument(
        "--to", required=True, choices=codec_names(), metavar="PROVIDER", help="the target format"
    )
    convert.add_argument("--system", metavar="TEXT", help="system text to put first")
    convert.add_argument("--model", help="the target model (reasoning from others is not replayed)")
    convert.add_argument(
        "--reasoning",
        choices=("auto", "text", "drop"),
        default="auto",
        help="reasoning policy (default: auto)",
    )
    convert.add_argument(
        "--unsupported",
        choices=("placeholder", "drop", "raise"),
        default="placeholder",
        help="what to do with parts the format cannot carry (default: placeholder)",
    )
    convert.set_defaults(run=run_convert)

    show = commands.add_parser(
        "show",
        parents=[common],
        formatter_class=_Formatter,
        help="print a readable transcript",
        description=(
            "Print the conversation as a transcript: each message with its index, role and id; "
            "reasoning folded to one line; each tool call with its results indented under it. "
            "Coloured on a terminal (unless NO_COLOR is set), plain otherwise."
        ),
        epilog=_dedent(
            """
            examples:
              threadline show history.json
              threadline show --full --color always conversation.jsonl | less -R
            """
        ),
    )
    show.add_argument(
        "--full", action="store_true", help="unfold reasoning and print long results whole"
    )
    show.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the output (default: auto, on a terminal unless NO_COLOR is set)",
    )
    show.set_defaults(run=run_show)

    stats = commands.add_parser(
        "stats",
        parents=[common],
        formatter_class=_Formatter,
        help="count messages, parts, estimated tokens and attachment bytes",
        description=(
            "Count messages by role, parts by type, estimated tokens (threadline's default "
            "estimate: 4 per message, one per 4 characters of content, 256 per file) and the "
            "files attached, by bytes or by URL."
        ),
        epilog=_dedent(
            """
            examples:
              threadline stats history.json
              threadline stats --json conversation.jsonl
            """
        ),
    )
    stats.add_argument("--json", action="store_true", help="print the numbers as JSON")
    stats.set_defaults(run=run_stats)
    return parser


def _common_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("file", metavar="FILE", help="the history to read; '-' for standard input")
    common.add_argument(
        "--from",
        dest="source",
        choices=codec_names(),
        metavar="PROVIDER",
        help=f"read FILE as a provider payload: {', '.join(codec_names())}",
    )
    # SUPPRESS: without it, this default would overwrite `threadline --debug COMMAND`.
    common.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="print tracebacks"
    )
    return common


def _dedent(text: str) -> str:
    lines = text.strip("\n").splitlines()
    margin = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
    return "\n".join(line[margin:] for line in lines)


# ---------------------------------------------------------------------------------------------
# check


def run_check(args: argparse.Namespace) -> int:
    """``threadline check``: print the integrity report; exit 1 when it counts any issue."""
    loaded = load_history(args.file, args.source)
    report = check_messages(loaded.messages)
    internal_only = set() if args.strict else _internal_content(report.issues)
    counted = [issue for issue in report.issues if issue not in internal_only]
    internal = len(report.issues) - len(counted)
    unrepairable = _unrepairable(loaded.messages) if counted else set()
    if args.json:
        document = {
            "source": loaded.name,
            "messages": len(loaded.messages),
            "strict": args.strict,
            "ok": not counted,
            "issues": [_issue_json(i, _key(i) not in unrepairable) for i in counted],
            "internal_content": internal,
        }
        _print_json(document)
    else:
        _print_lines(_check_lines(loaded, counted, internal, unrepairable))
    return EXIT_ISSUES if counted else EXIT_OK


def _check_lines(
    loaded: Loaded, issues: list[IntegrityIssue], internal: int, unrepairable: set[_IssueKey]
) -> Iterator[str]:
    count = _plural(len(loaded.messages), "message")
    if not issues:
        yield f"{loaded.name}: no integrity issues ({count})"
    else:
        yield f"{loaded.name}: {_plural(len(issues), 'integrity issue')} in {count}"
        for issue in issues:
            mark = "  [not repairable automatically]" if _key(issue) in unrepairable else ""
            yield f"  {issue}{mark}"
        fatal = sum(_key(issue) in unrepairable for issue in issues)
        if fatal:
            yield (
                f"{_plural(fatal, 'issue')} cannot be repaired automatically (which call a "
                "result answers would be a guess): fix or drop the parts named above"
            )
        else:
            source = "-" if loaded.name == _STDIN else _quoted(loaded.name)
            yield f"all can be repaired: threadline repair {source} -o FIXED"
    if internal:
        yield (
            f"note: {_plural(internal, 'item')} of internal content (UI or resume state) "
            "would be dropped before a model call; --strict counts them as issues"
        )


def _internal_content(issues: Sequence[IntegrityIssue]) -> set[IntegrityIssue]:
    """The issues about internal content: internal messages, hook parts, and messages emptied
    by dropping their hook parts (not those emptied by moving results)."""
    dropped_parts = {i.message_index for i in issues if i.code == "internal-part"}
    return {
        issue
        for issue in issues
        if issue.code in _INTERNAL_CODES
        or (issue.code == "empty-message" and issue.message_index in dropped_parts)
    }


_IssueKey: TypeAlias = tuple[str, int, int | None]


def _key(issue: IntegrityIssue) -> _IssueKey:
    return (issue.code, issue.message_index, issue.part_index)


def _unrepairable(messages: list[Message]) -> set[_IssueKey]:
    """The issues ``repair_messages`` refuses (orphans, duplicates), by code and position."""
    try:
        repair_messages(messages)
    except IntegrityError as error:
        return {_key(issue) for issue in error.issues}
    return set()


def _issue_json(issue: IntegrityIssue, repairable: bool) -> dict[str, Any]:
    return {
        "code": issue.code,
        "message_index": issue.message_index,
        "part_index": issue.part_index,
        "message_id": issue.message_id,
        "call_id": issue.call_id,
        "detail": issue.detail,
        "repairable": repairable,
    }


# ---------------------------------------------------------------------------------------------
# repair


def run_repair(args: argparse.Namespace) -> int:
    """``threadline repair``: write the prepared history; print the report of changes."""
    loaded = load_history(args.file, args.source)
    try:
        repaired = repair_messages(loaded.messages, rename_duplicate_ids=args.rename_duplicate_ids)
    except IntegrityError as error:
        raise CliError(
            f"{loaded.name}: {_integrity_summary(error)}; nothing was written",
            EXIT_ISSUES,
        ) from error
    to_stdout = args.output in (None, "-")
    target = "standard output" if to_stdout else args.output
    fmt = args.format or ("jsonl" if not to_stdout and args.output.endswith(".jsonl") else "json")
    data = _serialize(repaired.messages, fmt)
    if to_stdout:
        _write_stdout(_json_printable(data.decode()).encode())
    else:
        _write_file(Path(args.output), data)
    issues = repaired.report.issues
    lines = [
        f"{loaded.name}: "
        + (f"repaired {_plural(len(issues), 'issue')}" if issues else "nothing to repair")
        + f"; wrote {_plural(len(repaired.messages), 'message')} to {target}"
    ]
    lines += [f"  {issue}" for issue in issues]
    _print_lines(lines, file=sys.stderr if to_stdout else sys.stdout)
    return EXIT_OK


def _serialize(messages: list[Message], fmt: str) -> bytes:
    if fmt == "jsonl":
        # What JsonlStore.replace writes: one message object per line.
        return b"".join(message.model_dump_json().encode() + b"\n" for message in messages)
    return dump_json(messages, indent=2) + b"\n"


def _write_stdout(data: bytes) -> None:
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a text-only stream (tests): the bytes are UTF-8 JSON
        sys.stdout.write(data.decode())
    else:
        buffer.write(data)
        buffer.flush()


def _write_file(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file, so OUT may be the input file.

    The file keeps the permissions it had (a new one gets the usual ``0o666 & ~umask``): the
    temporary file is created private, and renaming would otherwise pass that on.
    """
    try:
        mode = path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask()
        descriptor, temporary = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
        )
    except OSError as error:
        raise CliError(f"cannot write {path}: {error.strerror or error}") from error
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise CliError(f"cannot write {path}: {error.strerror or error}") from error


def _umask() -> int:
    current = os.umask(0o022)  # reading the umask means setting it; put it straight back
    os.umask(current)
    return current


# ---------------------------------------------------------------------------------------------
# convert


def run_convert(args: argparse.Namespace) -> int:
    """``threadline convert``: print ``threadline.encode(history, provider=TO)`` as JSON."""
    loaded = load_history(args.file, args.source)
    try:
        payload = encode(
            loaded.messages,
            provider=args.to,
            system=args.system,
            model=args.model,
            reasoning=args.reasoning,
            unsupported=args.unsupported,
        )
    except IntegrityError as error:
        raise CliError(
            f"{loaded.name}: cannot convert: {_integrity_summary(error)}", EXIT_ISSUES
        ) from error
    except UnsupportedContentError as error:
        raise CliError(f"{loaded.name}: {_one_line(error)}", EXIT_ISSUES) from error
    _print_json(jsonable(payload))
    return EXIT_OK


def jsonable(value: Any) -> Any:
    """``value`` with every ``bytes`` turned into standard base64 text (Bedrock's file bytes).

    Args:
        value: a codec payload: JSON values, and ``bytes`` where a format keeps bytes.
    """
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, Mapping):
        return {key: jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    return value


def _integrity_summary(error: IntegrityError) -> str:
    issues = error.issues
    if not issues:
        return _one_line(error)
    more = f" (and {_plural(len(issues) - 1, 'more issue')})" if len(issues) > 1 else ""
    return f"{_plural(len(issues), 'integrity issue')} that repair cannot fix: {issues[0]}{more}"


# ---------------------------------------------------------------------------------------------
# show


def run_show(args: argparse.Namespace) -> int:
    """``threadline show``: print the transcript."""
    loaded = load_history(args.file, args.source)
    style = Style(use_colour(sys.stdout, args.color))
    _print("\n".join(render_transcript(loaded.messages, style, full=args.full)))
    return EXIT_OK


def use_colour(stream: TextIO, choice: str) -> bool:
    """Whether to colour ``stream``: ``always``, ``never``, or (``auto``) on a terminal when
    ``NO_COLOR`` is unset or empty (https://no-color.org).

    Args:
        stream: where the output goes.
        choice: ``auto``, ``always`` or ``never``.
    """
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class Style:
    """ANSI SGR colours, or nothing when colour is off."""

    _CODES: Final = {
        "bold": "1",
        "dim": "2",
        "red": "31",
        "green": "32",
        "yellow": "33",
        "blue": "34",
        "magenta": "35",
        "cyan": "36",
    }
    _ROLES: Final = {
        "system": "magenta",
        "user": "green",
        "assistant": "cyan",
        "tool": "yellow",
        "internal": "dim",
    }

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, *names: str) -> str:
        if not self.enabled or not names or not text:
            return text
        codes = ";".join(self._CODES[name] for name in names)
        return f"\x1b[{codes}m{text}\x1b[0m"

    def role(self, role: str) -> str:
        return self(role, "bold", self._ROLES.get(role, "bold"))


_FOLD_CHARS: Final = 80
_RESULT_LINES: Final = 6
_RESULT_CHARS: Final = 600
_ARGUMENT_CHARS: Final = 200


@dataclass
class _Result:
    message_index: int
    part: ToolResultPart


def render_transcript(messages: Sequence[Message], style: Style, *, full: bool) -> Iterator[str]:
    """The lines of ``threadline show`` for ``messages``.

    Each message is a header (``[index] role  id``) and its parts, indented. A tool call is
    followed by its results, indented further (a result answers the latest call with its id
    before it, as in integrity); a tool message whose results all appear under their calls is
    not printed again. Reasoning is folded to one line and long results are cut unless
    ``full``.

    Args:
        messages: the history.
        style: colours, or none.
        full: unfold reasoning and print long results and arguments whole.
    """
    results, orphans = _pair_results(messages)
    first = True
    for index, message in enumerate(messages):
        if message.role == "tool" and all(
            (index, p) not in orphans for p in range(len(message.parts))
        ):
            continue
        if not first:
            yield ""
        first = False
        header = f"{style(f'[{index}]', 'dim')} {style.role(message.role)}"
        yield f"{header}  {style(printable(message.id), 'dim')}"
        for part_index, part in enumerate(message.parts):
            if message.role == "tool" and (index, part_index) not in orphans:
                continue
            yield from _part_lines(part, index, part_index, results, style, full=full)


def _pair_results(
    messages: Sequence[Message],
) -> tuple[dict[tuple[int, int], list[_Result]], set[tuple[int, int]]]:
    """Results by the position of the call they answer, and the positions of orphan results."""
    latest: dict[str, tuple[int, int]] = {}
    paired: dict[tuple[int, int], list[_Result]] = {}
    orphans: set[tuple[int, int]] = set()
    for index, message in enumerate(messages):
        for part_index, part in enumerate(message.parts):
            if isinstance(part, ToolCallPart):
                latest[part.id] = (index, part_index)
            elif isinstance(part, ToolResultPart):
                call = latest.get(part.call_id)
                if call is None:
                    orphans.add((index, part_index))
                else:
                    paired.setdefault(call, []).append(_Result(index, part))
    return paired, orphans


def _part_lines(
    part: Part,
    index: int,
    part_index: int,
    results: dict[tuple[int, int], list[_Result]],
    style: Style,
    *,
    full: bool,
) -> Iterator[str]:
    pad = "  "
    if isinstance(part, TextPart):
        if not part.text:
            yield pad + style("(empty text)", "dim")
        else:
            yield from _indented(part.text, pad)
    elif isinstance(part, ReasoningPart):
        yield from _reasoning_lines(part, style, pad, full=full)
    elif isinstance(part, ToolCallPart):
        yield pad + _call_line(part, style, full=full)
        answers = results.get((index, part_index), [])
        for answer in answers:
            yield from _result_lines(answer, index, style, pad + "  ", full=full)
        if not answers:
            yield pad + "  " + style("(no result)", "yellow")
    elif isinstance(part, ToolResultPart):  # an orphan: no call before it
        call = printable(repr(part.call_id))
        yield pad + style(f"result for call {call}, which no earlier call made:", "red")
        yield from _result_lines(_Result(index, part), None, style, pad + "  ", full=full)
    elif isinstance(part, FilePart):
        yield pad + style(_file_label(part), "blue")
    elif isinstance(part, HookPart):
        hook = f"[hook {printable(part.name)}] {_compact(dict(part.state), full=full)}"
        yield pad + style(hook, "dim")
    elif isinstance(part, ProviderToolCallPart):
        what = f"{printable(part.name)} {_compact(part.input, full=full)}"
        where = printable(f"  ({part.id}, {part.provider})")
        yield pad + style("provider call ", "bold") + what + style(where, "dim")
    elif isinstance(part, ProviderToolResultPart):
        label = "error" if part.is_error else "result"
        text = _compact(part.content, full=full)
        colour = "red" if part.is_error else "dim"
        yield pad + "  " + style(f"<- provider {label}:", colour) + f" {text}"
    else:
        assert_never(part)


def _reasoning_lines(part: ReasoningPart, style: Style, pad: str, *, full: bool) -> Iterator[str]:
    facts = [f"{len(part.text)} chars"] if part.text else []
    if part.redacted:
        facts.append("redacted")
    if part.provider:
        facts.append(part.provider if part.model is None else f"{part.provider} {part.model}")
    head = printable(f"[reasoning, {', '.join(facts)}]" if facts else "[reasoning]")
    if full:
        yield pad + style(head, "dim")
        yield from (style(line, "dim") for line in _indented(part.text, pad + "  "))
        return
    text = part.text.strip()
    first = _text_lines(text)[0] if text else ""
    if len(first) > _FOLD_CHARS or len(text) > len(first):
        first = first[:_FOLD_CHARS].rstrip() + " ..."
    yield pad + style(f"{head} {printable(first)}".rstrip(), "dim")


def _call_line(part: ToolCallPart, style: Style, *, full: bool) -> str:
    if part.raw_arguments is not None:
        raw = printable(repr(_cut(part.raw_arguments, full)))
        arguments = style(f"raw {raw} (not a JSON object)", "red")
    else:
        arguments = _compact(dict(part.arguments), full=full)
    return (
        style("call ", "bold")
        + style(printable(part.name), "cyan")
        + f" {arguments}"
        + style(printable(f"  ({part.id})"), "dim")
    )


def _result_lines(
    result: _Result, call_index: int | None, style: Style, pad: str, *, full: bool
) -> Iterator[str]:
    part = result.part
    where = ""
    if call_index is not None and result.message_index != call_index + 1:
        where = f" (from [{result.message_index}])"
    marker = style("<- error" + where + ":", "red") if part.is_error else style("<-" + where, "dim")
    lines = [printable(line, text=True) for line in _text_lines(_result_text(part, full=full))]
    yield f"{pad}{marker} {lines[0]}".rstrip()
    for line in lines[1:]:
        yield f"{pad}   {line}".rstrip()


def _result_text(part: ToolResultPart, *, full: bool) -> str:
    if isinstance(part.content, str):
        text = part.content
    else:
        text = "\n".join(
            item.text if isinstance(item, TextPart) else _file_label(item) for item in part.content
        )
    if full:
        return text
    lines = _text_lines(text)
    cut = "\n".join(lines[:_RESULT_LINES])
    if len(cut) > _RESULT_CHARS:
        cut = cut[:_RESULT_CHARS]
    if len(cut) < len(text):
        cut = cut.rstrip() + f"\n... ({len(text) - len(cut)} more chars; --full shows all)"
    return cut


def _file_label(part: FilePart) -> str:
    facts = [part.media_type]
    facts.append(f"{len(part.data)} bytes" if part.data is not None else str(part.url))
    if part.filename:
        facts.append(part.filename)
    return printable(f"[file {', '.join(facts)}]")


def _compact(value: Any, *, full: bool) -> str:
    return _json_printable(
        _cut(json.dumps(value, ensure_ascii=False, separators=(", ", ": ")), full)
    )


def _cut(text: str, full: bool) -> str:
    if full or len(text) <= _ARGUMENT_CHARS:
        return text
    return text[:_ARGUMENT_CHARS] + " ..."


def _indented(text: str, pad: str) -> Iterator[str]:
    for line in _text_lines(text):
        yield (pad + printable(line, text=True)).rstrip()


def _text_lines(text: str) -> list[str]:
    """The lines of message text: split at newlines only (CRLF counts as one), so every other
    line-breaking control is shown escaped rather than obeyed; ``[""]`` for empty text."""
    return text.replace("\r\n", "\n").split("\n")


# ---------------------------------------------------------------------------------------------
# stats


def run_stats(args: argparse.Namespace) -> int:
    """``threadline stats``: print counts, estimated tokens and attachment bytes."""
    loaded = load_history(args.file, args.source)
    numbers = history_stats(loaded.messages)
    if args.json:
        _print_json({"source": loaded.name, **numbers})
    else:
        _print_lines(_stats_lines(loaded.name, numbers))
    return EXIT_OK


_ROLE_ORDER: Final = ("system", "user", "assistant", "tool", "internal")
_PART_ORDER: Final = (
    "text",
    "reasoning",
    "tool_call",
    "tool_result",
    "file",
    "hook",
    "provider_tool_call",
    "provider_tool_result",
)


def history_stats(messages: Sequence[Message]) -> dict[str, Any]:
    """Counts by role and part type, estimated tokens, and attachments.

    Tokens are :func:`threadline.tokens.estimate_tokens`. Attachments are file parts, also
    those inside tool results: ``inline`` ones with their bytes, ``by_url`` ones counted.

    Args:
        messages: the history.
    """
    roles: Counter[str] = Counter()
    tokens: Counter[str] = Counter()
    parts: Counter[str] = Counter()
    files = {"inline": 0, "inline_bytes": 0, "by_url": 0}
    for message in messages:
        roles[message.role] += 1
        tokens[message.role] += estimate_tokens(message)
        for part in message.parts:
            parts[part.type] += 1
            for file in _files(part):
                if file.data is not None:
                    files["inline"] += 1
                    files["inline_bytes"] += len(file.data)
                else:
                    files["by_url"] += 1
    return {
        "messages": len(messages),
        "roles": {role: roles[role] for role in _ROLE_ORDER if roles[role]},
        "parts": {kind: parts[kind] for kind in _PART_ORDER if parts[kind]},
        "estimated_tokens": sum(tokens.values()),
        "estimated_tokens_by_role": {role: tokens[role] for role in _ROLE_ORDER if roles[role]},
        "attachments": files,
    }


def _files(part: Part) -> Iterator[FilePart]:
    if isinstance(part, FilePart):
        yield part
    elif isinstance(part, ToolResultPart) and not isinstance(part.content, str):
        yield from (item for item in part.content if isinstance(item, FilePart))


def _stats_lines(name: str, numbers: Mapping[str, Any]) -> Iterator[str]:
    files = numbers["attachments"]
    yield (
        f"{name}: {_plural(numbers['messages'], 'message')}, "
        f"{_plural(sum(numbers['parts'].values()), 'part')}, "
        f"~{numbers['estimated_tokens']:,} tokens, "
        f"{_plural(files['inline'] + files['by_url'], 'attachment')}"
    )
    yield ""
    yield f"{'role':<22}{'messages':>9}{'tokens':>9}"
    for role, count in numbers["roles"].items():
        yield f"{role:<22}{count:>9,}{numbers['estimated_tokens_by_role'][role]:>9,}"
    yield f"{'total':<22}{numbers['messages']:>9,}{numbers['estimated_tokens']:>9,}"
    yield ""
    yield f"{'part':<22}{'count':>9}"
    for kind, count in numbers["parts"].items():
        yield f"{kind:<22}{count:>9,}"
    yield ""
    yield (
        f"attachments: {_plural(files['inline'], 'file')} inline ({files['inline_bytes']:,} "
        f"bytes), {files['by_url']:,} by URL"
    )
    yield (
        "tokens are threadline's estimate (4 per message, 1 per 4 characters of content, 256 "
        "per file), not a provider's count"
    )


# ---------------------------------------------------------------------------------------------
# Reading input


def load_history(path: str, provider: str | None = None) -> Loaded:
    """Read a history from ``path`` (``-``: standard input).

    Args:
        path: the file.
        provider: read a provider payload with this codec instead of neutral JSON / JSONL.

    Raises:
        CliError: the file cannot be read, or holds no valid history.
    """
    name, data = _read(path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise CliError(
            f"{name}: not UTF-8 text (byte {error.start} cannot be decoded); expected "
            "threadline JSON, JSON Lines or a provider's JSON payload"
        ) from error
    if not text.strip():
        raise CliError(f"{name}: empty input; expected a history in JSON or JSON Lines")
    try:
        if provider is not None:
            return Loaded(name, _decode_payload(name, text, provider))
        return Loaded(name, _load_neutral(name, text))
    except RecursionError as error:
        raise CliError(f"{name}: the JSON nests too deeply to read") from error


def _read(path: str) -> tuple[str, bytes]:
    if path == "-":
        return _STDIN, sys.stdin.buffer.read()
    try:
        return path, Path(path).read_bytes()
    except OSError as error:
        raise CliError(f"cannot read {path}: {error.strerror or error}") from error


def _decode_payload(name: str, text: str, provider: str) -> list[Message]:
    try:
        payload = _parse(text, name)
    except json.JSONDecodeError as error:
        raise CliError(f"{name}: not JSON ({_json_problem(error)})") from error
    try:
        return decode(payload, provider=provider)
    except (CodecError, ValidationError) as error:
        raise CliError(f"{name}: {_one_line(error)}") from error


def _load_neutral(name: str, text: str) -> list[Message]:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        if _first_line_is_json(text):
            return _load_jsonl(name, text)
        raise CliError(f"{name}: not JSON ({_json_problem(error)})") from error
    except ValueError:
        # An integer longer than json.loads reads. JSON Lines name the line it is on; a
        # document goes to load_json, which says where it stops (or reads it: its own bound).
        if _first_line_is_json(text):
            return _load_jsonl(name, text)
        document = None
    if document is not None:
        _check_text(document, text, name)
    if isinstance(document, dict) and "format" not in document:
        if "role" in document and "parts" in document:  # JSON Lines with one message
            return _validated([document], f"{name}:1")
        if _PROVIDER_KEYS & document.keys():
            raise CliError(
                f"{name}: not a threadline history but it looks like a provider request; "
                f"pass --from PROVIDER ({', '.join(codec_names())})"
            )
    try:
        # A file the operator chose is trusted: no size limits (nesting still has a ceiling),
        # so a long history with inline images reads whole.
        return load_json(text, limits=Limits.none())
    except ValidationError as error:
        raise CliError(f"{name}: {_one_line(error)}") from error


def _first_line_is_json(text: str) -> bool:
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        return isinstance(json.loads(first), (dict, list))
    except json.JSONDecodeError:
        return False
    except ValueError:  # JSON with an integer too long to read: _load_jsonl names the line
        return True


def _load_jsonl(name: str, text: str) -> list[Message]:
    """Messages from JSON Lines as ``JsonlStore`` writes them: one batch per line, and a torn
    last line skipped by the store's own rule (:func:`~threadline.stores.jsonl.read_batch_lines`).
    """
    numbered = [(number, line) for number, line in enumerate(text.split("\n"), 1) if line.strip()]
    values = read_batch_lines(
        numbered,
        lambda number, line: _parse(line, f"{name}:{number}"),
        torn=lambda number, line: _warn(
            f"{name}:{number}: skipped a torn last line ({len(line)} characters), left by "
            "a write that was cut short, as JsonlStore does"
        ),
        damaged=lambda number, error: CliError(
            # _parse lets no other ValueError through: a too long integer is a CliError
            f"{name}:{number}: not JSON ({_json_problem(cast(json.JSONDecodeError, error))}), "
            "and not the last line, so not a torn write: the file is damaged"
        ),
    )
    messages: list[Message] = []
    for number, value in values:
        if not isinstance(value, (dict, list)):
            raise CliError(
                f"{name}:{number}: expected a message object or an array of messages, "
                f"got {type(value).__name__}"
            )
        messages.extend(
            _validated(value if isinstance(value, list) else [value], f"{name}:{number}")
        )
    return messages


def _parse(text: str, where: str) -> Any:
    """``json.loads(text)``, for a value used as it is read; ``where`` names it in errors.

    Raises:
        json.JSONDecodeError: ``text`` is not JSON.
        CliError: an integer in it is longer than Python reads (``sys.set_int_max_str_digits``),
            or a string in it holds a lone surrogate.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        raise
    except ValueError as error:  # the only other error json.loads raises: a too long integer
        raise CliError(
            f"{where}: an integer has more than {sys.get_int_max_str_digits():,} digits, "
            "more than Python reads as a number"
        ) from error
    _check_text(value, text, where)
    return value


_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")
# The text is strict UTF-8, so a surrogate can only come from an escape (a pair or a lone one).
_SURROGATE_ESCAPE: Final = re.compile(r"\\u[dD][89a-fA-F]")


def _check_text(value: Any, text: str, where: str) -> None:
    """Refuse ``value`` (parsed from ``text``) if a string or key in it holds a lone surrogate,
    naming where.

    ``json.loads`` reads an escape such as ``"\\ud800"`` into a string that UTF-8 cannot
    encode, so nothing could be printed or written from it (pydantic-core's reader, behind
    ``load_json``, refuses it outright).
    """
    if not _SURROGATE_ESCAPE.search(text):
        return  # the common case: no surrogate escape at all
    if not _SURROGATE.search(json.dumps(value, ensure_ascii=False)):
        return  # escaped pairs only, read as the characters they stand for
    what, char = _find_surrogate(value)
    raise CliError(
        f"{where}: {what} holds a lone surrogate ({ascii(char)[1:-1]}), which is not Unicode "
        "text; fix the text encoding of whatever wrote the file"
    )


def _find_surrogate(value: Any) -> tuple[str, str]:
    """The first string or key of ``value`` (in document order) holding a lone surrogate, as
    ``(description, the surrogate)``."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            found = _SURROGATE.search(item)
            if found is not None:
                return f"the string at {path.lstrip('.') or 'the top level'}", found.group()
        elif isinstance(item, dict):
            children = []
            for key, child in item.items():
                step = f".{key}" if key.isidentifier() else f"[{json.dumps(key)}]"
                found = _SURROGATE.search(key)
                if found is not None:
                    return f"the key {(path + step).lstrip('.')}", found.group()
                children.append((child, path + step))
            stack.extend(reversed(children))
        elif isinstance(item, list):
            stack.extend((item[i], f"{path}[{i}]") for i in range(len(item) - 1, -1, -1))
    raise AssertionError("no lone surrogate found")  # pragma: no cover - checked by the caller


def _validated(items: list[Any], where: str) -> list[Message]:
    try:
        return [Message.model_validate(item) for item in items]
    except pydantic.ValidationError as error:
        raise CliError(_one_line(translate_errors(error, f"{where}: invalid message"))) from error


# ---------------------------------------------------------------------------------------------
# Small helpers


def _print(text: str) -> None:
    print(text, file=sys.stdout)


def _print_lines(lines: Iterable[str], file: TextIO | None = None) -> None:
    """Print lines of plain text, escaping what a terminal would act on in each."""
    print("\n".join(map(printable, lines)), file=file or sys.stdout)


def _print_json(value: Any) -> None:
    _print(_json_printable(json.dumps(value, indent=2, ensure_ascii=False)))


def _warn(message: str) -> None:
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


def _json_printable(text: str) -> str:
    """JSON text with what a terminal would act on escaped inside its strings (``\\u009b``):
    the same JSON value, safe to print."""
    return _UNSAFE_IN_JSON.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def _one_line(error: BaseException) -> str:
    """An error as one line: a ValidationError's summary and its first problem."""
    if isinstance(error, ValidationError) and error.errors:
        summary = re.sub(r": \d+ problems?$", "", str(error).splitlines()[0])
        first = str(error.errors[0])
        if summary.endswith(first):  # a one-problem error that says it all in its summary
            return summary
        more = len(error.errors) - 1
        tail = f" (and {_plural(more, 'more problem')})" if more else ""
        return f"{summary}: {first}{tail}"
    if isinstance(error, ThreadlineError):
        return " ".join(line.strip() for line in str(error).splitlines() if line.strip())
    return " ".join(str(error).split()) or type(error).__name__


def _json_problem(error: json.JSONDecodeError) -> str:
    return f"{error.msg} at line {error.lineno} column {error.colno}"


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


def _quoted(name: str) -> str:
    return name if re.fullmatch(r"[\w./-]+", name) else json.dumps(name)
