"""Realistic responses of the six APIs, for tests that move a conversation between providers.

``response(codec, turn)`` is what the API named by a codec returns for one assistant turn: its
reasoning with the opaque state that provider attaches (an Anthropic ``thinking`` signature or
``redacted_thinking`` data, a Responses ``reasoning`` item with ``encrypted_content`` and the
``rs_`` / ``msg_`` / ``fc_`` item ids, a Gemini ``thought`` part and ``thoughtSignature``, a
Mistral ``thinking`` chunk with its signature, a Bedrock ``reasoningContent`` with its
signature or redacted bytes), its text and its tool calls, with ids in each provider's own
style. Chat Completions returns no reasoning. Every value the test looks for later (ids,
signatures) is derived from ``turn.seed``, so two responses never share one, and signatures are
canonical base64, as the providers send them. ``sdk_problems(codec, response)`` checks a
built response against the provider SDK's own response model, to keep the builders honest.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import hashlib
import json
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

from tests.dialect_cases import DIALECTS
from tests.dialect_cases import MODELS as DIALECT_MODELS
from tests.dialect_cases import reasoning_fields
from tests.support import require_module
from threadline.codecs import codec_names

__all__ = ["CODECS", "MODELS", "Turn", "response", "sdk_problems"]

CODECS = codec_names()  # every registered format
MODELS: Mapping[str, str | None] = {
    "anthropic": "claude-sonnet-4-5-20250929",
    "bedrock": None,  # a Converse response does not name the model
    "cohere": None,  # nor does a Cohere v2 Chat response
    "gemini": "gemini-3-pro-preview",
    "mistral": "magistral-medium-2509",
    "openai_chat": "gpt-4.1-2025-04-14",
    "openai_responses": "gpt-5-2025-08-07",
    "ollama": "qwen3:8b",
    **DIALECT_MODELS,
}
"""The model each response names (and decoded reasoning is tagged with)."""


@dataclasses.dataclass(frozen=True)
class Turn:
    """What the model says in one response."""

    seed: str
    """Unique in a conversation: the response's ids and opaque tokens are derived from it."""
    reasoning: str | None = None
    """The readable reasoning (a thought summary for OpenAI and Gemini)."""
    text: str | None = None
    calls: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    """The tool calls, as (name, arguments)."""
    redacted: bool = False
    """Whether the response also holds redacted reasoning (Anthropic and Bedrock)."""
    call_ids: bool = True
    """Whether the provider gives its calls ids (Gemini may not)."""


def response(codec: str, turn: Turn) -> dict[str, Any]:
    """The response of the API ``codec`` speaks for ``turn``, as JSON (boto3's dict for
    Bedrock, with ``bytes``)."""
    return _BUILDERS[codec](turn)


def _hex(label: str, size: int) -> str:
    return hashlib.sha256(label.encode()).hexdigest()[:size]


def _b64(label: str) -> str:
    return base64.b64encode(hashlib.sha256(label.encode()).digest() + label.encode()).decode()


def _arguments(arguments: Mapping[str, Any]) -> str:
    return json.dumps(dict(arguments))


def _anthropic(turn: Turn) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if turn.reasoning:
        signature = _b64(f"anthropic signature {turn.seed}")
        content.append({"type": "thinking", "thinking": turn.reasoning, "signature": signature})
    if turn.redacted:
        content.append({"type": "redacted_thinking", "data": _b64(f"anthropic data {turn.seed}")})
    if turn.text:
        content.append({"type": "text", "text": turn.text, "citations": None})
    for index, (name, arguments) in enumerate(turn.calls):
        call_id = "toolu_01" + _hex(f"anthropic call {turn.seed} {index}", 22)
        content.append({"type": "tool_use", "id": call_id, "name": name, "input": dict(arguments)})
    return {
        "id": "msg_01" + _hex(f"anthropic message {turn.seed}", 22),
        "type": "message",
        "role": "assistant",
        "model": MODELS["anthropic"],
        "content": content,
        "stop_reason": "tool_use" if turn.calls else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 412,
            "output_tokens": 96,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def _openai_responses(turn: Turn) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    if turn.reasoning:
        output.append(
            {
                "type": "reasoning",
                "id": "rs_" + _hex(f"openai reasoning {turn.seed}", 48),
                "summary": [{"type": "summary_text", "text": turn.reasoning}],
                "encrypted_content": "gAAAAAB" + _b64(f"openai encrypted {turn.seed}"),
            }
        )
    if turn.text:
        output.append(
            {
                "type": "message",
                "id": "msg_" + _hex(f"openai message {turn.seed}", 48),
                "role": "assistant",
                "status": "completed",
                "content": [
                    {"type": "output_text", "text": turn.text, "annotations": [], "logprobs": []}
                ],
            }
        )
    for index, (name, arguments) in enumerate(turn.calls):
        output.append(
            {
                "type": "function_call",
                "id": "fc_" + _hex(f"openai item {turn.seed} {index}", 48),
                "call_id": "call_" + _hex(f"openai call {turn.seed} {index}", 24),
                "name": name,
                "arguments": _arguments(arguments),
                "status": "completed",
            }
        )
    return {
        "id": "resp_" + _hex(f"openai response {turn.seed}", 48),
        "object": "response",
        "created_at": 1_770_000_000,
        "model": MODELS["openai_responses"],
        "status": "completed",
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "output": output,
        "usage": {
            "input_tokens": 412,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": 96,
            "output_tokens_details": {"reasoning_tokens": 64},
            "total_tokens": 508,
        },
    }


def _gemini(turn: Turn) -> dict[str, Any]:
    signature = _b64(f"gemini signature {turn.seed}")
    parts: list[dict[str, Any]] = []
    if turn.reasoning:
        parts.append({"text": turn.reasoning, "thought": True})
    if turn.text:
        parts.append({"text": turn.text})
    for index, (name, arguments) in enumerate(turn.calls):
        call: dict[str, Any] = {"name": name, "args": dict(arguments)}
        if turn.call_ids:
            call["id"] = _hex(f"gemini call {turn.seed} {index}", 8)
        part: dict[str, Any] = {"functionCall": call}
        if index == 0:  # Gemini signs the first call of a step
            part["thoughtSignature"] = signature
        parts.append(part)
    if not turn.calls and turn.text:  # else the last part carries it
        parts[-1]["thoughtSignature"] = signature
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": 412,
            "candidatesTokenCount": 32,
            "thoughtsTokenCount": 64,
            "totalTokenCount": 508,
        },
        "modelVersion": MODELS["gemini"],
        "responseId": _hex(f"gemini response {turn.seed}", 22),
    }


def _mistral(turn: Turn) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if turn.reasoning:
        content.append(
            {
                "type": "thinking",
                "thinking": [{"type": "text", "text": turn.reasoning}],
                "signature": _b64(f"mistral signature {turn.seed}"),
            }
        )
    if turn.text:
        content.append({"type": "text", "text": turn.text})
    message: dict[str, Any] = {"role": "assistant", "content": content or "", "prefix": False}
    if turn.calls:
        message["tool_calls"] = [
            {
                "id": _hex(f"mistral call {turn.seed} {index}", 9),
                "type": "function",
                "function": {"name": name, "arguments": _arguments(arguments)},
                "index": index,
            }
            for index, (name, arguments) in enumerate(turn.calls)
        ]
    return {
        "id": _hex(f"mistral response {turn.seed}", 32),
        "object": "chat.completion",
        "model": MODELS["mistral"],
        "created": 1_770_000_000,
        "usage": {"prompt_tokens": 412, "completion_tokens": 96, "total_tokens": 508},
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls" if turn.calls else "stop",
                "message": message,
            }
        ],
    }


def _bedrock(turn: Turn) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if turn.reasoning:
        text = {"text": turn.reasoning, "signature": _b64(f"bedrock signature {turn.seed}")}
        content.append({"reasoningContent": {"reasoningText": text}})
    if turn.redacted:
        redacted = hashlib.sha256(f"bedrock redacted {turn.seed}".encode()).digest()
        content.append({"reasoningContent": {"redactedContent": redacted}})
    if turn.text:
        content.append({"text": turn.text})
    for index, (name, arguments) in enumerate(turn.calls):
        call_id = "tooluse_" + _hex(f"bedrock call {turn.seed} {index}", 22)
        content.append({"toolUse": {"toolUseId": call_id, "name": name, "input": dict(arguments)}})
    return {
        "ResponseMetadata": {
            "RequestId": _hex(f"bedrock request {turn.seed}", 32),
            "HTTPStatusCode": 200,
            "RetryAttempts": 0,
        },
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": "tool_use" if turn.calls else "end_turn",
        "usage": {"inputTokens": 412, "outputTokens": 96, "totalTokens": 508},
        "metrics": {"latencyMs": 1830},
    }


def _openai_chat(turn: Turn) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": turn.text,
        "refusal": None,
        "annotations": [],
    }
    if turn.calls:
        message["tool_calls"] = [
            {
                "id": "call_" + _hex(f"chat call {turn.seed} {index}", 24),
                "type": "function",
                "function": {"name": name, "arguments": _arguments(arguments)},
            }
            for index, (name, arguments) in enumerate(turn.calls)
        ]
    return {
        "id": "chatcmpl-" + _hex(f"chat response {turn.seed}", 29),
        "object": "chat.completion",
        "created": 1_770_000_000,
        "model": MODELS["openai_chat"],
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if turn.calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 412, "completion_tokens": 96, "total_tokens": 508},
        "service_tier": "default",
        "system_fingerprint": "fp_" + _hex(f"chat fingerprint {turn.seed}", 10),
    }


def _dialect(name: str, turn: Turn) -> dict[str, Any]:
    """An OpenAI-compatible dialect's response: Chat's, with the reasoning in the dialect's
    fields (OpenRouter's ``reasoning_details`` with an encrypted entry, derived from the
    seed)."""
    built = _openai_chat(turn)
    built["model"] = MODELS[name]
    message = built["choices"][0]["message"]
    if turn.reasoning:
        thought = f"{turn.reasoning} ({name} {turn.seed})"
        message.update(reasoning_fields(name, thought, seed=_hex(f"{name} {turn.seed}", 12)))
    return built


def _cohere(turn: Turn) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant"}
    content: list[dict[str, Any]] = []
    if turn.reasoning:
        content.append({"type": "thinking", "thinking": turn.reasoning})
    if turn.text:
        content.append({"type": "text", "text": turn.text})
    if content:
        message["content"] = content
    if turn.calls:
        message["tool_plan"] = "I will call the tools."
        message["tool_calls"] = [
            {
                "id": f"{name}_{_hex(f'cohere call {turn.seed} {index}', 12)}",
                "type": "function",
                "function": {"name": name, "arguments": _arguments(arguments)},
            }
            for index, (name, arguments) in enumerate(turn.calls)
        ]
    return {
        "id": _hex(f"cohere response {turn.seed}", 32),
        "finish_reason": "TOOL_CALL" if turn.calls else "COMPLETE",
        "message": message,
        "usage": {
            "billed_units": {"input_tokens": 41, "output_tokens": 96},
            "tokens": {"input_tokens": 412, "output_tokens": 96},
        },
    }


def _ollama(turn: Turn) -> dict[str, Any]:
    # /api/chat gives calls no id: decode_response hashes one from created_at (unique per
    # response, to the nanosecond), the call's place, name and arguments.
    nanoseconds = int(_hex(f"ollama created {turn.seed}", 12), 16) % 10**9
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or ""}
    if turn.reasoning:
        message["thinking"] = turn.reasoning
    if turn.calls:
        message["tool_calls"] = [
            {"function": {"name": name, "arguments": dict(arguments)}}
            for name, arguments in turn.calls
        ]
    return {
        "model": MODELS["ollama"],
        "created_at": f"2026-03-13T16:05:00.{nanoseconds:09d}Z",
        "message": message,
        "done": True,
        "done_reason": "stop",
        "total_duration": 4_883_583_458,
        "load_duration": 1_334_875,
        "prompt_eval_count": 412,
        "prompt_eval_duration": 342_546_000,
        "eval_count": 96,
        "eval_duration": 4_535_599_000,
    }


_BUILDERS: Mapping[str, Callable[[Turn], dict[str, Any]]] = {
    "cohere": _cohere,
    "anthropic": _anthropic,
    "bedrock": _bedrock,
    "gemini": _gemini,
    "mistral": _mistral,
    "openai_chat": _openai_chat,
    "openai_responses": _openai_responses,
    "ollama": _ollama,
    **{name: functools.partial(_dialect, name) for name in DIALECTS},
}


def sdk_problems(codec: str, built: Mapping[str, Any]) -> list[str]:
    """Why the provider SDK's own response model refuses ``built`` (nothing when it reads it)."""
    if codec == "bedrock":
        from tests.conformance.judges_mistral_bedrock import converse_response_problems

        return converse_response_problems(built)
    if codec == "cohere":
        from tests.conformance.judges_cohere import cohere_response_problems

        return cohere_response_problems(built)
    model: Any
    if codec == "anthropic":
        model = require_module("anthropic.types").Message
    elif codec == "gemini":
        model = require_module("google.genai.types").GenerateContentResponse
    elif codec == "mistral":
        model = require_module("mistralai.client.models").ChatCompletionResponse
    elif codec == "openai_chat" or codec in DIALECTS:
        model = require_module("openai.types.chat").ChatCompletion
    elif codec == "ollama":
        model = require_module("ollama._types").ChatResponse
    else:
        model = require_module("openai.types.responses").Response
    pydantic = require_module("pydantic")
    try:
        model.model_validate(built)
    except pydantic.ValidationError as error:
        return [str(error)]
    return []
