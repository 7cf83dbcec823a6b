"""Cohere v2 Chat (``POST /v2/chat``): ``{"messages": [...]}``.

How threadline's messages map to the wire:

- system messages stay where they are, as ``role: "system"`` messages of text;
  ``encode(system=...)`` adds one first.
- user text and images (PNG, JPEG, GIF, WebP) by bytes (``data:`` URL) or URL as
  ``image_url``. Anything else follows the ``unsupported`` policy.
- assistant messages: ``tool_plan`` (a text part with ``metadata["cohere.tool_plan"]``, the
  first such part; the plan the model wrote before calling tools), ``content`` (text, and
  Cohere's own reasoning as ``thinking`` items, when the reasoning policy sends it back) and
  ``tool_calls`` with ``arguments`` as a **JSON string** (``raw_arguments`` verbatim when
  set). Citations (``metadata["cohere.citations"]`` of a response's text) are not sent back.
  Files and provider-run tools on an assistant message follow the ``unsupported`` policy.
- tool results become one ``role: "tool"`` message each, with ``tool_call_id`` and a content
  list of ``text`` and ``document`` items: a text part with ``metadata["cohere.document"]``
  (``True``, or the document's ``id``) whose text is a compact JSON object goes as a
  ``document`` (``{"data": ..., "id": ...}``), as ``decode`` reads documents. Tool messages
  take no images: a result's images go in one user message after the tool messages, as in
  OpenAI Chat (``[files from tool result <id>]``), and ``decode`` puts them back. There is
  no error flag: a failed result's text starts with ``[tool error] `` (its documents go as
  text).

``decode`` reads all of this back (a whole request body too); ``decode_response`` reads a
``/v2/chat`` response (``message``, ``finish_reason``, ``usage``, citations).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from typing_extensions import assert_never

from threadline._json import EMPTY
from threadline._json import freeze_json_map
from threadline._usage_readers import read_usage
from threadline.codecs._chat_messages import chat_messages
from threadline.codecs._media import UNKNOWN_IMAGE
from threadline.codecs._media import data_url
from threadline.codecs._media import image_type_from_url
from threadline.codecs._media import parse_data_url
from threadline.codecs._policies import Capabilities
from threadline.codecs._policies import Placeholder
from threadline.codecs._policies import Resolved
from threadline.codecs._policies import never_refused
from threadline.codecs._reading import Reader
from threadline.codecs._reading import as_json_document
from threadline.codecs._reading import build_message
from threadline.codecs._reading import read_payload
from threadline.codecs._reading import read_response
from threadline.codecs._reading import response_message
from threadline.codecs._reading import response_metadata
from threadline.codecs._reading import strip_nulls
from threadline.codecs._round_trip import ReadBacks
from threadline.codecs._round_trip import RoundTrip
from threadline.codecs._round_trip import Turn
from threadline.codecs._round_trip import prepare_for
from threadline.codecs._round_trip import read_back
from threadline.codecs._tool_names import STANDARD
from threadline.codecs._tools import add_error_prefix
from threadline.codecs._tools import arguments_json
from threadline.codecs._tools import attachment_header
from threadline.codecs._tools import attachment_note
from threadline.codecs._tools import call_from_json
from threadline.codecs._tools import compact_json
from threadline.codecs._tools import fold_attachments
from threadline.codecs._tools import strip_error_prefix
from threadline.codecs.base import TOOL_ERROR_PREFIX
from threadline.codecs.base import IntegrityMode
from threadline.codecs.base import ReasoningPolicy
from threadline.codecs.base import TextFilesPolicy
from threadline.codecs.base import UnsupportedPolicy
from threadline.limits import Limits
from threadline.messages import FilePart
from threadline.messages import HookPart
from threadline.messages import Message
from threadline.messages import Part
from threadline.messages import ProviderToolCallPart
from threadline.messages import ProviderToolResultPart
from threadline.messages import ReasoningPart
from threadline.messages import TextPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart

__all__ = ["decode", "decode_response", "encode", "normalize_for_round_trip"]

PROVIDER = "cohere"
TOOL_NAMES = STANDARD
"""The tool names the API takes; others are sent under wire names, which
[`wire_tool_names`][threadline.codecs.wire_tool_names] maps back."""
FORMAT = "Cohere v2 Chat"
TOOL_PLAN = "cohere.tool_plan"
"""Part metadata (``True``) of the text part holding an assistant message's ``tool_plan``."""
DOCUMENT = "cohere.document"
"""Part metadata of a tool result's text read from a ``document`` item: ``True``, or the
document's ``id``; the text is the document's ``data`` as compact JSON."""
CITATIONS = "cohere.citations"
"""Part metadata of a response's first text part: the message's ``citations``."""

_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_PLAN = freeze_json_map({TOOL_PLAN: True})


def _valid_id(value: str) -> bool:
    return bool(value)


# ---------------------------------------------------------------------------------------------
# encode


def encode(
    messages: Iterable[Message],
    *,
    system: str | None = None,
    model: str | None = None,
    integrity: IntegrityMode = "auto",
    reasoning: ReasoningPolicy = "auto",
    unsupported: UnsupportedPolicy = "placeholder",
    text_files: TextFilesPolicy = "unsupported",
) -> dict[str, Any]:
    """Write ``messages`` as ``{"messages": [...]}`` for Cohere's v2 Chat API.

    The options, and what they raise, are those of [`threadline.encode`][threadline.encode];
    what is particular to this format:

    Args:
        system: sent first, as its own system message.
        reasoning: Cohere's own reasoning goes back as ``thinking`` content (``auto``, for
            the model that wrote it); ``text`` sends other reasoning as assistant text.
    """
    history = prepare_for(  # the format's own rules: its ROUND_TRIP's
        messages,
        ROUND_TRIP,
        model=model,
        integrity=integrity,
        reasoning=reasoning,
        unsupported=unsupported,
        text_files=text_files,
    )
    ids = history.ids
    return {
        "messages": chat_messages(
            history,
            system,
            assistant=lambda parts: _assistant_message(parts, ids),
            tool=lambda part, attachments: _tool_message(part, ids, attachments),
            file_block=_file_block,
        )
    }


def _assistant_message(parts: Sequence[Resolved], ids: Mapping[str, str]) -> dict[str, Any] | None:
    content: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    plan: str | None = None
    for part in parts:
        if isinstance(part, TextPart):
            if plan is None and _is_plan(part):
                plan = part.text
            elif part.text:  # an empty text says nothing
                content.append({"type": "text", "text": part.text})
        elif isinstance(part, ToolCallPart):
            wire_id = ids.get(part.id, part.id)
            function = {"name": part.name, "arguments": arguments_json(part)}
            calls.append({"id": wire_id, "type": "function", "function": function})
        elif isinstance(part, ReasoningPart):
            content.append({"type": "thinking", "thinking": part.text})
        elif isinstance(part, Placeholder):
            content.append({"type": "text", "text": part.text})
        elif isinstance(
            part, (HookPart, FilePart, ProviderToolCallPart, ProviderToolResultPart, ToolResultPart)
        ):
            raise AssertionError(f"resolve keeps no {part.type} part on an assistant message")
        else:
            assert_never(part)
    if not content and not calls and not plan:
        return None
    item: dict[str, Any] = {"role": "assistant"}
    if plan:
        item["tool_plan"] = plan
    if len(content) == 1 and content[0]["type"] == "text":
        item["content"] = content[0]["text"]
    elif content:
        item["content"] = content
    if calls:
        item["tool_calls"] = calls
    return item


def _is_plan(part: TextPart) -> bool:
    return bool(part.text) and part.metadata.get(TOOL_PLAN) is True


def _tool_message(
    part: ToolResultPart, ids: Mapping[str, str], attachments: list[dict[str, Any]]
) -> dict[str, Any]:
    wire_id = ids.get(part.call_id, part.call_id)
    return {
        "role": "tool",
        "tool_call_id": wire_id,
        "content": _tool_content(part, wire_id, attachments),
    }


def _tool_content(
    part: ToolResultPart, wire_id: str, attachments: list[dict[str, Any]]
) -> str | list[dict[str, Any]]:
    """A string result as its text; parts as ``text`` and ``document`` items, images moved to
    ``attachments`` (the user message after the tool messages) with a note where each stood."""
    content = part.content
    if isinstance(content, str):
        return add_error_prefix(content) if part.is_error else content
    blocks: list[dict[str, Any]] = []
    files = 0
    for item in content:
        if isinstance(item, TextPart):
            document = None if part.is_error else _document(item)
            blocks.append(
                {"type": "text", "text": item.text}
                if document is None
                else {"type": "document", "document": document}
            )
            continue
        block = _file_block(item)
        if block is None:
            never_refused(item)
            continue
        files += 1
        if files == 1:
            attachments.append({"type": "text", "text": attachment_header(wire_id)})
        attachments.append(block)
        blocks.append({"type": "text", "text": attachment_note(files, item.media_type)})
    if not blocks:
        return TOOL_ERROR_PREFIX if part.is_error else ""
    if part.is_error:
        blocks[0] = {"type": "text", "text": add_error_prefix(blocks[0]["text"])}
    return blocks


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


def _document(part: TextPart) -> dict[str, Any] | None:
    """The ``document`` a tool result's text part goes as: one read from a document
    (``cohere.document``) whose text is still the compact JSON object ``decode`` wrote."""
    marked = part.metadata.get(DOCUMENT)
    if marked is not True and not (isinstance(marked, str) and marked):
        return None
    try:
        data = json.loads(part.text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return None
    if type(data) is not dict or compact_json(data) != part.text:
        return None
    document: dict[str, Any] = {"data": data}
    if isinstance(marked, str):
        document["id"] = marked
    return document


def _file_block(part: FilePart) -> dict[str, Any] | None:
    if not _is_image(part):
        return None
    url = part.url if part.data is None else data_url(part.media_type, part.data)
    return {"type": "image_url", "image_url": {"url": url}}


def _is_image(part: FilePart) -> bool:
    media_type = part.media_type
    return media_type in _IMAGE_TYPES or (media_type == UNKNOWN_IMAGE and part.url is not None)


def _replayable(part: ReasoningPart) -> bool:
    """Cohere takes reasoning back as ``thinking`` text only: nothing redacted or opaque."""
    return not part.redacted and part.encrypted is None


CAPABILITIES = Capabilities(
    replayable=_replayable,
    carries_file=lambda part, role: role in ("user", "tool") and _is_image(part),
    file_reasons={
        "assistant": "assistant messages take only text, thinking and tool calls",
        "system": "system messages take text only",
        "user": "Cohere v2 Chat takes PNG, JPEG, GIF and WebP images in user messages (tool "
        "results' images are moved to one)",
    },
    no_place="Cohere v2 Chat has no place for this part",
)
"""What Cohere v2 Chat carries: its own thinking text, no provider tools, images in user
messages and tool results."""


# ---------------------------------------------------------------------------------------------
# decode


def decode(payload: Any, *, limits: Limits | None = None) -> list[Message]:
    """Read ``{"messages": [...]}``, a whole request body, or a bare message list.

    Consecutive tool messages become one tool message; the user message ``encode`` adds for
    tool results' images is folded back into those results.

    Args:
        payload: what ``encode`` returned, a whole request body, or a message list.
        limits: how much to read ([`Limits`][]); ``None`` means the defaults.

    Raises:
        threadline.LimitExceededError: the payload exceeds ``limits`` (a ``ValidationError``).
        threadline.CodecError: ``payload`` is not a Cohere v2 Chat payload; the message names
            the JSON path of the first value that does not fit.
        threadline.ValidationError: a value cannot be stored in a message.
    """
    return read_payload(_decode, payload, limits, what="cohere.decode")


def _decode(payload: Any) -> list[Message]:
    reader = Reader(FORMAT)
    wire = reader.messages(payload)
    out: list[Message] = []
    names: dict[str, str] = {}
    run: list[ToolResultPart] = []
    for index, raw in enumerate(wire):
        path = f"messages[{index}]"
        item = reader.expect_object(raw, path)
        role = reader.str_field(item, "role", path)
        if role == "tool":
            call_id = reader.str_field(item, "tool_call_id", path)
            content = reader.field(item, "content", path)
            run.append(_decode_result(call_id, content, names.get(call_id), path, reader))
            continue
        if run:
            folded = role == "user" and fold_attachments(
                run,
                item.get("content"),
                path,
                reader,
                file_kinds=("image_url",),
                decode_file=_decode_file,
            )
            out.append(build_message("tool", run, path))
            run = []
            if folded:
                continue
        parts: Sequence[Part]
        if role == "assistant":
            parts = _assistant_parts(item, path, names, reader, None)
        elif role in ("user", "system"):
            parts = _content_parts(item, path, reader, user=role == "user")
        else:
            reader.fail(f"{path}.role", f"unknown role {role!r} (system, user, assistant or tool)")
        if parts:
            out.append(build_message(role, parts, path))
    if run:
        out.append(build_message("tool", run, f"messages[{len(wire) - 1}]"))
    return out


def _content_parts(
    item: Mapping[str, Any], path: str, reader: Reader, *, user: bool
) -> list[TextPart | FilePart]:
    content = reader.field(item, "content", path)
    if isinstance(content, str):
        return [TextPart(text=content)]
    parts: list[TextPart | FilePart] = []
    for where, block, kind in reader.tagged_objects(content, f"{path}.content"):
        if kind == "text":
            parts.append(TextPart(text=reader.str_field(block, "text", where)))
        elif user and kind == "image_url":
            parts.append(_decode_file(block, kind, where, reader))
        else:
            expected = "text or image_url" if user else "text"
            reader.fail(f"{where}.type", f"unknown content item {kind!r} (expected {expected})")
    return parts


def _decode_file(block: Mapping[str, Any], kind: str, path: str, reader: Reader) -> FilePart:
    image = reader.expect_object(reader.field(block, "image_url", path), f"{path}.image_url")
    url = reader.str_field(image, "url", f"{path}.image_url")
    inline = parse_data_url(url, reader, f"{path}.image_url.url")
    if inline is not None:
        return reader.part(FilePart, block, path, media_type=inline[0], data=inline[1])
    return reader.part(FilePart, block, path, media_type=image_type_from_url(url), url=url)


def _assistant_parts(
    item: Mapping[str, Any],
    path: str,
    names: dict[str, str],
    reader: Reader,
    model: str | None,
) -> list[Part]:
    parts: list[Part] = []
    content = item.get("content")
    if isinstance(content, str):
        if content:
            parts.append(TextPart(text=content))
    elif content is not None:
        for where, block, kind in reader.tagged_objects(content, f"{path}.content"):
            if kind == "text":
                parts.append(TextPart(text=reader.str_field(block, "text", where)))
            elif kind == "thinking":
                text = reader.str_field(block, "thinking", where)
                parts.append(ReasoningPart(text=text, provider=PROVIDER, model=model))
            else:
                reader.fail(f"{where}.type", f"unknown content item {kind!r} (text or thinking)")
    plan = reader.optional_str(item, "tool_plan", path)
    if plan:  # written after the reasoning and before the calls
        parts.append(TextPart(text=plan, metadata=_PLAN))
    calls = item.get("tool_calls")
    if calls is not None:
        for index, raw in enumerate(reader.expect_list(calls, f"{path}.tool_calls")):
            call = _decode_call(raw, f"{path}.tool_calls[{index}]", reader)
            names.setdefault(call.id, call.name)
            parts.append(call)
    return parts


def _decode_call(raw: Any, path: str, reader: Reader) -> ToolCallPart:
    call = reader.expect_object(raw, path)
    call_id = reader.str_field(call, "id", path)
    kind = reader.optional_str(call, "type", path) or "function"
    if kind != "function":
        reader.fail(f"{path}.type", f"unknown tool call type {kind!r} (function)")
    function = reader.expect_object(reader.field(call, "function", path), f"{path}.function")
    name = reader.str_field(function, "name", f"{path}.function")
    text = reader.optional_str(function, "arguments", f"{path}.function") or ""
    return call_from_json(call_id, name, text, path=f"{path}.function.arguments")


def _decode_result(
    call_id: str, content: Any, name: str | None, path: str, reader: Reader
) -> ToolResultPart:
    """A tool message's result: a string, or ``text`` and ``document`` items (a document
    as its ``data``'s compact JSON text, marked ``cohere.document``)."""
    if isinstance(content, str):
        text, is_error = strip_error_prefix(content)
        return ToolResultPart(call_id=call_id, content=text, name=name, is_error=is_error)
    parts: list[TextPart] = []
    is_error = False
    for at, (where, block, kind) in enumerate(reader.tagged_objects(content, f"{path}.content")):
        if kind == "text":
            text = reader.str_field(block, "text", where)
            if at == 0:
                text, is_error = strip_error_prefix(text)
            parts.append(TextPart(text=text))
        elif kind == "document":
            parts.append(_decode_document(block, where, reader))
        else:
            reader.fail(f"{where}.type", f"unknown tool content {kind!r} (text or document)")
    return ToolResultPart(call_id=call_id, content=tuple(parts), name=name, is_error=is_error)


def _decode_document(block: Mapping[str, Any], path: str, reader: Reader) -> TextPart:
    document = reader.expect_object(reader.field(block, "document", path), f"{path}.document")
    data = reader.expect_object(reader.field(document, "data", f"{path}.document"), path)
    reader.check_json(data, f"{path}.document.data")
    document_id = reader.optional_str(document, "id", f"{path}.document")
    marked: str | bool = document_id if document_id else True
    text = compact_json(dict(data))
    return TextPart(text=text, metadata=freeze_json_map({DOCUMENT: marked}))


# ---------------------------------------------------------------------------------------------
# decode_response


def decode_response(
    response: Any, *, limits: Limits | None = None, model: str | None = None
) -> Message:
    """Read a ``/v2/chat`` response (its ``message``) into an assistant message.

    Accepts the JSON dict, JSON text, or the SDK's ``V2ChatResponse``. The ``tool_plan`` is a
    text part with ``metadata["cohere.tool_plan"]``, after the content and before the calls;
    ``thinking`` is reasoning tagged ``cohere``; the message's ``citations`` go to its first
    text part's ``metadata["cohere.citations"]``. The message's metadata holds ``provider``,
    ``response_id``, ``stop_reason`` (``finish_reason``) and ``usage`` (the ``tokens``
    counts, else the ``billed_units``).

    Args:
        response: the response: a JSON dict, JSON text or the SDK's response object.
        limits: how much to read ([`Limits`][]); ``None`` means the defaults.
        model: the model the request went to (a response names none): it tags the message
            and its reasoning.

    Raises:
        threadline.LimitExceededError: the response exceeds ``limits`` (a
            ``ValidationError``).
        threadline.CodecError: ``response`` is not a Cohere v2 Chat response.
    """
    return read_response(
        _decode_response,
        response,
        limits,
        format_name=FORMAT,
        what="cohere.decode_response",
        dump=_dump,
        model=model,
    )


def _dump(response: Any) -> Any:
    dumped = response.model_dump(mode="json", exclude_none=True, by_alias=True)
    return _whole_counts(dumped)


def _whole_counts(value: Any) -> Any:
    """The SDK types token counts as floats: ``2.0`` back to ``2`` (usage only)."""
    if isinstance(value, dict):
        return {key: _whole_counts(item) for key, item in value.items()}
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    return value


def _decode_response(response: Any) -> Message:
    reader = Reader(f"{FORMAT} response")
    document = reader.expect_object(as_json_document(response, FORMAT), "")
    message = reader.expect_object(reader.field(document, "message", ""), "message")
    if isinstance(message.get("content"), str):  # a request's may be; a response's never is
        reader.fail("message.content", "a response's content is a list of content items")
    parts = _assistant_parts(message, "message", {}, reader, None)
    citations = message.get("citations")
    if citations:
        reader.check_json(citations, "message.citations")
        for index, part in enumerate(parts):
            if type(part) is TextPart and TOOL_PLAN not in part.metadata:
                parts[index] = part.with_metadata({CITATIONS: strip_nulls(citations)})
                break
    usage = reader.optional_json(document, "usage", "")
    if isinstance(usage, Mapping):
        usage = _whole_counts(dict(usage))
    metadata = response_metadata(
        provider=PROVIDER,
        response_id=reader.optional_str(document, "id", ""),
        model=None,
        stop_reason=reader.optional_str(document, "finish_reason", ""),
        usage=read_usage("cohere", usage, reader),
        raw_usage=usage,
    )
    return response_message(parts, "message", metadata)


# ---------------------------------------------------------------------------------------------
# The format's declared losses


def normalize_for_round_trip(
    messages: Sequence[Message],
    *,
    model: str | None = None,
    reasoning: ReasoningPolicy = "auto",
    unsupported: UnsupportedPolicy = "placeholder",
    text_files: TextFilesPolicy = "unsupported",
) -> list[Message]:
    """What ``decode(encode(messages, ...))`` reads back, for prepared ``messages``.

    Up to message ids, ``created_at``, message metadata and grouping, Cohere v2 Chat loses
    exactly:

    - part metadata it has no field for (it keeps ``cohere.tool_plan`` on an assistant
      message's first plan, ``cohere.document`` on a result's JSON document text), filenames
      of images, and a tool result's ``name`` (read back from its call);
    - reasoning other than Cohere's own thinking text (``reasoning="text"`` turns it into
      text), its signature and model, and the parts the ``unsupported`` policy replaces or
      drops;
    - the position of the tool plan (after the content) and tool calls (last) in an
      assistant message;
      empty assistant texts; an empty result content tuple (read back as ``""``); the media
      type of an image sent by URL (from its extension, else ``image/*``); documents of a
      failed result (sent as text).
    """
    return read_back(
        messages,
        ROUND_TRIP,
        model=model,
        reasoning=reasoning,
        unsupported=unsupported,
        text_files=text_files,
    )


def _plan_at(turn: Turn) -> int | None:
    return next(
        (at for at, part in enumerate(turn.parts) if isinstance(part, TextPart) and _is_plan(part)),
        None,
    )


def _text_read_back(part: TextPart, turn: Turn) -> TextPart | None:
    if turn.role != "assistant":
        return TextPart(text=part.text)
    if turn.at == _plan_at(turn):
        return TextPart(text=part.text, metadata=_PLAN)
    return TextPart(text=part.text) if part.text else None


def _plan_before_calls(parts: list[Part], turn: Turn) -> list[Part]:
    """The tool plan reads back after the content, before the calls (its own field)."""
    for index, part in enumerate(parts):
        if isinstance(part, TextPart) and TOOL_PLAN in part.metadata:
            rest = [*parts[:index], *parts[index + 1 :]]
            calls = next((at for at, p in enumerate(rest) if isinstance(p, ToolCallPart)), None)
            at = len(rest) if calls is None else calls
            return [*rest[:at], part, *rest[at:]]
    return parts


def _reasoning_read_back(part: ReasoningPart, turn: Turn) -> ReasoningPart:
    return ReasoningPart(text=part.text, provider=PROVIDER)


def _call_read_back(part: ToolCallPart, turn: Turn) -> ToolCallPart:
    return ToolCallPart(
        id=turn.wire_id(part.id),
        name=part.name,
        arguments=part.arguments,
        raw_arguments=part.raw_arguments,
    )


def _file_read_back(part: FilePart, turn: Turn | None = None) -> FilePart:
    if part.url is not None and part.data is None:
        return FilePart(media_type=image_type_from_url(part.url), url=part.url)
    return FilePart(media_type=part.media_type, data=part.data)


def _result_read_back(part: ToolResultPart, turn: Turn) -> ToolResultPart:
    content: str | tuple[TextPart | FilePart, ...]
    if isinstance(part.content, str):
        content = part.content
    else:
        items: list[TextPart | FilePart] = []
        for item in part.content:
            if isinstance(item, TextPart):
                document = None if part.is_error else _document(item)
                metadata = EMPTY
                if document is not None:
                    metadata = freeze_json_map({DOCUMENT: document.get("id", True)})
                items.append(TextPart(text=item.text, metadata=metadata))
            else:
                items.append(_file_read_back(item))
        content = tuple(items) if items else ""
    return ToolResultPart(
        call_id=turn.wire_id(part.call_id),
        content=content,
        name=part.name,
        is_error=part.is_error,
    )


ROUND_TRIP = RoundTrip(
    label=FORMAT,
    provider=PROVIDER,
    capabilities=CAPABILITIES,
    rule=TOOL_NAMES,
    is_valid=_valid_id,
    parts=ReadBacks(
        text=_text_read_back,
        file=_file_read_back,
        call=_call_read_back,
        result=_result_read_back,
        reasoning=_reasoning_read_back,
    ),
    calls_last=True,
    arrange=_plan_before_calls,
)
"""Cohere v2 Chat's round trip: `normalize_for_round_trip` is `read_back` of it."""
