"""The rules judge is judged too: for each rule, a minimal payload that breaks it and a minimal
one that keeps it, so no rule can pass vacuously.

The payloads are hand-written wire JSON, not ``encode`` output: the judge must know the rules
without threadline's help.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import pytest

from tests.conformance import _rules
from tests.conformance.judges import WireError

Payload = Mapping[str, Any]

ASK = {"role": "user", "content": "What's the weather?"}
CHAT_CALL = {
    "role": "assistant",
    "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "NAME", "arguments": "{}"}}
    ],
}
CHAT_RESULT = {"role": "tool", "tool_call_id": "call_1", "content": "18C"}


def chat_call(name: str) -> dict[str, Any]:
    call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": "{}"}}
    return {"role": "assistant", "tool_calls": [call]}


def anthropic_loop(result: Mapping[str, Any], *, name: str = "get_weather") -> dict[str, Any]:
    use = {"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}
    answer = {"type": "tool_result", "tool_use_id": "toolu_1", **result}
    return {
        "messages": [
            ASK,
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [answer]},
        ]
    }


def thinking_loop(first: Mapping[str, Any] | None, thinking: str = "enabled") -> dict[str, Any]:
    use = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}
    blocks = [first, use] if first is not None else [use]
    answer = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C"}
    return {
        "thinking": {"type": thinking, "budget_tokens": 1024},
        "messages": [
            ASK,
            {"role": "assistant", "content": blocks},
            {"role": "user", "content": [answer]},
        ],
    }


def pdf(name: str) -> dict[str, Any]:
    return {"document": {"format": "pdf", "name": name, "source": {"bytes": b"%PDF"}}}


def bedrock_loop(content: list[Any], *, name: str = "get_weather") -> dict[str, Any]:
    use = {"toolUse": {"toolUseId": "t1", "name": name, "input": {}}}
    result = {"toolResult": {"toolUseId": "t1", "content": content}}
    return {
        "messages": [
            {"role": "user", "content": [{"text": "weather?"}]},
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [result]},
        ]
    }


def gemini_call(name: str) -> dict[str, Any]:
    return {
        "contents": [
            {"role": "user", "parts": [{"text": "weather?"}]},
            {"role": "model", "parts": [{"functionCall": {"name": name, "args": {}}}]},
        ]
    }


def gemini_tool(field: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    declaration = {"name": "file_ticket", field: schema}
    return {"contents": [ASK_GEMINI], "tools": [{"functionDeclarations": [declaration]}]}


def gemini_output(**config: Any) -> dict[str, Any]:
    return {"contents": [ASK_GEMINI], "generationConfig": config}


ASK_GEMINI = {"role": "user", "parts": [{"text": "weather?"}]}
TAGS = {"type": "object", "properties": {"tags": {"type": "object"}}}
NAMED = {"type": "object", "properties": {"a": {"type": "string"}}}
NAMED_TAGS = {"type": "object", "properties": {"tags": NAMED}}
LOOP: dict[str, Any] = {
    "type": "object",
    "properties": {"next": {"$ref": "#/$defs/L"}},
    "$defs": {
        "L": {"type": "object", "properties": {"next": {"$ref": "#/$defs/L"}}, "required": ["next"]}
    },
}


def responses_items(*items: Mapping[str, Any]) -> dict[str, Any]:
    return {"input": [{"role": "user", "content": "weather?"}, *items]}


REASONING = {"type": "reasoning", "id": "rs_1", "summary": []}
OUTPUT = {
    "type": "message",
    "role": "assistant",
    "id": "msg_1",
    "content": [{"type": "output_text", "text": "Sunny."}],
}
FUNCTION_CALL = {"type": "function_call", "call_id": "c1", "name": "NAME", "arguments": "{}"}

# issue 37 items 3 and 4
SHORT = {"type": "ephemeral"}
LONG = {"type": "ephemeral", "ttl": "1h"}


def anthropic_marked(system: Mapping[str, Any], *turn: Mapping[str, Any]) -> dict[str, Any]:
    """A request with a marked system block and one user turn of marked text blocks."""
    blocks = [
        {"type": "text", "text": str(number), "cache_control": mark}
        for number, mark in enumerate(turn)
    ]
    return {
        "system": [{"type": "text", "text": "Be brief.", "cache_control": system}],
        "messages": [{"role": "user", "content": blocks}],
    }


def bedrock_marked(system: Mapping[str, Any], *turn: Mapping[str, Any]) -> dict[str, Any]:
    """As `anthropic_marked`, with ``cachePoint`` blocks."""
    blocks: list[Any] = []
    for number, mark in enumerate(turn):
        blocks += [{"text": str(number)}, {"cachePoint": mark}]
    return {
        "system": [{"text": "Be brief."}, {"cachePoint": system}],
        "messages": [{"role": "user", "content": blocks}],
    }


POINT = {"type": "default"}
LONG_POINT = {"type": "default", "ttl": "1h"}
FORCED_TOOLS = {"tools": [{"name": "f", "input_schema": {"type": "object"}}]}
BEDROCK_TOOLS = [{"toolSpec": {"name": "f", "inputSchema": {"json": {"type": "object"}}}}]


def anthropic_forced(choice: str) -> dict[str, Any]:
    return {
        **FORCED_TOOLS,
        "tool_choice": {"type": choice},
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "messages": [ASK],
    }


def bedrock_forced(choice: str) -> dict[str, Any]:
    chosen = {"name": "f"} if choice == "tool" else {}
    return {
        "toolConfig": {"tools": BEDROCK_TOOLS, "toolChoice": {choice: chosen}},
        "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 1024}},
        "messages": [{"role": "user", "content": [{"text": "weather?"}]}],
    }


CASES: Mapping[str, tuple[Payload, Payload]] = {
    # rule id: (a payload that breaks it, a payload that keeps it)
    "anthropic.failed_result_text_only": (
        anthropic_loop(
            {
                "is_error": True,
                "content": [
                    {"type": "text", "text": "failed"},
                    {"type": "image", "source": {"type": "base64", "data": "iVBO"}},
                ],
            }
        ),
        anthropic_loop({"is_error": True, "content": [{"type": "text", "text": "failed"}]}),
    ),
    "anthropic.failed_result_not_empty": (
        anthropic_loop({"is_error": True, "content": []}),
        anthropic_loop({"is_error": True, "content": "timed out"}),
    ),
    "anthropic.first_message_user": (
        {"messages": [{"role": "assistant", "content": "Hello."}, ASK]},
        {"messages": [ASK, {"role": "assistant", "content": "Hello."}]},
    ),
    "anthropic.tool_loop_starts_with_thinking": (
        thinking_loop(None),
        thinking_loop({"type": "redacted_thinking", "data": "EmwKAhgB"}),
    ),
    "anthropic.tool_name_pattern": (
        anthropic_loop({"content": "18C"}, name="files.read"),
        anthropic_loop({"content": "18C"}, name="files_read"),
    ),
    "anthropic.cache_ttl_order": (
        anthropic_marked(SHORT, LONG),
        anthropic_marked(LONG, LONG, SHORT),
    ),
    "anthropic.cache_breakpoints_at_most_four": (
        anthropic_marked(LONG, LONG, SHORT, SHORT, SHORT),
        anthropic_marked(LONG, SHORT, SHORT, SHORT),
    ),
    "anthropic.no_forced_tool_with_thinking": (
        anthropic_forced("any"),
        anthropic_forced("auto"),
    ),
    "bedrock.cache_ttl_order": (
        bedrock_marked(POINT, LONG_POINT),
        bedrock_marked(LONG_POINT, LONG_POINT, POINT),
    ),
    "bedrock.cache_points_at_most_four": (
        bedrock_marked(LONG_POINT, POINT, POINT, POINT, POINT),
        bedrock_marked(POINT, POINT, POINT, POINT),
    ),
    "bedrock.no_forced_tool_with_thinking": (
        bedrock_forced("tool"),
        bedrock_forced("auto"),
    ),
    "bedrock.document_names_unique": (
        {"messages": [{"role": "user", "content": [{"text": "compare"}, pdf("a"), pdf("a")]}]},
        {"messages": [{"role": "user", "content": [{"text": "compare"}, pdf("a"), pdf("b")]}]},
    ),
    "bedrock.document_name_characters": (
        {"messages": [{"role": "user", "content": [{"text": "read"}, pdf("report.pdf")]}]},
        {"messages": [{"role": "user", "content": [{"text": "read"}, pdf("report (v2) [a-b]")]}]},
    ),
    "bedrock.tool_result_not_empty": (
        {**bedrock_loop([]), "toolConfig": {}},
        {**bedrock_loop([{"text": "18C"}]), "toolConfig": {}},
    ),
    "bedrock.tool_config_with_tool_blocks": (
        bedrock_loop([{"text": "18C"}]),
        {**bedrock_loop([{"text": "18C"}]), "toolConfig": {"tools": []}},
    ),
    "bedrock.first_message_user": (
        {"messages": [{"role": "assistant", "content": [{"text": "Hello."}]}]},
        {"messages": [{"role": "user", "content": [{"text": "Hello."}]}]},
    ),
    "bedrock.tool_name_pattern": (
        {**bedrock_loop([{"text": "18C"}], name="get weather"), "toolConfig": {}},
        {**bedrock_loop([{"text": "18C"}], name="get_weather"), "toolConfig": {}},
    ),
    "gemini.tool_name_pattern": (
        gemini_call("get weather"),
        gemini_call("files.read:v2"),
    ),
    # issue 37 items 1, 2 and 6
    "gemini.subset_object_has_properties": (
        gemini_tool("parameters", TAGS),
        gemini_tool("parameters", NAMED_TAGS),
    ),
    "gemini.subset_enum_only_for_strings": (
        gemini_output(responseSchema={"type": "object", "properties": {"k": {"enum": ["a"]}}}),
        gemini_output(
            responseSchema={
                "type": "object",
                "properties": {"k": {"type": "string", "enum": ["a"]}},
            }
        ),
    ),
    "gemini.subset_known_fields": (
        gemini_tool("parameters", {**NAMED_TAGS, "additionalProperties": False}),
        gemini_tool("parametersJsonSchema", {**NAMED_TAGS, "additionalProperties": False}),
    ),
    "gemini.schema_fields_exclusive": (
        gemini_output(responseSchema=NAMED_TAGS, responseJsonSchema=NAMED_TAGS),
        gemini_output(responseJsonSchema=NAMED_TAGS),
    ),
    "gemini.json_schema_ref_alone": (
        gemini_tool(
            "parametersJsonSchema",
            {
                **LOOP,
                "$defs": {"L": NAMED},
                "properties": {"next": {"$ref": "#/$defs/L", "title": "N"}},
            },
        ),
        gemini_tool(
            "parametersJsonSchema",
            {
                **LOOP,
                "$defs": {"L": NAMED},
                "properties": {"next": {"$ref": "#/$defs/L", "description": "N"}},
            },
        ),
    ),
    "gemini.json_schema_enum_values": (
        gemini_tool("parametersJsonSchema", {"type": "object", "properties": {"k": {"const": 1}}}),
        gemini_tool("parametersJsonSchema", {"type": "object", "properties": {"k": {"enum": [1]}}}),
    ),
    "gemini.json_schema_ref_loops_optional": (
        gemini_tool("parametersJsonSchema", LOOP),
        gemini_tool(
            "parametersJsonSchema", {**LOOP, "$defs": {"L": {**LOOP["$defs"]["L"], "required": []}}}
        ),
    ),
    "cohere.no_unknown_fields": (
        {"messages": [ASK, {**chat_call("get_weather"), "refusal": None}, CHAT_RESULT]},
        {"messages": [ASK, chat_call("get_weather"), CHAT_RESULT]},
    ),
    "mistral.nothing_but_assistant_after_tool": (
        {
            "messages": [
                ASK,
                chat_call("get_weather"),
                CHAT_RESULT,
                {"role": "system", "content": "x"},
            ]
        },
        {
            "messages": [
                ASK,
                chat_call("get_weather"),
                CHAT_RESULT,
                {"role": "assistant", "content": "ok"},
            ]
        },
    ),
    "mistral.tool_name_pattern": (
        {"messages": [ASK, chat_call("files.read"), CHAT_RESULT]},
        {"messages": [ASK, chat_call("files_read"), CHAT_RESULT]},
    ),
    "openai_chat.tool_name_pattern": (
        {"messages": [ASK, chat_call("x" * 65), CHAT_RESULT]},
        {"messages": [ASK, chat_call("x" * 64), CHAT_RESULT]},
    ),
    # issue 41 item 1: the dialects
    **{
        f"{fmt}.tool_name_pattern": (
            {"messages": [ASK, {**chat_call("x" * 65), **extra}, CHAT_RESULT]},
            {"messages": [ASK, {**chat_call("x" * 64), **extra}, CHAT_RESULT]},
        )
        for fmt, extra in (
            ("deepseek", {"reasoning_content": ""}),
            ("groq", {}),
            ("moonshot", {"reasoning_content": ""}),
            ("openrouter", {}),
        )
    },
    "deepseek.reasoning_content_on_every_assistant": (
        {"messages": [ASK, {"role": "assistant", "content": "Sunny."}]},
        {"messages": [ASK, {"role": "assistant", "content": "Sunny.", "reasoning_content": ""}]},
    ),
    "deepseek.reasoning_passed_back_in_tool_loops": (
        {"messages": [ASK, chat_call("get_weather"), CHAT_RESULT]},
        {
            "messages": [
                ASK,
                {**chat_call("get_weather"), "reasoning_content": "Plan."},
                CHAT_RESULT,
            ]
        },
    ),
    "deepseek.r1_refuses_reasoning_content": (
        {
            "model": "deepseek-r1",
            "messages": [ASK, {"role": "assistant", "content": "Hi.", "reasoning_content": ""}],
        },
        {"model": "deepseek-r1", "messages": [ASK, {"role": "assistant", "content": "Hi."}]},
    ),
    "moonshot.reasoning_content_on_tool_calls": (
        {"messages": [ASK, chat_call("get_weather"), CHAT_RESULT]},
        {"messages": [ASK, {**chat_call("get_weather"), "reasoning_content": ""}, CHAT_RESULT]},
    ),
    "groq.no_reasoning_fields": (
        {"messages": [ASK, {**chat_call("get_weather"), "reasoning": "Plan."}, CHAT_RESULT]},
        {"messages": [ASK, chat_call("get_weather"), CHAT_RESULT]},
    ),
    "openrouter.gemini_tool_calls_keep_reasoning_details": (
        {"model": "google/gemini-3-pro-preview", "messages": [ASK, chat_call("f"), CHAT_RESULT]},
        {
            "model": "google/gemini-3-pro-preview",
            "messages": [
                ASK,
                {
                    **chat_call("f"),
                    "reasoning_details": [{"type": "reasoning.encrypted", "data": "CiQB"}],
                },
                CHAT_RESULT,
            ],
        },
    ),
    "openrouter.reasoning_details_entries": (
        {"messages": [ASK, {**chat_call("f"), "reasoning_details": [{"type": "x"}]}, CHAT_RESULT]},
        {
            "messages": [
                ASK,
                {**chat_call("f"), "reasoning_details": [{"type": "reasoning.text", "text": "P"}]},
                CHAT_RESULT,
            ]
        },
    ),
    "openai_responses.reasoning_has_following_item": (
        responses_items(REASONING, {**OUTPUT, "id": None}),
        responses_items(REASONING, OUTPUT),
    ),
    "openai_responses.tool_name_pattern": (
        responses_items({**FUNCTION_CALL, "name": "files/read"}),
        responses_items({**FUNCTION_CALL, "name": "files-read"}),
    ),
}

ALL_RULES = [found for rules in _rules.RULES.values() for found in rules]


def test_every_rule_has_a_breaking_and_a_keeping_case() -> None:
    assert sorted(CASES) == sorted(found.id for found in ALL_RULES)


def test_rule_ids_are_unique_and_name_their_format() -> None:
    ids = [found.id for found in ALL_RULES]
    assert len(ids) == len(set(ids))
    for fmt, rules in _rules.RULES.items():
        assert fmt in _rules.FORMATS
        assert all(found.format == fmt and found.error for found in rules)


def test_known_violations_are_rules() -> None:
    assert {found.id for found in ALL_RULES} >= _rules.KNOWN_VIOLATIONS


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_the_rule_finds_its_violation_and_only_that(rule_id: str) -> None:
    broken, kept = CASES[rule_id]
    found = _rules.rule(rule_id)
    assert found.check(broken), f"{rule_id} passes a payload that breaks it"
    assert found.check(kept) == [], f"{rule_id} refuses a payload that keeps it"
    assert [rule.id for rule, _ in _rules.violations(found.format, broken)] == [rule_id]
    assert _rules.violations(found.format, kept) == []


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_the_judge_raises_with_the_rule_id_unless_the_rule_is_known(
    rule_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_rules, "TOLERATED", Counter())  # the run's tally counts suites only
    monkeypatch.setattr(_rules, "JUDGED", Counter())
    broken, _ = CASES[rule_id]
    fmt = _rules.rule(rule_id).format
    with pytest.raises(WireError, match=rf"\[{rule_id}\]"):
        _rules.judge_rules(fmt, broken, scope="request", known=frozenset())
    _rules.judge_rules(fmt, broken, scope="request", known=frozenset({rule_id}))
    assert dict(_rules.TOLERATED) == {rule_id: 1}
    assert dict(_rules.JUDGED) == {fmt: 2}


def test_the_fragment_scope_leaves_out_what_the_caller_adds() -> None:
    broken, _ = CASES["bedrock.tool_config_with_tool_blocks"]
    assert _rules.violations("bedrock", broken, scope="fragment") == []
    assert _rules.violations("bedrock", broken, scope="request") != []


@pytest.mark.parametrize("thinking", ["disabled", "enabled"])
def test_thinking_first_applies_only_while_a_tool_loop_goes_on(thinking: str) -> None:
    payload = thinking_loop(None, thinking)
    answered = {
        **payload,
        "messages": [*payload["messages"], {"role": "assistant", "content": "18C."}],
    }
    check = _rules.anthropic_tool_loop_starts_with_thinking
    assert check(answered) == []
    assert bool(check(payload)) == (thinking == "enabled")


def test_mistral_allows_tool_after_tool_and_a_history_ending_in_tool() -> None:
    second = {**CHAT_RESULT, "tool_call_id": "call_2"}
    payload = {"messages": [ASK, chat_call("get_weather"), CHAT_RESULT, second]}
    assert _rules.mistral_nothing_but_assistant_after_tool(payload) == []


def test_bedrock_document_names_count_inside_tool_results_and_double_spaces() -> None:
    inner = bedrock_loop([pdf("a")])
    inner["messages"][0]["content"].append(pdf("a"))
    assert _rules.bedrock_document_names_are_unique(inner)
    spaced = {"messages": [{"role": "user", "content": [pdf("my  report")]}]}
    assert _rules.bedrock_document_names_use_allowed_characters(spaced)


def test_a_failed_result_given_as_a_string_is_text() -> None:
    payload = anthropic_loop({"is_error": True, "content": "failed"})
    assert _rules.anthropic_failed_result_is_text_only(payload) == []
    assert _rules.anthropic_failed_result_is_not_empty(payload) == []
