"""The same token counts reported in each provider's shape give equal `Usage` values.

Counts are generated with the normalised meaning (input includes the cache, output includes
the reasoning), written the way each provider reports them (Anthropic and Bedrock leave the
cache out of their input count, Gemini leaves the thoughts out of its candidates count and
the tool-use prompt out of its prompt count, zero counts are sometimes left out or null), and
``decode_response`` of every provider that can report them must give back the same
`Usage`; `History.usage()` sums them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import threadline as tl
from threadline import Usage
from threadline.codecs import decode_response

_count = st.integers(min_value=0, max_value=10**9)


@st.composite
def usages(draw: st.DrawFn) -> Usage:
    cache_read, cache_write, uncached = draw(_count), draw(_count), draw(_count)
    reasoning, answer = draw(_count), draw(_count)
    if draw(st.booleans()):
        cache_write = 0  # Gemini and Mistral report no cache writes
    if draw(st.booleans()):
        reasoning = 0  # Mistral and Bedrock report no reasoning
    return Usage(
        input_tokens=uncached + cache_read + cache_write,
        output_tokens=answer + reasoning,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        reasoning_tokens=reasoning,
    )


def _sparse(draw: Draw, counts: dict[str, Any]) -> dict[str, Any]:
    """Zero counts as providers send them: present, null or left out."""
    shown: dict[str, Any] = {}
    for key, value in counts.items():
        if value == 0:
            choice = draw(st.sampled_from(["zero", "null", "absent"]))
            if choice != "absent":
                shown[key] = 0 if choice == "zero" else None
        else:
            shown[key] = value
    return shown


Draw = Callable[[st.SearchStrategy[Any]], Any]
Shape = Callable[[Draw, Usage], dict[str, Any]]


def _anthropic(draw: Draw, u: Usage) -> dict[str, Any]:
    usage = _sparse(
        draw,
        {
            "input_tokens": u.input_tokens - u.cache_read_tokens - u.cache_write_tokens,
            "cache_read_input_tokens": u.cache_read_tokens,
            "cache_creation_input_tokens": u.cache_write_tokens,
            "output_tokens": u.output_tokens,
        },
    )
    if u.reasoning_tokens:
        usage["output_tokens_details"] = {"thinking_tokens": u.reasoning_tokens}
    return {"id": "m", "model": "c", "content": [{"type": "text", "text": "hi"}], "usage": usage}


def _openai_chat(draw: Draw, u: Usage) -> dict[str, Any]:
    usage = {
        "prompt_tokens": u.input_tokens,
        "completion_tokens": u.output_tokens,
        "total_tokens": u.total_tokens,
        "prompt_tokens_details": _sparse(
            draw, {"cached_tokens": u.cache_read_tokens, "cache_write_tokens": u.cache_write_tokens}
        ),
        "completion_tokens_details": _sparse(draw, {"reasoning_tokens": u.reasoning_tokens}),
    }
    message = {"role": "assistant", "content": "hi"}
    return {"id": "r", "model": "m", "choices": [{"message": message}], "usage": usage}


def _openai_responses(draw: Draw, u: Usage) -> dict[str, Any]:
    usage = {
        "input_tokens": u.input_tokens,
        "input_tokens_details": _sparse(
            draw, {"cached_tokens": u.cache_read_tokens, "cache_write_tokens": u.cache_write_tokens}
        ),
        "output_tokens": u.output_tokens,
        "output_tokens_details": {"reasoning_tokens": u.reasoning_tokens},
        "total_tokens": u.total_tokens,
    }
    item = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "hi"}],
    }
    return {"id": "r", "model": "m", "status": "completed", "output": [item], "usage": usage}


def _gemini(draw: Draw, u: Usage) -> dict[str, Any]:
    tool_use = draw(st.integers(0, u.input_tokens - u.cache_read_tokens))
    counts = {
        "promptTokenCount": u.input_tokens - tool_use,
        "cachedContentTokenCount": u.cache_read_tokens,
        "toolUsePromptTokenCount": tool_use,
        "candidatesTokenCount": u.output_tokens - u.reasoning_tokens,
        "thoughtsTokenCount": u.reasoning_tokens,
        "totalTokenCount": u.total_tokens,
    }
    if draw(st.booleans()):  # the SDK's dump names
        snake = {
            "promptTokenCount": "prompt_token_count",
            "cachedContentTokenCount": "cached_content_token_count",
            "toolUsePromptTokenCount": "tool_use_prompt_token_count",
            "candidatesTokenCount": "candidates_token_count",
            "thoughtsTokenCount": "thoughts_token_count",
            "totalTokenCount": "total_token_count",
        }
        counts = {snake[key]: value for key, value in counts.items()}
    candidate = {"content": {"role": "model", "parts": [{"text": "hi"}]}}
    return {"candidates": [candidate], "usageMetadata": _sparse(draw, counts)}


def _mistral(draw: Draw, u: Usage) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": u.input_tokens,
        "completion_tokens": u.output_tokens,
        "total_tokens": u.total_tokens,
    }
    if u.cache_read_tokens:
        spelling = draw(st.sampled_from(["details", "num", "singular"]))
        if spelling == "num":
            usage["num_cached_tokens"] = u.cache_read_tokens
        else:
            key = "prompt_tokens_details" if spelling == "details" else "prompt_token_details"
            usage[key] = {"cached_tokens": u.cache_read_tokens}
    message = {"role": "assistant", "content": "hi"}
    return {"id": "r", "choices": [{"message": message}], "usage": usage}


def _bedrock(draw: Draw, u: Usage) -> dict[str, Any]:
    usage = {
        "inputTokens": u.input_tokens - u.cache_read_tokens - u.cache_write_tokens,
        "outputTokens": u.output_tokens,
        "totalTokens": u.total_tokens,
        **_sparse(
            draw,
            {
                "cacheReadInputTokens": u.cache_read_tokens,
                "cacheWriteInputTokens": u.cache_write_tokens,
            },
        ),
    }
    message = {"role": "assistant", "content": [{"text": "hi"}]}
    return {"output": {"message": message}, "usage": usage}


# Each format, and which counts it cannot report (those must be 0 for it to say the same).
SHAPES: dict[str, tuple[Shape, tuple[str, ...]]] = {
    "anthropic": (_anthropic, ()),
    "openai_chat": (_openai_chat, ()),
    "openai_responses": (_openai_responses, ()),
    "gemini": (_gemini, ("cache_write_tokens",)),
    "mistral": (_mistral, ("cache_write_tokens", "reasoning_tokens")),
    "bedrock": (_bedrock, ("reasoning_tokens",)),
}


@given(usages(), st.data())
def test_the_same_counts_in_every_providers_shape_give_the_same_usage(
    usage: Usage, data: st.DataObject
) -> None:
    decoded: dict[str, Usage | None] = {}
    for provider, (shape, unreported) in SHAPES.items():
        if any(getattr(usage, name) for name in unreported):
            continue
        response = shape(data.draw, usage)
        decoded[provider] = decode_response(response, provider=provider).usage
    assert len(decoded) >= 3  # anthropic and both OpenAI formats report everything
    assert set(decoded.values()) == {usage}, decoded


@given(st.lists(usages(), max_size=6), st.data())
def test_history_usage_is_the_sum_of_its_messages(counts: list[Usage], data: st.DataObject) -> None:
    messages = []
    for usage in counts:
        provider = data.draw(st.sampled_from(["anthropic", "openai_chat", "openai_responses"]))
        messages.append(tl.user_message("q"))
        messages.append(decode_response(SHAPES[provider][0](data.draw, usage), provider=provider))
    assert tl.History(messages).usage() == sum(counts, Usage())
