"""The OpenTelemetry GenAI semantic conventions' message attributes, and a span for one model call.

Traces of model calls carry what was sent and received in three span attributes, each a JSON
array whose shape the conventions fix in JSON schemas (``gen_ai.system_instructions``,
``gen_ai.input.messages``, ``gen_ai.output.messages``), read by Logfire, Phoenix, Langfuse and
any OTLP backend.
[`to_otel_messages`][threadline.interop.otel.to_otel_messages] writes threadline messages as
those attributes; [`from_otel_messages`][threadline.interop.otel.from_otel_messages] reads them
back (from any instrumentation that follows the conventions), so a production trace becomes a
regression fixture that ``prepare_messages`` and ``encode`` accept. No package is needed for
either: the format is JSON.

[`record_model_call`][threadline.interop.otel.record_model_call] records one model call as a
span with the conventions' attributes (operation, provider, models, usage, finish reasons, and
the messages only when content capture is on). It needs ``opentelemetry-api``
(``pip install "threadline[otel]"``), imported when it is called, never before.

How the two shapes meet (``docs/interop/opentelemetry.md`` has the full table and each loss):

- system messages go to ``gen_ai.system_instructions`` (their text parts, in order); the other
  messages to ``gen_ai.input.messages``; internal messages and hook parts are never sent to a
  model and are left out;
- a tool result is a ``tool_call_response`` part of a ``tool`` message; read back, tool call
  responses found in a ``user`` or ``assistant`` message are moved to a tool message of their
  own, as threadline's shape wants;
- fields the conventions have no slot for travel as extra properties of the part (their
  schemas allow them): ``filename``, a result's ``name`` and ``is_error``, a provider tool
  part's ``provider``; extra properties of a part or message that threadline has no field
  for are kept in its metadata as ``"otel.<key>"``, and written back from there;
- an assistant part of a type threadline has no class for (a provider ``file`` reference, a
  generic part) is kept as a hook part named ``"otel.<type>"``, which no model is sent; in
  any other message such a part is refused, naming it.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any
from typing import Final

from typing_extensions import assert_never

from threadline.codecs._media import encode_base64
from threadline.codecs._media import parse_data_url
from threadline.codecs._reading import Reader
from threadline.errors import ErrorDetail
from threadline.errors import ValidationError
from threadline.interop._missing import missing
from threadline.interop._otel_reading import CARRY
from threadline.interop._otel_reading import FINISH
from threadline.interop._otel_reading import FORMAT
from threadline.interop._otel_reading import Reading
from threadline.interop._otel_reading import modality
from threadline.limits import Limits
from threadline.limits import enforce_counts
from threadline.limits import resolve_limits
from threadline.messages import FilePart
from threadline.messages import HookPart
from threadline.messages import Message
from threadline.messages import Part
from threadline.messages import ProviderToolCallPart
from threadline.messages import ProviderToolResultPart
from threadline.messages import ReasoningPart
from threadline.messages import TextPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultContent
from threadline.messages import ToolResultPart
from threadline.usage import Usage

if TYPE_CHECKING:
    from opentelemetry.trace import Span
    from opentelemetry.trace import Tracer

__all__ = [
    "CAPTURE_CONTENT_ENV",
    "INPUT_MESSAGES",
    "OUTPUT_MESSAGES",
    "SYSTEM_INSTRUCTIONS",
    "ModelCall",
    "from_otel_messages",
    "record_model_call",
    "to_otel_messages",
]

SYSTEM_INSTRUCTIONS: Final = "gen_ai.system_instructions"
"""The attribute holding the system instructions: a JSON array of parts."""
INPUT_MESSAGES: Final = "gen_ai.input.messages"
"""The attribute holding the chat history sent to the model: a JSON array of messages."""
OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
"""The attribute holding the model's response: a JSON array of messages, one per choice."""
CAPTURE_CONTENT_ENV: Final = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The environment variable the OpenTelemetry Python GenAI instrumentations read to capture
message content; [`record_model_call`][threadline.interop.otel.record_model_call] reads it
when ``capture_content`` is ``None``."""

_WHAT: Final = "otel.from_otel_messages"

# threadline's provider names and the conventions' gen_ai.provider.name values, where they differ.
_OTEL_PROVIDERS: Final = {
    "openai_chat": "openai",
    "openai_responses": "openai",
    "gemini": "gcp.gemini",
    "bedrock": "aws.bedrock",
    "mistral": "mistral_ai",
    "moonshot": "moonshot_ai",
    "xai": "x_ai",
}
_THREADLINE_PROVIDERS: Final = {
    "gcp.gemini": "gemini",
    "gcp.gen_ai": "gemini",
    "gcp.vertex_ai": "gemini",
    "aws.bedrock": "bedrock",
    "mistral_ai": "mistral",
    "moonshot_ai": "moonshot",
    "x_ai": "xai",
}
# Each provider's stop reasons (decode_response keeps the provider's own value in
# metadata["stop_reason"]) as the conventions' finish reasons; another value is written as is.
FINISH_REASONS: Final = {
    "stop": "stop",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "complete": "stop",
    "completed": "stop",
    "length": "length",
    "max_tokens": "length",
    "incomplete": "length",
    "tool_calls": "tool_call",
    "tool_use": "tool_call",
    "tool_call": "tool_call",
    "function_call": "tool_call",
    "content_filter": "content_filter",
    "content_filtered": "content_filter",
    "safety": "content_filter",
    "refusal": "content_filter",
    "guardrail_intervened": "content_filter",
    "recitation": "content_filter",
    "error": "error",
}


# ---------------------------------------------------------------------------------------------
# Writing


def to_otel_messages(messages: Iterable[Message], output: Message | None = None) -> dict[str, str]:
    """The GenAI semantic conventions' message attributes for a model call, as JSON text.

    Args:
        messages: what was sent to the model. System messages become
            ``gen_ai.system_instructions`` (their parts, in order), the others
            ``gen_ai.input.messages``; internal messages and hook parts, which no model is
            sent, are left out (a hook part named ``"otel.<type>"``, kept by
            ``from_otel_messages``, is written back as the part it was).
        output: the model's response, written to ``gen_ai.output.messages`` with a
            ``finish_reason``: the one it was read with (``metadata["otel.finish_reason"]``),
            else its ``metadata["stop_reason"]`` as the conventions name it (``end_turn`` and
            ``STOP`` are ``stop``, ``max_tokens`` is ``length``...), else ``tool_call`` when it
            calls tools and ``stop`` when it does not.

    Returns:
        The attributes that have content, by name (a key is left out when nothing goes in
        it), each value a JSON array as text, ready for ``span.set_attribute``.

    Raises:
        TypeError: an item of ``messages``, or ``output``, is not a ``Message``.
        threadline.ValidationError: ``output`` is not an assistant message.
    """
    instructions: list[dict[str, Any]] = []
    inputs: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        _check_message(message, f"messages[{index}]")
        if message.role == "internal":
            continue
        parts = _write_parts(message)
        if message.role == "system":
            instructions.extend(parts)
        elif parts:
            inputs.append(_write_message(message, parts))
    out: dict[str, str] = {}
    if instructions:
        out[SYSTEM_INSTRUCTIONS] = _dumps(instructions)
    if inputs:
        out[INPUT_MESSAGES] = _dumps(inputs)
    if output is not None:
        _check_message(output, "output")
        if output.role != "assistant":
            detail = ErrorDetail(
                "output",
                f"the response is the model's, an assistant message, not a {output.role} "
                "message; pass the messages sent as messages",
                "role",
            )
            raise ValidationError(f"invalid output: {detail}", [detail])
        written = _write_message(output, _write_parts(output))
        written["finish_reason"] = _finish_reason(output)
        out[OUTPUT_MESSAGES] = _dumps([written])
    return out


def _finish_reason(message: Message) -> str:
    """The conventions' ``finish_reason`` for a response message (see `to_otel_messages`)."""
    kept = message.metadata.get(FINISH)
    if isinstance(kept, str):
        return kept
    stop = message.metadata.get("stop_reason")
    if isinstance(stop, str) and stop:
        return FINISH_REASONS.get(stop.lower(), stop)
    return "tool_call" if message.tool_calls else "stop"


def _check_message(message: object, where: str) -> None:
    if not isinstance(message, Message):
        raise TypeError(
            f"to_otel_messages takes threadline Message objects; {where} is a "
            f"{type(message).__name__} (use load_json or Message.model_validate first)"
        )


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _write_message(message: Message, parts: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "parts": parts}
    _carry_out(out, message.metadata)
    return out


def _carry_out(out: dict[str, Any], metadata: Mapping[str, Any]) -> dict[str, Any]:
    """``out`` with the ``"otel.<key>"`` entries of ``metadata`` written back as ``<key>``
    (never over a property ``out`` has already)."""
    for key, value in metadata.items():
        if key.startswith(CARRY) and key != FINISH:
            name = key[len(CARRY) :]
            if name and name not in out:
                out[name] = _copy(value)
    return out


def _write_parts(message: Message) -> list[dict[str, Any]]:
    calls = {part.id: part.name for part in message.parts if isinstance(part, ProviderToolCallPart)}
    out: list[dict[str, Any]] = []
    for part in message.parts:
        written = _write_part(part, calls)
        if written is not None:
            out.append(written)
    return out


def _write_part(part: Part, calls: Mapping[str, str]) -> dict[str, Any] | None:
    """The conventions' part for ``part``; every part type has a branch (``assert_never``)."""
    out: dict[str, Any]
    if isinstance(part, TextPart):
        out = {"type": "text", "content": part.text}
    elif isinstance(part, ReasoningPart):
        out = {"type": "reasoning", "content": part.text}
    elif isinstance(part, ToolCallPart):
        arguments = _copy(dict(part.arguments)) if part.raw_arguments is None else None
        out = {"type": "tool_call", "id": part.id, "name": part.name}
        out["arguments"] = part.raw_arguments if arguments is None else arguments
    elif isinstance(part, ToolResultPart):
        out = {"type": "tool_call_response", "id": part.call_id}
        if isinstance(part.content, str):
            out["response"] = part.content
        else:
            out["response"] = [_write_file_or_text(item) for item in part.content]
        if part.name is not None:
            out["name"] = part.name
        if part.is_error:
            out["is_error"] = True
    elif isinstance(part, FilePart):
        out = _write_file(part)
    elif isinstance(part, HookPart):
        if not part.name.startswith(CARRY) or len(part.name) == len(CARRY):
            return None  # application state, never sent to a model
        return {"type": part.name[len(CARRY) :], **_copy(dict(part.state))}
    elif isinstance(part, ProviderToolCallPart):
        details = part.input
        if not (isinstance(details, Mapping) and isinstance(details.get("type"), str)):
            details = {"type": part.name, "input": details}
        out = {"type": "server_tool_call", "id": part.id, "name": part.name}
        out["server_tool_call"] = _copy(details)
        out["provider"] = part.provider
    elif isinstance(part, ProviderToolResultPart):
        response = part.content
        if not (isinstance(response, Mapping) and isinstance(response.get("type"), str)):
            response = {"type": calls.get(part.call_id, "server_tool"), "content": response}
        out = {"type": "server_tool_call_response", "id": part.call_id}
        out["server_tool_call_response"] = _copy(response)
        out["provider"] = part.provider
        if part.is_error:
            out["is_error"] = True
    else:
        assert_never(part)
    return _carry_out(out, part.metadata)


def _write_file_or_text(part: ToolResultContent) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return _carry_out({"type": "text", "content": part.text}, part.metadata)
    return _write_file(part)


def _write_file(part: FilePart) -> dict[str, Any]:
    data = part.data
    if data is None and part.url is not None and part.url.startswith("data:"):
        # The conventions want inline data as a blob, never as a data: URL.
        data = parse_data_url(part.url, Reader(FORMAT), "url")[1]  # type: ignore[index]
    out: dict[str, Any] = {"type": "blob" if data is not None else "uri"}
    out["modality"] = modality(part.media_type)
    out["mime_type"] = part.media_type
    if data is not None:
        out["content"] = encode_base64(data)
    else:
        out["uri"] = part.url
    if part.filename is not None:
        out["filename"] = part.filename
    return _carry_out(out, part.metadata)


def _copy(value: Any) -> Any:
    """A plain copy of a JSON value (read-only mappings and tuples become dicts and lists)."""
    if isinstance(value, Mapping):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy(item) for item in value]
    return value


# ---------------------------------------------------------------------------------------------
# Reading


def from_otel_messages(
    attributes: Mapping[str, Any], *, limits: Limits | None = None
) -> list[Message]:
    """Threadline messages from a span's GenAI message attributes.

    Reads ``gen_ai.system_instructions`` (one system message, first), ``gen_ai.input.messages``
    and ``gen_ai.output.messages`` (one assistant message per choice, last; its
    ``finish_reason`` kept in ``metadata["otel.finish_reason"]``); other keys of
    ``attributes`` are the span's, and only ``gen_ai.provider.name``,
    ``gen_ai.response.model``, ``gen_ai.response.id`` and the ``gen_ai.usage.*`` token counts
    are read from them, into the first output message's metadata (``provider``, ``model``,
    ``response_id``, ``usage``) as ``decode_response`` writes it. Message ids are new.

    The attributes are outside data: each is read within ``limits`` (size, nesting, string
    length, message and part counts) before anything is built. The content is not sanitized:
    a trace holds what your application sent a model, system instructions included; pass
    the result through ``sanitize_untrusted`` when the trace came from someone else.

    Args:
        attributes: the span's attributes (any mapping, such as ``span.attributes`` of an
            exported span, or a dict read from a trace backend's JSON); each message
            attribute as JSON text (``str`` or ``bytes``) or as parsed JSON values.
        limits: how much to read; ``None`` means
            [`Limits.untrusted`][threadline.limits.Limits.untrusted].

    Returns:
        The messages, in the order the model saw them, then the response.

    Raises:
        threadline.LimitExceededError: an attribute exceeds ``limits``, naming its JSON path.
        threadline.CodecError: an attribute does not follow the conventions' schema; the
            message names the JSON path of the first value that does not fit
            (``gen_ai.input.messages[2].parts[0].content``) and what to do about it.
        threadline.ValidationError: an attribute is text but not JSON.
        TypeError: ``attributes`` is not a mapping.
    """
    if not isinstance(attributes, Mapping):
        raise TypeError(
            "from_otel_messages takes a mapping of span attributes (span.attributes, or a dict "
            f"with {INPUT_MESSAGES!r}...), not a {type(attributes).__name__}"
        )
    checked = resolve_limits(limits) if limits is not None else Limits.untrusted()
    reader = Reading(Reader(FORMAT), checked, _provider_name(attributes))
    messages: list[Message] = []
    instructions = reader.document(attributes, SYSTEM_INSTRUCTIONS, layout=False)
    if instructions is not None:
        parts = reader.system_parts(instructions, SYSTEM_INSTRUCTIONS)
        if parts:
            messages.append(reader.message("system", parts, {}, SYSTEM_INSTRUCTIONS))
    for key in (INPUT_MESSAGES, OUTPUT_MESSAGES):
        document = reader.document(attributes, key, layout=True)
        if document is None:
            continue
        output = key == OUTPUT_MESSAGES
        first = len(messages)
        for index, raw in enumerate(reader.reader.expect_list(document, key)):
            messages.extend(reader.chat_message(raw, f"{key}[{index}]", output=output))
        if output and len(messages) > first:
            messages[first] = _with_response(messages[first], attributes, reader)
    enforce_counts(messages, checked, what=_WHAT)
    return messages


def _provider_name(attributes: Mapping[str, Any]) -> str | None:
    value = attributes.get("gen_ai.provider.name", attributes.get("gen_ai.system"))
    if not isinstance(value, str) or not value:
        return None
    return _THREADLINE_PROVIDERS.get(value, value)


_USAGE_ATTRIBUTES: Final = {
    "gen_ai.usage.input_tokens": "input_tokens",
    "gen_ai.usage.output_tokens": "output_tokens",
    "gen_ai.usage.cache_read.input_tokens": "cache_read_tokens",
    "gen_ai.usage.cache_creation.input_tokens": "cache_write_tokens",
    "gen_ai.usage.reasoning.output_tokens": "reasoning_tokens",
}


def _with_response(message: Message, attributes: Mapping[str, Any], reader: Reading) -> Message:
    """The first output message with the span's provider, model, response id and usage."""
    extra: dict[str, Any] = {}
    if reader.provider is not None:
        extra["provider"] = reader.provider
    for key, name in (("gen_ai.response.model", "model"), ("gen_ai.response.id", "response_id")):
        value = attributes.get(key)
        if value is not None:
            extra[name] = reader.reader.expect_str(value, key)
    counts = {
        name: count
        for key, name in _USAGE_ATTRIBUTES.items()
        if (count := reader.reader.optional_count(attributes, key, "")) is not None
    }
    if counts:
        extra["usage"] = Usage(**counts).to_dict()
    return message.with_metadata(extra) if extra else message


# ---------------------------------------------------------------------------------------------
# The span of one model call (opentelemetry-api, imported when called)


class ModelCall:
    """The span of one model call, open inside
    [`record_model_call`][threadline.interop.otel.record_model_call]: record the response on it
    with [`record_response`][threadline.interop.otel.ModelCall.record_response]."""

    __slots__ = ("capture_content", "messages", "span")

    def __init__(self, span: Span, messages: Sequence[Message], capture_content: bool) -> None:
        self.span = span
        """The OpenTelemetry span, for attributes of your own."""
        self.messages = messages
        """The messages sent to the model."""
        self.capture_content = capture_content
        """Whether the messages are recorded on the span."""

    def record_response(self, response: Message) -> None:
        """Record the model's response: ``gen_ai.response.model`` and ``gen_ai.response.id``
        (from the metadata ``decode_response`` writes), ``gen_ai.response.finish_reasons``, the
        ``gen_ai.usage.*`` token counts of its [`Usage`][threadline.Usage] (input and output,
        cache reads and writes, reasoning), and, when content capture is on, the messages.

        Raises:
            TypeError: ``response`` is not a ``Message``.
        """
        _check_message(response, "response")
        attributes: dict[str, Any] = {}
        metadata = response.metadata
        for key, name in (
            ("model", "gen_ai.response.model"),
            ("response_id", "gen_ai.response.id"),
        ):
            value = metadata.get(key)
            if isinstance(value, str):
                attributes[name] = value
        attributes["gen_ai.response.finish_reasons"] = (_finish_reason(response),)
        usage = response.usage
        if usage is not None:
            for name, field in _USAGE_ATTRIBUTES.items():
                count = getattr(usage, field)
                if count or field in ("input_tokens", "output_tokens"):
                    attributes[name] = count
        if self.capture_content:
            attributes.update(to_otel_messages(self.messages, response))
        self.span.set_attributes(attributes)


@contextlib.contextmanager
def record_model_call(
    messages: Iterable[Message],
    *,
    provider: str,
    model: str,
    operation: str = "chat",
    capture_content: bool | None = None,
    tracer: Tracer | None = None,
    conversation_id: str | None = None,
) -> Iterator[ModelCall]:
    """Record one model call as a span that follows the GenAI semantic conventions.

    The span (kind ``CLIENT``, named ``"{operation} {model}"``) starts with
    ``gen_ai.operation.name``, ``gen_ai.provider.name`` and ``gen_ai.request.model`` (the
    attributes the conventions want at creation, for sampling) and ends when the block does;
    call [`ModelCall.record_response`][threadline.interop.otel.ModelCall.record_response] with
    the response inside it. An exception leaving the block sets ``error.type`` to its class
    name and the span's status to error, and propagates.

    The messages are recorded (``gen_ai.system_instructions``, ``gen_ai.input.messages``,
    ``gen_ai.output.messages``, as [`to_otel_messages`][threadline.interop.otel.to_otel_messages]
    writes them) only when content capture is on: the conventions ask instrumentations not to
    capture content by default, since it holds what users wrote.

    Args:
        messages: what is sent to the model.
        provider: the provider, as threadline names it (``"gemini"``, ``"bedrock"``,
            ``"openai_chat"``...) or as the conventions do (``"gcp.gemini"``); threadline's
            names are written as the conventions' (``gcp.gemini``, ``aws.bedrock``,
            ``mistral_ai``, ``openai``...).
        model: the model requested (``gen_ai.request.model``).
        operation: ``gen_ai.operation.name``: ``"chat"``, or ``"generate_content"``...
        capture_content: record the messages; ``None`` reads
            ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``, the switch of the
            OpenTelemetry Python GenAI instrumentations (``true``, ``span_only`` and
            ``span_and_event`` turn it on; unset, it is off).
        tracer: the tracer; ``None`` takes ``threadline.interop.otel``'s from the global
            tracer provider.
        conversation_id: ``gen_ai.conversation.id``, such as a History's conversation id.

    Yields:
        The [`ModelCall`][threadline.interop.otel.ModelCall].

    Raises:
        ImportError: ``opentelemetry-api`` is not installed (``pip install "threadline[otel]"``).
        TypeError: an item of ``messages`` is not a ``Message``.
    """
    try:
        from opentelemetry import trace
    except ImportError as error:
        raise missing("opentelemetry-api", "opentelemetry", "otel", error) from error
    sent = list(messages)
    for index, message in enumerate(sent):
        _check_message(message, f"messages[{index}]")
    capture = _capture_from_env() if capture_content is None else capture_content
    if tracer is None:
        tracer = trace.get_tracer("threadline.interop.otel")
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": operation,
        "gen_ai.provider.name": _OTEL_PROVIDERS.get(provider, provider),
        "gen_ai.request.model": model,
    }
    if conversation_id is not None:
        attributes["gen_ai.conversation.id"] = conversation_id
    with tracer.start_as_current_span(
        f"{operation} {model}", kind=trace.SpanKind.CLIENT, attributes=attributes
    ) as span:
        if capture:
            span.set_attributes(to_otel_messages(sent))
        try:
            yield ModelCall(span, sent, capture)
        except Exception as error:
            span.set_attribute("error.type", type(error).__qualname__)
            raise


def _capture_from_env() -> bool:
    value = os.environ.get(CAPTURE_CONTENT_ENV, "")
    return value.strip().lower() in ("true", "1", "span_only", "span_and_event")
