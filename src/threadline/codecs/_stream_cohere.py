"""Cohere v2 Chat SSE events (``message-start``, ``content-start`` / ``-delta`` / ``-end``,
``tool-plan-delta``, ``tool-call-start`` / ``-delta`` / ``-end``, ``citation-start`` /
``-end``, ``message-end``, ``debug``) rebuilt into a ``/v2/chat`` response."""

from __future__ import annotations

from collections.abc import Hashable
from collections.abc import Mapping
from typing import Any

from threadline.codecs._stream_base import Builder
from threadline.codecs._stream_base import Finish
from threadline.codecs._stream_base import ReasoningDelta
from threadline.codecs._stream_base import StreamEvent
from threadline.codecs._stream_base import TextDelta
from threadline.codecs._stream_base import ToolCallDelta
from threadline.codecs._stream_base import append
from threadline.codecs._stream_base import document
from threadline.codecs._stream_base import index_of
from threadline.codecs._stream_base import parse_object
from threadline.codecs._stream_base import text_of
from threadline.errors import CodecError

_PLAN = "plan"


class CohereBuilder(Builder):
    provider = "cohere"

    def __init__(self) -> None:
        super().__init__()
        self._top: dict[str, Any] = {}
        self._plan: dict[str, Any] = {}
        self._content: dict[int, dict[str, Any]] = {}
        self._calls: dict[int, dict[str, Any]] = {}
        self._arguments: dict[int, Any] = {}
        self._citations: list[Any] = []

    def feed(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        kind = event.get("type")
        if self.finished:
            if kind == "debug":
                return []
            raise CodecError(f"cohere stream: a {kind} event after message-end")
        message = _message(event)
        if kind == "message-start":
            if event.get("id") is not None:
                self._top["id"] = event["id"]
            return []
        if kind == "content-start":
            at = _index(event)
            if at in self._content:
                raise CodecError(f"cohere stream: content item {at} started again")
            content = _object(message, "content", event)
            item_kind = content.get("type") or "text"
            if item_kind not in ("text", "thinking"):
                raise CodecError(f"cohere stream: an unknown content item {item_kind!r}")
            self._content[at] = {"type": item_kind, item_kind: ""}
            ended = self._end_plan()
            index, out = self.start(("content", at), "text" if item_kind == "text" else "reasoning")
            return ended + out + self._more(at, index, content)
        if kind == "content-delta":
            at = _index(event)
            open_at = self._open.get(("content", at))
            if at not in self._content or open_at is None:
                raise CodecError(f"cohere stream: a delta for content item {at}, never started")
            return self._more(at, open_at, _object(message, "content", event))
        if kind == "content-end":
            at = _index(event)
            return self.end(("content", at), self._content.get(at))
        if kind == "tool-plan-delta":
            piece = message.get("tool_plan")
            if not isinstance(piece, str):
                raise CodecError("cohere stream: a tool-plan-delta without its tool_plan text")
            index, out = self.start(_PLAN, "text")
            append(self._plan, "tool_plan", piece)
            return [*out, TextDelta(index, piece)] if piece else out
        if kind == "tool-call-start":
            return self._call_start(_index(event), _object(message, "tool_calls", event))
        if kind == "tool-call-delta":
            return self._call_delta(_index(event), _object(message, "tool_calls", event))
        if kind == "tool-call-end":
            at = _index(event)
            return self.end(("call", at), self._call(at, partial=True))
        if kind == "citation-start":
            citation = message.get("citations")
            if isinstance(citation, Mapping):
                self._citations.append(citation)
            return []
        if kind == "message-end":
            return self._finish(event)
        return []  # citation-end, debug, and event types added later

    def _more(self, at: int, index: int, content: Mapping[str, Any]) -> list[StreamEvent]:
        item = self._content[at]
        key = item["type"]
        piece = content.get(key)
        if piece is None or piece == "":
            return []
        append(item, key, piece)
        return [TextDelta(index, piece) if key == "text" else ReasoningDelta(index, piece)]

    def _call_start(self, at: int, call: Mapping[str, Any]) -> list[StreamEvent]:
        if at in self._calls:
            raise CodecError(f"cohere stream: tool call {at} started again")
        function = call.get("function") or {}
        if not isinstance(function, Mapping):
            raise CodecError(f"cohere stream: tool call {at} has no function object")
        self.room("tool_call")
        self._calls[at] = {
            "id": call.get("id"),
            "type": "function",
            "function": {"name": function.get("name")},
        }
        self._arguments[at] = ""
        ended = self._end_plan()
        index, out = self.start(("call", at), "tool_call", call.get("id"), function.get("name"))
        piece = function.get("arguments")
        if isinstance(piece, str) and piece:
            append(self._arguments, at, piece)
            out.append(ToolCallDelta(index, piece))
        return ended + out

    def _end_plan(self) -> list[StreamEvent]:
        """The plan is whole once a content item or a call starts after it."""
        if not self.is_open(_PLAN):
            return []
        return self.end(_PLAN, {"tool_plan": self._plan.get("tool_plan")})

    def _call_delta(self, at: int, call: Mapping[str, Any]) -> list[StreamEvent]:
        index = self._open.get(("call", at))
        if at not in self._calls or index is None:
            raise CodecError(f"cohere stream: a delta for tool call {at}, never started")
        function = call.get("function") or {}
        piece = function.get("arguments") if isinstance(function, Mapping) else None
        if not isinstance(piece, str) or not piece:
            return []
        append(self._arguments, at, piece)
        return [ToolCallDelta(index, piece)]

    def _finish(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        delta = event.get("delta") or {}
        if not isinstance(delta, Mapping):
            raise CodecError("cohere stream: a message-end event whose delta is no object")
        if event.get("id") is not None:
            self._top.setdefault("id", event["id"])
        error = delta.get("error")
        if error:
            self.error = str(error)
        if delta.get("finish_reason") is not None:
            self._top["finish_reason"] = delta["finish_reason"]
        if delta.get("usage") is not None:
            self._top["usage"] = delta["usage"]
        if self.error is not None:
            return []
        self.finished = True
        blocks: dict[Hashable, Any] = {_PLAN: {"tool_plan": self._plan.get("tool_plan")}}
        blocks.update({("content", at): item for at, item in self._content.items()})
        blocks.update({("call", at): self._call(at, partial=True) for at in self._calls})
        out = self.end_all(blocks)
        return [*out, Finish(self._top.get("finish_reason"), None)]

    def _call(self, at: int, *, partial: bool) -> dict[str, Any]:
        call = dict(self._calls[at])
        text = text_of(self._arguments.get(at))
        if partial and parse_object(text) is None:
            text = "{}"
        call["function"] = {**call["function"], "arguments": text}
        return call

    def end(self, key: Hashable, block: Any) -> list[StreamEvent]:
        return super().end(key, _block(key, block) if block is not None else None)

    def arguments(self) -> dict[str, str]:
        return {
            str(self._calls[at].get("id") or at): text_of(text)
            for at, text in self._arguments.items()
        }

    def response(self, *, partial: bool = False) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant"}
        plan = self._plan.get("tool_plan")
        if plan is not None:
            message["tool_plan"] = plan
        if self._content:
            message["content"] = [self._content[at] for at in sorted(self._content)]
        if self._calls:
            message["tool_calls"] = [self._call(at, partial=partial) for at in sorted(self._calls)]
        if self._citations:
            message["citations"] = list(self._citations)
        return document({**self._top, "message": message})

    def wrap(self, blocks: list[Any]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant"}
        for block in blocks:
            for key, value in block.items():
                message[key] = [*message.get(key, ()), *value] if isinstance(value, list) else value
        return {"message": message}


def _block(key: Hashable, value: Any) -> Any:
    """The part ``key`` as a piece of a message: its own field (``tool_plan``), or a list of
    one item (``content``, ``tool_calls``)."""
    if key == _PLAN or (isinstance(value, dict) and "tool_plan" in value):
        return value
    if isinstance(key, tuple) and key[0] == "call":
        return {"tool_calls": [value]}
    return {"content": [value]}


def _message(event: Mapping[str, Any]) -> Mapping[str, Any]:
    delta = event.get("delta")
    if delta is None:
        return {}
    if not isinstance(delta, Mapping):
        raise CodecError(f"cohere stream: a {event.get('type')} event whose delta is no object")
    message = delta.get("message")
    if message is None:
        return {}
    if not isinstance(message, Mapping):
        raise CodecError(f"cohere stream: a {event.get('type')} event whose message is no object")
    return message


def _object(message: Mapping[str, Any], key: str, event: Mapping[str, Any]) -> Mapping[str, Any]:
    value = message.get(key)
    if not isinstance(value, Mapping):
        raise CodecError(f"cohere stream: a {event.get('type')} event without delta.message.{key}")
    return value


def _index(event: Mapping[str, Any]) -> int:
    value = event.get("index")
    if type(value) is not int:
        raise CodecError(f"cohere stream: a {event.get('type')} event without an index")
    return index_of(value, "index")
