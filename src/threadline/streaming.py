"""Streamed responses: a provider's stream events assembled into the assistant message.

[`StreamAssembler`][threadline.StreamAssembler] takes one provider's stream events, one at a
time, as the provider sends them (the SSE ``data`` JSON as a dict, or the SDK's own event
object), says what arrived as neutral events a UI can render, and gives the assistant
[`Message`][threadline.Message] at the end. It rebuilds the provider's own final response from
the events and reads it with that codec's ``decode_response``, so the law holds by
construction: for every response R and every event sequence the provider may send for it, the
assembled message equals ``decode_response(R)`` (parts, signatures, item ids, metadata, usage).

Formats (codec names): ``openai_chat`` (Chat Completions chunks, or the events of the SDK's
``client.chat.completions.stream()`` helper), ``openai_responses``
(Responses stream events), ``anthropic`` (Messages SSE events), ``gemini``
(``streamGenerateContent`` chunks), ``mistral`` (chat completion chunks), ``bedrock``
(``ConverseStream`` events, as boto3 yields them).

A stream is untrusted input (a proxy, a compromised upstream or a buggy gateway writes it), so
it is read within [`Limits`][threadline.Limits] as it arrives, not only at ``message()``; see
[`StreamAssembler`][threadline.StreamAssembler].
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterable
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any
from typing import NoReturn

from threadline._bounded_json import parse_json
from threadline._bounded_json import resolve_limits
from threadline.codecs._formats import DESCRIPTORS
from threadline.codecs._formats import descriptor
from threadline.codecs._stream_base import CURRENT
from threadline.codecs._stream_base import Bounds
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
from threadline.codecs._stream_base import bounded
from threadline.codecs._stream_base import check_arguments
from threadline.codecs._stream_base import check_event
from threadline.codecs._stream_base import cut_strings
from threadline.codecs._stream_base import parse_object
from threadline.errors import CodecError
from threadline.errors import LimitExceededError
from threadline.errors import ThreadlineError
from threadline.errors import UnknownProviderError
from threadline.limits import Limits
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
            never does): it tags the message and its reasoning, which then replay to it.
            Without it, Bedrock reasoning names no model and replays only to an ``encode``
            given no model (``encode(..., model=modelId)`` leaves it out).
        limits: what the stream may hold ([`Limits`][threadline.Limits]; ``None`` means
            ``Limits()``); pass ``Limits.untrusted()`` for a stream a proxy or an untrusted
            upstream writes. They are enforced as events arrive: every index or part an event
            names below ``max_parts`` (refused before anything is stored at it), each joined
            text and argument text and every string of an event up to ``max_string``, each
            event nested at most ``max_depth``; the assembled message is read within all of
            them. Over a limit,
            ``feed()`` raises a ``CodecError`` naming it (its ``__cause__`` is the
            [`LimitExceededError`][threadline.limits.LimitExceededError]), and so does every
            later ``feed()`` and ``message()``; ``message(partial=True)`` gives what arrived up
            to the limit (a text cut at ``max_string``).

    Raises:
        threadline.UnknownProviderError: no streaming format has that name.
        TypeError: ``limits`` is not a ``Limits``.
    """

    def __init__(
        self,
        provider: str,
        *,
        tools: Iterable[Any] = (),
        model: str | None = None,
        limits: Limits | None = None,
    ) -> None:
        described = descriptor(provider)
        if described is None:
            known = ", ".join(sorted(DESCRIPTORS))
            raise UnknownProviderError(
                f"no stream format named {provider!r}; the formats are {known}"
            )
        build: Callable[[], Builder] = described.stream_builder.load()
        self.provider = provider
        self.limits = resolve_limits(limits)
        """The [`Limits`][threadline.Limits] the stream is read within."""
        self._builder = build()
        self._builder.decode = self._decode
        self._bounds = Bounds(self.limits, f"{provider} stream")
        self._builder.bounds = self._bounds
        self._refused: LimitExceededError | None = None
        self._closed = False
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
        builder = self._builder
        return builder.finished and builder.error is None and self._refused is None

    def feed(self, event: Any) -> list[StreamEvent]:
        """Read one stream event; return the neutral events it carries, in order.

        Args:
            event: the event as the provider sends it: the SSE ``data`` JSON as a dict (or
                as JSON text; Chat's closing ``[DONE]`` is accepted and ignored), or the
                SDK's own event object (dumped with its unset fields left out). For
                ``openai_chat``, the events of the SDK's ``client.chat.completions.stream()``
                helper too: a ``ChunkEvent`` is read as its ``chunk``, and the events the
                helper derives from each chunk (``content.delta``, ``content.done``,
                ``tool_calls.function.arguments.delta``...) are left out, since they repeat
                what their chunk said (``parsed`` output is the helper's to give).

        Raises:
            threadline.CodecError: the event is not one of the format (not a JSON object, a
                delta for a part that never started, a part started again, an event after the
                one that ended the stream), or it goes past the ``limits`` (the message names
                the limit), or an earlier one did.
        """
        if self._refused is not None:
            raise self._refusal()
        event = self._builder.unwrap(event)
        if event is None:  # a helper's event that repeats what its chunk said
            if self._closed:
                raise CodecError(f"{self.provider} stream: an event after the stream was closed")
            self._builder.events += 1
            return []
        data = as_event(event)
        if isinstance(data, str):
            if data.strip() == "[DONE]":
                return self.close()
            try:
                data = parse_json(data, self.limits, what=f"{self.provider} stream event")
            except LimitExceededError as error:
                raise self._refuse(error) from error
            except (ThreadlineError, ValueError):
                raise CodecError(f"{self.provider} stream: an event is not JSON") from None
        if isinstance(data, Mapping) and data.keys() == {"data"}:
            data = data["data"]  # an SSE envelope, as mistralai's CompletionEvent
        if not isinstance(data, Mapping):
            raise CodecError(
                f"{self.provider} stream: an event must be a JSON object, got {type(data).__name__}"
            )
        builder = self._builder
        if self._closed:
            raise CodecError(f"{self.provider} stream: an event after the stream was closed")
        builder.events += 1
        self._bounds.event = builder.events
        token = CURRENT.set(self._bounds)  # not `bounded`: a context manager costs a µs an event
        try:
            too_long = check_event(data, self._bounds)
            if too_long is not None:
                self._read_cut(data, too_long)
            try:
                events = builder.feed(data)
            except (CodecError, LimitExceededError):
                raise
            except _MALFORMED as error:
                raise CodecError(
                    f"{self.provider} stream: event {builder.events} is malformed ({error!r})"
                ) from None
            return self._filled(events)
        except LimitExceededError as error:
            raise self._refuse(error) from error
        finally:
            CURRENT.reset(token)

    def _read_cut(self, data: Mapping[str, Any], too_long: LimitExceededError) -> NoReturn:
        """Read an event holding strings past ``max_string`` with them cut to it, then stop:
        the stream keeps what arrived up to the limit."""
        assert self.limits.max_string is not None
        with contextlib.suppress(CodecError, *_MALFORMED):
            self._builder.feed(cut_strings(data, self.limits.max_string))
        raise too_long

    def _refuse(self, error: LimitExceededError) -> CodecError:
        """Stop reading at a limit: this and every later event is refused."""
        self._refused = error
        return self._refusal()

    def _refusal(self) -> CodecError:
        error = self._refused
        assert error is not None
        refusal = CodecError(str(error))
        refusal.__cause__ = error
        return refusal

    def close(self) -> list[StreamEvent]:
        """Say that the stream ended; return the neutral events held back until then.

        Only Chat Completions holds one back: the [`Finish`][threadline.Finish] of a stream
        that sent no usage chunk (``stream_options={"include_usage": True}`` not asked for),
        since the chunk with the finish reason cannot tell whether one follows. Feeding
        Chat's ``[DONE]`` closes the stream; [`assemble`][threadline.assemble] and
        [`astream`][threadline.astream] close it at the end of the events. Events fed after it
        are refused.
        """
        if self._refused is not None or self._closed:
            return []
        self._closed = True
        with bounded(self._bounds):
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
        except CodecError:
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
            threadline.CodecError: (not ``partial``) the stream is not finished (a Bedrock
                stream is finished at its ``metadata``, after ``messageStop``), ended in an
                error (an ``error`` event, a Chat or Mistral chunk carrying an ``error``, a
                Bedrock exception event: its text is in the message, and in
                ``metadata["threadline.stream_error"]`` of the partial message), went past
                the ``limits`` (the message names the limit), or a tool call's arguments are
                not a JSON object.
        """
        with bounded(self._bounds):
            return self._message(partial)

    def _message(self, partial: bool) -> Message:
        builder = self._builder
        if not partial:
            if self._refused is not None:
                raise self._refusal()
            if builder.error is not None:
                raise CodecError(f"{self.provider} stream ended in an error: {builder.error}")
            if not builder.finished:
                raise CodecError(
                    f"{self.provider} stream is not finished after {builder.events} events "
                    f"(cut off?); message(partial=True) gives what arrived{builder.unfinished()}"
                )
            try:
                check_arguments(builder)
                return self._decode(builder.response())
            except CodecError:
                raise
            except LimitExceededError as error:
                raise CodecError(f"{self.provider} stream: {error}") from error
            except ThreadlineError as error:
                raise CodecError(f"{self.provider} stream: {error}") from None
            except _MALFORMED as error:
                raise CodecError(f"{self.provider} stream: malformed events ({error!r})") from None
        try:
            message = self._decode(builder.response(partial=True))
            message = _keep_cut_arguments(message, builder.arguments(), self.limits)
        except (ThreadlineError, *_MALFORMED) as error:
            from threadline.messages import assistant_message

            message = assistant_message("").with_metadata(
                {
                    "provider": DESCRIPTORS[self.provider].provider,
                    "threadline.stream_error": str(error),
                }
            )
        extra: dict[str, Any] = {INCOMPLETE: True}
        if builder.error is not None:
            extra["threadline.stream_error"] = builder.error
        elif self._refused is not None:
            extra["threadline.stream_error"] = str(self._refused)
        return message.with_metadata({**message.metadata, **extra})

    def _decode(self, response: dict[str, Any]) -> Message:
        from threadline.codecs import decode_response

        return decode_response(
            response,
            provider=self.provider,
            limits=self.limits,
            tool_names=self._tool_names,
            model=self._model,
        )


def _keep_cut_arguments(message: Message, texts: Mapping[str, str], limits: Limits) -> Message:
    if not texts:
        return message
    parts = list(message.parts)
    changed = False
    for at, part in enumerate(parts):
        text = texts.get(part.id) if isinstance(part, ToolCallPart) else None
        cut = isinstance(part, ToolCallPart) and text and parse_object(text, limits) is None
        if cut and isinstance(part, ToolCallPart) and part.raw_arguments is None:
            parts[at] = dataclasses.replace(part, raw_arguments=text)
            changed = True
    return message.model_copy(update={"parts": tuple(parts)}) if changed else message


def assemble(
    events: Iterable[Any],
    *,
    provider: str,
    tools: Iterable[Any] = (),
    model: str | None = None,
    limits: Limits | None = None,
) -> Message:
    """The assistant message of a whole recorded stream: every event fed to a
    [`StreamAssembler`][threadline.StreamAssembler] (with ``tools``, ``model`` and ``limits``),
    then ``message()``.

    Raises:
        threadline.CodecError: an event is not one of the format, goes past the ``limits``,
            or the stream is not complete (see
            [`StreamAssembler.message`][threadline.streaming.StreamAssembler.message]).
    """
    assembler = StreamAssembler(provider, tools=tools, model=model, limits=limits)
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
    limits: Limits | None = None,
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
        model: the model the request went to, for a stream that names none (Bedrock's:
            without it, its reasoning replays only to an ``encode`` given no model).
        limits: what the stream may hold (see `StreamAssembler`); ``None`` means ``Limits()``.
    """
    return AsyncStream(events, StreamAssembler(provider, tools=tools, model=model, limits=limits))
