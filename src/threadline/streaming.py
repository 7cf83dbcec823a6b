"""Streamed responses: a provider's stream events assembled into the assistant message.

[`StreamAssembler`][threadline.StreamAssembler] takes one provider's stream events, one at a
time, as the provider sends them (the SSE ``data`` JSON as a dict, or the SDK's own event
object), says what arrived as neutral events a UI can render, and gives the assistant
[`Message`][threadline.Message] at the end. It rebuilds the provider's own final response from
the events and reads it with that codec's ``decode_response``, so the law holds by
construction: for every response R and every event sequence the provider may send for it, the
assembled message equals ``decode_response(R)`` (parts, signatures, item ids, metadata, usage).

Formats (codec names): ``openai_chat`` (Chat Completions chunks), ``openai_responses``
(Responses stream events), ``anthropic`` (Messages SSE events), ``gemini``
(``streamGenerateContent`` chunks), ``mistral`` (chat completion chunks), ``bedrock``
(``ConverseStream`` events, as boto3 yields them).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterable
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any

from threadline.codecs._stream_base import Builder
from threadline.codecs._stream_base import Finish
from threadline.codecs._stream_base import PartEnd
from threadline.codecs._stream_base import PartKind
from threadline.codecs._stream_base import PartStart
from threadline.codecs._stream_base import ReasoningDelta
from threadline.codecs._stream_base import StreamEvent
from threadline.codecs._stream_base import TextDelta
from threadline.codecs._stream_base import ToolCallDelta
from threadline.codecs._stream_base import as_event
from threadline.codecs._stream_base import check_arguments
from threadline.codecs._stream_base import parse_object
from threadline.errors import CodecError
from threadline.errors import ThreadlineError
from threadline.errors import UnknownProviderError
from threadline.messages import Message
from threadline.messages import ToolCallPart

__all__ = [
    "AsyncStream",
    "Finish",
    "PartEnd",
    "PartKind",
    "PartStart",
    "ReasoningDelta",
    "StreamAssembler",
    "StreamEvent",
    "TextDelta",
    "ToolCallDelta",
    "assemble",
    "astream",
]

_MALFORMED = (KeyError, TypeError, AttributeError, IndexError, ValueError)
"""What reading an event of the wrong shape raises inside a builder, reported as a
``CodecError``."""

INCOMPLETE = "threadline.incomplete"
"""The metadata key ``message(partial=True)`` sets to ``True``."""


def _builders() -> dict[str, Callable[[], Builder]]:
    from threadline.codecs._stream_anthropic import AnthropicBuilder
    from threadline.codecs._stream_bedrock import BedrockBuilder
    from threadline.codecs._stream_chat import ChatBuilder
    from threadline.codecs._stream_gemini import GeminiBuilder
    from threadline.codecs._stream_responses import ResponsesBuilder

    return {
        "anthropic": AnthropicBuilder,
        "bedrock": BedrockBuilder,
        "gemini": GeminiBuilder,
        "mistral": lambda: ChatBuilder("mistral"),
        "openai_chat": lambda: ChatBuilder("openai_chat"),
        "openai_responses": ResponsesBuilder,
    }


class StreamAssembler:
    """Assembles one streamed response of ``provider`` into an assistant message.

    ```python
    assembler = StreamAssembler("anthropic")
    for event in stream:  # SSE data dicts, or the SDK's event objects
        for neutral in assembler.feed(event):
            ...  # render TextDelta.text as it arrives
    message = assembler.message()
    ```

    Args:
        provider: the codec name of the stream's format: ``openai_chat``,
            ``openai_responses``, ``anthropic``, ``gemini``, ``mistral`` or ``bedrock``.
        tools: the request's tools ([`ToolDefinition`][threadline.ToolDefinition]s or
            names): a call to a tool whose name the provider's API would reject gets the
            stored name back, as ``decode_response(..., tool_names=...)`` does.
        model: the model the request went to, for a stream that names none (Bedrock's
            never does): it tags the message and its reasoning.

    Raises:
        threadline.UnknownProviderError: no streaming format has that name.
    """

    def __init__(
        self, provider: str, *, tools: Iterable[Any] = (), model: str | None = None
    ) -> None:
        builders = _builders()
        if provider not in builders:
            known = ", ".join(sorted(builders))
            raise UnknownProviderError(
                f"no stream format named {provider!r}; the formats are {known}"
            )
        self.provider = provider
        self._builder = builders[provider]()
        self._builder.decode = self._decode
        self._model = model
        self._finished = False
        names = [tool if isinstance(tool, str) else tool.name for tool in tools]
        if names:
            from threadline.codecs import wire_tool_names

            self._tool_names = wire_tool_names(names, provider=provider)
        else:
            self._tool_names = {}

    @property
    def finished(self) -> bool:
        """Whether the provider said the response is complete (``message()`` answers)."""
        return self._builder.finished and self._builder.error is None

    def feed(self, event: Any) -> list[StreamEvent]:
        """Read one stream event; return the neutral events it carries, in order.

        Args:
            event: the event as the provider sends it: the SSE ``data`` JSON as a dict (or
                as JSON text; Chat's closing ``[DONE]`` is accepted and ignored), or the
                SDK's own event object (dumped with its unset fields left out).

        Raises:
            threadline.CodecError: the event is not one of the format (not a JSON object,
                or a delta for a part that never started).
        """
        data = as_event(event)
        if isinstance(data, str):
            if data.strip() == "[DONE]":
                return self.close()
            try:
                data = json.loads(data)
            except ValueError:
                raise CodecError(f"{self.provider} stream: an event is not JSON") from None
        if isinstance(data, Mapping) and data.keys() == {"data"}:
            data = data["data"]  # an SSE envelope, as mistralai's CompletionEvent
        if not isinstance(data, Mapping):
            raise CodecError(
                f"{self.provider} stream: an event must be a JSON object, got {type(data).__name__}"
            )
        self._builder.events += 1
        try:
            events = self._builder.feed(data)
        except _MALFORMED as error:
            raise CodecError(
                f"{self.provider} stream: event {self._builder.events} is malformed ({error!r})"
            ) from None
        return self._filled(events)

    def close(self) -> list[StreamEvent]:
        """Say that the stream ended; return the neutral events held back until then.

        Only Chat Completions holds one back: the [`Finish`][threadline.Finish] of a stream
        that sent no usage chunk (``stream_options={"include_usage": True}`` not asked for),
        since the chunk with the finish reason cannot tell whether one follows. Feeding
        Chat's ``[DONE]`` closes the stream; [`assemble`][threadline.assemble] and
        [`astream`][threadline.astream] close it at the end of the events.
        """
        return self._filled(self._builder.close())

    def _filled(self, events: list[StreamEvent]) -> list[StreamEvent]:
        if events and isinstance(events[-1], Finish):
            if self._finished:
                # a repeated end of the response (message_stop, metadata, response.completed)
                # is said once: each read the whole message again, N of them N times
                events.pop()
            else:
                events[-1] = self._finish(events[-1])
                self._finished = True
        return events

    def _finish(self, finish: Finish) -> Finish:
        try:
            message = self.message()
        except (CodecError, ValueError):
            return finish
        return Finish(message.metadata.get("stop_reason"), message.usage)

    def message(self, *, partial: bool = False) -> Message:
        """The assembled assistant message.

        Args:
            partial: return what arrived so far instead of raising when the stream is not
                complete, marked ``metadata["threadline.incomplete"] = True``. Tool calls
                whose arguments were cut keep the text that arrived in ``raw_arguments``;
                [`prepare_messages`][threadline.prepare_messages] answers them like any
                crash's dangling calls.

        Raises:
            threadline.CodecError: (not ``partial``) the stream is not finished, ended in an
                ``error`` event, or a tool call's arguments are not a JSON object.
        """
        builder = self._builder
        if not partial:
            if builder.error is not None:
                raise CodecError(f"{self.provider} stream ended in an error: {builder.error}")
            if not builder.finished:
                raise CodecError(
                    f"{self.provider} stream is not finished after {builder.events} events "
                    f"(cut off?); message(partial=True) gives what arrived"
                )
            check_arguments(builder)
            try:
                response = builder.response()
            except CodecError:
                raise
            except _MALFORMED as error:
                raise CodecError(f"{self.provider} stream: malformed events ({error!r})") from None
            return self._decode(response)
        try:
            message = self._decode(builder.response(partial=True))
            message = _keep_cut_arguments(message, builder.arguments())
        except (ThreadlineError, *_MALFORMED) as error:
            from threadline.messages import assistant_message

            message = assistant_message("").with_metadata(
                {"provider": _provider_name(self.provider), "threadline.stream_error": str(error)}
            )
        extra: dict[str, Any] = {INCOMPLETE: True}
        if builder.error is not None:
            extra["threadline.stream_error"] = builder.error
        return message.with_metadata({**message.metadata, **extra})

    def _decode(self, response: dict[str, Any]) -> Message:
        from threadline.codecs import decode_response

        return decode_response(
            response, provider=self.provider, tool_names=self._tool_names, model=self._model
        )


def _provider_name(codec: str) -> str:
    return {"openai_chat": "openai", "openai_responses": "openai"}.get(codec, codec)


def _keep_cut_arguments(message: Message, texts: Mapping[str, str]) -> Message:
    if not texts:
        return message
    parts = list(message.parts)
    changed = False
    for at, part in enumerate(parts):
        text = texts.get(part.id) if isinstance(part, ToolCallPart) else None
        cut = isinstance(part, ToolCallPart) and text and parse_object(text) is None
        if cut and isinstance(part, ToolCallPart) and part.raw_arguments is None:
            parts[at] = dataclasses.replace(part, raw_arguments=text)
            changed = True
    return message.model_copy(update={"parts": tuple(parts)}) if changed else message


def assemble(
    events: Iterable[Any], *, provider: str, tools: Iterable[Any] = (), model: str | None = None
) -> Message:
    """The assistant message of a whole recorded stream: every event fed to a
    [`StreamAssembler`][threadline.StreamAssembler], then ``message()``.

    Raises:
        threadline.CodecError: an event is not one of the format, or the stream is not
            complete (see
            [`StreamAssembler.message`][threadline.streaming.StreamAssembler.message]).
    """
    assembler = StreamAssembler(provider, tools=tools, model=model)
    for event in events:
        assembler.feed(event)
    assembler.close()
    return assembler.message()


class AsyncStream:
    """What [`astream`][threadline.astream] returns: iterate it for the neutral events; then
    ``message()`` is the assembled message (``assembler`` holds the state)."""

    def __init__(self, events: AsyncIterable[Any] | Iterable[Any], assembler: StreamAssembler):
        self.assembler = assembler
        """The [`StreamAssembler`][threadline.StreamAssembler] being fed."""
        self._events = events

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        return self._run()

    async def _run(self) -> AsyncIterator[StreamEvent]:
        if isinstance(self._events, AsyncIterable):
            async for event in self._events:
                for neutral in self.assembler.feed(event):
                    yield neutral
        else:
            for event in self._events:
                for neutral in self.assembler.feed(event):
                    yield neutral
        for neutral in self.assembler.close():
            yield neutral

    def message(self, *, partial: bool = False) -> Message:
        """The assembled message (see
        [`StreamAssembler.message`][threadline.streaming.StreamAssembler.message])."""
        return self.assembler.message(partial=partial)


def astream(
    events: AsyncIterable[Any] | Iterable[Any],
    *,
    provider: str,
    tools: Iterable[Any] = (),
    model: str | None = None,
) -> AsyncStream:
    """Assemble a stream while iterating it: ``async for event in stream`` yields the
    neutral events as the provider's events arrive; ``stream.message()`` afterwards gives
    the message.

    ```python
    stream = astream(await client.messages.create(..., stream=True), provider="anthropic")
    async for event in stream:
        if isinstance(event, TextDelta):
            print(event.text, end="")
    message = stream.message()
    ```

    Args:
        events: an async iterable (an SDK's async stream) or a plain iterable of events.
        provider: the codec name of the stream's format.
        tools: the request's tools or their names (see `StreamAssembler`).
        model: the model the request went to, for a stream that names none.
    """
    return AsyncStream(events, StreamAssembler(provider, tools=tools, model=model))
