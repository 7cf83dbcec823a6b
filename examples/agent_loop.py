"""A scripted agent loop with no network: the job threadline exists for.

A fake model answers a travel question by thinking, calling two tools in parallel, reading their
results and replying. The conversation lives in a ``threadline.History`` bound to the embedded
default store, ``SQLiteStore(path)``, with a printer subscribed to it.

The first run of the loop happens in a child process that is killed with SIGKILL in the middle
of the tool calls, the way a deploy or an out-of-memory kill ends a real agent. The parent then
resumes from the store: the history ends in an assistant turn whose calls have no results, which
every provider would refuse with a 400. ``history.pending_calls()`` names those calls and
``messages_for_model()`` (``prepare_messages``) would answer them as interrupted; both tools are
safe to repeat, so ``run_tool_calls(..., retry_safe_only=True)`` runs them again instead, the
loop finishes, and the payloads for OpenAI Chat and Anthropic are
printed, with the tools (built by ``tool_from_function``) in each provider's own shape. Last,
the whole history round-trips through the neutral JSON format.

Run it with ``python examples/agent_loop.py``. The database is ``threadline.db`` in a temporary
directory that is removed at the end, so nothing is left behind.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from typing import Any

import threadline as tl

# -- the tools the agent may call ---------------------------------------------------------------


def get_weather(city: str) -> str:
    """Get today's weather in a city.

    Args:
        city: The city, in English.
    """
    return {"Lisbon": "22°C, sunny", "Oslo": "4°C, rain"}.get(city, "unknown")


def get_flights(origin: str, destination: str) -> str:
    """Find the cheapest flight between two cities.

    Args:
        origin: The city to fly from.
        destination: The city to fly to.
    """
    return json.dumps({"from": origin, "to": destination, "cheapest": "EUR 89", "stops": 0})


# One definition per tool, in no provider's format: the name, the description and a JSON Schema
# of the arguments come from the function's signature and docstring. encode(tools=...) writes
# them in each provider's own shape.
# Both only read, so they are safe to run again after a crash (retry_safe=True).
TOOLS = [
    tl.tool_from_function(get_weather, retry_safe=True),
    tl.tool_from_function(get_flights, retry_safe=True),
]


# -- a fake model: decides from the history what to do next ------------------------------------


def fake_model(history: Sequence[tl.Message]) -> tl.Message:
    """Stands in for a provider call: reasoning plus tool calls first, then an answer."""
    last = history[-1]
    if last.role == "user":
        return tl.assistant_message(
            tl.reasoning_part(
                "The user wants weather and flights; both tools can run at once.",
                signature="sig-3f9a",
                provider="anthropic",
                model="fake-model-1",
            ),
            "Let me check the weather and flights.",
            tl.tool_call_part("call_weather", "get_weather", {"city": "Lisbon"}),
            tl.tool_call_part(
                "call_flights", "get_flights", '{"origin": "Oslo", "destination": "Lisbon"}'
            ),
            metadata={"usage": {"input_tokens": 42, "output_tokens": 31}},
        )
    results = {r.call_id: r.text for m in history if m.role == "tool" for r in m.tool_results}
    flights = json.loads(results["call_flights"])
    return tl.assistant_message(
        f"Lisbon is {results['call_weather']} and the cheapest direct flight from Oslo is "
        f"{flights['cheapest']}.",
        metadata={"usage": {"input_tokens": 97, "output_tokens": 24}},
    )


# -- the loop ----------------------------------------------------------------------------------


def describe(part: Any) -> str:
    if isinstance(part, tl.TextPart):
        return part.text
    if isinstance(part, tl.ReasoningPart):
        return f"(thinking) {part.text}"
    if isinstance(part, tl.ToolCallPart):
        return f"-> {part.name}({json.dumps(dict(part.arguments))})  [{part.id}]"
    if isinstance(part, tl.ToolResultPart):
        flag = " (error)" if part.is_error else ""
        return f"<- {part.call_id}{flag}: {part.text}"
    if isinstance(part, tl.HookPart):
        return f"[hook {part.name}] {json.dumps(dict(part.state))}"
    return repr(part)


def print_messages(messages: Sequence[tl.Message]) -> None:
    for message in messages:
        for index, part in enumerate(message.parts):
            label = f"{message.role:>9}" if index == 0 else " " * 9
            print(f"{label} | {describe(part)}")


def printer(event: tl.HistoryEvent) -> None:
    """A history listener: prints each message as it is added, whoever adds it."""
    print_messages(event.messages)


CONVERSATION = "travel-demo"
QUESTION = "What's the weather in Lisbon, and how do I fly there from Oslo?"


def crashing_run(database: str) -> None:
    """The first attempt: dies with SIGKILL after the model asked for tools, before any result."""
    counter = itertools.count(1)
    with tl.use_id_factory(lambda: f"msg_{next(counter):04d}"):  # deterministic ids for the demo
        store = tl.SQLiteStore(database)
        history = tl.History([tl.system_message("You are a concise travel assistant.")])
        history.bind(store, CONVERSATION)  # a new conversation: the system message is written
        print_messages(history.snapshot())
        history.subscribe(printer)
        history.append(tl.user_message(QUESTION))
        reply = fake_model(history.snapshot())
        history.append(reply)
        # A UI asks the user before running tools; the answer is kept as internal state.
        calls = [call.id for call in reply.tool_calls]
        history.append(tl.internal_message(tl.hook_part("approval", {"calls": calls, "ok": True})))
    print("   (the worker is killed while its tools run)", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--crash":
        crashing_run(sys.argv[2])
        return
    with tempfile.TemporaryDirectory() as directory:
        run(os.path.join(directory, "threadline.db"))


def run(database: str) -> None:
    store = tl.SQLiteStore(database)
    print(f"== a worker starts the conversation in {database}")
    worker = subprocess.run([sys.executable, __file__, "--crash", database], check=False)
    assert worker.returncode == -signal.SIGKILL, worker.returncode

    print(f"\n== a new process resumes {CONVERSATION!r} from the store")
    history = tl.History().bind(store, CONVERSATION)
    pending = history.pending_calls()  # the calls of the last turn that have no result
    assert len(pending) == 2, "the crash left calls without results"
    print(f"stored: {len(history)} messages; {len(pending)} tool calls never got a result")

    prepared = history.messages_for_model()  # what a provider would be sent right now
    print("messages_for_model() drops the internal approval and answers the dangling calls:")
    print_messages(prepared[-1:])

    print("\n== the agent re-runs the interrupted tools (both are retry-safe) and finishes")
    history.subscribe(printer)
    # run_tool_calls validates each call's arguments, runs the tools at once and turns any
    # failure into an error result the model can read; one tool message answers them all.
    results = tl.run_tool_calls(pending, TOOLS, retry_safe_only=True)
    assert results is not None
    history.append(results)
    history.append(fake_model(history.snapshot()))

    print("\n== the same history and tools for two providers")
    for provider in ("openai_chat", "anthropic"):
        # tl.encode(history.messages_for_model(), ...), encoding only what changed
        payload = history.encode(provider, tools=TOOLS, tool_choice="auto")
        tools = payload.pop("tools")
        print(f"-- {provider}:")
        print(json.dumps(payload, indent=1, ensure_ascii=False))
        print("tools (one per line):")
        for tool in tools:
            print(" ", json.dumps(tool, ensure_ascii=False))

    reloaded = tl.History().bind(tl.SQLiteStore(database), CONVERSATION)
    assert reloaded.snapshot() == history.snapshot(), "the store holds every message"
    data = history.to_json()
    assert tl.History.from_json(data).snapshot() == history.snapshot()
    print(
        f"\nstored and reloaded: {len(history)} messages; neutral JSON round trip: "
        f"{len(data)} bytes, identical on reload"
    )


if __name__ == "__main__":
    main()
