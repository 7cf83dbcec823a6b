"""Judges of codec output: the SDKs' own request types, then the APIs' ordering and id rules.

``judge_openai_chat(payload)`` and ``judge_anthropic(payload)`` take what ``encode`` returned,
add the request fields a real call needs (``model``; ``max_tokens`` for Anthropic), validate
the body with the strict SDK types of :mod:`tests.conformance._strict_types`, and then check
the rules those types cannot express: the 400s quoted in the providers' docs and issue
threads (tool results right after their calls, id formats, ...). Each raises
:class:`WireError` listing every problem.

The rule checkers (``openai_chat_rules``, ``anthropic_rules``) read the wire payload only; they
know nothing of threadline, so a codec cannot pass by agreeing with itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import pydantic

from tests.conformance import _strict_types

__all__ = [
    "WireError",
    "anthropic_request_rules",
    "anthropic_rules",
    "judge_anthropic",
    "judge_openai_chat",
    "openai_chat_rules",
    "type_problems",
]

OPENAI_MAX_ID = 40
ANTHROPIC_ID = re.compile(r"[a-zA-Z0-9_-]+")


class WireError(AssertionError):
    """A payload the provider would reject; ``problems`` lists why."""

    def __init__(self, api: str, problems: Sequence[str]) -> None:
        self.api = api
        self.problems = list(problems)
        super().__init__(f"{api} would reject this payload:\n  " + "\n  ".join(self.problems))


def type_problems(adapter: pydantic.TypeAdapter[Any], body: Any) -> list[str]:
    """What a strict SDK-type adapter refuses in ``body``: at most eight lines, each the JSON
    path of a value (``messages.2.content.1.image_url``) and what is wrong with it."""
    try:
        adapter.validate_python(body)
    except pydantic.ValidationError as error:
        return _summarize(error)
    return []


def _summarize(error: pydantic.ValidationError) -> list[str]:
    """The errors of the union branches that were real candidates, most specific first.

    A union of TypedDicts fails in every branch; branches whose ``type`` or ``role`` literal
    did not match were never candidates, and the ``str`` branch of ``str | list`` content is
    noise when a list was given.
    """
    errors = error.errors(include_url=False)
    ruled_out = [
        tuple(item["loc"][:-1])
        for item in errors
        if item["type"] in ("literal_error", "missing")
        and item["loc"]
        and item["loc"][-1] in ("type", "role")
    ]
    kept = [
        item
        for item in errors
        if not any(tuple(item["loc"][: len(prefix)]) == prefix for prefix in ruled_out)
        and not (item["type"] == "string_type" and isinstance(item.get("input"), list))
    ]
    if not kept:  # every branch was ruled out by its tag: the tag itself is the problem
        kept = [item for item in errors if item["type"] == "literal_error"][:1] or errors[:1]
    kept.sort(key=lambda item: -len(item["loc"]))
    lines: list[str] = []
    for item in kept:
        line = f"{_path(item['loc'])}: {item['msg']}"
        if line not in lines:
            lines.append(line)
    return lines[:8]


_TYPE_LABELS = frozenset({"str", "int", "float", "bool", "bytes", "none", "list", "dict"})


def _path(loc: Sequence[int | str]) -> str:
    """The JSON path of an error location, without the labels pydantic puts in it for the
    branch of a union it tried: TypedDict names (``EasyInputMessageParam``), types
    (``str``) and generic types (``list[union[...]]``, ``literal['a']``)."""
    return ".".join(str(item) for item in loc if not _is_type_label(item))


def _is_type_label(item: int | str) -> bool:
    if isinstance(item, int):
        return False
    return item[:1].isupper() or "[" in item or item in _TYPE_LABELS


# ---------------------------------------------------------------------------------------------
# OpenAI Chat Completions


def judge_openai_chat(payload: Mapping[str, Any]) -> None:
    """Raise :class:`WireError` unless ``/v1/chat/completions`` would accept ``payload``."""
    body = {"model": "judge-model", **payload}
    problems = type_problems(_strict_types.openai_chat_body(), body)
    if not problems:
        problems = openai_chat_rules(payload["messages"])
    if problems:
        raise WireError("OpenAI Chat Completions", problems)


DIALECT_FIELDS = ("reasoning_content", "reasoning", "reasoning_details")
"""The assistant message fields of the OpenAI-compatible dialects that OpenAI's types lack."""


def judge_dialect(name: str, payload: Mapping[str, Any]) -> None:
    """Raise :class:`WireError` unless the dialect ``name``'s chat completions would accept
    ``payload``: OpenAI's types and rules without the dialect's reasoning fields, then the
    dialect's own rules (``tests.conformance._rules``)."""
    from tests.conformance._rules import judge_rules

    messages = [
        {key: value for key, value in message.items() if key not in DIALECT_FIELDS}
        if message.get("role") == "assistant"
        else message
        for message in payload["messages"]
    ]
    judge_openai_chat({**payload, "messages": messages})
    judge_rules(name, payload)


def openai_chat_rules(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The rules the types cannot say (wire-formats section 1.2 and 1.3).

    - every ``tool_calls`` id is answered by a ``tool`` message before any other message;
    - a ``tool`` message answers a call of the assistant message right before its run;
    - ids are 1 to 40 characters and unique; ``arguments`` is a JSON object as a string;
    - an assistant message has content or tool calls.
    """
    problems: list[str] = []
    pending: dict[str, int] = {}
    seen: set[object] = set()
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id in pending:
                del pending[call_id]
            else:
                problems.append(
                    f"messages.{index}: tool message for {call_id!r}, which no assistant "
                    "tool_calls right before it is waiting for"
                )
            continue
        if pending:
            problems.append(
                f"messages.{index}: tool_call_ids {sorted(pending)} have no tool message "
                "before this message"
            )
            pending = {}
        if role != "assistant":
            continue
        calls = message.get("tool_calls") or []
        for call_index, call in enumerate(calls):
            call_id = call.get("id")
            where = f"messages.{index}.tool_calls.{call_index}"
            if not isinstance(call_id, str) or not 0 < len(call_id) <= OPENAI_MAX_ID:
                problems.append(f"{where}.id: {call_id!r} is not 1 to {OPENAI_MAX_ID} characters")
            if call_id in seen:
                problems.append(f"{where}.id: {call_id!r} is used twice")
            seen.add(call_id)
            pending[call_id] = index
            if call.get("type") == "function":
                arguments = call["function"]["arguments"]
                try:
                    parsed = json.loads(arguments)
                except ValueError:
                    parsed = None
                if not isinstance(parsed, dict):
                    problems.append(f"{where}.function.arguments: not a JSON object string")
        # An audio reply goes back by its id alone (platform.openai.com/docs/guides/audio,
        # "multi-turn conversations": {"role": "assistant", "audio": {"id": ...}}).
        answered = calls or message.get("refusal") or message.get("audio")
        if message.get("content") in (None, "", []) and not answered:
            problems.append(f"messages.{index}: an assistant message needs content or tool_calls")
    if pending:
        problems.append(f"end: tool_call_ids {sorted(pending)} have no tool message")
    return problems


# ---------------------------------------------------------------------------------------------
# Anthropic Messages


def judge_anthropic(payload: Mapping[str, Any]) -> None:
    """Raise :class:`WireError` unless ``/v1/messages`` would accept ``payload``."""
    body = {"model": "judge-model", "max_tokens": 1024, **payload}
    problems = type_problems(_strict_types.anthropic_body(), body)
    if not problems:
        problems = anthropic_request_rules(payload)
        problems += anthropic_rules(payload["messages"], payload.get("system"))
    if problems:
        raise WireError("Anthropic Messages", problems)


ANTHROPIC_MAX_CACHE_BREAKPOINTS = 4
"""*"A maximum of 4 blocks with cache_control may be provided"* (the API's 400)."""


def anthropic_request_rules(payload: Mapping[str, Any]) -> list[str]:
    """The request fields beside the messages: at most four ``cache_control`` blocks (tools,
    system and messages together), unique tool names, a ``tool_choice`` naming a tool that
    is defined."""
    problems: list[str] = []
    blocks: list[Any] = list(payload.get("tools") or [])
    system = payload.get("system")
    blocks.extend(system if isinstance(system, list) else [])
    for message in payload.get("messages") or []:
        content = message.get("content")
        blocks.extend(content if isinstance(content, list) else [])
    marked = sum(1 for block in blocks if isinstance(block, Mapping) and "cache_control" in block)
    if marked > ANTHROPIC_MAX_CACHE_BREAKPOINTS:
        problems.append(
            f"a maximum of {ANTHROPIC_MAX_CACHE_BREAKPOINTS} blocks with cache_control may be "
            f"provided; found {marked}"
        )
    names = [tool.get("name") for tool in payload.get("tools") or []]
    if len(set(names)) != len(names):
        problems.append(f"tools: tool names must be unique: {names}")
    choice = payload.get("tool_choice")
    if isinstance(choice, Mapping):
        if choice.get("type") == "tool" and choice.get("name") not in names:
            problems.append(f"tool_choice: names {choice.get('name')!r}, which is not in tools")
        if choice.get("type") in ("any", "tool") and not names:
            problems.append("tool_choice: forces a tool call, but the request defines no tools")
    return problems


def _blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content or [])


def anthropic_rules(messages: Sequence[Mapping[str, Any]], system: Any = None) -> list[str]:
    """The rules the types cannot say (wire-formats section 3.2 and 3.3).

    The API merges consecutive same-role messages into one turn before checking, so these
    rules are checked on merged turns:

    - ``tool_use``, ``thinking`` and ``redacted_thinking`` only in assistant turns,
      ``tool_result`` only in user turns, and first in its turn;
    - every ``tool_use`` is answered in the next turn, and every ``tool_result`` answers a
      ``tool_use`` of the turn right before;
    - ``tool_use`` ids match ``^[a-zA-Z0-9_-]+$`` and are unique;
    - text is not blank, in ``system``, turns and ``tool_result`` content alike (*"text
      content blocks must be non-empty"*, *"text content blocks must contain non-whitespace
      text"*).
    """
    problems: list[str] = []
    turns: list[tuple[str, int, list[Mapping[str, Any]]]] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        if turns and turns[-1][0] == role:
            turns[-1][2].extend(_blocks(message))
        else:
            turns.append((str(role), index, _blocks(message)))
    system_blocks = [{"type": "text", "text": system}] if isinstance(system, str) else system or []
    problems.extend(_blank_text_problems(system_blocks, "system"))
    seen: set[object] = set()
    for number, (role, index, blocks) in enumerate(turns):
        where = f"messages.{index}"
        problems.extend(_blank_text_problems(blocks, where))
        for block in blocks:
            if block.get("type") == "tool_result" and "content" in block:
                problems.extend(_blank_text_problems(_blocks(block), f"{where}: tool_result"))
        kinds = [block.get("type") for block in blocks]
        previous = turns[number - 1] if number else None
        following = turns[number + 1] if number + 1 < len(turns) else None
        if role == "user":
            for kind in ("tool_use", "thinking", "redacted_thinking", "server_tool_use"):
                if kind in kinds:
                    problems.append(f"{where}: a {kind} block is only valid in assistant turns")
            if "tool_result" in kinds:
                first_other = next(
                    (i for i, kind in enumerate(kinds) if kind != "tool_result"), len(kinds)
                )
                if "tool_result" in kinds[first_other:]:
                    problems.append(f"{where}: tool_result blocks must come first in the turn")
                asked = {
                    block.get("id")
                    for block in (previous[2] if previous and previous[0] == "assistant" else [])
                    if block.get("type") == "tool_use"
                }
                for block in blocks:
                    if block.get("type") == "tool_result" and block.get("tool_use_id") not in asked:
                        problems.append(
                            f"{where}: unexpected tool_use_id {block.get('tool_use_id')!r} in "
                            "tool_result blocks (no tool_use in the previous turn)"
                        )
        elif role == "assistant":
            if "tool_result" in kinds:
                problems.append(f"{where}: tool_result blocks are only valid in user turns")
            ids = [block.get("id") for block in blocks if block.get("type") == "tool_use"]
            for call_id in ids:
                if not isinstance(call_id, str) or not ANTHROPIC_ID.fullmatch(call_id):
                    problems.append(f"{where}: tool_use.id {call_id!r} must match ^[a-zA-Z0-9_-]+$")
                if call_id in seen:
                    problems.append(f"{where}: tool_use.id {call_id!r} is used twice")
                seen.add(call_id)
            if ids and following is not None:
                answered = {
                    block.get("tool_use_id")
                    for block in following[2]
                    if block.get("type") == "tool_result"
                }
                missing = [call_id for call_id in ids if call_id not in answered]
                if missing:
                    problems.append(
                        f"{where}: tool_use ids were found without tool_result blocks "
                        f"immediately after: {missing}"
                    )
            elif ids:
                problems.append(f"{where}: tool_use ids {ids} are never answered")
        else:
            problems.append(f"{where}: role {role!r} is not user or assistant")
    return problems


def _blank_text_problems(blocks: Sequence[Mapping[str, Any]], where: str) -> list[str]:
    problems = []
    for block in blocks:
        text = block.get("text")
        if block.get("type") != "text" or not isinstance(text, str):
            continue
        if not text:
            problems.append(f"{where}: text content blocks must be non-empty")
        elif text.isspace():
            problems.append(f"{where}: text content blocks must contain non-whitespace text")
    return problems
