"""Test-side cases of the OpenAI-compatible dialects (``threadline.codecs._dialects``): their
names, and a chat completion and a stream of each with its reasoning where the provider's
documented examples put it (the test tables keyed by format take their dialect entries from
here)."""

from __future__ import annotations

import copy
from typing import Any

DIALECTS: tuple[str, ...] = (
    "deepseek",
    "openrouter",
    "vllm",
    "groq",
    "qwen",
    "moonshot",
    "xai",
    "together",
)
"""The dialect codec names."""

MODELS: dict[str, str] = {
    "deepseek": "deepseek-v4-pro",
    "openrouter": "google/gemini-3-pro-preview",
    "vllm": "Qwen/Qwen3-8B",
    "groq": "openai/gpt-oss-120b",
    "qwen": "qwen-plus",
    "moonshot": "kimi-k2-thinking",
    "xai": "grok-3-mini",
    "together": "deepseek-ai/DeepSeek-R1",
}
"""A model each provider's documented examples call."""

THOUGHT = "The user wants the weather in Paris; call get_weather."


def reasoning_fields(name: str, thought: str = THOUGHT, seed: str = "0") -> dict[str, Any]:
    """The fields a response message (or a stream delta) of ``name`` carries ``thought`` in."""
    if name == "openrouter":
        return {
            "reasoning": thought,
            "reasoning_details": [
                {
                    "type": "reasoning.text",
                    "text": thought,
                    "format": "google-gemini-v1",
                    "index": 0,
                },
                {
                    "type": "reasoning.encrypted",
                    "data": f"CiQB0e2Kb{seed}EncryptedThoughtSignature==",
                    "id": f"tool_get_weather_{seed}",
                    "format": "google-gemini-v1",
                    "index": 1,
                },
            ],
        }
    if name in ("groq", "together"):
        return {"reasoning": thought}
    return {"reasoning_content": thought}


def completion(name: str, text: str = "", *, calls: bool = True, seed: str = "0") -> dict[str, Any]:
    """A chat completion of ``name``: reasoning, ``text`` and (``calls``) a tool call."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": text,
        **reasoning_fields(name, seed=seed),
    }
    if calls:
        message["tool_calls"] = [
            {
                "id": f"call_00_{seed}abc",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ]
    return {
        "id": f"{name}-{seed}",
        "object": "chat.completion",
        "created": 1_770_000_000,
        "model": MODELS[name],
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 20, "completion_tokens": 30, "total_tokens": 50},
    }


def recording(name: str, base: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chunks ``base`` (an OpenAI Chat stream) as ``name`` streams them: the reasoning
    comes first, in two pieces, in the dialect's fields."""
    chunks = copy.deepcopy(base)
    for chunk in chunks:
        chunk["model"] = MODELS[name]
    first, rest = chunks[0], chunks[1:]
    pieces = []
    for at, thought in enumerate(("The user wants ", "the weather.")):
        chunk = copy.deepcopy(first)
        fields = reasoning_fields(name, thought)
        if name == "openrouter":  # each piece of the text entry only
            fields["reasoning_details"] = [{**fields["reasoning_details"][0], "text": thought}]
            if at:
                fields["reasoning_details"][0].pop("format")
        chunk["choices"][0]["delta"] = fields
        pieces.append(chunk)
    return [first, *pieces, *rest]
