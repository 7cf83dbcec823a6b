"""A payload or response of one format given to another format's reader: the error names the
format it looks like (issue 21, item 7)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import threadline as tl
from tests.dialect_cases import DIALECTS
from threadline.codecs import codec_names
from threadline.codecs._formats import DESCRIPTORS
from threadline.codecs._sniff import guess_request_format
from threadline.codecs._sniff import guess_response_format

OPENAI_CHAT = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "model": "gpt-4o",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}
    ],
}
RESPONSES = {
    "id": "resp_1",
    "object": "response",
    "output": [
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "hi"}],
        }
    ],
}
ANTHROPIC = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "content": [{"type": "text", "text": "hi"}],
    "stop_reason": "end_turn",
}
GEMINI = {"candidates": [{"content": {"role": "model", "parts": [{"text": "hi"}]}}]}
BEDROCK = {
    "output": {"message": {"role": "assistant", "content": [{"text": "hi"}]}},
    "stopReason": "end_turn",
}
OLLAMA = {
    "model": "llama3.2",
    "created_at": "2025-10-17T23:14:07.414671Z",
    "message": {"role": "assistant", "content": "hi"},
    "done": True,
    "done_reason": "stop",
}

COHERE = {
    "id": "c14c80c3-18eb-4519-9460-6c92edd8cfb4",
    "finish_reason": "COMPLETE",
    "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
    "usage": {"billed_units": {"input_tokens": 5, "output_tokens": 1}},
}
RESPONSES_BY_FORMAT = {
    "cohere": COHERE,
    "openai_chat": OPENAI_CHAT,
    "mistral": OPENAI_CHAT,  # one shape: sniffed as openai_chat (its descriptor's sniffs_as)
    "openai_responses": RESPONSES,
    "anthropic": ANTHROPIC,
    "gemini": GEMINI,
    "bedrock": BEDROCK,
    "ollama": OLLAMA,
    **dict.fromkeys(DIALECTS, OPENAI_CHAT),  # dialects are sniffed as openai_chat too
}


@pytest.mark.parametrize("name", sorted(RESPONSES_BY_FORMAT))
def test_each_response_reads_with_its_own_codec(name: str) -> None:
    assert tl.decode_response(RESPONSES_BY_FORMAT[name], provider=name).text == "hi"
    assert guess_response_format(RESPONSES_BY_FORMAT[name]) == DESCRIPTORS[name].sniffs_as


@pytest.mark.parametrize("name", sorted(RESPONSES_BY_FORMAT))
@pytest.mark.parametrize("provider", codec_names())
def test_a_response_of_another_format_names_it(name: str, provider: str) -> None:
    sniffed = DESCRIPTORS[name].sniffs_as
    if sniffed == DESCRIPTORS[provider].sniffs_as:
        return
    response = RESPONSES_BY_FORMAT[name]
    with pytest.raises(tl.CodecError) as caught:
        tl.decode_response(response, provider=provider)
    assert f"pass provider={sniffed!r}" in str(caught.value)
    assert "it looks like a" in str(caught.value)


def test_the_hint_also_comes_for_json_text() -> None:
    with pytest.raises(tl.CodecError, match="pass provider='openai_chat'"):
        tl.decode_response(json.dumps(OPENAI_CHAT), provider="anthropic")


def test_a_broken_response_of_the_right_format_gets_no_hint() -> None:
    broken = {**ANTHROPIC, "content": "not a list"}
    with pytest.raises(tl.CodecError) as caught:
        tl.decode_response(broken, provider="anthropic")
    assert "pass provider=" not in str(caught.value)


@pytest.mark.parametrize(
    "value",
    [None, 3, "text", [], {}, {"object": 3}, {"choices": "x"}, {"output": []}, {"type": 1}],
)
def test_guessing_odd_values_guesses_nothing(value: Any) -> None:
    assert guess_response_format(value) is None
    assert guess_request_format(value) is None


@pytest.mark.parametrize(
    ("payload", "name"),
    [
        ([{"role": "user", "content": "hi"}], "openai_chat"),
        ({"messages": [{"role": "system", "content": "x"}]}, "openai_chat"),
        ({"system": "x", "messages": [{"role": "user", "content": "hi"}]}, "anthropic"),
        ({"messages": [{"role": "user", "content": [{"text": "hi"}]}]}, "bedrock"),
        ({"contents": []}, "gemini"),
        ({"input": "hi"}, "openai_responses"),
        ([{"type": "function_call_output", "call_id": "c", "output": "x"}], "openai_responses"),
        ({"messages": [{"role": "user", "content": "hi", "images": ["aGk="]}]}, "ollama"),
        ([{"role": "tool", "content": "ok", "tool_name": "f"}], "ollama"),
        (  # Ollama's calls carry no id or type, OpenAI Chat's do
            [
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"function": {"name": "f", "arguments": {}}}],
                }
            ],
            "ollama",
        ),
        (
            [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                        }
                    ],
                }
            ],
            "openai_chat",
        ),
        (  # a request body whose "format" is its output schema, not threadline's envelope
            {"model": "qwen3", "format": {"type": "object"}, "messages": [{"role": "user"}]},
            "openai_chat",
        ),
    ],
)
def test_guess_request_format(payload: Any, name: str) -> None:
    assert guess_request_format(payload) == name
