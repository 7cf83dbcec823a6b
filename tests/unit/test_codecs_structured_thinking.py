"""Structured output with thinking, on Anthropic and Bedrock (issue 37 item 4).

The forced tool that carries ``output_schema`` makes ``tool_choice`` force a tool, which both
refuse while thinking is on: ``Thinking may not be enabled when tool_choice forces tool use.``
With thinking in the history (or a ``tool_choice="auto"`` the caller gave), the schema goes in
the native field (Anthropic ``output_config.format``, Bedrock ``outputConfig.textFormat``) and
the tool choice is sent as given; a model known to lack the field is refused with a
``CodecError`` naming the conflict and the fix.
"""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest

import threadline as tl
from tests.conformance import _rules
from threadline import ReasoningPart
from threadline.codecs import decode_response
from threadline.codecs import encode

SONNET = "claude-sonnet-4-5-20250929"
OLD = "claude-3-7-sonnet-20250219"
ON_BEDROCK = {SONNET: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", OLD: f"anthropic.{OLD}-v1:0"}
THINKING = {"type": "enabled", "budget_tokens": 1024}
TOOL = tl.ToolDefinition(
    "get_weather", "The weather.", {"type": "object", "properties": {"city": {"type": "string"}}}
)


class Forecast(pydantic.BaseModel):
    """A weather forecast."""

    city: str
    days: int = 1


def _model(provider: str, model: str) -> str:
    return ON_BEDROCK[model] if provider == "bedrock" else model


def _loop(provider: str, model: str = SONNET) -> list[tl.Message]:
    """A tool loop whose call followed the model's own thinking."""
    wire_model = _model(provider, model)
    reasoning = ReasoningPart(
        text="Check the weather.", signature="c2ln", provider=provider, model=wire_model
    )
    call = tl.tool_call_part("toolu_1", "get_weather", {"city": "Oslo"})
    return [
        tl.user_message("Forecast for Oslo?"),
        tl.assistant_message(reasoning, call, metadata={"model": wire_model}),
        tl.tool_message(tl.tool_result_part("toolu_1", "Sunny.")),
    ]


def _with_thinking(provider: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The request the caller sends: ``payload`` with thinking on."""
    if provider == "anthropic":
        return {**payload, "thinking": THINKING}
    return {**payload, "additionalModelRequestFields": {"thinking": THINKING}}


def _judged(provider: str, payload: dict[str, Any]) -> None:
    _rules.judge_rules(provider, _with_thinking(provider, payload), scope="request", known=())


def _native_schema(provider: str, payload: dict[str, Any]) -> Any:
    if provider == "anthropic":
        output = payload["output_config"]["format"]
        assert output["type"] == "json_schema"
        return output["schema"]
    output = payload["outputConfig"]["textFormat"]
    assert output["type"] == "json_schema"
    spec = output["structure"]["jsonSchema"]
    assert spec["name"] == "Forecast"
    return json.loads(spec["schema"])  # Converse takes the schema as JSON text


def _choice(provider: str, payload: dict[str, Any]) -> Any:
    if provider == "anthropic":
        return payload.get("tool_choice")
    return payload.get("toolConfig", {}).get("toolChoice")


def _tool_names(provider: str, payload: dict[str, Any]) -> list[str]:
    if provider == "anthropic":
        return [tool["name"] for tool in payload.get("tools", [])]
    return [tool["toolSpec"]["name"] for tool in payload.get("toolConfig", {}).get("tools", [])]


AUTO = {"anthropic": {"type": "auto"}, "bedrock": {"auto": {}}}


@pytest.mark.parametrize("provider", ["anthropic", "bedrock"])
def test_thinking_in_the_history_keeps_auto_and_uses_the_native_field(provider: str) -> None:
    payload = encode(
        _loop(provider),
        provider=provider,
        model=_model(provider, SONNET),
        tools=[TOOL],
        tool_choice="auto",
        output_schema=Forecast,
    )
    assert _choice(provider, payload) == AUTO[provider]  # as the caller gave it
    assert _tool_names(provider, payload) == ["get_weather"]  # no forced output tool
    assert set(_native_schema(provider, payload)["properties"]) == {"city", "days"}
    _judged(provider, payload)


@pytest.mark.parametrize("provider", ["anthropic", "bedrock"])
@pytest.mark.parametrize("model", [SONNET, None], ids=["sonnet-4-5", "model-None"])
def test_thinking_without_a_tool_choice_sends_none(provider: str, model: str | None) -> None:
    """``model=None``: the native field too (the one form thinking allows)."""
    payload = encode(
        _loop(provider),
        provider=provider,
        model=None if model is None else _model(provider, model),
        tools=[TOOL],
        output_schema=Forecast,
    )
    assert _choice(provider, payload) is None
    assert _native_schema(provider, payload)["required"]
    _judged(provider, payload)


@pytest.mark.parametrize("provider", ["anthropic", "bedrock"])
def test_a_model_without_native_output_is_refused_naming_the_conflict(provider: str) -> None:
    with pytest.raises(tl.CodecError) as caught:
        encode(
            _loop(provider, OLD),
            provider=provider,
            model=_model(provider, OLD),
            tools=[TOOL],
            output_schema=Forecast,
        )
    text = str(caught.value)
    assert "Thinking may not be enabled when tool_choice forces tool use" in text
    assert _model(provider, OLD) in text
    assert "reasoning='drop'" in text  # the fix


@pytest.mark.parametrize("provider", ["anthropic", "bedrock"])
def test_dropping_the_reasoning_brings_back_the_forced_tool(provider: str) -> None:
    payload = encode(
        _loop(provider, OLD),
        provider=provider,
        model=_model(provider, OLD),
        reasoning="drop",
        tools=[TOOL],
        output_schema=Forecast,
    )
    assert _tool_names(provider, payload) == ["get_weather", "Forecast"]
    assert "output_config" not in payload
    assert "outputConfig" not in payload


@pytest.mark.parametrize("provider", ["anthropic", "bedrock"])
def test_an_auto_tool_choice_given_without_thinking_is_kept(provider: str) -> None:
    history = [tl.user_message("Forecast for Oslo?")]
    payload = encode(
        history, provider=provider, tools=[TOOL], tool_choice="auto", output_schema=Forecast
    )
    assert _choice(provider, payload) == AUTO[provider]
    assert _tool_names(provider, payload) == ["get_weather"]
    assert _native_schema(provider, payload)["type"] == "object"
    with pytest.raises(tl.CodecError, match="tool_choice"):
        encode(
            history,
            provider=provider,
            model=_model(provider, OLD),
            tools=[TOOL],
            tool_choice="auto",
            output_schema=Forecast,
        )


@pytest.mark.parametrize("provider", ["anthropic", "bedrock"])
def test_without_thinking_or_a_tool_choice_the_output_tool_is_forced(provider: str) -> None:
    history = [tl.user_message("Forecast for Oslo?")]
    payload = encode(history, provider=provider, tools=[TOOL], output_schema=Forecast)
    assert _tool_names(provider, payload) == ["get_weather", "Forecast"]
    assert _choice(provider, payload) in ({"type": "any"}, {"any": {}})


def _text_reply(provider: str, text: str) -> dict[str, Any]:
    if provider == "anthropic":
        return {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": SONNET,
            "content": [
                {"type": "thinking", "thinking": "Sunny it is.", "signature": "c2ln"},
                {"type": "text", "text": text},
            ],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    return {
        "output": {"message": {"role": "assistant", "content": [{"text": text}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
        "metrics": {"latencyMs": 1},
    }


@pytest.mark.parametrize("provider", ["anthropic", "bedrock"])
def test_the_native_reply_decodes_to_the_json_text(provider: str) -> None:
    text = json.dumps({"city": "Oslo", "days": None})  # strict mode's null for an optional key
    reply = decode_response(
        _text_reply(provider, text), provider=provider, model=SONNET, output_schema=Forecast
    )
    assert json.loads(reply.text) == {"city": "Oslo"}
    assert Forecast.model_validate_json(reply.text) == Forecast(city="Oslo")


@pytest.mark.parametrize(
    ("model", "lacks"),
    [
        ("claude-3-7-sonnet-20250219", True),
        ("claude-3-5-haiku-latest", True),
        ("claude-3-opus-20240229", True),
        ("claude-2.1", True),
        ("claude-instant-1.2", True),
        ("claude-sonnet-4-20250514", True),
        ("claude-sonnet-4-0", True),
        ("claude-opus-4-20250514", True),
        ("claude-sonnet-4@20250514", True),
        ("anthropic.claude-sonnet-4-20250514-v1:0", True),
        ("us.anthropic.claude-3-7-sonnet-20250219-v1:0", True),
        ("claude-4-sonnet-20250514", True),
        ("claude-sonnet-4-5-20250929", False),
        ("claude-sonnet-4-5", False),
        ("claude-haiku-4-5", False),
        ("claude-opus-4-5-20251101", False),
        ("claude-opus-4-1-20250805", False),  # not known either way: the native field is sent
        ("claude-opus-4-6", False),
        ("global.anthropic.claude-sonnet-4-5-20250929-v1:0", False),
        ("amazon.nova-pro-v1:0", False),
        (None, False),
    ],
)
def test_the_models_known_to_lack_native_output(model: str | None, lacks: bool) -> None:
    from threadline.codecs._structured import lacks_native_output

    assert lacks_native_output(model) is lacks
