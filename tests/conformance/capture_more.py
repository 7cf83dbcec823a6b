"""Send a request through the real ``openai`` (Responses) and ``google-genai`` clients.

Like :mod:`tests.conformance.capture`: an in-process mock transport answers, nothing leaves
the machine, and the clients do not validate. ``openai`` takes an ``httpx2.Client``;
``google-genai`` 3.6.1 takes an ``httpx`` or an ``httpx2`` client in
``HttpOptions(httpx_client=...)`` (only ``httpx2`` is installed here).

google-genai rebuilds the body from its own models: it sends some names in snake_case
(``inline_data``) and bytes as URL-safe base64. :func:`canonical_gemini` puts a body in one
spelling (snake_case names, bytes decoded) so that ours and the SDK's can be compared.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from typing import Any

from tests.conformance.capture import NOWHERE
from tests.conformance.capture import capture_request
from tests.support import require_module

__all__ = ["canonical_gemini", "capture_gemini", "capture_openai_responses"]


OPENAI_RESPONSES_REPLY = {
    "id": "resp_capture",
    "object": "response",
    "created_at": 0,
    "model": "capture-model",
    "status": "completed",
    "output": [
        {
            "type": "message",
            "id": "msg_capture",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "ok", "annotations": []}],
        }
    ],
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
}
GEMINI_REPLY = {
    "candidates": [
        {"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}
    ],
    "modelVersion": "capture-model",
    "responseId": "capture",
}


def capture_openai_responses(body: Mapping[str, Any]) -> dict[str, Any]:
    """``{"url", "json", "response"}`` of ``client.responses.create(**body)``."""
    openai = require_module("openai")

    def send(http_client: Any) -> Any:
        client = openai.OpenAI(
            api_key="sk-capture", base_url=NOWHERE + "/v1", max_retries=0, http_client=http_client
        )
        return client.responses.create(**body)

    return capture_request(send, OPENAI_RESPONSES_REPLY)


def capture_gemini(body: Mapping[str, Any], model: str = "gemini-capture") -> dict[str, Any]:
    """``{"url", "json", "response"}`` of ``client.models.generate_content(...)`` given a
    REST body's ``contents`` and ``systemInstruction`` as they are, the way an application
    passes them (the SDK reads camelCase dicts and base64 text into its own models)."""
    genai = require_module("google.genai")
    types = require_module("google.genai.types")
    config = None
    if "systemInstruction" in body:
        config = {"system_instruction": body["systemInstruction"]}

    def send(http_client: Any) -> Any:
        options = types.HttpOptions(base_url=NOWHERE, httpx_client=http_client)
        client = genai.Client(api_key="capture", http_options=options)
        return client.models.generate_content(model=model, contents=body["contents"], config=config)

    return capture_request(send, GEMINI_REPLY)


# ---------------------------------------------------------------------------------------------


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _bytes(text: str) -> bytes:
    if "-" in text or "_" in text:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    return base64.b64decode(text + "=" * (-len(text) % 4))


def _blob(value: Mapping[str, Any]) -> dict[str, Any]:
    out = {_snake(key): item for key, item in value.items()}
    if isinstance(out.get("data"), str):
        out["data"] = _bytes(out["data"])
    return out


def _part(part: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in part.items():
        name = _snake(key)
        if name == "thought_signature":
            out[name] = _bytes(value)
        elif name in ("inline_data", "file_data"):
            out[name] = _blob(value)
        elif isinstance(value, Mapping):
            # one level only: args and response are the application's own JSON
            inner = {_snake(k): v for k, v in value.items()}
            if "parts" in inner:
                inner["parts"] = [_part(p) for p in inner["parts"]]
            out[name] = inner
        else:
            out[name] = value
    return out


def canonical_gemini(body: Mapping[str, Any]) -> dict[str, Any]:
    """``contents`` and the system instruction's parts in one spelling: snake_case names,
    bytes decoded (the system instruction's role, which the SDK may set, is left out)."""
    out: dict[str, Any] = {
        "contents": [
            {"role": content.get("role"), "parts": [_part(p) for p in content["parts"]]}
            for content in body["contents"]
        ]
    }
    system = body.get("systemInstruction", body.get("system_instruction"))
    if system is not None:
        out["system_instruction"] = [_part(p) for p in system["parts"]]
    return out
