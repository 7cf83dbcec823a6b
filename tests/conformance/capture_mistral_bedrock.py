"""Send a request through the real ``mistralai`` and botocore clients, offline.

``mistralai`` takes an ``httpx2.Client``; an ``httpx2.MockTransport`` answers in-process.
botocore has a ``before-send`` event: a handler that returns a response stops the request
before it leaves the machine, after the client has serialized, signed and would have sent it.
Both return what the client put on the wire and what it made of the canned reply, so tests
can feed real SDK response objects to ``decode_response``. The clients do not validate: the
judges do.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from collections.abc import Mapping
from typing import Any

from tests.conformance.capture import NOWHERE
from tests.conformance.capture import capture_request
from tests.support import require_module

__all__ = ["CONVERSE_REPLY", "MISTRAL_REPLY", "capture_bedrock", "capture_mistral"]


MISTRAL_REPLY: dict[str, Any] = {
    "id": "cmpl-capture",
    "object": "chat.completion",
    "model": "capture-model",
    "created": 0,
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}
    ],
}
CONVERSE_REPLY: dict[str, Any] = {
    "output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}},
    "stopReason": "end_turn",
    "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
    "metrics": {"latencyMs": 1},
}
"""A Converse reply as JSON on the wire (bytes as base64 text)."""


def capture_mistral(
    body: Mapping[str, Any], reply: Mapping[str, Any] = MISTRAL_REPLY
) -> dict[str, Any]:
    """``{"url", "json", "response"}`` of ``Mistral(...).chat.complete(**body)``: the URL and
    JSON body it sent, and the SDK's response object for ``reply``."""
    client_module = require_module("mistralai.client")

    def send(http_client: Any) -> Any:
        client = client_module.Mistral(
            api_key="capture-key", server_url=NOWHERE, client=http_client
        )
        return client.chat.complete(**body)

    return capture_request(send, reply)


class _Body:
    """The raw stream botocore reads a response body from."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._data


def capture_bedrock(
    params: Mapping[str, Any], reply: Mapping[str, Any] = CONVERSE_REPLY
) -> dict[str, Any]:
    """``{"url", "json", "response"}`` of ``client.converse(**params)`` on a botocore
    ``bedrock-runtime`` client with fake credentials: the URL and JSON body it would have
    sent, and what boto3 returns for ``reply`` (bytes decoded from base64)."""
    session_module = require_module("botocore.session")
    awsrequest = require_module("botocore.awsrequest")
    sent: list[dict[str, Any]] = []

    def before_send(request: Any, **_: Any) -> Any:
        sent.append({"url": request.url, "json": json.loads(request.body)})
        data = json.dumps(dict(reply)).encode()
        headers = {"content-type": "application/json", "x-amzn-requestid": "req-capture"}
        return awsrequest.AWSResponse(request.url, 200, headers, _Body(data))

    session = session_module.Session()
    client = session.create_client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="AKIDCAPTURE",
        aws_secret_access_key="capture-secret",
    )
    client.meta.events.register("before-send.bedrock-runtime.Converse", before_send)
    response = client.converse(**params)
    assert len(sent) == 1, f"expected one request, the client sent {len(sent)}"
    return {**sent[0], "response": response}
