"""The 30-second tour of threadline, as a script: no network, no API key.

An agent asked a weather tool for Paris and crashed before the tool returned. threadline keeps
the conversation typed, answers the dangling call before the next model request (instead of
a 400 from the provider), writes the same history for Anthropic and OpenAI, reads the reply
back, and stores the whole thing as JSON that round-trips exactly.

Run it with ``python examples/quickstart.py``. It leaves ``paris-weather.json`` (the history as
neutral JSON) in the current directory, and its last line is the command that shows it.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import threadline as tl

# 1. A conversation is typed messages, validated per role, in a History.
history = tl.History(
    [
        tl.system_message("You are a weather assistant.", id="s1"),
        tl.user_message("Weather in Paris?", id="u1"),
    ]
)

# 2. The model asked for a tool... and the process died before the tool returned.
history.append(
    tl.assistant_message(tl.tool_call_part("call_1", "get_weather", {"city": "Paris"}), id="a1")
)
print("== what is wrong")
print(tl.check_messages(history.snapshot()))

# 3. Before every model call: the history as a model must see it. The dangling call gets an
#    error result (marked as a repair), so the provider does not answer with a 400.
ready = history.messages_for_model()
synthetic = ready[-1].tool_results[0]
print("\n== repaired for the model call")
print(f"{ready[-1].role}: {synthetic.text!r} (is_error={synthetic.is_error})")

# 4. One history, every provider's wire format.
for provider in ("anthropic", "openai_chat"):
    payload = tl.encode(ready, provider=provider)
    print(f"\n== {provider}")
    print(json.dumps(payload, ensure_ascii=False)[:300] + " ...")

# 5. The provider's reply, back into a typed message.
reply = tl.decode_response(
    {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "The weather service is down; try again soon."}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 61, "output_tokens": 12},
    },
    provider="anthropic",
)
history.extend([ready[-1], reply])
print(f"\n== reply: {reply.text!r}, usage {dict(reply.metadata['usage'])}")

# 6. Persist: neutral JSON round-trips exactly; a SQLite store keeps many conversations.
data = history.to_json()
assert list(tl.History.from_json(data)) == list(history)
with (
    tempfile.TemporaryDirectory() as directory,
    tl.SQLiteStore(Path(directory) / "conversations.db") as store,
):
    store.append("paris-weather", list(history))
    assert store.load("paris-weather") == list(history)
    print(f"\n== stored {len(history)} messages; {len(data)} bytes of JSON")

# 7. The JSON is also what the command line reads: this file is left for the reader to open.
saved = Path("paris-weather.json")
saved.write_bytes(data)
print(f"\n== wrote {saved}; look at it from a terminal:")
print(f"threadline show {saved}")
