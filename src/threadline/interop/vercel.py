"""The Vercel AI SDK's ``UIMessage`` JSON, which ``useChat`` posts: serve an AI SDK frontend from
a Python backend.

[`from_ui_messages`][threadline.interop.vercel.from_ui_messages] reads the ``messages`` a
``useChat`` request carries (AI SDK 5 and later) into threadline messages;
[`to_ui_messages`][threadline.interop.vercel.to_ui_messages] writes threadline messages back as
``UIMessage`` objects. No package is needed: the format is JSON.

The body comes from a browser, so ``from_ui_messages`` is **untrusted by default**: it reads
within [`Limits.untrusted`][threadline.limits.Limits.untrusted] and then applies
[`sanitize_untrusted`][threadline.sanitize_untrusted] (no system prompt, hook state, provider
state or private file URL from the client gets in). Pass ``trusted=True`` only for UI messages
your own server wrote and kept (or sealed).

How the two shapes meet:

- one assistant ``UIMessage`` holds a whole agent turn: its ``step-start`` parts split it into
  steps, and each step becomes threadline's shape, an assistant message with the tool calls,
  then a tool message with their results; ``to_ui_messages``
  groups such a run back into one ``UIMessage`` and writes one ``step-start`` before each step;
- fields threadline has no slot for are kept, never dropped: in the part's (or message's)
  metadata under ``"vercel.<field>"`` (``vercel.state``, ``vercel.providerMetadata``,
  ``vercel.approval``, ``vercel.metadata`` for the ``UIMessage`` metadata...), and ``data-*``,
  ``source-url`` and ``source-document`` parts of assistant messages as hook parts named
  ``"vercel.<type>"``; in user and system messages, anything but text (and files, for users)
  is refused;
- what threadline holds and the ``UIMessage`` has no field for (part metadata, reasoning
  signatures and encrypted state, a result made of parts, provider tool parts) travels in the
  ``providerMetadata`` (``callProviderMetadata``, ``resultProviderMetadata``) entry
  ``"threadline"``, so a trusted round trip loses nothing there.

The docs page ``docs/interop/vercel.md`` lists what each direction cannot carry.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import Final

import pydantic
from typing_extensions import assert_never

from threadline._blob_marks import refuse_blob_marks
from threadline._validation import translate_errors
from threadline.codecs._media import data_url
from threadline.codecs._media import parse_data_url
from threadline.codecs._reading import Reader
from threadline.errors import UnsupportedContentError
from threadline.integrity import sanitize_untrusted
from threadline.interop._untrusted import reading_limits
from threadline.interop._untrusted import refuse_sanitize_options
from threadline.limits import Layout
from threadline.limits import Limits
from threadline.limits import enforce_counts
from threadline.limits import enforce_limits
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

__all__ = ["from_ui_messages", "to_ui_messages"]

_WHAT: Final = "vercel.from_ui_messages"
_FORMAT: Final = "AI SDK UIMessage"
_LAYOUT: Final = Layout("messages", ("parts",))
_CARRY: Final = "vercel."
"""The metadata prefix of ``UIMessage`` fields threadline has no slot for."""
_STATE: Final = "threadline"
"""The ``providerMetadata`` entry holding what a ``UIMessage`` has no field for."""
_JSON_OUTPUT: Final = "vercel.json_output"
"""Marks a tool result whose ``output`` was a JSON value, kept as JSON text."""
_NATIVE_HOOK: Final = "data-threadline-hook"
"""The data part of a hook part whose name does not start with ``vercel.``."""
_ROLES: Final = ("system", "user", "assistant")
_TOOL_STATES: Final = frozenset(
    {
        "input-streaming",
        "input-available",
        "approval-requested",
        "approval-responded",
        "output-available",
        "output-error",
        "output-denied",
    }
)
_REASONING_STATE: Final = ("signature", "encrypted", "redacted", "provider", "model", "item_id")


def from_ui_messages(
    data: str | bytes | bytearray | Sequence[Any] | Mapping[str, Any],
    *,
    trusted: bool = False,
    limits: Limits | None = None,
    keep_metadata: Collection[str] = (),
    allow_private_urls: bool = False,
) -> list[Message]:
    """Threadline messages from the ``UIMessage`` list an AI SDK ``useChat`` request posts.

    Args:
        data: the request body as JSON text (``str`` or ``bytes``), the parsed body (an object
            with ``"messages"``: its other keys, such as ``id`` and ``trigger``, are the
            request's, for your code to read), or the parsed list of ``UIMessage`` objects.
        trusted: ``False`` (the default) treats the messages as client input: read within
            [`Limits.untrusted`][threadline.limits.Limits.untrusted], then passed through
            [`sanitize_untrusted`][threadline.sanitize_untrusted], which drops system
            messages, hook parts (the ``data-*`` and source parts), provider tool parts, every
            metadata key but three harmless ones (so the ``vercel.*`` keys too), reasoning's
            opaque state, private file URLs and unanswered calls at the end. ``True`` keeps
            everything, for messages your server wrote.
        limits: how much to read; ``None`` means ``Limits.untrusted()``, or ``Limits()``
            when ``trusted``.
        keep_metadata: metadata keys ``sanitize_untrusted`` keeps (``"vercel.metadata"``
            keeps each ``UIMessage``'s ``metadata``); not with ``trusted``.
        allow_private_urls: passed to ``sanitize_untrusted``; not with ``trusted``.

    Returns:
        The messages, with ids taken from the ``UIMessage`` ids (a ``UIMessage`` split into
        several messages gives ``<id>``, ``<id>.1``, ``<id>.2``...).

    Raises:
        threadline.LimitExceededError: the input exceeds ``limits``, naming the JSON path.
        threadline.CodecError: the input is not ``UIMessage`` JSON; the message names the JSON
            path of the first value that does not fit (``messages[2].parts[0].state``). A
            blank ``UIMessage`` id, or one that another ``UIMessage`` has too (or that a
            split ``UIMessage`` gives one of its messages), is refused at its ``messages[i].id``.
        threadline.ValidationError: the text is not JSON or not Unicode, or a value cannot be
            stored in a message.
        ValueError: ``keep_metadata`` or ``allow_private_urls`` with ``trusted=True``.
    """
    refuse_sanitize_options(
        _WHAT, trusted=trusted, keep_metadata=keep_metadata, allow_private_urls=allow_private_urls
    )
    checked = reading_limits(limits, trusted=trusted)
    document = enforce_limits(data, checked, what=_WHAT, layout=_LAYOUT)
    reader = Reader(_FORMAT)
    wire = reader.messages(document)
    messages: list[Message] = []
    ids: dict[str, tuple[int, int]] = {}
    for index, raw in enumerate(wire):
        messages.extend(_read_message(raw, index, reader, ids))
    enforce_counts(messages, checked, what=_WHAT)
    refuse_blob_marks(messages, _WHAT)
    if trusted:
        return messages
    return sanitize_untrusted(
        messages,
        limits=checked,
        keep_metadata=keep_metadata,
        allow_private_urls=allow_private_urls,
    )


# ---------------------------------------------------------------------------------------------
# Reading


def _read_message(
    raw: Any, index: int, reader: Reader, ids: dict[str, tuple[int, int]]
) -> list[Message]:
    """The messages of the ``UIMessage`` at ``index``; ``ids`` holds each message id given so
    far, with the index of the ``UIMessage`` it was read from and which of its messages it is
    (0 for the first, which has the ``UIMessage`` id)."""
    path = f"messages[{index}]"
    item = reader.expect_object(raw, path)
    ui_id = reader.str_field(item, "id", path)
    _check_id(ui_id, index, 0, ids, reader)
    ids[ui_id] = (index, 0)
    role = reader.str_field(item, "role", path)
    if role not in _ROLES:
        reader.fail(f"{path}.role", f"unknown role {role!r} (system, user or assistant)")
    reader.expect_list(reader.field(item, "parts", path), f"{path}.parts")
    carried = {
        _CARRY + key: value for key, value in item.items() if key not in ("id", "role", "parts")
    }
    if role == "assistant":
        groups = _assistant_messages(item, path, reader)
    else:
        parts = [
            _content_part(block, kind, where, reader, role)
            for where, block, kind in reader.tagged_objects(item["parts"], f"{path}.parts")
        ]
        groups = [(role, parts)] if parts else []
    if not groups:
        return []  # no parts, or only step-start: nothing to say
    out: list[Message] = []
    for number, (kind, parts) in enumerate(groups):
        fields: dict[str, Any] = {"role": kind, "parts": tuple(parts)}
        fields["id"] = f"{ui_id}.{number}" if number else ui_id
        if number:
            _check_id(fields["id"], index, number, ids, reader)
            ids[fields["id"]] = (index, number)
        if carried and not number:
            fields["metadata"] = carried
        try:
            out.append(Message(**fields))
        except pydantic.ValidationError as error:  # a value no message holds: name the UI path
            raise translate_errors(error, f"cannot store the message at {path}") from None
    return out


def _check_id(
    message_id: str, index: int, number: int, ids: dict[str, tuple[int, int]], reader: Reader
) -> None:
    """Refuse a blank id, and one another message has: messages are stored, answered and
    sealed by id, and the AI SDK itself tells ``UIMessage`` s apart by it. ``number`` says
    which message read from ``messages[index]`` gets the id (0: the first, its own id)."""
    path = f"messages[{index}].id"
    if not message_id.strip():
        reader.fail(
            path,
            f"the UIMessage id is blank ({message_id!r}); give every message a unique id (an "
            "AI SDK server leaves the id of the assistant message it writes empty unless "
            "toUIMessageStreamResponse is given generateMessageId)",
        )
    if message_id not in ids:
        return
    where, first = ids[message_id]
    other = _made(first, where) if first else f"messages[{where}]"
    if number:
        mine = f"{_made(number, index)} would get the id {message_id!r}"
    else:
        mine = f"duplicate id {message_id!r}"
    reader.fail(
        path,
        f"{mine}, which is the id of {other} too; each UIMessage needs its own id, and one "
        "read as several messages gives them <id>, <id>.1, <id>.2...",
    )


def _made(number: int, index: int) -> str:
    return f"message {number + 1} of those read from messages[{index}]"


def _content_part(
    block: Mapping[str, Any], kind: str, path: str, reader: Reader, role: str
) -> TextPart | FilePart:
    if kind == "text":
        return _text(block, path, reader)
    if kind == "file" and role == "user":
        return _file(block, path, reader)
    allowed = "text and file parts" if role == "user" else "text parts"
    raise reader.error(
        f"{path}.type",
        f"a {role} message holds {allowed} only, not {kind!r} (tool, reasoning, data, source "
        "and step-start parts belong to assistant messages)",
    )


def _assistant_messages(
    item: Mapping[str, Any], path: str, reader: Reader
) -> list[tuple[str, list[Any]]]:
    """The threadline messages of one assistant ``UIMessage``: one assistant message for each
    step (the parts between two ``step-start`` parts, as the AI SDK itself splits them), each
    followed by a tool message with the results of its calls."""
    out: list[tuple[str, list[Any]]] = []
    parts: list[Any] = []
    results: list[ToolResultPart] = []

    def flush() -> None:
        if parts:
            out.append(("assistant", list(parts)))
        if results:
            out.append(("tool", list(results)))
        parts.clear()
        results.clear()

    for where, block, kind in reader.tagged_objects(item["parts"], f"{path}.parts"):
        if kind == "step-start":
            _no_extra_keys(block, where, reader)
            flush()
        elif kind == "dynamic-tool" or kind.startswith("tool-"):
            call, result = _tool(block, kind, where, reader)
            parts.append(call)
            if isinstance(result, ToolResultPart):
                results.append(result)
            elif result is not None:
                parts.append(result)
        else:
            parts.append(_assistant_part(block, kind, where, reader))
    flush()
    return out


def _no_extra_keys(block: Mapping[str, Any], path: str, reader: Reader) -> None:
    extra = sorted(key for key in block if key != "type")
    if extra:
        reader.fail(f"{path}.{extra[0]}", "a step-start part has no other fields")


def _assistant_part(block: Mapping[str, Any], kind: str, path: str, reader: Reader) -> Part:
    if kind == "text":
        return _text(block, path, reader)
    if kind == "file":
        return _file(block, path, reader)
    if kind == "reasoning":
        return _reasoning(block, path, reader)
    if kind == _NATIVE_HOOK:
        return _native_hook(block, path, reader)
    if kind.startswith("data-") or kind in ("source-url", "source-document"):
        state = {key: value for key, value in block.items() if key != "type"}
        return reader.part(HookPart, block, path, name=_CARRY + kind, state=state)
    raise reader.error(
        f"{path}.type",
        f"unknown part type {kind!r} (text, reasoning, file, tool-<name>, dynamic-tool, "
        "source-url, source-document, step-start or data-<name>)",
    )


def _native_hook(block: Mapping[str, Any], path: str, reader: Reader) -> HookPart:
    """A hook part ``to_ui_messages`` wrote as a ``data-threadline-hook`` part: its other
    fields (a data part's ``id``) are carried in its metadata."""
    where = f"{path}.data"
    value = reader.expect_object(reader.field(block, "data", path), where)
    unknown = sorted(key for key in value if key not in ("name", "state", "metadata"))
    if unknown:
        reader.fail(f"{where}.{unknown[0]}", "expected only name, state and metadata")
    _, carried = _split(block, path, reader, ("type", "data"), None)
    metadata = reader.optional_object(value, "metadata", where) or {}
    return reader.part(
        HookPart,
        block,
        path,
        name=reader.str_field(value, "name", where),
        state=reader.expect_object(reader.field(value, "state", where), f"{where}.state"),
        metadata={**metadata, **carried},
    )


def _split(
    block: Mapping[str, Any], path: str, reader: Reader, used: Collection[str], key: str | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(threadline state, carried metadata)`` of a part: its ``providerMetadata`` (``key``)
    entry ``"threadline"``, and every field outside ``used`` as ``vercel.<field>``."""
    state: dict[str, Any] = {}
    carried: dict[str, Any] = {}
    for name, value in block.items():
        if name in used:
            continue
        if key is not None and name == key and isinstance(value, Mapping) and _STATE in value:
            state = dict(reader.expect_object(value[_STATE], f"{path}.{name}.{_STATE}"))
            rest = {k: v for k, v in value.items() if k != _STATE}
            if rest:
                carried[_CARRY + name] = rest
        else:
            carried[_CARRY + name] = value
    return state, carried


def _metadata(state: Mapping[str, Any], carried: dict[str, Any], path: str, reader: Reader) -> Any:
    own = state.get("metadata")
    if own is None:
        return carried
    return {**reader.expect_object(own, f"{path}.{_STATE}.metadata"), **carried}


def _text(block: Mapping[str, Any], path: str, reader: Reader) -> TextPart:
    text = reader.expect_str(block.get("text"), f"{path}.text")
    state, carried = _split(block, path, reader, ("type", "text"), "providerMetadata")
    metadata = _metadata(state, carried, path, reader)
    return reader.part(TextPart, block, path, text=text, metadata=metadata)


def _reasoning(block: Mapping[str, Any], path: str, reader: Reader) -> ReasoningPart:
    text = reader.expect_str(block.get("text"), f"{path}.text")
    state, carried = _split(block, path, reader, ("type", "text"), "providerMetadata")
    fields: dict[str, Any] = {name: state[name] for name in _REASONING_STATE if name in state}
    if "summary" in state:
        fields["summary"] = tuple(reader.expect_list(state["summary"], f"{path}.summary"))
    metadata = _metadata(state, carried, path, reader)
    return reader.part(ReasoningPart, block, path, text=text, metadata=metadata, **fields)


def _file(block: Mapping[str, Any], path: str, reader: Reader) -> FilePart:
    media_type = reader.media_type(block.get("mediaType"), f"{path}.mediaType")
    url = reader.str_field(block, "url", path)
    filename = reader.optional_str(block, "filename", path)
    used = ("type", "mediaType", "url", "filename")
    state, carried = _split(block, path, reader, used, "providerMetadata")
    metadata = _metadata(state, carried, path, reader)
    inline = parse_data_url(url, reader, f"{path}.url")
    source: dict[str, Any] = {"url": url} if inline is None else {"data": inline[1]}
    return reader.part(
        FilePart,
        block,
        path,
        media_type=media_type,
        filename=filename,
        metadata=metadata,
        **source,
    )


_TOOL_FIELDS: Final = {
    # The fields a tool part's call and result are read from, by state; any other field is
    # carried in the call's metadata, and resultProviderMetadata and preliminary in the result's.
    "input-available": ("state",),
    "output-available": ("state", "output", "resultProviderMetadata", "preliminary"),
    "output-error": ("state", "errorText", "resultProviderMetadata", "preliminary"),
}


def _tool(
    block: Mapping[str, Any], kind: str, path: str, reader: Reader
) -> tuple[ToolCallPart | ProviderToolCallPart, ToolResultPart | ProviderToolResultPart | None]:
    """The call of a tool part and, when it has an output or an error, its result."""
    dynamic = kind == "dynamic-tool"
    name = reader.str_field(block, "toolName", path) if dynamic else kind[len("tool-") :]
    call_id = reader.str_field(block, "toolCallId", path)
    status = reader.str_field(block, "state", path)
    if status not in _TOOL_STATES:
        reader.fail(f"{path}.state", f"unknown tool state {status!r} ({', '.join(_TOOL_STATES)})")
    used = {"type", "toolCallId", "input", *_TOOL_FIELDS.get(status, ())}
    if dynamic:
        used.add("toolName")
    state, carried = _split(block, path, reader, used, "callProviderMetadata")
    if dynamic:
        carried[_CARRY + "type"] = kind
    provider = state.get("provider")
    if provider is not None and block.get("providerExecuted") is True:
        carried.pop(_CARRY + "providerExecuted", None)
        call: ToolCallPart | ProviderToolCallPart = reader.part(
            ProviderToolCallPart,
            block,
            path,
            id=call_id,
            name=name,
            input=block.get("input"),
            provider=provider,
            metadata=_metadata(state, carried, path, reader),
        )
        return call, _result(block, status, call, path, reader)
    arguments, raw = _arguments(block, path, reader)
    call = reader.part(
        ToolCallPart,
        block,
        path,
        id=call_id,
        name=name,
        arguments=arguments,
        raw_arguments=raw,
        metadata=_metadata(state, carried, path, reader),
    )
    return call, _result(block, status, call, path, reader)


def _arguments(block: Mapping[str, Any], path: str, reader: Reader) -> tuple[Any, str | None]:
    value = block.get("input")
    if value is None or isinstance(value, Mapping):
        return value or {}, None
    if isinstance(value, str):
        return {}, value
    return {}, reader.json_text(value, f"{path}.input")


def _result(
    block: Mapping[str, Any],
    status: str,
    call: ToolCallPart | ProviderToolCallPart,
    path: str,
    reader: Reader,
) -> ToolResultPart | ProviderToolResultPart | None:
    """The result of a tool part with an output or an error, for ``call``."""
    if status not in ("output-available", "output-error"):
        return None
    used = [key for key in block if key not in ("resultProviderMetadata", "preliminary")]
    state, carried = _split(block, path, reader, used, "resultProviderMetadata")
    fields: dict[str, Any] = {"call_id": call.id, "is_error": status == "output-error"}
    if isinstance(call, ProviderToolCallPart):
        cls: Callable[..., ToolResultPart | ProviderToolResultPart] = ProviderToolResultPart
        fields["provider"] = call.provider
        if "content" in state:
            fields["content"] = state["content"]
    else:
        cls = ToolResultPart
        fields["name"] = state.get("name", call.name)
        if "content" in state:
            items = reader.expect_list(state["content"], f"{path}.resultProviderMetadata.{_STATE}")
            fields["content"] = tuple(_content_item(item, path, reader) for item in items)
    if "content" not in fields:
        output = block.get("output")
        if fields["is_error"]:
            output = reader.str_field(block, "errorText", path)
        elif cls is ToolResultPart and not isinstance(output, str):
            output = reader.json_text(output, f"{path}.output")
            carried[_JSON_OUTPUT] = True  # JSON text that goes back out as the JSON value
        fields["content"] = output
    return reader.part(cls, block, path, metadata=_metadata(state, carried, path, reader), **fields)


def _content_item(item: Any, path: str, reader: Reader) -> ToolResultContent:
    try:
        return _CONTENT.validate_python(item)
    except pydantic.ValidationError as error:
        reader.check_json(item, path)
        raise reader.error(f"{path}.resultProviderMetadata.{_STATE}.content", str(error)) from None


_CONTENT: Final = pydantic.TypeAdapter[ToolResultContent](ToolResultContent)


# ---------------------------------------------------------------------------------------------
# Writing


def to_ui_messages(messages: Iterable[Message]) -> list[dict[str, Any]]:
    """``UIMessage`` objects (JSON values) for threadline messages, to send to an AI SDK
    frontend (as the initial ``messages`` of ``useChat``, or in your own response).

    System and user messages map one to one. A run of assistant and tool messages becomes one
    assistant ``UIMessage`` with the id of its first message: a ``step-start`` part before each
    assistant message's parts, and each tool call as a ``tool-<name>`` part in the state its
    result gives (``output-available``, ``output-error``, or ``input-available`` while
    unanswered). Internal messages are the server's and are left out, as are a message's
    ``created_at`` and its metadata other than the ``vercel.*`` keys.

    Raises:
        threadline.UnsupportedContentError: a tool result has no call before it in its run of
            assistant and tool messages (repair the history first: ``prepare_messages``).
        TypeError: an item is not a ``Message``.
    """
    out: list[dict[str, Any]] = []
    run: list[tuple[int, Message]] = []
    for index, message in enumerate(messages):
        if not isinstance(message, Message):
            raise TypeError(
                f"to_ui_messages takes threadline Message objects; item {index} is a "
                f"{type(message).__name__} (use load_json or Message.model_validate first)"
            )
        role = message.role
        if role == "internal":
            continue
        if role in ("assistant", "tool"):
            run.append((index, message))
            continue
        if run:
            out.append(_write_run(run))
            run = []
        out.append(_ui_message(message, [_write_part(part) for part in message.parts]))
    if run:
        out.append(_write_run(run))
    return out


def _ui_message(message: Message, parts: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"id": message.id, "role": message.role}
    for key, value in message.metadata.items():
        if key.startswith(_CARRY):
            out[key[len(_CARRY) :]] = _copy(value)
    out["parts"] = parts
    return out


def _write_run(run: list[tuple[int, Message]]) -> dict[str, Any]:
    first_index, first = run[0]
    if first.role != "assistant":
        raise UnsupportedContentError(
            f"messages[{first_index}]: a tool message must follow the assistant message with "
            "its calls (prepare_messages repairs the history)",
            message_index=first_index,
        )
    results: dict[str, ToolResultPart] = {}
    for _, message in run:
        if message.role == "tool":
            for part in message.parts:
                if isinstance(part, ToolResultPart):
                    results[part.call_id] = part
    provider_results = {
        part.call_id: part
        for _, message in run
        for part in message.parts
        if isinstance(part, ProviderToolResultPart)
    }
    parts: list[dict[str, Any]] = []
    for _, message in run:
        if message.role != "assistant":
            continue
        parts.append({"type": "step-start"})
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                parts.append(_write_call(part, results.pop(part.id, None)))
            elif isinstance(part, ProviderToolCallPart):
                parts.append(_write_provider_call(part, provider_results.pop(part.id, None)))
            elif not isinstance(part, ProviderToolResultPart):
                parts.append(_write_part(part))
    orphans: list[ToolResultPart | ProviderToolResultPart] = [
        *results.values(),
        *provider_results.values(),
    ]
    if orphans:
        index = next(i for i, m in run if any(p is orphans[0] for p in m.parts))
        raise UnsupportedContentError(
            f"messages[{index}]: the tool result for call {orphans[0].call_id!r} has no call "
            "before it in its run of assistant and tool messages (prepare_messages repairs "
            "the history)",
            message_index=index,
        )
    return _ui_message(first, parts)


def _write_part(part: Part) -> dict[str, Any]:
    """The ``UIMessage`` part for ``part``; every part type has a branch (``assert_never``)."""
    if isinstance(part, TextPart):
        return _with_state({"type": "text", "text": part.text}, part.metadata, {})
    if isinstance(part, ReasoningPart):
        state: dict[str, Any] = {}
        for name in _REASONING_STATE:
            value = getattr(part, name)
            if value:
                state[name] = value
        if part.summary:
            state["summary"] = list(part.summary)
        return _with_state({"type": "reasoning", "text": part.text}, part.metadata, state)
    if isinstance(part, FilePart):
        out: dict[str, Any] = {"type": "file", "mediaType": part.media_type}
        if part.filename is not None:
            out["filename"] = part.filename
        out["url"] = part.url if part.data is None else data_url(part.media_type, part.data)
        return _with_state(out, part.metadata, {})
    if isinstance(part, HookPart):
        if part.name.startswith(_CARRY):
            return {"type": part.name[len(_CARRY) :], **_copy(dict(part.state))}
        data: dict[str, Any] = {"name": part.name, "state": _copy(dict(part.state))}
        out = {"type": _NATIVE_HOOK, "data": data}
        _with_state(out, part.metadata, data, None)
        return out
    if isinstance(
        part, (ToolCallPart, ToolResultPart, ProviderToolCallPart, ProviderToolResultPart)
    ):
        raise AssertionError(f"_write_run writes a {part.type} part with its call or result")
    assert_never(part)


def _with_state(
    out: dict[str, Any],
    metadata: Mapping[str, Any],
    state: dict[str, Any],
    key: str | None = "providerMetadata",
) -> dict[str, Any]:
    """``out`` with the carried ``vercel.*`` fields of ``metadata`` and, under
    ``key``'s ``"threadline"`` entry, ``state`` and the rest of ``metadata`` (with ``key``
    ``None``, the rest of ``metadata`` goes into ``state`` itself)."""
    own: dict[str, Any] = {}
    for name, value in metadata.items():
        if name == _JSON_OUTPUT:
            continue
        if name.startswith(_CARRY):
            out[name[len(_CARRY) :]] = _copy(value)
        else:
            own[name] = _copy(value)
    if own:
        state["metadata"] = own
    if state and key is not None:
        carried = out.get(key)
        out[key] = {**(carried if isinstance(carried, dict) else {}), _STATE: state}
    return out


def _write_call(call: ToolCallPart, result: ToolResultPart | None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": f"tool-{call.name}", "toolCallId": call.id}
    if call.metadata.get(_CARRY + "type") == "dynamic-tool":
        out["toolName"] = call.name
    status = "input-available" if result is None else _result_status(result)
    out["state"] = status
    out["input"] = _copy(dict(call.arguments)) if call.raw_arguments is None else call.raw_arguments
    _with_state(out, call.metadata, {}, "callProviderMetadata")
    if result is None:
        return out
    state: dict[str, Any] = {}
    if result.name != call.name:
        state["name"] = result.name
    if isinstance(result.content, str):
        text = result.content
        if result.metadata.get(_JSON_OUTPUT) is True and not result.is_error:
            out["output"] = json.loads(text)
        elif result.is_error:
            out["errorText"] = text
        else:
            out["output"] = text
    else:
        items = [_CONTENT.dump_python(item, mode="json") for item in result.content]
        state["content"] = items
        if result.is_error:
            out["errorText"] = result.text
        else:
            out["output"] = _copy(items)
    return _with_state(out, result.metadata, state, "resultProviderMetadata")


def _result_status(result: ToolResultPart | ProviderToolResultPart) -> str:
    return "output-error" if result.is_error else "output-available"


def _write_provider_call(
    call: ProviderToolCallPart, result: ProviderToolResultPart | None
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": f"tool-{call.name}",
        "toolCallId": call.id,
        "state": "input-available" if result is None else _result_status(result),
        "input": _copy(call.input),
        "providerExecuted": True,
    }
    _with_state(out, call.metadata, {"provider": call.provider}, "callProviderMetadata")
    if result is None:
        return out
    state: dict[str, Any] = {}
    if result.is_error:
        if isinstance(result.content, str):
            out["errorText"] = result.content
        else:
            out["errorText"] = json.dumps(result.content, ensure_ascii=False)
            state["content"] = _copy(result.content)
    else:
        out["output"] = _copy(result.content)
    return _with_state(out, result.metadata, state, "resultProviderMetadata")


def _copy(value: Any) -> Any:
    """A copy of a JSON value's containers, so that changing the output never changes a
    message (values inside messages are at most 190 levels deep, well within recursion)."""
    if isinstance(value, dict):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy(item) for item in value]
    return value
