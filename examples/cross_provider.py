"""One conversation, three providers: Anthropic, then OpenAI Responses, then Gemini. No network.

The conversation starts on Claude, with extended thinking and two tool calls (the response
below is what the Messages API returns). It then continues on OpenAI's Responses API, whose
reply brings its own reasoning item, and finally goes to Gemini. Each hop prints the request
fragment ``encode`` wrote (long opaque strings shortened) and says what happened to the
reasoning: opaque state (Anthropic's signature, OpenAI's encrypted reasoning and item ids) is
only ever sent back to the provider and model that produced it; ``reasoning="text"`` keeps
the readable part as plain text instead.

Run it with ``python examples/cross_provider.py``.
"""

from __future__ import annotations

import json
from typing import Any

import threadline as tl
from threadline.codecs import decode_response
from threadline.codecs import encode

# -- 1. The conversation starts on Claude -------------------------------------------------------

CLAUDE_RESPONSE: dict[str, Any] = {  # what client.messages.create(...) returned, as JSON
    "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5-20250929",
    "content": [
        {
            "type": "thinking",
            "thinking": "The user wants the weather in Rome and a flight there tomorrow. "
            "Both lookups are independent, so I can call the two tools at once.",
            "signature": "EqQBCkYIBxgCKkBkGoN0xS8Ge2iNIaDsv3VTGs1ZnqVPbQzLo0dJ+5CgoxjBb/"
            "XtAk8ZKC3Jt6gkEaMqqX0u1vVKmU6OBfOdfqBQEgxdyWLE4TcxVEbHT1oaDPjDmuiJSvvlx0wAoSIw",
        },
        {"type": "text", "text": "I'll check the weather and the flights."},
        {
            "type": "tool_use",
            "id": "toolu_01A09q90qw90lq917835lq9",
            "name": "get_weather",
            "input": {"city": "Rome"},
        },
        {
            "type": "tool_use",
            "id": "toolu_01BnTCYmAS3gyJEDcM2B9rvD",
            "name": "search_flights",
            "input": {"from": "CDG", "to": "FCO", "date": "2026-03-14"},
        },
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 512, "output_tokens": 178},
}

history = [
    tl.system_message("You are a travel assistant. Be brief."),
    tl.user_message("Weather in Rome tomorrow, and can I fly there from Paris?"),
    decode_response(CLAUDE_RESPONSE, provider="anthropic"),
    tl.tool_message(
        tl.tool_result_part("toolu_01A09q90qw90lq917835lq9", "21°C, sunny"),
        tl.tool_result_part(
            "toolu_01BnTCYmAS3gyJEDcM2B9rvD", "flight search is down", is_error=True
        ),
    ),
]


def shortened(value: Any) -> Any:
    """``value`` with long strings (signatures, encrypted reasoning) and bytes cut short."""
    if isinstance(value, dict):
        return {key: shortened(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shortened(item) for item in value]
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    if isinstance(value, str) and len(value) > 60:
        return f"{value[:40]}... ({len(value)} characters)"
    return value


def show(title: str, payload: dict[str, Any]) -> None:
    print(f"\n=== {title}")
    print(json.dumps(shortened(payload), indent=2, ensure_ascii=False))


# Back to Claude itself (same model): the thinking goes back in place, signature and all.
claude = encode(history, provider="anthropic", model="claude-sonnet-4-5-20250929")
show("Anthropic Messages, the same model", claude)
thinking = [
    block
    for message in claude["messages"]
    if isinstance(message["content"], list)
    for block in message["content"]
    if block["type"] == "thinking"
]
assert thinking[0]["signature"] == CLAUDE_RESPONSE["content"][0]["signature"]
print(f"-> reasoning: {len(thinking)} thinking block goes back in place, with its signature")

# -- 2. The conversation moves to OpenAI Responses ----------------------------------------------

responses = encode(history, provider="openai_responses", model="gpt-5-2025-08-07")
show("OpenAI Responses (from Anthropic)", responses)
assert "EqQBCkYI" not in json.dumps(responses)
print(
    "-> reasoning: Claude's thinking is left out (no other provider can verify Anthropic's "
    "signature); the calls and both results, the failed one marked, go on"
)
as_text = encode(history, provider="openai_responses", reasoning="text")
print(
    "-> with reasoning='text', the thinking goes as assistant text instead:",
    repr(as_text["input"][2]["content"][:48] + "..."),
)

GPT_RESPONSE = {  # what client.responses.create(...) returned next
    "id": "resp_68b9a1c2d3e4f5",
    "object": "response",
    "created_at": 1_773_400_000,
    "model": "gpt-5-2025-08-07",
    "status": "completed",
    "output": [
        {
            "type": "reasoning",
            "id": "rs_68b9a1c3e4f5a6b7",
            "summary": [{"type": "summary_text", "text": "Retry the flight search once."}],
            "encrypted_content": "gAAAAABouZoK4r1bX2mN8PqRsT7uV9wXyZ0aB3cD5eF7gH9iJ1kL3mN5"
            "oP7qR9sT1uV3wX5yZ7aB9cD1eF3gH5iJ7kL9mN1oP3qR5sT7uV9w==",
        },
        {
            "type": "function_call",
            "id": "fc_68b9a1c4f5a6b7c8",
            "call_id": "call_Xq2bL7nM4pR8sT1v",
            "name": "search_flights",
            "arguments": '{"from":"CDG","to":"FCO","date":"2026-03-14"}',
            "status": "completed",
        },
    ],
    "usage": {"input_tokens": 640, "output_tokens": 96, "total_tokens": 736},
}

history += [
    decode_response(GPT_RESPONSE, provider="openai_responses"),
    tl.tool_message(tl.tool_result_part("call_Xq2bL7nM4pR8sT1v", "AZ 319, 07:10, EUR 142")),
]
again = encode(history, provider="openai_responses", model="gpt-5-2025-08-07")
items = [(item["type"], item.get("id")) for item in again["input"]]
assert items[-3:] == [
    ("reasoning", "rs_68b9a1c3e4f5a6b7"),
    ("function_call", "fc_68b9a1c4f5a6b7c8"),
    ("function_call_output", None),
]
print(
    "-> the next OpenAI request sends GPT's own reasoning item back, encrypted, right before "
    "the call it produced:",
    items[-3:-1],
)

# -- 3. The conversation moves to Gemini --------------------------------------------------------

gemini = encode(history, provider="gemini", model="gemini-3-pro-preview")
show("Gemini generateContent (from Anthropic, then OpenAI)", gemini)
dumped = json.dumps(gemini)
for opaque in ("EqQBCkYI", "gAAAAAB", "rs_68b9", "fc_68b9"):  # signature, reasoning, item ids
    assert opaque not in dumped
signatures = [
    part["thoughtSignature"]
    for turn in gemini["contents"]
    for part in turn["parts"]
    if "thoughtSignature" in part
]
print(
    "-> reasoning: neither Claude's thinking nor GPT's encrypted reasoning (nor its item ids) "
    "is sent; each call turn's first call carries the signature Gemini documents for calls "
    "it did not make:",
    signatures,
)
errors = [
    part["functionResponse"]["response"]
    for turn in gemini["contents"]
    for part in turn["parts"]
    if "functionResponse" in part and "error" in part["functionResponse"]["response"]
]
print("-> the failed tool result is still a failure on Gemini:", errors)
