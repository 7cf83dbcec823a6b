"""Anthropic Messages SSE events (``message_start``, ``content_block_*``, ``message_delta``,
``message_stop``, ``error``) rebuilt into a Messages API response."""

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
from threadline.codecs._stream_base import parse_object
from threadline.codecs._stream_base import read_object
from threadline.errors import CodecError

_KINDS: dict[str, PartKind] = {
    "text": "text",
    "thinking": "reasoning",
    "redacted_thinking": "reasoning",
    "tool_use": "tool_call",
}
_JSON_INPUT = ("tool_use", "server_tool_use", "mcp_tool_use")


class AnthropicBuilder(Builder):
    provider = "anthropic"

    def __init__(self) -> None:
        super().__init__()
        self._message: dict[str, Any] = {}
        self._blocks: dict[int, dict[str, Any]] = {}
        self._json: dict[int, Pieces | str] = {}
        self._citations: dict[int, list[Any]] = {}

    def feed(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        kind = event.get("type")
        if self.finished and kind != "ping":
            if kind == "message_stop":
                return []  # said again: it changes nothing
            raise CodecError(f"anthropic stream: a {kind} event after message_stop")
        if kind == "message_start":
            if self._message:
                raise CodecError("anthropic stream: a second message_start")
            self._message = dict(_object(event, "message"))
            self._message["content"] = []
            return []
        if kind == "content_block_start":
            at = _index(event)
            if at in self._blocks:
                raise CodecError(f"anthropic stream: content block {at} started again")
            block = dict(_object(event, "content_block"))
            self._blocks[at] = block
            btype = block.get("type")
            if btype in _JSON_INPUT:
                self._json[at] = ""
            _, out = self.start(
                at, _KINDS.get(str(btype), "other"), block.get("id"), block.get("name")
            )
            index = self._open[at]
            text = block.get("text") or block.get("thinking")
            if isinstance(text, str) and text:
                out.append((TextDelta if btype == "text" else ReasoningDelta)(index, text))
            return out
        if kind == "content_block_delta":
            return self._delta(_index(event), _object(event, "delta"))
        if kind == "content_block_stop":
            at = _index(event)
            if at in self._blocks and not self.is_open(at):
                return []  # stopped again: its input was parsed at its first stop
            return self.end(at, self._block(at, partial=False))
        if kind == "message_delta":
            delta = event.get("delta") or {}
            for key in ("stop_reason", "stop_sequence"):
                if key in delta:
                    self._message[key] = delta[key]
            usage = event.get("usage")
            if isinstance(usage, Mapping):
                merged = dict(self._message.get("usage") or {})
                merged.update({k: v for k, v in usage.items() if v is not None})
                self._message["usage"] = merged
            return []
        if kind == "message_stop":
            self.finished = True
            return [Finish(self._message.get("stop_reason"), None)]
        if kind == "error":
            error = event.get("error") or {}
            self.error = f"{error.get('type', 'error')}: {error.get('message', '')}"
            return []
        return []  # ping, and event types added later

    def _delta(self, at: int, delta: Mapping[str, Any]) -> list[StreamEvent]:
        block = self._blocks.get(at)
        index = self._open.get(at)
        if block is None or index is None:
            raise CodecError(f"anthropic stream: a delta for content block {at}, never started")
        kind = delta.get("type")
        if kind == "text_delta":
            append(block, "text", delta["text"])
            return [TextDelta(index, delta["text"])]
        if kind == "thinking_delta":
            append(block, "thinking", delta["thinking"])
            return [ReasoningDelta(index, delta["thinking"])]
        if kind == "signature_delta":
            append(block, "signature", delta["signature"])
            return []
        if kind == "input_json_delta":
            append(self._json, at, delta["partial_json"])
            return [ToolCallDelta(index, delta["partial_json"])] if delta["partial_json"] else []
        if kind == "citations_delta":
            # one list per block, appended to: a new list per delta copied them all each time
            if at not in self._citations or block.get("citations") is not self._citations[at]:
                self._citations[at] = block["citations"] = [*(block.get("citations") or ())]
            self._citations[at].append(delta["citation"])
            return []
        return []

    def _block(self, at: int, *, partial: bool) -> dict[str, Any]:
        block = dict(self._blocks[at])
        if at in self._json:
            parsed = parse_object(str(self._json[at]))
            if parsed is not None:
                block["input"] = parsed
            elif not partial:
                label = block.get("id", at)
                problem = read_object(str(self._json[at]))[1]
                raise CodecError(
                    f"anthropic stream: the arguments of tool call {label!r} {problem}"
                )
            else:
                block["input"] = {}
        return block

    def arguments(self) -> dict[str, str]:
        return {str(self._blocks[at].get("id", at)): str(text) for at, text in self._json.items()}

    def response(self, *, partial: bool = False) -> dict[str, Any]:
        message = dict(self._message) or {"type": "message", "role": "assistant"}
        message["content"] = [self._block(at, partial=partial) for at in sorted(self._blocks)]
        return document(message)

    def wrap(self, blocks: list[Any]) -> dict[str, Any]:
        return {
            "type": "message",
            "role": "assistant",
            "model": self._message.get("model"),
            "content": blocks,
        }


def _object(event: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = event.get(key)
    if not isinstance(value, Mapping):
        raise CodecError(f"anthropic stream: a {event.get('type')} event without {key!r}")
    return value


def _index(event: Mapping[str, Any]) -> int:
    value = event.get("index")
    if type(value) is not int:
        raise CodecError(f"anthropic stream: a {event.get('type')} event without an index")
    return index_of(value, "index")
