"""Model Context Protocol tools, tool results and sampling, to and from threadline.

An MCP client gets tools from servers and, when a server asks it to, samples a model for the
server (``sampling/createMessage``). This module maps what crosses that boundary; the official
``mcp`` package carries it (``pip install "threadline[mcp]"``):

- [`tool_from_mcp`][threadline.interop.mcp.tool_from_mcp]: an MCP ``Tool`` as a
  [`ToolDefinition`][threadline.ToolDefinition], so ``encode(..., tools=...)`` sends it to every
  format, its schema adapted (or refused) by the same rules as any tool's;
- [`result_from_mcp`][threadline.interop.mcp.result_from_mcp] /
  [`result_to_mcp`][threadline.interop.mcp.result_to_mcp]: a ``CallToolResult`` as a
  [`ToolResultPart`][threadline.ToolResultPart] and back;
- [`from_sampling_messages`][threadline.interop.mcp.from_sampling_messages] /
  [`to_create_message_result`][threadline.interop.mcp.to_create_message_result]: a sampling
  request's messages as threadline messages, and the model's reply as the result the server
  waits for.

What a server sends is **untrusted by default**: results and sampling messages are read within
[`Limits.untrusted`][threadline.limits.Limits.untrusted] and passed through
[`sanitize_untrusted`][threadline.sanitize_untrusted] (no metadata, no private or non-HTTP(S)
file URL), and tool schemas are read within the same limits. MCP fields threadline has no slot
for are kept in the part's (or definition's) metadata as ``"mcp.<field>"`` when ``trusted=True``;
the docs page ``docs/interop/mcp.md`` lists what each direction loses.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import Final

import pydantic

from threadline._bounded_json import exceeded
from threadline._urls import is_public_web_url
from threadline._urls import is_web_url
from threadline._validation import translate_errors
from threadline.codecs._media import decode_base64
from threadline.codecs._media import encode_base64
from threadline.codecs._reading import Reader
from threadline.errors import UnsupportedContentError
from threadline.integrity import sanitize_untrusted
from threadline.interop._missing import missing
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
from threadline.tools import ToolDefinition

try:
    from mcp import types as mt
except ImportError as error:  # pragma: no cover - the extra is installed in the test run
    raise missing("mcp", "mcp", "mcp", error) from error

__all__ = [
    "from_sampling_messages",
    "result_from_mcp",
    "result_to_mcp",
    "to_create_message_result",
    "tool_from_mcp",
]

_PREFIX: Final = "mcp."
"""The metadata prefix of MCP fields threadline has no slot for (``"mcp.annotations"``)."""
_OCTETS: Final = "application/octet-stream"
_TOOL_FIELDS: Final = ("name", "description", "inputSchema")
_RESULT_FIELDS: Final = ("content", "isError", "resultType")
_STRUCTURED: Final = _PREFIX + "structuredContent"
_RESOURCE: Final = _PREFIX + "resource"
"""Part metadata: the ``uri`` (and ``mimeType``, ``_meta``) of an embedded resource."""
_SAMPLING: Final = Layout("messages", ("content",))
_BLOCK_TYPE: Final = _PREFIX + "type"
"""Part metadata: the MCP block type, kept when the media type alone would not give it back."""

_STOP_REASONS: Final[Mapping[str, str]] = {
    # Each codec's own stop reason (message.metadata["stop_reason"]), lowercased, to MCP's.
    "stop": "endTurn",  # OpenAI Chat and its dialects, Mistral, Ollama
    "end_turn": "endTurn",  # Anthropic, Bedrock
    "complete": "endTurn",  # Cohere
    "completed": "endTurn",  # OpenAI Responses (its status)
    "length": "maxTokens",  # OpenAI Chat, Mistral, Ollama
    "model_length": "maxTokens",  # Mistral
    "max_tokens": "maxTokens",  # Anthropic, Bedrock, Gemini (MAX_TOKENS), Cohere
    "max_output_tokens": "maxTokens",  # OpenAI Responses (incomplete_details.reason)
    "stop_sequence": "stopSequence",  # Anthropic, Bedrock, Cohere (STOP_SEQUENCE)
    "tool_calls": "toolUse",  # OpenAI Chat, Mistral
    "function_call": "toolUse",
    "tool_use": "toolUse",  # Anthropic, Bedrock
    "tool_call": "toolUse",  # Cohere
}


# ---------------------------------------------------------------------------------------------
# Tools


def tool_from_mcp(
    tool: mt.Tool | Mapping[str, Any], *, strict: bool | None = None, limits: Limits | None = None
) -> ToolDefinition:
    """A [`ToolDefinition`][threadline.ToolDefinition] for an MCP tool (an item of
    ``ListToolsResult.tools``), to pass to ``encode(..., tools=...)``.

    The ``inputSchema`` becomes ``parameters`` as it is: each codec adapts it to its provider
    (Gemini's schema subset, OpenAI's strict mode) or refuses it with the same error as for a
    tool written by hand. Every other field is kept in ``metadata`` under ``"mcp.<field>"``:
    ``mcp.title``, ``mcp.outputSchema``, ``mcp.annotations`` (hints only: the MCP
    specification warns that a server may lie in them), ``mcp.icons``, ``mcp._meta``... The
    metadata is never sent to a provider.

    Args:
        tool: the ``mcp.types.Tool``, or its JSON (a mapping with ``inputSchema``).
        strict: the definition's ``strict`` (OpenAI's strict mode); ``None`` leaves it to the
            provider.
        limits: how much to read; ``None`` means ``Limits.untrusted()``, since the tool comes
            from a server.

    Returns:
        The definition; it has no ``function`` (call the tool through the MCP session).

    Raises:
        threadline.LimitExceededError: the tool is larger or deeper than ``limits``.
        threadline.CodecError: ``tool`` is not an MCP tool (no ``name``, no ``inputSchema``
            object), naming the field.
        threadline.ValidationError: the definition cannot be built: the errors of
            ``ToolDefinition`` (a schema that is not an object schema, ``strict=True`` with a
            schema strict mode cannot take), naming the field.
        TypeError: ``tool`` is neither an MCP ``Tool`` nor a mapping.
    """
    document = _document(tool, "tool_from_mcp", "tool", "Tool")
    enforce_limits(document, reading_limits(limits, trusted=False), what="mcp.tool_from_mcp")
    reader = Reader("MCP Tool")
    name = reader.str_field(document, "name", "")
    description = reader.optional_str(document, "description", "") or ""
    parameters = reader.expect_object(reader.field(document, "inputSchema", ""), "inputSchema")
    metadata = {_PREFIX + key: value for key, value in document.items() if key not in _TOOL_FIELDS}
    return ToolDefinition(
        name=name, description=description, parameters=parameters, strict=strict, metadata=metadata
    )


# ---------------------------------------------------------------------------------------------
# Tool results


def result_from_mcp(
    call_id: str,
    result: mt.CallToolResult | Mapping[str, Any],
    *,
    name: str | None = None,
    trusted: bool = False,
    limits: Limits | None = None,
    keep_metadata: Collection[str] = (),
    allow_private_urls: bool = False,
) -> ToolResultPart:
    """The [`ToolResultPart`][threadline.ToolResultPart] answering ``call_id`` for what an MCP
    ``tools/call`` returned.

    Each content block becomes an item of ``content``: ``text`` a text part; ``image`` and
    ``audio`` a file part with the decoded bytes; ``resource_link`` a file part by URL (the
    link's ``uri``, ``mimeType`` or ``application/octet-stream``, ``name`` as the filename);
    an embedded ``resource`` a text part (text) or a file part (blob) with its ``uri`` in the
    metadata key ``"mcp.resource"``. ``isError`` is ``is_error``. ``structuredContent`` is
    kept in the metadata key ``"mcp.structuredContent"``; a result with no content blocks gets
    it as JSON text in ``content`` (so the model sees it). Other fields (``_meta``,
    annotations, a link's title and description) are kept as ``"mcp.<field>"`` metadata.

    Args:
        call_id: the id of the tool call this result answers.
        result: the ``mcp.types.CallToolResult``, or its JSON.
        name: the tool's name (some formats need it on results; Gemini does).
        trusted: ``False`` (the default) treats the result as the server's input: read within
            ``Limits.untrusted()``, then passed through ``sanitize_untrusted``, which drops
            every metadata key (so the ``mcp.*`` keys and ``structuredContent`` too) but
            those in ``keep_metadata``; a resource link whose URL is not ``http(s)`` or
            points into a private network (``file:``, ``data:``, a custom scheme) becomes a
            text mention of its name and URL instead of a file part. ``True`` keeps
            everything.
        limits: how much to read; ``None`` means ``Limits.untrusted()``, or ``Limits()``
            when ``trusted``.
        keep_metadata: metadata keys ``sanitize_untrusted`` keeps (``"mcp.structuredContent"``
            keeps the structured result); not with ``trusted``.
        allow_private_urls: passed to ``sanitize_untrusted``; not with ``trusted``.

    Raises:
        threadline.LimitExceededError: the result exceeds ``limits``, naming the path.
        threadline.CodecError: ``result`` is not a ``CallToolResult`` (an unknown block type,
            base64 that is not, a media type that is not one, a URI with no scheme), naming
            the JSON path (``content[1].data``).
        TypeError: ``result`` is neither a ``CallToolResult`` nor a mapping, or ``call_id``
            (``name``) is not a string.
        ValueError: ``keep_metadata`` or ``allow_private_urls`` with ``trusted=True``.
    """
    if not isinstance(call_id, str):
        raise TypeError(f"call_id must be the tool call's id (a str), not {type(call_id).__name__}")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be the tool's name (a str) or None, not {type(name).__name__}")
    refuse_sanitize_options(
        "mcp.result_from_mcp",
        trusted=trusted,
        keep_metadata=keep_metadata,
        allow_private_urls=allow_private_urls,
    )
    checked = reading_limits(limits, trusted=trusted)
    document = _document(result, "result_from_mcp", "result", "CallToolResult")
    enforce_limits(document, checked, what="mcp.result_from_mcp")
    _check_blocks(document, checked)
    part = _read_result(call_id, document, name, "", Reader("MCP CallToolResult"))
    if trusted:
        return part
    message = _build(Message, "cannot store the tool result", role="tool", parts=(part,))
    (clean,) = sanitize_untrusted(
        _links_as_text([message], allow_private_urls),
        limits=checked,
        keep_metadata=keep_metadata,
        allow_private_urls=allow_private_urls,
    )
    kept = clean.parts[0]
    assert isinstance(kept, ToolResultPart)
    return kept


def _links_as_text(messages: list[Message], allow_private_urls: bool) -> list[Message]:
    """``messages`` with each tool-result file part whose URL ``sanitize_untrusted`` would drop
    (a ``file:`` or custom-scheme resource link, a private address) turned into a text mention,
    so the model still sees that the server pointed at it; nothing is fetched either way."""
    allowed = is_web_url if allow_private_urls else is_public_web_url
    out = []
    for message in messages:
        parts = tuple(_link_mentions(part, allowed) for part in message.parts)
        changed = any(new is not old for new, old in zip(parts, message.parts, strict=True))
        out.append(message.model_copy(update={"parts": parts}) if changed else message)
    return out


def _link_mentions(part: Part, allowed: Callable[[str], bool]) -> Part:
    if not isinstance(part, ToolResultPart) or isinstance(part.content, str):
        return part
    content = tuple(
        TextPart(text=f"[resource link {item.filename or ''}: {item.url}]".replace(" :", ":"))
        if isinstance(item, FilePart) and item.url is not None and not allowed(item.url)
        else item
        for item in part.content
    )
    if all(new is old for new, old in zip(content, part.content, strict=True)):
        return part
    return dataclasses.replace(part, content=content)


def _read_result(
    call_id: str, document: Mapping[str, Any], name: str | None, path: str, reader: Reader
) -> ToolResultPart:
    """The part for a ``CallToolResult`` (or a sampling ``tool_result`` block: ``path`` is
    where it is) read from its JSON."""
    blocks = reader.expect_list(reader.field(document, "content", path), _join(path, "content"))
    items = [
        _read_block(block, f"{_join(path, 'content')}[{index}]", reader)
        for index, block in enumerate(blocks)
    ]
    is_error = document.get("isError")
    if is_error is not None and not isinstance(is_error, bool):
        reader.fail(_join(path, "isError"), "expected true or false")
    metadata = {
        _PREFIX + key: value
        for key, value in document.items()
        if key not in _RESULT_FIELDS and key not in ("type", "toolUseId") and value is not None
    }
    content: str | tuple[ToolResultContent, ...] = tuple(items)
    if not items:
        structured = document.get("structuredContent")
        content = "" if structured is None else reader.json_text(structured, path or "result")
    return reader.part(
        ToolResultPart,
        document,
        path,
        call_id=call_id,
        content=content,
        name=name,
        is_error=bool(is_error),
        metadata=metadata,
    )


def _read_block(raw: Any, path: str, reader: Reader) -> ToolResultContent:
    block = reader.expect_object(raw, path)
    kind = reader.str_field(block, "type", path)
    carried = _carried(block, ("type", "text", "data", "mimeType", "resource"))
    if kind == "text":
        text = reader.str_field(block, "text", path)
        return reader.part(TextPart, block, path, text=text, metadata=carried)
    if kind in ("image", "audio"):
        media_type = reader.media_type(reader.field(block, "mimeType", path), f"{path}.mimeType")
        if not media_type.startswith(f"{kind}/"):
            carried[_BLOCK_TYPE] = kind
        data = decode_base64(reader.str_field(block, "data", path), reader, f"{path}.data")
        return reader.part(
            FilePart, block, path, media_type=media_type, data=data, metadata=carried
        )
    if kind == "resource_link":
        return _read_link(block, path, reader)
    if kind == "resource":
        return _read_resource(block, carried, path, reader)
    raise reader.error(
        f"{path}.type",
        f"unknown content block type {kind!r} (text, image, audio, resource_link or resource)",
    )


def _read_link(block: Mapping[str, Any], path: str, reader: Reader) -> FilePart:
    uri = reader.str_field(block, "uri", path)
    name = reader.str_field(block, "name", path)
    mime = block.get("mimeType")
    media_type = _OCTETS if mime is None else reader.media_type(mime, f"{path}.mimeType")
    carried = _carried(block, ("type", "uri", "name", "mimeType"))
    return reader.part(
        FilePart, block, path, media_type=media_type, url=uri, filename=name, metadata=carried
    )


def _read_resource(
    block: Mapping[str, Any], carried: dict[str, Any], path: str, reader: Reader
) -> ToolResultContent:
    where = f"{path}.resource"
    resource = reader.expect_object(reader.field(block, "resource", path), where)
    uri = reader.str_field(resource, "uri", where)
    mime = resource.get("mimeType")
    if mime is not None:
        reader.media_type(mime, f"{where}.mimeType")
    carried[_RESOURCE] = {
        key: value for key, value in resource.items() if key not in ("text", "blob")
    }
    if "text" in resource and "blob" not in resource:
        text = reader.str_field(resource, "text", where)
        return reader.part(TextPart, block, path, text=text, metadata=carried)
    if "blob" in resource and "text" not in resource:
        data = decode_base64(reader.str_field(resource, "blob", where), reader, f"{where}.blob")
        media_type = _OCTETS if mime is None else mime
        return reader.part(
            FilePart, block, path, media_type=media_type, data=data, metadata=carried
        )
    raise reader.error(where, f"an embedded resource ({uri!r}) needs exactly one of text or blob")


def result_to_mcp(part: ToolResultPart) -> mt.CallToolResult:
    """The ``CallToolResult`` for a tool result: what an MCP server returns for a tool that
    threadline ran, or a result to hand back to MCP code.

    ``content`` as a string is one ``text`` block (none when it is empty, or when it is the
    JSON text of ``mcp.structuredContent``); text parts are ``text`` blocks (an embedded
    ``resource`` when they carry ``mcp.resource``); file parts with data are ``image`` or
    ``audio`` blocks by media type, other data an embedded blob ``resource``; file parts by
    URL are ``resource_link`` blocks. ``is_error`` is ``isError``; the metadata keys
    ``mcp.structuredContent``, ``mcp._meta`` and each block's ``mcp.<field>`` keys go back
    where they came from.

    Lost: ``call_id`` and ``name`` (a ``CallToolResult`` has neither: they are the request's),
    metadata other than ``mcp.*`` keys, the URL of an image (MCP images are bytes: it becomes
    a ``resource_link``), and for file data that is neither image nor audio and has no
    ``mcp.resource`` URI, the URI (it gets ``attachment:<filename or index>``).

    Args:
        part: the tool result.

    Raises:
        TypeError: ``part`` is not a ``ToolResultPart``.
    """
    if not isinstance(part, ToolResultPart):
        raise TypeError(
            f"result_to_mcp takes a ToolResultPart, not {type(part).__name__} "
            "(tool_result_part(call_id, content) builds one)"
        )
    return mt.CallToolResult.model_validate(_write_result(part))


def _write_result(part: ToolResultPart) -> dict[str, Any]:
    metadata = part.metadata
    structured = metadata.get(_STRUCTURED)
    blocks: list[dict[str, Any]] = []
    if isinstance(part.content, str):
        generated = structured is not None and part.content == _compact(structured)
        if part.content and not generated:
            blocks.append({"type": "text", "text": part.content})
    else:
        blocks = [_write_block(item, index) for index, item in enumerate(part.content)]
    out: dict[str, Any] = {"content": blocks}
    for key, value in metadata.items():
        if key.startswith(_PREFIX) and key[len(_PREFIX) :] not in _RESULT_FIELDS:
            out[key[len(_PREFIX) :]] = _plain(value)
    if part.is_error:
        out["isError"] = True
    return out


def _write_block(item: ToolResultContent, index: int) -> dict[str, Any]:
    carried = {
        key[len(_PREFIX) :]: _plain(value)
        for key, value in item.metadata.items()
        if key.startswith(_PREFIX) and key not in (_RESOURCE, _BLOCK_TYPE)
    }
    resource = _plain(item.metadata.get(_RESOURCE))
    if isinstance(item, TextPart):
        if isinstance(resource, Mapping) and isinstance(resource.get("uri"), str):
            return {**carried, "type": "resource", "resource": {**resource, "text": item.text}}
        return {**carried, "type": "text", "text": item.text}
    if item.url is not None:
        out = {"type": "resource_link", "uri": item.url, "mimeType": item.media_type}
        return {**carried, **out, "name": item.filename or item.url}
    assert item.data is not None
    data = encode_base64(item.data)
    kind = item.metadata.get(_BLOCK_TYPE) or item.media_type.partition("/")[0]
    if kind in ("image", "audio") and not isinstance(resource, Mapping):
        return {**carried, "type": kind, "data": data, "mimeType": item.media_type}
    if isinstance(resource, Mapping) and isinstance(resource.get("uri"), str):
        contents = {**resource, "blob": data}
    else:
        uri = f"attachment:{item.filename or index}"
        contents = {"uri": uri, "mimeType": item.media_type, "blob": data}
    return {**carried, "type": "resource", "resource": contents}


# ---------------------------------------------------------------------------------------------
# Sampling


def from_sampling_messages(
    messages: Sequence[mt.SamplingMessage | Mapping[str, Any]],
    *,
    system_prompt: str | None = None,
    trusted: bool = False,
    limits: Limits | None = None,
    keep_metadata: Collection[str] = (),
    allow_private_urls: bool = False,
) -> list[Message]:
    """Threadline messages for the ``messages`` of a ``sampling/createMessage`` request, ready
    for ``encode`` in any format.

    ``text`` blocks become text parts; ``image`` and ``audio`` blocks file parts; an
    assistant's ``tool_use`` blocks tool calls; a user message's ``tool_result`` blocks tool
    results (as a ``result_from_mcp`` result) in a ``tool`` message, before a user message
    with the rest of its blocks if it has any. ``_meta`` is kept as ``"mcp._meta"`` metadata.

    Args:
        messages: ``CreateMessageRequestParams.messages``: ``SamplingMessage`` objects or
            their JSON.
        system_prompt: a system message to put first, usually the request's
            ``systemPrompt``: the server's text, which MCP lets the client change or leave
            out. It is not sanitized (``sanitize_untrusted`` would drop it).
        trusted: ``False`` (the default) treats the messages as the server's input: read
            within ``Limits.untrusted()``, then passed through ``sanitize_untrusted`` (every
            metadata key but those in ``keep_metadata`` goes, and file URLs that are not
            public ``http(s)``). ``True`` keeps everything.
        limits: how much to read; ``None`` means ``Limits.untrusted()``, or ``Limits()``
            when ``trusted``.
        keep_metadata: metadata keys ``sanitize_untrusted`` keeps; not with ``trusted``.
        allow_private_urls: passed to ``sanitize_untrusted``; not with ``trusted``.

    Raises:
        threadline.LimitExceededError: the messages exceed ``limits``, naming the path.
        threadline.CodecError: an item is not a ``SamplingMessage`` (an unknown role or block
            type, a ``tool_use`` in a user message, a ``tool_result`` in an assistant message,
            base64 that is not), naming the JSON path (``messages[2].content[0].data``).
        threadline.ValidationError: ``system_prompt`` or a value cannot be stored.
        TypeError: ``messages`` is not a sequence of ``SamplingMessage`` objects or mappings.
        ValueError: ``keep_metadata`` or ``allow_private_urls`` with ``trusted=True``.
    """
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence):
        raise TypeError(
            "from_sampling_messages takes the request's list of SamplingMessage objects "
            f"(params.messages), not {type(messages).__name__}"
        )
    what = "mcp.from_sampling_messages"
    refuse_sanitize_options(
        what, trusted=trusted, keep_metadata=keep_metadata, allow_private_urls=allow_private_urls
    )
    checked = reading_limits(limits, trusted=trusted)
    document = [
        _document(item, "from_sampling_messages", f"messages[{index}]", "SamplingMessage")
        for index, item in enumerate(messages)
    ]
    enforce_limits(document, checked, what=what, layout=_SAMPLING, path="messages", depth=2)
    reader = Reader("MCP SamplingMessage")
    out: list[Message] = []
    names: dict[str, str] = {}
    for index, item in enumerate(document):
        out.extend(_read_sampling(item, f"messages[{index}]", reader, names))
    enforce_counts(out, checked, what=what)
    if not trusted:
        out = sanitize_untrusted(
            _links_as_text(out, allow_private_urls),
            limits=checked,
            keep_metadata=keep_metadata,
            allow_private_urls=allow_private_urls,
        )
    if system_prompt is None:
        return out
    system = _build(
        Message, "invalid system_prompt", role="system", parts=(TextPart(text=system_prompt),)
    )
    return [system, *out]


def _read_sampling(raw: Any, path: str, reader: Reader, names: dict[str, str]) -> list[Message]:
    item = reader.expect_object(raw, path)
    role = reader.str_field(item, "role", path)
    if role not in ("user", "assistant"):
        reader.fail(f"{path}.role", f"unknown role {role!r} (user or assistant)")
    content = reader.field(item, "content", path)
    blocks = (
        [(f"{path}.content", content)]
        if isinstance(content, Mapping)
        else [
            (f"{path}.content[{index}]", block)
            for index, block in enumerate(reader.expect_list(content, f"{path}.content"))
        ]
    )
    parts: list[Part] = []
    results: list[ToolResultPart] = []
    for where, raw_block in blocks:
        block = reader.expect_object(raw_block, where)
        kind = reader.str_field(block, "type", where)
        if kind == "tool_use":
            if role != "assistant":
                reader.fail(f"{where}.type", "a tool_use block belongs to an assistant message")
            parts.append(_read_tool_use(block, where, reader, names))
        elif kind == "tool_result":
            if role != "user":
                reader.fail(f"{where}.type", "a tool_result block belongs to a user message")
            call_id = reader.str_field(block, "toolUseId", where)
            block = {"content": [], **block}  # optional here, unlike in a CallToolResult
            results.append(_read_result(call_id, block, names.get(call_id), where, reader))
        elif kind in ("text", "image", "audio"):
            parts.append(_read_block(block, where, reader))
        else:
            reader.fail(
                f"{where}.type",
                f"unknown sampling content type {kind!r} (text, image, audio, tool_use or "
                "tool_result)",
            )
    metadata = _carried(item, ("role", "content"))
    out: list[Message] = []
    if results:
        out.append(_message(reader, path, role="tool", parts=tuple(results), metadata=metadata))
        metadata = {}
    if parts or not results:
        out.append(_message(reader, path, role=role, parts=tuple(parts), metadata=metadata))
    return out


def _read_tool_use(
    block: Mapping[str, Any], path: str, reader: Reader, names: dict[str, str]
) -> ToolCallPart:
    call_id = reader.str_field(block, "id", path)
    name = reader.str_field(block, "name", path)
    arguments = reader.expect_object(reader.field(block, "input", path), f"{path}.input")
    names[call_id] = name
    carried = _carried(block, ("type", "id", "name", "input"))
    return reader.part(
        ToolCallPart, block, path, id=call_id, name=name, arguments=arguments, metadata=carried
    )


def _message(reader: Reader, path: str, **fields: Any) -> Message:
    try:
        return Message(**fields)
    except pydantic.ValidationError as error:
        if not fields["parts"]:
            reader.fail(f"{path}.content", "a sampling message needs at least one content block")
        raise translate_errors(error, f"cannot store the message at {path}") from None


def to_create_message_result(
    message: Message, *, model: str | None = None
) -> mt.CreateMessageResult | mt.CreateMessageResultWithTools:
    """The result of a ``sampling/createMessage`` request: the assistant message a model
    answered with (``decode_response``'s message, or one you built), in MCP's shape.

    A message whose parts are all text (joined into one block), or one image or audio file, is
    a ``CreateMessageResult``, which every server takes; one with tool calls or several
    blocks is a ``CreateMessageResultWithTools`` (``content`` a list: text, image, audio and
    ``tool_use`` blocks), for a request that gave tools. Reasoning and hook parts are left out
    (MCP has no slot for them), as are provider tool parts.

    Args:
        message: an assistant message.
        model: the model's name for the result's ``model``; ``None`` takes the message's
            ``metadata["model"]`` (``decode_response`` records it).

    Returns:
        The result. Its ``stopReason`` is ``"toolUse"`` when the message calls tools;
        otherwise the message's ``metadata["stop_reason"]`` (the provider's own value, as
        ``decode_response`` records it) mapped to ``"endTurn"``, ``"maxTokens"`` or
        ``"stopSequence"``, or kept as it is when MCP has no name for it
        (``"content_filter"``: MCP's stop reasons are open); absent when the message records
        none.

    Raises:
        ValueError: ``message`` is not an assistant message, or ``model`` is ``None`` and the
            message's metadata names no model (pass ``model=...``).
        threadline.UnsupportedContentError: a file MCP sampling cannot carry (one by URL, or
            neither image nor audio).
        TypeError: ``message`` is not a ``Message``.
    """
    if not isinstance(message, Message):
        raise TypeError(
            f"to_create_message_result takes a threadline Message, not {type(message).__name__}"
        )
    if message.role != "assistant":
        raise ValueError(
            f"to_create_message_result takes the model's assistant message, not a "
            f"{message.role!r} message"
        )
    name = model if model is not None else message.metadata.get("model")
    if not isinstance(name, str) or not name:
        raise ValueError(
            "to_create_message_result needs the model's name: the message's metadata has no "
            "'model' (decode_response records it); pass model='...'"
        )
    blocks = [
        block
        for index, part in enumerate(message.parts)
        if (block := _sampling_block(part, index)) is not None
    ]
    fields: dict[str, Any] = {"role": "assistant", "model": name}
    reason = _stop_reason(message)
    if reason is not None:
        fields["stopReason"] = reason
    if all(block["type"] == "text" for block in blocks):
        text = "".join(block["text"] for block in blocks)
        return mt.CreateMessageResult.model_validate(
            {**fields, "content": {"type": "text", "text": text}}
        )
    if len(blocks) == 1 and blocks[0]["type"] in ("image", "audio"):
        return mt.CreateMessageResult.model_validate({**fields, "content": blocks[0]})
    return mt.CreateMessageResultWithTools.model_validate({**fields, "content": blocks})


def _stop_reason(message: Message) -> str | None:
    """MCP's ``stopReason`` for an assistant message, as ``to_create_message_result`` says."""
    if any(isinstance(part, ToolCallPart) for part in message.parts):
        return "toolUse"
    own = message.metadata.get("stop_reason")
    if not isinstance(own, str) or not own:
        return None
    return _STOP_REASONS.get(own.lower(), own)


def _sampling_block(part: Part, index: int) -> dict[str, Any] | None:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ToolCallPart):
        return {
            "type": "tool_use",
            "id": part.id,
            "name": part.name,
            "input": _plain(part.arguments),
        }
    if isinstance(part, FilePart):
        kind = part.media_type.partition("/")[0]
        if part.data is None or kind not in ("image", "audio"):
            source = "by URL" if part.data is None else f"of type {part.media_type!r}"
            raise UnsupportedContentError(
                f"parts[{index}]: MCP sampling carries image and audio bytes only, not a file "
                f"{source}; leave it out of the message or fetch it first",
                part_index=index,
            )
        return {"type": kind, "data": encode_base64(part.data), "mimeType": part.media_type}
    if isinstance(part, (ReasoningPart, HookPart, ProviderToolCallPart, ProviderToolResultPart)):
        return None
    raise UnsupportedContentError(
        f"parts[{index}]: an assistant message holds no {part.type} part", part_index=index
    )


# ---------------------------------------------------------------------------------------------
# Helpers


def _check_blocks(document: Any, limits: Limits) -> None:
    """Refuse a result with more content blocks than ``limits.max_parts``: each becomes a part."""
    blocks = document.get("content") if isinstance(document, Mapping) else None
    maximum = limits.max_parts
    if isinstance(blocks, (list, tuple)) and maximum is not None and len(blocks) > maximum:
        raise exceeded(
            "mcp.result_from_mcp",
            "max_parts",
            maximum,
            len(blocks),
            f"content[{maximum}]",
            f"the result holds {len(blocks):,} content blocks",
        )


def _document(value: Any, function: str, what: str, kind: str) -> Any:
    """The JSON of an MCP object (its wire form: camelCase keys, unset fields left out), or
    the mapping given."""
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, Mapping):
        return value
    raise TypeError(
        f"{function} takes an MCP {kind} (mcp.types.{kind}) or its JSON as a mapping; "
        f"{what} is a {type(value).__name__}"
    )


def _carried(block: Mapping[str, Any], used: tuple[str, ...]) -> dict[str, Any]:
    return {_PREFIX + key: value for key, value in block.items() if key not in used}


def _build(cls: Any, summary: str, **fields: Any) -> Any:
    try:
        return cls(**fields)
    except pydantic.ValidationError as error:
        raise translate_errors(error, summary) from None


def _plain(value: Any) -> Any:
    """A JSON value of a message's (read-only) metadata as plain, mutable ``dict`` s and
    ``list`` s, for the MCP object (values in messages are at most 190 levels deep)."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
