"""Google Gemini (``models/{model}:generateContent``): ``{"contents": [...],
"systemInstruction"?: {...}}`` with the REST API's (camelCase) field names.

How threadline's messages map to the wire:

- leading system messages (and ``encode(system=...)``) become ``systemInstruction``, one text
  part per text part. A system message later in the history goes in the user turn in place
  (the API has no system turn), each text as a part ``<system>\n…\n</system>`` so the model
  can tell it from the user's words; ``decode`` reads such a part back as a system message.
- roles are ``user`` and ``model``; consecutive messages of one wire role are merged into one
  Content (part order kept, text never concatenated). A history whose first turn would be a
  ``model`` turn gets a user turn ``[conversation start]`` before it. Empty text is never
  sent (the API rejects it), except an empty text that carries a thought signature.
- tool calls are ``functionCall`` parts (``args`` an **object**) and tool results
  ``functionResponse`` parts of the user turn right after the call turn, one per call. Every
  call and response carries an ``id`` (ids outside ``[A-Za-z0-9_.:-]{1,64}`` get a hashed id,
  the same for the call and its result), so pairing never depends on position. A result's
  ``response`` is ``{"output": ...}``, or ``{"error": ...}`` for a failed one: a string
  result as the string, a result made of parts as a list of its texts with ``{"$ref":
  "file-N"}`` where each file goes, the files themselves in ``functionResponse.parts``.
- files are ``inlineData`` (bytes) or ``fileData`` (URL) parts, of the media types Gemini
  documents (images, audio, video, PDF and text documents; tool results take images, PDF and
  plain text); anything else follows the ``unsupported`` policy. Filenames are not sent.
- reasoning from Gemini is a ``thought: true`` text part with its ``thoughtSignature``; a
  signature Gemini put on a text, call or file part is kept in that part's
  ``metadata["gemini.thought_signature"]`` and sent back on the same part. Both go back only
  to Gemini, and for a given ``model`` only when the message's ``metadata["model"]`` (the
  reasoning part's ``model``) is that model. Gemini 3 rejects a call turn whose first call
  has no signature, so such a call gets the documented ``skip_thought_signature_validator``
  (``decode`` leaves it out).
- Gemini's own server-side tools (``executableCode`` / ``codeExecutionResult``, ``toolCall``
  / ``toolResponse``) are provider tool parts and go back to Gemini only.

``decode`` reads all of this back, and also accepts the SDK's snake_case names
(``inline_data``...); calls without an ``id`` get one derived from their position, and their
responses are paired by position and name. ``decode_response`` reads a generateContent
response (``candidates[0]``), with usage, ``modelVersion`` and ``responseId`` in metadata.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
import secrets
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from typing_extensions import assert_never

from threadline._json import EMPTY
from threadline._json import FrozenJsonMap
from threadline._json import freeze_json_map
from threadline._usage_readers import read_usage
from threadline.codecs._media import decode_base64
from threadline.codecs._media import encode_base64
from threadline.codecs._notes import escape_notes
from threadline.codecs._notes import note
from threadline.codecs._notes import unwrap_notes
from threadline.codecs._policies import NOT_IN_USER_MESSAGES
from threadline.codecs._policies import Capabilities
from threadline.codecs._policies import Placeholder
from threadline.codecs._policies import ProviderToolPart
from threadline.codecs._policies import Resolved
from threadline.codecs._policies import carried
from threadline.codecs._policies import for_model
from threadline.codecs._policies import is_one_of
from threadline.codecs._prepared import PreparedHistory
from threadline.codecs._reading import Reader
from threadline.codecs._reading import as_json_document
from threadline.codecs._reading import build_message
from threadline.codecs._reading import check_choice
from threadline.codecs._reading import pick_choice
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
from threadline.codecs._tool_names import GEMINI
from threadline.codecs._tools import call_names
from threadline.codecs._tools import hashed_id
from threadline.codecs._tools import read_back_result
from threadline.codecs._turns import LEADING_USER_TEXT
from threadline.codecs._turns import add_leading_turn
from threadline.codecs._turns import add_to_runs
from threadline.codecs._turns import is_leading_turn
from threadline.codecs._turns import merge_into_turns
from threadline.codecs.base import EncodeOptions
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

__all__ = ["decode", "decode_response", "encode", "normalize_for_round_trip"]

PROVIDER = "gemini"
TOOL_NAMES = GEMINI
"""The tool names the API takes; others are sent under wire names, which
[`wire_tool_names`][threadline.codecs.wire_tool_names] maps back."""
FORMAT = "Gemini generateContent"
SKIP_SIGNATURE = "skip_thought_signature_validator"
"""The signature Gemini documents for calls it did not produce (Gemini 3 requires one)."""
THOUGHT_SIGNATURE = "gemini.thought_signature"
TOOL_TYPE = "gemini.tool_type"

_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
_LEADING_PARTS = [{"text": LEADING_USER_TEXT}]
"""The parts of the user turn put before a history that starts with a model turn: a
function-call turn must come right after a user turn."""
_MEDIA_TYPES = frozenset(
    {
        "image/png",
        "image/jpeg",
        "image/webp",
        "image/heic",
        "image/heif",
        "audio/wav",
        "audio/mp3",
        "audio/mpeg",
        "audio/aiff",
        "audio/aac",
        "audio/ogg",
        "audio/flac",
        "video/mp4",
        "video/mpeg",
        "video/mov",
        "video/quicktime",
        "video/avi",
        "video/x-flv",
        "video/mpg",
        "video/webm",
        "video/wmv",
        "video/3gpp",
        "application/pdf",
        "text/plain",
        "text/html",
        "text/css",
        "text/csv",
        "text/xml",
        "text/markdown",
        "text/rtf",
        "text/javascript",
        "application/x-javascript",
        "text/x-python",
        "application/x-python",
    }
)
"""What Gemini takes as ``inlineData`` / ``fileData`` in a turn (its documented types)."""
_RESULT_MEDIA_TYPES = frozenset(
    {"image/png", "image/jpeg", "image/webp", "application/pdf", "text/plain"}
)
"""What a ``functionResponse`` takes in its ``parts``."""
_LANGUAGES = frozenset({"PYTHON", "LANGUAGE_UNSPECIFIED"})
_OUTCOMES = frozenset(
    {"OUTCOME_OK", "OUTCOME_FAILED", "OUTCOME_DEADLINE_EXCEEDED", "OUTCOME_UNSPECIFIED"}
)
_TOOL_TYPES = frozenset(
    {
        "TOOL_TYPE_UNSPECIFIED",
        "GOOGLE_SEARCH_WEB",
        "GOOGLE_SEARCH_IMAGE",
        "URL_CONTEXT",
        "GOOGLE_MAPS",
        "FILE_SEARCH",
        "MEDIA_PROCESSING",
    }
)
_CODE_EXECUTION = "code_execution"


def _valid_id(value: str) -> bool:
    return _ID.fullmatch(value) is not None


def _is_base64(text: str) -> bool:
    """Canonical base64 in either alphabet: what the SDK's bytes fields read back as is."""
    if not text:
        return False
    try:
        if "-" in text or "_" in text:
            return base64.urlsafe_b64encode(base64.urlsafe_b64decode(text)).decode() == text
        return base64.b64encode(base64.b64decode(text, validate=True)).decode() == text
    except (binascii.Error, ValueError):
        return False


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
    """Write ``messages`` as ``{"contents": [...], "systemInstruction"?: {...}}`` for
    ``generateContent``.

    The options, and what they raise, are those of [`threadline.encode`][threadline.encode];
    what is particular to this format:

    Args:
        system: placed first in ``systemInstruction``.
        model: Gemini thought signatures from another model are not sent.
        reasoning: ``auto`` replays Gemini thoughts and thought signatures (to their model);
            ``drop`` sends no reasoning and no signature.
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
    names = call_names(prepared)
    system_parts: list[dict[str, Any]] = [{"text": system}] if system else []
    contents: list[dict[str, Any]] = []
    leading = True
    for index, message in enumerate(prepared):
        role = message.role
        if role == "internal":
            continue
        if role == "system":
            if leading:
                system_parts.extend({"text": part.text} for part in _texts(message))
                continue
            parts = [{"text": note(part.text)} for part in _texts(message)]  # in the user turn
        else:
            leading = False
            if role == "assistant":  # the plan holds the parts of a message with nothing to resolve
                parts = _model_parts(
                    message,
                    parts_of(index),
                    ids,
                    options,
                )
            elif role == "tool":
                parts = [
                    _function_response(part, ids, names)
                    for part in parts_of(index)
                    if isinstance(part, ToolResultPart)
                ]
            else:
                parts = _user_parts(escape_notes(message), index, history)
        if parts:
            merge_into_turns(
                contents, "model" if role == "assistant" else "user", parts, key="parts"
            )
    for content in contents:
        if content["role"] == "model":
            _sign_first_call(content["parts"])
    add_leading_turn(contents, "parts", _LEADING_PARTS, assistant_role="model")
    payload: dict[str, Any] = {"contents": contents}
    if system_parts:
        payload["systemInstruction"] = {"parts": system_parts}
    return payload


def _texts(message: Message) -> list[TextPart]:
    return [part for part in message.parts if type(part) is TextPart and part.text]


def _sign_first_call(parts: list[dict[str, Any]]) -> None:
    """Give a call turn whose first call is unsigned the signature Gemini documents for calls
    it did not make: Gemini 3 checks the first call of each step (it signs only that one of a
    parallel batch), and the others are left as they are."""
    first = next((part for part in parts if "functionCall" in part), None)
    if first is not None and "thoughtSignature" not in first:
        first["thoughtSignature"] = SKIP_SIGNATURE


def _user_parts(message: Message, index: int, history: PreparedHistory) -> list[dict[str, Any]]:
    """``message`` (the prepared message at ``index``, or a copy of it) as user parts."""
    parts: list[dict[str, Any]] = []
    for part in history.parts_of(index, message):
        if isinstance(part, (Placeholder, TextPart)):
            if part.text:
                parts.append({"text": part.text})
        elif isinstance(part, FilePart):
            parts.append(carried(_file_part(part, _MEDIA_TYPES)))
        elif isinstance(part, NOT_IN_USER_MESSAGES):
            raise AssertionError(f"a user message holds no {part.type} part")
        else:
            assert_never(part)
    return parts


def _model_parts(
    message: Message, resolved: Sequence[Resolved], ids: Mapping[str, str], options: EncodeOptions
) -> list[dict[str, Any]]:
    signatures_allowed = _signatures_allowed(message, options)
    parts: list[dict[str, Any]] = []
    for part in resolved:
        block: dict[str, Any]
        if isinstance(part, Placeholder):
            parts.append({"text": part.text})
            continue
        if isinstance(part, TextPart):
            if not part.text and _signature(part, signatures_allowed) is None:
                continue
            block = {"text": part.text}
        elif isinstance(part, ToolCallPart):
            block = {
                "functionCall": {
                    "id": ids.get(part.id, part.id),
                    "name": part.name,
                    "args": dict(part.arguments),
                }
            }
        elif isinstance(part, ReasoningPart):
            parts.append(_thought_part(part))
            continue
        elif isinstance(part, FilePart):
            block = carried(_file_part(part, _MEDIA_TYPES))
        elif isinstance(part, ProviderToolCallPart):
            block = carried(_server_call(part))
        elif isinstance(part, ProviderToolResultPart):
            block = carried(_server_result(part))
        elif isinstance(part, (HookPart, ToolResultPart)):
            raise AssertionError(f"resolve keeps no {part.type} part on a model turn")
        else:
            assert_never(part)
        signature = _signature(part, signatures_allowed)
        if signature is not None:
            block["thoughtSignature"] = signature
        parts.append(block)
    return parts


def _signatures_allowed(message: Message, options: EncodeOptions) -> bool:
    """Whether the thought signatures in a message's parts may be sent: not with
    ``reasoning="drop"``, and for a given model only when the message came from it."""
    if options.reasoning == "drop":
        return False
    return for_model(options.model, message.metadata.get("model"))


def _signature(part: Any, allowed: bool) -> str | None:
    if not allowed or not part.metadata:
        return None
    value = part.metadata.get(THOUGHT_SIGNATURE)
    if isinstance(value, str) and value and _is_base64(value):
        return value
    return None


def _thought_replayable(part: ReasoningPart) -> bool:
    if part.redacted:
        return False
    if part.signature is not None:
        return _is_base64(part.signature)
    return bool(part.text)


def _thought_part(part: ReasoningPart) -> dict[str, Any]:
    block: dict[str, Any] = {"text": part.text, "thought": True}
    if part.signature is not None:
        block["thoughtSignature"] = part.signature
    return block


def _file_part(part: FilePart, media_types: frozenset[str]) -> dict[str, Any] | None:
    if part.media_type not in media_types:
        return None
    if part.data is None:
        return {"fileData": {"mimeType": part.media_type, "fileUri": part.url}}
    return {"inlineData": {"mimeType": part.media_type, "data": encode_base64(part.data)}}


def _code_input(part: ProviderToolCallPart) -> dict[str, Any] | None:
    """The ``executableCode`` a provider tool call goes back as, or ``None``."""
    value = part.input
    if (
        part.provider != PROVIDER
        or TOOL_TYPE in part.metadata
        or not isinstance(value, Mapping)
        or not value.keys() <= {"code", "language"}
        or not isinstance(value.get("code"), str)
        or not is_one_of(value.get("language", "PYTHON"), _LANGUAGES)
    ):
        return None
    return {"code": value["code"], "language": value.get("language", "PYTHON")}


def _tool_type(part: ProviderToolCallPart | ProviderToolResultPart) -> str | None:
    value = part.metadata.get(TOOL_TYPE) if part.provider == PROVIDER else None
    return value if is_one_of(value, _TOOL_TYPES) else None


def _server_call(part: ProviderToolCallPart) -> dict[str, Any] | None:
    tool_type = _tool_type(part)
    if tool_type is not None:
        if not isinstance(part.input, Mapping):
            return None
        call = {"id": part.id, "toolType": tool_type, "args": dict(part.input)}
        return {"toolCall": call}
    code = _code_input(part)
    if code is None:
        return None
    return {"executableCode": {**code, "id": part.id}}


def _code_result(part: ProviderToolResultPart) -> dict[str, Any] | None:
    """The ``codeExecutionResult`` (without ``id``) a provider tool result goes back as."""
    value = part.content
    if (
        part.provider != PROVIDER
        or TOOL_TYPE in part.metadata
        or not isinstance(value, Mapping)
        or not value.keys() <= {"outcome", "output"}
        or not isinstance(value.get("output", ""), str)
    ):
        return None
    outcome = value.get("outcome") or ("OUTCOME_FAILED" if part.is_error else "OUTCOME_OK")
    if not is_one_of(outcome, _OUTCOMES):
        return None
    result = {"outcome": outcome}
    if "output" in value:
        result["output"] = value["output"]
    return result


def _server_result(part: ProviderToolResultPart) -> dict[str, Any] | None:
    tool_type = _tool_type(part)
    if tool_type is not None:
        if not isinstance(part.content, Mapping):
            return None
        response = {"id": part.call_id, "toolType": tool_type, "response": dict(part.content)}
        return {"toolResponse": response}
    result = _code_result(part)
    if result is None:
        return None
    return {"codeExecutionResult": {**result, "id": part.call_id}}


def _function_response(
    part: ToolResultPart, ids: Mapping[str, str], names: Mapping[str, str]
) -> dict[str, Any]:
    response: dict[str, Any] = {
        "id": ids.get(part.call_id, part.call_id),
        "name": names.get(part.call_id) or part.name or "tool",
    }
    key = "error" if part.is_error else "output"
    content = part.content
    if isinstance(content, str):
        response["response"] = {key: content}
        return {"functionResponse": response}
    items: list[Any] = []
    files: list[dict[str, Any]] = []
    for entry in content:
        if isinstance(entry, TextPart):
            items.append(entry.text)
            continue
        block = carried(_file_part(entry, _RESULT_MEDIA_TYPES))
        name = f"file-{len(files) + 1}"
        next(iter(block.values()))["displayName"] = name
        files.append(block)
        items.append({"$ref": name})
    response["response"] = {key: items}
    if files:
        response["parts"] = files
    return {"functionResponse": response}


def _carries_provider_tool(part: ProviderToolPart, before: Sequence[object]) -> bool:
    if isinstance(part, ProviderToolCallPart):
        return _server_call(part) is not None
    return _server_result(part) is not None


CAPABILITIES = Capabilities(
    replayable=_thought_replayable,
    carries_file=lambda part, role: (
        part.media_type in (_RESULT_MEDIA_TYPES if role == "tool" else _MEDIA_TYPES)
    ),
    file_reasons={
        "tool": "a function response takes PNG, JPEG and WebP images, PDFs and plain text",
        "user": "Gemini takes the image, audio, video and document types it documents",
    },
    no_place="generateContent has no place for this part",
    carries_provider_tool=_carries_provider_tool,
    provider_tool_reason="only Gemini's own code execution and server tool parts go back to Gemini",
)
"""What generateContent carries: thoughts with a base64 signature (or text), Gemini's own code
execution and server tool parts, files of the media types it documents, on any turn."""


# ---------------------------------------------------------------------------------------------
# decode


def _get(obj: Mapping[str, Any], camel: str, snake: str) -> Any:
    value = obj.get(camel)
    return obj.get(snake) if value is None else value


class _Pairing:
    """Ids for calls and server tool calls that came without one, and the pairing of their
    responses: by id when there is one, else with the first unanswered call of that name.

    In a payload an id is derived from the part's position (``call_2_0`` for
    ``contents[2].parts[0]``); in a response, from ``seed`` (the ``responseId``), so that
    calls of different responses never share an id.
    """

    __slots__ = ("calls", "code", "seed")

    def __init__(self, seed: str | None = None) -> None:
        self.calls: list[tuple[str, str]] = []  # the previous model turn's (id, name) calls
        self.code: str | None = None  # the latest executableCode id of the turn
        self.seed = seed

    def call_id(self, given: Any, kind: str, path: str, reader: Reader) -> str:
        if given is not None and given != "":
            return reader.expect_str(given, f"{path}.id")
        if self.seed is not None:
            return hashed_id(f"{self.seed}:{path}", prefix=f"{kind}_")
        return f"{kind}_{_path_token(path)}"

    def answer(self, given: Any, name: str, path: str, reader: Reader) -> str:
        if given is not None and given != "":
            call_id = reader.expect_str(given, f"{path}.id")
            self.calls = [call for call in self.calls if call[0] != call_id]
            return call_id
        for position, (call_id, call_name) in enumerate(self.calls):
            if call_name == name:
                del self.calls[position]
                return call_id
        if self.calls:
            return self.calls.pop(0)[0]
        return f"response_{_path_token(path)}"


def _path_token(path: str) -> str:
    """A JSON path as an id fragment: ``contents[2].parts[0]`` -> ``2_0``."""
    return "_".join(re.findall(r"\d+", path))


def decode(payload: Any, *, limits: Limits | None = None) -> list[Message]:
    """Read ``{"contents": [...], "systemInstruction"?: ...}``, a whole request body, or a
    Content list; camelCase (REST) and snake_case (SDK) names are both read.

    A user turn is split into a tool message (its ``functionResponse`` parts) and a user
    message (the rest), in part order. The user turn ``encode`` puts before a leading model
    turn is left out.

    Args:
        payload: what ``encode`` returned, a whole request body, or a message list.
        limits: how much to read ([`Limits`][]); ``None`` means the defaults.

    Raises:
        threadline.LimitExceededError: the payload exceeds ``limits`` (a ``ValidationError``).
        threadline.CodecError: ``payload`` is not a generateContent payload; the message names
            the JSON path of the first value that does not fit.
        threadline.ValidationError: a value cannot be stored in a message.
    """
    return read_payload(_decode, payload, limits, what="gemini.decode")


def _decode(payload: Any) -> list[Message]:
    """The reader behind `decode`, given a payload within its limits."""
    reader = Reader(FORMAT)
    wire = reader.messages(payload, "contents")
    out: list[Message] = []
    if isinstance(payload, Mapping):
        system = _get(payload, "systemInstruction", "system_instruction")
        if system is not None:
            content = reader.expect_object(system, "systemInstruction")
            texts = []
            for index, raw in enumerate(_parts(content, "systemInstruction", reader)):
                where = f"systemInstruction.parts[{index}]"
                part = reader.expect_object(raw, where)
                texts.append(TextPart(text=reader.str_field(part, "text", where)))
            if texts:
                out.append(build_message("system", texts, "systemInstruction"))
    pairing = _Pairing()
    for index, raw in enumerate(wire):
        path = f"contents[{index}]"
        content = reader.expect_object(raw, path)
        role = reader.optional_str(content, "role", path) or "user"
        if role not in ("user", "model", "function"):
            reader.fail(f"{path}.role", f"unknown role {role!r} (user or model)")
        parts = _parts(content, path, reader)
        if index == 0 and is_leading_turn(
            role, parts, wire, placeholder=_LEADING_PARTS, assistant_role="model"
        ):
            continue
        runs: list[tuple[str, list[Any]]] = []
        if role == "model":
            pairing.calls, pairing.code = [], None
        for part_index, raw_part in enumerate(parts):
            where = f"{path}.parts[{part_index}]"
            part, part_role = _decode_part(raw_part, role, where, pairing, reader, model=None)
            add_to_runs(runs, part_role, part)
        out.extend(build_message(run_role, run, path) for run_role, run in runs)
    return unwrap_notes(out)


def _parts(content: Mapping[str, Any], path: str, reader: Reader) -> Sequence[Any]:
    parts = content.get("parts")
    return () if parts is None else reader.expect_list(parts, f"{path}.parts")


def _decode_part(
    raw: Any, role: str, path: str, pairing: _Pairing, reader: Reader, *, model: str | None
) -> tuple[Any, str]:
    """A wire part as a threadline part, and the role of the message it belongs in."""
    part = reader.expect_object(raw, path)
    signature = _get(part, "thoughtSignature", "thought_signature")
    if signature is not None:
        signature = reader.expect_str(signature, f"{path}.thoughtSignature")
        if signature in ("", SKIP_SIGNATURE):
            signature = None
    metadata = freeze_json_map({THOUGHT_SIGNATURE: signature} if signature else None)
    model_turn = role == "model"
    text = part.get("text")
    if text is not None:
        text = reader.expect_str(text, f"{path}.text")
        if part.get("thought") is True:
            if not model_turn:
                reader.fail(f"{path}.thought", "thoughts are only valid in model turns")
            reasoning = ReasoningPart(
                text=text, signature=signature, provider=PROVIDER, model=model
            )
            return reasoning, "assistant"
        return TextPart(text=text, metadata=metadata), "assistant" if model_turn else "user"
    file = _decode_file(part, path, reader, metadata)
    if file is not None:
        return file, "assistant" if model_turn else "user"
    call = _get(part, "functionCall", "function_call")
    if call is not None:
        if not model_turn:
            reader.fail(f"{path}.functionCall", "function calls are only valid in model turns")
        where = f"{path}.functionCall"
        call = reader.expect_object(call, where)
        name = reader.str_field(call, "name", where)
        call_id = pairing.call_id(call.get("id"), "call", path, reader)
        pairing.calls.append((call_id, name))
        arguments = reader.expect_object(call.get("args") or {}, f"{where}.args")
        return reader.part(
            ToolCallPart,
            call,
            where,
            id=call_id,
            name=name,
            arguments=freeze_json_map(arguments),
            metadata=metadata,
        ), "assistant"
    response = _get(part, "functionResponse", "function_response")
    if response is not None:
        if model_turn:
            reader.fail(f"{path}.functionResponse", "function responses belong in user turns")
        return _decode_response_part(response, f"{path}.functionResponse", pairing, reader), "tool"
    if not model_turn:
        reader.fail(path, "a user turn holds text, inlineData, fileData or functionResponse parts")
    return _decode_server_part(part, path, pairing, reader, metadata), "assistant"


def _decode_file(
    part: Mapping[str, Any], path: str, reader: Reader, metadata: FrozenJsonMap
) -> FilePart | None:
    inline = _get(part, "inlineData", "inline_data")
    if inline is not None:
        where = f"{path}.inlineData"
        inline = reader.expect_object(inline, where)
        media_type = reader.media_type(_get(inline, "mimeType", "mime_type"), f"{where}.mimeType")
        data = decode_base64(reader.str_field(inline, "data", where), reader, f"{where}.data")
        return reader.part(
            FilePart, inline, where, media_type=media_type, data=data, metadata=metadata
        )
    uri = _get(part, "fileData", "file_data")
    if uri is not None:
        where = f"{path}.fileData"
        uri = reader.expect_object(uri, where)
        url = reader.expect_str(_get(uri, "fileUri", "file_uri"), f"{where}.fileUri")
        media_type = _get(uri, "mimeType", "mime_type")
        media_type = "application/octet-stream" if media_type is None else media_type
        media_type = reader.media_type(media_type, f"{where}.mimeType")
        return reader.part(FilePart, uri, where, media_type=media_type, url=url, metadata=metadata)
    return None


def _decode_response_part(raw: Any, path: str, pairing: _Pairing, reader: Reader) -> ToolResultPart:
    response = reader.expect_object(raw, path)
    name = reader.str_field(response, "name", path)
    call_id = pairing.answer(response.get("id"), name, path, reader)
    body = response.get("response")
    body = {} if body is None else reader.expect_object(body, f"{path}.response")
    files: dict[str, FilePart] = {}
    loose: list[FilePart] = []
    for index, raw_part in enumerate(_parts(response, path, reader)):
        where = f"{path}.parts[{index}]"
        item = reader.expect_object(raw_part, where)
        file = _decode_file(item, where, reader, EMPTY)
        if file is None:
            reader.fail(where, "a function response part holds inlineData or fileData")
        blob = _get(item, "inlineData", "inline_data") or _get(item, "fileData", "file_data")
        label = _get(blob, "displayName", "display_name")
        if isinstance(label, str) and label not in files:
            files[label] = file
        else:
            loose.append(file)
    is_error = body.keys() == {"error"}
    key = "error" if is_error else "output"
    value = body.get(key) if len(body) == 1 else None
    content: str | tuple[TextPart | FilePart, ...]
    if isinstance(value, str):
        content = value
    elif isinstance(value, list) and all(_is_item(entry, files) for entry in value):
        items: list[TextPart | FilePart] = [
            TextPart(text=entry) if isinstance(entry, str) else files[entry["$ref"]]
            for entry in value
        ]
        used = {entry["$ref"] for entry in value if not isinstance(entry, str)}
        unused = [file for label, file in files.items() if label not in used]
        content = (*items, *unused, *loose)
        files, loose = {}, []
    else:
        where = f"{path}.response" if value is None else f"{path}.response.{key}"
        content = reader.json_text(body if value is None else value, where)
        if "error" in body:
            is_error = True
    if isinstance(content, str) and (files or loose):
        content = (TextPart(text=content), *files.values(), *loose)
    return ToolResultPart(call_id=call_id, content=content, name=name, is_error=is_error)


def _is_item(entry: Any, files: Mapping[str, FilePart]) -> bool:
    """Whether ``entry`` of a result's output list is a text or the ``{"$ref": label}`` of one
    of its files; anything else makes the output a JSON value."""
    if isinstance(entry, str):
        return True
    if not isinstance(entry, Mapping) or entry.keys() != {"$ref"}:
        return False
    label = entry["$ref"]
    return isinstance(label, str) and label in files


def _decode_server_part(
    part: Mapping[str, Any],
    path: str,
    pairing: _Pairing,
    reader: Reader,
    metadata: FrozenJsonMap,
) -> ProviderToolCallPart | ProviderToolResultPart:
    code = _get(part, "executableCode", "executable_code")
    if code is not None:
        where = f"{path}.executableCode"
        code = reader.expect_object(code, where)
        call_id = pairing.call_id(code.get("id"), "code", path, reader)
        pairing.code = call_id
        value = {"code": reader.str_field(code, "code", where)}
        if code.get("language") is not None:
            value["language"] = reader.str_field(code, "language", where)
        return ProviderToolCallPart(
            id=call_id, name=_CODE_EXECUTION, input=value, provider=PROVIDER, metadata=metadata
        )
    result = _get(part, "codeExecutionResult", "code_execution_result")
    if result is not None:
        where = f"{path}.codeExecutionResult"
        result = reader.expect_object(result, where)
        given = result.get("id")
        if given is None and pairing.code is not None:
            result_id = pairing.code
        else:
            result_id = pairing.call_id(given, "code", path, reader)
        content = strip_nulls({key: value for key, value in result.items() if key != "id"})
        return reader.part(
            ProviderToolResultPart,
            result,
            where,
            call_id=result_id,
            content=content,
            provider=PROVIDER,
            is_error=content.get("outcome") != "OUTCOME_OK",
            metadata=metadata,
        )
    for camel, snake in (("toolCall", "tool_call"), ("toolResponse", "tool_response")):
        raw_tool = _get(part, camel, snake)
        if raw_tool is None:
            continue
        where = f"{path}.{camel}"
        tool = reader.expect_object(raw_tool, where)
        tool_type = _get(tool, "toolType", "tool_type") or "TOOL_TYPE_UNSPECIFIED"
        tagged = freeze_json_map(
            {**metadata, TOOL_TYPE: reader.expect_str(tool_type, f"{where}.toolType")}
        )
        call_id = pairing.call_id(tool.get("id"), "tool", path, reader)
        if camel == "toolCall":
            args = reader.expect_object(tool.get("args") or {}, f"{where}.args")
            return reader.part(
                ProviderToolCallPart,
                tool,
                where,
                id=call_id,
                name=tagged[TOOL_TYPE],
                input=strip_nulls(dict(args)),
                provider=PROVIDER,
                metadata=tagged,
            )
        body = reader.expect_object(tool.get("response") or {}, f"{where}.response")
        return reader.part(
            ProviderToolResultPart,
            tool,
            where,
            call_id=call_id,
            content=strip_nulls(dict(body)),
            provider=PROVIDER,
            metadata=tagged,
        )
    raise reader.error(
        path,
        "a part needs one of text, inlineData, fileData, functionCall, functionResponse, "
        "executableCode, codeExecutionResult, toolCall or toolResponse",
    )


# ---------------------------------------------------------------------------------------------
# decode_response


def decode_response(
    response: Any, *, limits: Limits | None = None, choice: int = 0, model: str | None = None
) -> Message:
    """Read a generateContent response (``candidates[choice].content``) into an assistant
    message.

    Accepts the JSON dict (camelCase, as the REST API sends it, or snake_case), JSON text, or
    the SDK's ``GenerateContentResponse``. Thought parts become reasoning tagged with
    ``provider="gemini"`` and the ``modelVersion``, with their ``thoughtSignature``; a
    signature on any other part goes to its ``metadata["gemini.thought_signature"]``. Calls
    without an ``id`` get one derived from ``responseId``. The message's metadata holds
    ``provider``, ``model`` (``modelVersion``), ``response_id``, ``stop_reason``
    (``finishReason``, or the prompt's ``blockReason``) and ``usage`` (``output_tokens``
    counts the candidates' and the thoughts' tokens; a count the API leaves out, as proto3
    JSON leaves out zeros, is 0), and the candidate's ``groundingMetadata`` and
    ``citationMetadata`` as ``gemini.grounding_metadata`` and ``gemini.citation_metadata``
    (REST camelCase names, as sent).

    Args:
        response: the response: a JSON dict, JSON text or the SDK's response object.
        limits: how much to read ([`Limits`][]); ``None`` means the defaults.
        choice: which of the response's ``candidates`` to read (``candidateCount`` > 1
            gives several).
        model: the model the request went to, for a response that names none: it tags
            the message and its reasoning (the response's own ``model`` wins).

    Raises:
        threadline.LimitExceededError: the response exceeds ``limits`` (a
            ``ValidationError``).
        threadline.CodecError: ``response`` is not a generateContent response, or holds no
            candidate ``choice`` (the message says how many it holds).
        ValueError: ``choice`` is negative.
    """
    check_choice(choice)
    return read_response(
        functools.partial(_decode_response, choice=choice),
        response,
        limits,
        format_name=FORMAT,
        what="gemini.decode_response",
        model=model,
        dump=_dump_sdk_response,
    )


def _dump_sdk_response(response: Any) -> Any:
    """The SDK's response as the REST API sends it: camelCase names, no nulls."""
    return response.model_dump(mode="json", by_alias=True, exclude_none=True)


def _decode_response(response: Any, *, choice: int) -> Message:
    """The reader behind `decode_response`, given a document within its limits."""
    reader = Reader(f"{FORMAT} response")
    if hasattr(response, "model_dump") and not isinstance(response, Mapping):
        response = _dump_sdk_response(response)
    document = reader.expect_object(as_json_document(response, FORMAT), "")
    candidates = document.get("candidates")
    feedback = _get(document, "promptFeedback", "prompt_feedback")
    if candidates is None and feedback is None:
        reader.fail("candidates", "required but missing")
    model = _get(document, "modelVersion", "model_version")
    model = None if model is None else reader.expect_str(model, "modelVersion")
    response_id = _get(document, "responseId", "response_id")
    response_id = None if response_id is None else reader.expect_str(response_id, "responseId")
    candidates = reader.expect_list(candidates or [], "candidates")
    parts: list[Any] = []
    stop_reason = None
    at = f"candidates[{choice}]"
    extra: dict[str, Any] = {}
    if candidates:
        candidate, at = pick_choice(reader, candidates, "candidates", choice, noun="candidate")
        stop_reason = _get(candidate, "finishReason", "finish_reason")
        content = candidate.get("content")
        if content is not None:
            content = reader.expect_object(content, f"{at}.content")
            pairing = _Pairing(seed=response_id or secrets.token_hex(16))
            for index, raw in enumerate(_parts(content, f"{at}.content", reader)):
                where = f"{at}.content.parts[{index}]"
                part, _ = _decode_part(raw, "model", where, pairing, reader, model=model)
                parts.append(part)
        for camel, snake, key in _CANDIDATE_METADATA:
            value = _get(candidate, camel, snake)
            if value is not None:
                reader.check_json(value, f"{at}.{camel}")
                extra[key] = strip_nulls(value)
    elif choice:
        reader.fail(
            "candidates", f"the response holds no candidate: choice={choice} is out of range"
        )
    elif isinstance(feedback, Mapping):
        stop_reason = _get(feedback, "blockReason", "block_reason")
    usage = _get(document, "usageMetadata", "usage_metadata")
    if usage is not None:
        usage = reader.expect_object(usage, "usageMetadata")
        reader.check_json(usage, "usageMetadata")
    metadata = response_metadata(
        provider=PROVIDER,
        response_id=response_id,
        model=model,
        stop_reason=stop_reason if isinstance(stop_reason, str) else None,
        usage=read_usage("gemini", usage, reader, "usageMetadata"),
        raw_usage=usage,
    )
    metadata.update(extra)
    return response_message(parts, f"{at}.content", metadata)


_CANDIDATE_METADATA = (
    ("groundingMetadata", "grounding_metadata", "gemini.grounding_metadata"),
    ("citationMetadata", "citation_metadata", "gemini.citation_metadata"),
)
"""What a candidate says about its sources, kept in the message's metadata: Google Search
grounding (queries, chunks, supports) and recitation citations (``citations`` or, in the
SDK's dump, ``citationSources``)."""


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
    [`threadline.testing.check_codec`][] ignores), the generateContent format loses exactly:

    - part metadata it has no field for (it keeps ``gemini.thought_signature`` where it is
      sent, and ``gemini.tool_type`` on server tool parts), filenames, and a tool result's
      ``name`` (read back from its call);
    - reasoning per the reasoning policy: a replayed Gemini thought keeps its text, signature
      and ``provider`` and loses ``model``, ``item_id``, ``summary`` and metadata; thought
      signatures on other parts are sent per the same rule (the message's
      ``metadata["model"]`` stands for the part's model); ``text`` turns foreign reasoning
      into text; the parts the ``unsupported`` policy replaces or drops;
    - empty text without a signature; tool-call ids outside ``[A-Za-z0-9_.:-]{1,64}``
      (mapped); ``raw_arguments`` (the format takes an object only); a code execution call's
      name (``code_execution``) and default language (``PYTHON``), a code execution result's
      default outcome and its ``is_error`` (derived from the outcome); a first user message
      that is exactly the ``[conversation start]`` placeholder before an assistant turn.
    """
    return read_back(
        messages,
        ROUND_TRIP,
        model=model,
        reasoning=reasoning,
        unsupported=unsupported,
        text_files=text_files,
    )


def _allowed(turn: Turn) -> bool:
    """Whether the thought signatures of the turn's parts are sent."""
    return _signatures_allowed(turn.message, turn.history.options)


def _text_read_back(part: TextPart, turn: Turn) -> TextPart | None:
    if turn.role != "assistant":
        return TextPart(text=part.text) if part.text else None
    allowed = _allowed(turn)
    if not part.text and _signature(part, allowed) is None:
        return None
    return TextPart(text=part.text, metadata=_read_back_signature(part, allowed))


def _any_file_read_back(part: FilePart, turn: Turn) -> FilePart:
    if turn.role != "assistant":
        return _file_read_back(part)
    return _file_read_back(part, _read_back_signature(part, _allowed(turn)))


def _call_read_back(part: ToolCallPart, turn: Turn) -> ToolCallPart:
    return ToolCallPart(
        id=turn.wire_id(part.id),
        name=part.name,
        arguments=part.arguments,
        metadata=_read_back_signature(part, _allowed(turn)),
    )


def _reasoning_read_back(part: ReasoningPart, turn: Turn) -> ReasoningPart:
    signature = None if part.signature == SKIP_SIGNATURE else part.signature
    return ReasoningPart(text=part.text, signature=signature, provider=PROVIDER)


def _file_read_back(part: FilePart, metadata: FrozenJsonMap = EMPTY) -> FilePart:
    if part.data is None:
        return FilePart(media_type=part.media_type, url=part.url, metadata=metadata)
    return FilePart(media_type=part.media_type, data=part.data, metadata=metadata)


def _read_back_signature(part: Any, allowed: bool) -> FrozenJsonMap:
    signature = _signature(part, allowed)
    if signature is None or signature == SKIP_SIGNATURE:
        return EMPTY
    return freeze_json_map({THOUGHT_SIGNATURE: signature})


def _server_read_back(
    part: ProviderToolCallPart | ProviderToolResultPart, turn: Turn
) -> ProviderToolCallPart | ProviderToolResultPart:
    signature = _read_back_signature(part, _allowed(turn))
    tool_type = _tool_type(part)
    if isinstance(part, ProviderToolCallPart):
        if tool_type is not None and isinstance(part.input, Mapping):
            return ProviderToolCallPart(
                id=part.id,
                name=tool_type,
                input=strip_nulls(dict(part.input)),
                provider=PROVIDER,
                metadata=freeze_json_map({**signature, TOOL_TYPE: tool_type}),
            )
        code = _code_input(part) if tool_type is None else None
        if code is not None:
            return ProviderToolCallPart(
                id=part.id,
                name=_CODE_EXECUTION,
                input=code,
                provider=PROVIDER,
                metadata=signature,
            )
    else:
        if tool_type is not None and isinstance(part.content, Mapping):
            return ProviderToolResultPart(
                call_id=part.call_id,
                content=strip_nulls(dict(part.content)),
                provider=PROVIDER,
                metadata=freeze_json_map({**signature, TOOL_TYPE: tool_type}),
            )
        result = _code_result(part) if tool_type is None else None
        if result is not None:
            return ProviderToolResultPart(
                call_id=part.call_id,
                content=result,
                provider=PROVIDER,
                is_error=result["outcome"] != "OUTCOME_OK",
                metadata=signature,
            )
    raise AssertionError("resolve kept a provider tool part Gemini refuses")


def _result_read_back(part: ToolResultPart, turn: Turn) -> ToolResultPart:
    return read_back_result(part, turn.history.ids, lambda file: [_file_read_back(file)], empty=())


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
        result=_result_read_back,
        reasoning=_reasoning_read_back,
        provider_call=_server_read_back,
        provider_result=_server_read_back,
    ),
    systems="leading",
    sends_text=bool,
    leading_turn=True,
)
"""The generateContent format's round trip: `normalize_for_round_trip` is `read_back` of
it."""
