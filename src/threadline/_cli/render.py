"""The transcript ``threadline show`` prints, and its colours."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from typing import Final
from typing import TextIO

from typing_extensions import assert_never

from threadline._cli.output import json_printable
from threadline._cli.output import printable
from threadline.messages import FilePart
from threadline.messages import HookPart
from threadline.messages import Message
from threadline.messages import Part
from threadline.messages import ProviderToolCallPart
from threadline.messages import ProviderToolResultPart
from threadline.messages import ReasoningPart
from threadline.messages import TextPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart

__all__ = ["Style", "render_transcript", "use_colour"]


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
    return json_printable(
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
