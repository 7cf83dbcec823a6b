"""Two worker processes sharing one conversation through Redis.

A web service runs many workers; any of them may handle the next step of a conversation, so
the conversation lives in Redis rather than in one worker's memory. Here the main process
takes a user's question and the assistant's two tool calls; two worker processes each run one
tool at the same moment and append their result (an internal progress note and the tool's
answer, as one batch); the main process then loads the conversation and answers. Every
worker's batch lands whole, whichever finishes first.

It needs a Redis server: ``THREADLINE_REDIS_URL`` (default ``redis://127.0.0.1:6379/0``). Every
key it writes is under a fresh prefix and deleted at the end. Without a server it says so and
exits 0, unless ``THREADLINE_REQUIRE_ALL=1`` (as in CI), where a missing server is a failure.

Run it with ``python examples/redis_store.py``.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

import threadline as tl

URL = os.environ.get("THREADLINE_REDIS_URL", "redis://127.0.0.1:6379/0")
CONVERSATION = "trip-planning-7"

TOOLS: dict[str, Callable[..., str]] = {
    "get_weather": lambda city: {"Lisbon": "22°C, sunny", "Oslo": "4°C, rain"}[city],
    "get_flights": lambda origin, destination: f"{origin} -> {destination}: EUR 89, direct",
}


def open_store(prefix: str) -> Any:
    from threadline.stores import RedisStore  # needs the extra threadline[redis]

    return RedisStore(URL, prefix=prefix)


def worker(prefix: str, call_id: str, start: Any) -> None:
    """One worker process: run one tool call found in the shared conversation."""
    with open_store(prefix) as store:
        start.wait(60)  # both workers go at once
        conversation = store.load(CONVERSATION)
        call = next(c for m in conversation for c in m.tool_calls if c.id == call_id)
        time.sleep(0.05 if call.name == "get_weather" else 0.0)  # the flights tool is quicker
        output = TOOLS[call.name](**call.arguments)
        store.append(
            CONVERSATION,
            [
                tl.internal_message(
                    tl.hook_part("progress", {"worker": os.getpid(), "call": call_id})
                ),
                tl.tool_message(tl.tool_result_part(call_id, output, name=call.name)),
            ],
        )
        print(f"worker {os.getpid()}: ran {call.name} and appended its result")


def main() -> int:
    prefix = f"threadline-example:{uuid.uuid4().hex}:"
    try:
        store = open_store(prefix)
        store.list_conversations()  # connects: fails here when no server is running
    except ImportError as error:
        return skip(str(error))
    except tl.StoreError as error:
        return skip(f"no Redis server at {URL} (set THREADLINE_REDIS_URL): {error.__cause__}")

    with store:
        store.append(
            CONVERSATION,
            [
                tl.system_message("You are a concise travel assistant."),
                tl.user_message("Weather in Lisbon, and a flight there from Oslo?"),
                tl.assistant_message(
                    tl.tool_call_part("call_weather", "get_weather", {"city": "Lisbon"}),
                    tl.tool_call_part(
                        "call_flights", "get_flights", {"origin": "Oslo", "destination": "Lisbon"}
                    ),
                ),
            ],
        )
        print(f"main: stored the question and two tool calls in {CONVERSATION!r}")

        context = multiprocessing.get_context("spawn")
        start = context.Event()
        workers = [
            context.Process(target=worker, args=(prefix, call_id, start))
            for call_id in ("call_weather", "call_flights")
        ]
        for process in workers:
            process.start()
        start.set()
        for process in workers:
            process.join(120)
        if [process.exitcode for process in workers] != [0, 0]:
            print("a worker failed", file=sys.stderr)
            return 1

        conversation = store.load(CONVERSATION)
        results = {r.call_id: r.text for m in conversation for r in m.tool_results}
        store.append(
            CONVERSATION,
            [
                tl.assistant_message(
                    f"Lisbon: {results['call_weather']}. Flights: {results['call_flights']}."
                )
            ],
        )

        print(f"\nmain: the shared conversation, as any worker would load it from {URL}:")
        for message in store.load(CONVERSATION):
            print(f"  {message.role:>9} | {_describe(message)}")
        batches = [m.role for m in conversation[3:]]
        assert batches == ["internal", "tool", "internal", "tool"], "a batch was split"
        print(f"\nconversations under this prefix: {store.list_conversations()}")

        store.delete(CONVERSATION)  # leave nothing behind in the server
        assert store.list_conversations() == []
        print("deleted the example's conversation")
    return 0


def skip(reason: str) -> int:
    """Say why the example cannot run; a failure only when everything is required (CI)."""
    print(f"This example needs Redis: {reason}")
    if os.environ.get("THREADLINE_REQUIRE_ALL") == "1":
        print("THREADLINE_REQUIRE_ALL=1, so that is a failure")
        return 1
    print("Skipped.")
    return 0


def _describe(message: tl.Message) -> str:
    if message.tool_calls:
        return ", ".join(f"-> {c.name}({dict(c.arguments)})" for c in message.tool_calls)
    if message.tool_results:
        return ", ".join(f"<- {r.name}: {r.text}" for r in message.tool_results)
    hooks = [p for p in message.parts if isinstance(p, tl.HookPart)]
    if hooks:
        return f"[{hooks[0].name}] {dict(hooks[0].state)}"
    return message.text


if __name__ == "__main__":
    sys.exit(main())
