"""OpenAI Responses stream events rebuilt into a Responses API response.

``response.completed`` (or ``response.incomplete``) carries the whole response, which wins;
until then the output items are rebuilt from ``response.output_item.*``, the content and
summary parts, and the text, refusal, reasoning and function-call argument deltas, so a cut
stream still gives what arrived (and a final event without ``output`` is filled in)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from threadline.codecs._stream_base import Builder
from threadline.codecs._stream_base import Finish
from threadline.codecs._stream_base import PartKind
from threadline.codecs._stream_base import Pieces
from threadline.codecs._stream_base import ReasoningDelta
from threadline.codecs._stream_base import StreamEvent
from threadline.codecs._stream_base import TextDelta
from threadline.codecs._stream_base import ToolCallDelta
from threadline.codecs._stream_base import append
from threadline.codecs._stream_base import document
from threadline.codecs._stream_base import index_of
from threadline.codecs._stream_base import materialize
from threadline.codecs._stream_base import pad
from threadline.codecs._stream_base import past_limits
from threadline.codecs._stream_base import text_of
from threadline.errors import CodecError

_FINAL = ("response.completed", "response.incomplete")
_KINDS: dict[str, PartKind] = {
    "function_call": "tool_call",
    "custom_tool_call": "tool_call",
    "reasoning": "reasoning",
}


class ResponsesBuilder(Builder):
    provider = "openai_responses"

    def __init__(self) -> None:
        super().__init__()
        self._top: dict[str, Any] = {}
        self._final: dict[str, Any] | None = None
        self._items: dict[int, dict[str, Any]] = {}
        self._done: set[int] = set()

    def feed(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        kind = str(event.get("type"))
        if self.finished:
            raise CodecError(f"openai_responses stream: a {kind} event after the final response")
        if kind in ("response.created", "response.in_progress", "response.queued"):
            self._top = dict(event.get("response") or {})
            return []
        if kind in _FINAL:
            self._final = dict(event["response"])
            self.finished = True
            out = self.end_all({})
            return [*out, Finish(None, None)]
        if kind == "response.failed":
            error = (event.get("response") or {}).get("error") or {}
            self.error = f"{error.get('code', 'failed')}: {error.get('message', '')}"
            return []
        if kind == "error":
            self.error = f"{event.get('code') or 'error'}: {event.get('message', '')}"
            return []
        if kind.startswith("response.output_item."):
            return self._item(kind, event)
        at = event.get("output_index")
        if type(at) is not int or at not in self._items:
            return []
        if at in self._done:
            raise CodecError(
                f"openai_responses stream: a {kind} event after output item {at} was done"
            )
        item = self._items[at]
        if kind == "response.content_part.added":
            content = item.setdefault("content", [])
            _place(content, _at(event, "content_index"), dict(event["part"]), again=True)
            if item.get("type") == "message":
                _, out = self.start((at, _at(event, "content_index")), "text")
                return out
            return []
        if kind == "response.content_part.done":
            _place(item.setdefault("content", []), _at(event, "content_index"), dict(event["part"]))
            return self.end((at, _at(event, "content_index")), self._message_with(item, event))
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            field = "text" if kind == "response.output_text.delta" else "refusal"
            part = _entry(item, "content", _at(event, "content_index"), field)
            append(part, field, event["delta"])
            index, out = self.start((at, _at(event, "content_index")), "text")
            return [*out, TextDelta(index, event["delta"])]
        if kind == "response.output_text.annotation.added":
            part = _entry(item, "content", _at(event, "content_index"), "text")
            part.setdefault("annotations", []).append(event["annotation"])
            return []
        if kind == "response.function_call_arguments.delta":
            append(item, "arguments", event["delta"])
            return self._delta(at, ToolCallDelta, event["delta"])
        if kind == "response.function_call_arguments.done":
            item["arguments"] = event["arguments"]
            return []
        if kind == "response.custom_tool_call_input.delta":
            append(item, "input", event["delta"])
            return self._delta(at, ToolCallDelta, event["delta"])
        if kind == "response.reasoning_summary_part.added":
            summary = item.setdefault("summary", [])
            _place(summary, _at(event, "summary_index"), dict(event["part"]), again=True)
            return []
        if kind == "response.reasoning_summary_text.delta":
            part = _entry(item, "summary", _at(event, "summary_index"), "text", "summary_text")
            append(part, "text", event["delta"])
            return self._delta(at, ReasoningDelta, event["delta"])
        if kind == "response.reasoning_text.delta":
            part = _entry(item, "content", _at(event, "content_index"), "text", "reasoning_text")
            append(part, "text", event["delta"])
            return self._delta(at, ReasoningDelta, event["delta"])
        return []

    def _item(self, kind: str, event: Mapping[str, Any]) -> list[StreamEvent]:
        at = index_of(event["output_index"], "output_index")
        if at in self._done or (at in self._items and not kind.endswith(".done")):
            raise CodecError(f"openai_responses stream: output item {at} started again")
        item = _own(event["item"])
        self._items[at] = item
        if kind.endswith(".done"):
            self._done.add(at)
        if item.get("type") == "message":
            if kind.endswith(".done"):
                return [
                    e
                    for ci, part in enumerate(item.get("content") or ())
                    for e in self.end((at, ci), {**item, "content": [part]})
                ]
            return []
        if kind.endswith(".done"):
            return self.end(at, item)
        _, out = self.start(
            at, _KINDS.get(str(item.get("type")), "other"), item.get("call_id"), item.get("name")
        )
        return out

    def _delta(self, at: int, make: Any, text: str) -> list[StreamEvent]:
        index = self._open.get(at)
        return [make(index, text)] if index is not None and text else []

    def _message_with(self, item: Mapping[str, Any], event: Mapping[str, Any]) -> Any:
        return {**item, "content": [event["part"]]}

    def arguments(self) -> dict[str, str]:
        final = self._final.get("output") if self._final is not None else None
        if final:
            if not isinstance(final, list):
                return {}
            # the final response's own calls are what decode reads, but for those past the
            # limits, which it refuses: a partial message keeps their text
            return {
                str(item.get("call_id") or at): item["arguments"]
                for at, item in enumerate(final)
                if _past_limits(item)
            }
        return {
            str(item.get("call_id") or at): text_of(item.get("arguments"))
            for at, item in self._items.items()
            if item.get("type") == "function_call"
        }

    def response(self, *, partial: bool = False) -> dict[str, Any]:
        items = [_without_holes(self._items[at]) for at in sorted(self._items)]
        if self._final is not None:
            final = dict(self._final)
            if not final.get("output") and items:
                final["output"] = materialize(items)
            if partial and isinstance(final.get("output"), list):
                final["output"] = _readable(final["output"])
            return final
        if partial:
            items = _readable(items)
        status = self._top.get("status", "in_progress")
        return document({**self._top, "status": status, "output": items})

    def wrap(self, blocks: list[Any]) -> dict[str, Any]:
        return {"model": self._top.get("model"), "output": blocks}


def _at(event: Mapping[str, Any], key: str) -> int:
    return index_of(event.get(key), key)


def _own(item: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of an output item deep enough that filling it in changes nothing of the
    caller's: its content and summary lists and their entries."""
    owned = dict(item)
    for key in ("content", "summary"):
        if isinstance(owned.get(key), list):
            owned[key] = [dict(e) if isinstance(e, Mapping) else e for e in owned[key]]
    return owned


def _readable(items: list[Any]) -> list[Any]:
    """``items`` with the arguments of calls past the limits left out (``{}``), for a partial
    message: the assembler keeps their text in ``raw_arguments``."""
    return [{**item, "arguments": "{}"} if _past_limits(item) else item for item in items]


def _past_limits(item: Any) -> bool:
    """Whether ``item`` is a function call whose arguments go past the stream's limits."""
    return (
        isinstance(item, Mapping)
        and item.get("type") == "function_call"
        and isinstance(item.get("arguments"), (str, Pieces))
        and past_limits(item["arguments"])
    )


def _without_holes(item: dict[str, Any]) -> dict[str, Any]:
    """``item`` without the slots of content or summary parts that never arrived."""
    kept = dict(item)
    for key in ("content", "summary"):
        if isinstance(kept.get(key), list):
            kept[key] = [entry for entry in kept[key] if entry is not None]
    return kept


def _place(entries: list[Any], at: int, value: Any, *, again: bool = False) -> None:
    pad(entries, at)
    if again and entries[at] is not None:
        raise CodecError(f"openai_responses stream: part {at} of an output item started again")
    entries[at] = value


def _entry(
    item: dict[str, Any], key: str, at: int, field: str, kind: str | None = None
) -> dict[str, Any]:
    entries = item.setdefault(key, [])
    pad(entries, at)
    if entries[at] is None:
        entries[at] = {"type": kind or "output_text", field: ""}
    entry: dict[str, Any] = entries[at]
    return entry
