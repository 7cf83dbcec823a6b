"""Chat Completions chunks (OpenAI, and Mistral's, which share the shape) rebuilt into a chat
completion: content and refusal text joined, tool calls assembled by their ``index``, the
usage of the closing chunk (``stream_options={"include_usage": True}``) kept."""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import SimpleNamespace
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
from threadline.codecs._stream_base import past_limits
from threadline.codecs._stream_base import text_of
from threadline.codecs._think import Piece
from threadline.codecs._think import ThinkSplitter
from threadline.codecs._think import split_think
from threadline.errors import CodecError
from threadline.messages import Part
from threadline.messages import TextPart

_TOP = ("id", "created", "model", "system_fingerprint", "service_tier")

_HELPER_EVENTS = frozenset({"content", "refusal", "tool_calls", "logprobs"})
"""The first word of the ``type`` of the events the OpenAI SDK's chat stream helper derives
from each chunk (``content.delta``, ``refusal.done``, ``tool_calls.function.arguments.delta``,
``logprobs.content.done``...), after that chunk's ``ChunkEvent``."""


def _error_text(error: Any) -> str:
    """What an ``error`` chunk says: ``"<type or code>: <message>"`` for an error object (as
    OpenAI, OpenRouter and vLLM send it), the text itself for a string, else its JSON."""
    if isinstance(error, str):
        return error
    if isinstance(error, Mapping):
        labels = [str(error[key]) for key in ("type", "code") if error.get(key) not in (None, "")]
        label = " ".join(dict.fromkeys(labels)) or "error"
        message = error.get("message")
        return f"{label}: {message}" if message not in (None, "") else label
    return json.dumps(error, ensure_ascii=False, default=str)


class ChatBuilder(Builder):
    def __init__(
        self,
        provider: str,
        reasoning: tuple[str, ...] = (),
        details: bool = False,
        think_tags: bool = False,
    ) -> None:
        super().__init__()
        self.provider = provider
        self._reasoning = reasoning
        """The delta fields a dialect streams reasoning text in (``reasoning_content``)."""
        self._details: dict[Any, dict[str, Any]] | None = {} if details else None
        """OpenRouter's ``reasoning_details`` entries by their ``index``."""
        self._think = ThinkSplitter() if think_tags else None
        """Where ``content`` may start with ``<think>…</think>``: its pieces said as the
        reasoning and the answer the response's ``decode_response`` reads."""
        self._top: dict[str, Any] = {}
        self._message: dict[str, Any] = {"role": "assistant"}
        self._content: list[dict[str, Any]] | None = None
        self._calls: dict[int, dict[str, Any]] = {}
        self._finish: str | None = None
        self._usage: Any = None
        self._finished_sent = False
        self.chunks = 0
        """Events read as chunks (a ``ChunkEvent``'s chunk counts)."""
        self.derived = 0
        """Events of the SDK's stream helper left out: each repeats what its chunk said."""

    def unwrap(self, event: Any) -> Any:
        """The chunk an event of the OpenAI SDK's ``client.chat.completions.stream()`` helper
        carries: a ``ChunkEvent``'s ``chunk``; ``None`` for the events the helper derives from
        the chunks (``content.delta``, ``tool_calls.function.arguments.done``...), which say
        again what their chunk said. Any other event as it is."""
        if self.provider != "openai_chat" or isinstance(event, str):
            return event
        if isinstance(event, Mapping):
            kind, chunk = event.get("type"), event.get("chunk")
        else:
            kind, chunk = getattr(event, "type", None), getattr(event, "chunk", None)
        if kind == "chunk":
            if chunk is None:
                raise CodecError(
                    "openai_chat stream: a ChunkEvent without its chunk (feed the events of "
                    "client.chat.completions.stream() as the SDK yields them, or the chunks)"
                )
            self.chunks += 1
            return chunk
        if isinstance(kind, str) and kind.split(".", 1)[0] in _HELPER_EVENTS:
            self.derived += 1
            return None
        self.chunks += 1
        return event

    def unfinished(self) -> str:
        if self.derived and not self.chunks:
            return (
                f"; {self.derived} events of client.chat.completions.stream() came and no "
                "ChunkEvent: the ChunkEvents carry the stream (the other events repeat what "
                "their chunk said), so feed every event the helper yields, or the chunks"
            )
        return ""

    def feed(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        if event.get("error") is not None:
            return self._error(event)
        if self.finished:
            self._after_finish(event)
        out: list[StreamEvent] = []
        for key in _TOP:
            if event.get(key) is not None:
                self._top[key] = event[key]
        if event.get("usage") is not None:
            self._usage = event["usage"]
        for choice in event.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue  # the first choice is the one decode_response reads
            out.extend(self._delta(choice.get("delta") or {}))
            if choice.get("finish_reason") is not None:
                self._finish = choice["finish_reason"]
                if self.error is not None:
                    continue  # the stream ended in its error: no finish reason completes it
                self.finished = True
                out.extend(self._flush())
                # only the open parts' blocks: a finish_reason on every chunk built them all
                out.extend(self.end_all({key: self._block(key) for key in self._open}))
        if (
            self.finished
            and self.error is None
            and not self._finished_sent
            and (self._usage is not None or not event.get("choices") or self.provider == "mistral")
        ):
            self._finished_sent = True
            out.append(Finish(self._finish, None))
        return out

    def _error(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        """A chunk carrying an ``error`` (OpenAI-compatible servers and OpenRouter send one
        mid-stream, OpenAI's API one holding only the error): the stream ends in it, before or
        after the finish reason (but once the ``Finish`` was given, the message no longer
        changes: the chunk is refused). What else the chunk holds is read as far as it adds to
        the message (its text), for ``message(partial=True)``; its finish reason (``error``) is
        kept as the stop reason and completes nothing."""
        text = _error_text(event["error"])
        if self._finished_sent:
            raise CodecError(f"{self.provider} stream: an error after the stream ended: {text}")
        if self.error is None:
            self.error = text
        if self.finished:
            return []  # the message is whole; the usage that should have followed never came
        return self.feed({key: value for key, value in event.items() if key != "error"})

    def _after_finish(self, event: Mapping[str, Any]) -> None:
        """Refuse what would change the message once its finish reason came: content, or
        another finish reason (the usage may still come)."""
        for choice in event.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            reason = choice.get("finish_reason")
            if (
                delta.get("content")
                or delta.get("refusal")
                or delta.get("tool_calls")
                or any(delta.get(field) for field in self._reasoning)
                or (self._details is not None and delta.get("reasoning_details"))
                or (reason is not None and reason != self._finish)
            ):
                raise CodecError(f"{self.provider} stream: a delta after the finish reason")

    def close(self) -> list[StreamEvent]:
        out = self._flush()
        # No usage chunk came (``include_usage`` was not asked for): finish without it.
        if self.finished and self.error is None and not self._finished_sent:
            self._finished_sent = True
            out.append(Finish(self._finish, None))
        return out

    def _flush(self) -> list[StreamEvent]:
        """The content held back to see whether ``<think>`` or ``</think>`` came, once the
        reply ended."""
        if self._think is None:
            return []
        return self._said(self._think.flush())

    def _said(self, pieces: list[Piece]) -> list[StreamEvent]:
        """Content split by its ``<think>`` tags: the reasoning part, then the text part."""
        out: list[StreamEvent] = []
        for kind, text in pieces:
            if kind == "reasoning":
                index, started = self.start("think", "reasoning")
                out.extend(started)
                out.append(ReasoningDelta(index, text))
            else:
                index, started = self.start("content", "text")
                out.extend(started)
                out.append(TextDelta(index, text))
        return out

    def _thinking(self, delta: Mapping[str, Any]) -> list[StreamEvent]:
        """A dialect's reasoning pieces: its text fields, or OpenRouter's entries (each entry
        a part of its own; the text field beside them then only joins the message)."""
        out: list[StreamEvent] = []
        entries = delta.get("reasoning_details") if self._details is not None else None
        for field in self._reasoning:
            piece = delta.get(field)
            if isinstance(piece, str) and piece:
                if entries or self._details:
                    append(self._message, field, piece)
                    continue
                index, started = self.start(("reasoning", field), "reasoning")
                out.extend(started)
                append(self._message, field, piece)
                out.append(ReasoningDelta(index, piece))
        for at, entry in enumerate(entries or ()):
            if not isinstance(entry, Mapping):
                raise CodecError(f"{self.provider} stream: a reasoning_details entry is no object")
            key = entry.get("index", at)
            assert self._details is not None
            kept = self._details.get(key)
            if kept is None:
                self.room("reasoning")
                kept = self._details[key] = {}
            index, started = self.start(("detail", key), "reasoning")
            out.extend(started)
            for name, value in entry.items():
                if name in ("text", "summary", "data", "signature") and isinstance(value, str):
                    append(kept, name, value)
                    if name in ("text", "summary") and value:
                        out.append(ReasoningDelta(index, value))
                elif value is not None:
                    kept[name] = value
        return out

    def _delta(self, delta: Mapping[str, Any]) -> list[StreamEvent]:
        out: list[StreamEvent] = self._thinking(delta) if self._reasoning else []
        content = delta.get("content")
        if content == "" and "role" in delta and self._content is None:
            # the opening delta says whether the reply has text (``""``) or none (``null``);
            # a later empty piece (Mistral's closing chunk) says nothing
            self._message.setdefault("content", "")
        elif isinstance(content, str) and content and self._content is not None:
            out.extend(self._chunk({"type": "text", "text": content}))  # after Mistral chunks
        elif isinstance(content, str) and content and self._think is not None:
            append(self._message, "content", content)
            out.extend(self._said(self._think.feed(content)))
        elif isinstance(content, str) and content:
            index, out = self.start("content", "text")
            append(self._message, "content", content)
            out.append(TextDelta(index, content))
        elif isinstance(content, list):
            for chunk in content:
                out.extend(self._chunk(chunk))
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            index, started = self.start("refusal", "text")
            out.extend(started)
            append(self._message, "refusal", refusal)
            out.append(TextDelta(index, refusal))
        for call in delta.get("tool_calls") or ():
            out.extend(self._call(call))
        return out

    def _chunk(self, chunk: Mapping[str, Any]) -> list[StreamEvent]:
        """A Mistral content chunk: text, or thinking (whose own chunks hold text)."""
        if self._content is None:
            text = text_of(self._message.get("content"))
            self._content = [{"type": "text", "text": text}] if text else []
            self._message["content"] = self._content
        kind = chunk.get("type")
        last = self._content[-1] if self._content else None
        if kind == "text":
            index, out = self.start(
                ("chunk", len(self._content) - (last is not None and last.get("type") == "text")),
                "text",
            )
            if last is not None and last.get("type") == "text":
                append(last, "text", chunk["text"])
            else:
                self._content.append({"type": "text", "text": chunk["text"]})
            out.append(TextDelta(index, chunk["text"]))
            return out
        if kind == "thinking":
            merge = last is not None and last.get("type") == "thinking"
            index, out = self.start(("chunk", len(self._content) - merge), "reasoning")
            if not merge:
                self._content.append({**chunk, "thinking": []})
                last = self._content[-1]
            assert last is not None
            for piece in chunk.get("thinking") or ():
                texts = last["thinking"]
                if texts and texts[-1].get("type") == "text" and piece.get("type") == "text":
                    append(texts[-1], "text", piece["text"])
                else:
                    texts.append(dict(piece))
                if piece.get("text"):
                    out.append(ReasoningDelta(index, piece["text"]))
            return out
        self.room("other")
        self._content.append(dict(chunk))
        _, out = self.start(("chunk", len(self._content) - 1), "other")
        return out

    def _call(self, call: Mapping[str, Any]) -> list[StreamEvent]:
        at = index_of(call.get("index", len(self._calls)), "tool_calls[].index")
        function = call.get("function") or {}
        entry = self._calls.get(at)
        if entry is None:
            entry = {
                "id": call.get("id"),
                "type": call.get("type") or "function",
                "function": {"name": function.get("name") or "", "arguments": ""},
            }
            self._calls[at] = entry
        elif call.get("id"):
            if entry["id"] and call["id"] != entry["id"]:
                raise CodecError(
                    f"{self.provider} stream: tool call {at} started again, as {call['id']!r} "
                    f"after {entry['id']!r}"
                )
            entry["id"] = call["id"]
        if function.get("name") and not entry["function"]["name"]:
            entry["function"]["name"] = function["name"]
        index, out = self.start(("call", at), "tool_call", entry["id"], entry["function"]["name"])
        arguments = function.get("arguments")
        if isinstance(arguments, Mapping):  # Mistral may send the object whole
            arguments = json.dumps(arguments)
        if isinstance(arguments, str) and arguments:
            append(entry["function"], "arguments", arguments)
            out.append(ToolCallDelta(index, arguments))
        return out

    def _block(self, key: Any) -> Any:
        """The response's block of the part ``key`` (as ``wrap`` takes it)."""
        if isinstance(key, tuple) and key[0] == "reasoning":
            return {key[1]: self._message.get(key[1])}
        if isinstance(key, tuple) and key[0] == "detail" and self._details is not None:
            return {"reasoning_details": [self._details[key[1]]]}
        if isinstance(key, tuple) and key[0] == "call":
            return self._calls.get(key[1])
        if isinstance(key, tuple) and key[0] == "chunk":
            chunks = self._content or ()
            return {"content": [chunks[key[1]]]} if key[1] < len(chunks) else None
        if key == "content" and "content" in self._message and self._content is None:
            if self._think is not None:
                thought, answer = split_think(text_of(self._message["content"]))
                if thought is not None:  # the answer after the tags, as it is
                    return TextPart(text=answer) if answer else None
            return {"content": self._message["content"]}
        if key == "think" and self._think is not None:
            thought, _ = split_think(text_of(self._message.get("content")))
            return {"content": f"<think>{thought}</think>"} if thought else None
        if key == "refusal" and "refusal" in self._message:
            return {"refusal": self._message["refusal"]}
        return None

    def part_of(self, block: Any) -> Part | None:
        if isinstance(block, TextPart):  # read already (the answer after <think> tags)
            return block
        return super().part_of(block)

    def arguments(self) -> dict[str, str]:
        return {
            str(call["id"] or at): text_of(call["function"]["arguments"])
            for at, call in self._calls.items()
        }

    def response(self, *, partial: bool = False) -> dict[str, Any]:
        message = dict(self._message)
        if self._details:
            message["reasoning_details"] = [dict(entry) for entry in self._details.values()]
        if "content" not in message:
            message["content"] = None
        if self._calls:
            message["tool_calls"] = [
                {**call, "id": call["id"] or f"call_{at}"}
                for at, call in sorted(self._calls.items())
            ]
            if partial:  # arguments past the limits are kept by the assembler, not decoded
                for call in message["tool_calls"]:
                    if past_limits(call["function"]["arguments"]):
                        call["function"] = {**call["function"], "arguments": "{}"}
        response: dict[str, Any] = {
            **self._top,
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": self._finish}],
        }
        if self._usage is not None:
            response["usage"] = self._usage
        return document(response)

    def wrap(self, blocks: list[Any]) -> dict[str, Any]:
        block = blocks[0]
        message: dict[str, Any] = {"role": "assistant"}
        if "function" in block:
            message["tool_calls"] = [block]
        else:
            message.update(block)
        return {"model": self._top.get("model"), "choices": [{"index": 0, "message": message}]}


def openai_chat_builder() -> ChatBuilder:
    """A builder for an OpenAI Chat Completions stream (the format's descriptor names it)."""
    return ChatBuilder("openai_chat")


def mistral_builder() -> ChatBuilder:
    """A builder for a Mistral chat stream (the format's descriptor names it)."""
    return ChatBuilder("mistral")


def _dialect_builder(
    name: str, reasoning: tuple[str, ...], details: bool = False, think_tags: bool = False
) -> Any:
    def build() -> ChatBuilder:
        return ChatBuilder(name, reasoning, details, think_tags)

    build.__doc__ = f"A builder for a {name} chat stream (the format's descriptor names it)."
    return build


dialect_builders = SimpleNamespace(
    deepseek=_dialect_builder("deepseek", ("reasoning_content",)),
    openrouter=_dialect_builder("openrouter", ("reasoning",), details=True),
    vllm=_dialect_builder("vllm", ("reasoning_content", "reasoning"), think_tags=True),
    groq=_dialect_builder("groq", ("reasoning",), think_tags=True),
    qwen=_dialect_builder("qwen", ("reasoning_content",)),
    moonshot=_dialect_builder("moonshot", ("reasoning_content",)),
    xai=_dialect_builder("xai", ("reasoning_content",)),
    together=_dialect_builder("together", ("reasoning",), think_tags=True),
)
"""The OpenAI-compatible dialects' stream builders by codec name: Chat Completions chunks
with the dialect's reasoning fields (``threadline.codecs._dialects``)."""
