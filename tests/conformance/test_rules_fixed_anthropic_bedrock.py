"""Rules the Anthropic and Bedrock encoders once broke (issue 22), judged with none tolerated.

The former strict-xfail reproducers of ``test_rules_known.py``: each history broke its rule
on the encoder of the time, and now keeps every rule of its format (the request fields a
caller adds included).
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import pytest

import threadline as tl
from tests.conformance import _rules
from threadline import FilePart
from threadline import Message
from threadline import ReasoningPart
from threadline.codecs import encode

PNG = FilePart(media_type="image/png", data=b"\x89PNG\r\n\x1a\n")
PDF = FilePart(media_type="application/pdf", data=b"%PDF-1.4", filename="report.pdf")
MODEL = "claude-sonnet-4-5-20250929"
THINKING = {"type": "enabled", "budget_tokens": 1024}
CLAUDE_ON_BEDROCK = "anthropic.claude-sonnet-4-5-20250929-v1:0"
TOOLS: Mapping[str, Any] = {"toolConfig": {"tools": []}}


def ask(text: str = "What's the weather in Paris?") -> Message:
    return tl.user_message(text)


def call(call_id: str = "call_1") -> Message:
    return tl.assistant_message(tl.tool_call_part(call_id, "get_weather", {"city": "Paris"}))


def result(
    content: str | Sequence[str | FilePart] = "18C",
    *,
    is_error: bool = False,
    call_id: str = "call_1",
) -> Message:
    return tl.tool_message(tl.tool_result_part(call_id, content, is_error=is_error))


def thinking_then_call(provider: str = "anthropic", model: str = MODEL) -> Message:
    reasoning = ReasoningPart(
        text="Use the tool.", signature="c2ln", provider=provider, model=model
    )
    call_part = tl.tool_call_part("toolu_1", "get_weather", {"city": "Paris"})
    return tl.assistant_message(reasoning, call_part, metadata={"model": model})


LOOP_RESULT = tl.tool_message(tl.tool_result_part("toolu_1", "18C"))

# (case id, rule id, the history, encode's keyword arguments, request fields the caller adds)
Case = tuple[str, str, list[Message], Mapping[str, Any], Mapping[str, Any]]
CASES: list[Case] = [
    (
        "failed-result-with-an-image",
        "anthropic.failed_result_text_only",
        [ask(), call(), result(["the request failed", PNG], is_error=True)],
        {},
        {},
    ),
    (
        "failed-result-only-an-image-then-the-user",
        "anthropic.failed_result_text_only",
        [ask(), call(), result([PNG], is_error=True), ask("Try again?")],
        {},
        {},
    ),
    (
        "failed-result-empty",
        "anthropic.failed_result_not_empty",
        [ask(), call(), result("", is_error=True)],
        {},
        {},
    ),
    (
        "failed-result-whose-file-is-dropped",
        "anthropic.failed_result_not_empty",
        [ask(), call(), result([FilePart(media_type="audio/wav", data=b"RIFF")], is_error=True)],
        {"unsupported": "drop"},
        {},
    ),
    (
        "window-starts-with-assistant",
        "anthropic.first_message_user",
        [tl.assistant_message("Hello!"), ask()],
        {},
        {},
    ),
    (
        "thinking-of-a-model-alias",
        "anthropic.tool_loop_starts_with_thinking",
        [ask(), thinking_then_call(), LOOP_RESULT],
        {"model": "claude-sonnet-4-5"},
        {"thinking": THINKING},
    ),
    (
        "two-files-one-name",
        "bedrock.document_names_unique",
        [tl.user_message("Compare these.", PDF, PDF)],
        {},
        {},
    ),
    (
        "a-message-file-and-a-result-file-of-one-name",
        "bedrock.document_names_unique",
        [tl.user_message("Read it.", PDF), call(), result([PDF])],
        {},
        TOOLS,
    ),
    (
        "empty-result",
        "bedrock.tool_result_not_empty",
        [ask(), call(), result("")],
        {},
        TOOLS,
    ),
    (
        "failed-empty-result",
        "bedrock.tool_result_not_empty",
        [ask(), call(), result((), is_error=True)],
        {},
        TOOLS,
    ),
]


@pytest.mark.parametrize(
    ("rule_id", "history", "kw", "request_fields"),
    [
        pytest.param(rule_id, history, kw, fields, id=f"{rule_id}-{case}")
        for case, rule_id, history, kw, fields in CASES
    ],
)
def test_the_encoder_keeps_the_rule(
    rule_id: str,
    history: list[Message],
    kw: Mapping[str, Any],
    request_fields: Mapping[str, Any],
) -> None:
    found = _rules.rule(rule_id)
    payload = {**encode(history, provider=found.format, **kw), **request_fields}
    assert found.check(payload) == []
    _rules.judge_rules(found.format, payload, scope="request", known=frozenset())


def test_none_of_these_rules_is_tolerated() -> None:
    assert not {rule_id for _, rule_id, *_ in CASES} & _rules.KNOWN_VIOLATIONS
