"""Bedrock ``ConverseStream`` events, as boto3 yields them (``{"contentBlockDelta": {...}}``),
rebuilt into a Converse response: text, tool-use input JSON and reasoning text joined per
``contentBlockIndex``, a reasoning signature or redacted content kept, ``messageStop``'s stop
reason and ``metadata``'s usage and metrics.

Bedrock always sends ``metadata`` last, after ``messageStop``: the response is complete only
once it came, so a stream cut between the two is not finished (its usage never arrived)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from threadline.codecs._stream_base import Builder
from threadline.codecs._stream_base import Finish
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

_ERRORS = (
    "internalServerException",
    "modelStreamErrorException",
    "validationException",
    "throttlingException",
    "serviceUnavailableException",
)


class BedrockBuilder(Builder):
    provider = "bedrock"

    def __init__(self) -> None:
        super().__init__()
        self._blocks: dict[int, dict[str, Any]] = {}
        self._json: dict[int, Pieces | str] = {}
        self._top: dict[str, Any] = {}
        self._stopped = False
        """``messageStop`` came: only the ``metadata`` that ends the stream may follow."""

    def feed(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        if self.finished:
            raise CodecError(f"bedrock stream: {sorted(event)} after the metadata that ended it")
        for name in _ERRORS:
            if name in event:  # also between messageStop and metadata: the stream ends in it
                body = event[name] or {}
                self.error = f"{name}: {body.get('message', '')}"
                return []
        if self._stopped and "metadata" not in event:
            raise CodecError(f"bedrock stream: {sorted(event)} after messageStop")
        if "contentBlockStart" in event:
            return self._start(event["contentBlockStart"])
        if "contentBlockDelta" in event:
            return self._delta(event["contentBlockDelta"])
        if "contentBlockStop" in event:
            at = _index(event["contentBlockStop"])
            if at not in self._blocks or not self.is_open(at):
                return []  # stopped again: its input was parsed at its first stop
            return self.end(at, self._block(at, partial=False))
        if "messageStop" in event:
            stop = event["messageStop"]
            self._top["stopReason"] = stop.get("stopReason")
            if stop.get("additionalModelResponseFields") is not None:
                self._top["additionalModelResponseFields"] = stop["additionalModelResponseFields"]
            self._stopped = True
            return []
        if "metadata" in event:
            self._top.update({k: v for k, v in event["metadata"].items() if v is not None})
            self.finished = self._stopped
            return [Finish(self._top.get("stopReason"), None)] if self.finished else []
        return []  # messageStart, and event types added later

    def _start(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        at = _index(event)
        if at in self._blocks:
            raise CodecError(f"bedrock stream: content block {at} started again")
        start = event.get("start") or {}
        use = start.get("toolUse")
        if not isinstance(use, Mapping):
            raise CodecError(f"bedrock stream: block {at} starts as {sorted(start)}, not toolUse")
        self._blocks[at] = {"toolUse": {**use, "input": {}}}
        self._json[at] = ""
        _, out = self.start(at, "tool_call", use.get("toolUseId"), use.get("name"))
        return out

    def _delta(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        at = _index(event)
        if at in self._blocks and not self.is_open(at):
            raise CodecError(f"bedrock stream: a delta for content block {at} after its stop")
        delta = event.get("delta") or {}
        if "text" in delta:
            block = self._blocks.setdefault(at, {"text": ""})
            index, out = self.start(at, "text")
            append(block, "text", delta["text"])
            return [*out, TextDelta(index, delta["text"])]
        if "toolUse" in delta:
            if at not in self._json:
                raise CodecError(f"bedrock stream: tool input for block {at}, never started")
            piece = delta["toolUse"].get("input") or ""
            append(self._json, at, piece)
            return [ToolCallDelta(self._open[at], piece)] if piece and at in self._open else []
        if "reasoningContent" in delta:
            reasoning = delta["reasoningContent"]
            block = self._blocks.setdefault(at, {"reasoningContent": {}})
            content = block["reasoningContent"]
            index, out = self.start(at, "reasoning")
            if "redactedContent" in reasoning:
                content.pop("reasoningText", None)
                content["redactedContent"] = reasoning["redactedContent"]
                return out
            text = content.setdefault("reasoningText", {"text": ""})
            if "signature" in reasoning:
                append(text, "signature", reasoning["signature"])
            if reasoning.get("text"):
                append(text, "text", reasoning["text"])
                out.append(ReasoningDelta(index, reasoning["text"]))
            return out
        return []

    def _block(self, at: int, *, partial: bool) -> dict[str, Any]:
        block = self._blocks[at]
        if at not in self._json:
            return block
        parsed = parse_object(str(self._json[at]))
        if parsed is None:
            if not partial:
                label = block["toolUse"].get("toolUseId", at)
                problem = read_object(str(self._json[at]))[1]
                raise CodecError(f"bedrock stream: the arguments of tool call {label!r} {problem}")
            parsed = {}
        return {"toolUse": {**block["toolUse"], "input": parsed}}

    def arguments(self) -> dict[str, str]:
        return {
            str(self._blocks[at]["toolUse"].get("toolUseId", at)): str(text)
            for at, text in self._json.items()
        }

    def response(self, *, partial: bool = False) -> dict[str, Any]:
        content = [self._block(at, partial=partial) for at in sorted(self._blocks)]
        return document(
            {"output": {"message": {"role": "assistant", "content": content}}, **self._top}
        )

    def wrap(self, blocks: list[Any]) -> dict[str, Any]:
        return {"output": {"message": {"role": "assistant", "content": blocks}}}


def _index(event: Mapping[str, Any]) -> int:
    value = event.get("contentBlockIndex")
    if type(value) is not int:
        raise CodecError("bedrock stream: an event without a contentBlockIndex")
    return index_of(value, "contentBlockIndex")
