"""pydantic-ai message histories to and from threadline messages.

[`to_pydantic_ai`][threadline.interop.pydantic_ai.to_pydantic_ai] turns threadline messages into
the ``ModelMessage`` list an ``Agent`` takes as ``message_history``;
[`from_pydantic_ai`][threadline.interop.pydantic_ai.from_pydantic_ai] turns what
``result.all_messages()`` returns (or its JSON) into threadline messages, to repair, store or send
through a codec. Needs ``pip install "threadline[pydantic-ai]"``.

The shapes differ: pydantic-ai groups a turn's system prompts, user prompts and tool returns in
one ``ModelRequest``, threadline gives each its own message. Everything one side has no slot for
is carried, never dropped silently:

- a pydantic-ai field with no threadline slot is kept in the metadata of the part (or message) it
  belongs to, as JSON under ``"pydantic_ai.<field>"``, and restored from there;
- a pydantic-ai part threadline has no type for (``CompactionPart``, ``SpeechPart``, instruction
  and capability deltas, a user prompt holding a ``CachePoint``...) becomes a
  [`HookPart`][threadline.HookPart] named ``"pydantic_ai.part"`` holding the part's JSON (in an
  ``internal`` message when it was part of a request), which codecs never send to a model;
- threadline data with no pydantic-ai slot (message metadata, a file's ``filename``, a
  reasoning ``summary``, hook parts, a file by URL in an assistant message...) is kept in the
  pydantic-ai message's ``metadata["threadline"]``, which pydantic-ai never sends to a model.

What is lost is listed on the docs page ("pydantic-ai"): message ids, and ``internal`` messages
(which never reach a model).
"""

from __future__ import annotations

import dataclasses
import json
import typing
from collections.abc import Iterable
from collections.abc import Mapping
from datetime import datetime
from datetime import timezone
from typing import Any

import pydantic
from typing_extensions import assert_never

from threadline._message_fields import json_result_text
from threadline._validation import translate_errors
from threadline.errors import ValidationError
from threadline.integrity import Pending
from threadline.interop._missing import missing
from threadline.messages import FilePart
from threadline.messages import HookPart
from threadline.messages import Message
from threadline.messages import Part as ThreadlinePart
from threadline.messages import ProviderToolCallPart
from threadline.messages import ProviderToolResultPart
from threadline.messages import ReasoningPart
from threadline.messages import TextPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart
from threadline.usage import Usage

try:
    from pydantic_ai import messages as pai
    from pydantic_ai.usage import RequestUsage
except ImportError as error:  # pragma: no cover - the extra is installed in the test run
    raise missing("pydantic-ai", "pydantic_ai", "pydantic-ai", error) from error

from threadline.interop._pydantic_ai_fields import ARGS
from threadline.interop._pydantic_ai_fields import CARRIED
from threadline.interop._pydantic_ai_fields import CONTENT
from threadline.interop._pydantic_ai_fields import CONTENT_LIST
from threadline.interop._pydantic_ai_fields import CONTINUES
from threadline.interop._pydantic_ai_fields import EMPTY_MESSAGE
from threadline.interop._pydantic_ai_fields import INSTRUCTIONS
from threadline.interop._pydantic_ai_fields import JSON_BYTES
from threadline.interop._pydantic_ai_fields import PREFIX
from threadline.interop._pydantic_ai_fields import REQUEST
from threadline.interop._pydantic_ai_fields import RETRY_FEEDBACK
from threadline.interop._pydantic_ai_fields import SKIP_BINARY
from threadline.interop._pydantic_ai_fields import SKIP_THINKING
from threadline.interop._pydantic_ai_fields import Part
from threadline.interop._pydantic_ai_fields import build_message
from threadline.interop._pydantic_ai_fields import carry
from threadline.interop._pydantic_ai_fields import carry_identifier
from threadline.interop._pydantic_ai_fields import dump_part
from threadline.interop._pydantic_ai_fields import extras
from threadline.interop._pydantic_ai_fields import from_item
from threadline.interop._pydantic_ai_fields import history_error
from threadline.interop._pydantic_ai_fields import jsonable
from threadline.interop._pydantic_ai_fields import load_part
from threadline.interop._pydantic_ai_fields import native_metadata
from threadline.interop._pydantic_ai_fields import outcome_from
from threadline.interop._pydantic_ai_fields import own_metadata
from threadline.interop._pydantic_ai_fields import provider_from
from threadline.interop._pydantic_ai_fields import provider_to
from threadline.interop._pydantic_ai_fields import reasoning_fields
from threadline.interop._pydantic_ai_fields import restore
from threadline.interop._pydantic_ai_fields import split_native_metadata
from threadline.interop._pydantic_ai_fields import stash_message
from threadline.interop._pydantic_ai_fields import stash_part
from threadline.interop._pydantic_ai_fields import tagged_by
from threadline.interop._pydantic_ai_fields import timestamp_from
from threadline.interop._pydantic_ai_fields import to_item
from threadline.interop._pydantic_ai_fields import to_thinking
from threadline.interop._pydantic_ai_fields import uncarry
from threadline.interop._pydantic_ai_fields import untagged
from threadline.interop._pydantic_ai_frontier import chained_id
from threadline.interop._pydantic_ai_frontier import check_after
from threadline.interop._pydantic_ai_frontier import settle_pending

__all__ = ["from_pydantic_ai", "to_pydantic_ai"]


# -- pydantic-ai to threadline ------------------------------------------------------------------

_SKIP_REQUEST = frozenset({"parts", "kind", "instructions", "metadata"})
_SKIP_SYSTEM = frozenset({"content", "timestamp", "part_kind"})
_SKIP_RETURN = frozenset(
    {"tool_name", "content", "tool_call_id", "outcome", "timestamp", "part_kind"}
)
_SKIP_NATIVE_RETURN = _SKIP_RETURN | {"provider_name"}
_SKIP_RESPONSE = frozenset(
    {
        "parts",
        "kind",
        "timestamp",
        "usage",
        "model_name",
        "provider_name",
        "provider_response_id",
        "metadata",
    }
)
_SKIP_TEXT = frozenset({"content", "part_kind"})
_SKIP_CALL = frozenset({"tool_name", "args", "tool_call_id", "part_kind"})
_SKIP_NATIVE_CALL = _SKIP_CALL | {"provider_name"}
_SKIP_FILE = frozenset({"content", "part_kind"})
_ERROR_OUTCOMES = frozenset(pai.ERROR_OUTCOMES)
TYPED_CONTENT = PREFIX + "typed_content"  # native tool content holding files or other objects
_ModelMessages = pydantic.TypeAdapter(list[pai.ModelMessage], config=JSON_BYTES)


def from_pydantic_ai(
    messages: Iterable[Any] | bytes | str, *, after: str | None = None
) -> list[Message]:
    """Threadline messages holding what a pydantic-ai history holds.

    Ids are deterministic, so a conversion done again stores nothing twice: each is ``"msg_"``
    and 32 hex digits hashing the previous message's id (``after`` for the first) and the
    message's own content, so two equal messages of one run still differ. Converting
    ``result.all_messages()`` after each run gives the messages it held before the same ids;
    ``result.new_messages()`` gets the ids a conversion of ``all_messages()`` would give them
    when chained ``after=`` the id of the last message stored before the run.

    Args:
        messages: ``ModelRequest`` / ``ModelResponse`` objects (``result.all_messages()``), or
            their JSON (``result.all_messages_json()``, or the dicts ``ModelMessagesTypeAdapter``
            dumps), validated by pydantic-ai's own ``ModelMessagesTypeAdapter``.
        after: the id of the message ``messages`` follow in the conversation (the last one
            stored), or ``None`` when they start it.

    Returns:
        One threadline message per system prompt, user prompt and run of tool returns of each
        request, and one assistant message per response, in order.

    Raises:
        threadline.ValidationError: an item is not a pydantic-ai message, or holds something a
            threadline message cannot (a file URL without a scheme...), naming where.
        ValueError: ``after`` is neither ``None`` nor a non-empty string.
    """
    after = check_after(after)
    if isinstance(messages, (bytes, bytearray, str)):
        try:
            native: Iterable[Any] = _ModelMessages.validate_json(messages)
        except pydantic.ValidationError as error:
            # pydantic-ai's own errors (bad JSON, too deep, a lone surrogate, an unknown kind)
            # leave as threadline's, as the docstring promises.
            raise translate_errors(error, "invalid pydantic-ai history JSON", "messages") from None
    else:
        native = messages
    out: list[Message] = []
    for index, message in enumerate(native):
        try:
            if not isinstance(message, (pai.ModelResponse, pai.ModelRequest)) and isinstance(
                message, Mapping
            ):
                message = _ModelMessages.validate_python([message])[0]
            if isinstance(message, pai.ModelResponse):
                converted = [_from_response(message)]
            elif isinstance(message, pai.ModelRequest):
                converted = _from_request(message)
            else:
                raise history_error(
                    "", f"expected a ModelRequest or ModelResponse, got {type(message).__name__}"
                )
            # One validation per pydantic-ai message, of plain dicts: much faster than building
            # each part, and an error still names the pydantic-ai message it came from.
            for item in converted:
                after = item["id"] = chained_id(after, item)
            out.extend(_MESSAGES.validate_python(converted))
        except pydantic.ValidationError as error:
            summary = f"invalid pydantic-ai message messages[{index}]"
            raise translate_errors(error, summary, f"messages[{index}]->") from None
        except ValidationError as error:
            raise _placed(error, index, "invalid pydantic-ai message") from None
    return out


_MESSAGES = pydantic.TypeAdapter(list[Message])


def _placed(error: ValidationError, index: int, summary: str) -> ValidationError:
    """``error`` with each path starting at ``messages[index]``."""
    details = [
        dataclasses.replace(d, path=f"messages[{index}].{d.path}".rstrip(".")) for d in error.errors
    ]
    return ValidationError(f"{summary}: " + "; ".join(map(str, details)), details)


def _from_request(request: pai.ModelRequest) -> list[dict[str, Any]]:
    metadata, stash = split_native_metadata(request.metadata)
    entries: Mapping[str, Any] = stash if isinstance(stash, Mapping) else {}
    fields = extras(request, _SKIP_REQUEST, REQUEST)
    if metadata is not None:
        fields[REQUEST + "metadata"] = jsonable(metadata)
    out: list[dict[str, Any]] = []
    if request.instructions is not None:
        text = {"type": "text", "text": request.instructions}
        out.append(
            build_message("system", [text], {INSTRUCTIONS: True}, None, entries.get("instructions"))
        )
    # A deprecated RetryPromptPart built in memory becomes the part it always meant, by
    # pydantic-ai's own translation (a stored one is translated when the history is loaded).
    parts: list[Any] = [
        pai._translate_legacy_retry_part(part) if isinstance(part, pai.RetryPromptPart) else part
        for part in request.parts
    ]
    k = 0
    while k < len(parts):
        part, entry = parts[k], entries.get(str(k))
        if isinstance(part, pai.ToolReturnPart):
            end = k
            while end < len(parts) and isinstance(parts[end], pai.ToolReturnPart):
                end += 1
            out.append(_from_tool_returns(parts[k:end], entry))
            k = end
            continue
        span = entry.get("span", 1) if isinstance(entry, Mapping) else 1
        if isinstance(part, pai.SystemPromptPart) and isinstance(span, int):
            group = [p for p in parts[k : k + max(span, 1)] if isinstance(p, pai.SystemPromptPart)]
            texts = [_system_text(p, group[0].timestamp) for p in group]
            out.append(build_message("system", texts, {}, group[0].timestamp, entry))
            k += len(group)
            continue
        out.append(_from_request_part(part, entry))
        k += 1
    if not out:
        hook = {"type": "hook", "name": EMPTY_MESSAGE, "state": {}}
        out.append(build_message("internal", [hook], {}, None, None))
    if fields:
        out[0]["metadata"] = {**out[0]["metadata"], **fields}
    for message in out[1:]:
        message["metadata"] = {**message["metadata"], CONTINUES: True}
    return out


def _system_text(part: pai.SystemPromptPart, created: datetime) -> Part:
    metadata = extras(part, _SKIP_SYSTEM)
    if part.timestamp != created:
        metadata[PREFIX + "timestamp"] = jsonable(part.timestamp)
    return {"type": "text", "text": part.content, "metadata": metadata}


def _from_request_part(part: object, entry: object) -> dict[str, Any]:
    if isinstance(part, pai.UserPromptPart):
        content = part.content
        items = [content] if isinstance(content, str) else list(content)
        converted = [from_item(item) for item in items]
        if converted and None not in converted:
            metadata = (
                {CONTENT_LIST: True}
                if len(items) == 1 and not isinstance(content, str) and isinstance(items[0], str)
                else {}
            )
            return build_message(
                "user", typing.cast(list[Part], converted), metadata, part.timestamp, entry
            )
    elif isinstance(part, pai.RetryFeedbackPart):
        metadata = {
            RETRY_FEEDBACK: True,
            CONTENT: jsonable(part.content),
            PREFIX + "retry": jsonable(part.retry),
        }
        return build_message(
            "user",
            [{"type": "text", "text": part.model_response()}],
            metadata,
            part.timestamp,
            entry,
        )
    return build_message("internal", [carry(part, "request")], {}, None, entry)


def _from_tool_returns(parts: list[Any], entry: object) -> dict[str, Any]:
    created = parts[0].timestamp
    results = []
    for part in parts:
        metadata = extras(part, _SKIP_RETURN)
        if part.timestamp != created:
            metadata[PREFIX + "timestamp"] = jsonable(part.timestamp)
        if part.outcome not in ("success", "failed"):
            metadata[PREFIX + "outcome"] = part.outcome
        content = _result_content(part.content, metadata)
        results.append(
            {
                "type": "tool_result",
                "call_id": part.tool_call_id,
                "name": part.tool_name,
                "content": content,
                "is_error": part.outcome in _ERROR_OUTCOMES,
                "metadata": metadata,
            }
        )
    return build_message("tool", results, {}, created, entry)


def _result_content(content: object, metadata: dict[str, Any]) -> str | list[Part]:
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content:
        items = [from_item(item) for item in content]
        if None not in items:
            return typing.cast(list[Part], items)
    value = jsonable(content)
    metadata[CONTENT] = value
    return json_result_text(value)


def _from_response(response: pai.ModelResponse) -> dict[str, Any]:
    native_metadata, stash = split_native_metadata(response.metadata)
    entry: Mapping[str, Any] = stash if isinstance(stash, Mapping) else {}
    metadata = extras(response, _SKIP_RESPONSE)
    if native_metadata is not None:
        metadata[PREFIX + "metadata"] = jsonable(native_metadata)
    for key, value in (
        ("provider", response.provider_name),
        ("model", response.model_name),
        ("response_id", response.provider_response_id),
    ):
        if value is not None:
            metadata[key] = value
    usage = response.usage
    carried = extras(usage, _USAGE_FIELDS)  # more than the five counts Usage holds
    counts = (getattr(usage, name) for name in _USAGE_FIELDS)
    if carried or any(counts):
        metadata["usage"] = Usage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            reasoning_tokens=usage.output_reasoning_tokens,
        ).to_dict()
        if carried:
            metadata[PREFIX + "usage"] = jsonable(usage)
    calls = {
        part.tool_call_id: part.tool_name
        for part in response.parts
        if isinstance(part, pai.NativeToolCallPart)
    }
    parts: list[Any] = [
        _from_response_part(part, response.timestamp, calls) for part in response.parts
    ]
    provider, model = response.provider_name, response.model_name
    for part in parts:  # the response's own reasoning is its model's, as decode_response says
        own = part["type"] == "reasoning" and part.get("model") is None
        if own and tagged_by(part.get("provider"), provider, model):
            part["model"] = model
    hidden = entry.get("hidden")
    if isinstance(hidden, Mapping):
        for index in sorted(hidden, key=int):
            parts.insert(int(index), load_part(hidden[index]))
    if not parts:
        parts.append({"type": "hook", "name": EMPTY_MESSAGE, "state": {}})
    return build_message("assistant", parts, metadata, response.timestamp, entry)


_USAGE_FIELDS = frozenset(
    {
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "output_reasoning_tokens",
    }
)


def _from_response_part(part: object, created: datetime, calls: Mapping[str, str]) -> Any:
    metadata: dict[str, Any]
    if type(part) is pai.TextPart:
        return {"type": "text", "text": part.content, "metadata": extras(part, _SKIP_TEXT)}
    if type(part) is pai.ThinkingPart:
        metadata = extras(part, SKIP_THINKING)
        return {"type": "reasoning", **reasoning_fields(part, metadata), "metadata": metadata}
    if isinstance(part, pai.ToolCallPart):
        metadata = extras(part, _SKIP_CALL)
        args = part.args
        arguments: Any = {}
        raw = None
        if isinstance(args, dict):
            arguments = args
        elif isinstance(args, str):
            metadata[ARGS] = args
            try:
                parsed = json.loads(args)
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                arguments = parsed
            else:
                raw = args
        else:
            metadata[ARGS] = None
        return {
            "type": "tool_call",
            "id": part.tool_call_id,
            "name": part.tool_name,
            "arguments": arguments,
            "raw_arguments": raw,
            "metadata": metadata,
        }
    if isinstance(part, pai.NativeToolCallPart):
        metadata = extras(part, _SKIP_NATIVE_CALL)
        provider = provider_from(part.provider_name, metadata) or ""
        return {
            "type": "provider_tool_call",
            "id": part.tool_call_id,
            "name": part.tool_name,
            "input": part.args,
            "provider": provider,
            "metadata": metadata,
        }
    if isinstance(part, pai.NativeToolReturnPart):
        metadata = extras(part, _SKIP_NATIVE_RETURN)
        if part.tool_name != calls.get(part.tool_call_id):
            metadata[PREFIX + "tool_name"] = part.tool_name
        if part.timestamp != created:
            metadata[PREFIX + "timestamp"] = jsonable(part.timestamp)
        if part.outcome not in ("success", "failed"):
            metadata[PREFIX + "outcome"] = part.outcome
        content = jsonable(part.content)
        if content != part.content:  # files or other objects: validated back on the way out
            metadata[TYPED_CONTENT] = True
        provider = provider_from(part.provider_name, metadata) or ""
        return {
            "type": "provider_tool_result",
            "call_id": part.tool_call_id,
            "content": content,
            "provider": provider,
            "is_error": part.outcome in _ERROR_OUTCOMES,
            "metadata": metadata,
        }
    if type(part) is pai.FilePart:
        metadata = {**extras(part, _SKIP_FILE), **extras(part.content, SKIP_BINARY)}
        carry_identifier(part.content, metadata)
        binary = part.content
        return {
            "type": "file",
            "data": binary.data,
            "media_type": binary.media_type,
            "metadata": metadata,
        }
    return carry(part, "response")


# -- threadline to pydantic-ai ------------------------------------------------------------------


def to_pydantic_ai(
    messages: Iterable[Message], *, pending: Pending = "keep"
) -> list[pai.ModelMessage]:
    """The pydantic-ai history holding what ``messages`` hold, for ``message_history=``.

    Each run of system, user and tool messages becomes a ``ModelRequest`` (one per message,
    except that messages [`from_pydantic_ai`][threadline.interop.pydantic_ai.from_pydantic_ai]
    split out of one request go back into it), each assistant message a ``ModelResponse``.
    ``internal`` messages are left out (they never reach a model), except those carrying a
    pydantic-ai part.

    Pending calls ([`pending_calls`][threadline.pending_calls]: the last assistant message's
    calls without a result) are kept by default, as pydantic-ai's own runs leave them: a run
    given this history and no new prompt executes them (the resume after a crash between a call
    and its result), and pydantic-ai refuses a new prompt after them.

    Args:
        messages: threadline messages, in order.
        pending: ``"keep"`` pending calls unanswered (the default), ``"answer"`` them with an
            interrupted error result first (the tools will not run again: a new prompt may
            follow), or ``"refuse"`` them.

    Raises:
        threadline.ValidationError: an item is not a [`Message`][threadline.Message], or its
            ``"pydantic_ai.*"`` metadata does not fit the field it restores, naming where.
        threadline.IntegrityError: ``pending="refuse"`` and a call is pending (code
            ``pending-tool-call``).
        ValueError: ``pending`` is not ``"answer"``, ``"keep"`` or ``"refuse"``.
    """
    items = list(messages)
    for index, message in enumerate(items):
        if not isinstance(message, Message):
            raise history_error(
                f"messages[{index}]", f"expected a threadline Message, got {type(message).__name__}"
            )
    items = settle_pending(items, pending)
    out: list[pai.ModelMessage] = []
    now = datetime.now(timezone.utc)
    call_names: dict[str, str] = {}
    request: _Request | None = None
    for index, message in enumerate(items):
        try:
            if message.role == "assistant":
                if request is not None:
                    out.append(request.build())
                    request = None
                out.append(_to_response(message, call_names, now))
                continue
            if message.role == "internal" and not _carries(message):
                continue
            if request is None or not message.metadata.get(CONTINUES):
                if request is not None:
                    out.append(request.build())
                request = _Request(message)
            request.add(message, call_names, now)
        except ValidationError as error:
            raise _placed(error, index, "cannot convert to pydantic-ai") from None
    if request is not None:
        out.append(request.build())
    return out


def _carries(message: Message) -> bool:
    return all(
        type(part) is HookPart and part.name in (CARRIED, EMPTY_MESSAGE) for part in message.parts
    )


class _Request:
    """A ``ModelRequest`` being assembled from one or more threadline messages."""

    def __init__(self, first: Message) -> None:
        self.first = first
        self.parts: list[Any] = []
        self.stash: dict[str, Any] = {}
        self.instructions: str | None = None

    def add(self, message: Message, call_names: Mapping[str, str], now: datetime) -> None:
        metadata = message.metadata
        created = message.created_at or now
        index = str(len(self.parts))
        stashed_parts: dict[str, Any] = {}
        if message.role == "system" and metadata.get(INSTRUCTIONS) and self.instructions is None:
            self.instructions = message.text
            index = "instructions"
        elif message.role == "system":
            for j, part in enumerate(message.parts):
                text = typing.cast(TextPart, part)
                system = pai.SystemPromptPart(
                    text.text, timestamp=timestamp_from(part.metadata, created)
                )
                self.parts.append(restore(system, part.metadata, _SKIP_SYSTEM))
                if entry := stash_part(part):
                    stashed_parts[str(j)] = entry
            if len(message.parts) != 1:
                self.stash.setdefault(index, {})["span"] = len(message.parts)
        elif message.role == "user" and metadata.get(RETRY_FEEDBACK):
            feedback = {
                "content": metadata.get(CONTENT),
                "retry": metadata.get(PREFIX + "retry"),
                "timestamp": created,
            }
            try:
                self.parts.append(_RETRY_FEEDBACK_ADAPTER.validate_python(feedback))
            except pydantic.ValidationError as error:
                raise history_error(
                    "metadata", f"does not hold a RetryFeedbackPart: {error}"
                ) from None
        elif message.role == "user":
            items = [to_item(part) for part in message.parts]  # type: ignore[arg-type]
            content: Any = (
                items[0]
                if len(items) == 1 and isinstance(items[0], str) and not metadata.get(CONTENT_LIST)
                else items
            )
            self.parts.append(pai.UserPromptPart(content, timestamp=created))
            stashed_parts = {
                str(j): e for j, part in enumerate(message.parts) if (e := stash_part(part))
            }
        elif message.role == "tool":
            for j, part in enumerate(message.parts):
                assert type(part) is ToolResultPart
                self.parts.append(_to_tool_return(part, call_names, created))
                lost = {"name": None} if part.name is None else {}
                if entry := stash_part(part, lost):
                    stashed_parts[str(j)] = entry
        else:  # internal, carrying pydantic-ai parts
            for part in message.parts:
                if type(part) is HookPart and part.name == CARRIED:
                    self.parts.append(uncarry(part, "request"))
        if entry := stash_message(message, stashed_parts):
            self.stash.setdefault(index, {}).update(entry)

    def build(self) -> pai.ModelRequest:
        request = pai.ModelRequest(parts=self.parts, instructions=self.instructions)
        metadata = self.first.metadata
        restore(request, metadata, _SKIP_REQUEST, REQUEST)
        request.metadata = native_metadata(metadata.get(REQUEST + "metadata"), self.stash)
        return request


_RETRY_FEEDBACK_ADAPTER = pydantic.TypeAdapter(pai.RetryFeedbackPart)


def _to_tool_return(
    part: ToolResultPart, call_names: Mapping[str, str], created: datetime
) -> pai.ToolReturnPart:
    metadata = part.metadata
    content: Any
    if CONTENT in metadata:
        content = _CONTENT_ADAPTER.validate_json(json.dumps(metadata[CONTENT]))
    elif isinstance(part.content, str):
        content = part.content
    else:
        content = [to_item(item) for item in part.content]
    native = pai.ToolReturnPart(
        tool_name=part.name or call_names.get(part.call_id, ""),
        content=content,
        tool_call_id=part.call_id,
        timestamp=timestamp_from(metadata, created),
        outcome=outcome_from(metadata, part.is_error),
    )
    return typing.cast(pai.ToolReturnPart, restore(native, metadata, _SKIP_RETURN))


_CONTENT_ADAPTER = pai.tool_return_content_ta


def _to_response(message: Message, call_names: dict[str, str], now: datetime) -> pai.ModelResponse:
    metadata = message.metadata
    created = message.created_at or now
    parts: list[Any] = []
    stashed: dict[str, Any] = {}
    hidden: dict[str, Any] = {}
    calls = {part.id: part.name for part in message.parts if type(part) is ProviderToolCallPart}
    for j, part in enumerate(message.parts):
        native, lost = _to_response_part(part, created, calls)
        if type(part) is ReasoningPart:
            lost = untagged(part, lost, metadata)
        if native is _HIDDEN:
            hidden[str(j)] = dump_part(part)
            continue
        if native is not None:
            parts.append(native)
        if type(part) is ToolCallPart:
            call_names[part.id] = part.name
        if entry := stash_part(part, lost):
            stashed[str(j)] = entry
    usage = RequestUsage()
    if PREFIX + "usage" in metadata:
        usage = _restore_usage(metadata[PREFIX + "usage"])
    own = own_metadata(metadata)
    counts = own.pop("usage", None)
    if isinstance(counts, Mapping):
        try:
            read = Usage.from_dict(counts)
        except ValidationError:
            own["usage"] = counts
        else:
            usage.input_tokens, usage.output_tokens = read.input_tokens, read.output_tokens
            usage.cache_read_tokens, usage.cache_write_tokens = (
                read.cache_read_tokens,
                read.cache_write_tokens,
            )
            usage.output_reasoning_tokens = read.reasoning_tokens
    elif counts is not None:
        own["usage"] = counts
    named: dict[str, str | None] = {}
    for key, field in (
        ("provider", "provider_name"),
        ("model", "model_name"),
        ("response_id", "provider_response_id"),
    ):
        value = own.pop(key, None)
        if isinstance(value, str) or value is None:
            named[field] = value
        else:
            own[key] = value
    response = pai.ModelResponse(
        parts=parts,
        usage=usage,
        timestamp=created,
        provider_name=named.get("provider_name"),
        model_name=named.get("model_name"),
        provider_response_id=named.get("provider_response_id"),
    )
    restore(response, metadata, _SKIP_RESPONSE)
    stash = {**({"metadata": own} if own else {})}
    if stashed:
        stash["parts"] = stashed
    if hidden:
        stash["hidden"] = hidden
    response.metadata = native_metadata(metadata.get(PREFIX + "metadata"), stash)
    return response


def _restore_usage(data: object) -> RequestUsage:
    try:
        return _USAGE_ADAPTER.validate_python(data)
    except pydantic.ValidationError as error:
        raise history_error(
            f"metadata[{PREFIX + 'usage'!r}]", f"not a pydantic-ai RequestUsage: {error}"
        ) from None


_USAGE_ADAPTER = pydantic.TypeAdapter(RequestUsage)
_HIDDEN = object()


def _to_response_part(
    part: ThreadlinePart, created: datetime, calls: Mapping[str, str]
) -> tuple[Any, dict[str, Any]]:
    """The pydantic-ai part for ``part`` (``_HIDDEN`` when it has none, ``None`` for no part), and
    the fields of ``part`` that the pydantic-ai part cannot give back."""
    metadata = part.metadata
    if isinstance(part, TextPart):
        return restore(pai.TextPart(part.text), metadata, _SKIP_TEXT), {}
    if isinstance(part, ReasoningPart):
        return to_thinking(part)
    if isinstance(part, ToolCallPart):
        args: Any = part.arguments if part.raw_arguments is None else part.raw_arguments
        if ARGS in metadata:
            carried = metadata[ARGS]
            if carried is None and not part.arguments and part.raw_arguments is None:
                args = None
            elif isinstance(carried, str) and _parses_to(carried, part):
                args = carried
        if isinstance(args, Mapping):
            args = dict(args)
        call = pai.ToolCallPart(part.name, args, part.id)
        return restore(call, metadata, _SKIP_CALL), {}
    if isinstance(part, FilePart):
        if part.data is None:
            return _HIDDEN, {}
        binary = restore(
            pai.BinaryContent(
                part.data,
                media_type=part.media_type,
                identifier=metadata.get(PREFIX + "identifier"),
            ),
            metadata,
            SKIP_BINARY,
        )
        native = pai.FilePart(pai.BinaryContent.narrow_type(binary))
        return restore(native, metadata, _SKIP_FILE), {}
    if isinstance(part, ProviderToolCallPart):
        args = part.input
        lost: dict[str, Any] = {}
        if not (args is None or isinstance(args, (str, dict))):
            args, lost = json.dumps(args), {"input": args}
        provider = provider_to(part.provider, metadata) or None
        if provider is None and part.provider:
            lost["provider"] = part.provider
        native_call = pai.NativeToolCallPart(part.name, args, part.id, provider_name=provider)
        return restore(native_call, metadata, _SKIP_NATIVE_CALL), lost
    if isinstance(part, ProviderToolResultPart):
        content = part.content
        if metadata.get(TYPED_CONTENT):
            content = _CONTENT_ADAPTER.validate_json(json.dumps(content))
        provider = provider_to(part.provider, metadata) or None
        returned = pai.NativeToolReturnPart(
            tool_name=metadata.get(PREFIX + "tool_name", calls.get(part.call_id, "")),
            content=content,
            tool_call_id=part.call_id,
            provider_name=provider,
            outcome=outcome_from(metadata, part.is_error),
            timestamp=timestamp_from(metadata, created),
        )
        lost = {} if provider or not part.provider else {"provider": part.provider}
        return restore(returned, metadata, _SKIP_NATIVE_RETURN), lost
    if isinstance(part, HookPart) and part.name == CARRIED:
        return uncarry(part, "response"), {}
    if isinstance(part, HookPart):  # the empty message's mark is no part; other hooks are hidden
        return (None if part.name == EMPTY_MESSAGE else _HIDDEN), {}
    if isinstance(part, ToolResultPart):
        raise AssertionError("an assistant message holds no tool result")
    assert_never(part)


def _parses_to(text: str, part: ToolCallPart) -> bool:
    if part.raw_arguments is not None:
        return text == part.raw_arguments
    try:
        return bool(json.loads(text) == part.arguments)
    except ValueError:
        return False
