"""Floors: the same work done on plain dicts with no types, no validation and no guarantees.

A floor is what the job costs when nothing is checked: the targets say how close threadline,
which validates and types everything, must come to it. The dicts are ``data.to_floor_dicts``:
the same data in exactly the shape threadline writes (file bytes as ``bytes``).

- :func:`dump_orjson` / :func:`dump_pydantic_core`: the envelope through ``orjson.dumps`` or
  ``pydantic_core.to_json`` (file bytes base64-encoded by each, as ``dump_json`` must).
- :func:`load_orjson` / :func:`load_pydantic_core`: parse the bytes ``dump_json`` wrote into
  dicts and lists.
- :func:`pairing_pass`: the tool calls without results and the results without an earlier
  call, in one pass: the detection ``prepare_messages`` must do, with none of its repairs.
- :func:`suffix_scan`: keep the system messages and the newest messages that fit a token
  budget, measured with threadline's default estimator formula (:func:`estimate`): 4 per
  message, plus ceil(characters / 4) over text, reasoning text, tool-call arguments as compact
  JSON and tool-result text, plus 256 per file.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import orjson
import pydantic_core


def _envelope(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"format": "threadline", "version": 1, "messages": messages}


def _bytes_to_base64(value: Any) -> str:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(type(value).__name__)


def dump_orjson(messages: list[dict[str, Any]]) -> bytes:
    """The envelope as compact JSON through ``orjson`` (bytes through a base64 default)."""
    return orjson.dumps(_envelope(messages), default=_bytes_to_base64)


def dump_pydantic_core(messages: list[dict[str, Any]]) -> bytes:
    """The envelope as compact JSON through ``pydantic_core.to_json`` (bytes as base64)."""
    return pydantic_core.to_json(_envelope(messages), bytes_mode="base64")


def load_orjson(data: bytes) -> Any:
    """Parse JSON into dicts and lists with ``orjson``."""
    return orjson.loads(data)


def load_pydantic_core(data: bytes) -> Any:
    """Parse JSON into dicts and lists with ``pydantic_core.from_json``."""
    return pydantic_core.from_json(data)


def pairing_pass(messages: list[dict[str, Any]]) -> tuple[list[str], list[tuple[int, str]]]:
    """``(calls without a result, (index, call id) of results without an earlier call)``."""
    open_calls: dict[str, int] = {}
    answered: set[str] = set()
    orphans: list[tuple[int, str]] = []
    for index, message in enumerate(messages):
        role = message["role"]
        if role == "assistant":
            for part in message["parts"]:
                if part["type"] == "tool_call":
                    open_calls[part["id"]] = index
        elif role == "tool":
            for part in message["parts"]:
                call_id = part["call_id"]
                if call_id in open_calls:
                    answered.add(call_id)
                else:
                    orphans.append((index, call_id))
    missing = [call_id for call_id in open_calls if call_id not in answered]
    return missing, orphans


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def estimate(message: dict[str, Any]) -> int:
    """threadline's default estimate of a message's tokens, computed from its dict."""
    chars = 0
    files = 0
    for part in message["parts"]:
        kind = part["type"]
        if kind == "text" or kind == "reasoning":
            chars += len(part["text"])
        elif kind == "tool_result":
            content = part["content"]
            if isinstance(content, str):
                chars += len(content)
            else:
                for item in content:
                    if item["type"] == "text":
                        chars += len(item["text"])
                    else:
                        files += 1
        elif kind == "tool_call":
            raw = part.get("raw_arguments")
            chars += len(raw if raw is not None else _COMPACT.encode(part["arguments"]))
        elif kind == "file":
            files += 1
    return 4 + -(-chars // 4) + 256 * files


def suffix_scan(messages: list[dict[str, Any]], max_tokens: int) -> list[dict[str, Any]]:
    """The system messages, then the newest messages whose estimates fit ``max_tokens``."""
    pinned = [message for message in messages if message["role"] == "system"]
    total = sum(map(estimate, pinned))
    start = len(messages)
    while start > 0:
        message = messages[start - 1]
        if message["role"] != "system":
            tokens = estimate(message)
            if total + tokens > max_tokens:
                break
            total += tokens
        start -= 1
    return pinned + [message for message in messages[start:] if message["role"] != "system"]
