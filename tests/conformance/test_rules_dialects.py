"""The OpenAI-compatible dialects' rules (issue 41 item 1): each quoted refusal is a rule that
today's ``openai_chat`` output for the dialect breaks and the dialect's codec keeps."""

from __future__ import annotations

from typing import Any

import pytest

import threadline as tl
from tests.conformance import _rules
from tests.dialect_cases import MODELS
from tests.dialect_cases import completion
from threadline import Message
from threadline.codecs import decode_response
from threadline.codecs import encode
from threadline.messages import ReasoningPart


def tool_loop(name: str) -> list[Message]:
    """A thinking tool loop produced by ``name``: the call, its result, the answer, a new
    question."""
    return [
        tl.user_message("What is the weather in Paris?"),
        decode_response(completion(name), provider=name),
        tl.tool_message(tl.tool_result_part("call_00_0abc", "18°C, sunny", name="get_weather")),
        decode_response(completion(name, "Sunny, 18°C.", calls=False, seed="1"), provider=name),
        tl.user_message("And tomorrow?"),
    ]


def broken(rule_id: str, payload: dict[str, Any]) -> list[str]:
    return _rules.rule(rule_id).check(payload)


@pytest.mark.parametrize(
    ("rule_id", "dialect"),
    [
        ("deepseek.reasoning_content_on_every_assistant", "deepseek"),
        ("deepseek.reasoning_passed_back_in_tool_loops", "deepseek"),
        ("moonshot.reasoning_content_on_tool_calls", "moonshot"),
    ],
)
def test_openai_chat_drops_the_reasoning_a_thinking_dialect_needs_back(
    rule_id: str, dialect: str
) -> None:
    history = tool_loop(dialect)
    assert broken(rule_id, encode(history, provider="openai_chat"))
    kept = encode(history, provider=dialect, model=MODELS[dialect])
    assert broken(rule_id, kept) == []
    thought = history[1].parts[0]
    assert isinstance(thought, ReasoningPart)
    assert kept["messages"][1]["reasoning_content"] == thought.text  # exactly


@pytest.mark.parametrize("source", ["anthropic", "openai_chat"])
def test_a_thinking_dialect_gets_an_empty_reasoning_for_foreign_turns(source: str) -> None:
    history = [
        tl.user_message("What is the weather in Paris?"),
        tl.assistant_message(
            tl.reasoning_part("Foreign thought.", provider=source, signature="c2ln"),
            tl.tool_call_part("toolu_1", "get_weather", {"city": "Paris"}),
        ),
        tl.tool_message(tl.tool_result_part("toolu_1", "18°C", name="get_weather")),
    ]
    payload = encode(history, provider="deepseek")
    assert payload["messages"][1]["reasoning_content"] == ""  # foreign reasoning: dropped
    for rule in _rules.rules_for("deepseek"):
        assert rule.check(payload) == [], rule.id
    as_text = encode(history, provider="deepseek", reasoning="text")
    assert as_text["messages"][1]["content"] == "Foreign thought."
    assert as_text["messages"][1]["reasoning_content"] == ""


def test_groq_refuses_the_reasoning_a_thinking_dialect_sends_back() -> None:
    history = tool_loop("groq")
    # the reasoning_content that DeepSeek needs (sent by a codec that replays it) Groq refuses
    sent_back = encode(tool_loop("deepseek"), provider="deepseek")
    assert broken("groq.no_reasoning_fields", sent_back)
    assert broken("groq.no_reasoning_fields", encode(history, provider="groq")) == []
    assert broken("groq.no_reasoning_fields", encode(history, provider="openai_chat")) == []


def test_openrouter_gemini_keeps_its_reasoning_details_in_a_tool_loop() -> None:
    history = tool_loop("openrouter")
    model = MODELS["openrouter"]
    rule_id = "openrouter.gemini_tool_calls_keep_reasoning_details"
    assert broken(rule_id, {"model": model, **encode(history, provider="openai_chat")})
    kept = encode(history, provider="openrouter", model=model)
    assert broken(rule_id, {"model": model, **kept}) == []
    assert broken("openrouter.reasoning_details_entries", kept) == []
    # unchanged: the entries go back exactly as they came
    assert (
        kept["messages"][1]["reasoning_details"]
        == completion("openrouter")["choices"][0]["message"]["reasoning_details"]
    )


def test_every_dialect_rule_is_tested_here() -> None:
    import inspect
    import sys

    source = inspect.getsource(sys.modules[__name__])
    for fmt in ("deepseek", "groq", "moonshot", "openrouter"):
        for rule in _rules.RULES[fmt]:
            if not rule.id.endswith("tool_name_pattern") and rule.scope == "fragment":
                assert rule.id in source, rule.id
