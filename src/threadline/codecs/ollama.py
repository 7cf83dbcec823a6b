"""Ollama's native chat API (``POST /api/chat``): ``{"messages": [...]}``.

How threadline's messages map to the wire (the ``ollama`` package's ``Message``):

- every message's ``content`` is one string, so a message whose parts hold several texts is
  sent as consecutive messages of its role, one per text (never concatenated); ``decode``
  reads each back as its own message.
- system messages stay ``role: "system"`` messages in place (Ollama takes them anywhere);
  ``encode(system=...)`` adds one first.
- user text and images: PNG, JPEG, GIF and WebP bytes go base64 in the message's ``images``
  list (a file is carried only when its bytes start like its media type, as the server
  decodes them), after the text they follow. Images by URL, other files, and files on
  assistant messages or in tool results follow the ``unsupported`` policy.
- assistant text (``content``), reasoning (``thinking``, a plain string) and tool calls
  (``tool_calls``: ``[{"function": {"name", "arguments": {...}}}]``, the arguments a JSON
  **object**). Calls carry no id: the package's ``ToolCall`` has none, and Ollama pairs a
  result with its call by order and ``tool_name``. A call whose arguments were not a JSON
  object is sent with ``{}`` (its ``raw_arguments`` cannot go).
- reasoning from Ollama goes back as ``thinking`` when the reasoning policy allows it (it is
  text only: no signature or encrypted state); ``reasoning="text"`` sends other reasoning as
  text.
- tool results become one ``role: "tool"`` message each, with ``tool_name`` (the call's tool
  name) and the text as ``content``; a result made of text parts sends them joined by
  newlines. The results after an assistant turn go in the order of its calls, so that order
  pairs them. There is no error flag: a failed result's text starts with ``[tool error] ``.

``decode`` reads all of this back (a whole request body too), giving each call the id
``call_<n>`` (``n`` counts the payload's calls from 0) unless the wire names one (``id``, as
newer servers send), and pairing each tool message with the first unanswered call of the
same ``tool_name`` (its ``tool_call_id`` when there is one). ``decode_response`` reads a
``/api/chat`` response (``stream: false``; a stream's NDJSON lines go through
`StreamAssembler`), with the counts as usage.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from typing_extensions import assert_never

from threadline._json import freeze_json_map
from threadline._usage_readers import read_usage
from threadline.codecs._media import UNKNOWN_IMAGE
from threadline.codecs._media import decode_base64
from threadline.codecs._media import encode_base64
from threadline.codecs._policies import Capabilities
from threadline.codecs._policies import Placeholder
from threadline.codecs._policies import Resolved
from threadline.codecs._reading import Reader
from threadline.codecs._reading import as_json_document
from threadline.codecs._reading import build_message
from threadline.codecs._reading import check_choice
from threadline.codecs._reading import read_payload
from threadline.codecs._reading import read_response
from threadline.codecs._reading import response_message
from threadline.codecs._reading import response_metadata
from threadline.codecs._round_trip import ReadBacks
from threadline.codecs._round_trip import RoundTrip
from threadline.codecs._round_trip import Turn
from threadline.codecs._round_trip import prepare_for
from threadline.codecs._round_trip import read_back
from threadline.codecs._tool_names import STANDARD
from threadline.codecs._tools import add_error_prefix
from threadline.codecs._tools import call_from_json
from threadline.codecs._tools import call_names
from threadline.codecs._tools import hashed_id
from threadline.codecs._tools import strip_error_prefix
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

PROVIDER = "ollama"
TOOL_NAMES = STANDARD
"""The tool names the API takes; others are sent under wire names, which
[`wire_tool_names`][threadline.codecs.wire_tool_names] maps back."""
FORMAT = "Ollama chat"
FORMAT_NAME = "ollama"
"""The codec name (the usage reader's key)."""
RESULT_JOIN = "\n"
"""What joins the texts of a tool result made of parts: ``content`` is one string."""

_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def _image_type(data: bytes) -> str | None:
    """The image type the bytes start like (PNG, JPEG, GIF, WebP), or ``None``."""
    for magic, media_type in _SIGNATURES:
        if data.startswith(magic):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _call_id(number: int) -> str:
    """The id ``decode`` gives the ``number``-th call of a payload (from 0) that has none."""
    return f"call_{number}"


def _carries_file(part: FilePart, role: str) -> bool:
    return role == "user" and part.data is not None and _image_type(part.data) == part.media_type


CAPABILITIES = Capabilities(
    replayable=lambda part: not part.redacted,
    carries_file=_carries_file,
    file_reasons={
        "assistant": "Ollama assistant messages take only text, thinking and tool calls",
        "tool": "Ollama tool messages take text only",
        "user": "Ollama takes PNG, JPEG, GIF and WebP image bytes only (no URLs, no documents)",
    },
    no_place="Ollama chat has no place for this part",
)
"""What Ollama chat carries: thinking text (never redacted reasoning), no provider tools,
image bytes in user messages."""


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
    """Write ``messages`` as ``{"messages": [...]}`` for Ollama's ``/api/chat``.

    The options, and what they raise, are those of [`threadline.encode`][threadline.encode];
    what is particular to this format:

    Args:
        system: sent first, as its own system message.
        reasoning: ``auto`` replays Ollama thinking (to its model) as ``thinking``.
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
    order = _call_order(history.messages)
    names = call_names(history.messages)
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    run: list[ToolResultPart] = []
    for index, message in enumerate(history.messages):
        role = message.role
        if role == "tool":
            run.extend(p for p in history.parts(index) if isinstance(p, ToolResultPart))
            continue
        out.extend(_tool_message(part, names) for part in _in_call_order(run, order))
        run = []
        if role == "assistant":
            out.extend(_assistant_messages(history.parts(index)))
        elif role in ("user", "system"):
            for text, images in _groups(history.parts(index)):
                item: dict[str, Any] = {"role": role, "content": text or ""}
                if images:
                    item["images"] = [encode_base64(image.data or b"") for image in images]
                out.append(item)
        # internal messages never reach a model, even with integrity="off"
    out.extend(_tool_message(part, names) for part in _in_call_order(run, order))
    return {"messages": out}


def _always(value: str) -> bool:
    """Ollama sends no call ids, so none is refused (and none mapped)."""
    return True


def _call_order(messages: Sequence[Message]) -> dict[str, int]:
    order: dict[str, int] = {}
    for message in messages:
        if message.role == "assistant":
            for part in message.parts:
                if isinstance(part, ToolCallPart):
                    order.setdefault(part.id, len(order))
    return order


def _in_call_order(run: list[ToolResultPart], order: Mapping[str, int]) -> list[ToolResultPart]:
    """A run of tool results in the order of their calls (unknown calls last, as they came):
    the order is what pairs them on Ollama."""
    return sorted(run, key=lambda part: order.get(part.call_id, len(order)))


def _groups(parts: Sequence[Resolved]) -> list[tuple[str | None, list[FilePart]]]:
    """A user or system message's parts as wire messages: one text each, with the images
    that follow it (a message's images come after its text)."""
    groups: list[tuple[str | None, list[FilePart]]] = []
    for part in parts:
        if isinstance(part, (TextPart, Placeholder)):
            groups.append((part.text, []))
        elif isinstance(part, FilePart):
            if not groups:
                groups.append((None, []))
            groups[-1][1].append(part)
        else:
            raise AssertionError(f"resolve keeps no {getattr(part, 'type', part)} part here")
    return groups


def _assistant_messages(parts: Sequence[Resolved]) -> list[dict[str, Any]]:
    """An assistant message's parts as wire messages, in order: a new one starts where a part
    cannot follow the one before it in a single message (thinking, then content, then
    calls)."""
    out: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    for part in parts:
        if isinstance(part, (TextPart, Placeholder)):
            if not part.text:
                continue  # an empty text says nothing
            if "content" in current or "tool_calls" in current:
                out.append(current)
                current = {}
            current["content"] = part.text
        elif isinstance(part, ReasoningPart):
            if not part.text:
                continue
            if current:
                out.append(current)
                current = {}
            current["thinking"] = part.text
        elif isinstance(part, ToolCallPart):
            call = {"function": {"name": part.name, "arguments": dict(part.arguments)}}
            current.setdefault("tool_calls", []).append(call)
        elif isinstance(
            part, (HookPart, FilePart, ProviderToolCallPart, ProviderToolResultPart, ToolResultPart)
        ):
            raise AssertionError(f"resolve keeps no {part.type} part on an assistant message")
        else:
            assert_never(part)
    if current:
        out.append(current)
    return [{"role": "assistant", "content": item.pop("content", ""), **item} for item in out]


def _result_text(part: ToolResultPart) -> str:
    if isinstance(part.content, str):
        text = part.content
    else:
        text = RESULT_JOIN.join(item.text for item in part.content if isinstance(item, TextPart))
    return add_error_prefix(text) if part.is_error else text


def _tool_message(part: ToolResultPart, names: Mapping[str, str]) -> dict[str, Any]:
    item: dict[str, Any] = {"role": "tool", "content": _result_text(part)}
    name = names.get(part.call_id, part.name)
    if name is not None:
        item["tool_name"] = name
    return item


# ---------------------------------------------------------------------------------------------
# decode


def decode(payload: Any, *, limits: Limits | None = None) -> list[Message]:
    """Read ``{"messages": [...]}``, a whole ``/api/chat`` request body, or a message list.

    Consecutive tool messages become one tool message. Calls without an ``id`` get
    ``call_<n>``; each tool message answers the first unanswered call named by its
    ``tool_name`` (else the first unanswered call), or the call its ``tool_call_id`` names.
    ``thinking`` becomes reasoning with ``provider="ollama"``.

    Args:
        payload: what ``encode`` returned, a whole request body, or a message list.
        limits: how much to read ([`Limits`][]); ``None`` means the defaults.

    Raises:
        threadline.LimitExceededError: the payload exceeds ``limits`` (a ``ValidationError``).
        threadline.CodecError: ``payload`` is not an Ollama chat payload; the message names
            the JSON path of the first value that does not fit.
        threadline.ValidationError: a value cannot be stored in a message.
    """
    return read_payload(_decode, payload, limits, what="ollama.decode")


@dataclasses.dataclass
class _Pairing:
    """The calls read so far that no result answered, oldest first."""

    count: int = 0
    pending: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    seeded = False
    """Whether `call` hashes the call's name and arguments into the ids it makes."""

    def call(self, given: str | None, seed: str = "") -> str:
        number, self.count = self.count, self.count + 1
        return given if given is not None else _call_id(number)

    def answer(self, given: str | None, name: str | None) -> str:
        """The call a tool message answers: the one ``given`` names (its ``tool_call_id``),
        else the first unanswered call of the tool ``name``, else the first unanswered one;
        a result with none gets an id of its own."""
        for at, (wire_id, called) in enumerate(self.pending):
            if wire_id == given or (given is None and (name is None or called == name)):
                del self.pending[at]
                return wire_id
        if given is not None:
            return given
        if self.pending:
            return self.pending.pop(0)[0]
        return _call_id(self._orphan())

    def _orphan(self) -> int:
        number, self.count = self.count, self.count + 1
        return number


def _decode(payload: Any) -> list[Message]:
    reader = Reader(FORMAT)
    wire = reader.messages(payload)
    out: list[Message] = []
    run: list[ToolResultPart] = []
    pairing = _Pairing()
    for index, raw in enumerate(wire):
        path = f"messages[{index}]"
        item = reader.expect_object(raw, path)
        role = reader.str_field(item, "role", path)
        if role == "tool":
            run.append(_decode_tool(item, path, reader, pairing))
            continue
        if run:
            out.append(build_message("tool", run, path))
            run = []
        parts: list[Any]
        if role == "assistant":
            parts = _assistant_parts(item, path, reader, model=None, pairing=pairing)
        elif role in ("user", "system"):
            parts = _content_parts(item, path, reader, images=role == "user")
        else:
            reader.fail(f"{path}.role", f"unknown role {role!r} (system, user, assistant or tool)")
        if parts:
            out.append(build_message(role, parts, path))
    if run:
        out.append(build_message("tool", run, f"messages[{len(wire) - 1}]"))
    return out


def _content(item: Mapping[str, Any], path: str, reader: Reader) -> str:
    content = item.get("content")
    return "" if content is None else reader.expect_str(content, f"{path}.content")


def _content_parts(
    item: Mapping[str, Any], path: str, reader: Reader, *, images: bool
) -> list[TextPart | FilePart]:
    text = _content(item, path, reader)
    files: list[TextPart | FilePart] = []
    raw = item.get("images")
    if raw is not None:
        if not images:
            reader.fail(f"{path}.images", "only user messages carry images")
        for number, image in enumerate(reader.expect_list(raw, f"{path}.images")):
            where = f"{path}.images[{number}]"
            data = decode_base64(reader.expect_str(image, where), reader, where)
            media_type = _image_type(data) or UNKNOWN_IMAGE
            files.append(reader.part(FilePart, image, where, media_type=media_type, data=data))
    if text or not files:
        return [TextPart(text=text), *files]
    return files


def _assistant_parts(
    item: Mapping[str, Any], path: str, reader: Reader, *, model: str | None, pairing: _Pairing
) -> list[Any]:
    parts: list[Any] = []
    thinking = reader.optional_str(item, "thinking", path)
    if thinking:
        parts.append(ReasoningPart(text=thinking, provider=PROVIDER, model=model))
    text = _content(item, path, reader)
    if text:
        parts.append(TextPart(text=text))
    calls = item.get("tool_calls")
    listed = () if calls is None else reader.expect_list(calls, f"{path}.tool_calls")
    for number, raw in enumerate(listed):
        parts.append(_decode_call(raw, f"{path}.tool_calls[{number}]", reader, pairing))
    return parts


def _decode_call(raw: Any, path: str, reader: Reader, pairing: _Pairing) -> ToolCallPart:
    call = reader.expect_object(raw, path)
    function = reader.expect_object(reader.field(call, "function", path), f"{path}.function")
    name = reader.str_field(function, "name", f"{path}.function")
    arguments = function.get("arguments")
    where = f"{path}.function.arguments"
    given = reader.optional_str(call, "id", path)
    if arguments is None:
        arguments = {}
    elif isinstance(arguments, str):  # an OpenAI-style client's JSON text
        wire_id = pairing.call(given, f"{name}|{arguments}")
        part = call_from_json(wire_id, name, arguments, path=where)
        pairing.pending.append((part.id, name))
        return part
    arguments = reader.expect_object(arguments, where)
    seed = reader.json_text(arguments, where) if pairing.seeded and given is None else ""
    wire_id = pairing.call(given, f"{name}|{seed}")
    pairing.pending.append((wire_id, name))
    return reader.part(
        ToolCallPart, call, path, id=wire_id, name=name, arguments=freeze_json_map(arguments)
    )


def _decode_tool(
    item: Mapping[str, Any], path: str, reader: Reader, pairing: _Pairing
) -> ToolResultPart:
    name = reader.optional_str(item, "tool_name", path)
    given = reader.optional_str(item, "tool_call_id", path)
    text, is_error = strip_error_prefix(_content(item, path, reader))
    if item.get("images") is not None:
        reader.fail(f"{path}.images", "tool messages carry text only")
    return ToolResultPart(
        call_id=pairing.answer(given, name), content=text, name=name, is_error=is_error
    )


# ---------------------------------------------------------------------------------------------
# decode_response

USAGE_KEYS = (
    "prompt_eval_count",
    "eval_count",
    "total_duration",
    "load_duration",
    "prompt_eval_duration",
    "eval_duration",
)
"""The response's counts and durations (nanoseconds): its usage object is these, kept
under ``ollama.usage``."""


def decode_response(
    response: Any, *, limits: Limits | None = None, choice: int = 0, model: str | None = None
) -> Message:
    """Read an ``/api/chat`` response (``message``) into an assistant message.

    Accepts the JSON dict, JSON text, or the ``ollama`` package's ``ChatResponse``.
    ``thinking`` becomes reasoning with ``provider="ollama"`` and the response's ``model``;
    calls without an ``id`` get one hashed from the response's ``created_at``, the call's
    place, name and arguments (so two responses' calls do not share one). The message's
    metadata holds ``provider``, ``model``, ``stop_reason`` (``done_reason``) and ``usage``
    (``prompt_eval_count`` in, ``eval_count`` out); ``ollama.usage`` keeps the counts and
    durations.

    Args:
        response: the response: a JSON dict, JSON text or the package's response object.
        limits: how much to read ([`Limits`][]); ``None`` means the defaults.
        choice: must be 0: a response holds one message.
        model: the model the request went to, for a response that names none: it tags
            the message and its reasoning (the response's own ``model`` wins).

    Raises:
        threadline.LimitExceededError: the response exceeds ``limits`` (a
            ``ValidationError``).
        threadline.CodecError: ``response`` is not an Ollama chat response.
        ValueError: ``choice`` is not 0.
    """
    check_choice(choice, single=FORMAT)
    return read_response(
        _decode_response,
        response,
        limits,
        format_name=FORMAT,
        what="ollama.decode_response",
        model=model,
    )


def _decode_response(response: Any) -> Message:
    reader = Reader(f"{FORMAT} response")
    document = reader.expect_object(as_json_document(response, FORMAT), "")
    message = reader.expect_object(reader.field(document, "message", ""), "message")
    model = reader.optional_str(document, "model", "")
    created = reader.optional_str(document, "created_at", "") or ""
    pairing = _ResponsePairing(created)
    parts = _assistant_parts(message, "message", reader, model=model, pairing=pairing)
    counts = {key: document[key] for key in USAGE_KEYS if document.get(key) is not None}
    usage = counts or None
    metadata = response_metadata(
        provider=PROVIDER,
        response_id=None,
        model=model,
        stop_reason=reader.optional_str(document, "done_reason", ""),
        usage=read_usage(FORMAT_NAME, usage, reader),
        raw_usage=usage,
    )
    return response_message(parts, "message", metadata)


class _ResponsePairing(_Pairing):
    """Ids for a response's calls that carry none: hashed from the response's ``created_at``
    and the call's place, so calls of different responses get different ids."""

    seeded = True

    def __init__(self, created: str) -> None:
        super().__init__()
        self.created = created

    def call(self, given: str | None, seed: str = "") -> str:
        number, self.count = self.count, self.count + 1
        if given is not None:
            return given
        return hashed_id(f"ollama|{self.created}|{number}|{seed}")


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
    [`threadline.testing.check_codec`][] ignores), Ollama chat loses exactly:

    - part metadata, filenames, reasoning's ``model``, ``signature``, ``encrypted``,
      ``item_id`` and ``summary`` (``thinking`` is text only), empty texts and empty
      reasoning of assistant messages, an empty text beside a user message's images;
    - tool-call ids: calls are numbered ``call_0``, ``call_1``... in the order they are
      sent, and results follow; the results after a turn come in the order of its calls;
      ``raw_arguments`` (sent as ``{}``); a result's parts, read back as their texts joined
      by newlines; a result's ``name`` (its call's);
    - reasoning per the reasoning policy, the parts the ``unsupported`` policy replaces or
      drops.
    """
    out = read_back(
        messages,
        ROUND_TRIP,
        model=model,
        reasoning=reasoning,
        unsupported=unsupported,
        text_files=text_files,
    )
    return _renumbered(_results_in_call_order(out))


def _results_in_call_order(messages: list[Message]) -> list[Message]:
    """Consecutive tool messages as one, its results in the order of their calls."""
    order = _call_order(messages)
    out: list[Message] = []
    for message in messages:
        if message.role == "tool" and out and out[-1].role == "tool":
            previous = out.pop()
            message = message.model_copy(update={"parts": (*previous.parts, *message.parts)})
        if message.role == "tool":
            results = [p for p in message.parts if isinstance(p, ToolResultPart)]
            message = message.model_copy(update={"parts": tuple(_in_call_order(results, order))})
        out.append(message)
    return out


def _renumbered(messages: list[Message]) -> list[Message]:
    """The ids ``decode`` gives: calls numbered in order, results paired as it pairs them."""
    pairing = _Pairing()
    out: list[Message] = []
    for message in messages:
        parts: list[Part] = []
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                wire_id = pairing.call(None)
                pairing.pending.append((wire_id, part.name))
                parts.append(dataclasses.replace(part, id=wire_id))
            elif isinstance(part, ToolResultPart):
                parts.append(dataclasses.replace(part, call_id=pairing.answer(None, part.name)))
            else:
                parts.append(part)
        out.append(message.model_copy(update={"parts": tuple(parts)}))
    return out


def _text_read_back(part: TextPart, turn: Turn) -> TextPart | None:
    if turn.role == "assistant" and not part.text:
        return None
    if turn.role != "assistant" and not part.text:
        following = turn.parts[turn.at + 1 : turn.at + 2]
        if following and isinstance(following[0], FilePart):
            return None  # content "" beside images reads back as the images alone
    return TextPart(text=part.text)


def _file_read_back(part: FilePart, turn: Turn) -> FilePart:
    return FilePart(media_type=part.media_type, data=part.data)


def _call_read_back(part: ToolCallPart, turn: Turn) -> ToolCallPart:
    return ToolCallPart(id=part.id, name=part.name, arguments=part.arguments)


def _result_read_back(part: ToolResultPart, turn: Turn) -> ToolResultPart:
    text = _result_text(dataclasses.replace(part, is_error=False))
    return ToolResultPart(
        call_id=part.call_id, content=text, name=part.name, is_error=part.is_error
    )


def _thinking_read_back(part: ReasoningPart, turn: Turn) -> ReasoningPart | None:
    if not part.text:
        return None
    return ReasoningPart(text=part.text, provider=PROVIDER)


ROUND_TRIP = RoundTrip(
    label=FORMAT,
    provider=PROVIDER,
    capabilities=CAPABILITIES,
    rule=TOOL_NAMES,
    is_valid=_always,
    parts=ReadBacks(
        text=_text_read_back,
        file=_file_read_back,
        call=_call_read_back,
        result=_result_read_back,
        reasoning=_thinking_read_back,
    ),
)
"""Ollama chat's part read-backs; `normalize_for_round_trip` numbers the calls as ``decode``
does."""
