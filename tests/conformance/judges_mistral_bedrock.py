"""Judges of Mistral and Bedrock Converse output: the SDKs' own request models, then the rules.

``judge_mistral(payload)`` adds ``model`` to what ``encode`` returned, validates the body with
strict types rebuilt from ``mistralai``'s own ``ChatCompletionRequestTypedDict``, checks the
rules below, and then runs Mistral's own request validator from ``mistral_common``
(``MistralRequestValidatorV11`` in serving mode: role order, call/result pairing by id, the
nine-character ids, tool names).

``judge_bedrock(payload)`` adds ``modelId`` (and, to a fragment without one, a ``toolConfig``
naming the tools the history calls: Converse refuses tool blocks without one), validates the
``converse`` parameters with botocore's own ``validate_parameters`` against the service
model's ``Converse`` input shape, then walks the same shape for what botocore leaves to the
service (``enum``, ``pattern``, ``min`` / ``max`` lengths, bytes given as ``str``), then
checks the conversation rules.

Each raises :class:`~tests.conformance.judges.WireError` listing the problems. The rule
checkers read the wire payload only; they know nothing of threadline, so a codec cannot pass
by agreeing with itself.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import pydantic

from tests.conformance import _strict_types
from tests.conformance.judges import WireError
from tests.conformance.judges import type_problems
from tests.support import require_module

__all__ = [
    "bedrock_request_rules",
    "bedrock_rules",
    "converse_response_problems",
    "judge_bedrock",
    "judge_mistral",
    "mistral_common_problems",
    "mistral_response_format_problems",
    "mistral_rules",
]

MISTRAL_ID = re.compile(r"[a-zA-Z0-9]{9}")
NEXT_USER_TURN = {"role": "user", "content": "Go on."}
DOCUMENT_NAME = re.compile(r"[A-Za-z0-9()\[\]\- ]+")
"""What the AWS docs allow in a document ``name``: alphanumerics, whitespace (no more than one
in a row), hyphens, parentheses and square brackets."""


# ---------------------------------------------------------------------------------------------
# Mistral


def mistral_body() -> pydantic.TypeAdapter[Any]:
    """A ``POST /v1/chat/completions`` body, from ``mistralai``'s own TypedDicts."""
    require_module("mistralai")
    from mistralai.client.models.chatcompletionrequest import ChatCompletionRequestTypedDict

    return _strict_types.strict_adapter(ChatCompletionRequestTypedDict)


def judge_mistral(payload: Mapping[str, Any], *, as_prefix: bool = False) -> None:
    """Raise :class:`WireError` unless Mistral's ``/v1/chat/completions`` would accept ``payload``.

    Args:
        payload: what ``encode`` returned.
        as_prefix: judge ``payload`` as the start of a request that goes on with a user
            message. Mistral refuses a request that ends with an assistant message (unless
            it is a ``prefix``), and threadline's ordering guarantees are for histories that
            end in a user or tool message; generated histories may end anywhere.
    """
    body = {"model": "judge-model", **payload}
    # mistralai's TypedDict names the schema by its Python name (schema_definition): the wire
    # form is judged by the SDK's model, which reads the alias the client sends.
    response_format = body.pop("response_format", None)
    problems = type_problems(mistral_body(), body)
    if response_format is not None:
        problems += mistral_response_format_problems(response_format)
    if not problems:
        messages = list(payload["messages"])
        if as_prefix:
            messages.append(NEXT_USER_TURN)
        problems = mistral_rules(messages) or mistral_common_problems(messages)
    if problems:
        raise WireError("Mistral chat", problems)


def mistral_response_format_problems(value: Any) -> list[str]:
    """What the API would refuse in ``response_format``: keys outside the SDK's model, or
    values its ``ResponseFormat`` does not take."""
    models = require_module("mistralai.client.models")
    pydantic = require_module("pydantic")
    if not isinstance(value, Mapping):
        return ["response_format: must be an object"]
    problems = [f"response_format.{key}: unknown key" for key in value if key not in _FORMAT_KEYS]
    schema = value.get("json_schema")
    if isinstance(schema, Mapping):
        problems += [
            f"response_format.json_schema.{key}: unknown key"
            for key in schema
            if key not in _JSON_SCHEMA_KEYS
        ]
    try:
        models.ResponseFormat.model_validate(value)
    except pydantic.ValidationError as error:
        problems += [f"response_format: {line}" for line in str(error).splitlines()[:4]]
    return problems


_FORMAT_KEYS = frozenset({"type", "json_schema"})
_JSON_SCHEMA_KEYS = frozenset({"name", "schema", "description", "strict"})


def mistral_rules(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The rules neither the types nor ``mistral_common`` check (wire-formats section 5.2).

    - an assistant message has content or tool calls;
    - ``arguments`` is a JSON object (as an object or a JSON string);
    - tool-call ids are unique in the conversation;
    - a tool message's ``name``, when set, is the name of the call it answers.
    """
    problems: list[str] = []
    names: dict[str, str] = {}
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "assistant":
            calls = message.get("tool_calls") or []
            if message.get("content") in (None, "", []) and not calls:
                problems.append(
                    f"messages.{index}: an assistant message needs content or tool_calls"
                )
            for call_index, call in enumerate(calls):
                where = f"messages.{index}.tool_calls.{call_index}"
                call_id = call.get("id")
                if call_id in names:
                    problems.append(f"{where}.id: {call_id!r} is used twice")
                names[call_id] = call["function"]["name"]
                if not _is_json_object(call["function"]["arguments"]):
                    problems.append(f"{where}.function.arguments: not a JSON object")
        elif role == "tool":
            name = message.get("name")
            call_id = message.get("tool_call_id")
            if name is not None and call_id in names and names[call_id] != name:
                called = names[call_id]
                problems.append(
                    f"messages.{index}.name: {name!r}, but {call_id!r} calls {called!r}"
                )
    return problems


def _is_json_object(arguments: Any) -> bool:
    if isinstance(arguments, Mapping):
        return True
    try:
        return isinstance(json.loads(arguments), dict)
    except ValueError:
        return False


def mistral_common_problems(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """What ``mistral_common``'s ``MistralRequestValidatorV11`` (serving mode) refuses.

    ``mistral_common`` models the tokenizer's view of a request, so two API spellings are
    translated first: a ``thinking`` chunk's list of text chunks becomes its text (the
    ``signature`` is for the API, not the tokenizer), and a ``document_url`` chunk, which the
    API turns into text before the model sees it, becomes a text chunk.
    """
    require_module("mistral_common")
    from mistral_common.exceptions import MistralCommonException
    from mistral_common.protocol.instruct.request import ChatCompletionRequest
    from mistral_common.protocol.instruct.validator import MistralRequestValidatorV11
    from mistral_common.protocol.instruct.validator import ValidationMode

    converted = [_for_mistral_common(message) for message in messages]
    try:
        request = ChatCompletionRequest.from_openai(messages=converted, model="judge-model")
        # By value: mypy's Python 3.10 target has no enum.StrEnum, so it mistypes the members.
        MistralRequestValidatorV11(mode=ValidationMode("serving")).validate_request(request)
    except (MistralCommonException, ValueError) as error:
        return [f"mistral_common: {type(error).__name__}: {error}"]
    return []


def _for_mistral_common(message: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(message)
    content = message.get("content")
    if isinstance(content, list):
        out["content"] = [_chunk_for_mistral_common(chunk) for chunk in content]
    return out


def _chunk_for_mistral_common(chunk: Mapping[str, Any]) -> Mapping[str, Any]:
    kind = chunk.get("type")
    if kind == "thinking" and isinstance(chunk.get("thinking"), list):
        text = "".join(
            inner.get("text", "") for inner in chunk["thinking"] if inner.get("type") == "text"
        )
        return {"type": "thinking", "thinking": text}
    if kind == "document_url":
        return {"type": "text", "text": f"[document {chunk.get('document_url')}]"}
    return chunk


# ---------------------------------------------------------------------------------------------
# Bedrock Converse


@functools.cache
def _converse_model() -> Any:
    session = require_module("botocore.session")
    return session.get_session().get_service_model("bedrock-runtime").operation_model("Converse")


def judge_bedrock(payload: Mapping[str, Any]) -> None:
    """Raise :class:`WireError` unless ``client.converse(modelId=..., **payload)`` would be
    accepted by Bedrock."""
    body: dict[str, Any] = {"modelId": "judge-model", **payload}
    tools = _tool_names(payload.get("messages"))
    if tools is not None and "toolConfig" not in payload:  # a fragment from a codec module
        body["toolConfig"] = {
            "tools": [
                {"toolSpec": {"name": name, "inputSchema": {"json": {"type": "object"}}}}
                for name in tools
            ]
        }
    shape = _converse_model().input_shape
    problems = _botocore_problems(body, shape) or shape_problems(body, shape, "")
    if not problems:
        problems = bedrock_request_rules(payload)
        problems += bedrock_rules(payload["messages"], payload.get("system"))
    if problems:
        raise WireError("Bedrock Converse", problems)


BEDROCK_MAX_CACHE_POINTS = 4
"""The cache checkpoints a Converse request may hold (system, tools and messages together)."""


def bedrock_request_rules(payload: Mapping[str, Any]) -> list[str]:
    """The request fields beside the messages: at most four ``cachePoint`` blocks, unique
    tool names that cover every tool the history calls, a ``toolChoice`` naming a defined
    tool, and a ``cachePoint`` never first in a list (it marks the blocks before it)."""
    problems: list[str] = []
    config = payload.get("toolConfig") or {}
    lists: list[tuple[str, list[Any]]] = [
        ("system", list(payload.get("system") or [])),
        ("toolConfig.tools", list(config.get("tools") or [])),
    ]
    for index, message in enumerate(payload.get("messages") or []):
        lists.append((f"messages.{index}.content", list(message.get("content") or [])))
    points = 0
    for where, blocks in lists:
        for position, block in enumerate(blocks):
            if isinstance(block, Mapping) and "cachePoint" in block:
                points += 1
                if position == 0:
                    problems.append(f"{where}.0: a cachePoint marks nothing before it")
    if points > BEDROCK_MAX_CACHE_POINTS:
        problems.append(
            f"at most {BEDROCK_MAX_CACHE_POINTS} cache checkpoints per request; found {points}"
        )
    names = [
        tool["toolSpec"].get("name")
        for tool in config.get("tools") or []
        if isinstance(tool, Mapping) and "toolSpec" in tool
    ]
    if len(set(names)) != len(names):
        problems.append(f"toolConfig.tools: tool names must be unique: {names}")
    choice = config.get("toolChoice")
    if isinstance(choice, Mapping) and "tool" in choice and choice["tool"].get("name") not in names:
        problems.append(f"toolConfig.toolChoice: names {choice['tool'].get('name')!r}, not a tool")
    if config:
        called = _tool_names(payload.get("messages")) or []
        missing = [name for name in called if name not in names]
        if missing:
            problems.append(f"toolConfig.tools: the history calls {missing}, which are not defined")
    return problems


def _tool_names(messages: Any) -> list[str] | None:
    """The tools the history calls, or ``None`` when it holds no tool blocks."""
    names: dict[str, None] = {}
    found = False
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, Mapping) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, Mapping) and ("toolUse" in block or "toolResult" in block):
                found = True
                use = block.get("toolUse")
                if isinstance(use, Mapping) and isinstance(use.get("name"), str):
                    names[use["name"]] = None
    return list(names) if found else None


def _botocore_problems(body: Mapping[str, Any], shape: Any) -> list[str]:
    validate = require_module("botocore.validate")
    exceptions = require_module("botocore.exceptions")
    try:
        validate.validate_parameters(body, shape)
    except exceptions.ParamValidationError as error:
        return [line for line in str(error.kwargs["report"]).splitlines() if line.strip()][:8]
    return []


def shape_problems(value: Any, shape: Any, path: str) -> list[str]:
    """What botocore leaves to the service: ``enum``, ``pattern`` (a full match, as the API
    reference writes it: ``^...$``), ``min`` / ``max`` lengths and values, and blobs that are
    not ``bytes`` (botocore would base64-encode a ``str`` again, as UTF-8 text)."""
    problems: list[str] = []
    _walk(value, shape, path, problems)
    return problems[:8]


def _walk(value: Any, shape: Any, path: str, problems: list[str]) -> None:
    kind = shape.type_name
    metadata = shape.metadata
    if kind == "structure":
        if metadata.get("document") or not isinstance(value, Mapping):
            return
        for key, item in value.items():
            member = shape.members.get(key)
            if member is not None:
                _walk(item, member, f"{path}.{key}" if path else key, problems)
    elif kind == "list" and isinstance(value, list):
        _check_size(len(value), metadata, path, "items", problems)
        for index, item in enumerate(value):
            _walk(item, shape.member, f"{path}[{index}]", problems)
    elif kind == "map" and isinstance(value, Mapping):
        _check_size(len(value), metadata, path, "entries", problems)
        for key, item in value.items():
            _walk(key, shape.key, f"{path} key", problems)
            _walk(item, shape.value, f"{path}.{key}", problems)
    elif kind == "string" and isinstance(value, str):
        if shape.enum and value not in shape.enum:
            problems.append(f"{path}: {value!r} is not one of {shape.enum}")
        pattern = metadata.get("pattern")
        if pattern is not None and re.fullmatch(pattern, value) is None:
            problems.append(f"{path}: {value!r} does not match {pattern}")
        _check_size(len(value), metadata, path, "characters", problems)
    elif kind == "blob":
        if not isinstance(value, (bytes, bytearray)):
            problems.append(
                f"{path}: a blob must be bytes, not {type(value).__name__} (boto3 base64-encodes "
                "bytes itself: base64 text would be encoded twice)"
            )
        else:
            _check_size(len(value), metadata, path, "bytes", problems)
    elif kind in ("integer", "long") and isinstance(value, int):
        if "min" in metadata and value < metadata["min"]:
            problems.append(f"{path}: {value} is below the minimum {metadata['min']}")
        if "max" in metadata and value > metadata["max"]:
            problems.append(f"{path}: {value} is above the maximum {metadata['max']}")


def _check_size(
    size: int, metadata: Mapping[str, Any], path: str, unit: str, out: list[str]
) -> None:
    if "min" in metadata and size < metadata["min"]:
        out.append(f"{path}: {size} {unit}, fewer than the minimum {metadata['min']}")
    if "max" in metadata and size > metadata["max"]:
        out.append(f"{path}: {size} {unit}, more than the maximum {metadata['max']}")


def _blank(value: Any) -> bool:
    return isinstance(value, str) and (not value or value.isspace())


def bedrock_rules(messages: Sequence[Mapping[str, Any]], system: Any = None) -> list[str]:
    """The conversation rules (wire-formats section 6.2), on the ``messages`` list:

    - roles are ``user`` and ``assistant``, strictly alternating, starting with ``user``;
    - text blocks are not blank (*"The text field in the ContentBlock object is blank"*),
      in ``system``, messages and tool results alike;
    - ``toolUse`` and ``reasoningContent`` only in assistant turns, ``toolResult`` only in
      user turns and before any other block of the turn;
    - every ``toolUse`` is answered in the next turn, once, and every ``toolResult`` answers a
      ``toolUse`` of the turn right before; ``toolUseId`` values are unique;
    - a document ``name`` holds only the characters the AWS docs allow, no two whitespace
      characters in a row.
    """
    problems: list[str] = []
    for index, block in enumerate(system or []):
        if _blank(block.get("text")):
            problems.append(f"system.{index}: the text field is blank")
    seen: set[str] = set()
    for index, message in enumerate(messages):
        where = f"messages.{index}"
        role = message.get("role")
        expected = "user" if index % 2 == 0 else "assistant"
        if role != expected:
            problems.append(
                f"{where}: role {role!r}, but a conversation must start with a user message and "
                "alternate between user and assistant roles"
            )
        blocks = list(message.get("content") or [])
        keys = [next(iter(block), None) for block in blocks]
        for block_index, block in enumerate(blocks):
            problems.extend(_block_problems(block, f"{where}.content.{block_index}"))
        if role == "user":
            for key in ("toolUse", "reasoningContent"):
                if key in keys:
                    problems.append(f"{where}: a {key} block is only valid in assistant turns")
            if "toolResult" in keys:
                first_other = next(
                    (i for i, key in enumerate(keys) if key != "toolResult"), len(keys)
                )
                if "toolResult" in keys[first_other:]:
                    problems.append(f"{where}: toolResult blocks must come first in the turn")
                previous = messages[index - 1] if index else {}
                asked = _ids(previous, "toolUse") if previous.get("role") == "assistant" else []
                answered = _ids(message, "toolResult")
                for call_id in answered:
                    if call_id not in asked:
                        problems.append(
                            f"{where}: toolResult {call_id!r} answers no toolUse of the turn before"
                        )
                if len(set(answered)) != len(answered):
                    problems.append(f"{where}: a toolUse is answered twice")
        elif role == "assistant":
            if "toolResult" in keys:
                problems.append(f"{where}: toolResult blocks are only valid in user turns")
            ids = _ids(message, "toolUse")
            for call_id in ids:
                if call_id in seen:
                    problems.append(f"{where}: toolUseId {call_id!r} is used twice")
                seen.add(call_id)
            following = messages[index + 1] if index + 1 < len(messages) else None
            if ids:
                answered = _ids(following, "toolResult") if following is not None else []
                missing = [call_id for call_id in ids if call_id not in answered]
                if missing:
                    problems.append(
                        f"{where}: toolUse blocks {missing} have no toolResult in the next turn"
                    )
    return problems


def _ids(message: Mapping[str, Any], key: str) -> list[Any]:
    return [
        block[key].get("toolUseId")
        for block in message.get("content") or []
        if isinstance(block.get(key), Mapping)
    ]


def _block_problems(block: Mapping[str, Any], where: str) -> list[str]:
    problems: list[str] = []
    if "text" in block and _blank(block["text"]):
        problems.append(f"{where}.text: the text field is blank")
    document = block.get("document")
    if isinstance(document, Mapping):
        name = document.get("name")
        if not isinstance(name, str) or not DOCUMENT_NAME.fullmatch(name) or "  " in name:
            problems.append(
                f"{where}.document.name: {name!r} holds characters the service refuses "
                "(alphanumerics, single spaces, hyphens, parentheses and square brackets only)"
            )
    result = block.get("toolResult")
    if isinstance(result, Mapping):
        for index, inner in enumerate(result.get("content") or []):
            problems.extend(_block_problems(inner, f"{where}.toolResult.content.{index}"))
    return problems


def converse_response_problems(response: Mapping[str, Any]) -> list[str]:
    """Whether a response dict fits the service model's ``ConverseResponse`` shape (what
    boto3 returns, less ``ResponseMetadata``); tests use it to keep hand-built responses
    honest."""
    shape = _converse_model().output_shape
    body = {key: value for key, value in response.items() if key != "ResponseMetadata"}
    return _botocore_problems(body, shape) or shape_problems(body, shape, "")
