"""Send a request through the real SDK client and return the JSON body it put on the wire.

The clients take an ``httpx2.Client`` (the HTTP library these SDK versions use); an
``httpx2.MockTransport`` answers in-process, so nothing leaves the machine. The clients do not
validate: this shows what the SDK serializes, the judges say whether it is valid.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

from tests.support import require_module

__all__ = ["NOWHERE", "capture_anthropic", "capture_openai_chat", "capture_request"]

NOWHERE = "http://127.0.0.1:9"
"""The base URL the clients are given: never contacted, the mock transport answers."""

OPENAI_CHAT_REPLY = {
    "id": "chatcmpl-capture",
    "object": "chat.completion",
    "created": 0,
    "model": "capture-model",
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}
    ],
}
ANTHROPIC_REPLY = {
    "id": "msg_capture",
    "type": "message",
    "role": "assistant",
    "model": "capture-model",
    "content": [{"type": "text", "text": "ok"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}


def _recording_client(reply: Mapping[str, Any], sink: list[dict[str, Any]]) -> Any:
    httpx2 = require_module("httpx2")

    def answer(request: Any) -> Any:
        sink.append({"url": str(request.url), "json": json.loads(request.content)})
        return httpx2.Response(200, json=dict(reply))

    return httpx2.Client(transport=httpx2.MockTransport(answer))


def capture_request(send: Callable[[Any], Any], reply: Mapping[str, Any]) -> dict[str, Any]:
    """``{"url", "json", "response"}``: what ``send(http_client)`` (one call of a real client
    built on the ``httpx2`` client it is given) put on the wire, and what it returned for
    ``reply``."""
    sink: list[dict[str, Any]] = []
    response = send(_recording_client(reply, sink))
    assert len(sink) == 1, f"expected one request, the client sent {len(sink)}"
    return {**sink[0], "response": response}


def capture_openai_chat(body: Mapping[str, Any]) -> dict[str, Any]:
    """``{"url", "json", "response"}`` of ``client.chat.completions.create(**body)``."""
    openai = require_module("openai")

    def send(http_client: Any) -> Any:
        client = openai.OpenAI(
            api_key="sk-capture", base_url=NOWHERE + "/v1", max_retries=0, http_client=http_client
        )
        return client.chat.completions.create(**body)

    return capture_request(send, OPENAI_CHAT_REPLY)


def capture_anthropic(body: Mapping[str, Any]) -> dict[str, Any]:
    """``{"url", "json", "response"}`` of ``client.messages.create(**body)``."""
    anthropic = require_module("anthropic")

    def send(http_client: Any) -> Any:
        client = anthropic.Anthropic(
            api_key="sk-ant-capture", base_url=NOWHERE, max_retries=0, http_client=http_client
        )
        return client.messages.create(**body)

    return capture_request(send, ANTHROPIC_REPLY)
