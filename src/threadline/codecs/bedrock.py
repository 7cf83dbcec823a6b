"""AWS Bedrock Converse (``bedrock-runtime`` ``Converse``): boto3 ``converse`` keyword arguments,
``{"messages": [...], "system"?: [...]}``.

The payload is in boto3's shape, not JSON: file bytes and redacted reasoning stay ``bytes``
(boto3 base64-encodes them on the wire; passing base64 text would encode it twice). Pass it
as ``client.converse(modelId=..., **payload)``.

How threadline's messages map to the wire:

- leading system messages (and ``encode(system=...)``) become the top-level ``system`` list
  of ``{"text": ...}`` blocks. A system message later in the history goes in the user turn
  in place, each text as a block ``<system>\n…\n</system>`` so the model can tell it from
  the user's words; ``decode`` reads such a block back as a system message.
- roles strictly alternate, starting with ``user``: consecutive messages of one wire role are
  merged into one turn, one block per part (text is never concatenated). Tool messages become
  ``toolResult`` blocks of a user turn, all results answering one assistant turn in one user
  message, before any other block of that turn; ``status: "error"`` marks a failed result. A
  history that starts with an assistant turn gets a minimal user turn before it (the text
  ``[conversation start]``), which ``decode`` leaves out again.
- tool calls are ``toolUse`` blocks with ``input`` as an object; ids outside
  ``[a-zA-Z0-9_.:-]{1,64}`` get a hashed id, the same for the call and its result (stored ids
  never change).
- files by bytes (``source.bytes``) or by ``s3://`` URL (``source.s3Location``), in user turns
  and tool results: images (PNG, JPEG, GIF, WebP), documents (PDF, CSV, DOC, DOCX, XLS,
  XLSX, HTML, plain text, Markdown; the block's ``name`` is the filename without its
  extension, reduced to the characters Bedrock allows, ``document`` when there is none, and
  unique within the request: a name taken before, in any case, gets `` (2)``, `` (3)``...),
  videos, and audio (user turns only). Anything else (an http(s) URL, an empty file, another
  media type) follows the ``unsupported`` policy.
- reasoning from Bedrock goes back as ``reasoningContent``: ``reasoningText`` with its
  ``signature``, or ``redactedContent`` (the bytes of ``encrypted``), in place, when the
  reasoning policy allows it; other reasoning follows the policy.
- a part whose metadata holds ``bedrock.cache_point`` (``{"type": "default"}``) is followed
  by a ``cachePoint`` block; ``decode`` keeps a ``cachePoint`` there, on the part before it
  (one at the very start of a turn, with no part before it, is dropped).
- blank text (empty or whitespace only) is left out everywhere: Bedrock rejects blank text
  blocks. A tool result with no content left holds the text ``[no content]`` (several models
  refuse ``content: []``), which ``decode`` reads back as ``""``.

``decode`` reads all of this back (a whole ``converse`` request too, and the JSON spelling
with base64 strings for bytes); ``decode_response`` reads a Converse response
(``output.message``), with ``stopReason``, ``usage`` and the request id in ``metadata``.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import re
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any

from typing_extensions import assert_never

from threadline._json import EMPTY
from threadline._json import freeze_json_map
from threadline._usage_readers import read_usage
from threadline.codecs._media import decode_base64
from threadline.codecs._media import encode_base64
from threadline.codecs._notes import turn_parts
from threadline.codecs._notes import unwrap_notes
from threadline.codecs._policies import NOT_IN_USER_MESSAGES
from threadline.codecs._policies import Capabilities
from threadline.codecs._policies import Placeholder
from threadline.codecs._policies import Resolved
from threadline.codecs._policies import carried
from threadline.codecs._policies import is_blank
from threadline.codecs._reading import Reader
from threadline.codecs._reading import as_json_document
from threadline.codecs._reading import build_message
from threadline.codecs._reading import check_choice
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
from threadline.codecs._tools import NO_CONTENT_TEXT
from threadline.codecs._turns import LEADING_USER_TEXT
from threadline.codecs._turns import add_leading_turn
from threadline.codecs._turns import add_to_runs
from threadline.codecs._turns import is_leading_turn
from threadline.codecs._turns import merge_into_turns
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
from threadline.messages import TextPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart

if TYPE_CHECKING:
    from threadline.codecs._caching import CacheState
    from threadline.codecs._requests import ToolRequest

__all__ = ["decode", "decode_response", "encode", "normalize_for_round_trip"]

PROVIDER = "bedrock"
CITATIONS = "bedrock.citations"
"""Part metadata of assistant text read from a ``citationsContent`` block: its citations."""
CACHE_POINT = "bedrock.cache_point"
"""Part metadata: a ``cachePoint`` block follows the part's block (its value, such as
``{"type": "default"}``); ``decode`` keeps a cache point on the part before it."""
TOOL_NAMES = STANDARD
"""The tool names the API takes; others are sent under wire names, which
[`wire_tool_names`][threadline.codecs.wire_tool_names] maps back."""
FORMAT = "Bedrock Converse"
MAX_ID_LENGTH = 64
DEFAULT_DOCUMENT_NAME = "document"
"""The ``name`` of a document without a filename (Converse requires one)."""
MAX_DOCUMENT_NAME = 200

_S3_URI = re.compile(r"s3://[a-z0-9][.\-a-z0-9]{1,61}[a-z0-9](/.*)?", re.DOTALL)
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9()\[\]\- ]+")
"""Characters a document ``name`` may not hold (the AWS docs allow alphanumerics, single
spaces, hyphens, parentheses and square brackets)."""

_MEDIA_TYPES: Mapping[str, Mapping[str, str]] = {
    "image": {"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"},
    "document": {
        "pdf": "application/pdf",
        "csv": "text/csv",
        "doc": "application/msword",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls": "application/vnd.ms-excel",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "html": "text/html",
        "txt": "text/plain",
        "md": "text/markdown",
    },
    "video": {
        "mkv": "video/x-matroska",
        "mov": "video/quicktime",
        "mp4": "video/mp4",
        "webm": "video/webm",
        "flv": "video/x-flv",
        "mpeg": "video/mpeg",
        "wmv": "video/x-ms-wmv",
        "three_gp": "video/3gpp",
    },
    "audio": {
        "mp3": "audio/mpeg",
        "wav": "audio/wav",
        "opus": "audio/opus",
        "aac": "audio/aac",
        "flac": "audio/flac",
        "ogg": "audio/ogg",
        "webm": "audio/webm",
        "m4a": "audio/mp4",
    },
}
"""Per block kind, each ``format`` threadline sends and the media type it stands for."""
_FORMATS = {
    kind: {media_type: fmt for fmt, media_type in formats.items()}
    for kind, formats in _MEDIA_TYPES.items()
}
_ALIASES = {
    "audio/mp3": "audio/mpeg",
    "audio/x-wav": "audio/wav",
    "audio/wave": "audio/wav",
    "audio/x-m4a": "audio/mp4",
}
"""Other spellings of media types in `_MEDIA_TYPES`."""
_OTHER_FORMATS = {
    ("video", "mpg"): "video/mpeg",
    ("audio", "mpeg"): "audio/mpeg",
    ("audio", "mpga"): "audio/mpeg",
    ("audio", "x-aac"): "audio/aac",
}
"""Formats Converse lists that ``decode`` reads but ``encode`` never writes."""
_LEADING_CONTENT = [{"text": LEADING_USER_TEXT}]
"""The content of the user turn put before a history that starts with an assistant turn:
Converse requires a conversation to start with a user message."""
_FILE_BLOCKS = tuple(_MEDIA_TYPES)
_RESULT_FILE_BLOCKS = ("image", "document", "video")
"""What a ``toolResult`` may hold besides text and JSON (no audio)."""


_valid_id = re.compile(rf"[a-zA-Z0-9_.:-]{{1,{MAX_ID_LENGTH}}}").fullmatch
"""A match for a tool-call id Converse takes as it is (the pattern's own method: no Python
call per id)."""


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
    """Write ``messages`` as boto3 ``converse`` keyword arguments: ``messages`` and ``system``.

    The options, and what they raise, are those of [`threadline.encode`][threadline.encode];
    what is particular to this format:

    Args:
        system: placed first in the top-level ``system`` list.
        model: a model id; an inference profile, its ARN and its base model id are one model.
            Bedrock reasoning replays to it only when it names that model: pass the
            ``modelId`` to ``decode_response`` and ``StreamAssembler`` (``model=``), since
            Converse replies name none.
        reasoning: ``auto`` replays Bedrock reasoning (to its model).
    """
    body, _ = encode_with_calls(
        messages,
        system=system,
        model=model,
        integrity=integrity,
        reasoning=reasoning,
        unsupported=unsupported,
        text_files=text_files,
    )
    return body


def encode_request(
    messages: Iterable[Message], request: ToolRequest | None, options: dict[str, Any]
) -> tuple[dict[str, Any], ToolRequest | None]:
    """The body ``threadline.encode`` sends (``options`` are `encode`'s) and ``request`` with
    the tools the history calls (the format's ``encode_request`` in its descriptor).

    ``toolConfig`` declares the tools the history calls (Converse requires it whenever the
    history holds tool blocks): the codec's loop collects them, so the body is not walked
    again for them. Without a request they are declared here, as ``_requests.bedrock`` does.
    """
    body, request, _ = encode_cached(messages, request, options)
    return body, request


def encode_cached(
    messages: Iterable[Message], request: ToolRequest | None, options: dict[str, Any]
) -> tuple[dict[str, Any], ToolRequest | None, CacheState | None]:
    """`encode_request`, ``options`` holding ``encode``'s ``cache`` too, and what
    `with_breakpoints` needs: the plan and the turns the loop marked (the format's
    ``cache.encode`` in its descriptor)."""
    from threadline.codecs import _requests

    body, called, state = _encode(messages, **options)
    if request is not None:
        return body, dataclasses.replace(request, called=called), state
    if called:
        body["toolConfig"] = {"tools": _requests.bedrock_declared(called)}
    return body, None, state


def encode_with_calls(
    messages: Iterable[Message], *, system: str | None = None, **settings: Any
) -> tuple[dict[str, Any], list[str]]:
    """`encode` (``settings`` are its other options), and the names of the tools the history
    calls (its ``toolUse`` blocks'), each once, in order: what ``toolConfig`` declares when
    no tools are given, so ``threadline.encode`` need not walk the body again for them."""
    body, called, _ = _encode(messages, system=system, **settings)
    return body, called


def _encode(
    messages: Iterable[Message], *, system: str | None = None, **settings: Any
) -> tuple[dict[str, Any], list[str], CacheState | None]:
    history = prepare_for(  # the format's own rules: its ROUND_TRIP's
        messages,
        ROUND_TRIP,
        **settings,
    )
    prepared, ids = history.messages, history.ids
    notes = None
    if history.cache is not None:  # encode(cache=...): the turns given the history's marks
        from threadline.codecs._caching import TurnNotes

        notes = TurnNotes(history.cache, CACHE_POINT)
    names = _DocumentNames()
    system_blocks: list[dict[str, Any]] = []
    if system and not is_blank(system):
        system_blocks.append({"text": system})
    turns: list[dict[str, Any]] = []
    merged: list[list[dict[str, Any]]] = []
    called: dict[str, None] = {}
    leading = True
    for index, message in enumerate(prepared):
        role = message.role
        if role == "internal":
            continue
        if role == "system" and leading:
            for text in _text_parts(message):
                system_blocks.append({"text": text.text})
                _add_cache_point(system_blocks, text)
            continue
        leading = False
        # later system text goes as a note in the user turn; user texts never read back as
        # notes; the plan holds the parts of a message with nothing to resolve
        sent = turn_parts(history, index)
        if sent is None:
            continue
        message, role, parts = sent
        if role == "assistant":
            blocks = _assistant_blocks(parts, ids, called)
            wire_role = "assistant"
        elif role == "tool":
            blocks = []
            for part in parts:
                if type(part) is ToolResultPart:
                    blocks.append(_tool_result_block(part, ids, names))
                    if part.metadata:
                        _add_cache_point(blocks, part)
            wire_role = "user"
        else:
            blocks = _user_blocks(parts, names)
            wire_role = "user"
        if not blocks:
            continue
        if turns and turns[-1]["role"] == wire_role:
            merge_into_turns(turns, wire_role, blocks, is_result=_is_result)
            merged.append(turns[-1]["content"])
        else:  # a turn of its own, as most messages are: no call
            turns.append({"role": wire_role, "content": blocks})
        if notes is not None:
            notes.note(parts, len(turns) - 1)
    for content in merged:  # one message's blocks never hold two cache points in a row
        _collapse_cache_points(content)
    count = len(turns)
    add_leading_turn(turns, "content", _LEADING_CONTENT)
    payload: dict[str, Any] = {}
    if system_blocks:
        payload["system"] = system_blocks
    payload["messages"] = turns
    return payload, list(called), None if notes is None else notes.state(len(turns) - count)


def _is_result(block: Mapping[str, Any]) -> bool:
    return "toolResult" in block


def _text_parts(message: Message) -> list[TextPart]:
    return [
        part for part in message.parts if isinstance(part, TextPart) and not is_blank(part.text)
    ]


def _add_cache_point(blocks: list[dict[str, Any]], part: Any) -> None:
    """A ``cachePoint`` block after ``part``'s block when its metadata asks for one."""
    mark = part.metadata.get(CACHE_POINT) if part.metadata else None
    if mark is None:  # most parts: the Mapping check below is an ABC check, slow
        return
    if isinstance(mark, Mapping) and blocks and "cachePoint" not in blocks[-1]:
        blocks.append({"cachePoint": dict(mark)})


def _collapse_cache_points(blocks: list[dict[str, Any]]) -> None:
    """One ``cachePoint`` where merging put two in a row (results of two tool messages, each
    marked, go before the first mark)."""
    for index in range(len(blocks) - 1, 0, -1):
        if "cachePoint" in blocks[index] and "cachePoint" in blocks[index - 1]:
            del blocks[index]


def _kept_cache_point(part: Any) -> Any:
    """What of ``part``'s metadata survives the round trip: its cache point."""
    mark = part.metadata.get(CACHE_POINT) if part.metadata else None
    return freeze_json_map({CACHE_POINT: mark}) if isinstance(mark, Mapping) else EMPTY


def _citations(part: TextPart) -> list[Any] | None:
    """The Converse citations of an assistant text part, if it came from a
    ``citationsContent`` block."""
    citations = part.metadata.get(CITATIONS) if part.metadata else None
    return citations if isinstance(citations, list) and citations else None


def _assistant_text_block(part: TextPart) -> dict[str, Any]:
    """``{"text": ...}``, or ``{"citationsContent": ...}`` for text read from one."""
    citations = _citations(part)
    if citations is None:
        return {"text": part.text}
    return {"citationsContent": {"content": [{"text": part.text}], "citations": citations}}


def _user_blocks(parts: Sequence[Resolved], names: _DocumentNames) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, TextPart):
            if not is_blank(part.text):
                blocks.append({"text": part.text})
                if part.metadata:
                    _add_cache_point(blocks, part)
        elif isinstance(part, FilePart):
            blocks.append(carried(_file_block(part, _FILE_BLOCKS, names)))
            _add_cache_point(blocks, part)
        elif isinstance(part, Placeholder):
            blocks.append({"text": part.text})
        elif isinstance(part, NOT_IN_USER_MESSAGES):
            raise AssertionError(f"a user message holds no {part.type} part")
        else:
            assert_never(part)
    return blocks


def _assistant_blocks(
    parts: Sequence[Resolved], ids: Mapping[str, str], called: dict[str, None]
) -> list[dict[str, Any]]:
    """The blocks of an assistant turn; the names of the tools it calls go in ``called``."""
    blocks: list[dict[str, Any]] = []
    for part in parts:
        # ``type(part) is`` for the common parts (never subclassed: see `Message`), in the
        # order they usually come
        if type(part) is ReasoningPart:
            redacted = _redacted_bytes(part) if part.redacted else None
            blocks.append({"reasoningContent": _reasoning_content(part, redacted)})
        elif type(part) is TextPart:
            if is_blank(part.text):
                continue
            if not part.metadata:
                blocks.append({"text": part.text})
                continue
            blocks.append(_assistant_text_block(part))
            _add_cache_point(blocks, part)
        elif type(part) is ToolCallPart:
            use = {
                "toolUseId": ids.get(part.id, part.id),
                "name": part.name,
                "input": dict(part.arguments),
            }
            blocks.append({"toolUse": use})
            called[part.name] = None
            if part.metadata:
                _add_cache_point(blocks, part)
        elif isinstance(part, (TextPart, ToolCallPart, ReasoningPart)):
            raise AssertionError(f"a subclass of {type(part).__mro__[1].__name__}")
        elif isinstance(part, Placeholder):
            blocks.append({"text": part.text})
        elif isinstance(
            part, (HookPart, FilePart, ToolResultPart, ProviderToolCallPart, ProviderToolResultPart)
        ):
            raise AssertionError(f"resolve keeps no {part.type} part on an assistant turn")
        else:
            assert_never(part)
    return blocks


def _redacted_bytes(part: ReasoningPart) -> bytes | None:
    """The bytes of redacted Bedrock reasoning (``encrypted`` is their base64), if readable."""
    if not part.redacted or part.encrypted is None:
        return None
    try:
        return base64.b64decode(part.encrypted, validate=True)
    except (binascii.Error, ValueError):
        return None


def _replayable(part: ReasoningPart) -> bool:
    return _redacted_bytes(part) is not None if part.redacted else True


def _reasoning_content(part: ReasoningPart, redacted: bytes | None) -> dict[str, Any]:
    if part.redacted:
        return {"redactedContent": redacted}
    text: dict[str, Any] = {"text": part.text}
    if part.signature is not None:
        text["signature"] = part.signature
    return {"reasoningText": text}


def _tool_result_block(
    part: ToolResultPart, ids: Mapping[str, str], names: _DocumentNames
) -> dict[str, Any]:
    """The ``toolResult`` block of ``part``, never empty (several models refuse
    ``content: []``): with nothing to send it says `NO_CONTENT_TEXT`."""
    content: list[dict[str, Any]] = []
    if isinstance(part.content, str):
        if not is_blank(part.content):
            content.append({"text": part.content})
    else:
        for item in part.content:
            block: dict[str, Any] | None
            if isinstance(item, TextPart):
                block = None if is_blank(item.text) else {"text": item.text}
            else:
                block = carried(_file_block(item, _RESULT_FILE_BLOCKS, names))
            if block is not None:
                content.append(block)
    if not content:
        content.append({"text": NO_CONTENT_TEXT})
    result: dict[str, Any] = {"toolUseId": ids.get(part.call_id, part.call_id), "content": content}
    if part.is_error:
        result["status"] = "error"
    return {"toolResult": result}


def _file_kind(part: FilePart, allowed: Sequence[str]) -> tuple[str, str] | None:
    """The block kind and ``format`` a file is sent as, or ``None`` if it cannot go."""
    if part.data is not None and not part.data:
        return None  # Converse refuses empty bytes (min length 1)
    if part.url is not None and _S3_URI.fullmatch(part.url) is None:
        return None
    media_type = _ALIASES.get(part.media_type, part.media_type)
    for kind in allowed:
        fmt = _FORMATS[kind].get(media_type)
        if fmt is not None:
            return kind, fmt
    return None


def _file_block(
    part: FilePart, allowed: Sequence[str], names: _DocumentNames
) -> dict[str, Any] | None:
    found = _file_kind(part, allowed)
    if found is None:
        return None
    kind, fmt = found
    source = {"bytes": part.data} if part.data is not None else {"s3Location": {"uri": part.url}}
    if kind == "document":
        return {"document": {"format": fmt, "name": names(part.filename), "source": source}}
    return {kind: {"format": fmt, "source": source}}


def _document_name(filename: str | None) -> str:
    """The Converse document ``name`` for a filename: its stem, reduced to the characters
    Bedrock allows (other runs become ``-``; whitespace becomes single spaces; none at either
    end), at most 200 characters, ``document`` when nothing is left."""
    stem = filename or ""
    if "." in stem[1:]:
        stem = stem.rsplit(".", 1)[0]
    name = _NAME_UNSAFE.sub("-", " ".join(stem.split())).strip(" -")
    return name[:MAX_DOCUMENT_NAME].rstrip() or DEFAULT_DOCUMENT_NAME


class _DocumentNames:
    """The document names of one request, unique (*Messages can't contain duplicate document
    names*), in the order its documents are written: a name already taken (compared without
    case) gets `` (2)``, `` (3)``... within the 200 characters. ``encode`` and
    ``normalize_for_round_trip`` meet the documents in the same order, so they agree."""

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def __call__(self, filename: str | None) -> str:
        base = _document_name(filename)
        name, number = base, 1
        while name.casefold() in self._taken:
            number += 1
            suffix = f" ({number})"
            name = base[: MAX_DOCUMENT_NAME - len(suffix)].rstrip() + suffix
        self._taken.add(name.casefold())
        return name


def _carries_file(part: FilePart, role: str) -> bool:
    if role == "assistant":
        return False
    return _file_kind(part, _RESULT_FILE_BLOCKS if role == "tool" else _FILE_BLOCKS) is not None


CAPABILITIES = Capabilities(
    replayable=_replayable,
    carries_file=_carries_file,
    file_reasons={
        "assistant": "assistant turns take no files",
        "tool": "tool results take images, documents and videos by bytes or s3:// URL, in the "
        "formats Converse lists",
        "user": "Converse takes images, documents, videos and audio by bytes or s3:// URL, in "
        "the formats it lists",
    },
    no_place="Converse has no place for this part",
)
"""What Converse carries: reasoning text with its signature and redacted reasoning whose bytes
read, no provider tools, the files the module docstring lists in user turns and tool results."""


# ---------------------------------------------------------------------------------------------
# decode


def decode(payload: Any, *, limits: Limits | None = None) -> list[Message]:
    """Read ``{"messages": [...], "system"?: [...]}`` (a whole request too) or a message list.

    A user turn is split into a tool message (its ``toolResult`` blocks) and a user message
    (the rest), in block order; the user turn ``encode`` puts before a leading assistant turn
    is left out. Bytes may be ``bytes`` (boto3's shape) or base64 text (the JSON on the wire).

    Args:
        payload: what ``encode`` returned, a whole request body, or a message list.
        limits: how much to read ([`Limits`][]); ``None`` means the defaults.

    Raises:
        threadline.LimitExceededError: the payload exceeds ``limits`` (a ``ValidationError``).
        threadline.CodecError: ``payload`` is not a Converse payload; the message names the
            JSON path of the first value that does not fit.
        threadline.ValidationError: a value cannot be stored in a message.
    """
    return read_payload(_decode, payload, limits, what="bedrock.decode")


def _decode(payload: Any) -> list[Message]:
    """The reader behind `decode`, given a payload within its limits."""
    reader = Reader(FORMAT)
    wire = reader.messages(payload)
    out: list[Message] = []
    if isinstance(payload, Mapping) and payload.get("system") is not None:
        parts = _system_parts(payload["system"], "system", reader)
        if parts:
            out.append(build_message("system", parts, "system"))
    names: dict[str, str] = {}
    for index, raw in enumerate(wire):
        path = f"messages[{index}]"
        item = reader.expect_object(raw, path)
        role = reader.str_field(item, "role", path)
        content = reader.expect_list(reader.field(item, "content", path), f"{path}.content")
        if index == 0 and is_leading_turn(role, content, wire, placeholder=_LEADING_CONTENT):
            continue
        if role == "system":
            parts = _system_parts(content, f"{path}.content", reader)
            if parts:
                out.append(build_message("system", parts, path))
            continue
        if role not in ("user", "assistant"):
            reader.fail(f"{path}.role", f"unknown role {role!r} (user, assistant or system)")
        runs: list[tuple[str, list[Any]]] = []
        for block_index, block in enumerate(content):
            where = f"{path}.content[{block_index}]"
            decoded = _decode_block(block, role, where, names, reader, model=None)
            if decoded is None:  # a cache point: kept on the part before it
                if runs:
                    runs[-1][1][-1] = _with_cache_point(runs[-1][1][-1], block, where, reader)
                continue
            part, part_role = decoded
            add_to_runs(runs, part_role, part)
        out.extend(build_message(run_role, parts, path) for run_role, parts in runs)
    return unwrap_notes(out)


def _system_parts(value: Any, path: str, reader: Reader) -> list[TextPart]:
    parts: list[TextPart] = []
    for where, block, key in _keyed_blocks(value, path, reader):
        if key == "text":
            parts.append(TextPart(text=reader.str_field(block, "text", where)))
        elif key == "cachePoint":
            if parts:
                parts[-1] = _with_cache_point(parts[-1], block, where, reader)
        else:
            reader.fail(f"{where}.{key}", f"system blocks hold text only, not {key!r}")
    return parts


def _with_cache_point(part: Any, block: Mapping[str, Any], path: str, reader: Reader) -> Any:
    """``part`` with the ``cachePoint`` that followed its block in its metadata."""
    mark = reader.expect_object(block["cachePoint"], f"{path}.cachePoint")
    return part.with_metadata({CACHE_POINT: dict(mark)})


def _keyed_blocks(
    value: Any, path: str, reader: Reader
) -> Iterator[tuple[str, Mapping[str, Any], str]]:
    """Each item of the array ``value`` as ``(its path, the block, the one key it sets)``."""
    for index, raw in enumerate(reader.expect_list(value, path)):
        where = f"{path}[{index}]"
        block = reader.expect_object(raw, where)
        yield where, block, _block_key(block, where, reader)


def _block_key(block: Mapping[str, Any], path: str, reader: Reader) -> str:
    keys = [key for key, value in block.items() if value is not None]
    if len(keys) != 1:
        names = sorted(str(key) for key in keys)  # keys of a Python payload may be of any type
        reader.fail(path, f"a content block sets exactly one key, not {names}")
    return str(keys[0])


def _decode_block(
    raw: Any,
    role: str,
    path: str,
    names: dict[str, str],
    reader: Reader,
    *,
    model: str | None,
) -> tuple[Any, str] | None:
    """A content block as a part and the role of the message it belongs in (``None`` for a
    ``cachePoint`` marker)."""
    block = reader.expect_object(raw, path)
    key = _block_key(block, path, reader)
    where = f"{path}.{key}"
    if key == "text":
        return TextPart(text=reader.str_field(block, "text", path)), role
    if key == "cachePoint":
        return None
    if key in _FILE_BLOCKS:
        return _decode_file(block[key], key, where, reader), role
    if role == "user":
        if key == "toolResult":
            return _decode_tool_result(block[key], where, names, reader), "tool"
        reader.fail(where, f"a user turn cannot hold a {key!r} block")
    if key == "toolUse":
        use = reader.expect_object(block[key], where)
        call_id = reader.str_field(use, "toolUseId", where)
        name = reader.str_field(use, "name", where)
        names.setdefault(call_id, name)
        arguments = use.get("input")
        if not isinstance(arguments, Mapping):
            raw_arguments = reader.json_text(arguments, f"{where}.input", compact=False)
            part = ToolCallPart(id=call_id, name=name, arguments=EMPTY, raw_arguments=raw_arguments)
            return part, role
        return reader.part(
            ToolCallPart, use, where, id=call_id, name=name, arguments=freeze_json_map(arguments)
        ), role
    if key == "reasoningContent":
        return _decode_reasoning(block[key], where, reader, model=model), role
    if key == "citationsContent":
        return _decode_citations(block[key], where, reader), role
    raise reader.error(
        where,
        f"an assistant turn cannot hold a {key!r} block (threadline reads text, image, "
        "document, video, audio, toolUse, reasoningContent and citationsContent there)",
    )


def _decode_citations(value: Any, path: str, reader: Reader) -> TextPart:
    """A ``citationsContent`` block: its generated text as one text part, the citations in
    ``metadata["bedrock.citations"]`` (sent back as the same block)."""
    block = reader.expect_object(value, path)
    texts = []
    for index, raw in enumerate(reader.expect_list(block.get("content") or [], f"{path}.content")):
        where = f"{path}.content[{index}]"
        texts.append(reader.str_field(reader.expect_object(raw, where), "text", where))
    citations = reader.expect_list(block.get("citations") or [], f"{path}.citations")
    metadata = {CITATIONS: strip_nulls(list(citations))} if citations else {}
    return reader.part(
        TextPart, block, path, text="".join(texts), metadata=freeze_json_map(metadata)
    )


def _decode_reasoning(value: Any, path: str, reader: Reader, *, model: str | None) -> ReasoningPart:
    content = reader.expect_object(value, path)
    key = _block_key(content, path, reader)
    if key == "reasoningText":
        text = reader.expect_object(content[key], f"{path}.reasoningText")
        return ReasoningPart(
            text=reader.str_field(text, "text", f"{path}.reasoningText"),
            signature=reader.optional_str(text, "signature", f"{path}.reasoningText"),
            provider=PROVIDER,
            model=model,
        )
    if key == "redactedContent":
        data = _blob(content[key], f"{path}.redactedContent", reader)
        return ReasoningPart(
            encrypted=encode_base64(data), redacted=True, provider=PROVIDER, model=model
        )
    raise reader.error(f"{path}.{key}", "reasoning is reasoningText or redactedContent")


def _blob(value: Any, path: str, reader: Reader) -> bytes:
    """Bytes as boto3 gives them, or the base64 text of the JSON on the wire."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    return decode_base64(reader.expect_str(value, path), reader, path)


def _decode_file(value: Any, kind: str, path: str, reader: Reader) -> FilePart:
    block = reader.expect_object(value, path)
    fmt = reader.optional_str(block, "format", path)
    source = reader.expect_object(reader.field(block, "source", path), f"{path}.source")
    where = f"{path}.source"
    source_key = _block_key(source, where, reader)
    filename = None
    if kind == "document":
        name = reader.str_field(block, "name", path)
        filename = f"{name}.{fmt}" if fmt else name
    if fmt is None:
        media_type = "application/octet-stream"
    else:
        known = _MEDIA_TYPES[kind].get(fmt) or _OTHER_FORMATS.get((kind, fmt))
        media_type = known or f"{kind}/{fmt}"
    # A file part refuses only its media type, which comes from ``format`` (the block itself
    # may hold bytes, not JSON, so it is not where to look for a bad value).
    at = f"{path}.format"
    if source_key == "bytes":
        data = _blob(source["bytes"], f"{where}.bytes", reader)
        return reader.part(FilePart, fmt, at, media_type=media_type, data=data, filename=filename)
    if source_key == "s3Location":
        location = reader.expect_object(source["s3Location"], f"{where}.s3Location")
        url = reader.str_field(location, "uri", f"{where}.s3Location")
        return reader.part(FilePart, fmt, at, media_type=media_type, url=url, filename=filename)
    if source_key == "text" and kind == "document":
        data = reader.utf8(reader.str_field(source, "text", where), f"{where}.text")
        return reader.part(FilePart, fmt, at, media_type="text/plain", data=data, filename=filename)
    raise reader.error(
        f"{where}.{source_key}",
        f"a {source_key!r} source cannot be stored: threadline keeps files as bytes or URLs",
    )


def _decode_tool_result(
    value: Any, path: str, names: Mapping[str, str], reader: Reader
) -> ToolResultPart:
    result = reader.expect_object(value, path)
    call_id = reader.str_field(result, "toolUseId", path)
    items: list[TextPart | FilePart] = []
    blocks = reader.field(result, "content", path)
    for where, block, key in _keyed_blocks(blocks, f"{path}.content", reader):
        if key == "text":
            items.append(TextPart(text=reader.str_field(block, "text", where)))
        elif key == "json":
            items.append(
                TextPart(text=reader.json_text(strip_nulls(block["json"]), f"{where}.json"))
            )
        elif key in _RESULT_FILE_BLOCKS:
            items.append(_decode_file(block[key], key, f"{where}.{key}", reader))
        else:
            reader.fail(f"{where}.{key}", f"a {key!r} block in a tool result cannot be stored")
    status = reader.optional_str(result, "status", path)
    if status not in (None, "success", "error"):
        reader.fail(f"{path}.status", f"expected 'success' or 'error', got {status!r}")
    content: str | tuple[TextPart | FilePart, ...]
    if not items:
        content = ""
    elif len(items) == 1 and type(items[0]) is TextPart:
        content = "" if items[0].text == NO_CONTENT_TEXT else items[0].text
    else:
        content = tuple(items)
    return ToolResultPart(
        call_id=call_id, content=content, name=names.get(call_id), is_error=status == "error"
    )


# ---------------------------------------------------------------------------------------------
# decode_response


def decode_response(
    response: Any, *, limits: Limits | None = None, choice: int = 0, model: str | None = None
) -> Message:
    """Read a Converse response (``output.message``) into an assistant message.

    Accepts what boto3's ``converse`` returns (bytes as ``bytes``) or the JSON of the HTTP
    response (bytes as base64 text). Reasoning keeps its signature (redacted reasoning its
    bytes, as base64 in ``encrypted``) with ``provider="bedrock"``; Converse responses do not
    name the model, so its ``model`` is the ``model`` argument (``None`` without it: such
    reasoning replays only to an ``encode`` given no model). The message's metadata holds
    ``provider``, ``model`` (when given),
    ``response_id`` (boto3's ``ResponseMetadata.RequestId``), ``stop_reason`` (``stopReason``)
    and ``usage``. A ``citationsContent`` block is a text part with its citations in
    ``metadata["bedrock.citations"]``, sent back as the same block.

    Args:
        response: the response: a JSON dict, JSON text or the SDK's response object.
        limits: how much to read ([`Limits`][]); ``None`` means the defaults.
        choice: which message to read; a Converse response holds one, so only 0.
        model: the ``modelId`` the request went to: a Converse response names no model,
            so this tags the message and its reasoning, which then replay to that model
            (or its base id, or another inference profile of it). Without it the reasoning
            names no model, and ``encode(..., model=modelId)`` leaves it out.

    Raises:
        threadline.LimitExceededError: the response exceeds ``limits`` (a
            ``ValidationError``).
        threadline.CodecError: ``response`` is not a Converse response, or holds a block
            threadline does not know (the message names it and its path).
        ValueError: ``choice`` is not 0.
    """
    check_choice(choice, FORMAT)
    return read_response(
        _decode_response,
        response,
        limits,
        format_name=FORMAT,
        what="bedrock.decode_response",
        model=model,
    )


def _decode_response(response: Any) -> Message:
    """The reader behind `decode_response`, given a document within its limits."""
    reader = Reader(f"{FORMAT} response")
    document = reader.expect_object(as_json_document(response, FORMAT), "")
    output = reader.expect_object(reader.field(document, "output", ""), "output")
    message = reader.expect_object(reader.field(output, "message", "output"), "output.message")
    path = "output.message"
    content = reader.expect_list(reader.field(message, "content", path), f"{path}.content")
    parts: list[Any] = []
    names: dict[str, str] = {}
    for index, block in enumerate(content):
        decoded = _decode_block(
            block, "assistant", f"{path}.content[{index}]", names, reader, model=None
        )
        if decoded is not None:
            parts.append(decoded[0])
    usage = reader.optional_json(document, "usage", "")
    request = document.get("ResponseMetadata")
    request_id = request.get("RequestId") if isinstance(request, Mapping) else None
    metadata = response_metadata(
        provider=PROVIDER,
        response_id=request_id if isinstance(request_id, str) else None,
        model=None,
        stop_reason=reader.optional_str(document, "stopReason", ""),
        usage=read_usage("bedrock", usage, reader),
        raw_usage=usage,
    )
    return response_message(parts, path, metadata)


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
    [`threadline.testing.check_codec`][] ignores), Converse loses exactly:

    - all part metadata, filenames of images, videos and audio, and a tool result's ``name``
      (read back from its call);
    - a document's filename becomes its Converse ``name`` plus the format's extension
      (``report.pdf`` stays, ``my_notes.txt`` becomes ``my-notes.txt``, none becomes
      ``document.pdf``, a second ``report.pdf`` of the request ``report (2).pdf``); media
      types are canonical per format (``audio/x-wav`` reads back as ``audio/wav``);
    - reasoning per the reasoning policy: replayed reasoning keeps its text and signature, or
      its redacted bytes (``encrypted`` as standard base64), and ``provider``; it loses
      ``model``, ``item_id``, ``summary`` (and ``encrypted`` when not redacted). Redacted
      reasoning whose ``encrypted`` is not base64 cannot be replayed. ``text`` turns other
      reasoning into text; the parts the ``unsupported`` policy replaces or drops;
    - blank text (empty or whitespace only) everywhere; tool-call ids outside
      ``[a-zA-Z0-9_.:-]{1,64}`` (mapped); ``raw_arguments`` (``input`` is an object); a
      result's content made of one text reads back as a string, and an empty one (or the
      one text ``[no content]``) as ``""``;
      a first user turn that is exactly ``[conversation start]`` before an assistant turn.
    """
    return read_back(
        messages,
        ROUND_TRIP,
        model=model,
        reasoning=reasoning,
        unsupported=unsupported,
        text_files=text_files,
    )


def _names(turn: Turn) -> _DocumentNames:
    """The request's document names, in the order ``encode`` meets the documents."""
    names: _DocumentNames = turn.shared.setdefault("document names", _DocumentNames())
    return names


def _system_read_back(part: TextPart) -> TextPart:
    return TextPart(text=part.text, metadata=_kept_cache_point(part))


def _text_read_back(part: TextPart, turn: Turn) -> TextPart | None:
    if is_blank(part.text):
        return None
    citations = _citations(part) if turn.message.role == "assistant" else None
    kept = {CITATIONS: citations} if citations else {}
    kept.update(_kept_cache_point(part))
    return TextPart(text=part.text, metadata=freeze_json_map(kept))


def _any_file_read_back(part: FilePart, turn: Turn) -> FilePart:
    file = _file_read_back(part, _FILE_BLOCKS, _names(turn))
    return file.with_metadata(_kept_cache_point(part))


def _call_read_back(part: ToolCallPart, turn: Turn) -> ToolCallPart:
    call = ToolCallPart(id=turn.wire_id(part.id), name=part.name, arguments=part.arguments)
    return call.with_metadata(_kept_cache_point(part))


def _any_result_read_back(part: ToolResultPart, turn: Turn) -> ToolResultPart:
    result = _result_read_back(part, turn.history.ids, _names(turn))
    return result.with_metadata(_kept_cache_point(part))


def _reasoning_read_back(part: ReasoningPart, turn: Turn) -> ReasoningPart:
    if part.redacted:
        encrypted = encode_base64(_redacted_bytes(part) or b"")
        return ReasoningPart(encrypted=encrypted, redacted=True, provider=PROVIDER)
    return ReasoningPart(text=part.text, signature=part.signature, provider=PROVIDER)


def _file_read_back(part: FilePart, allowed: Sequence[str], names: _DocumentNames) -> FilePart:
    found = _file_kind(part, allowed)
    if found is None:
        raise AssertionError("resolve kept a file the format refuses")
    kind, fmt = found
    media_type = _MEDIA_TYPES[kind][fmt]
    filename = f"{names(part.filename)}.{fmt}" if kind == "document" else None
    if part.data is not None:
        return FilePart(media_type=media_type, data=part.data, filename=filename)
    return FilePart(media_type=media_type, url=part.url, filename=filename)


def _result_read_back(
    part: ToolResultPart, ids: Mapping[str, str], names: _DocumentNames
) -> ToolResultPart:
    items: list[TextPart | FilePart] = []
    if isinstance(part.content, str):
        if not is_blank(part.content):
            items.append(TextPart(text=part.content))
    else:
        for item in part.content:
            if isinstance(item, TextPart):
                if not is_blank(item.text):
                    items.append(TextPart(text=item.text))
            else:
                items.append(_file_read_back(item, _RESULT_FILE_BLOCKS, names))
    content: str | tuple[TextPart | FilePart, ...]
    if not items:
        content = ""
    elif len(items) == 1 and isinstance(items[0], TextPart):
        content = "" if items[0].text == NO_CONTENT_TEXT else items[0].text
    else:
        content = tuple(items)
    return ToolResultPart(
        call_id=ids.get(part.call_id, part.call_id),
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
        file=_any_file_read_back,
        call=_call_read_back,
        result=_any_result_read_back,
        reasoning=_reasoning_read_back,
    ),
    systems="leading",
    system_text=_system_read_back,
    leading_turn=True,
)
"""Converse's round trip: `normalize_for_round_trip` is `read_back` of it."""


def segment_alone(messages: Sequence[Message]) -> bool:
    """Whether a segment of a history that starts at a turn boundary is encoded alone as it
    is in place (the descriptor's ``segment_check``): not when it holds a file that may go as
    a document, whose Converse ``name`` must differ from every other document's in the
    request."""
    for message in messages:
        for part in message.parts:
            files = part.content if isinstance(part, ToolResultPart) else (part,)
            if isinstance(files, str):
                continue
            for file in files:
                if isinstance(file, FilePart) and not file.media_type.startswith(
                    ("image/", "video/", "audio/")
                ):
                    return False
    return True
