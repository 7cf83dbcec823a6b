"""Gemini ``streamGenerateContent`` chunks (each a ``GenerateContentResponse``) rebuilt into
one response: the first candidate's parts merged (a text piece joins the text part before it
when both are text or both thought, until a ``thoughtSignature`` closes that part; a
signature arriving alone, as on the last chunk, goes to the part before it), the latest
``finishReason``, ``usageMetadata``, grounding and citation metadata, ``modelVersion`` and
``responseId`` kept."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from threadline.codecs._reading import Reader
from threadline.codecs._stream_base import Builder
from threadline.codecs._stream_base import Finish
from threadline.codecs._stream_base import PartEnd
from threadline.codecs._stream_base import PartKind
from threadline.codecs._stream_base import Pieces
from threadline.codecs._stream_base import ReasoningDelta
from threadline.codecs._stream_base import StreamEvent
from threadline.codecs._stream_base import TextDelta
from threadline.codecs._stream_base import append
from threadline.codecs._stream_base import document

_SIGNATURE = ("thoughtSignature", "thought_signature")
_TOP_SKIP = {"candidates", "sdkHttpResponse", "sdk_http_response"}


_PLACED = (
    (("functionCall", "function_call"), "call"),
    (("executableCode", "executable_code"), "code"),
    (("codeExecutionResult", "code_execution_result"), "result"),
    (("toolCall", "tool_call"), "tool"),
    (("toolResponse", "tool_response"), "tool"),
)
"""The parts ``decode_response`` gives an id derived from their place when they carry none
(``result``: a code execution result, which takes the latest code part's id)."""


_READ_FIRST = ("text", "inlineData", "inline_data", "fileData", "file_data")
"""A part holding one of these is read as text or a file, whatever else it holds."""


def _derived(seed: str, kind: str, path: str) -> str:
    from threadline.codecs.gemini import _Pairing

    return _Pairing(seed=seed).call_id(None, kind, path, Reader("gemini response"))


def _get(mapping: Mapping[str, Any], *names: str) -> Any:
    for name in names:
        if mapping.get(name) is not None:
            return mapping[name]
    return None


class GeminiBuilder(Builder):
    provider = "gemini"

    def __init__(self) -> None:
        super().__init__()
        self._top: dict[str, Any] = {}
        self._candidate: dict[str, Any] = {}
        self._parts: list[dict[str, Any]] = []
        self._code: str | None = None
        """The id of the latest ``executableCode`` part ended: a result without one pairs
        with it, as ``decode_response`` pairs them."""

    def feed(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        if self.finished:
            _after_finish(event, self._candidate)
        if "error" in event and "candidates" not in event:
            error = event.get("error") or {}
            self.error = f"{error.get('status', 'error')}: {error.get('message', '')}"
            return []
        for key, value in event.items():
            if key not in _TOP_SKIP and value is not None:
                self._top[key] = value
        out: list[StreamEvent] = []
        candidates = event.get("candidates") or ()
        candidate = next((c for c in candidates if c.get("index", 0) == 0), None)
        if candidate is not None:
            content = candidate.get("content") or {}
            for piece in content.get("parts") or ():
                out.extend(self._piece(dict(piece)))
            for key, value in candidate.items():
                if key not in ("content", "index") and value is not None:
                    self._candidate[key] = value
            if content.get("role") is not None:
                self._candidate["role"] = content["role"]
        feedback = _get(event, "promptFeedback", "prompt_feedback")
        blocked = isinstance(feedback, Mapping) and _get(feedback, "blockReason", "block_reason")
        reason = _get(self._candidate, "finishReason", "finish_reason")
        if (reason is not None or blocked) and not self.finished:
            self.finished = True
            out.extend(self.end_all(dict(enumerate(self._parts))))
            out.append(Finish(reason, None))
        return out

    def _piece(self, piece: dict[str, Any]) -> list[StreamEvent]:
        last = self._parts[-1] if self._parts else None
        signature = _get(piece, *_SIGNATURE)
        text = piece.get("text")
        alone = text is None and signature is not None and len(piece) == 1
        if last is not None and alone and _get(last, *_SIGNATURE) is None:
            last["thoughtSignature"] = signature
            return []
        thought = bool(piece.get("thought"))
        if (
            last is not None
            and isinstance(text, str)
            and isinstance(last.get("text"), (str, Pieces))
            and bool(last.get("thought")) == thought
            and _get(last, *_SIGNATURE) is None
        ):
            append(last, "text", text)
            if signature is not None:
                last["thoughtSignature"] = signature
            index = self._open.get(len(self._parts) - 1)
            if not text or index is None:
                return []
            return [(ReasoningDelta if thought else TextDelta)(index, text)]
        self.room("gemini")
        out = self.end(len(self._parts) - 1, last) if last is not None else []
        self._parts.append(piece)
        kind: PartKind = "text"
        name = None
        call = _get(piece, "functionCall", "function_call")
        if isinstance(text, str):
            kind = "reasoning" if thought else "text"
        elif isinstance(call, Mapping):
            kind, name = "tool_call", call.get("name")
        else:
            kind = "other"
        index, started = self.start(len(self._parts) - 1, kind, None, name)
        out.extend(started)
        if isinstance(text, str) and text:
            out.append((ReasoningDelta if thought else TextDelta)(index, text))
        return out

    def end(self, key: Any, block: Any) -> list[StreamEvent]:
        # Only the part that ended is read (reading the response so far at each part end
        # made N parts cost N squared), with the ids the whole response's reading gives it.
        index = self._open.pop(key, None)
        if index is None:
            return []
        return [PartEnd(index, self.part_of(self._placed(key, block)))]

    def _placed(self, key: int, block: Any) -> Any:
        """``block`` with the ids ``decode_response`` derives from its place among the parts
        (a call, code or server tool part without one), read alone as at ``parts[key]``."""
        if not isinstance(block, Mapping) or any(
            block.get(name) is not None for name in _READ_FIRST
        ):
            return block
        seed = _get(self._top, "responseId", "response_id")
        path = f"candidates[0].content.parts[{key}]"
        placed = dict(block)
        for names, kind in _PLACED:
            field = next((name for name in names if placed.get(name) is not None), None)
            if field is None or not isinstance(placed[field], Mapping):
                continue
            value = dict(placed[field])
            given = value.get("id")
            missing = given is None or given == ""
            if given is None and kind == "result" and self._code is not None:
                value["id"] = self._code
            elif missing and isinstance(seed, str):
                value["id"] = _derived(seed, "code" if kind == "result" else kind, path)
            if kind == "code":
                self._code = value.get("id") if isinstance(value.get("id"), str) else None
            placed[field] = value
            break
        return placed

    def response(self, *, partial: bool = False) -> dict[str, Any]:
        candidate = {k: v for k, v in self._candidate.items() if k != "role"}
        content = {"role": self._candidate.get("role", "model"), "parts": list(self._parts)}
        response = {**self._top, "candidates": [{**candidate, "content": content, "index": 0}]}
        return document(response)

    def wrap(self, blocks: list[Any]) -> dict[str, Any]:
        return {
            "candidates": [{"content": {"role": "model", "parts": blocks}}],
            "responseId": _get(self._top, "responseId", "response_id"),
            "modelVersion": _get(self._top, "modelVersion", "model_version"),
        }


def _after_finish(event: Mapping[str, Any], candidate: Mapping[str, Any]) -> None:
    """Refuse a chunk that would change the message once the finish reason came: parts, or
    another finish reason (metadata, such as the usage, may still come)."""
    from threadline.errors import CodecError

    for chunk in event.get("candidates") or ():
        if chunk.get("index", 0) != 0:
            continue
        reason = _get(chunk, "finishReason", "finish_reason")
        if (chunk.get("content") or {}).get("parts") or (
            reason is not None and reason != _get(candidate, "finishReason", "finish_reason")
        ):
            raise CodecError("gemini stream: parts or another finish reason after the finish")
    if event.get("error") is not None:
        raise CodecError("gemini stream: an error after the finish reason")
