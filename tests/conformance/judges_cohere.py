"""The judge of Cohere v2 Chat output: the ``cohere`` SDK's own message types, then the rules.

``judge_cohere(payload)`` validates ``payload["messages"]`` against ``List[ChatMessageV2]``
(``cohere.types``), with every model checked for keys it does not define (the SDK's models
allow extra keys; the API answers 400 for them), then checks the conversation rules: every
tool message answers a call an earlier assistant message made, each call is answered once, an
assistant message says something (content, a tool plan or calls), arguments are JSON text.

It raises :class:`~tests.conformance.judges.WireError` listing the problems; the rules read
the wire payload only.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import pydantic

from tests.conformance.judges import WireError
from tests.support import require_module

__all__ = ["cohere_response_problems", "cohere_rules", "judge_cohere"]


@functools.cache
def _messages() -> pydantic.TypeAdapter[Any]:
    types = require_module("cohere.types")
    return pydantic.TypeAdapter(list[types.ChatMessageV2])  # type: ignore[name-defined]


def _extra_keys(value: Any, path: str) -> list[str]:
    """The keys a validated SDK model holds that its type does not define."""
    if isinstance(value, pydantic.BaseModel):
        problems = [f"{path}: unknown key {key!r}" for key in value.model_extra or {}]
        for name in type(value).model_fields:
            problems.extend(_extra_keys(getattr(value, name), f"{path}.{name}"))
        return problems
    if isinstance(value, list):
        return [p for at, item in enumerate(value) for p in _extra_keys(item, f"{path}[{at}]")]
    return []


def judge_cohere(payload: Mapping[str, Any]) -> None:
    """Raise `WireError` unless ``payload["messages"]`` is a valid Cohere v2 Chat history."""
    messages = payload["messages"]
    try:
        validated = _messages().validate_python(messages)
    except pydantic.ValidationError as error:
        raise WireError("Cohere v2 Chat", [str(error)]) from None
    problems = _extra_keys(validated, "messages") + cohere_rules(messages)
    if problems:
        raise WireError("Cohere v2 Chat", problems)


def cohere_rules(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """What the API refuses beyond the types."""
    problems: list[str] = []
    called: set[str] = set()
    answered: set[str] = set()
    for at, message in enumerate(messages):
        where = f"messages[{at}]"
        role = message["role"]
        if role == "assistant":
            if not (
                message.get("content") or message.get("tool_calls") or message.get("tool_plan")
            ):
                problems.append(f"{where}: an assistant message with nothing in it")
            for call in message.get("tool_calls") or ():
                arguments = call["function"].get("arguments")
                try:
                    json.loads(arguments)
                except (TypeError, ValueError):
                    problems.append(f"{where}: arguments {arguments!r} are not JSON text")
                called.add(call["id"])
        elif role == "tool":
            call_id = message["tool_call_id"]
            if call_id not in called:
                problems.append(f"{where}: tool_call_id {call_id!r} answers no earlier call")
            if call_id in answered:
                problems.append(f"{where}: tool_call_id {call_id!r} answered twice")
            answered.add(call_id)
            for item in message["content"] if isinstance(message["content"], list) else ():
                if item["type"] == "document" and not isinstance(
                    item["document"].get("data"), dict
                ):
                    problems.append(f"{where}: a document whose data is not an object")
    return problems


def cohere_response_problems(built: Mapping[str, Any]) -> list[str]:
    """Why the SDK's ``V2ChatResponse`` refuses ``built`` (nothing when it reads it)."""
    model = require_module("cohere.v2.types").V2ChatResponse
    try:
        model.model_validate(built)
    except pydantic.ValidationError as error:
        return [str(error)]
    return []


_PLAIN_REPLY: Mapping[str, Any] = {
    "id": "c1",
    "finish_reason": "COMPLETE",
    "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
}
"""A reply the client parses, for a capture whose reply does not matter."""


def capture_cohere(
    body: Mapping[str, Any], reply: Mapping[str, Any] = _PLAIN_REPLY
) -> dict[str, Any]:
    """``{"url", "json", "response"}`` of ``ClientV2(...).chat(**body)`` over a mock
    transport answering ``reply``."""
    cohere_sdk = require_module("cohere")
    httpx = require_module("httpx")
    sink: list[dict[str, Any]] = []

    def handle(request: Any) -> Any:
        sink.append({"url": str(request.url), "json": json.loads(request.content)})
        return httpx.Response(200, json=reply)

    client = cohere_sdk.ClientV2(
        api_key="capture-key", httpx_client=httpx.Client(transport=httpx.MockTransport(handle))
    )
    response = client.chat(**body)
    assert len(sink) == 1, f"expected one request, the client sent {len(sink)}"
    return {**sink[0], "response": response}
