"""The rules today's encoders break: one minimal history each, judged by the rules judge.

Each case is a strict xfail naming the rule it breaks, with every rule judged (none
tolerated). When an encoder fix makes its payload keep the rule, the case passes, strict
xfail turns that into a failure, and the fix removes the mark here and the rule's id from
``KNOWN_VIOLATIONS`` (then the conformance suites and the property test enforce the rule).
``test_every_known_violation_has_a_reproducer`` keeps the two lists in step.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import pytest

import threadline as tl
from tests.conformance import _rules
from tests.conformance.judges import WireError
from threadline import FilePart
from threadline import Message
from threadline.codecs import encode

PNG = FilePart(media_type="image/png", data=b"\x89PNG\r\n\x1a\n")


def ask(text: str = "What's the weather in Paris?") -> Message:
    return tl.user_message(text)


def call(name: str = "get_weather") -> Message:
    return tl.assistant_message(tl.tool_call_part("call_1", name, {"city": "Paris"}))


def result(content: str | Sequence[str | FilePart] = "18C", *, is_error: bool = False) -> Message:
    return tl.tool_message(tl.tool_result_part("call_1", content, is_error=is_error))


# (case id, rule id, the history, encode's keyword arguments, request fields the caller adds)
Case = tuple[str, str, list[Message], Mapping[str, Any], Mapping[str, Any]]
FIXED: list[Case] = [
    (
        "user-question-after-result",
        "mistral.nothing_but_assistant_after_tool",
        [ask(), call(), result(), ask("And tomorrow?")],
        {},
        {},
    ),
    (
        "user-question-after-repaired-call",
        "mistral.nothing_but_assistant_after_tool",
        [ask(), call(), ask("Never mind: and tomorrow?")],
        {},
        {},
    ),
    (
        "system-after-result",
        "mistral.nothing_but_assistant_after_tool",
        [ask(), call(), result(), tl.system_message("Be brief."), tl.assistant_message("18C.")],
        {},
        {},
    ),
    (
        "files-moved-out-of-result",
        "mistral.nothing_but_assistant_after_tool",
        [ask(), call(), result(["the map", PNG]), tl.assistant_message("Sunny.")],
        {},
        {},
    ),
]

CASES: list[Case] = []
"""The rules today's encoders break, one minimal history each (none left: every rule of the
judge holds). A new known violation goes here, with its id in ``KNOWN_VIOLATIONS``, and must
fail its judge in ``test_the_encoder_keeps_the_rule``."""


def test_the_encoder_keeps_the_rule() -> None:
    """Each known violation fails its judge today: when an encoder fix makes one keep its
    rule, this fails until the case moves to ``FIXED``."""
    for case, rule_id, history, kw, fields in CASES:
        found = _rules.rule(rule_id)
        payload = {**encode(history, provider=found.format, **kw), **fields}
        try:
            _rules.judge_rules(found.format, payload, scope="request", known=frozenset())
        except WireError:
            continue
        pytest.fail(f"{case}: the encoder now keeps {rule_id}; move the case to FIXED")


@pytest.mark.parametrize(
    ("rule_id", "history", "kw", "request_fields"),
    [
        pytest.param(rule_id, history, kw, fields, id=f"{rule_id}-{case}")
        for case, rule_id, history, kw, fields in FIXED
    ],
)
def test_the_encoder_keeps_the_rule_it_once_broke(
    rule_id: str,
    history: list[Message],
    kw: Mapping[str, Any],
    request_fields: Mapping[str, Any],
) -> None:
    assert rule_id not in _rules.KNOWN_VIOLATIONS
    found = _rules.rule(rule_id)
    payload = {**encode(history, provider=found.format, **kw), **request_fields}
    _rules.judge_rules(found.format, payload, scope="request", known=frozenset())


def test_every_known_violation_has_a_reproducer() -> None:
    assert {rule_id for _, rule_id, *_ in CASES} == _rules.KNOWN_VIOLATIONS


def test_each_reproducer_breaks_its_own_rule_today() -> None:
    """The xfails fail for the reason they name, not another (a reproducer that also broke
    some other rule would keep failing after its own rule's fix)."""
    for case, rule_id, history, kw, fields in CASES:
        found = _rules.rule(rule_id)
        payload = {**encode(history, provider=found.format, **kw), **fields}
        broken = {rule.id for rule, _ in _rules.violations(found.format, payload)}
        assert broken == {rule_id}, (case, broken)
