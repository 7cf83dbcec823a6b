"""`threadline.Usage`: its arithmetic, each provider's usage read into it by `decode_response`,
`Message.usage` on what older versions stored, and `History.usage()`."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import threadline as tl
from threadline import CodecError
from threadline import Usage
from threadline.codecs import decode_response


def test_usage_defaults_to_zero_and_adds() -> None:
    assert Usage() == Usage(
        input_tokens=0, output_tokens=0, cache_read_tokens=0, cache_write_tokens=0
    )
    a = Usage(input_tokens=10, output_tokens=5, cache_read_tokens=4, reasoning_tokens=2)
    b = Usage(input_tokens=1, output_tokens=2, cache_write_tokens=1)
    assert a + b == Usage(
        input_tokens=11, output_tokens=7, cache_read_tokens=4, cache_write_tokens=1,
        reasoning_tokens=2,
    )  # fmt: skip
    assert sum([a, b]) == a + b == sum([a, b], Usage())
    assert (a + b).total_tokens == 18
    assert hash(a) == hash(Usage(**a.to_dict()))


def test_usage_is_frozen_keyword_only_and_validated() -> None:
    usage = Usage(input_tokens=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        usage.input_tokens = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        Usage(1, 2)  # type: ignore[call-arg]
    for bad in (-1, 1.0, "3", True, None):
        with pytest.raises(tl.ValidationError, match="output_tokens: expected a token count"):
            Usage(output_tokens=bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        _ = usage + 1  # type: ignore[operator]


def test_usage_json_round_trips_with_all_five_counts() -> None:
    usage = Usage(input_tokens=9, output_tokens=3, cache_read_tokens=4, reasoning_tokens=1)
    assert usage.to_dict() == {
        "input_tokens": 9,
        "output_tokens": 3,
        "cache_read_tokens": 4,
        "cache_write_tokens": 0,
        "reasoning_tokens": 1,
    }
    assert Usage.from_dict(usage.to_dict()) == usage
    assert Usage.from_dict({"output_tokens": 2}) == Usage(output_tokens=2)
    with pytest.raises(tl.ValidationError, match="prompt_tokens: not a Usage count"):
        Usage.from_dict({"prompt_tokens": 2})


# Realistic responses of each provider, with cache reads and writes and reasoning where the
# provider reports them. The normalised counts are the same meaning everywhere: input includes
# the cache, output includes the reasoning.

ANTHROPIC: dict[str, Any] = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [{"type": "text", "text": "Done."}],
    "stop_reason": "end_turn",
    "usage": {
        "input_tokens": 12,  # leaves out the cache reads and writes
        "cache_read_input_tokens": 1800,
        "cache_creation_input_tokens": 250,
        "output_tokens": 503,
        "output_tokens_details": {"thinking_tokens": 300},
        "service_tier": "standard",
    },
}
OPENAI_CHAT: dict[str, Any] = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "model": "o4-mini",
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Done."}}
    ],
    "usage": {
        "prompt_tokens": 2006,  # includes the cached tokens
        "completion_tokens": 300,  # includes the reasoning tokens
        "total_tokens": 2306,
        "prompt_tokens_details": {"cached_tokens": 1920, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 192, "audio_tokens": 0},
    },
}
OPENAI_RESPONSES: dict[str, Any] = {
    "id": "resp_1",
    "object": "response",
    "model": "o4-mini",
    "status": "completed",
    "output": [
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
        }
    ],
    "usage": {
        "input_tokens": 2006,
        "input_tokens_details": {"cached_tokens": 1920},
        "output_tokens": 300,
        "output_tokens_details": {"reasoning_tokens": 192},
        "total_tokens": 2306,
    },
}
GEMINI: dict[str, Any] = {
    "candidates": [{"content": {"role": "model", "parts": [{"text": "Done."}]}, "index": 0}],
    "modelVersion": "gemini-3-flash-preview",
    "usageMetadata": {
        "promptTokenCount": 80,  # includes the cached content, not the tool-use prompt
        "cachedContentTokenCount": 64,
        "toolUsePromptTokenCount": 237,
        "candidatesTokenCount": 173,  # leaves out the thoughts
        "thoughtsTokenCount": 60,
        "totalTokenCount": 550,
    },
}
MISTRAL: dict[str, Any] = {
    "id": "cmpl-1",
    "model": "mistral-medium-latest",
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Done."}}
    ],
    "usage": {
        "prompt_tokens": 801,
        "completion_tokens": 2,
        "total_tokens": 803,
        "prompt_tokens_details": {"cached_tokens": 768},
    },
}
BEDROCK: dict[str, Any] = {
    "output": {"message": {"role": "assistant", "content": [{"text": "Done."}]}},
    "stopReason": "end_turn",
    "usage": {
        "inputTokens": 12,  # leaves out the cache reads and writes, as Anthropic does
        "cacheReadInputTokens": 1800,
        "cacheWriteInputTokens": 250,
        "outputTokens": 503,
        "totalTokens": 2565,
    },
}


@pytest.mark.parametrize(
    ("provider", "response", "expected", "raw_key"),
    [
        (
            "anthropic",
            ANTHROPIC,
            Usage(
                input_tokens=2062,
                output_tokens=503,
                cache_read_tokens=1800,
                cache_write_tokens=250,
                reasoning_tokens=300,
            ),
            "anthropic.usage",
        ),
        (
            "openai_chat",
            OPENAI_CHAT,
            Usage(
                input_tokens=2006, output_tokens=300, cache_read_tokens=1920, reasoning_tokens=192
            ),
            "openai.usage",
        ),
        (
            "openai_responses",
            OPENAI_RESPONSES,
            Usage(
                input_tokens=2006, output_tokens=300, cache_read_tokens=1920, reasoning_tokens=192
            ),
            "openai.usage",
        ),
        (
            "gemini",
            GEMINI,
            Usage(input_tokens=317, output_tokens=233, cache_read_tokens=64, reasoning_tokens=60),
            "gemini.usage",
        ),
        (
            "mistral",
            MISTRAL,
            Usage(input_tokens=801, output_tokens=2, cache_read_tokens=768),
            "mistral.usage",
        ),
        (
            "bedrock",
            BEDROCK,
            Usage(
                input_tokens=2062, output_tokens=503, cache_read_tokens=1800, cache_write_tokens=250
            ),
            "bedrock.usage",
        ),
    ],
)
def test_decode_response_sets_normalised_usage_and_keeps_the_raw_object(
    provider: str, response: dict[str, Any], expected: Usage, raw_key: str
) -> None:
    message = decode_response(response, provider=provider)
    assert message.usage == expected
    assert message.metadata["usage"] == expected.to_dict()
    raw = response["usageMetadata"] if provider == "gemini" else response["usage"]
    assert message.metadata[raw_key] == raw
    # The usage survives storage: the neutral JSON holds it.
    assert tl.load_json(tl.dump_json([message]))[0].usage == expected


def test_totals_agree_with_the_providers_own_totals() -> None:
    for provider, response, raw_total in [
        ("gemini", GEMINI, GEMINI["usageMetadata"]["totalTokenCount"]),
        ("bedrock", BEDROCK, BEDROCK["usage"]["totalTokens"]),
        ("openai_chat", OPENAI_CHAT, OPENAI_CHAT["usage"]["total_tokens"]),
        ("mistral", MISTRAL, MISTRAL["usage"]["total_tokens"]),
    ]:
        usage = decode_response(response, provider=provider).usage
        assert usage is not None, provider
        assert usage.total_tokens == raw_total, provider


def test_the_sdk_objects_give_the_same_usage() -> None:
    anthropic_types = pytest.importorskip("anthropic.types")
    openai_chat_types = pytest.importorskip("openai.types.chat")
    message = anthropic_types.Message.model_validate(ANTHROPIC)
    assert (
        decode_response(message, provider="anthropic").usage
        == decode_response(ANTHROPIC, provider="anthropic").usage
    )
    completion = openai_chat_types.ChatCompletion.model_validate({**OPENAI_CHAT, "created": 0})
    assert (
        decode_response(completion, provider="openai_chat").usage
        == decode_response(OPENAI_CHAT, provider="openai_chat").usage
    )


@pytest.mark.parametrize("spelling", ["num_cached_tokens", "prompt_token_details"])
def test_mistral_cached_tokens_are_read_under_each_spelling(spelling: str) -> None:
    usage: dict[str, Any] = {"prompt_tokens": 801, "completion_tokens": 2}
    if spelling == "num_cached_tokens":
        usage["num_cached_tokens"] = 768
    else:
        usage["prompt_token_details"] = {"cached_tokens": 768}
    message = decode_response({**MISTRAL, "usage": usage}, provider="mistral")
    assert message.usage == Usage(input_tokens=801, output_tokens=2, cache_read_tokens=768)


def test_gemini_usage_in_the_sdk_dump_names_is_read_too() -> None:
    snake = {
        "prompt_token_count": 80,
        "cached_content_token_count": 64,
        "tool_use_prompt_token_count": 237,
        "candidates_token_count": 173,
        "thoughts_token_count": 60,
    }
    message = decode_response({**GEMINI, "usageMetadata": snake}, provider="gemini")
    assert message.usage == decode_response(GEMINI, provider="gemini").usage


@pytest.mark.parametrize(
    ("provider", "usage", "problem"),
    [
        (
            "openai_chat",
            {"prompt_tokens": 3, "prompt_tokens_details": 3},
            r"usage\.prompt_tokens_details: expected an object",
        ),
        (
            "openai_chat",
            {"prompt_tokens_details": {"cached_tokens": "3"}},
            r"usage\.prompt_tokens_details\.cached_tokens: expected a count",
        ),
        (
            "openai_responses",
            {"output_tokens_details": {"reasoning_tokens": -1}},
            r"usage\.output_tokens_details\.reasoning_tokens: expected a count",
        ),
        (
            "anthropic",
            {"cache_read_input_tokens": 1.5},
            r"usage\.cache_read_input_tokens: expected a count",
        ),
        (
            "bedrock",
            {"cacheWriteInputTokens": [1]},
            r"usage\.cacheWriteInputTokens: expected a count",
        ),
        ("mistral", {"num_cached_tokens": True}, r"usage\.num_cached_tokens: expected a count"),
    ],
)
def test_bad_counts_are_codec_errors_naming_their_path(
    provider: str, usage: dict[str, Any], problem: str
) -> None:
    response: dict[str, Any] = {
        "anthropic": ANTHROPIC,
        "openai_chat": OPENAI_CHAT,
        "openai_responses": OPENAI_RESPONSES,
        "mistral": MISTRAL,
        "bedrock": BEDROCK,
    }[provider]
    with pytest.raises(CodecError, match=problem):
        decode_response({**response, "usage": usage}, provider=provider)


def test_a_response_without_usage_gives_none() -> None:
    response = {key: value for key, value in OPENAI_CHAT.items() if key != "usage"}
    message = decode_response(response, provider="openai_chat")
    assert message.usage is None
    assert "usage" not in message.metadata
    assert "openai.usage" not in message.metadata


# What threadline before Usage stored in metadata["usage"]: the provider's own object, with
# input_tokens and output_tokens added. It is read by the provider the metadata names.


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        (
            {
                "provider": "anthropic",
                "usage": {"input_tokens": 3, "output_tokens": 5, "cache_read_input_tokens": 100},
            },
            Usage(input_tokens=103, output_tokens=5, cache_read_tokens=100),
        ),
        (
            {
                "provider": "openai",
                "usage": {
                    "prompt_tokens": 120,
                    "completion_tokens": 35,
                    "prompt_tokens_details": {"cached_tokens": 64},
                    "input_tokens": 120,
                    "output_tokens": 35,
                },
            },
            Usage(input_tokens=120, output_tokens=35, cache_read_tokens=64),
        ),
        (
            {
                "provider": "openai",
                "usage": {
                    "input_tokens": 120,
                    "output_tokens": 35,
                    "output_tokens_details": {"reasoning_tokens": 20},
                },
            },
            Usage(input_tokens=120, output_tokens=35, reasoning_tokens=20),
        ),
        (
            {
                "provider": "gemini",
                "usage": {
                    "promptTokenCount": 100,
                    "candidatesTokenCount": 20,
                    "thoughtsTokenCount": 50,
                    "input_tokens": 100,
                    "output_tokens": 70,
                },
            },
            Usage(input_tokens=100, output_tokens=70, reasoning_tokens=50),
        ),
        (
            {
                "provider": "bedrock",
                "usage": {
                    "inputTokens": 3,
                    "cacheReadInputTokens": 4,
                    "input_tokens": 3,
                    "output_tokens": None,
                },
            },
            Usage(input_tokens=7, cache_read_tokens=4),
        ),
        (
            {
                "provider": "mistral",
                "usage": {
                    "prompt_tokens": 3,
                    "completion_tokens": 1,
                    "input_tokens": 3,
                    "output_tokens": 1,
                },
            },
            Usage(input_tokens=3, output_tokens=1),
        ),
        # An application's own counts in the normalised names read as they are.
        ({"usage": {"output_tokens": 2}}, Usage(output_tokens=2)),
        # Provider-shaped with no provider named, or unreadable: no usage rather than a guess.
        ({"usage": {"prompt_tokens": 3, "completion_tokens": 1}}, None),
        ({"provider": "someone", "usage": {"prompt_tokens": 3}}, None),
        ({"provider": "openai", "usage": {"prompt_tokens": "3"}}, None),
        (
            {"provider": "anthropic", "usage": {"input_tokens": -3, "cache_read_input_tokens": 1}},
            None,
        ),
        ({"usage": 3}, None),
        ({"usage": {"out": 9}}, None),
        ({}, None),
    ],
)
def test_message_usage_reads_what_older_versions_stored(
    metadata: dict[str, Any], expected: Usage | None
) -> None:
    message = tl.assistant_message("hi", metadata=metadata)
    assert message.usage == expected
    stored = tl.dump_json([message])
    assert tl.load_json(stored)[0].usage == expected


def test_history_usage_sums_the_messages_it_holds() -> None:
    assert tl.History().usage() == Usage()
    first = decode_response(ANTHROPIC, provider="anthropic")
    second = decode_response(BEDROCK, provider="bedrock")
    history = tl.History([tl.user_message("hi"), first, tl.user_message("again"), second])
    assert history.usage() == first.usage + second.usage  # type: ignore[operator]
    assert history.usage().total_tokens == 2565 * 2
    windowed = tl.History(
        [tl.user_message("hi"), first, tl.user_message("again"), second], max_messages=2
    )
    assert windowed.usage() == second.usage
