"""The page ``threadline view`` writes, and the fragments notebooks show.

A page is a header (the counts, the total usage, the seal's verdict, every integrity issue and
every file, each linked to its message) and then every message in order: its role, id, time,
model and usage, and its parts. A tool call is drawn with its results beside it; a tool message
whose results all stand beside their calls keeps only its header (links point to it). Integrity
is read as a live history is (``pending="keep"``): a pending call is marked, not an issue, and
internal content (internal messages, hook parts) is marked as such rather than as a defect.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from collections.abc import Sequence
from typing import Final

from threadline._usage_readers import total_usage
from threadline._view._escape import CSP
from threadline._view._escape import CSS
from threadline._view._escape import PAGE_CSS
from threadline._view._escape import text_html
from threadline._view._parts import Placed
from threadline._view._parts import Position
from threadline._view._parts import View
from threadline._view._parts import file_label
from threadline._view._parts import part_html
from threadline._view._seal import SealVerdict
from threadline.integrity import IntegrityIssue
from threadline.integrity import check_messages
from threadline.messages import FilePart
from threadline.messages import Message
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart
from threadline.usage import Usage

__all__ = ["fragment", "history_fragment", "message_fragment", "render_page"]

NOTEBOOK_MESSAGES: Final = 500
"""How many of a history's newest messages its notebook view shows."""

_LISTED: Final = 200
"""How many issues and files the header lists before "and N more"."""

# Normal in a stored history (UI and resume state) and dropped before every model call: marked
# where they are, not highlighted as defects (as `threadline check` counts them only --strict).
_INTERNAL_CODES: Final = frozenset({"internal-message", "internal-part"})


def render_page(
    messages: Sequence[Message], *, title: str, verdict: SealVerdict | None = None
) -> str:
    """One self-contained HTML page for ``messages``: no script, no request to any server.

    Args:
        messages: the history.
        title: what the page is of (a file name); escaped like everything else.
        verdict: the seal's verdict, when a key was given.
    """
    body = "".join(_document(messages, title, verdict))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="referrer" content="no-referrer">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{text_html(title)} · threadline</title><style>{PAGE_CSS}</style></head>"
        f'<body><div class="tl">{body}</div></body></html>\n'
    )


def history_fragment(messages: Sequence[Message], *, last: int = NOTEBOOK_MESSAGES) -> str:
    """A history as an HTML fragment with its own scoped stylesheet (a notebook's output).

    The header covers the whole history (counts, usage, issues, files); the messages shown are
    the ``last`` ones, with their indexes in the history, so a long run does not fill the
    notebook (``threadline view`` writes them all).

    Args:
        messages: the history.
        last: how many of the newest messages to show.
    """
    start = max(0, len(messages) - last)
    title = f"History, {_count(len(messages), 'message')}"
    body = "".join(_document(messages, title, None, start=start))
    return f'<div class="tl"><style>{CSS}</style>{body}</div>'


def message_fragment(message: Message) -> str:
    """One message as an HTML fragment: its parts, with no results beside its calls (they are
    in other messages) and no integrity check (that needs the history).

    Args:
        message: the message.
    """
    card = _message(message, 0, View(paired=False), None, shown_apart=())
    return f'<div class="tl"><style>{CSS}</style>{card}</div>'


def fragment(shown: object) -> str:
    """A ``Message`` or a ``History`` (its snapshot) as a notebook's HTML fragment.

    Args:
        shown: the message or history whose ``_repr_html_`` was called.

    Raises:
        TypeError: ``shown`` is neither.
    """
    if isinstance(shown, Message):
        return message_fragment(shown)
    snapshot = getattr(shown, "snapshot", None)
    if snapshot is None:
        raise TypeError(f"no HTML view for a {type(shown).__name__}")
    return history_fragment(snapshot())


def _document(
    messages: Sequence[Message], title: str, verdict: SealVerdict | None, *, start: int = 0
) -> Iterator[str]:
    results, orphans = _pair_results(messages)
    report = check_messages(messages, pending="keep")
    issues = _defects(report.issues)
    by_place: dict[tuple[int, int | None], list[IntegrityIssue]] = {}
    for issue in issues:
        by_place.setdefault((issue.message_index, issue.part_index), []).append(issue)
    pending = frozenset(issue.call_id for issue in report.pending if issue.call_id is not None)
    flagged = frozenset(issue.message_index for issue in issues)
    view = View(results=results, issues=by_place, pending=pending, flagged=flagged)
    yield from _header(messages, title, verdict, issues)
    if start:
        yield (
            f'<p class="facts">Showing messages {start:,} to {len(messages) - 1:,}; '
            "<code>threadline view</code> writes them all.</p>"
        )
    sealed = verdict.sealed if verdict is not None else None
    for index in range(start, len(messages)):
        message = messages[index]
        added = sealed is not None and index >= sealed
        yield _message(message, index, view, "added after sealing" if added else None, orphans)
    yield "</main>"


def _defects(issues: Sequence[IntegrityIssue]) -> list[IntegrityIssue]:
    """The issues that are defects: not internal content, nor a message emptied by dropping
    its hook parts."""
    hooks = {issue.message_index for issue in issues if issue.code == "internal-part"}
    return [
        issue
        for issue in issues
        if issue.code not in _INTERNAL_CODES
        and not (issue.code == "empty-message" and issue.message_index in hooks)
    ]


def _pair_results(
    messages: Sequence[Message],
) -> tuple[dict[Position, list[Placed]], set[Position]]:
    """Results by the position of the call they answer (the latest call with the id before
    them), and the positions of the results no earlier call made."""
    latest: dict[str, Position] = {}
    paired: dict[Position, list[Placed]] = {}
    orphans: set[Position] = set()
    for index, message in enumerate(messages):
        for part_index, part in enumerate(message.parts):
            if type(part) is ToolCallPart:
                latest[part.id] = (index, part_index)
            elif type(part) is ToolResultPart:
                call = latest.get(part.call_id)
                if call is None:
                    orphans.add((index, part_index))
                else:
                    paired.setdefault(call, []).append(Placed(index, part_index, part))
    return paired, orphans


def _header(
    messages: Sequence[Message],
    title: str,
    verdict: SealVerdict | None,
    issues: Sequence[IntegrityIssue],
) -> Iterator[str]:
    roles = Counter(message.role for message in messages)
    counts = ", ".join(f"{count:,} {role}" for role, count in roles.items())
    usage = total_usage(message.usage for message in messages)
    yield f"<header><h1>{text_html(title)}</h1>"
    yield f'<p class="facts">{_count(len(messages), "message")}{": " if counts else ""}{counts}. '
    yield f"Usage recorded: {_usage_text(usage) if usage != Usage() else 'none'}.</p>"
    if verdict is not None:
        mood = "ok" if verdict.ok else "bad"
        yield f'<div class="verdict {mood}">{text_html(verdict.detail)}</div>'
    yield '<div class="summary">'
    if issues:
        yield f'<div class="issue"><b>{_count(len(issues), "integrity issue")}</b></div><ul>'
        for issue in issues[:_LISTED]:
            yield (
                f'<li><a href="#m{issue.message_index}">{text_html(issue.location)}</a> '
                f"<b>{text_html(issue.code)}</b> {text_html(issue.detail)}</li>"
            )
        yield f"{_more(len(issues))}</ul>"
    else:
        yield "<div>No integrity issues.</div>"
    files = list(_files(messages))
    if files:
        yield f"<div>{_count(len(files), 'file')}:</div><ul>"
        for index, part in files[:_LISTED]:
            yield f'<li><a href="#m{index}">message {index}</a> {file_label(part)}</li>'
        yield f"{_more(len(files))}</ul>"
    yield "</div></header><main>"


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _more(count: int) -> str:
    return f"<li>and {count - _LISTED:,} more</li>" if count > _LISTED else ""


def _files(messages: Sequence[Message]) -> Iterator[tuple[int, FilePart]]:
    for index, message in enumerate(messages):
        for part in message.parts:
            if isinstance(part, FilePart):
                yield index, part
            elif isinstance(part, ToolResultPart) and not isinstance(part.content, str):
                for item in part.content:
                    if isinstance(item, FilePart):
                        yield index, item


def _usage_text(usage: Usage) -> str:
    facts = [f"input {usage.input_tokens:,}", f"output {usage.output_tokens:,}"]
    if usage.cache_read_tokens:
        facts.append(f"cache read {usage.cache_read_tokens:,}")
    if usage.cache_write_tokens:
        facts.append(f"cache write {usage.cache_write_tokens:,}")
    if usage.reasoning_tokens:
        facts.append(f"reasoning {usage.reasoning_tokens:,}")
    return " · ".join(facts) + " tokens"


def _message(
    message: Message,
    index: int,
    view: View,
    mark: str | None,
    shown_apart: set[Position] | tuple[()],
) -> str:
    """One message as a card. Tool results beside their calls are left out of a tool message
    (``shown_apart`` holds the positions of those that are not: orphans)."""
    role = message.role
    parts = [
        part_html(part, (index, part_index), view)
        for part_index, part in enumerate(message.parts)
        if not (view.paired and role == "tool" and (index, part_index) not in shown_apart)
    ]
    head = [
        f'<span class="role">{role}</span>',
        f'<a class="meta" href="#m{index}">#{index}</a>',
        f'<span class="meta">{text_html(message.id)}</span>',
    ]
    if message.created_at is not None:
        head.append(f'<span class="meta">{text_html(message.created_at.isoformat())}</span>')
    model = message.metadata.get("model")
    if isinstance(model, str):
        head.append(f'<span class="meta">{text_html(model)}</span>')
    if role == "internal":
        head.append('<span class="badge internal">internal: never sent to a model</span>')
    if mark is not None:
        head.append(f'<span class="badge unsealed">{text_html(mark)}</span>')
    usage = message.usage
    if usage is not None:
        head.append(f'<span class="usage">{_usage_text(usage)}</span>')
    if not parts:
        head.append('<span class="meta">results shown beside their calls</span>')
    classes = f"msg {role}{' has-issue' if index in view.flagged else ''}"
    return (
        f'<section class="{classes}" id="m{index}"><div class="head">{"".join(head)}</div>'
        f"{view.notes(index, None)}{''.join(parts)}</section>"
    )
