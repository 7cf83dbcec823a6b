"""OpenAI Chat Completions (``POST /v1/chat/completions``): ``{"messages": [...]}``.

How threadline's messages map to the wire:

- system messages stay where they are, as ``role: "system"`` messages (``developer`` is read
  as system); ``encode(system=...)`` adds one first.
- user text and files: images (PNG, JPEG, GIF, WebP) by bytes (``data:`` URL, standard base64)
  or URL as ``image_url``; PDFs by bytes as ``file.file_data`` (with a ``filename``: the API
  requires one, ``document.pdf`` when the part has none); WAV and MP3 bytes as
  ``input_audio``. Anything else follows the ``unsupported`` policy.
- assistant text (a refusal, ``metadata["openai.refusal"]``, as a ``refusal`` part) and tool
  calls with ``arguments`` as a **JSON string** (``raw_arguments`` verbatim when set). The
  format has no place for reasoning, files or provider-run tools on an assistant message:
  reasoning follows the reasoning policy (``text`` sends its text), the rest the
  ``unsupported`` policy. A message's tool calls follow its text.
- tool results become one ``role: "tool"`` message each. Tool messages take text only, so
  a file in a result is sent in one user message after the tool messages, introduced by
  ``[files from tool result <id>]``, and the result's text says where each file went
  (``[file 1 (image/png) is in the next user message]``); ``decode`` puts the files back.
  There is no error flag: a failed result's text starts with ``[tool error] ``.
- tool-call ids longer than 40 characters get a short hashed id, the same for the call and
  its result (stored ids never change).

``decode`` reads all of this back (a whole request body too); ``decode_response`` reads a
Chat Completions response (``choices[0]``), with usage and the response id in ``metadata``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from typing_extensions import assert_never

from threadline._json import EMPTY
from threadline._json import freeze_json_map
from threadline.codecs._chat_messages import chat_messages
from threadline.codecs._chat_response import read_chat_completion
from threadline.codecs._media import UNKNOWN_IMAGE
from threadline.codecs._media import data_url
from threadline.codecs._media import decode_base64
from threadline.codecs._media import encode_base64
from threadline.codecs._media import image_type_from_url
from threadline.codecs._media import parse_data_url
from threadline.codecs._media import parse_file_data
from threadline.codecs._policies import Capabilities
from threadline.codecs._policies import Placeholder
from threadline.codecs._policies import Resolved
from threadline.codecs._policies import never_refused
from threadline.codecs._prepared import prepare_history
from threadline.codecs._reading import Reader
from threadline.codecs._reading import build_message
from threadline.codecs._reading import check_choice
from threadline.codecs._reading import read_payload
from threadline.codecs._reading import read_response
from threadline.codecs._reading import strip_nulls
from threadline.codecs._round_trip import ReadBacks
from threadline.codecs._round_trip import RoundTrip
from threadline.codecs._round_trip import Turn
from threadline.codecs._round_trip import read_back
from threadline.codecs._tool_names import STANDARD
from threadline.codecs._tools import arguments_json
from threadline.codecs._tools import call_from_json
from threadline.codecs._tools import fold_attachments
from threadline.codecs._tools import read_back_result
from threadline.codecs._tools import read_text_result
from threadline.codecs._tools import text_tool_content
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

PROVIDER = "openai"
TOOL_NAMES = STANDARD
"""The tool names the API takes; others are sent under wire names, which
[`wire_tool_names`][threadline.codecs.wire_tool_names] maps back."""
FORMAT = "OpenAI Chat Completions"
MAX_ID_LENGTH = 40
"""The API rejects longer ``tool_calls[].id`` / ``tool_call_id`` values."""
DEFAULT_PDF_FILENAME = "document.pdf"
"""Sent for a PDF without a filename: the API requires ``file.filename`` with ``file_data``."""

_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_AUDIO_FORMATS = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}
_AUDIO_TYPES = {"wav": "audio/wav", "mp3": "audio/mpeg"}
_ROLES = {"user": "user", "system": "system", "developer": "system"}
"""Wire roles of messages with content, and the roles threadline reads them as."""
_REFUSAL = freeze_json_map({"openai.refusal": True})
_CUSTOM_TOOL = freeze_json_map({"openai.custom_tool": True})
_FILE_BLOCKS = ("image_url", "file", "input_audio")
AUDIO = "openai.audio"
"""Part metadata of an assistant audio reply's transcript: ``{"id": ..., "expires_at": ...}``;
the next request sends the message as ``audio: {"id": ...}``."""


def _valid_id(value: str) -> bool:
    return 0 < len(value) <= MAX_ID_LENGTH


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
    """Write ``messages`` as ``{"messages": [...]}`` for the Chat Completions API.

    The options, and what they raise, are those of [`threadline.encode`][threadline.encode];
    what is particular to this format:

    Args:
        system: sent first, as its own system message.
        reasoning: the format has no place for reasoning: ``text`` sends reasoning text as
            assistant text; ``auto`` and ``drop`` leave it out (so ``model`` changes nothing).
    """
    return encode_chat(
        messages,
        provider=PROVIDER,
        capabilities=CAPABILITIES,
        write_reasoning=None,
        system=system,
        model=model,
        integrity=integrity,
        reasoning=reasoning,
        unsupported=unsupported,
        text_files=text_files,
    )


ReasoningWriter = Callable[[Sequence[ReasoningPart], dict[str, Any]], None]
"""A dialect's writer of an assistant message's replayed reasoning into its wire message
(``threadline.codecs._dialects``): called for every assistant message sent, with none too."""
AssistantReader = Callable[[Mapping[str, Any], str, Reader, "str | None", list[Any]], list[Any]]
"""A dialect's reader of an assistant message's reasoning: ``(item, path, reader, model,
parts)`` to the parts with its reasoning (``model``: the response's, else ``None``)."""


def encode_chat(
    messages: Iterable[Message],
    *,
    provider: str,
    capabilities: Capabilities,
    write_reasoning: ReasoningWriter | None,
    system: str | None,
    model: str | None,
    integrity: IntegrityMode,
    reasoning: ReasoningPolicy,
    unsupported: UnsupportedPolicy,
    text_files: TextFilesPolicy,
) -> dict[str, Any]:
    """`encode` for Chat Completions or a dialect of it: ``provider`` is the codec's tag,
    ``capabilities`` what it replays, ``write_reasoning`` where replayed reasoning goes."""
    history = prepare_history(
        messages,
        provider=provider,
        capabilities=capabilities,
        rule=TOOL_NAMES,
        is_valid=_valid_id,
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
            assistant=lambda parts: _assistant_message(parts, ids, write_reasoning),
            tool=lambda part, attachments: _tool_message(part, ids, attachments),
            file_block=_file_block,
        )
    }


def _assistant_message(
    parts: Sequence[Resolved], ids: Mapping[str, str], write_reasoning: ReasoningWriter | None
) -> dict[str, Any] | None:
    content: list[dict[str, Any]] = []
    replayed: list[ReasoningPart] = []
    calls: list[dict[str, Any]] = []
    audio: str | None = None
    for part in parts:
        if isinstance(part, TextPart):
            metadata = part.metadata
            if metadata and audio is None and (audio := _audio_id(part)) is not None:
                continue  # the API takes an audio reply back by its id only
            if not part.text:
                continue  # an empty assistant message is a 400; an empty text says nothing
            if metadata and metadata.get("openai.refusal") is True:
                content.append({"type": "refusal", "refusal": part.text})
            else:
                content.append({"type": "text", "text": part.text})
        elif isinstance(part, ToolCallPart):
            calls.append(_tool_call(part, ids))
        elif isinstance(part, Placeholder):
            content.append({"type": "text", "text": part.text})
        elif isinstance(part, ReasoningPart) and write_reasoning is not None:
            replayed.append(part)
        elif isinstance(
            part,
            (
                ReasoningPart,
                HookPart,
                FilePart,
                ProviderToolCallPart,
                ProviderToolResultPart,
                ToolResultPart,
            ),
        ):
            raise AssertionError(f"resolve keeps no {part.type} part on an assistant message")
        else:
            assert_never(part)
    if not content and not calls and audio is None:
        return None
    item: dict[str, Any] = {"role": "assistant"}
    if audio is not None:
        item["audio"] = {"id": audio}
    if len(content) == 1 and content[0]["type"] == "text":
        item["content"] = content[0]["text"]
    elif content:
        item["content"] = content
    if calls:
        item["tool_calls"] = calls
    if write_reasoning is not None:
        write_reasoning(replayed, item)
    return item


def _audio_id(part: TextPart) -> str | None:
    """The audio id of an assistant audio reply's transcript part, else ``None``."""
    audio = part.metadata.get(AUDIO) if part.metadata else None
    audio_id = audio.get("id") if isinstance(audio, Mapping) else None
    return audio_id if isinstance(audio_id, str) and audio_id else None


def _tool_call(part: ToolCallPart, ids: Mapping[str, str]) -> dict[str, Any]:
    wire_id = ids.get(part.id, part.id)
    if _is_custom_call(part):
        return {
            "id": wire_id,
            "type": "custom",
            "custom": {"name": part.name, "input": part.arguments["input"]},
        }
    return {
        "id": wire_id,
        "type": "function",
        "function": {"name": part.name, "arguments": arguments_json(part)},
    }


def _is_custom_call(part: ToolCallPart) -> bool:
    return (
        part.metadata.get("openai.custom_tool") is True
        and len(part.arguments) == 1
        and isinstance(part.arguments.get("input"), str)
    )


def _tool_message(
    part: ToolResultPart, ids: Mapping[str, str], attachments: list[dict[str, Any]]
) -> dict[str, Any]:
    wire_id = ids.get(part.call_id, part.call_id)
    content = text_tool_content(part, wire_id, attachments, _file_block, never_refused)
    return {"role": "tool", "tool_call_id": wire_id, "content": content}


def _file_kind(part: FilePart) -> str | None:
    """How the format carries a file (``image``, ``pdf``, ``audio``), or ``None``."""
    media_type = part.media_type
    if media_type in _IMAGE_TYPES or (media_type == UNKNOWN_IMAGE and part.url is not None):
        return "image"
    if part.data is None:
        return None
    if media_type == "application/pdf":
        return "pdf"
    if media_type in _AUDIO_FORMATS:
        return "audio"
    return None


def _file_block(part: FilePart) -> dict[str, Any] | None:
    kind = _file_kind(part)
    if kind == "image":
        url = part.url if part.data is None else data_url(part.media_type, part.data)
        image: dict[str, Any] = {"url": url}
        detail = part.metadata.get("openai.detail")
        if detail is not None:
            image["detail"] = detail
        return {"type": "image_url", "image_url": image}
    if part.data is None:
        return None
    if kind == "pdf":
        file = {
            "file_data": data_url(part.media_type, part.data),
            "filename": part.filename or DEFAULT_PDF_FILENAME,
        }
        return {"type": "file", "file": file}
    if kind == "audio":
        audio = {"data": encode_base64(part.data), "format": _AUDIO_FORMATS[part.media_type]}
        return {"type": "input_audio", "input_audio": audio}
    return None


CAPABILITIES = Capabilities(
    replayable=lambda part: False,
    carries_file=lambda part, role: role != "assistant" and _file_kind(part) is not None,
    file_reasons={
        "assistant": "assistant messages take only text and tool calls",
        "user": "Chat Completions takes PNG, JPEG, GIF and WebP images, and PDF, WAV and MP3 "
        "files by bytes, in user messages (tool results' files are moved to one)",
    },
    no_place="Chat Completions has no place for this part",
)
"""What Chat Completions carries: no reasoning state at all, no provider tools, the files the
module docstring lists in user messages and tool results."""


# ---------------------------------------------------------------------------------------------
# decode


def decode(payload: Any, *, limits: Limits | None = None) -> list[Message]:
    """Read ``{"messages": [...]}``, a whole request body, or a bare message list.

    Consecutive tool messages become one tool message; the user message ``encode`` adds for
    tool results' files is folded back into those results.

    Args:
        payload: what ``encode`` returned, a whole request body, or a message list.
        limits: how much to read ([`Limits`][]); ``None`` means the defaults.

    Raises:
        threadline.LimitExceededError: the payload exceeds ``limits`` (a ``ValidationError``).
        threadline.CodecError: ``payload`` is not a Chat Completions payload; the message
            names the JSON path of the first value that does not fit.
        threadline.ValidationError: a value cannot be stored in a message.
    """
    return read_payload(_decode, payload, limits, what="openai_chat.decode")


def _decode(
    payload: Any, *, format_name: str = FORMAT, read_assistant: AssistantReader | None = None
) -> list[Message]:
    """The reader behind `decode` (and a dialect's), given a payload within its limits."""
    reader = Reader(format_name)
    wire = reader.messages(payload)
    out: list[Message] = []
    names: dict[str, str] = {}
    run: list[ToolResultPart] = []
    for index, raw in enumerate(wire):
        path = f"messages[{index}]"
        item = reader.expect_object(raw, path)
        role = reader.str_field(item, "role", path)
        if role == "tool":
            run.append(_decode_tool(item, path, names, reader))
            continue
        if run:
            folded = role == "user" and fold_attachments(
                run,
                item.get("content"),
                path,
                reader,
                file_kinds=_FILE_BLOCKS,
                decode_file=_decode_file,
            )
            out.append(build_message("tool", run, path))
            run = []
            if folded:
                continue
        parts: Sequence[TextPart | FilePart | ToolCallPart]
        if role == "assistant":
            parts = _assistant_parts(item, path, names, reader)
            if read_assistant is not None:
                parts = read_assistant(item, path, reader, None, list(parts))
        elif role in _ROLES:
            parts = _content_parts(item, path, reader, user=role == "user")
        else:
            reader.fail(
                f"{path}.role",
                f"unknown role {role!r} (system, developer, user, assistant or tool)",
            )
        if parts:
            out.append(build_message(_ROLES.get(role, role), parts, path))
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
        elif user and kind in _FILE_BLOCKS:
            parts.append(_decode_file(block, kind, where, reader))
        else:
            expected = "text, image_url, file or input_audio" if user else "text"
            reader.fail(f"{where}.type", f"unknown content part {kind!r} (expected {expected})")
    return parts


def _decode_file(block: Mapping[str, Any], kind: str, path: str, reader: Reader) -> FilePart:
    if kind == "image_url":
        image = reader.expect_object(reader.field(block, "image_url", path), f"{path}.image_url")
        url = reader.str_field(image, "url", f"{path}.image_url")
        detail = reader.optional_str(image, "detail", f"{path}.image_url")
        metadata = {"openai.detail": detail} if detail is not None else None
        inline = parse_data_url(url, reader, f"{path}.image_url.url")
        if inline is not None:
            return reader.part(
                FilePart,
                block,
                path,
                media_type=inline[0],
                data=inline[1],
                metadata=freeze_json_map(metadata),
            )
        return reader.part(
            FilePart,
            block,
            path,
            media_type=image_type_from_url(url),
            url=url,
            metadata=freeze_json_map(metadata),
        )
    if kind == "input_audio":
        audio = reader.expect_object(
            reader.field(block, "input_audio", path), f"{path}.input_audio"
        )
        data = decode_base64(
            reader.str_field(audio, "data", f"{path}.input_audio"),
            reader,
            f"{path}.input_audio.data",
        )
        audio_format = reader.str_field(audio, "format", f"{path}.input_audio")
        media_type = _AUDIO_TYPES.get(audio_format, f"audio/{audio_format}")
        return reader.part(FilePart, block, path, media_type=media_type, data=data)
    file = reader.expect_object(reader.field(block, "file", path), f"{path}.file")
    filename = reader.optional_str(file, "filename", f"{path}.file")
    file_data = reader.optional_str(file, "file_data", f"{path}.file")
    if file_data is None:
        reader.fail(
            f"{path}.file",
            "only file_data can be read: a file_id refers to an upload threadline cannot "
            "fetch; keep files as bytes or URLs",
        )
    media_type, data = parse_file_data(
        file_data, filename, "application/octet-stream", reader, f"{path}.file.file_data"
    )
    return reader.part(FilePart, block, path, media_type=media_type, data=data, filename=filename)


def _assistant_parts(
    item: Mapping[str, Any], path: str, names: dict[str, str], reader: Reader
) -> list[TextPart | ToolCallPart]:
    parts: list[TextPart | ToolCallPart] = []
    audio = reader.optional_object(item, "audio", path)
    if audio is not None:
        parts.append(_audio_part(audio, f"{path}.audio", reader))
    content = item.get("content")
    refused = False
    if isinstance(content, str):
        parts.append(TextPart(text=content))
    elif content is not None:
        for where, block, kind in reader.tagged_objects(content, f"{path}.content"):
            if kind == "text":
                parts.append(TextPart(text=reader.str_field(block, "text", where)))
            elif kind == "refusal":
                text = reader.str_field(block, "refusal", where)
                parts.append(TextPart(text=text, metadata=_REFUSAL))
                refused = True
            else:
                reader.fail(f"{where}.type", f"unknown content part {kind!r} (text or refusal)")
    refusal = reader.optional_str(item, "refusal", path)
    if refusal is not None and not refused:
        parts.append(TextPart(text=refusal, metadata=_REFUSAL))
    calls = item.get("tool_calls")
    if calls is not None:
        for index, raw in enumerate(reader.expect_list(calls, f"{path}.tool_calls")):
            call = _decode_call(raw, f"{path}.tool_calls[{index}]", reader)
            names.setdefault(call.id, call.name)
            parts.append(call)
    return parts


def _audio_part(audio: Mapping[str, Any], path: str, reader: Reader) -> TextPart:
    """An assistant audio reply (``message.audio`` of a response, ``audio`` of a request's
    assistant message) as its transcript, with ``{"id", "expires_at"}`` in ``openai.audio``.
    The audio bytes (``data``) are not kept: the API takes the reply back by its id."""
    kept: dict[str, Any] = {"id": reader.str_field(audio, "id", path)}
    expires = reader.optional_count(audio, "expires_at", path)
    if expires is not None:
        kept["expires_at"] = expires
    transcript = reader.optional_str(audio, "transcript", path) or ""
    return TextPart(text=transcript, metadata=freeze_json_map({AUDIO: kept}))


def _decode_call(raw: Any, path: str, reader: Reader) -> ToolCallPart:
    call = reader.expect_object(raw, path)
    call_id = reader.str_field(call, "id", path)
    kind = reader.optional_str(call, "type", path) or "function"
    if kind == "custom":
        custom = reader.expect_object(reader.field(call, "custom", path), f"{path}.custom")
        return ToolCallPart(
            id=call_id,
            name=reader.str_field(custom, "name", f"{path}.custom"),
            arguments=freeze_json_map(
                {"input": reader.str_field(custom, "input", f"{path}.custom")}
            ),
            metadata=_CUSTOM_TOOL,
        )
    if kind != "function":
        reader.fail(f"{path}.type", f"unknown tool call type {kind!r} (function or custom)")
    function = reader.expect_object(reader.field(call, "function", path), f"{path}.function")
    name = reader.str_field(function, "name", f"{path}.function")
    text = reader.str_field(function, "arguments", f"{path}.function")
    return call_from_json(call_id, name, text, path=f"{path}.function.arguments")


def _decode_tool(
    item: Mapping[str, Any], path: str, names: Mapping[str, str], reader: Reader
) -> ToolResultPart:
    call_id = reader.str_field(item, "tool_call_id", path)
    content = reader.field(item, "content", path)
    return read_text_result(call_id, content, names.get(call_id), path, reader)


# ---------------------------------------------------------------------------------------------
# decode_response


def decode_response(
    response: Any, *, limits: Limits | None = None, choice: int = 0, model: str | None = None
) -> Message:
    """Read a Chat Completions response (``choices[choice].message``) into an assistant message.

    Accepts the JSON dict, JSON text, or the SDK's ``ChatCompletion`` object. Arguments that
    are not a JSON object are kept in ``raw_arguments``; a refusal is a text part with
    ``metadata["openai.refusal"]``; ``annotations`` go to the text part's
    ``metadata["openai.annotations"]``. An audio reply (``message.audio``) is a text part
    holding its transcript, with ``{"id", "expires_at"}`` in ``metadata["openai.audio"]``;
    ``encode`` sends it back as ``audio: {"id": ...}``. The message's metadata holds
    ``provider``, ``model``, ``response_id``, ``stop_reason`` (``finish_reason``) and
    ``usage``.

    Args:
        response: the response: a JSON dict, JSON text or the SDK's response object.
        limits: how much to read ([`Limits`][]); ``None`` means the defaults.
        choice: which of the response's ``choices`` to read (``n`` > 1 gives several).
        model: the model the request went to, for a response that names none: it tags
            the message and its reasoning (the response's own ``model`` wins).

    Raises:
        threadline.LimitExceededError: the response exceeds ``limits`` (a
            ``ValidationError``).
        threadline.CodecError: ``response`` is not a Chat Completions response, or holds no
            choice ``choice`` (the message says how many it holds).
        ValueError: ``choice`` is negative.
    """
    check_choice(choice)
    return read_response(
        functools.partial(_decode_response, choice=choice),
        response,
        limits,
        format_name=FORMAT,
        what="openai_chat.decode_response",
        model=model,
    )


def _decode_response(
    response: Any,
    *,
    choice: int,
    format_name: str = FORMAT,
    provider: str = PROVIDER,
    read_assistant: AssistantReader | None = None,
) -> Message:
    """The reader behind `decode_response` (and a dialect's), given a document within its
    limits."""

    def read(message: Mapping[str, Any], path: str, reader: Reader, model: str | None) -> list[Any]:
        parts = _response_parts(message, path, reader, model)
        return (
            parts if read_assistant is None else read_assistant(message, path, reader, model, parts)
        )

    return read_chat_completion(
        response,
        choice=choice,
        format_name=format_name,
        provider=provider,
        usage_format="openai_chat",
        read_message=read,
    )


def _response_parts(
    message: Mapping[str, Any], path: str, reader: Reader, model: str | None
) -> list[Any]:
    """The response message's parts: ``annotations`` go to its first plain text part."""
    parts: list[Any] = _assistant_parts(message, path, {}, reader)
    annotations = message.get("annotations")
    if annotations:
        reader.check_json(annotations, f"{path}.annotations")
        for index, part in enumerate(parts):
            if isinstance(part, TextPart) and not part.metadata.keys() & {"openai.refusal", AUDIO}:
                parts[index] = part.with_metadata({"openai.annotations": strip_nulls(annotations)})
                break
    return parts


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

    Up to message ids, ``created_at``, message metadata and grouping (which
    [`threadline.testing.check_codec`][] ignores), Chat Completions loses exactly:

    - part metadata it has no field for (it keeps ``openai.refusal``, ``openai.detail``,
      ``openai.custom_tool``), filenames of images and audio, and a tool result's ``name``
      (read back from its call);
    - reasoning (``reasoning="text"`` turns it into text), and the parts the ``unsupported``
      policy replaces or drops;
    - tool-call ids over 40 characters (mapped); the position of tool calls among an
      assistant message's text (calls come last); an empty result content tuple (read back
      as ``""``); the media type of an image sent by URL (from its extension, else
      ``image/*``); a PDF without a filename gets ``document.pdf``; audio media types are
      canonical (``audio/wav``, ``audio/mpeg``);
    - an assistant audio reply's transcript: the first text part with ``openai.audio`` is
      sent as ``audio: {"id": ...}`` alone (the API takes nothing else for it), so it reads
      back as empty text keeping only the id; the audio comes first in its message.
    """
    return read_back(
        messages,
        ROUND_TRIP,
        model=model,
        reasoning=reasoning,
        unsupported=unsupported,
        text_files=text_files,
    )


def _text_read_back(part: TextPart, turn: Turn) -> TextPart | None:
    if turn.role != "assistant":
        return TextPart(text=part.text)
    if turn.at == _audio_text(turn):  # sent as ``audio: {"id": ...}`` alone
        return TextPart(text="", metadata=freeze_json_map({AUDIO: {"id": _audio_id(part)}}))
    if not part.text:
        return None
    return TextPart(text=part.text, metadata=_REFUSAL if _is_refusal(part) else EMPTY)


def _audio_text(turn: Turn) -> int | None:
    """Where the first text of an assistant message that holds an audio reply's id is."""
    return next(
        (
            at
            for at, part in enumerate(turn.parts)
            if isinstance(part, TextPart) and _audio_id(part) is not None
        ),
        None,
    )


def _is_refusal(part: TextPart) -> bool:
    return part.metadata.get("openai.refusal") is True


def _call_read_back(part: ToolCallPart, turn: Turn) -> ToolCallPart:
    custom = _is_custom_call(part)
    return ToolCallPart(
        id=turn.wire_id(part.id),
        name=part.name,
        arguments=part.arguments,
        raw_arguments=None if custom else part.raw_arguments,
        metadata=_CUSTOM_TOOL if custom else EMPTY,
    )


def _result_read_back(part: ToolResultPart, turn: Turn) -> ToolResultPart:
    return read_back_result(part, turn.history.ids, lambda file: [_file_read_back(file)])


def _audio_first(parts: list[Part], turn: Turn) -> list[Part]:
    """The audio reply comes first in its message (``audio`` is a field of its own)."""
    for index, part in enumerate(parts):
        if isinstance(part, TextPart) and AUDIO in part.metadata:
            return [part, *parts[:index], *parts[index + 1 :]]
    return parts


def _file_read_back(part: FilePart, turn: Turn | None = None) -> FilePart:
    kind = _file_kind(part)
    detail = part.metadata.get("openai.detail")
    metadata = {"openai.detail": detail} if detail is not None and kind == "image" else EMPTY
    if kind == "image" and part.url is not None:
        media_type = image_type_from_url(part.url)
        return FilePart(media_type=media_type, url=part.url, metadata=freeze_json_map(metadata))
    if kind == "image":
        return FilePart(
            media_type=part.media_type, data=part.data, metadata=freeze_json_map(metadata)
        )
    if kind == "pdf":
        filename = part.filename or DEFAULT_PDF_FILENAME
        return FilePart(media_type=part.media_type, data=part.data, filename=filename)
    media_type = _AUDIO_TYPES[_AUDIO_FORMATS[part.media_type]]
    return FilePart(media_type=media_type, data=part.data)


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
    ),
    calls_last=True,
    arrange=_audio_first,
)
"""Chat Completions' round trip: `normalize_for_round_trip` is `read_back` of it."""
