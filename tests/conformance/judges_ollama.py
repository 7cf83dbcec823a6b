"""Ollama ``/api/chat`` output judged by the ``ollama`` package's own types, and sent through
its real client over a mock ``httpx`` transport.

The package's models ignore keys they do not know (``extra`` is pydantic's default), so the
judge first refuses any key outside each model's fields, then validates with the models
themselves: ``ChatRequest`` for the body, ``Message`` (and its ``ToolCall``) for each message,
``Tool`` for each tool.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tests.conformance.judges import WireError
from tests.support import require_module

__all__ = ["OLLAMA_REPLY", "capture_ollama", "judge_ollama", "ollama_problems"]

ROLES = frozenset({"system", "user", "assistant", "tool"})
"""The roles ``/api/chat`` renders (the package's ``Message.role`` is any string)."""

OLLAMA_REPLY: dict[str, Any] = {
    "model": "capture-model",
    "created_at": "2026-01-01T00:00:00Z",
    "message": {"role": "assistant", "content": "ok"},
    "done": True,
    "done_reason": "stop",
    "prompt_eval_count": 1,
    "eval_count": 1,
}


def _types() -> Any:
    return require_module("ollama._types")


def _unknown(value: Mapping[str, Any], model: Any, path: str) -> list[str]:
    fields = set(model.model_fields)
    aliases = {f.alias for f in model.model_fields.values() if f.alias}
    return [
        f"{path}.{key}: not a field of {model.__qualname__}"
        for key in value
        if key not in fields | aliases
    ]


def _message_problems(message: Any, path: str) -> list[str]:
    types = _types()
    if not isinstance(message, Mapping):
        return [f"{path}: not an object"]
    problems = _unknown(message, types.Message, path)
    if message.get("role") not in ROLES:
        problems.append(f"{path}.role: {message.get('role')!r} is not one of {sorted(ROLES)}")
    for at, call in enumerate(message.get("tool_calls") or ()):
        where = f"{path}.tool_calls[{at}]"
        if not isinstance(call, Mapping):
            problems.append(f"{where}: not an object")
            continue
        problems += _unknown(call, types.Message.ToolCall, where)
        function = call.get("function")
        if isinstance(function, Mapping):
            problems += _unknown(function, types.Message.ToolCall.Function, f"{where}.function")
    for key in ("content", "thinking", "tool_name"):
        if key in message and not isinstance(message[key], str):
            problems.append(f"{path}.{key}: must be a string")
    for at, image in enumerate(message.get("images") or ()):
        if not isinstance(image, str):
            problems.append(f"{path}.images[{at}]: must be base64 text")
    try:
        # as the client sends them: each image through the package's Image (base64 text)
        images = [types.Image(value=image) for image in message.get("images") or ()]
        sent = {**message, "images": images} if images else message
        validated = types.Message.model_validate(sent)
        validated.model_dump(exclude_none=True)  # Image checks its base64 as it is written
    except Exception as error:  # pydantic's ValidationError, Image's ValueError
        problems.append(f"{path}: {error}")
    return problems


def ollama_problems(body: Mapping[str, Any]) -> list[str]:
    """What the package's types refuse in the request ``body`` (with ``model``)."""
    types = _types()
    problems = _unknown(body, types.ChatRequest, "body")
    messages = body.get("messages")
    if not isinstance(messages, list):
        return [*problems, "body.messages: must be a list"]
    for at, message in enumerate(messages):
        problems += _message_problems(message, f"messages[{at}]")
    for at, tool in enumerate(body.get("tools") or ()):
        where = f"tools[{at}]"
        problems += _unknown(tool, types.Tool, where)
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if isinstance(function, Mapping):
            problems += _unknown(function, types.Tool.Function, f"{where}.function")
    if not problems:
        try:
            plain = [{k: v for k, v in m.items() if k != "images"} for m in messages]
            types.ChatRequest.model_validate({**body, "messages": plain})
        except Exception as error:
            problems.append(f"body: {error}")
    return problems


def judge_ollama(payload: Mapping[str, Any]) -> None:
    """Raise :class:`WireError` unless the ``ollama`` package's types take ``payload`` (what
    ``encode`` returned, perhaps with request fields) as an ``/api/chat`` body."""
    # plain JSON values: the package's models read (and its serializer edits) them in place
    problems = ollama_problems(json.loads(json.dumps({"model": "judge-model", **payload})))
    if problems:
        raise WireError("Ollama chat", problems)


def capture_ollama(
    body: Mapping[str, Any], reply: Mapping[str, Any] = OLLAMA_REPLY
) -> dict[str, Any]:
    """``{"url", "json", "response"}`` of ``ollama.Client(...).chat(**body)`` over a mock
    transport: what the client sent, and its ``ChatResponse`` for ``reply``."""
    ollama = require_module("ollama")
    httpx = require_module("httpx")
    sink: list[dict[str, Any]] = []

    def answer(request: Any) -> Any:
        sink.append({"url": str(request.url), "json": json.loads(request.content)})
        return httpx.Response(200, json=dict(reply))

    client = ollama.Client(host="http://127.0.0.1:9", transport=httpx.MockTransport(answer))
    response = client.chat(**body)
    assert len(sink) == 1, f"expected one request, the client sent {len(sink)}"
    return {**sink[0], "response": response}
