"""The rules judge's rules of the OpenAI-compatible dialects (``threadline.codecs._dialects``):
the reasoning fields their live APIs demand or refuse on an assistant message, each with the
error a public issue quotes. The checks read the wire payload only; where a rule depends on
the model (DeepSeek-R1 refused the field DeepSeek V4 demands), they read the body's
``model`` when the caller added it (a fragment names none: the default model)."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

Check = Callable[[Mapping[str, Any]], list[str]]

REASONING_FIELDS = ("reasoning", "reasoning_content", "reasoning_details")


def _assistants(payload: Mapping[str, Any]) -> list[tuple[int, Mapping[str, Any]]]:
    messages = payload.get("messages")
    return [
        (index, message)
        for index, message in enumerate(messages if isinstance(messages, list) else ())
        if isinstance(message, Mapping) and message.get("role") == "assistant"
    ]


def _model(payload: Mapping[str, Any]) -> str:
    model = payload.get("model")
    return model.rsplit("/", 1)[-1].lower() if isinstance(model, str) else ""


def reasoning_content_on_every_assistant(*, refusing: tuple[str, ...] = ()) -> Check:
    """Every assistant message without tool calls carries ``reasoning_content`` (a string),
    unless the body's model is of a family that refuses it (``refusing`` prefixes); those
    with tool calls are `reasoning_content_on_tool_calls`'s."""

    def check(payload: Mapping[str, Any]) -> list[str]:
        if refusing and _model(payload).startswith(refusing):
            return []
        return [
            f"messages[{index}]: an assistant message without reasoning_content"
            for index, message in _assistants(payload)
            if not message.get("tool_calls")
            and not isinstance(message.get("reasoning_content"), str)
        ]

    return check


def reasoning_content_on_tool_calls(payload: Mapping[str, Any]) -> list[str]:
    """Every assistant message with ``tool_calls`` carries ``reasoning_content`` (DeepSeek-R1
    took no tool calls: the rule holds for every DeepSeek model that takes them)."""
    return [
        f"messages[{index}]: an assistant tool-call message without reasoning_content"
        for index, message in _assistants(payload)
        if message.get("tool_calls") and not isinstance(message.get("reasoning_content"), str)
    ]


def no_reasoning_content_for(prefixes: tuple[str, ...]) -> Check:
    """No assistant message carries ``reasoning_content`` when the body's model is of a
    family that refuses it."""

    def check(payload: Mapping[str, Any]) -> list[str]:
        if not _model(payload).startswith(prefixes):
            return []
        return [
            f"messages[{index}]: reasoning_content sent to {payload.get('model')!r}"
            for index, message in _assistants(payload)
            if "reasoning_content" in message
        ]

    return check


def no_reasoning_fields(payload: Mapping[str, Any]) -> list[str]:
    """No assistant message carries a reasoning field (``reasoning``, ``reasoning_content``,
    ``reasoning_details``)."""
    return [
        f"messages[{index}]: property {field!r} is unsupported"
        for index, message in _assistants(payload)
        for field in REASONING_FIELDS
        if field in message
    ]


def reasoning_details_with_tool_calls_for(prefixes: tuple[str, ...]) -> Check:
    """An assistant message with ``tool_calls`` carries ``reasoning_details`` holding an
    encrypted entry (the upstream's thought signature) when the body's model is of a family
    that needs it, for the calls the model itself made (ids it issued, ``tool_``...)."""

    def check(payload: Mapping[str, Any]) -> list[str]:
        if not _model(payload).startswith(prefixes):
            return []
        out = []
        for index, message in _assistants(payload):
            if not message.get("tool_calls"):
                continue
            details = message.get("reasoning_details")
            entries = details if isinstance(details, list) else []
            if not any(
                isinstance(entry, Mapping) and entry.get("type") == "reasoning.encrypted"
                for entry in entries
            ):
                out.append(f"messages[{index}]: tool calls without their reasoning_details")
        return out

    return check


def reasoning_details_well_formed(payload: Mapping[str, Any]) -> list[str]:
    """Each ``reasoning_details`` entry has a known ``type`` and the string its type holds."""
    needs = {
        "reasoning.text": "text",
        "reasoning.summary": "summary",
        "reasoning.encrypted": "data",
    }
    out = []
    for index, message in _assistants(payload):
        details = message.get("reasoning_details")
        if details is None:
            continue
        for at, entry in enumerate(details if isinstance(details, list) else [details]):
            kind = entry.get("type") if isinstance(entry, Mapping) else None
            field = needs.get(kind) if isinstance(kind, str) else None
            if field is None or not isinstance(entry.get(field), str):
                out.append(f"messages[{index}].reasoning_details[{at}]: not a reasoning entry")
    return out
