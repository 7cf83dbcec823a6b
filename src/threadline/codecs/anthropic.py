"""Anthropic Messages (``POST /v1/messages``): ``{"messages": [...], "system"?: ...}``.

How threadline's messages map to the wire:

- leading system messages (and ``encode(system=...)``) become the top-level ``system``: a
  string for one text, else text blocks. A system message later in the history goes in the
  user turn in place (only some models take ``role: "system"`` turns), each text as a block
  ``<system>\n…\n</system>`` so the model can tell it from the user's words; ``decode``
  reads such a block back as a system message.
- consecutive messages of one wire role are merged into one turn, one block per part (text is
  never concatenated). Tool messages become ``tool_result`` blocks of a user turn, always
  before any other block of that turn, with ``is_error: true`` for a failed result. A history
  that starts with an assistant turn gets a minimal user turn before it (the text
  ``[conversation start]``), which ``decode`` leaves out again.
- a failed result holds text only (the API's rule): its files go after the turn's results,
  after a ``[files from tool result <id>]`` text, and the result says where each went
  (``[file 1 (image/png) is after the tool results]``); ``decode`` puts them back. A failed
  result with nothing to send says ``[no content]`` (read back as ``""``).
- tool calls are ``tool_use`` blocks with ``input`` as an **object**; ids outside
  ``^[a-zA-Z0-9_-]+$`` get a hashed id, the same for the call and its result.
- images (JPEG, PNG, GIF, WebP) by bytes or URL; PDFs by bytes or URL and UTF-8 plain text by
  bytes as ``document`` blocks (``filename`` is the document ``title``); in user turns and
  tool results. Anything else, and files on assistant messages, follow the ``unsupported``
  policy.
- reasoning from Anthropic goes back as ``thinking`` (with its ``signature``) or
  ``redacted_thinking`` (``encrypted`` is its ``data``), in place, when the reasoning policy
  allows it; Anthropic's server tools (``server_tool_use`` and their ``*_tool_result``
  blocks) go back to Anthropic only. Other reasoning follows the reasoning policy; other
  providers' tools the ``unsupported`` policy.
- blank text (empty or whitespace only) is left out, in ``system``, turns and tool results
  alike: the API rejects such text blocks (*"text content blocks must contain non-whitespace
  text"*). A successful tool result with no content left is sent without ``content``.
- part metadata ``anthropic.cache_control`` is the block's ``cache_control``.

``decode`` reads all of this back; ``decode_response`` reads a Messages response: reasoning
tagged with ``provider="anthropic"`` and the response's model, citations in
``metadata["anthropic.citations"]``, usage and the response id in the message's metadata.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any

from typing_extensions import assert_never

from threadline._json import EMPTY
from threadline._json import FrozenJsonMap
from threadline._json import freeze_json_map
from threadline._usage_readers import read_usage
from threadline.codecs._media import UNKNOWN_IMAGE
from threadline.codecs._media import decode_base64
from threadline.codecs._media import encode_base64
from threadline.codecs._media import image_type_from_url
from threadline.codecs._notes import turn_parts
from threadline.codecs._notes import unwrap_notes
from threadline.codecs._policies import NOT_IN_USER_MESSAGES
from threadline.codecs._policies import Capabilities
from threadline.codecs._policies import Placeholder
from threadline.codecs._policies import ProviderToolPart
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
from threadline.codecs._tools import AFTER_RESULTS
from threadline.codecs._tools import NO_CONTENT_TEXT
from threadline.codecs._tools import attachment_header
from threadline.codecs._tools import attachment_note
from threadline.codecs._tools import fold_moved_files
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

PROVIDER = "anthropic"
TOOL_NAMES = STANDARD
"""The tool names the API takes; others are sent under wire names, which
[`wire_tool_names`][threadline.codecs.wire_tool_names] maps back."""
FORMAT = "Anthropic Messages"

_ID = re.compile(r"[a-zA-Z0-9_-]+")
_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
SERVER_TOOLS: Mapping[str, str] = {
    "web_search": "web_search_tool_result",
    "web_fetch": "web_fetch_tool_result",
    "code_execution": "code_execution_tool_result",
    "bash_code_execution": "bash_code_execution_tool_result",
    "text_editor_code_execution": "text_editor_code_execution_tool_result",
    "tool_search_tool_regex": "tool_search_tool_result",
    "tool_search_tool_bm25": "tool_search_tool_result",
}
"""Anthropic's server tools and the block type of their results."""
_CACHE = "anthropic.cache_control"
_CALLER = "anthropic.caller"
_BLOCK_TYPE = "anthropic.type"
_BLOCK_FIELDS = "anthropic.block"
"""The other fields of a provider tool block (``mcp_tool_use``'s ``server_name``, an
``mcp_tool_result``'s ``is_error``), sent back with it."""
_OWN_FIELDS = frozenset(
    {"type", "id", "name", "input", "tool_use_id", "content", "caller", "cache_control"}
)
_LEADING_CONTENT = [{"type": "text", "text": LEADING_USER_TEXT}]
"""The content of the user turn put before a history that starts with an assistant turn:
*first message must use the "user" role*."""


_valid_id = _ID.fullmatch
"""A match for a tool-call id the Messages API takes as it is (the pattern's own method: no
Python call per id)."""


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
    """Write ``messages`` as ``{"messages": [...], "system"?: ...}`` for the Messages API.

    The options, and what they raise, are those of [`threadline.encode`][threadline.encode];
    what is particular to this format:

    Args:
        system: placed first in the top-level ``system``.
        model: ``claude-sonnet-4-5`` and ``claude-sonnet-4-5-20250929`` are one model.
        reasoning: ``auto`` replays Anthropic thinking (to its model).
    """
    body, _ = _encode(
        messages,
        system=system,
        model=model,
        integrity=integrity,
        reasoning=reasoning,
        unsupported=unsupported,
        text_files=text_files,
    )
    return body


def encode_cached(
    messages: Iterable[Message], request: ToolRequest | None, options: dict[str, Any]
) -> tuple[dict[str, Any], ToolRequest | None, CacheState | None]:
    """The body ``threadline.encode(..., cache=...)`` sends (``options`` are `encode`'s, with
    ``cache``), ``request`` as it is, and what `with_breakpoints` needs: the plan and the
    turns the loop marked (the format's ``cache.encode`` in its descriptor)."""
    body, state = _encode(messages, **options)
    return body, request, state


def _encode(
    messages: Iterable[Message], *, system: str | None = None, **settings: Any
) -> tuple[dict[str, Any], CacheState | None]:
    history = prepare_for(  # the format's own rules: its ROUND_TRIP's
        messages,
        ROUND_TRIP,
        **settings,
    )
    prepared, ids = history.messages, history.ids
    notes = None
    if history.cache is not None:  # encode(cache=...): the turns given the history's marks
        from threadline.codecs._caching import TurnNotes

        notes = TurnNotes(history.cache, _CACHE)
    system_blocks: list[dict[str, Any]] = []
    if system and not is_blank(system):
        system_blocks.append({"type": "text", "text": system})
    turns: list[dict[str, Any]] = []
    leading = True
    for index, message in enumerate(prepared):
        role = message.role
        if role == "internal":
            continue
        if role == "system" and leading:
            system_blocks.extend(_text_block(part) for part in _texts(message))
            continue
        leading = False
        # later system text goes as a note in the user turn; user texts never read back as
        # notes; the plan holds the parts of a message with nothing to resolve
        sent = turn_parts(history, index)
        if sent is None:
            continue
        message, role, parts = sent
        if role == "assistant":
            blocks = _assistant_blocks(parts, ids)
            wire_role = "assistant"
        elif role == "tool":
            moved: list[dict[str, Any]] = []
            blocks = [
                _tool_result_block(part, ids, moved)
                for part in parts
                if type(part) is ToolResultPart
            ]
            if moved:  # the files of failed results, after all the results
                blocks.extend(moved)
            wire_role = "user"
        else:
            blocks = _user_blocks(parts)
            wire_role = "user"
        if not blocks:
            continue
        if turns and turns[-1]["role"] == wire_role:
            merge_into_turns(turns, wire_role, blocks, is_result=_is_result)
        else:  # a turn of its own, as most messages are: no call
            turns.append({"role": wire_role, "content": blocks})
        if notes is not None:
            notes.note(parts, len(turns) - 1)
    count = len(turns)
    add_leading_turn(turns, "content", _LEADING_CONTENT)
    payload: dict[str, Any] = {}
    if len(system_blocks) == 1 and "cache_control" not in system_blocks[0]:
        payload["system"] = system_blocks[0]["text"]
    elif system_blocks:
        payload["system"] = system_blocks
    payload["messages"] = turns
    return payload, None if notes is None else notes.state(len(turns) - count)


def _is_result(block: Mapping[str, Any]) -> bool:
    return bool(block["type"] == "tool_result")


def _texts(message: Message) -> list[TextPart]:
    return [
        part for part in message.parts if isinstance(part, TextPart) and not is_blank(part.text)
    ]


def _text_block(part: TextPart) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": part.text}
    if part.metadata and _CACHE in part.metadata:
        block["cache_control"] = part.metadata[_CACHE]
    return block


def _user_blocks(parts: Sequence[Resolved]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, TextPart):
            if not is_blank(part.text):
                blocks.append(_text_block(part))
        elif isinstance(part, FilePart):
            blocks.append(carried(_file_block(part)))
        elif isinstance(part, Placeholder):
            blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, NOT_IN_USER_MESSAGES):
            raise AssertionError(f"a user message holds no {part.type} part")
        else:
            assert_never(part)
    return blocks


def _assistant_blocks(parts: Sequence[Resolved], ids: Mapping[str, str]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    server_calls: dict[str, str] = {}
    for part in parts:
        # ``type(part) is`` for the common parts (never subclassed: see `Message`), in the
        # order they usually come
        if type(part) is ReasoningPart:
            blocks.append(_thinking_block(part))
        elif type(part) is TextPart:
            if not is_blank(part.text):
                blocks.append(_text_block(part))
        elif type(part) is ToolCallPart:
            blocks.append(_tool_use_block(part, ids))
        elif isinstance(part, (TextPart, ToolCallPart, ReasoningPart)):
            raise AssertionError(f"a subclass of {type(part).__mro__[1].__name__}")
        elif isinstance(part, ProviderToolCallPart):
            block = carried(_server_tool_block(part))
            server_calls[block["id"]] = block["name"]
            blocks.append(block)
        elif isinstance(part, ProviderToolResultPart):
            blocks.append(carried(_server_result_block(part, server_calls)))
        elif isinstance(part, Placeholder):
            blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, (FilePart, ToolResultPart, HookPart)):
            raise AssertionError(f"resolve keeps no {part.type} part on an assistant turn")
        else:
            assert_never(part)
    return blocks


def _carries_provider_tool(part: ProviderToolPart, before: Sequence[object]) -> bool:
    if isinstance(part, ProviderToolCallPart):
        return _server_tool_block(part) is not None
    return _server_result_type(part, _server_calls(before)) is not None


def _server_calls(parts: Iterable[object]) -> dict[str, str]:
    """The server tool calls among ``parts`` that Anthropic carries, by id: their names."""
    return {
        part.id: part.name
        for part in parts
        if isinstance(part, ProviderToolCallPart) and _server_tool_block(part) is not None
    }


def _replayable(part: ReasoningPart) -> bool:
    if part.redacted:
        return part.encrypted is not None
    return part.signature is not None


CAPABILITIES = Capabilities(
    replayable=_replayable,
    carries_file=lambda part, role: role != "assistant" and _file_kind(part) is not None,
    file_reasons={
        "assistant": "assistant turns take no files",
        "user": "Messages takes JPEG, PNG, GIF and WebP images, PDFs, and UTF-8 plain text by "
        "bytes",
    },
    no_place="the Messages API has no place for this part",
    carries_provider_tool=_carries_provider_tool,
    provider_tool_reason="only Anthropic's own server tools can be sent back to Anthropic",
)
"""What the Messages API carries: thinking with its signature, Anthropic's own server tools,
the files the module docstring lists on user turns."""


def _thinking_block(part: ReasoningPart) -> dict[str, Any]:
    if part.redacted:
        return {"type": "redacted_thinking", "data": part.encrypted}
    return {"type": "thinking", "thinking": part.text, "signature": part.signature}


def _tool_use_block(part: ToolCallPart, ids: Mapping[str, str]) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "tool_use",
        "id": ids.get(part.id, part.id),
        "name": part.name,
        "input": dict(part.arguments),
    }
    if part.metadata:  # most calls have none: no call
        _with_block_metadata(block, part.metadata)
    return block


def _with_block_metadata(block: dict[str, Any], metadata: Mapping[str, Any]) -> dict[str, Any]:
    if metadata:
        if _CALLER in metadata:
            block["caller"] = metadata[_CALLER]
        if _CACHE in metadata:
            block["cache_control"] = metadata[_CACHE]
    return block


def _server_tool_block(part: ProviderToolCallPart) -> dict[str, Any] | None:
    if part.provider != PROVIDER or not isinstance(part.input, dict):
        return None
    block_type = _tool_use_type(part)
    if block_type is None:
        return None
    block = {"type": block_type, "id": part.id, "name": part.name, "input": part.input}
    block.update(_block_fields(part))
    return _with_block_metadata(block, part.metadata)


def _tool_use_type(part: ProviderToolCallPart) -> str | None:
    """The block type a provider tool call goes back as: ``server_tool_use`` for a server
    tool, the type it was read from for other ``*_tool_use`` blocks (``mcp_tool_use``)."""
    block_type = part.metadata.get(_BLOCK_TYPE)
    if isinstance(block_type, str) and block_type.endswith("_tool_use"):
        return block_type
    return "server_tool_use" if part.name in SERVER_TOOLS else None


def _block_fields(part: ProviderToolPart) -> dict[str, Any]:
    fields = part.metadata.get(_BLOCK_FIELDS)
    if not isinstance(fields, Mapping):
        return {}
    return {key: value for key, value in fields.items() if key not in _OWN_FIELDS}


def _server_result_type(part: ProviderToolResultPart, calls: Mapping[str, str]) -> str | None:
    if part.provider != PROVIDER or part.content is None:
        return None
    block_type = part.metadata.get(_BLOCK_TYPE)
    if isinstance(block_type, str) and block_type.endswith("_tool_result"):
        return block_type
    name = calls.get(part.call_id)
    return SERVER_TOOLS.get(name) if name is not None else None


def _server_result_block(
    part: ProviderToolResultPart, calls: Mapping[str, str]
) -> dict[str, Any] | None:
    block_type = _server_result_type(part, calls)
    if block_type is None:
        return None
    block = {"type": block_type, "tool_use_id": part.call_id, "content": part.content}
    fields = _block_fields(part)
    if "is_error" in fields:
        fields["is_error"] = part.is_error
    block.update(fields)
    return _with_block_metadata(block, part.metadata)


def _tool_result_block(
    part: ToolResultPart, ids: Mapping[str, str], moved: list[dict[str, Any]]
) -> dict[str, Any]:
    """The ``tool_result`` block of ``part``. A failed result takes text only (*all content
    must be type 'text' if 'is_error' is true*): its files go to ``moved``, the blocks sent
    after the turn's results, and its text says where each went. It is never empty (*content
    cannot be empty if 'is_error' is true*): with nothing to send it says `NO_CONTENT_TEXT`.
    """
    wire_id = ids.get(part.call_id, part.call_id)
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": wire_id}
    content = part.content
    if isinstance(content, str):
        if not is_blank(content):
            block["content"] = content
    else:
        items: list[dict[str, Any]] = []
        files = 0
        for item in content:
            if isinstance(item, TextPart):
                if not is_blank(item.text):
                    items.append({"type": "text", "text": item.text})
            elif part.is_error:
                files += 1
                if files == 1:
                    moved.append({"type": "text", "text": attachment_header(wire_id)})
                moved.append(carried(_file_block(item)))
                note = attachment_note(files, item.media_type, AFTER_RESULTS)
                items.append({"type": "text", "text": note})
            else:
                items.append(carried(_file_block(item)))
        if items:
            block["content"] = items
    if part.is_error:
        block["is_error"] = True
        block.setdefault("content", NO_CONTENT_TEXT)
    if part.metadata and _CACHE in part.metadata:
        block["cache_control"] = part.metadata[_CACHE]
    return block


def _file_kind(part: FilePart) -> str | None:
    """How the format carries a file (``image``, ``pdf``, ``text``), or ``None``."""
    media_type = part.media_type
    if media_type in _IMAGE_TYPES or (media_type == UNKNOWN_IMAGE and part.url is not None):
        return "image"
    if media_type == "application/pdf":
        return "pdf"
    if media_type == "text/plain" and part.data is not None:
        try:
            part.data.decode("utf-8")
        except UnicodeDecodeError:
            return None
        return "text"
    return None


def _file_block(part: FilePart) -> dict[str, Any] | None:
    kind = _file_kind(part)
    if kind is None:
        return None
    source: dict[str, Any]
    if part.data is None:
        source = {"type": "url", "url": part.url}
    elif kind == "text":
        source = {"type": "text", "media_type": "text/plain", "data": part.data.decode("utf-8")}
    else:
        source = {"type": "base64", "media_type": part.media_type, "data": encode_base64(part.data)}
    block: dict[str, Any] = {"type": "image" if kind == "image" else "document", "source": source}
    if kind != "image" and part.filename is not None:
        block["title"] = part.filename
    if _CACHE in part.metadata:
        block["cache_control"] = part.metadata[_CACHE]
    return block


# ---------------------------------------------------------------------------------------------
# decode


def decode(payload: Any, *, limits: Limits | None = None) -> list[Message]:
    """Read ``{"messages": [...], "system"?: ...}`` (a whole request body too) or a message list.

    A user turn is split into a tool message (its ``tool_result`` blocks) and a user message
    (the rest), in block order.

    Args:
        payload: what ``encode`` returned, a whole request body, or a message list.
        limits: how much to read ([`Limits`][]); ``None`` means the defaults.

    Raises:
        threadline.LimitExceededError: the payload exceeds ``limits`` (a ``ValidationError``).
        threadline.CodecError: ``payload`` is not a Messages payload; the message names the
            JSON path of the first value that does not fit.
        threadline.ValidationError: a value cannot be stored in a message.
    """
    return read_payload(_decode, payload, limits, what="anthropic.decode")


def _decode(payload: Any) -> list[Message]:
    """The reader behind `decode`, given a payload within its limits."""
    reader = Reader(FORMAT)
    wire = reader.messages(payload)
    out: list[Message] = []
    if isinstance(payload, Mapping) and payload.get("system") is not None:
        parts = _decode_text_content(payload["system"], "system", reader)
        if parts:
            out.append(build_message("system", parts, "system"))
    names: dict[str, str] = {}
    for index, raw in enumerate(wire):
        path = f"messages[{index}]"
        item = reader.expect_object(raw, path)
        role = reader.str_field(item, "role", path)
        content = reader.field(item, "content", path)
        if index == 0 and is_leading_turn(role, content, wire, placeholder=_LEADING_CONTENT):
            continue
        if role == "system":
            parts = _decode_text_content(content, f"{path}.content", reader)
            if parts:
                out.append(build_message("system", parts, path))
            continue
        if role not in ("user", "assistant"):
            reader.fail(f"{path}.role", f"unknown role {role!r} (user, assistant or system)")
        if isinstance(content, str):
            if content:
                out.append(build_message(role, [TextPart(text=content)], path))
            continue
        runs: list[tuple[str, list[Any]]] = []
        for block_index, block in enumerate(reader.expect_list(content, f"{path}.content")):
            where = f"{path}.content[{block_index}]"
            part, part_role = _decode_block(block, role, where, names, reader, model=None)
            add_to_runs(runs, part_role, part)
        for (run_role, results), (next_role, following) in itertools.pairwise(runs):
            if run_role == "tool" and next_role == "user":
                del following[: fold_moved_files(results, following)]
        out.extend(build_message(run_role, parts, path) for run_role, parts in runs if parts)
    return unwrap_notes(out)


def _decode_text_content(value: Any, path: str, reader: Reader) -> list[TextPart]:
    if isinstance(value, str):
        return [TextPart(text=value)] if value else []
    parts = []
    for where, block, kind in reader.tagged_objects(value, path):
        if kind != "text":
            reader.fail(f"{where}.type", f"system content holds text blocks only, not {kind!r}")
        parts.append(_decode_text(block, where, reader))
    return parts


def _decode_text(block: Mapping[str, Any], path: str, reader: Reader) -> TextPart:
    metadata: dict[str, Any] = {}
    if block.get("cache_control") is not None:
        metadata[_CACHE] = block["cache_control"]
    if block.get("citations"):
        metadata["anthropic.citations"] = strip_nulls(block["citations"])
    text = reader.str_field(block, "text", path)
    return reader.part(TextPart, block, path, text=text, metadata=freeze_json_map(metadata))


def _decode_block(
    raw: Any,
    role: str,
    path: str,
    names: dict[str, str],
    reader: Reader,
    *,
    model: str | None,
) -> tuple[Any, str]:
    """A content block as a part, and the role of the message it belongs in."""
    block = reader.expect_object(raw, path)
    kind = reader.str_field(block, "type", path)
    if kind == "text":
        return _decode_text(block, path, reader), role
    if kind in ("image", "document"):
        return _decode_file(block, kind, path, reader), role
    if role == "user":
        if kind == "tool_result":
            return _decode_tool_result(block, path, names, reader), "tool"
        reader.fail(f"{path}.type", f"a user turn cannot hold a {kind!r} block here")
    if kind == "thinking":
        return ReasoningPart(
            text=reader.str_field(block, "thinking", path),
            signature=reader.str_field(block, "signature", path),
            provider=PROVIDER,
            model=model,
        ), role
    if kind == "redacted_thinking":
        return ReasoningPart(
            encrypted=reader.str_field(block, "data", path),
            redacted=True,
            provider=PROVIDER,
            model=model,
        ), role
    metadata = {_CALLER: strip_nulls(block["caller"])} if block.get("caller") is not None else {}
    if kind == "tool_use":
        call_id = reader.str_field(block, "id", path)
        name = reader.str_field(block, "name", path)
        names.setdefault(call_id, name)
        if block.get("cache_control") is not None:
            metadata[_CACHE] = block["cache_control"]
        arguments = block.get("input", {})
        raw_arguments = None
        if not isinstance(arguments, Mapping):
            raw_arguments = reader.json_text(arguments, f"{path}.input", compact=False)
            arguments = EMPTY
        return reader.part(
            ToolCallPart,
            block,
            path,
            id=call_id,
            name=name,
            arguments=freeze_json_map(arguments),
            raw_arguments=raw_arguments,
            metadata=freeze_json_map(metadata),
        ), role
    fields = strip_nulls({key: value for key, value in block.items() if key not in _OWN_FIELDS})
    if fields:
        metadata[_BLOCK_FIELDS] = fields
    if kind.endswith("_tool_use"):  # server_tool_use, mcp_tool_use, and later kinds alike
        if kind != "server_tool_use":
            metadata[_BLOCK_TYPE] = kind
        return reader.part(
            ProviderToolCallPart,
            block,
            path,
            id=reader.str_field(block, "id", path),
            name=reader.str_field(block, "name", path),
            input=strip_nulls(block.get("input", {})),
            provider=PROVIDER,
            metadata=freeze_json_map(metadata),
        ), role
    if kind.endswith("_tool_result") and kind != "tool_result":
        content = strip_nulls(block.get("content"))
        is_error = block.get("is_error")
        if is_error is not None and not isinstance(is_error, bool):
            reader.fail(f"{path}.is_error", "expected a boolean")
        return reader.part(
            ProviderToolResultPart,
            block,
            path,
            call_id=reader.str_field(block, "tool_use_id", path),
            content=content,
            provider=PROVIDER,
            is_error=_is_error_content(content) if is_error is None else is_error,
            metadata=freeze_json_map({**metadata, _BLOCK_TYPE: kind}),
        ), role
    raise reader.error(
        f"{path}.type",
        f"an assistant turn cannot hold a {kind!r} block (threadline reads text, thinking, "
        "redacted_thinking, tool_use and provider tool blocks, *_tool_use and *_tool_result)",
    )


def _is_error_content(content: Any) -> bool:
    kind = content.get("type") if isinstance(content, Mapping) else None
    return isinstance(kind, str) and kind.endswith("_error")


def _decode_file(block: Mapping[str, Any], kind: str, path: str, reader: Reader) -> FilePart:
    source = reader.expect_object(reader.field(block, "source", path), f"{path}.source")
    where = f"{path}.source"
    source_type = reader.str_field(source, "type", where)
    filename = reader.optional_str(block, "title", path) if kind == "document" else None
    metadata = _cache_metadata(block)
    if source_type == "base64":
        media_type = reader.media_type(
            reader.field(source, "media_type", where), f"{where}.media_type"
        )
        data = decode_base64(reader.str_field(source, "data", where), reader, f"{where}.data")
        return reader.part(
            FilePart,
            block,
            path,
            media_type=media_type,
            data=data,
            filename=filename,
            metadata=metadata,
        )
    if source_type == "url":
        url = reader.str_field(source, "url", where)
        media_type = "application/pdf" if kind == "document" else image_type_from_url(url)
        return reader.part(
            FilePart,
            block,
            path,
            media_type=media_type,
            url=url,
            filename=filename,
            metadata=metadata,
        )
    if source_type == "text" and kind == "document":
        text = reader.str_field(source, "data", where)
        media_type = reader.optional_str(source, "media_type", where) or "text/plain"
        return reader.part(
            FilePart,
            block,
            path,
            media_type=reader.media_type(media_type, f"{where}.media_type"),
            data=reader.utf8(text, f"{where}.data"),
            filename=filename,
            metadata=metadata,
        )
    raise reader.error(
        f"{where}.type",
        f"a {source_type!r} source cannot be stored: threadline keeps files as bytes or URLs",
    )


def _decode_tool_result(
    block: Mapping[str, Any], path: str, names: Mapping[str, str], reader: Reader
) -> ToolResultPart:
    call_id = reader.str_field(block, "tool_use_id", path)
    raw = block.get("content")
    content: str | tuple[TextPart | FilePart, ...]
    if raw is None or isinstance(raw, str):
        content = "" if raw == NO_CONTENT_TEXT and block.get("is_error") is True else raw or ""
    else:
        items: list[TextPart | FilePart] = []
        for where, inner, kind in reader.tagged_objects(raw, f"{path}.content"):
            if kind == "text":
                items.append(TextPart(text=reader.str_field(inner, "text", where)))
            elif kind in ("image", "document"):
                items.append(_decode_file(inner, kind, where, reader))
            else:
                reader.fail(f"{where}.type", f"a {kind!r} block in a tool result cannot be stored")
        content = tuple(items)
    is_error = block.get("is_error")
    if is_error is not None and not isinstance(is_error, bool):
        reader.fail(f"{path}.is_error", "expected a boolean")
    metadata = _cache_metadata(block)
    return reader.part(
        ToolResultPart,
        block,
        path,
        call_id=call_id,
        content=content,
        name=names.get(call_id),
        is_error=bool(is_error),
        metadata=metadata,
    )


# ---------------------------------------------------------------------------------------------
# decode_response


def decode_response(
    response: Any, *, limits: Limits | None = None, choice: int = 0, model: str | None = None
) -> Message:
    """Read a Messages API response into an assistant message.

    Accepts the JSON dict, JSON text, or the SDK's ``Message`` object. Thinking keeps its
    signature (``redacted_thinking`` its data, in ``encrypted``) with ``provider="anthropic"``
    and the response's ``model``; server tools become provider tool parts; text citations go
    to ``metadata["anthropic.citations"]``. MCP connector blocks (``mcp_tool_use``,
    ``mcp_tool_result``) and any later ``*_tool_use`` / ``*_tool_result`` block become provider
    tool parts that go back to Anthropic as they came; another unknown block type raises. The
    message's metadata holds ``provider``, ``model``, ``response_id``, ``stop_reason``,
    ``stop_sequence`` (when a stop sequence ended the turn) and ``usage``.

    Args:
        response: the response: a JSON dict, JSON text or the SDK's response object.
        limits: how much to read ([`Limits`][]); ``None`` means the defaults.
        choice: which message to read; a Messages response holds one, so only 0.
        model: the model the request went to, for a response that names none: it tags
            the message and its reasoning (the response's own ``model`` wins).

    Raises:
        threadline.LimitExceededError: the response exceeds ``limits`` (a
            ``ValidationError``).
        threadline.CodecError: ``response`` is not a Messages response, or holds a block
            type threadline does not know (the message names it and its path).
        ValueError: ``choice`` is not 0.
    """
    check_choice(choice, FORMAT)
    return read_response(
        _decode_response,
        response,
        limits,
        format_name=FORMAT,
        what="anthropic.decode_response",
        model=model,
    )


def _decode_response(response: Any) -> Message:
    """The reader behind `decode_response`, given a document within its limits."""
    reader = Reader(f"{FORMAT} response")
    document = reader.expect_object(as_json_document(response, FORMAT), "")
    model = reader.optional_str(document, "model", "")
    parts: list[Any] = []
    names: dict[str, str] = {}
    for index, block in enumerate(
        reader.expect_list(reader.field(document, "content", ""), "content")
    ):
        part, _ = _decode_block(block, "assistant", f"content[{index}]", names, reader, model=model)
        parts.append(part)
    usage = reader.optional_json(document, "usage", "")
    metadata = response_metadata(
        provider=PROVIDER,
        response_id=reader.optional_str(document, "id", ""),
        model=model,
        stop_reason=reader.optional_str(document, "stop_reason", ""),
        usage=read_usage("anthropic", usage, reader),
        raw_usage=usage,
    )
    stop_sequence = reader.optional_str(document, "stop_sequence", "")
    if stop_sequence is not None:
        metadata["stop_sequence"] = stop_sequence
    return response_message(parts, "content", metadata)


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
    [`threadline.testing.check_codec`][] ignores), the Messages format loses exactly:

    - part metadata it has no field for (it keeps ``anthropic.cache_control`` and, on server
      tool parts, ``anthropic.caller`` and ``anthropic.type``), image filenames, and a tool
      result's ``name`` (read back from its call);
    - a first user turn that is exactly ``[conversation start]`` before an assistant turn;
    - reasoning per the reasoning policy: replayed thinking keeps text, signature or
      encrypted data and ``provider``, and loses ``model``, ``item_id``, ``summary`` and
      metadata; ``text`` turns foreign reasoning into text; the parts the ``unsupported``
      policy replaces or drops;
    - blank text (empty or whitespace only) everywhere, so a result left with no content (a
      blank string, an empty tuple, blank texts only) reads back as ``""``, and so does a
      failed result that is exactly ``[no content]``; tool-call ids
      outside ``[a-zA-Z0-9_-]+`` (mapped); the media type of an image sent by URL (from its
      extension, else ``image/*``); ``raw_arguments`` (the format takes an object only);
      a server tool result's ``is_error``, which the format derives from its content.
    """
    return read_back(
        messages,
        ROUND_TRIP,
        model=model,
        reasoning=reasoning,
        unsupported=unsupported,
        text_files=text_files,
    )


def _read_back_text(part: TextPart) -> TextPart:
    if part.metadata.keys() <= {_CACHE}:
        return part
    return TextPart(text=part.text, metadata=_only(part.metadata, _CACHE))


def _cache_metadata(block: Mapping[str, Any]) -> FrozenJsonMap:
    cache = block.get("cache_control")
    return EMPTY if cache is None else freeze_json_map({_CACHE: cache})


def _only(metadata: Mapping[str, Any], *keys: str) -> FrozenJsonMap:
    return freeze_json_map({key: metadata[key] for key in keys if key in metadata})


def _text_read_back(part: TextPart, turn: Turn) -> TextPart | None:
    return None if is_blank(part.text) else _read_back_text(part)


def _call_read_back(part: ToolCallPart, turn: Turn) -> ToolCallPart:
    return ToolCallPart(
        id=turn.wire_id(part.id),
        name=part.name,
        arguments=part.arguments,
        metadata=_only(part.metadata, _CALLER, _CACHE),
    )


def _reasoning_read_back(part: ReasoningPart, turn: Turn) -> ReasoningPart:
    if part.redacted:
        return ReasoningPart(encrypted=part.encrypted, redacted=True, provider=PROVIDER)
    return ReasoningPart(text=part.text, signature=part.signature, provider=PROVIDER)


def _server_call_read_back(part: ProviderToolCallPart, turn: Turn) -> ProviderToolCallPart:
    return ProviderToolCallPart(
        id=part.id,
        name=part.name,
        input=part.input,
        provider=PROVIDER,
        metadata=_call_read_back_metadata(part),
    )


def _server_result_read_back(part: ProviderToolResultPart, turn: Turn) -> ProviderToolResultPart:
    calls: dict[str, str] = {}  # the server calls before it in its message
    for earlier in turn.parts[: turn.at]:
        if isinstance(earlier, ProviderToolCallPart):
            calls[earlier.id] = earlier.name
    return ProviderToolResultPart(
        call_id=part.call_id,
        content=part.content,
        provider=PROVIDER,
        is_error=part.is_error
        if "is_error" in _block_fields(part)
        else _is_error_content(part.content),
        metadata=freeze_json_map(
            {
                **_only(part.metadata, _CALLER, _BLOCK_FIELDS),
                _BLOCK_TYPE: _server_result_type(part, calls),
            }
        ),
    )


def _call_read_back_metadata(part: ProviderToolCallPart) -> FrozenJsonMap:
    """What a provider tool call's metadata reads back as: its caller, its block type unless
    it is ``server_tool_use``, and its other block fields."""
    metadata = dict(_only(part.metadata, _CALLER))
    block_type = _tool_use_type(part)
    if block_type != "server_tool_use":
        metadata[_BLOCK_TYPE] = block_type
    fields = _block_fields(part)
    if fields:
        metadata[_BLOCK_FIELDS] = fields
    return freeze_json_map(metadata)


def _file_read_back(part: FilePart, turn: Turn | None = None) -> FilePart:
    kind = _file_kind(part)
    metadata = _only(part.metadata, _CACHE)
    filename = part.filename if kind != "image" else None
    if part.url is not None:
        media_type = image_type_from_url(part.url) if kind == "image" else part.media_type
        return FilePart(media_type=media_type, url=part.url, filename=filename, metadata=metadata)
    return FilePart(
        media_type=part.media_type, data=part.data, filename=filename, metadata=metadata
    )


def _result_read_back(part: ToolResultPart, turn: Turn) -> ToolResultPart:
    content: str | tuple[TextPart | FilePart, ...]
    if isinstance(part.content, str):
        empty = is_blank(part.content) or (part.is_error and part.content == NO_CONTENT_TEXT)
        content = "" if empty else part.content
    else:
        items: list[TextPart | FilePart] = []
        for item in part.content:
            if isinstance(item, TextPart):
                if not is_blank(item.text):
                    items.append(TextPart(text=item.text))
            else:
                items.append(_file_read_back(item))
        content = tuple(items) if items else ""
    return ToolResultPart(
        call_id=turn.wire_id(part.call_id),
        content=content,
        name=part.name,
        is_error=part.is_error,
        metadata=_only(part.metadata, _CACHE),
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
        provider_call=_server_call_read_back,
        provider_result=_server_result_read_back,
    ),
    systems="leading",
    system_text=_read_back_text,
    leading_turn=True,
)
"""The Messages format's round trip: `normalize_for_round_trip` is `read_back` of it."""
