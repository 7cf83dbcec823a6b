"""LangChain: ``BaseMessage`` lists <-> threadline messages, and a chat history over any store.

- [`to_langchain`][threadline.interop.langchain.to_langchain] /
  [`from_langchain`][threadline.interop.langchain.from_langchain] convert histories;
  ``from_langchain(to_langchain(m))`` gives back ``m`` (up to the losses below), and
  ``to_langchain(from_langchain(p))`` gives back ``p`` up to the losses below.
- [`ThreadlineChatMessageHistory`][threadline.interop.langchain.ThreadlineChatMessageHistory]
  is a ``BaseChatMessageHistory`` over any threadline store, blocking or async, right under
  ``RunnableWithMessageHistory``: its reads keep the calls in flight, and a new turn written
  after them answers them as interrupted. (langchain-core 1.8.3 marks
  ``BaseChatMessageHistory`` deprecated since 1.6.4 and ``RunnableWithMessageHistory`` since
  1.3.3, pointing to LangGraph; the docs page has a LangGraph recipe with ``to_langchain`` /
  ``from_langchain``.)

Mapping: ``SystemMessage`` <-> ``system``, ``HumanMessage`` <-> ``user``, ``AIMessage`` <->
``assistant``, each ``ToolMessage`` <-> one [`ToolResultPart`][threadline.ToolResultPart]
(consecutive ``ToolMessage`` s form one ``tool`` message, as they answer one turn), a
``ChatMessage`` whose role is ``system``, ``developer``, ``user`` or ``assistant`` <-> that
role (the role is kept in ``metadata["langchain.chat_role"]``). ``FunctionMessage`` (no call id
to pair) and ``RemoveMessage`` (an instruction to LangGraph, not content) raise
[`ValidationError`][threadline.ValidationError], as does a content block threadline cannot
carry. What a message has no field for is kept, never dropped: LangChain fields in threadline
``metadata`` under ``langchain.*`` keys, threadline fields in LangChain ``response_metadata``
under ``"threadline"``. The docs page (Interop > LangChain) lists every mapping and loss.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Mapping
from collections.abc import Sequence
from datetime import datetime
from typing import Any
from typing import Literal
from typing import cast

import pydantic
from pydantic_core import PydanticCustomError

from threadline.interop._missing import missing

try:
    from langchain_core.chat_history import BaseChatMessageHistory
    from langchain_core.messages import AIMessage
    from langchain_core.messages import BaseMessage
    from langchain_core.messages import ChatMessage
    from langchain_core.messages import HumanMessage
    from langchain_core.messages import SystemMessage
    from langchain_core.messages import ToolMessage
    from langchain_core.messages.tool import ToolCall
    from langchain_core.messages.tool import tool_call
except ImportError as error:  # pragma: no cover - the extra is installed in the tests
    raise missing("langchain-core", "langchain_core", "langchain", error) from error

from threadline._json import check_json_value
from threadline._message_fields import new_message_id
from threadline._validation import translate_errors
from threadline.errors import ConflictError
from threadline.errors import ValidationError
from threadline.integrity import Pending
from threadline.integrity import pending_calls
from threadline.integrity import prepare_messages
from threadline.interop._appends import could_poison
from threadline.interop._appends import refuse_unrepairable
from threadline.interop._frontier import answer_before_new_turns
from threadline.interop._langchain_blocks import block_of
from threadline.interop._langchain_blocks import fail
from threadline.interop._langchain_blocks import part_of
from threadline.messages import HookPart
from threadline.messages import Message
from threadline.messages import TextPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart
from threadline.stores.base import AsyncStore
from threadline.stores.base import Store
from threadline.stores.base import validate_conversation_id
from threadline.usage import Usage

__all__ = ["ThreadlineChatMessageHistory", "from_langchain", "to_langchain"]

_BAG = "threadline"  # the response_metadata key holding what LangChain has no field for
_NAME = "langchain.name"
_KWARGS = "langchain.additional_kwargs"
_RESPONSE = "langchain.response_metadata"
_USAGE = "langchain.usage_metadata"
_CHAT_ROLE = "langchain.chat_role"
_ID = "langchain.id"
_ARTIFACT = "langchain.artifact"
_ERROR = "langchain.error"
_ADD = "ThreadlineChatMessageHistory.add_messages"
# response_metadata keys with a threadline metadata key of their own (what decode_response
# writes): the model, the response id and why it stopped.
_RESPONSE_KEYS = {"model_name": "model", "id": "response_id", "finish_reason": "stop_reason"}
_CHAT_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}
_TEXT = frozenset({"text"})
_USER = frozenset({"text", "file"})
_ASSISTANT = frozenset({"text", "file", "reasoning", "provider"})
_RESULT = frozenset({"text", "file"})
# Content blocks that repeat one of an AIMessage's tool calls; the call comes from tool_calls.
_CALL_BLOCKS = frozenset({"tool_call", "tool_use", "function_call"})
_EMPTY_TEXT: Mapping[str, Any] = {"type": "text", "text": ""}
Mode = Literal["auto", "strict"]


# ---------------------------------------------------------------------------------------------
# LangChain -> threadline


def from_langchain(messages: Sequence[BaseMessage]) -> list[Message]:
    """Threadline messages holding the content of LangChain ``messages``.

    Consecutive ``ToolMessage`` s become one ``tool`` message (the first one's id is its id).
    A message without an ``id`` gets a new threadline id, a tool call without one a new call
    id. LangChain chunks (``AIMessageChunk``...) read as their messages.

    Args:
        messages: LangChain messages, oldest first.

    Raises:
        threadline.ValidationError: an item is not a message threadline can carry
            (``FunctionMessage``, ``RemoveMessage``, a ``ChatMessage`` of another role), a
            content block or a value it cannot carry, naming its path
            (``messages[2].content[1]``).
    """
    given: object = messages  # callers without a type checker pass anything
    if isinstance(given, (str, BaseMessage)) or not isinstance(given, Sequence):
        fail("messages", "expected a list of LangChain messages")
    out: list[Message] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        path = f"messages[{index}]"
        if isinstance(message, ToolMessage):
            end = index
            while end < len(messages) and isinstance(messages[end], ToolMessage):
                end += 1
            out.append(_tool_message(messages[index:end], index))
            index = end
            continue
        out.append(_message(message, path))
        index += 1
    return out


def _message(message: object, path: str) -> Message:
    if isinstance(message, AIMessage):
        return _ai_message(message, path)
    if isinstance(message, HumanMessage):
        role, allowed = "user", _USER
    elif isinstance(message, SystemMessage):
        role, allowed = "system", _TEXT
    elif isinstance(message, ChatMessage) and message.role in _CHAT_ROLES:
        role = _CHAT_ROLES[message.role]
        allowed = {"system": _TEXT, "user": _USER, "assistant": _ASSISTANT}[role]
    else:
        fail(path, _refusal(message))
    own, bag = _common(message, path)
    metadata = {**(bag.get("metadata") or {}), **own}
    if isinstance(message, ChatMessage):
        metadata[_CHAT_ROLE] = message.role
    created_at = _stamp(bag, path)
    parts = _content(message.content, f"{path}.content", allowed)
    return _build(message, role, parts or [_EMPTY_TEXT], metadata, created_at, path)


def _refusal(message: object) -> str:
    kind = type(message).__name__
    if kind.startswith("FunctionMessage"):
        return (
            "a FunctionMessage has no tool call id to pair with its call; "
            "send tool results as ToolMessage(content, tool_call_id=...)"
        )
    if kind == "RemoveMessage":
        return (
            "a RemoveMessage is an instruction to delete a message, not content; apply it "
            "first (langgraph's add_messages reducer does)"
        )
    if isinstance(message, ChatMessage):
        return (
            f"a ChatMessage with role {message.role!r}: threadline reads the roles "
            f"{', '.join(_CHAT_ROLES)}; use SystemMessage, HumanMessage or AIMessage"
        )
    return f"expected a LangChain message, got {kind} (langchain_core.messages.convert_to_messages)"


def _content(content: object, path: str, allowed: frozenset[str]) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if not isinstance(content, list):
        fail(path, f"expected a str or a list, got {type(content).__name__}")
    return [part_of(block, f"{path}[{index}]", allowed) for index, block in enumerate(content)]


def _common(message: BaseMessage, path: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The metadata a message's LangChain fields become, and its ``threadline`` bag."""
    response = dict(message.response_metadata)
    bag = response.pop(_BAG, None)
    if not isinstance(bag, Mapping):
        if bag is not None:
            response[_BAG] = bag  # not ours: kept with the rest
        bag = {}
    metadata: dict[str, Any] = {}
    if message.name is not None:
        metadata[_NAME] = message.name
    if message.additional_kwargs:
        metadata[_KWARGS] = message.additional_kwargs  # checked as JSON with the message
    if isinstance(message, AIMessage):
        for native, key in _RESPONSE_KEYS.items():
            if isinstance(response.get(native), str):
                metadata[key] = response.pop(native)
        # Anthropic says stop_reason: it feeds threadline's stop_reason and stays as it was
        if "stop_reason" not in metadata and isinstance(response.get("stop_reason"), str):
            metadata["stop_reason"] = response["stop_reason"]
    if response:
        metadata[_RESPONSE] = response
    return metadata, dict(bag)


def _stamp(bag: Mapping[str, Any], path: str) -> datetime | None:
    stamp = bag.get("created_at")
    if stamp is None:
        return None
    try:
        return datetime.fromisoformat(stamp)
    except (TypeError, ValueError):
        fail(f"{path}.response_metadata.threadline.created_at", "expected an ISO 8601 time")


def _json(value: Any, path: str) -> Any:
    try:
        return check_json_value(value)
    except (ValidationError, PydanticCustomError) as error:
        fail(path, f"threadline keeps it as JSON, and it is not: {error}")


def _build(
    message: BaseMessage,
    role: str,
    parts: list[Any],
    metadata: dict[str, Any],
    created_at: datetime | None,
    path: str,
) -> Message:
    fields: dict[str, Any] = {"role": role, "parts": tuple(parts), "metadata": metadata}
    fields["id"] = message.id if message.id is not None else new_message_id()
    if created_at is not None:
        fields["created_at"] = created_at
    try:
        return Message.model_validate(fields)
    except pydantic.ValidationError as error:
        raise translate_errors(error, f"cannot convert {path} from LangChain") from None


def _ai_message(message: AIMessage, path: str) -> Message:
    own, bag = _common(message, path)
    metadata = {**(bag.get("metadata") or {}), **own}
    created_at = _stamp(bag, path)
    call_metadata: Mapping[str, Any] = bag.get("tool_calls") or {}
    calls: dict[str, dict[str, Any]] = {}
    for call in message.tool_calls:
        part = _call(call, call_metadata, raw=None)
        calls.setdefault(part["id"], part)
    for invalid in message.invalid_tool_calls:
        raw = invalid.get("args")
        part = _call(invalid, call_metadata, raw=raw if isinstance(raw, str) else "")
        calls.setdefault(part["id"], part)
    placed: set[str] = set()
    parts: list[Any] = []
    content = message.content
    if isinstance(content, str):
        parts.extend([{"type": "text", "text": content}] if content or not calls else [])
    else:
        for index, block in enumerate(content):
            where = f"{path}.content[{index}]"
            if type(block) is dict and block.get("type") in _CALL_BLOCKS:
                call_id = block.get("id") if block.get("type") != "function_call" else None
                call_id = call_id or block.get("call_id")
                if call_id not in calls:
                    fail(where, "a tool call block whose id is not one of tool_calls")
                parts.append(calls[call_id])  # it sits where the block did
                placed.add(call_id)
                continue
            parts.append(part_of(block, where, _ASSISTANT))
    all_calls = [*message.tool_calls, *message.invalid_tool_calls]
    ids = list(calls)
    parts.extend(calls[call_id] for call_id in ids if call_id not in placed)
    if len(ids) != len(all_calls):
        fail(f"{path}.tool_calls", "two tool calls share an id; each call needs its own")
    if message.usage_metadata is not None:
        metadata.update(_usage_from(dict(message.usage_metadata), f"{path}.usage_metadata"))
    return _build(message, "assistant", parts or [_EMPTY_TEXT], metadata, created_at, path)


def _call(call: Any, metadata: Mapping[str, Any], raw: str | None) -> dict[str, Any]:
    call_id = call.get("id") or "call_" + new_message_id()[4:]
    part_metadata = dict(metadata.get(call_id) or {})
    if raw is not None and call.get("error") is not None:
        part_metadata[_ERROR] = call["error"]
    fields: dict[str, Any] = {
        "type": "tool_call",
        "id": call_id,
        "name": call.get("name") or "",
        "arguments": {} if raw is not None else call.get("args") or {},
        "metadata": part_metadata,
    }
    if raw is not None:
        fields["raw_arguments"] = raw
    return fields


def _tool_message(messages: Sequence[BaseMessage], start: int) -> Message:
    first = messages[0]
    message_id = first.id if first.id is not None else new_message_id()
    metadata: dict[str, Any] = {}
    created_at = None
    parts = []
    for offset, message in enumerate(messages):
        path = f"messages[{start + offset}]"
        native = cast(ToolMessage, message)
        own, bag = _common(native, path)
        own.pop(_NAME, None)  # the result's own name field
        part_metadata = {**(bag.get("part") or {}), **own}
        if offset == 0:
            metadata.update(bag.get("metadata") or {})
            created_at = _stamp(bag, path)
        if native.id is not None and (offset > 0 and native.id != f"{message_id}:{offset}"):
            part_metadata[_ID] = native.id
        if native.artifact is not None:
            part_metadata[_ARTIFACT] = _json(native.artifact, f"{path}.artifact")
        content: Any = native.content
        if isinstance(content, list):
            content = _content(content, f"{path}.content", _RESULT)
        part = {"type": "tool_result", "call_id": native.tool_call_id, "content": content}
        part.update(name=native.name, is_error=native.status == "error", metadata=part_metadata)
        parts.append(part)
    fields: dict[str, Any] = {"id": message_id, "role": "tool", "parts": parts}
    fields["metadata"] = metadata
    if created_at is not None:
        fields["created_at"] = created_at
    where = f"messages[{start}:{start + len(messages)}] (ToolMessages, one part each)"
    try:
        return Message.model_validate(fields)
    except pydantic.ValidationError as error:
        raise translate_errors(error, f"cannot convert {where} from LangChain") from None


def _usage_from(native: dict[str, Any], path: str) -> dict[str, Any]:
    inputs = native.get("input_token_details") or {}
    outputs = native.get("output_token_details") or {}
    try:
        usage = Usage(
            input_tokens=native.get("input_tokens", 0),
            output_tokens=native.get("output_tokens", 0),
            cache_read_tokens=inputs.get("cache_read", 0),
            cache_write_tokens=inputs.get("cache_creation", 0),
            reasoning_tokens=outputs.get("reasoning", 0),
        )
    except ValidationError as error:
        fail(path, str(error))
    metadata: dict[str, Any] = {"usage": usage.to_dict()}
    if _usage_metadata(usage) != native:  # details threadline has no count for: kept whole
        metadata[_USAGE] = _json(native, path)
    return metadata


# ---------------------------------------------------------------------------------------------
# threadline -> LangChain


def to_langchain(messages: Sequence[Message]) -> list[BaseMessage]:
    """LangChain messages holding the content of threadline ``messages``.

    A ``tool`` message becomes one ``ToolMessage`` per result. ``internal`` messages and hook
    parts, which never reach a model, are left out (as
    [`prepare_messages`][threadline.prepare_messages] leaves them out); everything else is
    carried.

    Args:
        messages: threadline messages, oldest first (a list, a tuple, a ``Snapshot``).

    Raises:
        threadline.ValidationError: ``messages`` is not a sequence of messages.
    """
    given: object = messages  # callers without a type checker pass anything
    if isinstance(given, (str, Message)) or not isinstance(given, Sequence):
        fail("messages", "expected a sequence of threadline messages")
    out: list[BaseMessage] = []
    for index, message in enumerate(messages):
        if not isinstance(message, Message):
            fail(f"messages[{index}]", f"expected a Message, got {type(message).__name__}")
        if message.role == "tool":
            out.extend(_tool_messages(message))
        elif message.role != "internal" and not all(type(p) is HookPart for p in message.parts):
            out.append(_native(message))  # a message of hook parts only is left out whole
    return out


def _split_metadata(message: Message, ai: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """The keyword arguments LangChain has fields for, and the response_metadata."""
    metadata = dict(message.metadata)
    metadata.pop(_CHAT_ROLE, None)
    kwargs: dict[str, Any] = {"id": message.id}
    if _NAME in metadata:
        kwargs["name"] = metadata.pop(_NAME)
    if isinstance(metadata.get(_KWARGS), Mapping):
        kwargs["additional_kwargs"] = dict(metadata.pop(_KWARGS))
    response = _pop_mapping(metadata, _RESPONSE)
    if ai:
        for native, key in _RESPONSE_KEYS.items():
            if isinstance(metadata.get(key), str):
                value = metadata.pop(key)
                if not (native == "finish_reason" and response.get("stop_reason") == value):
                    response[native] = value
        usage = _usage_to(metadata)
        if usage is not None:
            kwargs["usage_metadata"] = usage
    bag: dict[str, Any] = {}
    if metadata:
        bag["metadata"] = metadata
    if message.created_at is not None:
        bag["created_at"] = message.created_at.isoformat()
    if bag:
        response[_BAG] = bag
    return kwargs, response


def _pop_mapping(metadata: dict[str, Any], key: str) -> dict[str, Any]:
    return dict(metadata.pop(key)) if isinstance(metadata.get(key), Mapping) else {}


def _usage_to(metadata: dict[str, Any]) -> dict[str, Any] | None:
    stored = metadata.get("usage")
    if not isinstance(stored, Mapping):
        return None
    try:
        usage = Usage.from_dict(stored)
    except ValidationError:
        return None  # not threadline's usage: it stays in the metadata as it is
    if usage.to_dict() != stored:
        return None
    del metadata["usage"]
    native = metadata.pop(_USAGE, None)
    if isinstance(native, Mapping):
        try:
            if _usage_from(dict(native), "")["usage"] == usage.to_dict():
                return dict(native)
        except ValidationError:
            pass
    return _usage_metadata(usage)


def _usage_metadata(usage: Usage) -> dict[str, Any]:
    native: dict[str, Any] = {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
    }
    inputs = {"cache_read": usage.cache_read_tokens, "cache_creation": usage.cache_write_tokens}
    inputs = {key: value for key, value in inputs.items() if value}
    if inputs:
        native["input_token_details"] = inputs
    if usage.reasoning_tokens:
        native["output_token_details"] = {"reasoning": usage.reasoning_tokens}
    return native


def _contents(parts: Sequence[Any], single_string: bool) -> str | list[Any]:
    if not parts:
        return ""
    only = parts[0]
    if single_string and len(parts) == 1 and type(only) is TextPart and not only.metadata:
        return only.text
    return [block_of(part) for part in parts]


def _native(message: Message) -> BaseMessage:
    chat_role = message.metadata.get(_CHAT_ROLE)
    kwargs, response = _split_metadata(
        message, message.role == "assistant" and not isinstance(chat_role, str)
    )
    if isinstance(chat_role, str):
        kwargs["response_metadata"] = response
        parts = [part for part in message.parts if not isinstance(part, HookPart)]
        return ChatMessage(content=_contents(parts, True), role=chat_role, **kwargs)
    kwargs["response_metadata"] = response
    if message.role == "system":
        return SystemMessage(content=_contents(message.parts, True), **kwargs)
    if message.role == "user":
        return HumanMessage(content=_contents(message.parts, True), **kwargs)
    content: list[Any] = []
    calls: list[dict[str, Any]] = []
    invalid: list[dict[str, Any]] = []
    call_metadata: dict[str, Any] = {}
    for part in message.parts:
        if isinstance(part, ToolCallPart):
            extra = dict(part.metadata)
            error = extra.pop(_ERROR, None)
            if extra:
                call_metadata[part.id] = extra
            if part.raw_arguments is not None:
                invalid.append(
                    {"name": part.name, "args": part.raw_arguments, "id": part.id, "error": error}
                )
            else:
                calls.append({"name": part.name, "args": dict(part.arguments), "id": part.id})
        elif not isinstance(part, HookPart):
            content.append(part)
    if call_metadata:
        response.setdefault(_BAG, {})["tool_calls"] = call_metadata
    return AIMessage(
        content=_contents(content, single_string=not calls or content != [TextPart(text="")]),
        tool_calls=calls,
        invalid_tool_calls=invalid,
        **kwargs,
    )


def _tool_messages(message: Message) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for index, part in enumerate(message.parts):
        result = cast(ToolResultPart, part)
        metadata = dict(result.metadata)
        kwargs: dict[str, Any] = {"id": metadata.pop(_ID, None)}
        if kwargs["id"] is None:
            kwargs["id"] = message.id if index == 0 else f"{message.id}:{index}"
        if isinstance(metadata.get(_KWARGS), Mapping):
            kwargs["additional_kwargs"] = dict(metadata.pop(_KWARGS))
        response = _pop_mapping(metadata, _RESPONSE)
        if _ARTIFACT in metadata:
            kwargs["artifact"] = metadata.pop(_ARTIFACT)
        bag: dict[str, Any] = {}
        if metadata:
            bag["part"] = metadata
        if index == 0 and message.metadata:
            bag["metadata"] = dict(message.metadata)
        if index == 0 and message.created_at is not None:
            bag["created_at"] = message.created_at.isoformat()
        if bag:
            response[_BAG] = bag
        content: Any = result.content
        if not isinstance(content, str):
            content = [block_of(item) for item in content]
        out.append(
            ToolMessage(
                content=content,
                tool_call_id=result.call_id,
                name=result.name,
                status="error" if result.is_error else "success",
                response_metadata=response,
                **kwargs,
            )
        )
    return out


# ---------------------------------------------------------------------------------------------
# The chat history


class ThreadlineChatMessageHistory(BaseChatMessageHistory):
    """A LangChain chat history kept in a threadline store (blocking or async).

    Appends are checked as a model request would need them: each batch is converted with
    [`from_langchain`][threadline.interop.langchain.from_langchain] (invalid messages raise
    and nothing is written) and refused with [`IntegrityError`][threadline.IntegrityError] when
    it brings a defect repair cannot fix (a result for a call the conversation never made, a
    reused call id), so a bad append cannot poison every later request. Defects repair can
    fix are stored as they are and fixed on read: ``messages`` returns the history through
    [`prepare_messages`][threadline.prepare_messages] (``mode="auto"``).

    The live frontier: the calls of the newest assistant message that have no result yet
    ([`pending_calls`][threadline.pending_calls]) are kept unanswered by a read
    (``pending="keep"``), since under ``RunnableWithMessageHistory`` their results are the
    next invocation's input. When a message that is not a tool message is written after them
    (a crash was followed by a new turn), they are answered as interrupted in the same atomic
    write. A tool call left without a result by a crash and followed by a later message is
    answered on read (the stored history keeps the call, and the real result can still be
    appended).

    Args:
        store: any threadline store: a ``Store`` (``MemoryStore``, ``SQLiteStore``...) or an
            ``AsyncStore`` (``AsyncMemoryStore``, ``AsyncSQLiteStore``...). The blocking
            methods run an async store's coroutines when no event loop is running; the async
            methods run a blocking store in a worker thread.
        conversation_id: the conversation's id in the store.
        mode: how ``messages`` prepares what it returns: ``"auto"`` (repair), ``"strict"``
            (raise [`IntegrityError`][threadline.IntegrityError] on any defect), or ``None``
            (the stored history as it is, internal messages and hook parts left out).
        pending: what a read does with pending calls (``mode`` ``"auto"`` or ``"strict"``):
            ``"keep"`` (the default: in flight, their results come as the next input),
            ``"answer"`` (crashed: answered as interrupted, for the first turn after a crash
            that does not run them again) or ``"refuse"`` (raise).

    Raises:
        threadline.ValidationError: ``conversation_id`` is not a valid id.
        ValueError: ``mode`` or ``pending`` is not one of its values.
    """

    def __init__(
        self,
        store: Store | AsyncStore,
        conversation_id: str,
        *,
        mode: Mode | None = "auto",
        pending: Pending = "keep",
    ) -> None:
        if mode not in ("auto", "strict", None):
            raise ValueError(f"mode must be 'auto', 'strict' or None, not {mode!r}")
        if pending not in ("answer", "keep", "refuse"):
            raise ValueError(
                f"pending must be 'keep' (calls in flight), 'answer' (calls that crashed) or "
                f"'refuse', not {pending!r}"
            )
        self.store = store
        self.conversation_id = validate_conversation_id(conversation_id)
        self.mode: Mode | None = mode
        self.pending: Pending = pending
        self._async = inspect.iscoroutinefunction(store.load)

    def __repr__(self) -> str:
        return f"ThreadlineChatMessageHistory({self.store!r}, {self.conversation_id!r})"

    # The blocking side -----------------------------------------------------------------------

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """The conversation as LangChain messages, prepared for a model (see ``mode``)."""
        if self._async:
            return cast("list[BaseMessage]", self._run(self.aget_messages()))
        return self._view(cast(Store, self.store).load(self.conversation_id))

    def pending_calls(self) -> list[ToolCall]:
        """The pending calls ([`pending_calls`][threadline.pending_calls]) as LangChain
        ``ToolCall`` s, to run again after a crash: a LangChain tool's ``invoke(call)`` returns
        the ``ToolMessage`` to send as the next input. A call whose arguments did not parse
        (an ``invalid_tool_calls`` entry in LangChain) is not listed: no LangChain tool runs
        it, and it is answered as interrupted when the next non-tool message is written."""
        if self._async:
            return cast("list[ToolCall]", self._run(self.apending_calls()))
        return _runnable(cast(Store, self.store).load(self.conversation_id))

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append ``messages`` in one write: all of them or none.

        Pending calls that a message of the batch other than a tool message follows are
        answered as interrupted in the same write, before that message. Messages the
        conversation already holds are replays: the store skips them (or refuses one that
        changed), so a batch can be sent again.

        Raises:
            threadline.ValidationError: a message cannot be converted (nothing is written).
            threadline.IntegrityError: the batch answers a call the conversation never made,
                answers a call twice or reuses a call id (nothing is written).
            threadline.StoreError: the store could not write.
        """
        if self._async:
            self._run(self.aadd_messages(messages))
            return
        store = cast(Store, self.store)
        batch = from_langchain(list(messages))
        if not batch:
            return
        while True:
            version = store.version(self.conversation_id)
            write = _checked(store.load(self.conversation_id), batch)
            try:
                store.append(self.conversation_id, write, expected_version=version)
            except ConflictError:
                continue  # another writer came first: check against what it wrote
            return

    def clear(self) -> None:
        """Delete the conversation from the store."""
        if self._async:
            self._run(self.aclear())
            return
        cast(Store, self.store).delete(self.conversation_id)

    # The async side --------------------------------------------------------------------------

    async def aget_messages(self) -> list[BaseMessage]:
        """The conversation as LangChain messages, prepared for a model (see ``mode``)."""
        if not self._async:
            return await asyncio.to_thread(lambda: self.messages)
        return self._view(await cast(AsyncStore, self.store).load(self.conversation_id))

    async def apending_calls(self) -> list[ToolCall]:
        """The pending calls as LangChain ``ToolCall`` s (see ``pending_calls``)."""
        if not self._async:
            return await asyncio.to_thread(self.pending_calls)
        return _runnable(await cast(AsyncStore, self.store).load(self.conversation_id))

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append ``messages`` in one write: all of them or none (see ``add_messages``)."""
        if not self._async:
            await asyncio.to_thread(self.add_messages, messages)
            return
        store = cast(AsyncStore, self.store)
        batch = from_langchain(list(messages))
        if not batch:
            return
        while True:
            version = await store.version(self.conversation_id)
            write = _checked(await store.load(self.conversation_id), batch)
            try:
                await store.append(self.conversation_id, write, expected_version=version)
            except ConflictError:
                continue
            return

    async def aclear(self) -> None:
        """Delete the conversation from the store."""
        if not self._async:
            await asyncio.to_thread(self.clear)
            return
        await cast(AsyncStore, self.store).delete(self.conversation_id)

    # Shared ----------------------------------------------------------------------------------

    def _view(self, stored: list[Message]) -> list[BaseMessage]:
        if self.mode is None:
            return to_langchain(stored)
        return to_langchain(prepare_messages(stored, self.mode, pending=self.pending))

    @staticmethod
    def _run(coroutine: Any) -> Any:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(coroutine)
        coroutine.close()
        raise RuntimeError(
            "ThreadlineChatMessageHistory over an async store cannot block inside a running "
            "event loop; await aget_messages(), aadd_messages(), apending_calls() or aclear() "
            "instead"
        )


def _checked(stored: list[Message], batch: list[Message]) -> list[Message]:
    """What to append for ``batch``: pending calls it follows answered, unrepairable refused.

    Messages the conversation already holds are replays (the store skips them, or refuses
    them when they differ): they are not checked again, so a batch can be sent twice.
    """
    write = answer_before_new_turns(stored, batch)
    stored_ids = {message.id for message in stored}
    fresh = [message for message in write if message.id not in stored_ids]
    if could_poison(fresh):
        refuse_unrepairable([*stored, *fresh], fresh, _ADD)
    return write


def _runnable(stored: list[Message]) -> list[ToolCall]:
    return [
        tool_call(name=call.name, args=dict(call.arguments), id=call.id)
        for call in pending_calls(stored)
        if call.raw_arguments is None
    ]
