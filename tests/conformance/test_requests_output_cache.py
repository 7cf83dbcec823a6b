"""``encode(output_schema=, cache=)``: every format x schema form x cache setting judged by the
SDKs' own request types, sent through the real clients, and the structured reply decoded."""

from __future__ import annotations

import json
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

import pydantic
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import threadline as tl
from tests.conformance._histories import agent_histories
from tests.conformance.capture import capture_anthropic
from tests.conformance.capture import capture_openai_chat
from tests.conformance.capture_mistral_bedrock import capture_bedrock
from tests.conformance.capture_mistral_bedrock import capture_mistral
from tests.conformance.capture_more import capture_openai_responses
from tests.conformance.judges import WireError
from tests.conformance.judges import judge_anthropic
from tests.conformance.judges import judge_openai_chat
from tests.conformance.judges_mistral_bedrock import judge_bedrock
from tests.conformance.judges_mistral_bedrock import judge_mistral
from tests.conformance.judges_responses_gemini import judge_gemini
from tests.conformance.judges_responses_gemini import judge_openai_responses
from tests.support import require_module
from threadline.codecs import decode_response
from threadline.codecs import encode

pytestmark = pytest.mark.requires_sdk


class Forecast(pydantic.BaseModel):
    """A weather forecast."""

    city: str
    days: int = 1
    note: str | None = None
    tags: list[str] = []


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "confidence": {"type": "number"},
        "kind": {"enum": ["fact", "guess"]},
    },
    "required": ["answer"],
}

JUDGES: dict[str, Callable[[Mapping[str, Any]], None]] = {
    "anthropic": judge_anthropic,
    "bedrock": judge_bedrock,
    "gemini": judge_gemini,
    "mistral": judge_mistral,
    "openai_chat": judge_openai_chat,
    "openai_responses": judge_openai_responses,
}
SDKS = {
    "anthropic": "anthropic",
    "bedrock": "botocore",
    "gemini": "google.genai",
    "mistral": "mistralai",
    "openai_chat": "openai",
    "openai_responses": "openai",
}
CACHES: list[Any] = [None, "auto", ["system", -1], [0, "system"]]


def _history() -> list[tl.Message]:
    return [
        tl.system_message("Answer briefly."),
        tl.user_message("What is the weather in Oslo?"),
        tl.assistant_message("Let me think."),
        tl.user_message("Answer in the shape asked."),
    ]


@pytest.mark.parametrize("cache", CACHES, ids=repr)
@pytest.mark.parametrize("schema", [SCHEMA, Forecast], ids=["dict", "model"])
@pytest.mark.parametrize("provider", sorted(JUDGES))
def test_every_format_schema_and_cache_passes_the_sdk_judge(
    provider: str, schema: Any, cache: Any
) -> None:
    require_module(SDKS[provider])
    payload = encode(_history(), provider=provider, output_schema=schema, cache=cache)
    JUDGES[provider](payload)


@pytest.mark.parametrize("cache", CACHES, ids=repr)
@pytest.mark.parametrize("provider", sorted(JUDGES))
def test_cache_alone_passes_the_sdk_judge(provider: str, cache: Any) -> None:
    require_module(SDKS[provider])
    JUDGES[provider](encode(_history(), provider=provider, cache=cache))


def test_each_provider_gets_its_own_field() -> None:
    fields = {
        provider: set(encode(_history(), provider=provider, output_schema=Forecast))
        for provider in JUDGES
    }
    assert "response_format" in fields["openai_chat"]
    assert "response_format" in fields["mistral"]
    assert "text" in fields["openai_responses"]
    assert "generationConfig" in fields["gemini"]
    assert {"tools", "tool_choice"} <= fields["anthropic"]
    assert "toolConfig" in fields["bedrock"]


def test_formats_with_automatic_caching_get_nothing_added() -> None:
    for provider in ("openai_chat", "openai_responses", "gemini", "mistral"):
        assert encode(_history(), provider=provider, cache="auto") == encode(
            _history(), provider=provider
        )


def test_anthropic_auto_marks_system_and_newest_turn() -> None:
    payload = encode(_history(), provider="anthropic", cache="auto", output_schema=SCHEMA)
    assert payload["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert payload["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert payload["tools"][-1]["cache_control"] == {"type": "ephemeral"}


def test_bedrock_auto_adds_cache_points() -> None:
    payload = encode(_history(), provider="bedrock", cache="auto", output_schema=SCHEMA)
    point = {"cachePoint": {"type": "default"}}
    assert payload["system"][-1] == point
    assert payload["messages"][-1]["content"][-1] == point
    assert payload["toolConfig"]["tools"][-1] == point


# -- The real clients send exactly our body ---------------------------------------------------


def _sent(provider: str, payload: dict[str, Any]) -> tuple[Any, Any]:
    if provider == "openai_chat":
        body = {"model": "m", **payload}
        return capture_openai_chat(body)["json"], body
    if provider == "openai_responses":
        body = {"model": "m", **payload}
        return capture_openai_responses(body)["json"], body
    if provider == "anthropic":
        body = {"model": "m", "max_tokens": 64, **payload}
        return capture_anthropic(body)["json"], body
    if provider == "mistral":
        body = {"model": "m", **payload}
        return capture_mistral(body)["json"], body
    params = {"modelId": "m", **payload}
    return capture_bedrock(params)["json"], params


@pytest.mark.parametrize("cache", [None, "auto"])
@pytest.mark.parametrize("schema", [SCHEMA, Forecast], ids=["dict", "model"])
@pytest.mark.parametrize(
    "provider", ["anthropic", "bedrock", "mistral", "openai_chat", "openai_responses"]
)
def test_the_real_client_sends_exactly_our_payload(provider: str, schema: Any, cache: Any) -> None:
    require_module(SDKS[provider])
    require_module("httpx2")
    payload = encode(_history(), provider=provider, output_schema=schema, cache=cache)
    sent, body = _sent(provider, payload)
    if provider == "bedrock":
        body = {key: value for key, value in body.items() if key != "modelId"}
        sent = {key: value for key, value in sent.items() if key != "modelId"}
    if provider == "mistral":  # the client adds its defaults (stream, prefix) to the rest
        sent, body = sent["response_format"], body["response_format"]
    assert sent == json.loads(json.dumps(body))


# -- Decoding the structured reply ------------------------------------------------------------

REPLY = {"city": "Oslo", "days": 2, "note": None, "tags": []}
STRICT_REPLY = {"city": "Oslo", "days": None, "note": None, "tags": None}


def _response(provider: str, value: Mapping[str, Any]) -> dict[str, Any]:
    text = json.dumps(value)
    if provider in ("openai_chat", "mistral"):
        return {
            "id": "r1",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": text},
                }
            ],
        }
    if provider == "openai_responses":
        return {
            "id": "resp_1",
            "object": "response",
            "model": "m",
            "status": "completed",
            "output": [
                {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}],
                }
            ],
        }
    if provider == "gemini":
        return {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}
            ]
        }
    if provider == "anthropic":
        return {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "Forecast", "input": value}],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    return {
        "output": {
            "message": {
                "role": "assistant",
                "content": [{"toolUse": {"toolUseId": "t1", "name": "Forecast", "input": value}}],
            }
        },
        "stopReason": "tool_use",
        "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
        "metrics": {"latencyMs": 1},
    }


@pytest.mark.parametrize("provider", sorted(JUDGES))
def test_decode_response_returns_the_json_as_text(provider: str) -> None:
    strict = provider in ("openai_chat", "openai_responses", "mistral")
    sent = STRICT_REPLY if strict else REPLY
    message = decode_response(_response(provider, sent), provider=provider, output_schema=Forecast)
    assert not message.tool_calls  # the history stays valid: no call waits for a result
    forecast = Forecast.model_validate_json(message.text)
    expected = {"city": "Oslo", "note": None} if strict else REPLY
    assert json.loads(message.text) == expected  # strict nulls for optional keys are dropped
    assert forecast.city == "Oslo"
    history = [*_history(), message, tl.user_message("Thanks.")]
    JUDGES[provider](encode(history, provider=provider))


def test_a_forced_tool_reply_without_output_schema_stays_a_call() -> None:
    message = decode_response(_response("anthropic", REPLY), provider="anthropic")
    assert message.tool_calls[0].name == "Forecast"


# -- Composition with the request's own tools -------------------------------------------------


def test_the_forced_tool_joins_existing_tools_and_becomes_any() -> None:
    payload = encode(_history(), provider="anthropic")
    payload["tools"] = [{"name": "search", "input_schema": {"type": "object"}}]
    from threadline.codecs._structured import output_definition
    from threadline.codecs._structured import with_output_schema

    out = with_output_schema(payload, "anthropic", output_definition(Forecast))
    assert [tool["name"] for tool in out["tools"]] == ["search", "Forecast"]
    assert out["tool_choice"] == {"type": "any"}
    judge_anthropic(out)
    payload["tool_choice"] = {"type": "none"}
    with pytest.raises(tl.ValidationError, match="tool_choice"):
        with_output_schema(payload, "anthropic", output_definition(Forecast))
    payload["tools"] = [{"name": "Forecast", "input_schema": {"type": "object"}}]
    with pytest.raises(tl.ValidationError, match=r"output_schema\.name"):
        with_output_schema(payload, "anthropic", output_definition(Forecast))


def test_a_bedrock_history_with_tool_use_keeps_its_tools_defined() -> None:
    bedrock = encode(_history(), provider="bedrock")
    bedrock["toolConfig"] = {
        "tools": [{"toolSpec": {"name": "search", "inputSchema": {"json": {"type": "object"}}}}]
    }
    from threadline.codecs._structured import output_definition
    from threadline.codecs._structured import with_output_schema

    out = with_output_schema(bedrock, "bedrock", output_definition(SCHEMA))
    assert out["toolConfig"]["toolChoice"] == {"any": {}}
    judge_bedrock(out)


# -- The four-breakpoint limit ----------------------------------------------------------------

breakpoints = st.one_of(
    st.just("auto"),
    st.lists(
        st.one_of(st.sampled_from(["system", -1, 0, 1, 2, -2]), st.integers(-6, 6)),
        max_size=4,
    ),
)


@settings(max_examples=60, deadline=None)
@given(agent_histories(max_turns=3), breakpoints, st.booleans())
def test_anthropic_and_bedrock_never_exceed_four_breakpoints(
    history: list[tl.Message], cache: Any, structured: bool
) -> None:
    for provider in ("anthropic", "bedrock"):
        refused: list[str] = []
        try:
            payload = encode(
                history,
                provider=provider,
                system="Be brief.",
                cache=cache,
                output_schema=SCHEMA if structured else None,
            )
        except tl.ValidationError as error:  # an explicit breakpoint the history cannot take
            refused = [detail.path for detail in error.errors]
        if refused:
            assert refused[0].startswith("cache")
            assert cache != "auto"
            continue
        problems: list[str] = []
        try:
            JUDGES[provider](payload)
        except WireError as error:  # only the breakpoint rules are under test here
            problems = error.problems
        assert not [problem for problem in problems if "cache" in problem]
