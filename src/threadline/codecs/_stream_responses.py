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
from threadline.codecs._stream_base import ReasoningDelta
from threadline.codecs._stream_base import StreamEvent
from threadline.codecs._stream_base import TextDelta
from threadline.codecs._stream_base import ToolCallDelta
from threadline.codecs._stream_base import append
from threadline.codecs._stream_base import document
from threadline.codecs._stream_base import index_of
from threadline.codecs._stream_base import materialize
from threadline.codecs._stream_base import text_of

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

    def feed(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        kind = str(event.get("type"))
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
        item = self._items[at]
        if kind == "response.content_part.added":
            content = item.setdefault("content", [])
            _place(content, _at(event, "content_index"), dict(event["part"]))
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
            _place(item.setdefault("summary", []), _at(event, "summary_index"), dict(event["part"]))
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
        item = _own(event["item"])
        self._items[at] = item
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
        if self._final is not None and self._final.get("output"):
            return {}  # the final response's own calls are what decode reads
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
            return final
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


def _without_holes(item: dict[str, Any]) -> dict[str, Any]:
    """``item`` without the slots of content or summary parts that never arrived."""
    kept = dict(item)
    for key in ("content", "summary"):
        if isinstance(kept.get(key), list):
            kept[key] = [entry for entry in kept[key] if entry is not None]
    return kept


def _place(entries: list[Any], at: int, value: Any) -> None:
    while len(entries) <= at:
        entries.append(None)
    entries[at] = value


def _entry(
    item: dict[str, Any], key: str, at: int, field: str, kind: str | None = None
) -> dict[str, Any]:
    entries = item.setdefault(key, [])
    while len(entries) <= at:
        entries.append(None)
    if entries[at] is None:
        entries[at] = {"type": kind or "output_text", field: ""}
    entry: dict[str, Any] = entries[at]
    return entry
