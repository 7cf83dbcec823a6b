"""Ollama ``/api/chat`` NDJSON streams (each line a chunk shaped like the response) rebuilt into
one response: ``message.thinking`` and ``message.content`` pieces joined, tool calls (each
arriving whole) kept in order, and the closing chunk's ``done: true``, ``done_reason``,
counts and durations."""

from __future__ import annotations

from collections.abc import Hashable
from collections.abc import Mapping
from typing import Any

from threadline.codecs._stream_base import Builder
from threadline.codecs._stream_base import Finish
from threadline.codecs._stream_base import PartEnd
from threadline.codecs._stream_base import ReasoningDelta
from threadline.codecs._stream_base import StreamEvent
from threadline.codecs._stream_base import TextDelta
from threadline.codecs._stream_base import ToolCallDelta
from threadline.codecs._stream_base import append
from threadline.codecs._stream_base import document
from threadline.codecs._stream_base import materialize
from threadline.codecs._stream_base import text_of
from threadline.codecs._tools import compact_json
from threadline.errors import CodecError
from threadline.messages import ReasoningPart
from threadline.messages import TextPart
from threadline.messages import ToolCallPart


def _error_text(error: Any) -> str:
    return error if isinstance(error, str) else compact_json(error)


class OllamaBuilder(Builder):
    provider = "ollama"

    def __init__(self) -> None:
        super().__init__()
        self._top: dict[str, Any] = {}
        self._message: dict[str, Any] = {"role": "assistant"}
        self._calls: list[dict[str, Any]] = []

    def feed(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        if self.finished:
            raise CodecError("ollama stream: a chunk after the one with done: true")
        if "error" in event and "message" not in event:
            self.error = _error_text(event["error"])
            return []
        for key, value in event.items():
            if key != "message" and value is not None:
                self._top[key] = value
        message = event.get("message")
        out: list[StreamEvent] = []
        if isinstance(message, Mapping):
            out.extend(self._read(message))
        elif message is not None:
            raise CodecError("ollama stream: a chunk's message is not an object")
        if event.get("done") is True:
            self.finished = True
            out.extend(self._end_all())
            out.append(Finish(self._top.get("done_reason"), None))
        return out

    def _read(self, message: Mapping[str, Any]) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for key, kind in (("thinking", "reasoning"), ("content", "text")):
            piece = message.get(key)
            if piece is None or piece == "":
                continue
            if not isinstance(piece, str):
                raise CodecError(f"ollama stream: message.{key} is not text")
            index, started = self.start(key, "reasoning" if kind == "reasoning" else "text")
            out.extend(started)
            append(self._message, key, piece)
            out.append((ReasoningDelta if kind == "reasoning" else TextDelta)(index, piece))
        calls = message.get("tool_calls")
        if calls is None:
            return out
        if not isinstance(calls, list):
            raise CodecError("ollama stream: message.tool_calls is not a list")
        for call in calls:
            if not isinstance(call, Mapping) or not isinstance(call.get("function"), Mapping):
                raise CodecError("ollama stream: a tool call is not {'function': {...}}")
            self.room("tool_call")
            number = len(self._calls)
            self._calls.append(dict(call))
            function = call["function"]
            name = function.get("name") if isinstance(function.get("name"), str) else None
            given = call.get("id") if isinstance(call.get("id"), str) else None
            index, started = self.start(("call", number), "tool_call", given, name)
            out.extend(started)
            arguments = function.get("arguments")
            text = compact_json(arguments) if isinstance(arguments, Mapping) else text_of(arguments)
            out.append(ToolCallDelta(index, text))
        return out

    def _end_all(self) -> list[StreamEvent]:
        """``PartEnd`` for every part, from the whole response's reading (the calls' ids
        depend on their place in it)."""
        try:
            parts = self.decode(materialize(self.response())).parts
        except (CodecError, ValueError):
            parts = ()
        reasoning = [p for p in parts if isinstance(p, ReasoningPart)]
        texts = [p for p in parts if isinstance(p, TextPart) and p.text]
        calls = [p for p in parts if isinstance(p, ToolCallPart)]
        found: dict[Hashable, Any] = {
            "thinking": reasoning[0] if reasoning else None,
            "content": texts[0] if texts else None,
        }
        found.update({("call", n): call for n, call in enumerate(calls)})
        ordered = sorted(self._open.items(), key=lambda item: item[1])
        self._open.clear()
        return [PartEnd(index, found.get(key)) for key, index in ordered]

    def arguments(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for number, call in enumerate(self._calls):
            arguments = call["function"].get("arguments")
            text = compact_json(arguments) if isinstance(arguments, Mapping) else text_of(arguments)
            out[str(call.get("id") or number)] = text
        return out

    def response(self, *, partial: bool = False) -> dict[str, Any]:
        message = dict(self._message)
        message.setdefault("content", "")
        if self._calls:
            message["tool_calls"] = list(self._calls)
        return document({**self._top, "message": message})

    def wrap(self, blocks: list[Any]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": ""}
        for block in blocks:
            if isinstance(block, Mapping) and "function" in block:
                message.setdefault("tool_calls", []).append(block)
        return {"model": self._top.get("model"), "message": message}
