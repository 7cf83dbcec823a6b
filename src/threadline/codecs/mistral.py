"""Mistral chat completions (``POST /v1/chat/completions``): ``{"messages": [...]}``.

How threadline's messages map to the wire:

- system messages stay ``role: "system"`` messages where Mistral's role order allows one
  (first, or right after a system or user message); a system message after an assistant or
  tool message is sent as a user message, because Mistral's validator refuses ``system``
  there, each text wrapped as ``<system>\\n…\\n</system>`` so the model can tell it from the
  user's words (``decode`` reads it back as a system message). ``encode(system=...)`` adds
  a system message first. A history that starts with an assistant message gets a minimal
  user message before it (``[conversation start]``, left out again by ``decode``):
  Mistral's validator never pairs the first message's tool calls.
- user text and files: images (PNG, JPEG, GIF, WebP; any image by http(s) URL) as
  ``image_url`` (bytes as a ``data:`` URL); PDFs by http(s) URL as ``document_url`` (the
  ``filename`` is its ``document_name``); WAV and MP3 bytes as ``input_audio``. The audio
  chunk names no format, so its bytes must start like a WAV or MP3 file. Inline document
  bytes cannot go (Mistral takes documents by URL or upload only): they, and anything else,
  follow the ``unsupported`` policy.
- assistant text, ``thinking`` chunks and tool calls (after the chunks). ``arguments`` is sent
  as a **JSON string**: what Mistral itself returns, the only spelling that carries
  ``raw_arguments`` verbatim, and accepted alike by the SDK and ``mistral_common``.
- reasoning from Mistral goes back as a ``thinking`` chunk with its ``signature``, in place,
  when the reasoning policy allows it; other reasoning follows the policy (``text`` sends its
  text as text). Files and provider-run tools on assistant messages follow the
  ``unsupported`` policy.
- tool results become one ``role: "tool"`` message each, with ``tool_call_id`` and ``name``
  (the call's tool name), before the next assistant message. Tool messages take text only
  (tokenizer v11), so a result's files go in one user message after the tool messages, as in
  OpenAI Chat: ``[files from tool result <id>]`` introduces them and the result's text says
  where each went (``[file 1 (image/png) is in the next user message]``); ``decode`` puts
  them back. There is no error flag: a failed result's text starts with ``[tool error] ``.
- Mistral refuses a user or system message right after a tool message (``Unexpected role
  'user' after role 'tool'``), so an assistant message ``[tool results received]`` goes
  between them (before a result's files too); ``decode`` leaves it out.
- tool-call ids: Mistral takes exactly nine ASCII letters and digits. Any other id gets a
  nine-character id hashed from it, the same for the call and its result, collision-free in
  the payload; stored ids never change. Ids Mistral issued are sent as they are.

``decode`` reads all of this back (a whole request body too); ``decode_response`` reads a chat
completion response (``choices[0]``), with usage and the response id in ``metadata``.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from typing_extensions import assert_never

from threadline._json import EMPTY
from threadline._json import freeze_json_map
from threadline.codecs._chat_response import read_chat_completion
from threadline.codecs._media import UNKNOWN_IMAGE
from threadline.codecs._media import data_url
from threadline.codecs._media import decode_base64
from threadline.codecs._media import encode_base64
from threadline.codecs._media import image_type_from_url
from threadline.codecs._media import parse_data_url
from threadline.codecs._notes import as_user_note
from threadline.codecs._notes import escape_notes
from threadline.codecs._notes import unwrap_notes
from threadline.codecs._policies import NOT_IN_USER_MESSAGES
from threadline.codecs._policies import Capabilities
from threadline.codecs._policies import Placeholder
from threadline.codecs._policies import Resolved
from threadline.codecs._policies import carried
from threadline.codecs._policies import never_refused
from threadline.codecs._prepared import PreparedHistory
from threadline.codecs._reading import Reader
from threadline.codecs._reading import build_message
from threadline.codecs._reading import check_choice
from threadline.codecs._reading import read_payload
from threadline.codecs._reading import read_response
from threadline.codecs._reading import strip_nulls
from threadline.codecs._round_trip import ReadBacks
from threadline.codecs._round_trip import RoundTrip
from threadline.codecs._round_trip import Turn
from threadline.codecs._round_trip import prepare_for
from threadline.codecs._round_trip import prepared
from threadline.codecs._round_trip import read_parts
from threadline.codecs._tool_names import STANDARD
from threadline.codecs._tools import arguments_json
from threadline.codecs._tools import call_from_json
from threadline.codecs._tools import call_names
from threadline.codecs._tools import fold_attachments
from threadline.codecs._tools import name_results_after_calls
from threadline.codecs._tools import read_back_result
from threadline.codecs._tools import read_text_result
from threadline.codecs._tools import text_tool_content
from threadline.codecs._turns import LEADING_USER_TEXT
from threadline.codecs._turns import add_leading_turn
from threadline.codecs._turns import is_leading_turn
from threadline.codecs.base import IntegrityMode
from threadline.codecs.base import ReasoningPolicy
from threadline.codecs.base import TextFilesPolicy
from threadline.codecs.base import UnsupportedPolicy
from threadline.limits import Limits
from threadline.messages import FilePart
from threadline.messages import HookPart
from threadline.messages import Message
from threadline.messages import ProviderToolCallPart
from threadline.messages import ProviderToolResultPart
from threadline.messages import ReasoningPart
from threadline.messages import Role
from threadline.messages import TextPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart

__all__ = ["decode", "decode_response", "encode", "normalize_for_round_trip"]

PROVIDER = "mistral"
TOOL_NAMES = STANDARD
"""The tool names the API takes; others are sent under wire names, which
[`wire_tool_names`][threadline.codecs.wire_tool_names] maps back."""
FORMAT = "Mistral chat"
ID_LENGTH = 9
"""Mistral's validator takes tool-call ids of exactly nine ``[a-zA-Z0-9]`` characters."""
AFTER_TOOL_TEXT = "[tool results received]"
"""The assistant message ``encode`` puts between a tool message and a user or system message
(Mistral refuses either right after a tool message); ``decode`` leaves it out again."""
THINKING_KEY = "mistral.thinking"
"""Part metadata: a ``thinking`` chunk's own list, kept when it holds more than text chunks
(references), and sent back as it is."""

_ID = re.compile(r"[a-zA-Z0-9]{9}")
_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_UNKNOWN_AUDIO = "audio/*"
_PDF = "application/pdf"
_WAV = "audio/wav"
_MP3 = "audio/mpeg"
_AUDIO_FAMILIES = {
    "audio/wav": _WAV,
    "audio/x-wav": _WAV,
    "audio/wave": _WAV,
    "audio/mpeg": _MP3,
    "audio/mp3": _MP3,
}
_USER_FILE_CHUNKS = ("image_url", "document_url", "input_audio")


def _valid_id(value: str) -> bool:
    return _ID.fullmatch(value) is not None


def _mint_id(original: str, attempt: int) -> str:
    """Nine base-62 characters (53 bits) from a SHA-256 of the id and the attempt."""
    seed = original if attempt == 0 else f"{original}#{attempt}"
    number = int.from_bytes(
        hashlib.sha256(seed.encode("utf-8", "surrogatepass")).digest()[:8], "big"
    )
    chars = []
    for _ in range(ID_LENGTH):
        number, digit = divmod(number, 62)
        chars.append(_ALPHABET[digit])
    return "".join(chars)


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
    """Write ``messages`` as ``{"messages": [...]}`` for Mistral's chat completions API.

    The options, and what they raise, are those of [`threadline.encode`][threadline.encode];
    what is particular to this format:

    Args:
        system: sent first, as its own system message.
        reasoning: ``auto`` replays Mistral thinking (to its model).
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
    prepared, ids = history.messages, history.ids
    parts_of = history.parts  # each message\'s parts: the plan\'s, or resolved
    names = call_names(prepared)
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    attachments: list[dict[str, Any]] = []
    for index, message in enumerate(prepared):
        role = message.role
        if role == "tool":  # the plan holds the parts of a message with nothing to resolve
            for part in parts_of(index):
                if isinstance(part, ToolResultPart):
                    out.append(_tool_message(part, ids, names, attachments))
            continue
        if attachments:
            _append(out, {"role": "user", "content": attachments})
            attachments = []
        if role == "assistant":
            item = _assistant_message(parts_of(index), ids)
        elif role == "user":
            item = _content_message("user", escape_notes(message), index, history)
        elif role == "system" and _system_role(out) == "system":
            item = _content_message("system", message, index, history)
        elif role == "system":  # where Mistral refuses one: a note in a user message
            user_note = as_user_note(message)
            if user_note is None:
                continue
            item = _content_message("user", user_note, index, history)
        else:  # internal messages never reach a model, even with integrity="off"
            continue
        if item is not None:
            _append(out, item)
    if attachments:
        _append(out, {"role": "user", "content": attachments})
    # Mistral's validator skips the first message when it pairs calls with results.
    add_leading_turn(out, "content", LEADING_USER_TEXT)
    return {"messages": out}


def _append(out: list[dict[str, Any]], item: dict[str, Any]) -> None:
    """Add ``item``, after the marked assistant message when it is a user or system message
    that would follow a tool message (``Unexpected role 'user' after role 'tool'``)."""
    if out and out[-1]["role"] == "tool" and item["role"] != "assistant":
        out.append({"role": "assistant", "content": AFTER_TOOL_TEXT})
    out.append(item)


def _is_after_tool_turn(wire: Sequence[Any], index: int) -> bool:
    """Whether ``wire[index]`` is the assistant message `_append` puts between a tool
    message and a user or system message."""
    item = wire[index]
    if not (
        0 < index < len(wire) - 1
        and isinstance(item, Mapping)
        and item.get("role") == "assistant"
        and item.get("content") == AFTER_TOOL_TEXT
        and not item.get("tool_calls")
    ):
        return False
    before, after = wire[index - 1], wire[index + 1]
    return (
        isinstance(before, Mapping)
        and before.get("role") == "tool"
        and isinstance(after, Mapping)
        and after.get("role") in ("user", "system")
    )


def _system_role(out: Sequence[Mapping[str, Any]]) -> str:
    """``system`` where Mistral allows a system message next, else ``user``."""
    return "system" if not out or out[-1]["role"] in ("system", "user") else "user"


def _content_message(
    role: str, message: Message, index: int, history: PreparedHistory
) -> dict[str, Any] | None:
    """``message`` (the prepared message at ``index``, or a copy of it) as a message of
    ``role``."""
    parts = message.parts
    if len(parts) == 1 and type(parts[0]) is TextPart:
        return {"role": role, "content": parts[0].text}
    content: list[dict[str, Any]] = []
    for part in history.parts_of(index, message):
        if isinstance(part, (Placeholder, TextPart)):
            content.append({"type": "text", "text": part.text})
        elif isinstance(part, FilePart):
            content.append(carried(_file_chunk(part)))
        elif isinstance(part, NOT_IN_USER_MESSAGES):
            raise AssertionError(f"a {role} message holds no {part.type} part")
        else:
            assert_never(part)
    if not content:
        return None
    return {"role": role, "content": content}


def _assistant_message(parts: Sequence[Resolved], ids: Mapping[str, str]) -> dict[str, Any] | None:
    content: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, TextPart):
            if part.text:  # an empty text says nothing, and an empty message is refused
                content.append({"type": "text", "text": part.text})
        elif isinstance(part, ToolCallPart):
            calls.append(_tool_call(part, ids))
        elif isinstance(part, ReasoningPart):
            content.append(_thinking_chunk(part))
        elif isinstance(part, Placeholder):
            content.append({"type": "text", "text": part.text})
        elif isinstance(
            part, (HookPart, FilePart, ProviderToolCallPart, ProviderToolResultPart, ToolResultPart)
        ):
            raise AssertionError(f"resolve keeps no {part.type} part on an assistant message")
        else:
            assert_never(part)
    if not content and not calls:
        return None
    item: dict[str, Any] = {"role": "assistant"}
    if len(content) == 1 and content[0]["type"] == "text":
        item["content"] = content[0]["text"]
    elif content:
        item["content"] = content
    if calls:
        item["tool_calls"] = calls
    return item


def _replayable(part: ReasoningPart) -> bool:
    """Mistral has no field for redacted or encrypted reasoning, only thinking text."""
    return not part.redacted


def _thinking_list(part: ReasoningPart) -> list[Any]:
    kept = part.metadata.get(THINKING_KEY)
    if isinstance(kept, list) and kept:
        return list(kept)
    return [{"type": "text", "text": part.text}]


def _thinking_chunk(part: ReasoningPart) -> dict[str, Any]:
    chunk: dict[str, Any] = {"type": "thinking", "thinking": _thinking_list(part)}
    if part.signature is not None:
        chunk["signature"] = part.signature
    return chunk


def _tool_call(part: ToolCallPart, ids: Mapping[str, str]) -> dict[str, Any]:
    return {
        "id": ids.get(part.id, part.id),
        "type": "function",
        "function": {"name": part.name, "arguments": arguments_json(part)},
    }


def _tool_message(
    part: ToolResultPart,
    ids: Mapping[str, str],
    names: Mapping[str, str],
    attachments: list[dict[str, Any]],
) -> dict[str, Any]:
    wire_id = ids.get(part.call_id, part.call_id)
    item: dict[str, Any] = {"role": "tool", "tool_call_id": wire_id}
    name = names.get(part.call_id, part.name)
    if name is not None:
        item["name"] = name
    item["content"] = text_tool_content(part, wire_id, attachments, _file_chunk, never_refused)
    return item


def _sniff_audio(data: bytes) -> str | None:
    """``audio/wav`` or ``audio/mpeg`` when the bytes start like one, else ``None``."""
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return _WAV
    if data[:3] == b"ID3" or (len(data) > 1 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0):
        return _MP3
    return None


def _is_web_url(url: str) -> bool:
    return url.startswith(("https://", "http://"))


def _file_kind(part: FilePart) -> str | None:
    """How the format carries a file (``image``, ``document``, ``audio``), or ``None``."""
    media_type = part.media_type
    if part.data is None:
        if not _is_web_url(part.url or ""):
            return None
        if media_type in _IMAGE_TYPES or media_type == UNKNOWN_IMAGE:
            return "image"
        return "document" if media_type == _PDF else None
    if not part.data:
        return None  # an empty file is not a file the API can read
    if media_type in _IMAGE_TYPES:
        return "image"
    family = _AUDIO_FAMILIES.get(media_type)
    if family is not None and _sniff_audio(part.data) == family:
        return "audio"
    return None


def _file_chunk(part: FilePart) -> dict[str, Any] | None:
    kind = _file_kind(part)
    if kind == "image":
        url = part.url if part.data is None else data_url(part.media_type, part.data)
        return {"type": "image_url", "image_url": url}
    if kind == "document":
        chunk: dict[str, Any] = {"type": "document_url", "document_url": part.url}
        if part.filename is not None:
            chunk["document_name"] = part.filename
        return chunk
    if kind == "audio":
        return {"type": "input_audio", "input_audio": encode_base64(part.data or b"")}
    return None


CAPABILITIES = Capabilities(
    replayable=_replayable,
    carries_file=lambda part, role: role != "assistant" and _file_kind(part) is not None,
    file_reasons={
        "assistant": "assistant messages take only text, thinking and tool calls",
        "user": "Mistral takes PNG, JPEG, GIF and WebP images (bytes or http(s) URL), PDFs by "
        "http(s) URL only, and WAV or MP3 audio bytes",
    },
    no_place="Mistral chat has no place for this part",
)
"""What Mistral chat carries: thinking text (never redacted reasoning), no provider tools,
the files the module docstring lists in user messages and tool results."""


# ---------------------------------------------------------------------------------------------
# decode


def decode(payload: Any, *, limits: Limits | None = None) -> list[Message]:
    """Read ``{"messages": [...]}``, a whole request body, or a bare message list.

    Consecutive tool messages become one tool message; the user message ``encode`` adds for
    tool results' files is folded back into those results, and the one it puts before a
    leading assistant message is left out. Thinking chunks become reasoning with
    ``provider="mistral"``.

    Args:
        payload: what ``encode`` returned, a whole request body, or a message list.
        limits: how much to read ([`Limits`][]); ``None`` means the defaults.

    Raises:
        threadline.LimitExceededError: the payload exceeds ``limits`` (a ``ValidationError``).
        threadline.CodecError: ``payload`` is not a Mistral chat payload; the message names
            the JSON path of the first value that does not fit.
        threadline.ValidationError: a value cannot be stored in a message.
    """
    return read_payload(_decode, payload, limits, what="mistral.decode")


def _decode(payload: Any) -> list[Message]:
    """The reader behind `decode`, given a payload within its limits."""
    reader = Reader(FORMAT)
    wire = reader.messages(payload)
    out: list[Message] = []
    run: list[ToolResultPart] = []
    for index, raw in enumerate(wire):
        path = f"messages[{index}]"
        item = reader.expect_object(raw, path)
        role = reader.str_field(item, "role", path)
        if index == 0 and is_leading_turn(
            role, item.get("content"), wire, placeholder=LEADING_USER_TEXT
        ):
            continue
        if role == "tool":
            run.append(_decode_tool(item, path, reader))
            continue
        if _is_after_tool_turn(wire, index):
            continue  # the tool run goes on: the user message after it may hold its files
        if run:
            folded = role == "user" and fold_attachments(
                run,
                item.get("content"),
                path,
                reader,
                file_kinds=_USER_FILE_CHUNKS,
                decode_file=_decode_file,
            )
            out.append(build_message("tool", run, path))
            run = []
            if folded:
                continue
        parts: Sequence[Any]
        if role == "assistant":
            parts = _assistant_parts(item, path, reader, model=None)
        elif role in ("user", "system"):
            parts = _content_parts(item, path, reader, user=role == "user")
        else:
            reader.fail(f"{path}.role", f"unknown role {role!r} (system, user, assistant or tool)")
        if parts:
            out.append(build_message(role, parts, path))
    if run:
        out.append(build_message("tool", run, f"messages[{len(wire) - 1}]"))
    return unwrap_notes(out)


def _content_parts(
    item: Mapping[str, Any], path: str, reader: Reader, *, user: bool
) -> list[TextPart | FilePart]:
    content = item.get("content")
    if content is None and user:
        return []
    content = reader.field(item, "content", path)
    if isinstance(content, str):
        return [TextPart(text=content)]
    parts: list[TextPart | FilePart] = []
    for where, chunk, kind in reader.tagged_objects(content, f"{path}.content"):
        if kind == "text":
            parts.append(TextPart(text=reader.str_field(chunk, "text", where)))
        elif user and kind in _USER_FILE_CHUNKS:
            parts.append(_decode_file(chunk, kind, where, reader))
        else:
            expected = "text, image_url, document_url or input_audio" if user else "text"
            reader.fail(f"{where}.type", f"a {kind!r} chunk cannot be stored here ({expected})")
    return parts


def _decode_file(chunk: Mapping[str, Any], kind: str, path: str, reader: Reader) -> FilePart:
    if kind == "image_url":
        image = reader.field(chunk, "image_url", path)
        where = f"{path}.image_url"
        if isinstance(image, Mapping):
            url = reader.str_field(image, "url", where)
            where = f"{where}.url"
        else:
            url = reader.expect_str(image, where)
        inline = parse_data_url(url, reader, where)
        if inline is not None:
            return reader.part(FilePart, chunk, path, media_type=inline[0], data=inline[1])
        return reader.part(FilePart, chunk, path, media_type=image_type_from_url(url), url=url)
    if kind == "document_url":
        url = reader.str_field(chunk, "document_url", path)
        filename = reader.optional_str(chunk, "document_name", path)
        inline = parse_data_url(url, reader, f"{path}.document_url")
        if inline is not None:
            return reader.part(
                FilePart, chunk, path, media_type=inline[0], data=inline[1], filename=filename
            )
        return reader.part(FilePart, chunk, path, media_type=_PDF, url=url, filename=filename)
    text = reader.str_field(chunk, "input_audio", path)
    data = decode_base64(text, reader, f"{path}.input_audio")
    return FilePart(media_type=_sniff_audio(data) or _UNKNOWN_AUDIO, data=data)


def _assistant_parts(
    item: Mapping[str, Any], path: str, reader: Reader, *, model: str | None
) -> list[Any]:
    parts: list[Any] = []
    content = item.get("content")
    if isinstance(content, str):
        parts.append(TextPart(text=content))
    elif content is not None:
        for where, chunk, kind in reader.tagged_objects(content, f"{path}.content"):
            if kind == "text":
                parts.append(TextPart(text=reader.str_field(chunk, "text", where)))
            elif kind == "thinking":
                parts.append(_decode_thinking(chunk, where, reader, model=model))
            else:
                reader.fail(
                    f"{where}.type", f"a {kind!r} chunk cannot be stored (text or thinking)"
                )
    calls = item.get("tool_calls")
    if calls is not None:
        for index, raw in enumerate(reader.expect_list(calls, f"{path}.tool_calls")):
            parts.append(_decode_call(raw, f"{path}.tool_calls[{index}]", reader))
    return parts


def _decode_thinking(
    chunk: Mapping[str, Any], path: str, reader: Reader, *, model: str | None
) -> ReasoningPart:
    thinking = reader.field(chunk, "thinking", path)
    texts: list[str] = []
    only_text = True
    if isinstance(thinking, str):  # mistral_common's spelling
        texts.append(thinking)
    else:
        for index, raw in enumerate(reader.expect_list(thinking, f"{path}.thinking")):
            where = f"{path}.thinking[{index}]"
            inner = reader.expect_object(raw, where)
            if reader.str_field(inner, "type", where) == "text":
                texts.append(reader.str_field(inner, "text", where))
            else:
                only_text = False
    metadata = EMPTY if only_text else freeze_json_map({THINKING_KEY: strip_nulls(list(thinking))})
    return reader.part(
        ReasoningPart,
        chunk,
        path,
        text="".join(texts),
        signature=reader.optional_str(chunk, "signature", path),
        provider=PROVIDER,
        model=model,
        metadata=metadata,
    )


def _decode_call(raw: Any, path: str, reader: Reader) -> ToolCallPart:
    call = reader.expect_object(raw, path)
    call_id = reader.str_field(call, "id", path)
    function = reader.expect_object(reader.field(call, "function", path), f"{path}.function")
    name = reader.str_field(function, "name", f"{path}.function")
    arguments = reader.field(function, "arguments", f"{path}.function")
    if isinstance(arguments, Mapping):
        return reader.part(
            ToolCallPart, call, path, id=call_id, name=name, arguments=freeze_json_map(arguments)
        )
    where = f"{path}.function.arguments"
    return call_from_json(call_id, name, reader.expect_str(arguments, where), path=where)


def _decode_tool(item: Mapping[str, Any], path: str, reader: Reader) -> ToolResultPart:
    call_id = reader.str_field(item, "tool_call_id", path)
    name = reader.optional_str(item, "name", path)
    content = item.get("content")
    return read_text_result(call_id, "" if content is None else content, name, path, reader)


# ---------------------------------------------------------------------------------------------
# decode_response


def decode_response(
    response: Any, *, limits: Limits | None = None, choice: int = 0, model: str | None = None
) -> Message:
    """Read a chat completion response (``choices[choice].message``) into an assistant message.

    Accepts the JSON dict, JSON text, or the SDK's ``ChatCompletionResponse``. Thinking chunks
    become reasoning with ``provider="mistral"``, their ``signature`` and the response's
    ``model``; arguments that are not a JSON object are kept in ``raw_arguments``. The
    message's metadata holds ``provider``, ``model``, ``response_id``, ``stop_reason``
    (``finish_reason``) and ``usage``.

    Args:
        response: the response: a JSON dict, JSON text or the SDK's response object.
        limits: how much to read ([`Limits`][]); ``None`` means the defaults.
        choice: which of the response's ``choices`` to read (``n`` > 1 gives several).
        model: the model the request went to, for a response that names none: it tags
            the message and its reasoning (the response's own ``model`` wins).

    Raises:
        threadline.LimitExceededError: the response exceeds ``limits`` (a
            ``ValidationError``).
        threadline.CodecError: ``response`` is not a chat completion response, or holds no
            choice ``choice`` (the message says how many it holds).
        ValueError: ``choice`` is negative.
    """
    check_choice(choice)
    return read_response(
        functools.partial(_decode_response, choice=choice),
        response,
        limits,
        format_name=FORMAT,
        what="mistral.decode_response",
        model=model,
    )


def _decode_response(response: Any, *, choice: int) -> Message:
    """The reader behind `decode_response`, given a document within its limits."""
    return read_chat_completion(
        response,
        choice=choice,
        format_name=FORMAT,
        provider=PROVIDER,
        usage_format="mistral",
        read_message=_response_parts,
    )


def _response_parts(
    message: Mapping[str, Any], path: str, reader: Reader, model: str | None
) -> list[Any]:
    return _assistant_parts(message, path, reader, model=model)


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
    [`threadline.testing.check_codec`][] ignores), Mistral chat loses exactly:

    - part metadata (it keeps ``mistral.thinking`` on replayed reasoning), filenames of
      images, and a tool result's ``name``, which is sent and read back as its call's;
    - what ``encode`` adds: a first user message that is exactly
      ``[conversation start]``, before an assistant message, is not read back, nor is an
      assistant message that is exactly ``[tool results received]`` between a tool message
      and a user or system message;
    - reasoning per the reasoning policy: replayed thinking keeps its text, ``signature`` and
      ``provider`` and loses ``model``, ``encrypted``, ``item_id`` and ``summary``; ``text``
      turns other reasoning into text; the parts the ``unsupported`` policy replaces or drops;
    - empty assistant text; tool-call ids that are not nine letters and digits (mapped); the
      position of tool calls among an assistant message's chunks (calls come last); an empty
      result content tuple (read back as ``""``); the media type of an image sent by URL
      (from its extension, else ``image/*``); audio media types are canonical (``audio/wav``,
      ``audio/mpeg``).
    """
    history = prepared(
        messages,
        ROUND_TRIP,
        model=model,
        reasoning=reasoning,
        unsupported=unsupported,
        text_files=text_files,
    )
    shared: dict[str, Any] = {}

    def read(index: int, message: Message, role: Role) -> list[Any]:
        parts = history.parts_of(index, message)
        return read_parts(Turn(message, index, role, parts, history, shared), ROUND_TRIP)

    out: list[Message] = []
    wire_role: str | None = None  # the role of the last message encode wrote
    attachments = False  # a user message with tool results' files is due
    leading_text = False
    marked: set[int] = set()  # assistant messages that read like the one encode adds
    for index, message in enumerate(history.messages):
        role = message.role
        if role == "internal":
            continue
        if role == "tool":
            parts = read(index, message, role)
            moved = any(
                isinstance(item, FilePart)
                for result in parts
                if not isinstance(result.content, str)
                for item in result.content
            )
            attachments = attachments or moved
            if parts:
                wire_role = "tool"
                out.append(message.model_copy(update={"parts": tuple(parts)}))
            continue
        if attachments:
            wire_role, attachments = "user", False
        if role == "assistant":
            parts = read(index, message, role)
            if wire_role == "tool" and parts == [TextPart(text=AFTER_TOOL_TEXT)]:
                marked.add(len(out))
        else:
            if role == "system" and wire_role not in (None, "system", "user"):
                user_note = as_user_note(message)
                if user_note is None:
                    continue
                message, role = user_note, "user"
            elif role == "user":
                message = escape_notes(message)
            parts = read(index, message, role)
        if parts:
            first = message.parts[0]
            if not out and role == "user" and len(message.parts) == 1:
                # sent as the very message decode takes for the one encode adds
                leading_text = type(first) is TextPart and first.text == LEADING_USER_TEXT
            wire_role = role
            out.append(message.model_copy(update={"role": role, "parts": tuple(parts)}))
    out = [
        message
        for position, message in enumerate(out)
        if not (
            position in marked
            and position + 1 < len(out)
            and out[position + 1].role in ("user", "system")
        )
    ]
    if leading_text and len(out) > 1 and out[1].role == "assistant":
        del out[0]
    return unwrap_notes(name_results_after_calls(out))


def _text_read_back(part: TextPart, turn: Turn) -> TextPart | None:
    if turn.role == "assistant" and not part.text:
        return None
    return TextPart(text=part.text)


def _call_read_back(part: ToolCallPart, turn: Turn) -> ToolCallPart:
    return ToolCallPart(
        id=turn.wire_id(part.id),
        name=part.name,
        arguments=part.arguments,
        raw_arguments=part.raw_arguments,
    )


def _result_read_back(part: ToolResultPart, turn: Turn) -> ToolResultPart:
    return read_back_result(part, turn.history.ids, lambda file: [_file_read_back(file)])


def _thinking_read_back(part: ReasoningPart, turn: Turn | None = None) -> ReasoningPart:
    kept = part.metadata.get(THINKING_KEY)
    if not (isinstance(kept, list) and kept):
        return ReasoningPart(text=part.text, signature=part.signature, provider=PROVIDER)
    texts = [chunk.get("text", "") for chunk in kept if _is_text_chunk(chunk)]
    only_text = all(_is_text_chunk(chunk) for chunk in kept)
    return ReasoningPart(
        text="".join(texts),
        signature=part.signature,
        provider=PROVIDER,
        metadata=EMPTY if only_text else freeze_json_map({THINKING_KEY: kept}),
    )


def _is_text_chunk(chunk: Any) -> bool:
    return isinstance(chunk, Mapping) and chunk.get("type") == "text"


def _file_read_back(part: FilePart, turn: Turn | None = None) -> FilePart:
    kind = _file_kind(part)
    if kind == "image" and part.url is not None:
        return FilePart(media_type=image_type_from_url(part.url), url=part.url)
    if kind == "image":
        return FilePart(media_type=part.media_type, data=part.data)
    if kind == "document":
        return FilePart(media_type=_PDF, url=part.url, filename=part.filename)
    return FilePart(media_type=_AUDIO_FAMILIES[part.media_type], data=part.data)


ROUND_TRIP = RoundTrip(
    label=FORMAT,
    provider=PROVIDER,
    capabilities=CAPABILITIES,
    rule=TOOL_NAMES,
    is_valid=_valid_id,
    mint=_mint_id,
    parts=ReadBacks(
        text=_text_read_back,
        file=_file_read_back,
        call=_call_read_back,
        result=_result_read_back,
        reasoning=_thinking_read_back,
    ),
    calls_last=True,
)
"""Mistral chat's part read-backs: `normalize_for_round_trip` reads each message with them
(its messages do not map one to one: ``encode`` adds turns)."""
