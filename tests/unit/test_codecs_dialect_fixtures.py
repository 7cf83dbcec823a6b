"""Issue 41's "done when": a request body per dialect, built from the provider's documented
multi-turn example (the reasoning where the provider's docs put it back, or leave it out),
round-trips: ``decode`` then ``encode`` gives the body's messages back.

The bodies are written as ``encode`` writes Chat Completions: an assistant message with tool
calls and no text has no ``content`` (the documented examples append the SDK's message, whose
``content`` is ``null`` or ``""``: the same to every API here), and arguments are compact
JSON text (``encode`` writes the arguments object it read). A request body names its model
at the top; ``decode`` does not tag reasoning with it, so the body goes back through an
``encode`` given no model (the reasoning replays to "no model", as it came)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from threadline.codecs import decode
from threadline.codecs import encode

_CALL = {
    "id": "call_00_2N4XHtkYGqMbJqmqoY3u2Zqy",
    "type": "function",
    "function": {
        "name": "get_weather",
        "arguments": '{"location":"Hangzhou","date":"2025-12-01"}',
    },
}
_TOOL = {"role": "tool", "tool_call_id": _CALL["id"], "content": "Cloudy 7~13°C"}
_THOUGHT = "The user wants tomorrow's weather in Hangzhou; get_weather needs the date."

FIXTURES: dict[str, dict[str, Any]] = {
    # api-docs.deepseek.com/guides/thinking_mode#tool-calls: the assistant's reasoning_content
    # goes back in the tool loop; every assistant message carries the field
    "deepseek": {
        "model": "deepseek-v4-pro",
        "messages": [
            {"role": "user", "content": "How's the weather in Hangzhou Tomorrow"},
            {"role": "assistant", "tool_calls": [_CALL], "reasoning_content": _THOUGHT},
            _TOOL,
            {
                "role": "assistant",
                "content": "Tomorrow in Hangzhou: cloudy, 7~13°C.",
                "reasoning_content": "The tool answered; summarise it.",
            },
            {"role": "user", "content": "And the day after?"},
        ],
    },
    # looplj/axonhub#1755 and Kimi's thinking docs: a tool-call message keeps reasoning_content
    "moonshot": {
        "model": "kimi-k2-thinking",
        "messages": [
            {"role": "user", "content": "How's the weather in Hangzhou Tomorrow"},
            {"role": "assistant", "tool_calls": [_CALL], "reasoning_content": _THOUGHT},
            _TOOL,
        ],
    },
    # openrouter.ai/docs/guides/best-practices/reasoning-tokens: reasoning_details back unchanged
    "openrouter": {
        "model": "google/gemini-3-pro-preview",
        "messages": [
            {"role": "user", "content": "How's the weather in Hangzhou Tomorrow"},
            {
                "role": "assistant",
                "tool_calls": [{**_CALL, "id": "tool_get_weather_0"}],
                "reasoning_details": [
                    {
                        "type": "reasoning.text",
                        "text": _THOUGHT,
                        "format": "google-gemini-v1",
                        "index": 0,
                    },
                    {
                        "type": "reasoning.encrypted",
                        "data": "CiQB0e2Kb0EncryptedThoughtSignature==",
                        "id": "tool_get_weather_0",
                        "format": "google-gemini-v1",
                        "index": 1,
                    },
                ],
            },
            {**_TOOL, "tool_call_id": "tool_get_weather_0"},
        ],
    },
    # docs.vllm.ai reasoning outputs, Groq's reasoning docs, Alibaba Model Studio deep thinking,
    # docs.x.ai reasoning, docs.together.ai reasoning: the next turn sends the answer only
    **{
        name: {
            "model": model,
            "messages": [
                {"role": "user", "content": "9.11 and 9.8, which is greater?"},
                {"role": "assistant", "content": "9.8 is greater than 9.11."},
                {"role": "user", "content": "How many Rs are there in the word 'strawberry'?"},
            ],
        }
        for name, model in (
            ("vllm", "Qwen/Qwen3-8B"),
            ("groq", "openai/gpt-oss-120b"),
            ("qwen", "qwen-plus"),
            ("xai", "grok-3-mini"),
            ("together", "deepseek-ai/DeepSeek-R1"),
        )
    },
}


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_the_documented_body_round_trips(name: str) -> None:
    body = copy.deepcopy(FIXTURES[name])
    messages = decode(body, provider=name)
    assert encode(messages, provider=name)["messages"] == FIXTURES[name]["messages"]
    assert body == FIXTURES[name]  # the caller's body is left as it was


@pytest.mark.parametrize("name", ["deepseek", "moonshot", "openrouter"])
def test_the_reasoning_of_the_body_is_read_as_the_dialects_own(name: str) -> None:
    assistant = decode(FIXTURES[name], provider=name)[1]
    reasoning = [part for part in assistant.parts if part.type == "reasoning"]
    assert reasoning
    assert all(part.provider == name for part in reasoning)


def test_the_think_tags_of_a_raw_reply_round_trip_as_reasoning() -> None:
    # Groq's reasoning_format="raw" (and a vLLM server without a reasoning parser) leave the
    # reasoning in content; read back, it is reasoning, which Groq never takes back
    body = {
        "messages": [
            {"role": "user", "content": "9.11 and 9.8, which is greater?"},
            {"role": "assistant", "content": "<think>\nCompare decimals.\n</think>\n\n9.8."},
        ]
    }
    messages = decode(body, provider="groq")
    assert [part.type for part in messages[1].parts] == ["reasoning", "text"]
    assert encode(messages, provider="groq")["messages"][1] == {
        "role": "assistant",
        "content": "9.8.",
    }
