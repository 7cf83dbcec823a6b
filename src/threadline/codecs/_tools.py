"""Tool calls, tool results and their ids on the wire (private).

Tool-call id mapping, the ``[tool error] `` prefix, arguments as JSON text, and the files of
tool results moved to a user message for formats whose tool messages take text only.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import TypeAlias

import pydantic

from threadline._json import EMPTY
from threadline._json import FrozenJsonMap
from threadline._json import compact_text
from threadline._json import freeze_json_map
from threadline._validation import translate_errors
from threadline.codecs._reading import Reader
from threadline.codecs._reading import current_limits
from threadline.codecs.base import TOOL_ERROR_PREFIX
from threadline.limits import parse_arguments
from threadline.messages import FilePart
from threadline.messages import Message
from threadline.messages import TextPart
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart


def add_error_prefix(text: str) -> str:
    """``text`` with `TOOL_ERROR_PREFIX` before it."""
    return TOOL_ERROR_PREFIX + text


def strip_error_prefix(text: str) -> tuple[str, bool]:
    """``(text without the prefix, True)`` when ``text`` starts with it, else ``(text, False)``."""
    if text.startswith(TOOL_ERROR_PREFIX):
        return text[len(TOOL_ERROR_PREFIX) :], True
    return text, False


def hashed_id(original: str, attempt: int = 0, *, prefix: str = "call_", size: int = 24) -> str:
    """A short id derived from ``original`` (and a collision ``attempt``): ``prefix`` + hex.

    24 hex digits (96 bits) make an accidental collision negligible; `map_call_ids`
    still checks and retries with the next ``attempt``.
    """
    seed = original if attempt == 0 else f"{original}#{attempt}"
    # surrogatepass: ids read from hostile JSON may hold lone surrogates; hashing must not fail.
    return prefix + hashlib.sha256(seed.encode("utf-8", "surrogatepass")).hexdigest()[:size]


def map_call_ids(
    messages: Iterable[Message],
    *,
    is_valid: Callable[[str], object],
    mint: Callable[[str, int], str] = hashed_id,
) -> dict[str, str]:
    """Wire ids for the tool-call ids a format would reject; valid ids are left out (kept).

    Deterministic (depends only on the ids, in order of appearance), collision-free (a minted
    id never equals a kept id or another minted one) and one mapping for the whole history, so
    a call and its result always get the same wire id. Stored ids are never changed: codecs
    look ids up with ``mapping.get(id, id)``.

    Args:
        messages: the prepared history.
        is_valid: whether the format accepts an id as it is (truthy: a pattern's
            ``fullmatch`` does).
        mint: ``mint(original, attempt)`` makes a candidate wire id; it must satisfy
            ``is_valid``.

    Raises:
        ValueError: ``mint`` made an id that ``is_valid`` rejects (a bug in the codec).
    """
    seen: dict[str, None] = {}
    for message in messages:
        if message.role == "assistant":
            for part in message.parts:
                if type(part) is ToolCallPart:
                    seen[part.id] = None
        elif message.role == "tool":
            for part in message.parts:
                if type(part) is ToolResultPart:
                    seen[part.call_id] = None
    return wire_ids(seen, is_valid, mint)


def wire_ids(
    seen: Iterable[str], is_valid: Callable[[str], object], mint: Callable[[str, int], str]
) -> dict[str, str]:
    """`map_call_ids` for the ids ``seen`` (each once, in order of appearance)."""
    if all(map(is_valid, seen)):  # the common case, at C speed with a pattern's fullmatch
        return {}
    invalid = [item for item in seen if not is_valid(item)]
    taken = {item for item in seen if is_valid(item)}
    mapping: dict[str, str] = {}
    for original in invalid:
        attempt = 0
        candidate = mint(original, attempt)
        while candidate in taken:
            attempt += 1
            candidate = mint(original, attempt)
        if not is_valid(candidate):
            raise ValueError(f"the codec minted the id {candidate!r}, which it rejects itself")
        taken.add(candidate)
        mapping[original] = candidate
    return mapping


def call_names(messages: Iterable[Message]) -> dict[str, str]:
    """Each tool-call id of the assistant messages and the name of the tool it calls (the
    first call's, should an id repeat)."""
    names: dict[str, str] = {}
    for message in messages:
        if message.role == "assistant":
            for part in message.parts:
                if type(part) is ToolCallPart:
                    names.setdefault(part.id, part.name)
    return names


def name_results_after_calls(messages: Sequence[Message]) -> list[Message]:
    """Each tool result named after its call, as ``decode`` reads it from formats without a
    name on results; results with no call keep their name."""
    names = call_names(messages)
    out: list[Message] = []
    for message in messages:
        if message.role == "tool":
            parts = tuple(
                dataclasses.replace(part, name=names.get(part.call_id, part.name))
                if type(part) is ToolResultPart and part.name != names.get(part.call_id, part.name)
                else part
                for part in message.parts
            )
            if parts != message.parts:
                message = message.model_copy(update={"parts": parts})
        out.append(message)
    return out


compact_json: Callable[[Any], str] = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":")
).encode
"""JSON text without spaces or escapes, as the providers' own JSON strings look (one encoder
for every call)."""


def arguments_json(part: ToolCallPart) -> str:
    """A call's arguments as the JSON text OpenAI-style APIs take (compact, like their own),
    or what the model emitted, verbatim, when that was not a JSON object."""
    if part.raw_arguments is not None:
        return part.raw_arguments
    return compact_text(part.arguments)


def call_from_json(
    call_id: str,
    name: str,
    text: str,
    metadata: FrozenJsonMap = EMPTY,
    *,
    path: str = "arguments",
) -> ToolCallPart:
    """A tool call whose arguments came as JSON text (at ``path``): parsed when they are a
    JSON object, else ``arguments={}`` and the text kept verbatim in ``raw_arguments``.

    The text is read within the limits of the ``decode`` or ``decode_response`` running (the
    defaults outside one), as if it stood where ``dump_json`` puts arguments.

    Raises:
        threadline.LimitExceededError: the text holds an object beyond those limits.
        threadline.ValidationError: the call cannot be stored, naming ``path``.
    """
    limits, what = current_limits()
    arguments = parse_arguments(text, limits, what=what, path=path)
    try:
        if arguments is None:
            return ToolCallPart(
                id=call_id, name=name, arguments=EMPTY, raw_arguments=text, metadata=metadata
            )
        return ToolCallPart(
            id=call_id, name=name, arguments=freeze_json_map(arguments), metadata=metadata
        )
    except pydantic.ValidationError as error:
        raise translate_errors(error, f"cannot store the tool call at {path}") from None


def read_back_result(
    part: ToolResultPart,
    ids: Mapping[str, str],
    read_file: Callable[[FilePart], list[TextPart | FilePart]],
    *,
    empty: str | tuple[()] = "",
) -> ToolResultPart:
    """A tool result as ``decode`` reads it back from a format that keeps its texts as they
    are: the wire id, its texts without metadata, each file as ``read_file`` says, and an
    empty content tuple as ``empty``. For ``normalize_for_round_trip``."""
    content: str | tuple[TextPart | FilePart, ...]
    if isinstance(part.content, str):
        content = part.content
    else:
        items: list[TextPart | FilePart] = []
        for item in part.content:
            if isinstance(item, TextPart):
                items.append(TextPart(text=item.text))
            else:
                items.extend(read_file(item))
        content = tuple(items) if items else empty
    return ToolResultPart(
        call_id=ids.get(part.call_id, part.call_id),
        content=content,
        name=part.name,
        is_error=part.is_error,
    )


NO_CONTENT_TEXT = "[no content]"
"""The text of a tool result with nothing left to send, where the API refuses it empty
(Anthropic for a failed result, Bedrock for any); ``decode`` reads it back as ``""``."""

IN_NEXT_MESSAGE = "in the next user message"
AFTER_RESULTS = "after the tool results"
"""Where a tool result's moved files are, as its text says: in the user message after the
tool messages (OpenAI Chat, Mistral), or after the tool results of the same user turn
(a failed result on Anthropic, which takes text only)."""

_ATTACHMENTS = re.compile(r"\[files from tool result (.+)\]")
_ATTACHMENT_NOTE = re.compile(
    rf"\[file (\d+) \(([^()\s]+)\) is (?:{IN_NEXT_MESSAGE}|{AFTER_RESULTS})\]"
)


def attachment_header(wire_id: str) -> str:
    """The text before the files moved out of the tool result ``wire_id``."""
    return f"[files from tool result {wire_id}]"


def attachment_note(number: int, media_type: str, place: str = IN_NEXT_MESSAGE) -> str:
    """The text a tool result holds where its ``number``-th moved file stood."""
    return f"[file {number} ({media_type}) is {place}]"


FileDecoder: TypeAlias = Callable[[Mapping[str, Any], str, str, "Reader"], FilePart]
"""``decode_file(block, kind, path, reader)``: a format's reader of a file block."""


def text_tool_content(
    part: ToolResultPart,
    wire_id: str,
    attachments: list[dict[str, Any]],
    file_block: Callable[[FilePart], dict[str, Any] | None],
    unsupported_block: Callable[[FilePart], dict[str, Any] | None],
) -> str | list[dict[str, Any]]:
    """The ``content`` of the tool message for ``part``, in a format whose tool messages
    take text only.

    A string result is its text. A result made of parts is ``text`` blocks; each file the
    format takes (``file_block`` gives its block, else ``None``) is appended to
    ``attachments``, the content of the user message sent after the tool messages, after a
    ``[files from tool result <wire id>]`` header, and the result's text says where it went
    (``[file 1 (image/png) is in the next user message]``). A file the format cannot take
    goes through ``unsupported_block`` (the unsupported policy). A failed result's text
    starts with `TOOL_ERROR_PREFIX`.
    """
    content = part.content
    if isinstance(content, str):
        return add_error_prefix(content) if part.is_error else content
    blocks: list[dict[str, Any]] = []
    files = 0
    for item in content:
        if isinstance(item, TextPart):
            blocks.append({"type": "text", "text": item.text})
            continue
        block = file_block(item)
        if block is None:
            replacement = unsupported_block(item)
            if replacement is not None:
                blocks.append(replacement)
            continue
        files += 1
        if files == 1:
            attachments.append({"type": "text", "text": attachment_header(wire_id)})
        attachments.append(block)
        note = attachment_note(files, item.media_type)
        blocks.append({"type": "text", "text": note})
    if not blocks:
        return TOOL_ERROR_PREFIX if part.is_error else ""
    if part.is_error:
        blocks[0] = {"type": "text", "text": add_error_prefix(blocks[0]["text"])}
    return blocks


def read_text_result(
    call_id: str, content: Any, name: str | None, path: str, reader: Reader
) -> ToolResultPart:
    """The result a text-only tool message holds (``content`` a string or ``text``
    blocks), with the `TOOL_ERROR_PREFIX` read as ``is_error``.

    Raises:
        threadline.CodecError: ``content`` holds something other than text, naming ``path``.
    """
    if isinstance(content, str):
        text, is_error = strip_error_prefix(content)
        return ToolResultPart(call_id=call_id, content=text, name=name, is_error=is_error)
    parts: list[TextPart] = []
    for where, block, kind in reader.tagged_objects(content, f"{path}.content"):
        if kind != "text":
            reader.fail(f"{where}.type", f"tool messages hold text only, not {kind!r}")
        parts.append(TextPart(text=reader.str_field(block, "text", where)))
    is_error = False
    if parts:
        first, is_error = strip_error_prefix(parts[0].text)
        parts[0] = TextPart(text=first)
    return ToolResultPart(call_id=call_id, content=tuple(parts), name=name, is_error=is_error)


def fold_attachments(
    run: list[ToolResultPart],
    content: Any,
    path: str,
    reader: Reader,
    *,
    file_kinds: Collection[str],
    decode_file: FileDecoder,
) -> bool:
    """Put the files of the user message `text_tool_content` filled back into the
    results of ``run`` (the tool messages right before it), in place.

    Returns False, with ``run`` unchanged, when ``content`` (that user message's) is not
    made of attachment headers each followed by blocks of ``file_kinds``.
    """
    if not isinstance(content, list) or not content:
        return False
    by_id = {part.call_id: index for index, part in enumerate(run)}
    files: dict[str, list[FilePart]] = {}
    current: str | None = None
    for index, raw in enumerate(content):
        if not isinstance(raw, Mapping):
            return False
        kind = raw.get("type")
        if kind == "text":
            text = raw.get("text")
            match = _ATTACHMENTS.fullmatch(text) if isinstance(text, str) else None
            if match is None or match.group(1) not in by_id or match.group(1) in files:
                return False
            current = match.group(1)
            files[current] = []
        elif current is not None and kind in file_kinds:
            files[current].append(decode_file(raw, str(kind), f"{path}.content[{index}]", reader))
        else:
            return False
    for call_id, found in files.items():
        run[by_id[call_id]] = _with_files(run[by_id[call_id]], found)
    return True


def fold_moved_files(results: list[ToolResultPart], parts: Sequence[object]) -> int:
    """Put files moved out of ``results`` back, from the parts that follow them in the same
    turn: an attachment header then as many files as the result's notes name, per result,
    first. ``results`` changes in place.

    Returns how many of ``parts`` were moved files and their headers (0 when none).
    """
    by_id = {part.call_id: index for index, part in enumerate(results)}
    taken = 0
    while taken < len(parts):
        header = parts[taken]
        match = (
            _ATTACHMENTS.fullmatch(header.text)
            if type(header) is TextPart and not header.metadata
            else None
        )
        if match is None or match.group(1) not in by_id:
            break
        index = by_id.pop(match.group(1))
        wanted = _note_count(results[index])
        files = [
            part for part in parts[taken + 1 : taken + 1 + wanted] if isinstance(part, FilePart)
        ]
        if not wanted or len(files) < wanted:
            break
        results[index] = _with_files(results[index], files)
        taken += 1 + wanted
    return taken


def _note_count(result: ToolResultPart) -> int:
    if isinstance(result.content, str):
        return 0
    return sum(
        1
        for part in result.content
        if isinstance(part, TextPart) and _ATTACHMENT_NOTE.fullmatch(part.text)
    )


def _with_files(result: ToolResultPart, files: list[FilePart]) -> ToolResultPart:
    if isinstance(result.content, str):
        return result
    content: list[TextPart | FilePart] = []
    for part in result.content:
        match = _ATTACHMENT_NOTE.fullmatch(part.text) if isinstance(part, TextPart) else None
        number = int(match.group(1)) if match else 0
        content.append(files[number - 1] if match and 0 < number <= len(files) else part)
    return ToolResultPart(
        call_id=result.call_id, content=tuple(content), name=result.name, is_error=result.is_error
    )
