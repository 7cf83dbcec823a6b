"""Structured output in the native fields (issue 37 item 4), judged by the SDKs' own types:
Anthropic ``output_config.format`` (``anthropic`` 2.14.0 ``OutputConfigParam``) and Bedrock
``outputConfig.textFormat`` (botocore 1.44.8's Converse model), with thinking on; and the
one-hour breakpoints of item 3 (``cache_control.ttl``, ``cachePoint.ttl``)."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest

import threadline as tl
from tests.conformance import _rules
from tests.conformance.judges import judge_anthropic
from tests.conformance.judges_mistral_bedrock import judge_bedrock
from tests.support import require_module
from threadline import ReasoningPart
from threadline.codecs import encode

pytestmark = pytest.mark.requires_sdk

MODELS = {
    "anthropic": "claude-sonnet-4-5-20250929",
    "bedrock": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
}
THINKING = {"type": "enabled", "budget_tokens": 1024}
TOOL = tl.ToolDefinition(
    "get_weather", "The weather.", {"type": "object", "properties": {"city": {"type": "string"}}}
)


class Forecast(pydantic.BaseModel):
    """A weather forecast."""

    city: str
    days: int = 1
    tags: list[str] = []
    note: str | None = None


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "kind": {"enum": ["fact", "guess"]}},
    "required": ["answer"],
}


def _loop(provider: str) -> list[tl.Message]:
    model = MODELS[provider]
    reasoning = ReasoningPart(text="Look.", signature="c2ln", provider=provider, model=model)
    call = tl.tool_call_part("toolu_1", "get_weather", {"city": "Oslo"})
    return [
        tl.user_message("Forecast for Oslo?"),
        tl.assistant_message(reasoning, call, metadata={"model": model}),
        tl.tool_message(tl.tool_result_part("toolu_1", "Sunny.")),
    ]


CHOICES = [
    ("anthropic", None),
    ("anthropic", "auto"),
    ("anthropic", "none"),
    ("bedrock", None),
    ("bedrock", "auto"),  # Converse has no 'none'
]


@pytest.mark.parametrize("cache", [None, "auto"])
@pytest.mark.parametrize("schema", [SCHEMA, Forecast], ids=["dict", "model"])
@pytest.mark.parametrize(("provider", "choice"), CHOICES)
def test_the_native_field_passes_the_sdk_judge_and_the_rules(
    provider: str, choice: str | None, schema: Any, cache: Any
) -> None:
    require_module("anthropic" if provider == "anthropic" else "botocore")
    payload = encode(
        _loop(provider),
        provider=provider,
        model=MODELS[provider],
        tools=[TOOL],
        tool_choice=choice,
        output_schema=schema,
        cache=cache,
    )
    if provider == "anthropic":
        request = {**payload, "thinking": THINKING}
        assert "format" in request["output_config"]
        judge_anthropic(request)
    else:
        request = {**payload, "additionalModelRequestFields": {"thinking": THINKING}}
        assert "textFormat" in request["outputConfig"]
        judge_bedrock(request)
    _rules.judge_rules(provider, request, scope="request", known=frozenset())


HOUR = {
    "anthropic": {"anthropic.cache_control": {"type": "ephemeral", "ttl": "1h"}},
    "bedrock": {"bedrock.cache_point": {"type": "default", "ttl": "1h"}},
}


@pytest.mark.parametrize("cache", ["auto", ["tools", "system", 1]], ids=repr)
@pytest.mark.parametrize("provider", ["anthropic", "bedrock"])
def test_one_hour_breakpoints_pass_the_sdk_judge_and_the_rules(provider: str, cache: Any) -> None:
    require_module("anthropic" if provider == "anthropic" else "botocore")
    history = [
        tl.user_message("Forecast for Oslo?"),
        tl.assistant_message("Which days?"),
        tl.user_message(tl.text_part("All week.", metadata=HOUR[provider])),
    ]
    payload = encode(history, provider=provider, system="Be brief.", tools=[TOOL], cache=cache)
    (judge_anthropic if provider == "anthropic" else judge_bedrock)(payload)
    _rules.judge_rules(provider, payload, scope="request", known=frozenset())
