"""Telling which provider format a payload or response looks like (private), for the hint
in an error: a request body given without ``--from``, or a response read with the wrong
``provider=``.

A guess is made from a few telltale keys only, never by reading the whole value; ``None``
means no format can be told. OpenAI Chat and Mistral share one shape: it is named
``openai_chat``.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import Final

from threadline.codecs._formats import descriptor

__all__ = ["format_label", "guess_request_format", "guess_response_format", "looks_like"]

# Content block types only Anthropic uses; OpenAI Chat's own; the Responses API's item types.
_ANTHROPIC_BLOCKS: Final = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "document", "image"}
)
_OPENAI_CHAT_BLOCKS: Final = frozenset({"image_url", "input_audio", "file", "refusal"})
_RESPONSES_ITEMS: Final = frozenset(
    {"message", "function_call", "function_call_output", "reasoning", "input_text"}
)
# Bedrock Converse content blocks: one key naming the kind, no "type".
_BEDROCK_BLOCKS: Final = frozenset(
    {"text", "image", "document", "toolUse", "toolResult", "reasoningContent"}
)


def guess_response_format(response: Any) -> str | None:
    """The codec name whose responses ``response`` (JSON values) looks like, or ``None``."""
    if not isinstance(response, Mapping):
        return None
    if isinstance(response.get("choices"), list):
        return "openai_chat"
    if response.get("object") == "response":
        return "openai_responses"
    if response.get("type") == "message" and isinstance(response.get("content"), list):
        return "anthropic"
    if isinstance(response.get("candidates"), list):
        return "gemini"
    output = response.get("output")
    if isinstance(output, Mapping) and "message" in output:
        return "bedrock"
    if isinstance(output, list) and output:
        return "openai_responses"
    return None


def guess_request_format(payload: Any) -> str | None:
    """The codec name whose request bodies (or message lists) ``payload`` looks like, or
    ``None``; a threadline history looks like none."""
    if isinstance(payload, Mapping):
        if "format" in payload:
            return None  # the threadline envelope
        if "contents" in payload or "systemInstruction" in payload:
            return "gemini"
        if "input" in payload:
            return "openai_responses"
        messages = payload.get("messages")
        if isinstance(messages, list):
            system = payload.get("system")
            if isinstance(system, str):
                return "anthropic"
            if isinstance(system, list) and system and _is_bedrock_block(system[0]):
                return "bedrock"
            return _guess_messages(messages) or "openai_chat"
        return None
    if isinstance(payload, list):
        return _guess_messages(payload)
    return None


def _guess_messages(items: Sequence[Any]) -> str | None:
    guess: str | None = None
    for item in items:
        if not isinstance(item, Mapping):
            return None
        if item.get("type") in _RESPONSES_ITEMS or ("type" in item and "role" not in item):
            return "openai_responses"
        parts = item.get("parts")
        if isinstance(parts, list):
            if item.get("role") == "model" or any(
                isinstance(part, Mapping) and "type" not in part for part in parts
            ):
                return "gemini"
            return None  # threadline messages
        if "content" not in item:
            continue
        if "tool_calls" in item or item.get("role") in ("system", "tool", "developer"):
            return "openai_chat"
        content = item["content"]
        if isinstance(content, list):
            for block in content:
                if not isinstance(block, Mapping):
                    continue
                kind = block.get("type")
                if kind in _ANTHROPIC_BLOCKS and (kind != "image" or "source" in block):
                    return "anthropic"
                if kind in _OPENAI_CHAT_BLOCKS:
                    return "openai_chat"
                if kind is None and _is_bedrock_block(block):
                    return "bedrock"
        guess = "openai_chat"
    return guess


def _is_bedrock_block(block: Any) -> bool:
    return (
        isinstance(block, Mapping) and "type" not in block and bool(_BEDROCK_BLOCKS & block.keys())
    )


def format_label(name: str) -> str:
    """What the format of the codec ``name`` is called in messages ("OpenAI Chat Completions")."""
    described = descriptor(name)
    return name if described is None else described.label


def looks_like(name: str, what: str) -> str:
    """``"an OpenAI Chat Completions response"``: the format of codec ``name`` and ``what``."""
    label = format_label(name)
    article = "an" if label[:1].lower() in "aeiou" else "a"
    return f"{article} {label} {what}"
