"""The six commands: each reads FILE, does its one thing and prints, returning the exit status."""

from __future__ import annotations

import argparse
import base64
import binascii
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from typing import Final
from typing import TypeAlias
from typing import get_args

from threadline._cli.output import EXIT_ISSUES
from threadline._cli.output import EXIT_OK
from threadline._cli.output import STDIN
from threadline._cli.output import CliError
from threadline._cli.output import json_printable
from threadline._cli.output import one_line
from threadline._cli.output import plural
from threadline._cli.output import print_json
from threadline._cli.output import print_lines
from threadline._cli.output import print_text
from threadline._cli.output import quoted
from threadline._cli.reading import Loaded
from threadline._cli.reading import load_history
from threadline._cli.render import Style
from threadline._cli.render import render_transcript
from threadline._cli.render import use_colour
from threadline._view._page import render_page
from threadline._view._seal import SealVerdict
from threadline._view._seal import seal_verdict
from threadline.codecs import encode
from threadline.errors import IntegrityError
from threadline.errors import UnsupportedContentError
from threadline.integrity import IntegrityIssue
from threadline.integrity import IntegrityReport
from threadline.integrity import Pending
from threadline.integrity import check_messages
from threadline.integrity import repair_messages
from threadline.messages import PART_BY_TAG
from threadline.messages import FilePart
from threadline.messages import Message
from threadline.messages import Part
from threadline.messages import Role
from threadline.messages import ToolResultPart
from threadline.serialization import dump_json
from threadline.tokens import estimate_tokens

__all__ = [
    "history_stats",
    "jsonable",
    "run_check",
    "run_convert",
    "run_repair",
    "run_show",
    "run_stats",
    "run_view",
]

# Stripped before every model call in both modes, and normal in a stored history (UI and resume
# state): a plain `check` does not count them, `check --strict` does.
_INTERNAL_CODES: Final = frozenset({"internal-message", "internal-part"})


# ---------------------------------------------------------------------------------------------
# check


def run_check(args: argparse.Namespace) -> int:
    """``threadline check``: print the integrity report; exit 1 when it counts any issue."""
    loaded = load_history(args.file, args.source)
    report = check_messages(loaded.messages, pending=args.pending)
    internal_only = set() if args.strict else _internal_content(report.issues)
    counted = [issue for issue in report.issues if issue not in internal_only]
    internal = len(report.issues) - len(counted)
    unrepairable = _unrepairable(loaded.messages, args.pending) if counted else set()
    if args.json:
        document = {
            "source": loaded.name,
            "messages": len(loaded.messages),
            "strict": args.strict,
            "ok": not counted,
            "issues": [_issue_json(i, _key(i) not in unrepairable) for i in counted],
            "internal_content": internal,
            "pending_choice": report.pending_choice,
            "pending": [_issue_json(i, True) for i in report.pending],
        }
        print_json(document)
    else:
        print_lines(
            [*_check_lines(loaded, counted, internal, unrepairable), *_pending_lines(report)]
        )
    return EXIT_ISSUES if counted else EXIT_OK


def _check_lines(
    loaded: Loaded, issues: list[IntegrityIssue], internal: int, unrepairable: set[_IssueKey]
) -> Iterator[str]:
    count = plural(len(loaded.messages), "message")
    if not issues:
        yield f"{loaded.name}: no integrity issues ({count})"
    else:
        yield f"{loaded.name}: {plural(len(issues), 'integrity issue')} in {count}"
        for issue in issues:
            mark = "  [not repairable automatically]" if _key(issue) in unrepairable else ""
            yield f"  {issue}{mark}"
        fatal = sum(_key(issue) in unrepairable for issue in issues)
        if fatal:
            yield (
                f"{plural(fatal, 'issue')} cannot be repaired automatically (which call a "
                "result answers would be a guess): fix or drop the parts named above"
            )
        else:
            source = "-" if loaded.name == STDIN else quoted(loaded.name)
            yield f"all can be repaired: threadline repair {source} -o FIXED"
    if internal:
        yield (
            f"note: {plural(internal, 'item')} of internal content (UI or resume state) "
            "would be dropped before a model call; --strict counts them as issues"
        )


def _pending_lines(report: IntegrityReport) -> Iterator[str]:
    if report.pending:
        count = plural(len(report.pending), "pending tool call")
        yield f"{count} (--pending {report.pending_choice}):"
        for issue in report.pending:
            yield f"  {issue}"


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


def _unrepairable(messages: list[Message], pending: Pending) -> set[_IssueKey]:
    """The issues ``repair_messages`` refuses (orphans, duplicates), by code and position."""
    try:
        repair_messages(messages, pending=pending)
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
        repaired = repair_messages(
            loaded.messages, rename_duplicate_ids=args.rename_duplicate_ids, pending=args.pending
        )
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
        _write_stdout(json_printable(data.decode()).encode())
    else:
        _write_file(Path(args.output), data)
    issues = repaired.report.issues
    lines = [
        f"{loaded.name}: "
        + (f"repaired {plural(len(issues), 'issue')}" if issues else "nothing to repair")
        + f"; wrote {plural(len(repaired.messages), 'message')} to {target}"
    ]
    lines += [f"  {issue}" for issue in issues]
    lines += _pending_lines(repaired.report)
    print_lines(lines, file=sys.stderr if to_stdout else sys.stdout)
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
        # What encode's integrity="auto" runs, done here to report what it changed.
        repaired = repair_messages(loaded.messages)
        payload = encode(
            repaired.messages,
            provider=args.to,
            system=args.system,
            model=args.model,
            reasoning=args.reasoning,
            unsupported=args.unsupported,
            text_files=args.text_files,
        )
    except IntegrityError as error:
        raise CliError(
            f"{loaded.name}: cannot convert: {_integrity_summary(error)}", EXIT_ISSUES
        ) from error
    except UnsupportedContentError as error:
        raise CliError(f"{loaded.name}: {one_line(error)}", EXIT_ISSUES) from error
    print_json(jsonable(payload))
    issues = repaired.report.issues
    if issues:  # stdout is the payload: the report goes to stderr, as `repair -o -` does
        lines = [
            f"{loaded.name}: repaired {plural(len(issues), 'issue')} before converting to {args.to}"
        ]
        print_lines(lines + [f"  {issue}" for issue in issues], file=sys.stderr)
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
        return one_line(error)
    more = f" (and {plural(len(issues) - 1, 'more issue')})" if len(issues) > 1 else ""
    return f"{plural(len(issues), 'integrity issue')} that repair cannot fix: {issues[0]}{more}"


# ---------------------------------------------------------------------------------------------
# show


def run_show(args: argparse.Namespace) -> int:
    """``threadline show``: print the transcript."""
    loaded = load_history(args.file, args.source)
    style = Style(use_colour(sys.stdout, args.color))
    print_text("\n".join(render_transcript(loaded.messages, style, full=args.full)))
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# stats


def run_stats(args: argparse.Namespace) -> int:
    """``threadline stats``: print counts, estimated tokens and attachment bytes."""
    loaded = load_history(args.file, args.source)
    numbers = history_stats(loaded.messages)
    if args.json:
        print_json({"source": loaded.name, **numbers})
    else:
        print_lines(_stats_lines(loaded.name, numbers))
    return EXIT_OK


# Roles and part types in the order messages.py declares them, read from the types themselves,
# so a new part type is counted without an edit here.
_ROLE_ORDER: Final[tuple[str, ...]] = get_args(Role)
_PART_ORDER: Final[tuple[str, ...]] = tuple(PART_BY_TAG)


def history_stats(messages: Sequence[Message]) -> dict[str, Any]:
    """Counts by role and part type, estimated tokens, and attachments.

    Tokens are `threadline.tokens.estimate_tokens`. Attachments are file parts, also
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
        f"{name}: {plural(numbers['messages'], 'message')}, "
        f"{plural(sum(numbers['parts'].values()), 'part')}, "
        f"~{numbers['estimated_tokens']:,} tokens, "
        f"{plural(files['inline'] + files['by_url'], 'attachment')}"
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
        f"attachments: {plural(files['inline'], 'file')} inline ({files['inline_bytes']:,} "
        f"bytes), {files['by_url']:,} by URL"
    )
    yield (
        "tokens are threadline's estimate (4 per message, 1 per 4 characters of content, 256 "
        "per file), not a provider's count"
    )


# ---------------------------------------------------------------------------------------------
# view


def run_view(args: argparse.Namespace) -> int:
    """``threadline view``: write the history as one self-contained HTML page; exit 1 when a
    seal was checked and does not match (the page is written, and says so)."""
    loaded = load_history(args.file, args.source)
    verdict = _verdict(args, loaded.messages)
    page = render_page(loaded.messages, title=loaded.name, verdict=verdict).encode("utf-8")
    if args.output in (None, "-"):
        _write_stdout(page)
    else:
        _write_file(Path(args.output), page)
        lines = [f"{loaded.name}: wrote {plural(len(loaded.messages), 'message')} to {args.output}"]
        print_lines(lines + ([verdict.detail] if verdict is not None else []))
    return EXIT_ISSUES if verdict is not None and not verdict.ok else EXIT_OK


_SEAL_OPTIONS: Final = ("--seal-key", "--seal", "--seal-conversation")


def _verdict(args: argparse.Namespace, messages: list[Message]) -> SealVerdict | None:
    given = [args.seal_key, args.seal, args.seal_conversation]
    if all(value is None for value in given):
        return None
    missing = [name for name, value in zip(_SEAL_OPTIONS, given, strict=True) if value is None]
    if missing:
        raise CliError(
            f"checking a seal needs {', '.join(_SEAL_OPTIONS)} together; "
            f"missing {', '.join(missing)}"
        )
    try:
        return seal_verdict(
            messages, args.seal, _seal_key(args.seal_key), conversation_id=args.seal_conversation
        )
    except ValueError as error:  # a key too short, an empty conversation id
        raise CliError(f"--seal-key: {one_line(error)}") from error


def _seal_key(text: str) -> bytes:
    """The key ``--seal-key`` names: ``hex:...``, ``base64:...``, ``env:NAME`` (a variable
    holding one of those) or ``file:PATH`` (the key's raw bytes); never echoed in errors."""
    scheme, colon, value = text.partition(":")
    if scheme == "env" and colon:
        held = os.environ.get(value)
        if held is None:
            raise CliError(f"--seal-key: the environment variable {value!r} is not set")
        if held.startswith(("env:", "file:")):
            raise CliError(f"--seal-key: ${value} must hold hex:... or base64:..., not a name")
        return _seal_key(held)
    if scheme == "file" and colon:
        try:
            return Path(value).read_bytes()
        except OSError as error:
            raise CliError(f"--seal-key: cannot read {value}: {error.strerror or error}") from error
    try:
        if scheme == "hex" and colon:
            return bytes.fromhex(value)
        if scheme == "base64" and colon:
            standard = value.strip().replace("-", "+").replace("_", "/")
            return base64.b64decode(standard + "=" * (-len(standard) % 4), validate=True)
    except (ValueError, binascii.Error) as error:
        raise CliError(f"--seal-key: the {scheme} key does not decode") from error
    raise CliError(
        "--seal-key takes hex:KEY, base64:KEY, env:NAME (a variable holding hex:... or "
        "base64:...) or file:PATH (the key's raw bytes)"
    )
