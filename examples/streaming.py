"""Streaming, as a script: no network, no API key.

A recorded Anthropic stream (the SSE ``data`` of each event, as the API sends it) is fed to a
``StreamAssembler``: the text is printed as it arrives, the finished reply is the same message
``decode_response`` gives for the whole response, and it goes into the history. Then the same
stream is cut mid-tool-call, as when a connection drops: ``message()`` refuses it,
``message(partial=True)`` keeps what arrived, and ``prepare_messages`` answers the cut call so
the next request is valid.

Run it with ``python examples/streaming.py``.
"""

from __future__ import annotations

import threadline as tl

EVENTS = [
    {
        "type": "message_start",
        "message": {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": "claude-sonnet-5-5",
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 40, "output_tokens": 1},
        },
    },
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Let "}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "me "}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "check."}},
    {"type": "content_block_stop", "index": 0},
    {
        "type": "content_block_start",
        "index": 1,
        "content_block": {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {}},
    },
    {
        "type": "content_block_delta",
        "index": 1,
        "delta": {"type": "input_json_delta", "partial_json": '{"city": "Pa'},
    },
    {
        "type": "content_block_delta",
        "index": 1,
        "delta": {"type": "input_json_delta", "partial_json": 'ris"}'},
    },
    {"type": "content_block_stop", "index": 1},
    {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        "usage": {"output_tokens": 28},
    },
    {"type": "message_stop"},
]

history = tl.History([tl.user_message("Weather in Paris?", id="u1")])

# 1. Feed the events; print the text as it arrives.
assembler = tl.StreamAssembler("anthropic")
print("assistant: ", end="")
for event in EVENTS:
    for neutral in assembler.feed(event):
        if isinstance(neutral, tl.TextDelta):
            print(neutral.text, end="", flush=True)
        elif isinstance(neutral, tl.PartStart) and neutral.kind == "tool_call":
            print(f"\n  [calling {neutral.name}]", end="")
        elif isinstance(neutral, tl.PartEnd) and isinstance(neutral.part, tl.ToolCallPart):
            print(f" {dict(neutral.part.arguments)}", end="")
        elif isinstance(neutral, tl.Finish):
            print(f"\n  [{neutral.stop_reason}; usage {neutral.usage}]")

# 2. The finished reply goes into the history like any decoded response.
message = assembler.message()
history.append(message)
print(f"stored: {[type(part).__name__ for part in message.parts]}")

# 3. The connection drops inside the tool call's arguments.
cut = tl.StreamAssembler("anthropic")
for event in EVENTS[:8]:
    cut.feed(event)
try:
    cut.message()
except tl.CodecError as error:
    print(f"cut stream refused: {error}")
partial = cut.message(partial=True)
print(
    f"partial: incomplete={partial.metadata['threadline.incomplete']}, "
    f"raw arguments {partial.tool_calls[0].raw_arguments!r}"
)
ready = tl.prepare_messages([tl.user_message("Weather in Paris?"), partial])
print(f"repaired for the next request: roles {[m.role for m in ready]}")
