"""OpenAI Responses (``POST /v1/responses``): ``{"input": [...], "instructions"?: str}``.

How threadline's messages map to the wire:

- ``encode(system=...)`` is the ``instructions`` parameter; system messages stay where they
  are, as ``role: "system"`` message items (``developer`` is read as system).
- user text and files: images (PNG, JPEG, GIF, WebP) by bytes (``data:`` URL) or URL as
  ``input_image``; PDFs by bytes (``file_data``, with a ``filename``: ``document.pdf`` when the
  part has none) or URL (``file_url``) as ``input_file``. Anything else follows the
  ``unsupported`` policy (the format takes no audio in history).
- assistant text is a message item of its own per text part; text that came from a Responses
  output message (``metadata["openai.item_id"]``) goes back as that output message, with its
  ``msg_...`` id, refusals, annotations and ``phase``. Empty text is never sent.
- tool calls are ``function_call`` items (``arguments`` a **JSON string**, ``call_id`` of at
  most 64 characters: longer ids get a hashed id, the same for the call and its output) with
  their ``fc_...`` item id; calls marked ``openai.custom_tool`` are ``custom_tool_call`` items.
- tool results are ``function_call_output`` items: a string, or ``input_text`` /
  ``input_image`` / ``input_file`` parts. There is no error flag: a failed result starts with
  ``[tool error] ``.
- reasoning from OpenAI is a ``reasoning`` item (``id``, ``summary``, ``encrypted_content``,
  its text as ``content``) in place, right before the items it produced, when the reasoning
  policy allows it. The API links a reasoning item to the items after it by their ids: when a
  reasoning item is not sent, the ids of the items it produced are not sent either, and a
  reasoning item whose next item carries no id is not sent. Other item ids follow the same
  rule as reasoning, the message's ``metadata["model"]`` standing for the model: they are not
  sent to another model, nor with ``reasoning="drop"``.
- OpenAI's hosted tools (web search, file search, code interpreter, image generation, MCP
  calls, tool lists and approval requests) are provider tool calls; they go back to OpenAI as
  the items they came from. Other providers' tools follow the ``unsupported`` policy.

``decode`` reads all of this back (a whole request body too); ``decode_response`` reads a
Responses API response: reasoning with its ``encrypted_content`` tagged with the response's
model, ``openai.item_id`` on text and tool-call parts, usage and the response id in metadata.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import Literal
from typing import NamedTuple
from typing import TypeAlias

from typing_extensions import assert_never

from threadline._json import freeze_json_map
from threadline._usage_readers import read_usage
from threadline.codecs._media import UNKNOWN_IMAGE
from threadline.codecs._media import data_url
from threadline.codecs._media import image_type_from_url
from threadline.codecs._media import media_type_from_url
from threadline.codecs._media import parse_data_url
from threadline.codecs._media import parse_file_data
from threadline.codecs._policies import NOT_IN_USER_MESSAGES
from threadline.codecs._policies import Capabilities
from threadline.codecs._policies import Placeholder
from threadline.codecs._policies import ProviderToolPart
from threadline.codecs._policies import Resolved
from threadline.codecs._policies import carried
from threadline.codecs._policies import for_model
from threadline.codecs._policies import is_one_of
from threadline.codecs._policies import resolve
from threadline.codecs._policies import resolve_indexed
from threadline.codecs._policies import unanchored_reasoning
from threadline.codecs._prepared import PreparedHistory
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
from threadline.codecs._tools import add_error_prefix
from threadline.codecs._tools import arguments_json
from threadline.codecs._tools import call_from_json
from threadline.codecs._tools import read_back_result
from threadline.codecs._tools import strip_error_prefix
from threadline.codecs.base import TOOL_ERROR_PREFIX
from threadline.codecs.base import EncodeOptions
from threadline.codecs.base import IntegrityMode
from threadline.codecs.base import ReasoningPolicy
from threadline.codecs.base import TextFilesPolicy
from threadline.codecs.base import UnsupportedPolicy
from threadline.limits import Limits
from threadline.limits import parse_arguments
from threadline.messages import FilePart
from threadline.messages import HookPart
from threadline.messages import Message
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
FORMAT = "OpenAI Responses"
MAX_ID_LENGTH = 64
"""The API rejects a longer ``call_id``."""
DEFAULT_PDF_FILENAME = "document.pdf"
"""Sent for a PDF without a filename."""
HOSTED_TOOLS: Mapping[str, tuple[str, ...]] = {
    "web_search_call": (),
    "file_search_call": (),
    "code_interpreter_call": ("code", "outputs"),
    "image_generation_call": ("result",),
    "mcp_call": (),
    "mcp_list_tools": (),
    "mcp_approval_request": (),
}
"""The hosted tool items sent back to OpenAI, with the keys their input type requires even
when ``null`` (``decode`` leaves nulls out)."""

ITEM_ID = "openai.item_id"
PHASE = "openai.phase"
REFUSAL = "openai.refusal"
ANNOTATIONS = "openai.annotations"
DETAIL = "openai.detail"
CUSTOM_TOOL = "openai.custom_tool"
NAMESPACE = "openai.namespace"
ITEM_TYPE = "openai.type"
REASONING_TEXT = "openai.reasoning_text"
"""Reasoning part metadata: the texts of a reasoning item's ``reasoning_text`` entries, when
it has more than one (the part's ``text`` joins them); sent back as separate entries."""

_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_PHASES = frozenset({"commentary", "final_answer"})
_DETAILS = frozenset({"low", "high", "auto", "original"})
_ANNOTATION_TYPES = frozenset(
    {"file_citation", "url_citation", "container_file_citation", "file_path"}
)
_RESULT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output"})


def _valid_id(value: str) -> bool:
    return 0 < len(value) <= MAX_ID_LENGTH


# ---------------------------------------------------------------------------------------------
# The plan of an assistant message: which parts go out, and with which item ids


_EntryKind: TypeAlias = Literal["text", "call", "reasoning", "hosted"]


class _Entry(NamedTuple):
    """One part of an assistant message as it goes out: its kind, the part (a reasoning part
    demoted to text is its text parts) and the item id it is sent with."""

    kind: _EntryKind
    part: Any
    item_id: str | None = None


def _plan(
    message: Message,
    index: int,
    options: EncodeOptions,
    history: PreparedHistory | None = None,
) -> list[_Entry]:
    """What an assistant message sends, in order (``history``: the prepared history
    ``message`` is message ``index`` of, whose parts for it are already resolved).

    A message is cut into segments, each headed by an OpenAI reasoning part; the parts of a
    segment are what that reasoning produced. A reasoning item that is not sent takes the item
    ids of its segment with it (the API rejects an ``fc_...`` or ``msg_...`` item whose
    reasoning item is missing), and a reasoning item is sent only when the next item sent is
    an output item with an id (`unanchored_reasoning`). Segments are decided last to first,
    because a segment that sends nothing leaves its reasoning item followed by the next
    segment's first item. Item ids no reasoning item heads are opaque state of the model that
    produced the message: they follow the replay rule with the message's
    ``metadata["model"]`` as the model.
    """
    own_ids = _ids_allowed(message, options)
    heads = [
        position
        for position, part in enumerate(message.parts)
        if type(part) is ReasoningPart and part.provider == PROVIDER
    ]
    if not heads:
        if history is not None:
            return _entries(history.parts(index), keep_ids=own_ids)
        return _entries(resolve(message, index, options, CAPABILITIES), keep_ids=own_ids)
    if history is not None:
        resolved = history.indexed(index)
    else:
        resolved = resolve_indexed(message, index, options, CAPABILITIES)
    # Each segment's resolved parts: the ones before the first head, then one list per head.
    segments: list[list[tuple[int, Resolved]]] = [[] for _ in range(len(heads) + 1)]
    segment = 0
    for position, part in resolved:
        while segment < len(heads) and position >= heads[segment]:
            segment += 1
        segments[segment].append((position, part))
    # The first entry sent after the segment being decided: all a decision looks at. The
    # segments are joined once at the end (prepending each would cost N squared over N).
    following: _Entry | None = None
    decided: list[list[_Entry]] = []  # last segment first
    for number in range(len(heads), -1, -1):
        parts = segments[number]
        if number == 0:
            entries = _entries((part for _, part in parts), keep_ids=own_ids)
        elif parts and parts[0][0] == heads[number - 1] and type(parts[0][1]) is ReasoningPart:
            head = parts[0][1]
            body = _entries((part for _, part in parts[1:]), keep_ids=True)
            after = body[0] if body else following
            if after is not None and _produced_by_reasoning(after):
                entries = [_Entry("reasoning", head), *body]
            else:
                entries = _entries(unanchored_reasoning(head, options), keep_ids=False)
                entries.extend(entry._replace(item_id=None) for entry in body)
        else:
            entries = _entries((part for _, part in parts), keep_ids=False)
        if entries:
            following = entries[0]
        decided.append(entries)
    return [entry for segment in reversed(decided) for entry in segment]


def _entries(parts: Iterable[Resolved], *, keep_ids: bool) -> list[_Entry]:
    """The entries ``parts`` (as `resolve` keeps them) send, with their item ids when
    ``keep_ids``."""
    out: list[_Entry] = []
    for part in parts:
        if isinstance(part, TextPart):
            if part.text:
                out.append(_Entry("text", part, _item_id(part) if keep_ids else None))
        elif isinstance(part, ToolCallPart):
            out.append(_Entry("call", part, _item_id(part) if keep_ids else None))
        elif isinstance(part, Placeholder):
            out.append(_Entry("text", TextPart(text=part.text)))
        elif isinstance(part, ProviderToolCallPart):
            out.append(_Entry("hosted", part))
        elif isinstance(
            part, (ReasoningPart, FilePart, ToolResultPart, HookPart, ProviderToolResultPart)
        ):
            # a replayed reasoning part heads its segment; files, results and other provider
            # tool parts are refused on an assistant message, hook parts left out
            raise AssertionError(f"resolve keeps no {part.type} part inside a segment")
        else:
            assert_never(part)
    return out


def _ids_allowed(message: Message, options: EncodeOptions) -> bool:
    """Whether item ids of a message that no reasoning item heads may be sent: not with
    ``reasoning="drop"``, and for a given model only when the message came from it."""
    if options.reasoning == "drop":
        return False
    model = options.model
    return model is None or for_model(model, message.metadata.get("model"))


def _has_item_id(part: ReasoningPart) -> bool:
    """Only an OpenAI ``rs_...`` id can go back: the API looks the item up by it."""
    return part.item_id is not None and part.item_id.startswith("rs_")


def _produced_by_reasoning(entry: _Entry) -> bool:
    return entry.kind == "hosted" or (entry.kind != "reasoning" and entry.item_id is not None)


def _item_id(part: TextPart | ToolCallPart) -> str | None:
    value = part.metadata.get(ITEM_ID) if part.metadata else None
    return value if isinstance(value, str) and value else None


def _hosted_type(part: ProviderToolCallPart) -> str | None:
    """The item type a provider tool call goes back as, or ``None`` when it cannot."""
    if part.provider != PROVIDER or not isinstance(part.input, Mapping):
        return None
    item_type = part.metadata.get(ITEM_TYPE)
    if not is_one_of(item_type, HOSTED_TOOLS) or "id" in part.input or "type" in part.input:
        return None
    return item_type


def _carries_provider_tool(part: ProviderToolPart, before: Sequence[object]) -> bool:
    return isinstance(part, ProviderToolCallPart) and _hosted_type(part) is not None


CAPABILITIES = Capabilities(
    replayable=_has_item_id,
    carries_file=lambda part, role: role != "assistant" and _file_kind(part) is not None,
    file_reasons={
        "assistant": "assistant messages take no files",
        "user": "Responses takes PNG, JPEG, GIF and WebP images and PDFs, by bytes or URL",
    },
    no_place="the Responses API has no place for this part",
    carries_provider_tool=_carries_provider_tool,
    provider_tool_reason="only OpenAI's own hosted tool calls can be sent back to OpenAI",
)


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
    """Write ``messages`` as ``{"input": [...], "instructions"?: str}`` for the Responses API.

    The options, and what they raise, are those of [`threadline.encode`][threadline.encode];
    what is particular to this format:

    Args:
        system: the ``instructions`` parameter.
        reasoning: ``auto`` replays OpenAI reasoning items (to their model). Item ids tied to
            a reasoning item that is not sent are left out.
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
    prepared, ids, options = history.messages, history.ids, history.options
    parts_of = history.parts  # each message\'s parts: the plan\'s, or resolved
    custom = _custom_call_ids(prepared)
    items: list[dict[str, Any]] = []
    for index, message in enumerate(prepared):
        role = message.role
        if role == "assistant":  # the plan holds the parts of a message with nothing to resolve
            _assistant_items(_plan(message, index, options, history), ids, items)
        elif role == "tool":
            for part in parts_of(index):
                if type(part) is ToolResultPart:
                    items.append(_output_item(part, ids, custom))
        elif role == "user" or role == "system":
            item = _input_message(history, index)
            if item is not None:
                items.append(item)
    payload: dict[str, Any] = {"input": items}
    if system:
        payload["instructions"] = system
    return payload


def _custom_call_ids(messages: Sequence[Message]) -> frozenset[str]:
    return frozenset(
        part.id
        for message in messages
        if message.role == "assistant"
        for part in message.parts
        if type(part) is ToolCallPart and _is_custom_call(part)
    )


def _is_custom_call(part: ToolCallPart) -> bool:
    return (
        part.metadata.get(CUSTOM_TOOL) is True
        and len(part.arguments) == 1
        and isinstance(part.arguments.get("input"), str)
    )


def _input_message(history: PreparedHistory, index: int) -> dict[str, Any] | None:
    message = history.messages[index]
    parts = message.parts
    if len(parts) == 1 and type(parts[0]) is TextPart:
        return {"type": "message", "role": message.role, "content": parts[0].text}
    content: list[dict[str, Any]] = []
    for part in history.parts(index):
        if isinstance(part, (Placeholder, TextPart)):
            content.append({"type": "input_text", "text": part.text})
        elif isinstance(part, FilePart):
            content.append(carried(_file_block(part)))
        elif isinstance(part, NOT_IN_USER_MESSAGES):
            raise AssertionError(f"resolve keeps no {part.type} part on a {message.role} message")
        else:
            assert_never(part)
    if not content:
        return None
    return {"type": "message", "role": message.role, "content": content}


def _assistant_items(
    plan: list[_Entry], ids: Mapping[str, str], items: list[dict[str, Any]]
) -> None:
    open_message: dict[str, Any] | None = None  # the output message consecutive texts join
    for entry in plan:
        part = entry.part
        if entry.kind == "text":
            if entry.item_id is None:
                open_message = None
                item = {"type": "message", "role": "assistant", "content": part.text}
                phase = _phase(part)
                if phase is not None:
                    item["phase"] = phase
                items.append(item)
            elif open_message is not None and open_message["id"] == entry.item_id:
                open_message["content"].append(_output_content(part))
            else:
                open_message = {
                    "type": "message",
                    "role": "assistant",
                    "id": entry.item_id,
                    "status": "completed",
                    "content": [_output_content(part)],
                }
                phase = _phase(part)
                if phase is not None:
                    open_message["phase"] = phase
                items.append(open_message)
            continue
        open_message = None
        if entry.kind == "call":
            items.append(_call_item(part, entry.item_id, ids))
        elif entry.kind == "reasoning":
            items.append(_reasoning_item(part))
        else:
            items.append(_hosted_item(part))


def _phase(part: TextPart) -> str | None:
    value = part.metadata.get(PHASE) if part.metadata else None
    return value if is_one_of(value, _PHASES) else None


def _output_content(part: TextPart) -> dict[str, Any]:
    if part.metadata.get(REFUSAL) is True:
        return {"type": "refusal", "refusal": part.text}
    return {"type": "output_text", "text": part.text, "annotations": _annotations(part)}


def _annotations(part: TextPart) -> list[Any]:
    """The part's Responses annotations, or ``[]`` when it has none the format can take back
    (Chat Completions annotations nest their fields under the type's name)."""
    value = part.metadata.get(ANNOTATIONS)
    if not isinstance(value, list) or not value:
        return []
    for annotation in value:
        if (
            not isinstance(annotation, Mapping)
            or not is_one_of(annotation.get("type"), _ANNOTATION_TYPES)
            or annotation["type"] in annotation
        ):
            return []
    return value


def _call_item(part: ToolCallPart, item_id: str | None, ids: Mapping[str, str]) -> dict[str, Any]:
    item: dict[str, Any]
    if _is_custom_call(part):
        item = {"type": "custom_tool_call", "call_id": ids.get(part.id, part.id), "name": part.name}
        item["input"] = part.arguments["input"]
    else:
        item = {
            "type": "function_call",
            "call_id": ids.get(part.id, part.id),
            "name": part.name,
            "arguments": arguments_json(part),
        }
    if item_id is not None:
        item["id"] = item_id
    namespace = part.metadata.get(NAMESPACE) if part.metadata else None
    if isinstance(namespace, str):
        item["namespace"] = namespace
    return item


def _reasoning_item(part: ReasoningPart) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "reasoning",
        "id": part.item_id,
        "summary": [{"type": "summary_text", "text": text} for text in part.summary],
    }
    if part.text:
        texts = _reasoning_texts(part) or [part.text]
        item["content"] = [{"type": "reasoning_text", "text": text} for text in texts]
    if part.encrypted is not None:
        item["encrypted_content"] = part.encrypted
    return item


def _reasoning_texts(part: ReasoningPart) -> list[str] | None:
    """The separate ``reasoning_text`` entries a reasoning part was read from, when they
    still make up its text."""
    texts = part.metadata.get(REASONING_TEXT) if part.metadata else None
    if (
        isinstance(texts, list)
        and len(texts) > 1
        and all(isinstance(text, str) for text in texts)
        and "".join(texts) == part.text
    ):
        return texts
    return None


def _hosted_item(part: ProviderToolCallPart) -> dict[str, Any]:
    item_type = part.metadata[ITEM_TYPE]
    item: dict[str, Any] = {"type": item_type, "id": part.id, **strip_nulls(dict(part.input))}
    for key in HOSTED_TOOLS[item_type]:
        item.setdefault(key, None)
    return item


def _output_item(
    part: ToolResultPart, ids: Mapping[str, str], custom: frozenset[str]
) -> dict[str, Any]:
    item_type = "custom_tool_call_output" if part.call_id in custom else "function_call_output"
    item: dict[str, Any] = {"type": item_type, "call_id": ids.get(part.call_id, part.call_id)}
    content = part.content
    if isinstance(content, str):
        item["output"] = add_error_prefix(content) if part.is_error else content
        return item
    output: list[dict[str, Any]] = []
    for entry in content:
        if isinstance(entry, TextPart):
            output.append({"type": "input_text", "text": entry.text})
        else:
            output.append(carried(_file_block(entry)))
    if not output:
        item["output"] = TOOL_ERROR_PREFIX if part.is_error else ""
        return item
    if part.is_error:
        if output[0]["type"] == "input_text":
            output[0] = {"type": "input_text", "text": add_error_prefix(output[0]["text"])}
        else:
            output.insert(0, {"type": "input_text", "text": TOOL_ERROR_PREFIX})
    item["output"] = output
    return item


def _file_kind(part: FilePart) -> str | None:
    """How the format carries a file (``image`` or ``pdf``), or ``None``."""
    media_type = part.media_type
    if media_type in _IMAGE_TYPES or (media_type == UNKNOWN_IMAGE and part.url is not None):
        return "image"
    if media_type == "application/pdf":
        return "pdf"
    return None


def _file_block(part: FilePart) -> dict[str, Any] | None:
    kind = _file_kind(part)
    if kind == "image":
        url = part.url if part.data is None else data_url(part.media_type, part.data)
        return {"type": "input_image", "image_url": url, "detail": _detail(part)}
    if kind is None:
        return None
    if part.data is None:
        block: dict[str, Any] = {"type": "input_file", "file_url": part.url}
        if part.filename is not None:
            block["filename"] = part.filename
        return block
    return {
        "type": "input_file",
        "file_data": data_url(part.media_type, part.data),
        "filename": part.filename or DEFAULT_PDF_FILENAME,
    }


def _detail(part: FilePart) -> str:
    value = part.metadata.get(DETAIL) if part.metadata else None
    return value if is_one_of(value, _DETAILS) else "auto"


# ---------------------------------------------------------------------------------------------
# decode


def decode(payload: Any, *, limits: Limits | None = None) -> list[Message]:
    """Read ``{"input": [...], "instructions"?: ...}``, a whole request body, or an item list.

    ``instructions`` becomes a first system message and a string ``input`` a user message.
    Consecutive assistant items (messages, reasoning, calls, hosted tool calls) become one
    assistant message, consecutive outputs one tool message.

    Args:
        payload: what ``encode`` returned, a whole request body, or a message list.
        limits: how much to read ([`Limits`][]); ``None`` means the defaults.

    Raises:
        threadline.LimitExceededError: the payload exceeds ``limits`` (a ``ValidationError``).
        threadline.CodecError: ``payload`` is not a Responses payload; the message names the
            JSON path of the first value that does not fit (an ``item_reference`` or a
            ``file_id`` refers to stored state threadline cannot fetch).
        threadline.ValidationError: a value cannot be stored in a message.
    """
    return read_payload(_decode, payload, limits, what="openai_responses.decode")


def _decode(payload: Any) -> list[Message]:
    """The reader behind `decode`, given a payload within its limits."""
    reader = Reader(FORMAT)
    out: list[Message] = []
    if isinstance(payload, Mapping):
        instructions = reader.optional_str(payload, "instructions", "")
        if instructions:
            out.append(build_message("system", [TextPart(text=instructions)], "instructions"))
        if isinstance(payload.get("input"), str):
            out.append(build_message("user", [TextPart(text=payload["input"])], "input"))
            return out
    items = reader.messages(payload, "input")
    names: dict[str, str] = {}
    run_role: str | None = None
    run: list[Any] = []
    run_path = "input"
    for index, raw in enumerate(items):
        path = f"input[{index}]"
        item = reader.expect_object(raw, path)
        role, parts = _decode_item(item, path, names, reader, model=None)
        if role != run_role or role not in ("assistant", "tool"):
            if run:
                out.append(build_message(run_role or "user", run, run_path))
            run_role, run, run_path = role, [], path
        run.extend(parts)
    if run:
        out.append(build_message(run_role or "user", run, run_path))
    return out


def _decode_item(
    item: Mapping[str, Any], path: str, names: dict[str, str], reader: Reader, *, model: str | None
) -> tuple[str, list[Any]]:
    """An input item as ``(role, parts)``."""
    item_type = item.get("type", "message")
    if item_type == "message":
        role = reader.str_field(item, "role", path)
        if role == "assistant":
            return "assistant", _decode_output_message(item, path, reader)
        if role not in ("user", "system", "developer"):
            reader.fail(
                f"{path}.role", f"unknown role {role!r} (user, assistant, system or developer)"
            )
        parts = _decode_input_content(reader.field(item, "content", path), path, reader)
        return ("user" if role == "user" else "system"), parts
    if not isinstance(item_type, str):
        reader.fail(f"{path}.type", "expected a string")
    if item_type in _RESULT_ITEMS:
        return "tool", [_decode_output(item, path, names, reader)]
    if item_type == "item_reference":
        reader.fail(
            f"{path}.type",
            "an item_reference points at an item stored by OpenAI, which threadline cannot "
            "fetch; pass the items themselves",
        )
    part = _decode_output_item(item, item_type, path, reader, model=model)
    if isinstance(part, ToolCallPart):
        names.setdefault(part.id, part.name)
    return "assistant", [part]


def _decode_input_content(content: Any, path: str, reader: Reader) -> list[TextPart | FilePart]:
    if isinstance(content, str):
        return [TextPart(text=content)]
    parts: list[TextPart | FilePart] = []
    for index, raw in enumerate(reader.expect_list(content, f"{path}.content")):
        where = f"{path}.content[{index}]"
        block = reader.expect_object(raw, where)
        parts.append(_decode_input_block(block, where, reader))
    return parts


def _decode_input_block(block: Mapping[str, Any], path: str, reader: Reader) -> TextPart | FilePart:
    kind = reader.str_field(block, "type", path)
    if kind == "input_text":
        return TextPart(text=reader.str_field(block, "text", path))
    if kind == "input_image":
        url = block.get("image_url")
        if url is None:
            reader.fail(path, _FILE_ID_PROBLEM)
        url = reader.expect_str(url, f"{path}.image_url")
        detail = reader.optional_str(block, "detail", path)
        metadata = freeze_json_map({DETAIL: detail} if detail not in (None, "auto") else None)
        inline = parse_data_url(url, reader, f"{path}.image_url")
        if inline is not None:
            return reader.part(
                FilePart, block, path, media_type=inline[0], data=inline[1], metadata=metadata
            )
        media_type = image_type_from_url(url)
        return reader.part(FilePart, block, path, media_type=media_type, url=url, metadata=metadata)
    if kind == "input_file":
        filename = reader.optional_str(block, "filename", path)
        file_data = reader.optional_str(block, "file_data", path)
        if file_data is not None:
            media_type, data = parse_file_data(
                file_data, filename, "application/pdf", reader, f"{path}.file_data"
            )
            return reader.part(
                FilePart, block, path, media_type=media_type, data=data, filename=filename
            )
        file_url = reader.optional_str(block, "file_url", path)
        if file_url is None:
            reader.fail(path, _FILE_ID_PROBLEM)
        media_type = media_type_from_url(file_url, "application/pdf")
        return reader.part(
            FilePart, block, path, media_type=media_type, url=file_url, filename=filename
        )
    raise reader.error(
        f"{path}.type", f"unknown content part {kind!r} (input_text, input_image or input_file)"
    )


_FILE_ID_PROBLEM = (
    "only files given by bytes or URL can be read: a file_id refers to an upload threadline "
    "cannot fetch"
)


def _decode_output_message(item: Mapping[str, Any], path: str, reader: Reader) -> list[TextPart]:
    content = reader.field(item, "content", path)
    common: dict[str, Any] = {}
    item_id = reader.optional_str(item, "id", path)
    if item_id:
        common[ITEM_ID] = item_id
    phase = reader.optional_str(item, "phase", path)
    if phase is not None:
        common[PHASE] = phase
    if isinstance(content, str):
        return [TextPart(text=content, metadata=freeze_json_map(common))]
    parts: list[TextPart] = []
    for where, block, kind in reader.tagged_objects(content, f"{path}.content"):
        metadata = dict(common)
        if kind in ("output_text", "input_text"):
            text = reader.str_field(block, "text", where)
            annotations = block.get("annotations")
            if annotations:
                metadata[ANNOTATIONS] = strip_nulls(
                    reader.expect_list(annotations, f"{where}.annotations")
                )
        elif kind == "refusal":
            text = reader.str_field(block, "refusal", where)
            metadata[REFUSAL] = True
        else:
            reader.fail(f"{where}.type", f"unknown content part {kind!r} (output_text or refusal)")
        parts.append(
            reader.part(TextPart, block, where, text=text, metadata=freeze_json_map(metadata))
        )
    return parts


def _decode_output_item(
    item: Mapping[str, Any], item_type: str, path: str, reader: Reader, *, model: str | None
) -> ToolCallPart | ReasoningPart | ProviderToolCallPart:
    """A ``function_call``, ``custom_tool_call``, ``reasoning`` or hosted tool item."""
    if item_type == "reasoning":
        summary = reader.expect_list(reader.field(item, "summary", path), f"{path}.summary")
        texts = []
        for index, entry in enumerate(summary):
            where = f"{path}.summary[{index}]"
            texts.append(reader.str_field(reader.expect_object(entry, where), "text", where))
        content = item.get("content") or []
        entries = [
            reader.str_field(
                reader.expect_object(entry, f"{path}.content[{index}]"),
                "text",
                f"{path}.content[{index}]",
            )
            for index, entry in enumerate(reader.expect_list(content, f"{path}.content"))
        ]
        return ReasoningPart(
            text="".join(entries),
            encrypted=reader.optional_str(item, "encrypted_content", path),
            provider=PROVIDER,
            model=model,
            item_id=reader.str_field(item, "id", path),
            summary=tuple(texts),
            metadata=freeze_json_map({REASONING_TEXT: entries} if len(entries) > 1 else None),
        )
    metadata: dict[str, Any] = {}
    item_id = reader.optional_str(item, "id", path)
    if item_type in ("function_call", "custom_tool_call"):
        if item_id:
            metadata[ITEM_ID] = item_id
        namespace = reader.optional_str(item, "namespace", path)
        if namespace is not None:
            metadata[NAMESPACE] = namespace
        call_id = reader.str_field(item, "call_id", path)
        name = reader.str_field(item, "name", path)
        if item_type == "custom_tool_call":
            metadata[CUSTOM_TOOL] = True
            text = reader.str_field(item, "input", path)
            return ToolCallPart(
                id=call_id,
                name=name,
                arguments=freeze_json_map({"input": text}),
                metadata=freeze_json_map(metadata),
            )
        text = reader.str_field(item, "arguments", path)
        return call_from_json(
            call_id, name, text, freeze_json_map(metadata), path=f"{path}.arguments"
        )
    if item_id is None:
        reader.fail(
            f"{path}.type",
            f"unknown item type {item_type!r} (message, function_call, function_call_output, "
            "reasoning, or a hosted tool call with an id)",
        )
    fields = {key: value for key, value in item.items() if key not in ("id", "type")}
    return reader.part(
        ProviderToolCallPart,
        item,
        path,
        id=item_id,
        name=item_type.removesuffix("_call"),
        input=strip_nulls(fields),
        provider=PROVIDER,
        metadata=freeze_json_map({ITEM_TYPE: item_type}),
    )


def _decode_output(
    item: Mapping[str, Any], path: str, names: Mapping[str, str], reader: Reader
) -> ToolResultPart:
    call_id = reader.str_field(item, "call_id", path)
    output = reader.field(item, "output", path)
    name = names.get(call_id)
    if isinstance(output, str):
        text, is_error = strip_error_prefix(output)
        return ToolResultPart(call_id=call_id, content=text, name=name, is_error=is_error)
    parts: list[TextPart | FilePart] = []
    for index, raw in enumerate(reader.expect_list(output, f"{path}.output")):
        where = f"{path}.output[{index}]"
        parts.append(_decode_input_block(reader.expect_object(raw, where), where, reader))
    is_error = False
    if parts and type(parts[0]) is TextPart:
        first, is_error = strip_error_prefix(parts[0].text)
        if is_error and not first and len(parts) > 1 and type(parts[1]) is not TextPart:
            del parts[0]  # the prefix encode put before a result that starts with a file
        else:
            parts[0] = TextPart(text=first)
    return ToolResultPart(call_id=call_id, content=tuple(parts), name=name, is_error=is_error)


# ---------------------------------------------------------------------------------------------
# decode_response


def decode_response(
    response: Any, *, limits: Limits | None = None, choice: int = 0, model: str | None = None
) -> Message:
    """Read a Responses API response (its ``output`` items) into an assistant message.

    Accepts the JSON dict, JSON text, or the SDK's ``Response`` object. Reasoning keeps its
    ``id`` (``item_id``), summary and ``encrypted_content`` with ``provider="openai"`` and the
    response's ``model``; text and tool-call parts keep their item id in
    ``metadata["openai.item_id"]`` (and ``openai.phase``, ``openai.annotations``,
    ``openai.refusal``); arguments that are not a JSON object are kept in ``raw_arguments``;
    hosted tool items (``web_search_call``...) become provider tool calls. The message's
    metadata holds ``provider``, ``model``, ``response_id``, ``stop_reason`` (the
    ``incomplete_details.reason``, else the ``status``) and ``usage``. A reasoning item with
    several ``reasoning_text`` entries keeps them apart in ``metadata["openai.reasoning_text"]``
    and goes back as the same entries.

    Args:
        response: the response: a JSON dict, JSON text or the SDK's response object.
        limits: how much to read ([`Limits`][]); ``None`` means the defaults.
        choice: which message to read; a Responses API response holds one, so only 0.
        model: the model the request went to, for a response that names none: it tags
            the message and its reasoning (the response's own ``model`` wins).

    Raises:
        threadline.LimitExceededError: the response exceeds ``limits`` (a
            ``ValidationError``).
        threadline.CodecError: ``response`` is not a Responses API response.
        ValueError: ``choice`` is not 0.
    """
    check_choice(choice, FORMAT)
    return read_response(
        _decode_response,
        response,
        limits,
        format_name=FORMAT,
        what="openai_responses.decode_response",
        model=model,
    )


def _decode_response(response: Any) -> Message:
    """The reader behind `decode_response`, given a document within its limits."""
    reader = Reader(f"{FORMAT} response")
    document = reader.expect_object(as_json_document(response, FORMAT), "")
    model = reader.optional_str(document, "model", "")
    parts: list[Any] = []
    for index, raw in enumerate(reader.expect_list(reader.field(document, "output", ""), "output")):
        path = f"output[{index}]"
        item = reader.expect_object(raw, path)
        item_type = reader.str_field(item, "type", path)
        if item_type == "message":
            parts.extend(_decode_output_message(item, path, reader))
        elif item_type in _RESULT_ITEMS:
            reader.fail(f"{path}.type", f"a response does not hold {item_type!r} items")
        else:
            parts.append(_decode_output_item(item, item_type, path, reader, model=model))
    usage = reader.optional_json(document, "usage", "")
    details = reader.optional_object(document, "incomplete_details", "")
    stop_reason = reader.optional_str(details, "reason", "incomplete_details") if details else None
    metadata = response_metadata(
        provider=PROVIDER,
        response_id=reader.optional_str(document, "id", ""),
        model=model,
        stop_reason=stop_reason or reader.optional_str(document, "status", ""),
        usage=read_usage("openai_responses", usage, reader),
        raw_usage=usage,
    )
    return response_message(parts, "output", metadata)


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
    [`threadline.testing.check_codec`][] ignores), the Responses format loses exactly:

    - part metadata it has no field for. Assistant text keeps ``openai.phase`` (when it is
      ``commentary`` or ``final_answer``), and, when it goes back as an output message (it has
      an ``openai.item_id`` that is sent), the id, ``openai.refusal`` and Responses
      ``openai.annotations``. Tool calls keep ``openai.item_id`` (when sent),
      ``openai.namespace`` and ``openai.custom_tool``; images keep ``openai.detail`` other
      than ``auto``; hosted tool calls keep ``openai.type``. A tool result's ``name`` is read
      back from its call;
    - reasoning per the reasoning policy: a replayed OpenAI reasoning part keeps its text,
      ``encrypted``, ``item_id`` and ``summary`` and loses ``signature``, ``redacted``,
      ``model`` and metadata; a reasoning item whose next item has no id is not sent; item
      ids tied to a reasoning item that is not sent are dropped, and so are the other item ids
      of a message from another model (its ``metadata["model"]``) or with
      ``reasoning="drop"``; ``text`` turns reasoning into text; the parts the ``unsupported``
      policy replaces or drops;
    - empty assistant text; tool-call ids over 64 characters (mapped); an empty result content
      tuple (read back as ``""``); the empty text a failed result starts with, when a file
      follows it; image filenames; the media type of an image sent by URL (from its
      extension, else ``image/*``) or of a PDF sent by URL (from its extension, else
      ``application/pdf``); a PDF without a filename sent by bytes gets ``document.pdf``;
      ``raw_arguments`` that are a JSON object are read as arguments; a hosted tool call's
      ``name`` (read from its item type) and the nulls of its input.
    """
    return read_back(
        messages,
        ROUND_TRIP,
        model=model,
        reasoning=reasoning,
        unsupported=unsupported,
        text_files=text_files,
    )


def _message_read_back(turn: Turn) -> list[Any] | None:
    """An assistant message reads back item by item, as ``encode`` planned its items."""
    if turn.role != "assistant":
        return None
    plan = _plan(turn.message, turn.index, turn.history.options)
    return _assistant_read_back(plan, turn.history.ids)


def _text_read_back(part: TextPart, turn: Turn) -> TextPart:
    return TextPart(text=part.text)


def _assistant_read_back(plan: list[_Entry], ids: Mapping[str, str]) -> list[Any]:
    """Each entry read back; consecutive texts of one output message share its ``phase``,
    which is the first text's."""
    out: list[Any] = []
    group: tuple[str, str | None] | None = None
    for entry in plan:
        phase = None
        if entry.kind == "text":
            if entry.item_id is None:
                group = None
                phase = _phase(entry.part)
            else:
                if group is None or group[0] != entry.item_id:
                    group = (entry.item_id, _phase(entry.part))
                phase = group[1]
        else:
            group = None
        out.append(_entry_read_back(entry, ids, phase))
    return out


def _entry_read_back(entry: _Entry, ids: Mapping[str, str], phase: str | None) -> Any:
    part = entry.part
    if entry.kind == "reasoning":
        texts = _reasoning_texts(part)
        return ReasoningPart(
            text=part.text,
            encrypted=part.encrypted,
            provider=PROVIDER,
            item_id=part.item_id,
            summary=part.summary,
            metadata=freeze_json_map({REASONING_TEXT: texts} if texts else None),
        )
    if entry.kind == "hosted":
        item_type = part.metadata[ITEM_TYPE]
        return ProviderToolCallPart(
            id=part.id,
            name=item_type.removesuffix("_call"),
            input=strip_nulls(dict(part.input)),
            provider=PROVIDER,
            metadata=freeze_json_map({ITEM_TYPE: item_type}),
        )
    metadata: dict[str, Any] = {}
    if entry.item_id is not None:
        metadata[ITEM_ID] = entry.item_id
    if entry.kind == "text":
        if phase is not None:
            metadata[PHASE] = phase
        if entry.item_id is not None:
            if part.metadata.get(REFUSAL) is True:
                metadata[REFUSAL] = True
            elif _annotations(part):
                metadata[ANNOTATIONS] = _annotations(part)
        return TextPart(text=part.text, metadata=freeze_json_map(metadata))
    namespace = part.metadata.get(NAMESPACE)
    if isinstance(namespace, str):
        metadata[NAMESPACE] = namespace
    call_id = ids.get(part.id, part.id)
    if _is_custom_call(part):
        metadata[CUSTOM_TOOL] = True
        return ToolCallPart(
            id=call_id, name=part.name, arguments=part.arguments, metadata=freeze_json_map(metadata)
        )
    arguments, raw = part.arguments, part.raw_arguments
    if raw is not None and parse_arguments(raw) is not None:
        arguments, raw = parse_arguments(raw), None
    return ToolCallPart(
        id=call_id,
        name=part.name,
        arguments=arguments,
        raw_arguments=raw,
        metadata=freeze_json_map(metadata),
    )


def _file_read_back(part: FilePart, turn: Turn | None = None) -> FilePart:
    """A file `resolve` kept, as ``decode`` reads it back."""
    kind = _file_kind(part)
    if kind == "image":
        detail = _detail(part)
        metadata = freeze_json_map({DETAIL: detail} if detail != "auto" else None)
        if part.url is not None:
            media_type = image_type_from_url(part.url)
            return FilePart(media_type=media_type, url=part.url, metadata=metadata)
        return FilePart(media_type=part.media_type, data=part.data, metadata=metadata)
    if kind is None:
        raise AssertionError(f"resolve kept a {part.media_type} file the format refuses")
    if part.url is not None:
        media_type = media_type_from_url(part.url, "application/pdf")
        return FilePart(media_type=media_type, url=part.url, filename=part.filename)
    filename = part.filename or DEFAULT_PDF_FILENAME
    return FilePart(media_type=part.media_type, data=part.data, filename=filename)


def _result_read_back(part: ToolResultPart, turn: Turn) -> ToolResultPart:
    result = read_back_result(part, turn.history.ids, lambda file: [_file_read_back(file)])
    content = result.content
    if (
        part.is_error
        and not isinstance(content, str)
        and len(content) > 1
        and isinstance(content[0], TextPart)
        and not content[0].text
        and not isinstance(content[1], TextPart)
    ):
        # the prefix encode puts before a failed result that starts with a file reads back alone
        return dataclasses.replace(result, content=content[1:])
    return result


ROUND_TRIP = RoundTrip(
    label=FORMAT,
    provider=PROVIDER,
    capabilities=CAPABILITIES,
    rule=TOOL_NAMES,
    is_valid=_valid_id,
    parts=ReadBacks(text=_text_read_back, file=_file_read_back, result=_result_read_back),
    read_message=_message_read_back,
)
"""The Responses format's round trip: `normalize_for_round_trip` is `read_back` of it."""
