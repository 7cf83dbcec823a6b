"""The OpenAI-compatible dialects' rules (issue 41 item 1): each quoted refusal is a rule that
today's ``openai_chat`` output for the dialect breaks and the dialect's codec keeps, or a guard
(a reasoning field refused where ``openai_chat`` sends none, broken by a client that sends it
everywhere) that both keep; every rule is asserted one way or the other."""

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
from threadline.codecs import get_codec
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


BROKEN_BY_OPENAI_CHAT = {
    "deepseek.reasoning_content_on_every_assistant": "deepseek",
    "deepseek.reasoning_passed_back_in_tool_loops": "deepseek",
    "moonshot.reasoning_content_on_tool_calls": "moonshot",
    "openrouter.gemini_tool_calls_keep_reasoning_details": "openrouter",
}
"""The quoted refusals today's ``openai_chat`` output breaks (it sends no reasoning field)."""

GUARDS = {
    "deepseek.r1_refuses_reasoning_content": "deepseek",
    "groq.no_reasoning_fields": "groq",
    "openrouter.reasoning_details_entries": "openrouter",
}
"""The quoted refusals of a reasoning field sent where it is refused, or sent malformed:
``openai_chat`` sends none, so it keeps them; what breaks each is what a client that "passes
the reasoning back" everywhere sends (`guard_breaker`), and the dialect's codec keeps them."""


def guard_breaker(rule_id: str) -> dict[str, Any]:
    """A body that breaks the guard ``rule_id``: reasoning sent back where it is refused."""
    if rule_id == "deepseek.r1_refuses_reasoning_content":
        return {"model": "deepseek-r1", **encode(tool_loop("deepseek"), provider="deepseek")}
    if rule_id == "groq.no_reasoning_fields":
        return encode(tool_loop("groq"), provider="deepseek")  # DeepSeek's field, to Groq
    body = encode(tool_loop("openrouter"), provider="openrouter", model=MODELS["openrouter"])
    body["messages"][1]["reasoning_details"][0].pop("text")  # an entry cut short
    return body


def dialect_rules() -> list[str]:
    return [
        rule.id
        for fmt in ("deepseek", "groq", "moonshot", "openrouter")
        for rule in _rules.RULES[fmt]
        if not rule.id.endswith("tool_name_pattern")  # Chat's own, tested with Chat's
    ]


def test_every_dialect_rule_is_asserted_one_way_or_the_other() -> None:
    assert sorted(dialect_rules()) == sorted([*BROKEN_BY_OPENAI_CHAT, *GUARDS])
    for name in ("vllm", "qwen", "xai", "together"):  # the dialects without rules say why
        assert name in _rules.NO_RULES, name


@pytest.mark.parametrize(("rule_id", "dialect"), sorted(BROKEN_BY_OPENAI_CHAT.items()))
def test_openai_chat_breaks_the_rule_and_the_dialect_keeps_it(rule_id: str, dialect: str) -> None:
    model = MODELS[dialect]
    history = tool_loop(dialect)
    assert broken(rule_id, {"model": model, **encode(history, provider="openai_chat")})
    kept = encode(history, provider=dialect, model=model)
    assert broken(rule_id, {"model": model, **kept}) == []


@pytest.mark.parametrize(("rule_id", "dialect"), sorted(GUARDS.items()))
def test_a_guard_is_kept_by_openai_chat_and_the_dialect(rule_id: str, dialect: str) -> None:
    model = "deepseek-r1" if dialect == "deepseek" else MODELS[dialect]
    history = tool_loop(dialect)
    assert broken(rule_id, guard_breaker(rule_id))
    assert broken(rule_id, {"model": model, **encode(history, provider="openai_chat")}) == []
    codec: Any = get_codec(dialect)
    # the package's judge reads a payload without its model (as the default model); this one
    # is judged here with the model it is for, so the codec's own encode is called
    kept = type(codec).encode(codec, history, model=model)
    assert broken(rule_id, {"model": model, **kept}) == []
