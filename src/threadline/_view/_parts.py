"""One part as HTML; a tool call with its results beside it."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Final

from typing_extensions import assert_never

from threadline._view._escape import json_html
from threadline._view._escape import text_html
from threadline.integrity import IntegrityIssue
from threadline.messages import FilePart
from threadline.messages import HookPart
from threadline.messages import Part
from threadline.messages import ProviderToolCallPart
from threadline.messages import ProviderToolResultPart
from threadline.messages import ReasoningPart
from threadline.messages import TextPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart

__all__ = ["Placed", "View", "file_html", "file_label", "image_src", "part_html", "result_html"]

Position = tuple[int, int]
"""``(message index, part index)`` in the history."""

_LONG: Final = 4_000
"""Characters past which a tool result or argument text is folded into a ``<details>``."""
_PREVIEW: Final = 240

# Raster images only: the browser draws them and runs nothing. An SVG (which may hold script
# and reference other resources) is listed as a file, like audio and documents.
_RASTER: Final = frozenset(
    {"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp"}
)


@dataclass(frozen=True)
class Placed:
    """A tool result and where it is in the history."""

    message_index: int
    part_index: int
    part: ToolResultPart


@dataclass
class View:
    """What rendering one part needs to know about the rest of the history."""

    results: Mapping[Position, Sequence[Placed]] = field(default_factory=dict)
    """Each call's results, by the call's position (a result answers the latest call with its
    id before it, as integrity pairs them)."""
    issues: Mapping[tuple[int, int | None], Sequence[IntegrityIssue]] = field(default_factory=dict)
    """Integrity issues by ``(message index, part index)``; ``None`` for the whole message."""
    pending: frozenset[str] = frozenset()
    """The ids of the pending calls (the live frontier: no result yet, not a defect)."""
    flagged: frozenset[int] = frozenset()
    """The indexes of the messages with an issue anywhere in them."""
    paired: bool = True
    """False for a lone message (a notebook's ``Message``): no result can be beside a call."""

    def notes(self, message_index: int, part_index: int | None) -> str:
        """The integrity issues at a position, as highlighted notes."""
        return "".join(
            f'<div class="issue"><b>{text_html(issue.code)}</b> {text_html(issue.detail)}</div>'
            for issue in self.issues.get((message_index, part_index), ())
        )


def part_html(part: Part, where: Position, view: View) -> str:
    """``part`` (at ``where``) as HTML, with the integrity issues found there.

    Args:
        part: any part.
        where: its message and part index.
        view: the results, issues and pending calls of the history.
    """
    notes = view.notes(*where)
    if isinstance(part, TextPart):
        body = _text(part.text) if part.text else _none("empty text")
    elif isinstance(part, ReasoningPart):
        body = _reasoning(part)
    elif isinstance(part, ToolCallPart):
        body = _call(part, where, view)
    elif isinstance(part, ToolResultPart):
        # Not beside a call: an orphan, or a lone tool message in a notebook.
        body = result_html(Placed(*where, part), None, view, label="result for call")
    elif isinstance(part, FilePart):
        body = file_html(part)
    elif isinstance(part, HookPart):
        body = (
            f'<div class="hook"><div class="label">hook {text_html(part.name)} '
            f"(internal state, never sent to a model)</div>{_json(dict(part.state))}</div>"
        )
    elif isinstance(part, ProviderToolCallPart):
        body = (
            f'<div class="label">provider tool call {text_html(part.name)} '
            f"<code>{text_html(part.id)}</code> ({text_html(part.provider)})</div>"
            + _json(part.input)
        )
    elif isinstance(part, ProviderToolResultPart):
        kind = "error" if part.is_error else "result"
        body = (
            f'<div class="result{" error" if part.is_error else ""}"><div class="label">'
            f"provider tool {kind} for <code>{text_html(part.call_id)}</code></div>"
            f"{_json(part.content)}</div>"
        )
    else:
        assert_never(part)
    return f'<div class="part {part.type}">{notes}{body}</div>'


def _text(text: str) -> str:
    return f'<div class="text">{text_html(text)}</div>'


def _none(what: str) -> str:
    return f'<div class="none">({text_html(what)})</div>'


def _reasoning(part: ReasoningPart) -> str:
    facts = [f"{len(part.text):,} chars"] if part.text else []
    if part.redacted:
        facts.append("redacted")
    if part.encrypted is not None:
        facts.append(f"encrypted state, {len(part.encrypted):,} chars (not shown)")
    if part.provider:
        facts.append(part.provider if part.model is None else f"{part.provider} {part.model}")
    summary = "".join(map(_text, part.summary))
    if summary:
        summary = f'<div class="label">summary</div>{summary}'
    body = _text(part.text) if part.text else ""
    return (
        f'<details class="reasoning"><summary>reasoning{", " if facts else ""}'
        f"{text_html(', '.join(facts))}</summary>{summary}{body}</details>"
    )


def _call(part: ToolCallPart, where: Position, view: View) -> str:
    if part.raw_arguments is not None:
        arguments = '<div class="label">raw arguments (not a JSON object)</div>' + _long(
            part.raw_arguments, pre=True
        )
    else:
        arguments = _json(dict(part.arguments))
    call = (
        f'<div class="call"><div class="label">call {text_html(part.name)} '
        f"<code>{text_html(part.id)}</code></div>{arguments}</div>"
    )
    if not view.paired:
        return call
    answers = view.results.get(where, ())
    if answers:
        results = "".join(result_html(answer, where[0], view) for answer in answers)
    elif part.id in view.pending:
        results = '<div class="none"><span class="badge pending">pending</span> no result yet</div>'
    else:
        results = _none("no result")
    return f'<div class="pair">{call}<div class="results">{results}</div></div>'


def result_html(
    placed: Placed, call_index: int | None, view: View, *, label: str = "result"
) -> str:
    """A tool result, with the issues at its own position, beside its call or on its own.

    Args:
        placed: the result and its position.
        call_index: the index of its call's message (``None`` when shown on its own).
        view: the issues of the history.
        label: what to call it.
    """
    part = placed.part
    kind = "error" if part.is_error else label
    where = ""
    if call_index is not None and placed.message_index != call_index + 1:
        index = placed.message_index
        where = f' from <a href="#m{index}">message {index}</a>'
    if call_index is not None:
        head = f"{kind}{where}"
    else:
        what = "error for call" if part.is_error else label
        head = f"{what} <code>{text_html(part.call_id)}</code>"
    name = f" ({text_html(part.name)})" if part.name else ""
    if isinstance(part.content, str):
        content = _long(part.content, pre=False)
    else:
        content = "".join(
            _long(item.text, pre=False) if isinstance(item, TextPart) else file_html(item)
            for item in part.content
        )
    notes = view.notes(placed.message_index, placed.part_index) if call_index is not None else ""
    error = " error" if part.is_error else ""
    return f'<div class="result{error}">{notes}<div class="label">{head}{name}</div>{content}</div>'


def file_html(part: FilePart) -> str:
    """A file: its label, and a raster image drawn inline from its bytes."""
    src = image_src(part)
    image = f'<img class="inline" alt="" src="{src}">' if src is not None else ""
    return file_label(part) + image


def file_label(part: FilePart) -> str:
    """A file's media type, name, and size or URL (as text: never fetched)."""
    facts = [part.media_type]
    if part.filename:
        facts.append(part.filename)
    if part.data is not None:
        source = f"{len(part.data):,} bytes"
    elif part.url is not None and part.url.startswith("data:"):
        source = f"data: URL, {len(part.url):,} chars"
    else:
        source = f"<code>{text_html(part.url or '')}</code> (not fetched)"
    return f'<span class="chip">file {text_html(", ".join(facts))}, {source}</span>'


def image_src(part: FilePart) -> str | None:
    """A ``data:`` URL for a raster image's bytes, re-encoded here; ``None`` for anything else
    (a remote URL is never one: the page makes no request)."""
    media_type = part.media_type.split(";", 1)[0].strip().lower()
    data = part.data
    if data is None and part.url is not None and part.url[:5].lower() == "data:":
        header, comma, payload = part.url[5:].partition(",")
        media_type, _, encoding = header.rpartition(";")
        media_type = media_type.split(";", 1)[0].strip().lower()
        if not comma or encoding.strip().lower() != "base64":
            return None
        try:
            data = base64.b64decode(payload.strip(), validate=True)
        except (binascii.Error, ValueError):
            return None
    if data is None or media_type not in _RASTER:
        return None
    return f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}"


def _json(value: object) -> str:
    return f'<pre class="json">{json_html(value)}</pre>'


def _long(text: str, *, pre: bool) -> str:
    tag = "pre" if pre else "div"
    if len(text) <= _LONG:
        return f'<{tag} class="text">{text_html(text)}</{tag}>'
    preview = text_html(text[:_PREVIEW])
    return (
        f'<details class="long"><summary>{preview} … ({len(text):,} chars: show all)</summary>'
        f'<{tag} class="text">{text_html(text)}</{tag}></details>'
    )
