"""A scripted agent loop with no network: the job threadline exists for.

A fake model answers a travel question by thinking, calling two tools in parallel, reading
their results and replying. The loop keeps the conversation in a ``threadline.History`` with a
printer subscribed to it (so the transcript appears as the loop runs), records a UI hook (an
approval the user gave), and checks that the whole history survives the neutral JSON format
byte for byte.

Run it with ``python examples/agent_loop.py``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from typing import Any

import threadline as tl

# -- the tools the agent may call ---------------------------------------------------------------


def get_weather(city: str) -> str:
    return {"Lisbon": "22°C, sunny", "Oslo": "4°C, rain"}.get(city, "unknown")


def get_flights(origin: str, destination: str) -> str:
    return json.dumps({"from": origin, "to": destination, "cheapest": "EUR 89", "stops": 0})


TOOLS: dict[str, Callable[..., str]] = {"get_weather": get_weather, "get_flights": get_flights}


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


def run_tools(message: tl.Message) -> tl.Message:
    """Run every call of one assistant turn; one tool message answers them all."""
    results = []
    for call in message.tool_calls:
        try:
            output = TOOLS[call.name](**call.arguments)
            results.append(tl.tool_result_part(call.id, output, name=call.name))
        except Exception as error:  # a failing tool becomes an error result the model can read
            results.append(tl.tool_result_part(call.id, str(error), name=call.name, is_error=True))
    return tl.tool_message(*results)


# -- the loop ----------------------------------------------------------------------------------


def agent_loop(history: tl.History, question: str, max_steps: int = 5) -> None:
    history.append(tl.user_message(question))
    for _ in range(max_steps):
        seen = history.snapshot()  # O(1); the model is shown exactly this
        reply = fake_model(seen)
        if history.version != seen.version:
            continue  # someone changed the history while the model ran: ask again
        history.append(reply)
        if not reply.tool_calls:
            return
        # A UI would ask the user before running tools; the answer is kept as internal state.
        history.append(
            tl.internal_message(
                tl.hook_part("approval", {"calls": [c.id for c in reply.tool_calls], "ok": True})
            )
        )
        history.append(run_tools(reply))
    raise RuntimeError("the model did not finish")


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


def main() -> None:
    counter = itertools.count(1)
    with tl.use_id_factory(lambda: f"msg_{next(counter):04d}"):  # deterministic ids for the demo
        history = tl.History([tl.system_message("You are a concise travel assistant.")])
        print_messages(history.snapshot())
        history.subscribe(printer)
        agent_loop(history, "What's the weather in Lisbon, and how do I fly there from Oslo?")

    data = history.to_json()
    restored = tl.History.from_json(data)
    assert restored.snapshot() == history.snapshot(), "the JSON format must round-trip exactly"
    print(
        f"\nround trip: {len(history)} messages (version {history.version}), {len(data)} bytes "
        "of JSON, identical on reload"
    )


if __name__ == "__main__":
    main()
