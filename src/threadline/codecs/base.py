"""The codec contract, and the toolkit every codec (ours or a third party's) builds on.

A codec is a module with three functions, :class:`Codec`:

- ``encode(messages, *, system=None, model=None, integrity="auto", reasoning="auto",
  unsupported="placeholder") -> dict`` — the history fragment of a provider request;
- ``decode(payload) -> list[Message]`` — that fragment (or a whole request body) read back;
- ``decode_response(response) -> Message`` — the provider's reply as an assistant message.

A module may also define ``normalize_for_round_trip(messages, *, model=None,
reasoning="auto", unsupported="placeholder") -> list[Message]``: what ``decode(encode(m))``
gives back for prepared messages ``m``, up to message ids, ``created_at``, message metadata and
how parts are grouped into messages. It is the format's *declared losses*;
:func:`threadline.testing.check_codec` holds the codec to it. It may use only the losses DESIGN
allows (see ``docs/providers.md``); a module without it declares that it loses nothing else.

The rest of this module is shared machinery, so that every format applies one policy the same
way: the reasoning replay rule, the unsupported-content policy and its placeholder text, the
``[tool error] `` prefix, tool-call id mapping, the ``[conversation start]`` turn put before a
history that opens with the assistant, the files of tool results moved to a user message (for
formats whose tool messages take text only), turn merging, response metadata keys, and
readers that turn a malformed payload into a :class:`~threadline.CodecError` naming the JSON
path.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import copy
import dataclasses
import hashlib
import json
import math
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, Literal, NoReturn, Protocol, TypeAlias, TypeGuard, TypeVar, cast

import pydantic

from threadline._json import EMPTY, FrozenJsonMap, freeze_json_map
from threadline._validation import translate_errors
from threadline.errors import CodecError, ErrorDetail, UnsupportedContentError, ValidationError
from threadline.integrity import _as_messages as as_messages
from threadline.limits import (
    LimitExceededError,
    Limits,
    enforce_counts,
    enforce_limits,
    parse_arguments,
    parse_json,
    resolve_limits,
)
from threadline.messages import (
    FilePart,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    is_media_type,
)

__all__ = [
    "LEADING_USER_TEXT",
    "TOOL_ERROR_PREFIX",
    "UNKNOWN_IMAGE",
    "Codec",
    "EncodeOptions",
    "FileDecoder",
    "IntegrityMode",
    "Reader",
    "ReasoningAction",
    "ReasoningPolicy",
    "UnsupportedPolicy",
    "add_error_prefix",
    "add_leading_turn",
    "arguments_json",
    "as_json_document",
    "build_message",
    "call_from_json",
    "call_names",
    "compact_json",
    "data_url",
    "decode_base64",
    "downgrade_reasoning",
    "encode_base64",
    "fold_attachments",
    "hashed_id",
    "image_type_from_url",
    "is_blank",
    "is_leading_turn",
    "is_one_of",
    "map_call_ids",
    "media_type_from_url",
    "merge_into_turns",
    "name_results_after_calls",
    "parse_arguments",
    "parse_data_url",
    "placeholder_text",
    "prepare_for_encoding",
    "read_back_result",
    "read_payload",
    "read_response",
    "read_text_result",
    "reasoning_action",
    "response_message",
    "response_metadata",
    "strip_error_prefix",
    "strip_nulls",
    "text_tool_content",
    "unsupported_part",
    "without_leading_turn",
]

IntegrityMode: TypeAlias = Literal["auto", "strict", "off"]
"""How ``encode`` runs :func:`~threadline.prepare_messages` first (``off`` skips it)."""
ReasoningPolicy: TypeAlias = Literal["auto", "text", "drop"]
"""``auto`` replays opaque reasoning only to its producer (and model); ``text`` also sends
other reasoning as plain text; ``drop`` sends no reasoning."""
UnsupportedPolicy: TypeAlias = Literal["placeholder", "drop", "raise"]
"""What happens to a part the format cannot carry."""

_INTEGRITY_MODES = ("auto", "strict", "off")
_REASONING_POLICIES = ("auto", "text", "drop")
_UNSUPPORTED_POLICIES = ("placeholder", "drop", "raise")

TOOL_ERROR_PREFIX = "[tool error] "
"""Written before a failed tool's output by formats with no error flag on tool results."""
LEADING_USER_TEXT = "[conversation start]"
"""The text of the user turn put before a history whose first turn is the assistant's, where
the format needs a user turn first (Bedrock, Gemini) or never pairs the first message's tool
calls (Mistral); ``decode`` leaves that turn out again."""
UNKNOWN_IMAGE = "image/*"
"""The media type of an image known by a URL whose extension does not say."""


class Codec(Protocol):
    """What a wire-format module provides. Our codecs are modules, so is a third party's."""

    def encode(
        self,
        messages: Iterable[Message],
        *,
        system: str | None = None,
        model: str | None = None,
        integrity: IntegrityMode = "auto",
        reasoning: ReasoningPolicy = "auto",
        unsupported: UnsupportedPolicy = "placeholder",
    ) -> dict[str, Any]:
        """Write ``messages`` as the history fragment of a request."""
        ...

    def decode(self, payload: Any, *, limits: Limits | None = None) -> list[Message]:
        """Read a history fragment (or a whole request body) back into messages."""
        ...

    def decode_response(self, response: Any, *, limits: Limits | None = None) -> Message:
        """Read a provider response into one assistant message."""
        ...


# ---------------------------------------------------------------------------------------------
# Encoding: options, preparation and the shared policies.


@dataclasses.dataclass(frozen=True)
class EncodeOptions:
    """The options of one ``encode`` call, checked, plus what errors need to name a part."""

    provider: str
    """The ``provider`` string of the format (``openai``, ``anthropic``...)."""
    model: str | None
    """The target model; opaque reasoning from another model is not replayed."""
    reasoning: ReasoningPolicy
    """The reasoning policy."""
    unsupported: UnsupportedPolicy
    """The unsupported-content policy."""
    source: Sequence[Message] = ()
    """The caller's messages, so an error can give indices in *their* list."""

    def locate(self, message: Message, part: object, fallback: tuple[int, int]) -> tuple[int, int]:
        """The (message index, part index) of ``part`` in the caller's list, if it is there.

        Repair may drop or move messages, so the prepared list's indices can differ from the
        caller's; ids and part identity find the original. Only error paths call this.
        """
        for index, original in enumerate(self.source):
            if original.id == message.id:
                for part_index, candidate in enumerate(original.parts):
                    if candidate is part or candidate == part:
                        return index, part_index
                return index, fallback[1]
        return fallback


def prepare_for_encoding(
    messages: Iterable[Message],
    *,
    provider: str,
    model: str | None,
    integrity: str,
    reasoning: str,
    unsupported: str,
) -> tuple[list[Message], EncodeOptions]:
    """Check ``encode``'s options, then run the integrity pass the caller asked for.

    Raises:
        ValueError: an option has a value outside its documented choices.
        threadline.ValidationError: an item of ``messages`` is neither a :class:`Message` nor
            a mapping that validates as one.
        threadline.IntegrityError: ``integrity`` is ``auto`` or ``strict`` and the history
            breaks a rule that mode does not repair.
    """
    _check_choice("integrity", integrity, _INTEGRITY_MODES)
    _check_choice("reasoning", reasoning, _REASONING_POLICIES)
    _check_choice("unsupported", unsupported, _UNSUPPORTED_POLICIES)
    if model is not None and not isinstance(model, str):
        raise TypeError(f"model must be a str or None, not {type(model).__name__}")
    source = _as_messages(messages)
    if integrity == "off":
        prepared = source
    else:
        from threadline.integrity import prepare_messages

        prepared = prepare_messages(source, mode=cast(Literal["auto", "strict"], integrity))
    options = EncodeOptions(
        provider=provider,
        model=model,
        reasoning=cast(ReasoningPolicy, reasoning),
        unsupported=cast(UnsupportedPolicy, unsupported),
        source=source,
    )
    return prepared, options


def _as_messages(messages: Iterable[Message]) -> list[Message]:
    if isinstance(messages, (str, bytes, bytearray, Mapping)) or not isinstance(messages, Iterable):
        raise ValidationError(
            f"encode takes a sequence of Message, not {type(messages).__name__}; wrap a single "
            "message in a list",
            [ErrorDetail("messages", "not a sequence of messages", "type")],
        )
    return as_messages(list(messages), "encode")


def _check_choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        allowed = ", ".join(repr(choice) for choice in choices)
        raise ValueError(f"{name} must be one of {allowed}, not {value!r}")


ReasoningAction: TypeAlias = Literal["replay", "text", "drop"]


def reasoning_action(
    part: ReasoningPart, options: EncodeOptions, *, replayable: bool
) -> ReasoningAction:
    """Decide what a format does with a reasoning part.

    Opaque state is replayed only to the provider that produced it, only when the target
    ``model`` is unknown or is the part's model, and only when the format can carry it
    (``replayable``: Anthropic needs a signature, OpenAI Chat has no field at all). Otherwise
    ``reasoning="text"`` sends the readable text as plain text and ``"auto"`` drops it.
    """
    if options.reasoning == "drop":
        return "drop"
    if (
        replayable
        and part.provider == options.provider
        and (options.model is None or options.model == part.model)
    ):
        return "replay"
    return "text" if options.reasoning == "text" else "drop"


def downgrade_reasoning(part: ReasoningPart) -> list[TextPart]:
    """The readable text of a reasoning part as text parts (none for redacted reasoning).

    The text itself when there is one, else one text part per summary entry: parts are never
    joined, so no separator is invented.
    """
    if part.text:
        return [TextPart(text=part.text)]
    return [TextPart(text=entry) for entry in part.summary if entry]


def is_one_of(value: object, choices: Collection[str]) -> TypeGuard[str]:
    """Whether ``value`` is one of the strings ``choices``.

    For values read from metadata or a payload, which may be any JSON: ``value in choices``
    raises ``TypeError`` for a list or an object when ``choices`` is a set or a dict.
    """
    return isinstance(value, str) and value in choices


def is_blank(text: str) -> bool:
    """Empty or whitespace only: text some APIs refuse in a text block."""
    return not text or text.isspace()


def placeholder_text(part: object, provider: str) -> str:
    """``[<media_type> omitted: not supported by <provider>]``.

    For a part that is not a file, the part's ``type`` tag stands in for the media type
    (``[provider_tool_call omitted: ...]``).
    """
    label = part.media_type if isinstance(part, FilePart) else getattr(part, "type", "part")
    return f"[{label} omitted: not supported by {provider}]"


def unsupported_part(
    part: object,
    message: Message,
    position: tuple[int, int],
    options: EncodeOptions,
    *,
    reason: str,
) -> TextPart | None:
    """Apply the ``unsupported`` policy to a part the format cannot carry.

    Returns the placeholder text part, or ``None`` to drop the part.

    Args:
        part: the part (or the file inside a tool result) that cannot be sent.
        message: the prepared message holding it.
        position: its (message index, part index) in the prepared list.
        options: the encode options.
        reason: why the format cannot carry it, for the error message.

    Raises:
        threadline.UnsupportedContentError: ``unsupported="raise"``.
    """
    if options.unsupported == "placeholder":
        return TextPart(text=placeholder_text(part, options.provider))
    if options.unsupported == "drop":
        return None
    label = part.media_type if isinstance(part, FilePart) else getattr(part, "type", "part")
    index, part_index = options.locate(message, part, position)
    raise UnsupportedContentError(
        f"{options.provider} cannot carry the {label} part at messages[{index}].parts"
        f"[{part_index}] (message id {message.id!r}): {reason}. Pass "
        "unsupported='placeholder' to send a placeholder text instead, or 'drop' to leave it out",
        provider=options.provider,
        message_index=index,
        part_index=part_index,
    )


# ---------------------------------------------------------------------------------------------
# Tool calls, tool results and ids.


def add_error_prefix(text: str) -> str:
    """``text`` with :data:`TOOL_ERROR_PREFIX` before it."""
    return TOOL_ERROR_PREFIX + text


def strip_error_prefix(text: str) -> tuple[str, bool]:
    """``(text without the prefix, True)`` when ``text`` starts with it, else ``(text, False)``."""
    if text.startswith(TOOL_ERROR_PREFIX):
        return text[len(TOOL_ERROR_PREFIX) :], True
    return text, False


def hashed_id(original: str, attempt: int = 0, *, prefix: str = "call_", size: int = 24) -> str:
    """A short id derived from ``original`` (and a collision ``attempt``): ``prefix`` + hex.

    24 hex digits (96 bits) make an accidental collision negligible; :func:`map_call_ids`
    still checks and retries with the next ``attempt``.
    """
    seed = original if attempt == 0 else f"{original}#{attempt}"
    # surrogatepass: ids read from hostile JSON may hold lone surrogates; hashing must not fail.
    return prefix + hashlib.sha256(seed.encode("utf-8", "surrogatepass")).hexdigest()[:size]


def map_call_ids(
    messages: Iterable[Message],
    *,
    is_valid: Callable[[str], bool],
    mint: Callable[[str, int], str] = hashed_id,
) -> dict[str, str]:
    """Wire ids for the tool-call ids a format would reject; valid ids are left out (kept).

    Deterministic (depends only on the ids, in order of appearance), collision-free (a minted
    id never equals a kept id or another minted one) and one mapping for the whole history, so
    a call and its result always get the same wire id. Stored ids are never changed: codecs
    look ids up with ``mapping.get(id, id)``.

    Args:
        messages: the prepared history.
        is_valid: whether the format accepts an id as it is.
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
    invalid = [item for item in seen if not is_valid(item)]
    if not invalid:
        return {}
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
    return compact_json(part.arguments)


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
    limits, what = _READING.get()
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


# ---------------------------------------------------------------------------------------------
# Turns: merging, and the placeholder user turn before a history that opens with the assistant.


def merge_into_turns(
    turns: list[dict[str, Any]],
    role: str,
    blocks: list[dict[str, Any]],
    *,
    key: str = "content",
    is_result: Callable[[Mapping[str, Any]], bool] | None = None,
) -> None:
    """Add one message's ``blocks`` as a turn of ``role``, or to the last turn when it has
    that role: one block per part, text never joined.

    With ``is_result``, a message of tool results merged into a turn that already holds
    other blocks goes before them (Anthropic and Bedrock refuse a tool result after text).
    """
    if not turns or turns[-1]["role"] != role:
        turns.append({"role": role, key: blocks})
        return
    content: list[dict[str, Any]] = turns[-1][key]
    if is_result is None or not is_result(blocks[0]) or is_result(content[-1]):
        content.extend(blocks)
        return
    first_other = next(i for i, block in enumerate(content) if not is_result(block))
    content[first_other:first_other] = blocks


def add_leading_turn(
    turns: list[dict[str, Any]], key: str, content: Any, *, assistant_role: str = "assistant"
) -> None:
    """Put a user turn whose ``key`` is ``content`` (:data:`LEADING_USER_TEXT` as the format
    writes it) first, when ``turns`` start with the assistant's."""
    if turns and turns[0]["role"] == assistant_role:
        turns.insert(0, {"role": "user", key: copy.deepcopy(content)})


def is_leading_turn(
    role: str,
    content: Any,
    wire: Sequence[Any],
    *,
    placeholder: Any,
    assistant_role: str = "assistant",
) -> bool:
    """Whether the first turn of ``wire`` (its ``role`` and ``content`` as read) is the one
    :func:`add_leading_turn` writes, with ``placeholder`` as its content: ``decode`` leaves
    it out."""
    if isinstance(content, tuple):
        content = list(content)
    return (
        role == "user"
        and content == placeholder
        and len(wire) > 1
        and isinstance(wire[1], Mapping)
        and wire[1].get("role") == assistant_role
    )


def without_leading_turn(messages: list[Message]) -> list[Message]:
    """``messages`` without what ``decode`` leaves out of a format that lifts leading system
    messages and merges consecutive user messages: a first user turn that reads as the one
    :func:`add_leading_turn` writes. For ``normalize_for_round_trip``."""
    start = next((i for i, m in enumerate(messages) if m.role != "system"), len(messages))
    end = next((i for i in range(start, len(messages)) if messages[i].role == "assistant"), None)
    if end is None or end == start:
        return messages
    turn = [part for message in messages[start:end] for part in message.parts]
    if turn != [TextPart(text=LEADING_USER_TEXT)] or messages[start].role != "user":
        return messages
    return messages[:start] + messages[end:]


# ---------------------------------------------------------------------------------------------
# Tool messages that take text only (OpenAI Chat, Mistral): a result's files go in the user
# message after the tool messages, and ``decode`` puts them back.

_ATTACHMENTS = re.compile(r"\[files from tool result (.+)\]")
_ATTACHMENT_NOTE = re.compile(r"\[file (\d+) \(([^()\s]+)\) is in the next user message\]")

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
    starts with :data:`TOOL_ERROR_PREFIX`.
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
            attachments.append({"type": "text", "text": f"[files from tool result {wire_id}]"})
        attachments.append(block)
        note = f"[file {files} ({item.media_type}) is in the next user message]"
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
    blocks), with the :data:`TOOL_ERROR_PREFIX` read as ``is_error``.

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
    """Put the files of the user message :func:`text_tool_content` filled back into the
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


# ---------------------------------------------------------------------------------------------
# Decoding: reading payloads with paths, responses, metadata.


def as_json_document(response: Any, format_name: str) -> Any:
    """A response as JSON values: a mapping as is, an SDK model dumped, JSON text parsed
    (within the limits of the ``decode_response`` running, the defaults outside one).

    Raises:
        threadline.LimitExceededError: the text exceeds those limits.
        threadline.CodecError: ``response`` is none of these.
    """
    if isinstance(response, Mapping):
        return response
    dump = getattr(response, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(response, (str, bytes, bytearray)):
        limits, what = _READING.get()
        try:
            return parse_json(response, limits, what=what)
        except LimitExceededError:
            raise
        except ValidationError as error:
            detail = error.errors[0].message if error.errors else str(error)
            raise CodecError(f"not a valid {format_name} response: {detail}") from None
    raise CodecError(
        f"not a valid {format_name} response: expected a JSON object (dict), an SDK response "
        f"object or JSON text, got {type(response).__name__}"
    )


def read_payload(
    read: Callable[[Any], list[Message]], payload: Any, limits: Limits | None, *, what: str
) -> list[Message]:
    """``read(payload)`` within ``limits``: every codec's ``decode`` is this around its reader.

    The payload's size, nesting and strings are checked before it is read, the decoded
    messages and parts counted after; JSON text inside it (tool arguments) is parsed within
    the same limits as it is read. Text is not a payload: ``read`` refuses it.

    Raises:
        threadline.LimitExceededError: the payload exceeds a limit (``what`` names the codec).
        threadline.ValidationError: a string or key of the payload is not Unicode text (a lone
            surrogate, as ``json.loads`` reads ``"\\ud800"``), which no message can hold.
    """
    checked = resolve_limits(limits)
    if not isinstance(payload, (str, bytes, bytearray)):
        enforce_limits(payload, checked, what=what)
    with _reading(checked, what):
        messages = read(payload)
    enforce_counts(messages, checked, what=what)
    return messages


def read_response(
    read: Callable[[Any], Message],
    response: Any,
    limits: Limits | None,
    *,
    format_name: str,
    what: str,
    dump: Callable[[Any], Any] | None = None,
) -> Message:
    """``read(document)`` on a response within ``limits``: every codec's ``decode_response``
    is this around its reader.

    JSON text is parsed here, by a parser that refuses to nest deeper than the limits allow
    (``json.loads`` would exhaust the stack first); an SDK object is dumped to JSON values,
    by ``dump`` when the format needs its own dump (``model_dump(mode="json")`` otherwise).
    The document is checked before it is read, the parts counted after; JSON text inside it
    (tool arguments) is parsed within the same limits as it is read.

    Raises:
        threadline.LimitExceededError: the response exceeds a limit.
        threadline.ValidationError: a string in ``response`` is not Unicode text (a lone
            surrogate), which no message can hold.
        threadline.CodecError: ``response`` is text that is not JSON.
    """
    checked = resolve_limits(limits)
    document = response
    if not isinstance(response, Mapping) and callable(getattr(response, "model_dump", None)):
        document = dump(response) if dump is not None else response.model_dump(mode="json")
    try:
        document = enforce_limits(document, checked, what=what)
    except LimitExceededError:
        raise
    except ValidationError as error:  # text that is not JSON
        if error.errors and error.errors[0].type == "string_unicode":
            raise  # a string no message can hold, as from decode
        detail = error.errors[0].message if error.errors else str(error)
        raise CodecError(f"not a valid {format_name} response: {detail}") from None
    with _reading(checked, what):
        message = read(document)
    enforce_counts([message], checked, what=what)
    return message


_T = TypeVar("_T")

_STRICT_JSON: Callable[[Any], str] = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
_STRICT_COMPACT_JSON: Callable[[Any], str] = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False
).encode
_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


class Reader:
    """Reads a decoded JSON payload, raising :class:`~threadline.CodecError` with the JSON
    path of the first value that does not fit the format.

    A payload given as Python values need not be JSON at all: it can hold ``NaN``, bytes or
    object keys that are not strings (and JSON text parsed here may hold ``NaN`` and
    ``Infinity``, which the parser accepts). Values a codec keeps as they are (tool
    arguments, provider tool content, metadata) are checked where they become parts, by
    :meth:`part`, at no cost when they are valid; values it writes as JSON text go through
    :meth:`json_text`; :meth:`check_json` checks the few small ones kept elsewhere.
    """

    __slots__ = ("format_name",)

    def __init__(self, format_name: str) -> None:
        self.format_name = format_name

    def error(self, path: str, problem: str) -> CodecError:
        """The error for the value at ``path``."""
        where = path or "the top level"
        return CodecError(f"not a valid {self.format_name} payload: {where}: {problem}")

    def fail(self, path: str, problem: str) -> NoReturn:
        """Raise the error for the value at ``path``."""
        raise self.error(path, problem)

    def expect_object(self, value: Any, path: str) -> Mapping[str, Any]:
        """``value`` if it is a JSON object."""
        if not isinstance(value, Mapping):
            self.fail(path, f"expected an object, got {_kind(value)}")
        return value

    def expect_list(self, value: Any, path: str) -> Sequence[Any]:
        """``value`` if it is a JSON array."""
        if not isinstance(value, (list, tuple)):
            self.fail(path, f"expected an array, got {_kind(value)}")
        return value

    def expect_str(self, value: Any, path: str) -> str:
        """``value`` if it is a string."""
        if not isinstance(value, str):
            self.fail(path, f"expected a string, got {_kind(value)}")
        return value

    def media_type(self, value: Any, path: str) -> str:
        """``value`` if it is a string that names a media type (``image/png``), as
        :func:`~threadline.messages.is_media_type` says."""
        text = self.expect_str(value, path)
        if not is_media_type(text):
            self.fail(
                path,
                f"{repr(text)[:80]} is not a media type such as 'image/png' or 'application/pdf'",
            )
        return text

    def utf8(self, text: str, path: str) -> bytes:
        """``text`` (at ``path``) as UTF-8 bytes: the data of a text document.

        Raises:
            threadline.CodecError: ``text`` holds a lone surrogate (``"\\ud800"``, which
                :func:`json.loads` accepts), which UTF-8 cannot encode.
        """
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError as error:
            self.fail(path, f"not valid Unicode: a lone surrogate at index {error.start}")

    def check_json(self, value: Any, path: str) -> None:
        """Raise the error for the first value inside ``value`` (at ``path``) that JSON cannot
        hold: ``NaN`` or an infinite number, an object key that is not a string, or a Python
        value of another type (bytes, a set...).

        Iterative, so nesting costs no stack; the payload's limits bound its depth anyway.
        """
        stack: list[tuple[Any, str]] = [(value, path)]
        while stack:
            item, where = stack.pop()
            if item is None or isinstance(item, (str, int)):  # bool is an int
                continue
            if isinstance(item, float):
                if not math.isfinite(item):
                    self.fail(where, f"{_number_name(item)} is not a JSON value")
                continue
            if isinstance(item, Mapping):
                members: list[tuple[Any, str]] = []
                for key, inner in item.items():
                    if not isinstance(key, str):
                        self.fail(
                            where,
                            f"an object key is a {type(key).__name__}: JSON object keys are "
                            "strings",
                        )
                    members.append((inner, _member(where, key)))
                stack.extend(reversed(members))
            elif isinstance(item, (list, tuple)):
                stack.extend((item[i], f"{where}[{i}]") for i in range(len(item) - 1, -1, -1))
            else:
                self.fail(where, f"a {type(item).__name__} value is not JSON")

    def json_text(self, value: Any, path: str, *, compact: bool = True) -> str:
        """``value`` (at ``path``) as JSON text: compact (``{"a":1}``) or, with
        ``compact=False``, as :func:`json.dumps` spaces it (``{"a": 1}``).

        Raises:
            threadline.CodecError: ``value`` holds something JSON cannot (``NaN``, bytes...),
                naming its path.
        """
        try:
            return (_STRICT_COMPACT_JSON if compact else _STRICT_JSON)(value)
        except (TypeError, ValueError) as error:
            self.check_json(value, path)
            self.fail(path, f"cannot be written as JSON ({error})")

    def part(self, cls: Callable[..., _T], wire: Any, path: str, /, **fields: Any) -> _T:
        """``cls(**fields)``: a part built from the wire value ``wire`` at ``path``.

        Parts check the values they keep as they are built (tool arguments and provider tool
        content must be JSON, a media type must name one), so a payload's bad value surfaces
        here as pydantic's error: this raises the reader's error for it instead, naming the
        value's path inside ``wire``. Nothing is searched unless the part is invalid.

        Raises:
            threadline.CodecError: the part cannot hold a value of ``fields``.
        """
        try:
            return cls(**fields)
        except pydantic.ValidationError as error:
            self.check_json(wire, path)
            detail = translate_errors(error, "").errors[0]
            where = f"{detail.path}: " if detail.path else ""
            raise self.error(path, f"cannot be stored: {where}{detail.message}") from None

    def optional_count(self, obj: Mapping[str, Any] | None, key: str, path: str) -> int | None:
        """An optional token count of ``obj``: a non-negative integer (``None`` when absent
        or null, as SDK responses dump counts they do not have, or when ``obj`` is ``None``)."""
        value = None if obj is None else obj.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            shown = repr(value) if type(value) is float else _kind(value)
        elif value < 0:
            shown = "a negative number"  # not repr(): an int of 5,000 digits has none
        else:
            return value
        raise self.error(
            _join(path, key), f"expected a count (a non-negative integer), got {shown}"
        )

    def optional_json(
        self, obj: Mapping[str, Any], key: str, path: str
    ) -> Mapping[str, Any] | None:
        """An optional object key of ``obj`` kept as it is (usage, say): checked to be JSON."""
        value = self.optional_object(obj, key, path)
        if value is not None:
            self.check_json(value, _join(path, key))
        return value

    def field(self, obj: Mapping[str, Any], key: str, path: str) -> Any:
        """A required key of ``obj``."""
        if key not in obj or obj[key] is None:
            self.fail(f"{path}.{key}" if path else key, "required but missing")
        return obj[key]

    def str_field(self, obj: Mapping[str, Any], key: str, path: str) -> str:
        """A required string key of ``obj``."""
        return self.expect_str(self.field(obj, key, path), _join(path, key))

    def optional_str(self, obj: Mapping[str, Any], key: str, path: str) -> str | None:
        """An optional string key of ``obj`` (``None`` when absent or null)."""
        value = obj.get(key)
        return None if value is None else self.expect_str(value, _join(path, key))

    def optional_object(
        self, obj: Mapping[str, Any], key: str, path: str
    ) -> Mapping[str, Any] | None:
        """An optional object key of ``obj`` (``None`` when absent or null)."""
        value = obj.get(key)
        return None if value is None else self.expect_object(value, _join(path, key))

    def tagged_objects(self, value: Any, path: str) -> Iterator[tuple[str, Mapping[str, Any], str]]:
        """Each item of the array ``value`` as ``(its path, the object, its "type")``."""
        for index, raw in enumerate(self.expect_list(value, path)):
            where = f"{path}[{index}]"
            item = self.expect_object(raw, where)
            yield where, item, self.str_field(item, "type", where)

    def messages(self, payload: Any, key: str = "messages") -> Sequence[Any]:
        """The message list of a payload: ``payload[key]``, or the payload itself if a list."""
        if isinstance(payload, (list, tuple)):
            return payload
        if isinstance(payload, Mapping):
            if key not in payload:
                self.fail(key, "required but missing (pass what encode returned, or the body)")
            return self.expect_list(payload[key], key)
        raise self.error(
            "", f"expected an object with {key!r} or a list of messages, got {_kind(payload)}"
        )


def build_message(
    role: str, parts: Sequence[object], path: str, metadata: Mapping[str, Any] | None = None
) -> Message:
    """A decoded message; values threadline cannot store raise with the payload's path.

    Raises:
        threadline.ValidationError: a part holds a value a message cannot (a non-JSON number
            in tool arguments, say), naming ``path``.
    """
    fields: dict[str, Any] = {"role": role, "parts": tuple(parts)}
    if metadata:
        fields["metadata"] = metadata
    try:
        return Message(**fields)
    except pydantic.ValidationError as error:
        raise translate_errors(error, f"cannot store the message at {path}") from None


def response_message(parts: Sequence[object], path: str, metadata: Mapping[str, Any]) -> Message:
    """The assistant message ``decode_response`` returns; a response with no content gives
    one empty text part (a message holds at least one part).

    Raises:
        threadline.ValidationError: a part holds a value a message cannot, naming ``path``.
    """
    return build_message("assistant", parts or [TextPart(text="")], path, metadata)


_READING: ContextVar[tuple[Limits, str]] = ContextVar(
    "threadline_codec_reading", default=(resolve_limits(None), "decode")
)
"""The limits of the ``decode`` or ``decode_response`` running, and its name: readers pass a
:class:`Reader` down, not the limits, and only JSON text inside a payload needs them."""


@contextlib.contextmanager
def _reading(limits: Limits, what: str) -> Iterator[None]:
    token = _READING.set((limits, what))
    try:
        yield
    finally:
        _READING.reset(token)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _member(path: str, key: str) -> str:
    """The path of ``key`` in the object at ``path``: ``path.key``, or ``path["a key"]`` for a
    key that is not a plain name."""
    if _NAME.fullmatch(key):
        return _join(path, key)
    return f"{path}[{json.dumps(key)}]"


def _number_name(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


def _kind(value: object) -> str:
    if value is None:
        return "null"
    kinds: dict[type, str] = {
        dict: "an object",
        list: "an array",
        tuple: "an array",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
    }
    return kinds.get(type(value), type(value).__name__)


def encode_base64(data: bytes) -> str:
    """Standard base64 (``+/``, padded), what ``data:`` URLs and provider APIs expect."""
    return base64.b64encode(data).decode("ascii")


def decode_base64(text: str, reader: Reader, path: str) -> bytes:
    """Bytes from standard (or URL-safe) base64.

    Raises:
        threadline.CodecError: ``text`` is not base64, naming ``path``.
    """
    try:
        if "-" in text or "_" in text:
            return base64.b64decode(text, altchars=b"-_", validate=True)
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as error:
        reader.fail(path, f"not valid base64 ({error})")


def data_url(media_type: str, data: bytes) -> str:
    """``data:<media_type>;base64,<standard base64>``."""
    return f"data:{media_type};base64,{encode_base64(data)}"


def parse_data_url(url: str, reader: Reader, path: str) -> tuple[str, bytes] | None:
    """``(media_type, bytes)`` of a ``data:`` URL, or ``None`` for any other URL.

    Raises:
        threadline.CodecError: a ``data:`` URL whose data cannot be decoded, or whose media
            type is not one, naming ``path``.
    """
    if not url.startswith("data:"):
        return None
    header, comma, body = url[5:].partition(",")
    if not comma:
        reader.fail(path, "a data: URL needs a comma before its data")
    media_type, _, encoding = header.partition(";")
    media_type = media_type or "text/plain"
    if not is_media_type(media_type):
        shown = repr(media_type)[:80]
        reader.fail(path, f"the data: URL's {shown} is not a media type such as 'image/png'")
    if encoding == "base64" or header.endswith(";base64"):
        return media_type, decode_base64(body, reader, path)
    from urllib.parse import unquote_to_bytes

    return media_type, unquote_to_bytes(body)


_EXTENSION_TYPES = {
    "png": "image/png",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
    "pdf": "application/pdf",
    "txt": "text/plain",
    "wav": "audio/wav",
    "mp3": "audio/mpeg",
}


def media_type_from_url(url: str, default: str) -> str:
    """The media type a URL's file extension implies, else ``default``.

    A fixed table, not :mod:`mimetypes`: that reads the system's tables, and a decoded history
    must not depend on the machine that decoded it.
    """
    path = url.split("?", 1)[0].split("#", 1)[0]
    name = path.rsplit("/", 1)[-1]
    if "." not in name:
        return default
    return _EXTENSION_TYPES.get(name.rsplit(".", 1)[-1].lower(), default)


def image_type_from_url(url: str) -> str:
    """The media type of an image known by its URL only: from the URL's extension when that
    names an image type, else :data:`UNKNOWN_IMAGE`."""
    media_type = media_type_from_url(url, UNKNOWN_IMAGE)
    return media_type if media_type.startswith("image/") else UNKNOWN_IMAGE


def response_metadata(
    *,
    provider: str,
    response_id: str | None,
    model: str | None,
    stop_reason: str | None,
    usage: Mapping[str, Any] | None,
    input_tokens: int | None,
    output_tokens: int | None,
) -> dict[str, Any]:
    """The message metadata every ``decode_response`` writes, under the same keys everywhere.

    ``provider``, ``model``, ``response_id``, ``stop_reason`` (the provider's own value) and
    ``usage``: the provider's usage object (nulls left out) with ``input_tokens`` and
    ``output_tokens`` always present, whatever the provider calls them.
    """
    metadata: dict[str, Any] = {"provider": provider}
    if model is not None:
        metadata["model"] = model
    if response_id is not None:
        metadata["response_id"] = response_id
    if stop_reason is not None:
        metadata["stop_reason"] = stop_reason
    if usage is not None or input_tokens is not None or output_tokens is not None:
        counts = strip_nulls(dict(usage or {}))
        counts["input_tokens"] = input_tokens
        counts["output_tokens"] = output_tokens
        metadata["usage"] = counts
    return metadata


def strip_nulls(value: Any) -> Any:
    """``value`` with every ``null`` member of its objects left out, recursively.

    SDK response models dump every optional field, ``null`` when absent; the request types of
    the same API often refuse ``null`` for those fields, so responses are kept without them.
    """
    if isinstance(value, Mapping):
        return {key: strip_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [strip_nulls(item) for item in value]
    return value
