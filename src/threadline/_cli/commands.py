"""The commands: each reads FILE or a stored conversation, does its one thing and prints,
returning the exit status (``view`` writes an HTML page); and ``list``, which pages a store's
conversation ids."""

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
from threadline._cli.render import Style
from threadline._cli.render import render_transcript
from threadline._cli.render import use_colour
from threadline._cli.stores import FORMS
from threadline._cli.stores import id_problem
from threadline._cli.stores import info_json
from threadline._cli.stores import load_source
from threadline._cli.stores import open_store
from threadline._cli.stores import redacted
from threadline._cli.stores import store_errors
from threadline._view._page import render_page
from threadline._view._seal import SealVerdict
from threadline._view._seal import seal_verdict
from threadline.codecs import encode
from threadline.errors import ConflictError
from threadline.errors import IntegrityError
from threadline.errors import UnsupportedContentError
from threadline.errors import ValidationError
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
from threadline.stores import ConversationInfo
from threadline.stores import validate_conversation_id
from threadline.tokens import estimate_tokens
from threadline.usage import Usage

__all__ = [
    "history_stats",
    "jsonable",
    "recorded_usage",
    "run_check",
    "run_convert",
    "run_list",
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
    loaded = load_source(args)
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
            yield f"all can be repaired: threadline repair {_repair_source(loaded)}"
    if internal:
        yield (
            f"note: {plural(internal, 'item')} of internal content (UI or resume state) "
            "would be dropped before a model call; --strict counts them as issues"
        )


def _repair_source(loaded: Loaded) -> str:
    if loaded.store is not None:
        return f"--store {quoted(loaded.store)} --conversation {loaded.conversation} --write-back"
    return ("-" if loaded.name == STDIN else quoted(loaded.name)) + " -o FIXED"


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
    """``threadline repair``: write the prepared history; print the report of changes.

    With ``--write-back`` the history replaces the stored conversation it was read from, in
    one atomic ``replace`` that only happens while the conversation is still at the version
    that was read (a writer in between: nothing is written)."""
    write_back = getattr(args, "write_back", False)
    if write_back and getattr(args, "store", None) is None:
        raise CliError(
            "--write-back replaces the stored conversation: it needs --store URL "
            "--conversation ID (for a file, write with -o OUT)"
        )
    if write_back and args.output is not None:
        raise CliError("--write-back and -o both say where to write: give one of them")
    loaded = load_source(args)
    try:
        repaired = repair_messages(
            loaded.messages, rename_duplicate_ids=args.rename_duplicate_ids, pending=args.pending
        )
    except IntegrityError as error:
        raise CliError(
            f"{loaded.name}: {_integrity_summary(error)}; nothing was written",
            EXIT_ISSUES,
        ) from error
    if write_back:
        return _write_back(args.store, loaded, repaired.messages, repaired.report)
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


def _write_back(url: str, loaded: Loaded, messages: list[Message], report: IntegrityReport) -> int:
    """Replace the stored conversation with ``messages``, if it is still as it was read."""
    issues = report.issues
    if not issues:
        lines = [f"{loaded.name}: nothing to repair; the store was not written"]
    elif not messages:
        raise CliError(
            f"{loaded.name}: the repaired history holds no message, and replacing a stored "
            "conversation with none deletes it; nothing was written (use -o OUT to see it)",
            EXIT_ISSUES,
        )
    else:
        assert loaded.conversation is not None
        assert loaded.version is not None
        with open_store(url) as store, store_errors(url):
            try:
                store.replace(loaded.conversation, messages, expected_version=loaded.version)
            except ConflictError as error:
                raise CliError(
                    f"{loaded.name}: the conversation was written since it was read (version "
                    f"{loaded.version}); nothing was written: run repair again"
                ) from error
        lines = [
            f"{loaded.name}: repaired {plural(len(issues), 'issue')}; replaced the stored "
            f"conversation with {plural(len(messages), 'message')} (version {loaded.version} "
            f"to {loaded.version + 1})"
        ]
    print_lines([*lines, *(f"  {issue}" for issue in issues), *_pending_lines(report)])
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
    loaded = load_source(args)
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
# list


def run_list(args: argparse.Namespace) -> int:
    """``threadline list``: a page of the store's conversation ids with what each holds, and
    the ``--after`` that reads the next page."""
    url: str | None = args.store
    if url is None:
        raise CliError(f"list needs --store URL: {FORMS}")
    after: str | None = args.after
    if after is not None:
        try:
            validate_conversation_id(after)
        except ValidationError as error:
            raise CliError(f"--after: {id_problem(error)}") from error
    with open_store(url) as store, store_errors(url):
        # One more than the page tells whether a next page exists.
        ids = store.list_conversations(limit=args.limit + 1, after=after)
        page = ids[: args.limit]
        infos = [(cid, store.conversation_info(cid)) for cid in page]
    next_after = page[-1] if len(ids) > len(page) else None
    if args.json:
        rows = [
            info_json(info) if info is not None else {"id": cid, "deleted": True}
            for cid, info in infos
        ]
        print_json({"store": redacted(url), "conversations": rows, "next_after": next_after})
    else:
        print_lines(_list_lines(redacted(url), infos, after, next_after, args.limit))
    return EXIT_OK


def _list_lines(
    url: str,
    infos: list[tuple[str, ConversationInfo | None]],
    after: str | None,
    next_after: str | None,
    limit: int,
) -> Iterator[str]:
    if not infos:
        yield f"{url}: no conversations" + ("" if after is None else f" after {after}")
        return
    width = max(len("id"), *(len(cid) for cid, _ in infos)) + 2
    yield f"{'id':<{width}}{'messages':>9}{'version':>9}  updated"
    for cid, info in infos:
        if info is None:
            yield f"{cid:<{width}}  (deleted since it was listed)"
            continue
        updated = "-" if info.updated_at is None else info.updated_at.isoformat(timespec="seconds")
        branch = "" if info.parent is None else f"  (fork of {info.parent[0]} at {info.parent[1]})"
        yield f"{cid:<{width}}{info.messages:>9,}{info.version:>9,}  {updated}{branch}"
    if next_after is not None:
        yield (f"more: threadline list --store {quoted(url)} --after {next_after} --limit {limit}")


# ---------------------------------------------------------------------------------------------
# show


def run_show(args: argparse.Namespace) -> int:
    """``threadline show``: print the transcript."""
    loaded = load_source(args)
    style = Style(use_colour(sys.stdout, args.color))
    print_text("\n".join(render_transcript(loaded.messages, style, full=args.full)))
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# stats


def run_stats(args: argparse.Namespace) -> int:
    """``threadline stats``: print counts, estimated tokens and attachment bytes."""
    loaded = load_source(args)
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
    """Counts by role and part type, estimated tokens, attachments, and the usage the
    messages recorded (``"usage"``, see `recorded_usage`).

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
        "usage": recorded_usage(messages),
    }


_NO_MODEL: Final = "(model not recorded)"


def recorded_usage(messages: Sequence[Message]) -> dict[str, Any]:
    """The usage the messages recorded (`Message.usage`, which ``decode_response`` writes), in
    total and by the model in ``metadata["model"]`` (``None`` where none is named), in the
    order each model first appears.

    Args:
        messages: the history.
    """
    total = Usage()
    by_model: dict[str | None, tuple[int, Usage]] = {}
    for message in messages:
        usage = message.usage
        if usage is None:
            continue
        model = message.metadata.get("model")
        key = model if isinstance(model, str) else None
        calls, so_far = by_model.get(key, (0, Usage()))
        by_model[key] = (calls + 1, so_far + usage)
        total = total + usage
    return {
        "messages": sum(calls for calls, _ in by_model.values()),
        "total": total.to_dict(),
        "by_model": [
            {"model": model, "messages": calls, **usage.to_dict()}
            for model, (calls, usage) in by_model.items()
        ],
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
    yield ""
    yield from _usage_lines(numbers["usage"])


_USAGE_COLUMNS: Final = (
    ("messages", "messages"),
    ("input", "input_tokens"),
    ("output", "output_tokens"),
    ("cache read", "cache_read_tokens"),
    ("cache write", "cache_write_tokens"),
    ("reasoning", "reasoning_tokens"),
)


def _usage_lines(usage: Mapping[str, Any]) -> Iterator[str]:
    if not usage["messages"]:
        yield 'usage recorded: none (no message holds metadata["usage"])'
        return
    yield (
        f"usage recorded by {plural(usage['messages'], 'message')} (the providers' counts; "
        "input includes cache reads and writes, output includes reasoning):"
    )
    width = max(22, *(len(_model_name(row["model"])) + 2 for row in usage["by_model"]))
    yield f"{'model':<{width}}" + "".join(f"{title:>13}" for title, _ in _USAGE_COLUMNS)
    for row in usage["by_model"]:
        yield f"{_model_name(row['model']):<{width}}" + "".join(
            f"{row[key]:>13,}" for _, key in _USAGE_COLUMNS
        )
    total = {"messages": usage["messages"], **usage["total"]}
    yield f"{'total':<{width}}" + "".join(f"{total[key]:>13,}" for _, key in _USAGE_COLUMNS)


def _model_name(model: str | None) -> str:
    if model is None:
        return _NO_MODEL
    return model if len(model) <= 60 else model[:57] + "..."


# ---------------------------------------------------------------------------------------------
# view


def run_view(args: argparse.Namespace) -> int:
    """``threadline view``: write the history as one self-contained HTML page; exit 1 when a
    seal was checked and does not match (the page is written, and says so)."""
    loaded = load_source(args)
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
    conversation = args.seal_conversation
    if conversation is None and args.seal_key is not None and args.store is not None:
        conversation = args.conversation  # the stored conversation's id is the one sealed
    given = [args.seal_key, args.seal, conversation]
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
            messages, args.seal, _seal_key(args.seal_key), conversation_id=conversation
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
