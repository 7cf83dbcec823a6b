"""Seeded, realistic agent conversations, built once as plain dicts and converted per library.

A conversation is a system prompt, then turns: a user message (now and then with a ~10 KB
PNG), then one or more assistant steps. Each step has a reasoning part with a signature, some
text, and 0-3 tool calls with JSON-object arguments; a step with calls is followed by one tool
message holding one result (50-2,000 characters) per call. The last step of a turn calls no
tools. Text is sliced from a seeded pool of words with a little non-ASCII, quotes and newlines,
so every string is distinct (nothing is shared or interned between messages) and JSON escaping
is exercised.

:func:`conversation` returns the *spec*: a list of plain dicts, one per threadline message,
in threadline's field names. The converters turn the same spec into each library's idiomatic
types:

- :func:`to_threadline` - threadline messages built with the public constructors;
- :func:`to_pydantic_ai` - ``ModelRequest`` / ``ModelResponse``: the system prompt goes into the
  first request with the first user prompt (pydantic-ai has no system message), one request per
  user turn or tool-result group, one response per assistant message;
- :func:`to_langchain` - ``SystemMessage`` / ``HumanMessage`` / ``AIMessage`` with
  ``tool_calls`` / one ``ToolMessage`` per result (LangChain has no multi-result message);
- :func:`to_floor_dicts` - the same data as plain dicts in exactly the shape threadline writes
  (every field, defaults included), the input of the floors in ``floors.py``.

:func:`with_defects` copies a spec and breaks it the ways agent histories break (dangling calls,
results after an intervening user message, malformed arguments, UI state), for the
``prepare_messages`` workload.
"""

from __future__ import annotations

import base64
import copy
import json
import random
import struct
import zlib
from typing import Any

SEED = 20260511

_VOCABULARY = (
    "the of and to in is for on with that this as it be are by from at or an was not but "
    "agent tool call result model history message token budget window search file path "
    "query return value error status context summary reason step plan user assistant data "
    "function request response json object list string number true false null index cache "
    "update delete create read write open close parse load dump encode decode check repair"
)
_WORDS = _VOCABULARY.split()
# Realistic text is mostly ASCII; a little Latin-1, a little CJK, code-like quotes and newlines.
_SPICE = [
    "café",
    "naïve",
    "über",
    "Zürich",
    "señor",
    "東京",
    "数据",
    '"quoted"',
    "\n",
    "\n\n",
    "\t",
]

_TOOLS = ("search_docs", "read_file", "run_sql", "http_get", "list_dir", "write_file")


def _pool(rng: random.Random, chars: int) -> str:
    words: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(_SPICE) if rng.random() < 0.01 else rng.choice(_WORDS)
        words.append(word)
        size += len(word) + 1
    return " ".join(words)


class _Text:
    """Distinct pieces of text sliced from one seeded pool."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._pool = _pool(rng, 1 << 20)

    def __call__(self, low: int, high: int) -> str:
        length = self._rng.randint(low, high)
        start = self._rng.randrange(0, len(self._pool) - length)
        # Slicing makes a new str object: each message owns its text, as loaded JSON would.
        return self._pool[start : start + length]


def _png(rng: random.Random, size: int) -> bytes:
    """A valid PNG of about ``size`` bytes (incompressible pixel data, like a real photo)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    width = 64
    height = max(1, size // (width * 3 + 1))
    raw = b"".join(b"\x00" + rng.randbytes(width * 3) for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 0))
        + chunk(b"IEND", b"")
    )


def _arguments(rng: random.Random, text: _Text, tool: str) -> dict[str, Any]:
    if tool == "search_docs":
        return {"query": text(10, 80), "limit": rng.randint(1, 50), "filters": {"lang": "en"}}
    if tool == "read_file":
        return {"path": f"/src/module_{rng.randint(0, 999)}.py", "start": rng.randint(0, 500)}
    if tool == "run_sql":
        return {"sql": "SELECT * FROM t WHERE x = " + str(rng.randint(0, 10**6)), "timeout": 30}
    if tool == "http_get":
        return {"url": f"https://example.com/api/{rng.randint(0, 9999)}", "headers": {}}
    if tool == "list_dir":
        return {"path": f"/data/{rng.randint(0, 99)}", "recursive": rng.random() < 0.5}
    return {"path": f"/tmp/out_{rng.randint(0, 999)}.txt", "content": text(20, 400)}


def conversation(size: int, *, seed: int = SEED, image_every: int = 25) -> list[dict[str, Any]]:
    """A seeded agent conversation of exactly ``size`` messages, as threadline-shaped dicts.

    Every tool call is answered in the next message; the history ends in a user message or an
    assistant message without calls, so it is clean under strict integrity.

    Args:
        size: how many messages (at least 2).
        seed: the random seed; the same seed gives the same conversation.
        image_every: about one user message in this many carries a ~10 KB PNG.
    """
    rng = random.Random(seed)
    text = _Text(rng)
    counter = iter(range(1 << 62))

    def message_id() -> str:
        return f"msg_{next(counter):032x}"

    def call_id() -> str:
        return f"call_{rng.getrandbits(96):024x}"

    messages: list[dict[str, Any]] = [
        {"id": message_id(), "role": "system", "parts": [{"type": "text", "text": text(500, 1500)}]}
    ]
    while len(messages) < size:
        user_parts: list[dict[str, Any]] = [{"type": "text", "text": text(20, 500)}]
        if rng.randrange(image_every) == 0:
            user_parts.append(
                {"type": "file", "data": _png(rng, 10_000), "media_type": "image/png"}
            )
        messages.append({"id": message_id(), "role": "user", "parts": user_parts})
        steps = rng.randint(1, 4)
        for step in range(steps):
            left = size - len(messages)
            if left <= 0:
                break
            last_step = step == steps - 1 or left < 2
            calls = 0 if last_step else rng.randint(0, 3)
            parts: list[dict[str, Any]] = [
                {
                    "type": "reasoning",
                    "text": text(100, 800),
                    "signature": base64.b64encode(rng.randbytes(rng.randint(200, 450))).decode(),
                    "provider": "anthropic",
                }
            ]
            if calls == 0 or rng.random() < 0.5:
                parts.append(
                    {"type": "text", "text": text(200, 2000) if calls == 0 else text(10, 200)}
                )
            calls_made = []
            for _ in range(calls):
                tool = rng.choice(_TOOLS)
                call = {
                    "type": "tool_call",
                    "id": call_id(),
                    "name": tool,
                    "arguments": _arguments(rng, text, tool),
                }
                parts.append(call)
                calls_made.append(call)
            messages.append({"id": message_id(), "role": "assistant", "parts": parts})
            if calls_made:
                results = [
                    {
                        "type": "tool_result",
                        "call_id": call["id"],
                        "name": call["name"],
                        "content": text(50, 2000),
                    }
                    for call in calls_made
                ]
                messages.append({"id": message_id(), "role": "tool", "parts": results})
    return messages[:size]


def small_messages(size: int, *, seed: int = SEED) -> list[dict[str, Any]]:
    """A seeded conversation of exactly ``size`` *small* messages: the shape where per-message
    work dominates (issue 27). Short user asks; assistant steps that make 2-5 parallel calls
    with small arguments and, one time in four, a few words of text; tool messages with one
    short result (10-80 characters) per call. No reasoning, no files.
    """
    rng = random.Random(seed)
    text = _Text(rng)
    counter = iter(range(1 << 62))

    def message_id() -> str:
        return f"msg_{next(counter):032x}"

    messages: list[dict[str, Any]] = [
        {"id": message_id(), "role": "system", "parts": [{"type": "text", "text": text(20, 80)}]}
    ]
    while len(messages) < size:
        ask = [{"type": "text", "text": text(5, 60)}]
        messages.append({"id": message_id(), "role": "user", "parts": ask})
        for _ in range(rng.randint(1, 6)):
            if size - len(messages) < 2:
                break
            parts: list[dict[str, Any]] = []
            if rng.random() < 0.25:
                parts.append({"type": "text", "text": text(5, 40)})
            calls = []
            for _ in range(rng.randint(2, 5)):
                tool = rng.choice(("read_file", "list_dir", "http_get"))
                call_id = f"call_{rng.getrandbits(64):016x}"
                calls.append(
                    {
                        "type": "tool_call",
                        "id": call_id,
                        "name": tool,
                        "arguments": _arguments(rng, text, tool),
                    }
                )
            messages.append({"id": message_id(), "role": "assistant", "parts": parts + calls})
            results = [
                {
                    "type": "tool_result",
                    "call_id": call["id"],
                    "name": call["name"],
                    "content": text(10, 80),
                }
                for call in calls
            ]
            messages.append({"id": message_id(), "role": "tool", "parts": results})
        if len(messages) < size:
            answer = [{"type": "text", "text": text(10, 120)}]
            messages.append({"id": message_id(), "role": "assistant", "parts": answer})
    return messages[:size]


SHAPES = {"agent turns": conversation, "many small messages": small_messages}
"""The conversation shapes every load and dump target is reported on."""


def with_defects(spec: list[dict[str, Any]], *, every: int = 100, seed: int = SEED) -> list[dict]:
    """A copy of ``spec`` with about one defect per ``every`` messages, all repairable in auto.

    Cycles through: a tool message removed (its calls are left dangling: missing-tool-result);
    a tool message moved after the next user message (misplaced-tool-result); a call's
    arguments replaced by truncated JSON text (invalid-tool-args); an internal message with UI
    state inserted (internal-message); a hook part added to an assistant message
    (internal-part). The last assistant message also gets a call that is never answered.
    """
    rng = random.Random(seed + 1)
    out = copy.deepcopy(spec)
    kinds = ("missing", "misplaced", "invalid-args", "internal-message", "hook")
    index = every
    kind = 0
    while index < len(out) - 2:
        message = out[index]
        want = kinds[kind % len(kinds)]
        done = False
        if want in ("missing", "misplaced") and message["role"] == "tool":
            tool = out.pop(index)
            if want == "misplaced":
                after = next((i for i in range(index, len(out)) if out[i]["role"] == "user"), None)
                if after is not None:
                    out.insert(after + 1, tool)
            done = True
        elif want == "invalid-args" and message["role"] == "assistant":
            call = next((p for p in message["parts"] if p["type"] == "tool_call"), None)
            if call is not None:
                raw = json.dumps(call["arguments"])
                call["raw_arguments"] = raw[: len(raw) // 2]
                call["arguments"] = {}
                done = True
        elif want == "internal-message" and message["role"] == "user":
            state = {"form": "approval", "pending": rng.randint(0, 9)}
            hook = {"type": "hook", "name": "ui", "state": state}
            out.insert(index, {"id": f"{message['id']}:ui", "role": "internal", "parts": [hook]})
            done = True
        elif want == "hook" and message["role"] == "assistant":
            message["parts"].append({"type": "hook", "name": "ui", "state": {"step": index}})
            done = True
        if done:
            kind += 1
            index += every
        else:
            index += 1
    for message in reversed(out):
        if message["role"] == "assistant":
            message["parts"].append(
                {
                    "type": "tool_call",
                    "id": "call_dangling",
                    "name": "read_file",
                    "arguments": {"path": "/x"},
                }
            )
            break
    return out


# ---------------------------------------------------------------------------------------------
# Converters: the same spec in each library's idiomatic types.


def to_threadline(spec: list[dict[str, Any]]) -> list[Any]:
    """threadline messages, built with the public constructors and part helpers."""
    import threadline as tl

    def part(p: dict[str, Any]) -> Any:
        kind = p["type"]
        if kind == "text":
            return tl.text_part(p["text"])
        if kind == "reasoning":
            return tl.reasoning_part(p["text"], signature=p["signature"], provider=p["provider"])
        if kind == "tool_call":
            if "raw_arguments" in p:
                return tl.tool_call_part(p["id"], p["name"], p["raw_arguments"])
            return tl.tool_call_part(p["id"], p["name"], p["arguments"])
        if kind == "tool_result":
            return tl.tool_result_part(p["call_id"], p["content"], name=p["name"])
        if kind == "file":
            return tl.file_part(p["data"], p["media_type"])
        if kind == "hook":
            return tl.hook_part(p["name"], p["state"])
        raise ValueError(kind)

    build = {
        "system": lambda m: tl.system_message(m["parts"][0]["text"], id=m["id"]),
        "user": lambda m: tl.user_message(*map(part, m["parts"]), id=m["id"]),
        "assistant": lambda m: tl.assistant_message(*map(part, m["parts"]), id=m["id"]),
        "tool": lambda m: tl.tool_message(*map(part, m["parts"]), id=m["id"]),
        "internal": lambda m: tl.internal_message(*map(part, m["parts"]), id=m["id"]),
    }
    return [build[m["role"]](m) for m in spec]


def to_pydantic_ai(spec: list[dict[str, Any]]) -> list[Any]:
    """pydantic-ai ``ModelMessage`` objects (``ModelRequest`` / ``ModelResponse``).

    pydantic-ai has no internal messages or UI-state parts: those (defect workload only) are
    left out.
    """
    from pydantic_ai import messages as pai

    out: list[Any] = []
    system: list[Any] = []
    for m in spec:
        role = m["role"]
        if role == "system":
            system.append(pai.SystemPromptPart(content=m["parts"][0]["text"]))
        elif role == "user":
            content: list[Any] = []
            for p in m["parts"]:
                if p["type"] == "text":
                    content.append(p["text"])
                else:
                    content.append(pai.BinaryContent(data=p["data"], media_type=p["media_type"]))
            prompt = content[0] if len(content) == 1 else content
            out.append(pai.ModelRequest(parts=[*system, pai.UserPromptPart(content=prompt)]))
            system = []
        elif role == "assistant":
            parts: list[Any] = []
            for p in m["parts"]:
                if p["type"] == "reasoning":
                    parts.append(
                        pai.ThinkingPart(
                            content=p["text"], signature=p["signature"], provider_name=p["provider"]
                        )
                    )
                elif p["type"] == "text":
                    parts.append(pai.TextPart(content=p["text"]))
                elif p["type"] == "tool_call":
                    # Malformed arguments (defect workload) stay text, as pydantic-ai keeps them.
                    args = p.get("raw_arguments", p["arguments"])
                    parts.append(
                        pai.ToolCallPart(tool_name=p["name"], args=args, tool_call_id=p["id"])
                    )
            out.append(pai.ModelResponse(parts=parts))
        elif role == "tool":
            out.append(
                pai.ModelRequest(
                    parts=[
                        pai.ToolReturnPart(
                            tool_name=p["name"], content=p["content"], tool_call_id=p["call_id"]
                        )
                        for p in m["parts"]
                    ]
                )
            )
    return out


def to_langchain(spec: list[dict[str, Any]]) -> list[Any]:
    """langchain-core messages: Human/AI (with ``tool_calls``)/Tool, standard content blocks."""
    from langchain_core import messages as lc

    out: list[Any] = []
    for m in spec:
        role = m["role"]
        if role == "system":
            out.append(lc.SystemMessage(content=m["parts"][0]["text"], id=m["id"]))
        elif role == "user":
            parts = m["parts"]
            if len(parts) == 1:
                out.append(lc.HumanMessage(content=parts[0]["text"], id=m["id"]))
                continue
            blocks: list[Any] = []
            for p in parts:
                if p["type"] == "text":
                    blocks.append({"type": "text", "text": p["text"]})
                else:
                    data = base64.b64encode(p["data"]).decode("ascii")
                    blocks.append({"type": "image", "base64": data, "mime_type": p["media_type"]})
            out.append(lc.HumanMessage(content=blocks, id=m["id"]))
        elif role == "assistant":
            content: list[Any] = []
            calls: list[Any] = []
            for p in m["parts"]:
                if p["type"] == "reasoning":
                    content.append(
                        {
                            "type": "reasoning",
                            "reasoning": p["text"],
                            "extras": {"signature": p["signature"]},
                        }
                    )
                elif p["type"] == "text":
                    content.append({"type": "text", "text": p["text"]})
                elif p["type"] == "tool_call":
                    calls.append({"name": p["name"], "args": p["arguments"], "id": p["id"]})
            out.append(lc.AIMessage(content=content, tool_calls=calls, id=m["id"]))
        elif role == "tool":
            for p in m["parts"]:
                out.append(
                    lc.ToolMessage(content=p["content"], tool_call_id=p["call_id"], name=p["name"])
                )
    return out


_PART_DEFAULTS: dict[str, dict[str, Any]] = {
    "text": {"type": "text", "text": "", "metadata": {}},
    "reasoning": {
        "type": "reasoning",
        "text": "",
        "signature": None,
        "encrypted": None,
        "redacted": False,
        "provider": None,
        "model": None,
        "item_id": None,
        "summary": (),
        "metadata": {},
    },
    "tool_call": {
        "type": "tool_call",
        "id": "",
        "name": "",
        "arguments": {},
        "raw_arguments": None,
        "metadata": {},
    },
    "tool_result": {
        "type": "tool_result",
        "call_id": "",
        "content": "",
        "name": None,
        "is_error": False,
        "metadata": {},
    },
    "file": {
        "type": "file",
        "media_type": "",
        "data": None,
        "url": None,
        "filename": None,
        "metadata": {},
    },
    "hook": {"type": "hook", "name": "", "state": {}, "metadata": {}},
}


def to_floor_dicts(spec: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same data as plain dicts, in the exact shape (and field order) threadline writes.

    File bytes stay ``bytes`` (the floors encode them to base64, as ``dump_json`` must).
    """
    out = []
    for m in spec:
        parts = [{**_PART_DEFAULTS[p["type"]], **p} for p in m["parts"]]
        out.append(
            {"id": m["id"], "role": m["role"], "parts": parts, "created_at": None, "metadata": {}}
        )
    return out
