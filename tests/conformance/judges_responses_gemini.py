"""Judges of OpenAI Responses and Gemini output: the SDKs' own types, then the APIs' rules.

``judge_openai_responses(payload)`` adds ``model`` to what ``encode`` returned and validates
the body with the strict ``openai`` request types of :mod:`tests.conformance._strict_types`,
then checks the rules those types cannot say (wire-formats section 2.2 and 2.3).

``judge_gemini(payload)`` validates every Content with ``google-genai``'s own pydantic models
(``extra="forbid"``, bytes as base64), adds the two REST rules the SDK types leave
``Optional`` (roles ``user`` / ``model``; exactly one data field per part), runs the SDK's own
Gemini Developer API converter (``_Content_to_mldev``), then checks the ordering and pairing
rules of wire-formats section 4.2 and 4.4.

Each raises :class:`~tests.conformance.judges.WireError` listing every problem. The rule
checkers read the wire payload only; they know nothing of threadline.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import pydantic

from tests.conformance import _strict_types
from tests.conformance.judges import WireError
from tests.conformance.judges import _summarize
from tests.conformance.judges import type_problems

__all__ = [
    "gemini_rules",
    "generation_config_problems",
    "judge_gemini",
    "judge_openai_responses",
    "openai_responses_rules",
]

RESPONSES_MAX_ID = 64
GEMINI_DATA_FIELDS = (
    "text",
    "inline_data",
    "file_data",
    "function_call",
    "function_response",
    "executable_code",
    "code_execution_result",
    "tool_call",
    "tool_response",
)
GEMINI_BODY_KEYS = frozenset(
    {"contents", "systemInstruction", "tools", "toolConfig", "generationConfig"}
)


# ---------------------------------------------------------------------------------------------
# OpenAI Responses


def openai_responses_body() -> pydantic.TypeAdapter[Any]:
    """A non-streaming ``POST /v1/responses`` body."""
    from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming

    return _strict_types.strict_adapter(ResponseCreateParamsNonStreaming)


def judge_openai_responses(payload: Mapping[str, Any]) -> None:
    """Raise :class:`WireError` unless ``/v1/responses`` would accept ``payload``."""
    body = {"model": "judge-model", **payload}
    problems = type_problems(openai_responses_body(), body)
    if not problems:
        problems = openai_responses_rules(payload["input"])
    if problems:
        raise WireError("OpenAI Responses", problems)


def _is_output_with_id(item: Mapping[str, Any]) -> bool:
    """An item a reasoning item can have produced: an assistant output carrying its id."""
    if not item.get("id") or item.get("type") in ("reasoning", "item_reference"):
        return False
    if item.get("type", "message") == "message":
        return item.get("role") == "assistant"
    return not str(item.get("type")).endswith("_output")


def openai_responses_rules(items: Sequence[Mapping[str, Any]]) -> list[str]:
    """The rules the types cannot say (wire-formats section 2.1 to 2.3).

    - a ``reasoning`` item has an ``rs_`` id and is followed right away by the output item it
      produced, matched by id (*"Item 'rs_…' of type 'reasoning' was provided without its
      required following item"*);
    - ``call_id`` is 1 to 64 characters and unique; ``arguments`` is a JSON object as a string;
    - every ``function_call_output`` answers an earlier ``function_call`` (a
      ``custom_tool_call_output`` a ``custom_tool_call``), once, and every call is answered;
    - assistant message content holds ``output_text`` / ``refusal`` only (the types accept
      ``input_text`` there, the API answers 400);
    - item ids are unique.
    """
    problems: list[str] = []
    calls: dict[str, str] = {}
    answered: set[str] = set()
    ids: set[str] = set()
    for index, item in enumerate(items):
        where = f"input.{index}"
        kind = item.get("type", "message")
        item_id = item.get("id")
        if item_id is not None:
            if item_id in ids:
                problems.append(f"{where}.id: {item_id!r} is used twice")
            ids.add(item_id)
        if kind == "reasoning":
            if not str(item_id).startswith("rs_"):
                problems.append(f"{where}.id: a reasoning item needs an OpenAI rs_ id")
            following = items[index + 1] if index + 1 < len(items) else None
            if following is None or not _is_output_with_id(following):
                problems.append(
                    f"{where}: Item {item_id!r} of type 'reasoning' was provided without its "
                    "required following item"
                )
        elif kind in ("function_call", "custom_tool_call"):
            call_id = item.get("call_id")
            if not isinstance(call_id, str) or not 0 < len(call_id) <= RESPONSES_MAX_ID:
                problems.append(
                    f"{where}.call_id: {call_id!r} is not 1 to {RESPONSES_MAX_ID} characters"
                )
            elif call_id in calls:
                problems.append(f"{where}.call_id: {call_id!r} is used twice")
            calls[str(call_id)] = kind
            if kind == "function_call":
                try:
                    parsed = json.loads(item["arguments"])
                except ValueError:
                    parsed = None
                if not isinstance(parsed, dict):
                    problems.append(f"{where}.arguments: not a JSON object string")
        elif kind in ("function_call_output", "custom_tool_call_output"):
            call_id = item.get("call_id")
            expected = kind.removesuffix("_output")
            if calls.get(str(call_id)) != expected:
                problems.append(
                    f"{where}: no {expected} found for call_id {call_id!r} earlier in input"
                )
            elif call_id in answered:
                problems.append(f"{where}: call_id {call_id!r} is answered twice")
            answered.add(str(call_id))
        elif kind == "message" and item.get("role") == "assistant":
            content = item.get("content")
            if isinstance(content, list):
                bad = [
                    part.get("type")
                    for part in content
                    if part.get("type") not in ("output_text", "refusal")
                ]
                if bad:
                    problems.append(
                        f"{where}.content: assistant content must be output_text or refusal, "
                        f"got {bad}"
                    )
    missing = sorted(call for call in calls if call not in answered)
    if missing:
        problems.append(f"end: calls {missing} have no output")
    return problems


# ---------------------------------------------------------------------------------------------
# Gemini


def judge_gemini(payload: Mapping[str, Any]) -> None:
    """Raise :class:`WireError` unless ``generateContent`` would accept ``payload``."""
    problems = [f"unknown top-level key {key!r}" for key in payload if key not in GEMINI_BODY_KEYS]
    contents = payload.get("contents")
    if not isinstance(contents, list):
        problems.append("contents: must be a list")
        contents = []
    for index, content in enumerate(contents):
        problems.extend(_content_problems(content, f"contents.{index}", system=False))
    if "systemInstruction" in payload:
        problems.extend(
            _content_problems(payload["systemInstruction"], "systemInstruction", system=True)
        )
    problems.extend(gemini_request_problems(payload))
    if "generationConfig" in payload:
        problems.extend(generation_config_problems(payload["generationConfig"]))
    if not problems:
        problems = gemini_rules(contents)
    if problems:
        raise WireError("Gemini generateContent", problems)


def gemini_request_problems(payload: Mapping[str, Any]) -> list[str]:
    """``tools`` and ``toolConfig`` through ``google-genai``'s own models (``extra="forbid"``)
    and its Gemini Developer API converters, and the REST rule the SDK leaves to the service:
    an ``OBJECT`` schema's ``properties``, when given, is not empty."""
    from google.genai import models
    from google.genai import types

    problems: list[str] = []
    for index, raw in enumerate(payload.get("tools") or []):
        try:
            tool = types.Tool.model_validate_json(_as_json(raw))
            models._Tool_to_mldev(tool.model_dump(exclude_none=True))
        except (pydantic.ValidationError, ValueError) as error:
            problems.append(f"tools.{index}: {error}")
            continue
        for number, declaration in enumerate(raw.get("functionDeclarations") or []):
            problems.extend(
                _empty_properties(declaration.get("parameters"), f"tools.{index}.{number}")
            )
    if "toolConfig" in payload:
        try:
            types.ToolConfig.model_validate_json(_as_json(payload["toolConfig"]))
        except pydantic.ValidationError as error:
            problems.append(f"toolConfig: {error}")
    return problems


def _empty_properties(schema: Any, where: str) -> list[str]:
    if not isinstance(schema, Mapping):
        return []
    found = []
    if str(schema.get("type", "")).lower() == "object" and schema.get("properties") == {}:
        found.append(f"{where}.parameters.properties: should be non-empty for OBJECT type")
    for key in ("properties",):
        for name, sub in (schema.get(key) or {}).items():
            found.extend(_empty_properties(sub, f"{where}.{name}"))
    for key in ("items",):
        found.extend(_empty_properties(schema.get(key), f"{where}.items"))
    for option in schema.get("anyOf") or []:
        found.extend(_empty_properties(option, f"{where}.anyOf"))
    return found


def generation_config_problems(config: Any) -> list[str]:
    """What ``google-genai``'s ``GenerationConfig`` (camelCase, unknown keys refused, the
    response schema read into its ``Schema``) refuses in ``generationConfig``."""
    from google.genai import types

    try:
        types.GenerationConfig.model_validate(config)
    except pydantic.ValidationError as error:
        return [f"generationConfig: {line}" for line in _summarize(error)]
    return []


def _as_json(value: Any) -> str:
    def default(item: Any) -> Any:
        if isinstance(item, (bytes, bytearray)):
            return base64.b64encode(bytes(item)).decode()
        raise TypeError(f"not JSON: {type(item).__name__}")

    return json.dumps(value, default=default)


def _content_problems(raw: Any, where: str, *, system: bool) -> list[str]:
    from google.genai import models
    from google.genai import types

    try:
        content = types.Content.model_validate_json(_as_json(raw))
    except pydantic.ValidationError as error:
        return [
            f"{where}.{'.'.join(str(loc) for loc in item['loc'])}: {item['msg']}"
            for item in error.errors(include_url=False)
        ][:8]
    problems: list[str] = []
    # The REST reference: Content.role "Must be either 'user' or 'model'"; the SDK: Optional[str].
    allowed_roles = (None, "user") if system else (None, "user", "model")
    if content.role not in allowed_roles:
        problems.append(f"{where}.role: must be 'user' or 'model', got {content.role!r}")
    if not content.parts:
        problems.append(f"{where}.parts: at least one part is required")
    for index, part in enumerate(content.parts or []):
        at = f"{where}.parts.{index}"
        fields = [name for name in GEMINI_DATA_FIELDS if getattr(part, name) is not None]
        # The REST reference: "Union field data can be only one of ..."
        if len(fields) != 1:
            problems.append(f"{at}: exactly one data field is required, got {fields or 'none'}")
        if system and fields != ["text"]:
            problems.append(f"{at}: systemInstruction holds text parts only")
        if part.text == "" and part.thought_signature is None:
            problems.append(f"{at}.text: Unable to submit request because it has an empty text")
        if part.thought and part.text is None:
            problems.append(f"{at}.thought: only a text part can be a thought")
        if part.inline_data is not None and (
            part.inline_data.mime_type is None or part.inline_data.data is None
        ):
            problems.append(f"{at}.inlineData: mimeType and data are required")
        if part.file_data is not None and (
            part.file_data.file_uri is None or part.file_data.mime_type is None
        ):
            problems.append(f"{at}.fileData: fileUri and mimeType are required")
        if part.function_call is not None and not part.function_call.name:
            problems.append(f"{at}.functionCall.name: required")
        response = part.function_response
        if response is not None:
            if not response.name or response.response is None:
                problems.append(f"{at}.functionResponse: name and response are required")
            for number, item in enumerate(response.parts or []):
                if (item.inline_data is None) == (item.file_data is None):
                    problems.append(
                        f"{at}.functionResponse.parts.{number}: exactly one of inlineData or "
                        "fileData"
                    )
        if part.executable_code is not None and part.executable_code.code is None:
            problems.append(f"{at}.executableCode.code: required")
        if part.code_execution_result is not None and part.code_execution_result.outcome is None:
            problems.append(f"{at}.codeExecutionResult.outcome: required")
    try:  # the SDK's own Gemini Developer API converter (raises on Vertex-only fields)
        models._Content_to_mldev(content.model_dump(exclude_none=True))
    except ValueError as error:
        problems.append(f"{where}: google-genai's request converter: {error}")
    return problems


def _parts(content: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(content.get("parts") or [])


def gemini_rules(contents: Sequence[Mapping[str, Any]]) -> list[str]:
    """The rules the types cannot say (wire-formats section 4.2 to 4.4).

    - the first turn is a user turn;
    - ``functionCall`` and thought parts only in model turns, ``functionResponse`` only in
      user turns;
    - a function-call turn comes right after a user turn or a function-response turn, and is
      answered by the next turn, which carries as many ``functionResponse`` parts as there were
      calls, before any other part, each naming a call of that turn (by id, and by name);
    - call ids are unique;
    - the first ``functionCall`` part of a turn carries a ``thoughtSignature`` (Gemini 3:
      *"Function call is missing a thought_signature in functionCall parts"*).
    """
    problems: list[str] = []
    if contents and contents[0].get("role") != "user":
        problems.append("contents.0: the conversation must start with a user turn")
    seen: set[str] = set()
    for index, content in enumerate(contents):
        where = f"contents.{index}"
        role = content.get("role")
        parts = _parts(content)
        calls = [part["functionCall"] for part in parts if "functionCall" in part]
        responses = [part["functionResponse"] for part in parts if "functionResponse" in part]
        previous = contents[index - 1] if index else None
        if role != "model":
            if calls:
                problems.append(f"{where}: functionCall parts must be in a model turn")
            if any(part.get("thought") for part in parts):
                problems.append(f"{where}: thought parts must be in a model turn")
        if calls:
            if previous is None or previous.get("role") != "user":
                problems.append(
                    f"{where}: Please ensure that function call turn comes immediately after a "
                    "user turn or after a function response turn"
                )
            first = next(part for part in parts if "functionCall" in part)
            if "thoughtSignature" not in first:
                problems.append(
                    f"{where}: Function call is missing a thought_signature in functionCall parts"
                )
            for call in calls:
                call_id = call.get("id")
                if call_id is not None:
                    if call_id in seen:
                        problems.append(f"{where}: functionCall id {call_id!r} is used twice")
                    seen.add(call_id)
            following = contents[index + 1] if index + 1 < len(contents) else None
            if following is not None and not any(
                "functionResponse" in part for part in _parts(following)
            ):
                problems.append(
                    f"contents.{index + 1}: Please ensure that function response turn comes "
                    "immediately after a function call turn"
                )
        if responses:
            if role == "model":
                problems.append(f"{where}: functionResponse parts must be in a user turn")
            asked = [
                part["functionCall"] for part in _parts(previous or {}) if "functionCall" in part
            ]
            if previous is None or previous.get("role") != "model" or not asked:
                problems.append(
                    f"{where}: Please ensure that function response turn comes immediately "
                    "after a function call turn"
                )
                continue
            if len(asked) != len(responses):
                problems.append(
                    f"{where}: Please ensure that the number of function response parts "
                    f"({len(responses)}) is equal to the number of function call parts "
                    f"({len(asked)}) of the function call turn"
                )
            first_other = next(
                (i for i, part in enumerate(parts) if "functionResponse" not in part), len(parts)
            )
            if any("functionResponse" in part for part in parts[first_other:]):
                problems.append(f"{where}: a part sits between the function response parts")
            by_id = {call.get("id"): call.get("name") for call in asked}
            for response in responses:
                response_id = response.get("id")
                if response_id is not None and response_id not in by_id:
                    problems.append(f"{where}: functionResponse id {response_id!r} answers no call")
                elif response_id is not None and by_id[response_id] != response.get("name"):
                    problems.append(
                        f"{where}: functionResponse {response_id!r} names "
                        f"{response.get('name')!r}, its call {by_id[response_id]!r}"
                    )
    return problems
