"""``ThreadlineSession`` inside the Agents SDK's own ``Runner`` with a fake ``Model``: tool rounds
send each output once, an approved call in flight is never answered, and a run abandoned or
killed between a call and its output leaves a session the next run continues.

Every input the fake model receives is judged with threadline's own check: decoded with the
Responses codec, it must pass ``check_messages(..., pending="refuse")`` (what a provider
accepts: every call answered exactly once).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support import REQUIRE_ALL
from threadline import Message
from threadline import check_messages
from threadline import decode
from threadline import prepare_messages
from threadline.stores import MemoryStore
from threadline.stores import SQLiteStore

try:
    from agents import Agent
    from agents import ModelResponse
    from agents import RunConfig
    from agents import Runner
    from agents import Usage
    from agents import function_tool
    from agents.exceptions import UserError
    from agents.models.interface import Model
    from agents.testing import ScriptedModel
    from agents.testing import assistant_message as scripted_text
    from agents.testing import function_call as scripted_call
    from openai.types.responses import ResponseFunctionToolCall
    from openai.types.responses import ResponseOutputMessage
    from openai.types.responses import ResponseOutputText
    from openai.types.responses import ResponseReasoningItem
except ImportError:  # pragma: no cover - the test extra installs it
    if REQUIRE_ALL:
        raise
    pytest.skip("openai-agents is not installed (pip install -e .[test])", allow_module_level=True)

from threadline.interop.openai_agents import ThreadlineSession

pytestmark = pytest.mark.requires_sdk

CONFIG = RunConfig(tracing_disabled=True)
INTERRUPTED = "interrupted"  # in the synthetic output repair writes for a crashed call


class FakeModel(Model):
    """Answers with scripted output items; judges and records the input of every call."""

    def __init__(self, outputs: list[list[Any]]) -> None:
        self.outputs = outputs
        self.inputs: list[list[dict[str, Any]]] = []

    async def get_response(
        self,
        system_instructions: str | None,
        input: Any,
        model_settings: Any,
        tools: Any,
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: Any,
    ) -> ModelResponse:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        judged(items)
        self.inputs.append(json.loads(json.dumps(items)))
        return ModelResponse(output=self.outputs.pop(0), usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the tests do not stream")


def judged(items: list[Any]) -> list[Message]:
    """``items`` as a provider sees them: each call answered once, or the test fails."""
    messages = decode(items, provider="openai_responses")
    report = check_messages(messages, pending="refuse")
    assert report.ok, report
    return messages


def call(call_id: str, a: int, b: int) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        type="function_call",
        id=f"fc_{call_id}",
        call_id=call_id,
        name="add",
        arguments=json.dumps({"a": a, "b": b}),
        status="completed",
    )


def said(text: str, item_id: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id=item_id,
        type="message",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
    )


def outputs(items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """``(call_id, output)`` of each function output in ``items``, in order."""
    return [
        (item["call_id"], str(item["output"]))
        for item in items
        if item.get("type") == "function_call_output"
    ]


def calls(items: list[dict[str, Any]]) -> list[str]:
    return [item["call_id"] for item in items if item.get("type") == "function_call"]


@function_tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@function_tool(name_override="add", needs_approval=True)
def add_approved(a: int, b: int) -> int:
    """Add two numbers, once a human approves."""
    return a + b


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, timeout=60))


def test_two_tool_rounds_in_one_run_and_across_two_runs(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    model = FakeModel(
        [
            [call("c1", 1, 2)],
            [call("c2", 3, 4)],  # a second round in the same run
            [said("3 and 7.", "msg_1")],
            [call("c3", 5, 6)],  # the next run: one more round
            [said("11.", "msg_2")],
        ]
    )
    agent = Agent(name="calculator", instructions="Add.", model=model, tools=[add])

    async def both_runs() -> tuple[Any, Any]:
        first = await Runner.run(
            agent, "1 + 2, then 3 + 4?", session=ThreadlineSession(store, "chat"), run_config=CONFIG
        )
        again = ThreadlineSession(store, "chat")  # a new session object: continues from disk
        return first, await Runner.run(agent, "5 + 6?", session=again, run_config=CONFIG)

    first, second = run(both_runs())
    assert (first.final_output, second.final_output) == ("3 and 7.", "11.")
    assert [outputs(seen) for seen in model.inputs] == [
        [],
        [("c1", "3")],
        [("c1", "3"), ("c2", "7")],
        [("c1", "3"), ("c2", "7")],
        [("c1", "3"), ("c2", "7"), ("c3", "11")],
    ]
    assert all(INTERRUPTED not in json.dumps(seen) for seen in model.inputs)
    stored = store.load("chat")
    store.close()
    assert check_messages(stored).ok  # nothing to repair, nothing pending
    assert [m.role for m in stored] == [
        *("user", "assistant", "tool", "assistant", "tool", "assistant"),
        *("user", "assistant", "tool", "assistant"),
    ]


def test_an_approved_call_in_flight_is_never_answered() -> None:
    # The Runner stores the call when it stops for approval; on resume it runs the tool and
    # reads the session's tail (to check its own write) while the call has no output yet.
    store = MemoryStore()
    session = ThreadlineSession(store, "chat")
    seen_while_running: list[list[Any]] = []

    @function_tool(name_override="add", needs_approval=True)
    async def add_watched(a: int, b: int) -> int:
        """Add two numbers, once a human approves."""
        seen_while_running.append(await ThreadlineSession(store, "chat").get_items())
        return a + b

    model = FakeModel([[call("c1", 1, 2)], [said("3.", "msg_1")]])
    agent = Agent(name="calculator", instructions="Add.", model=model, tools=[add_watched])

    async def approve_and_resume() -> Any:
        stopped = await Runner.run(agent, "1 + 2?", session=session, run_config=CONFIG)
        state = stopped.to_state()
        state.approve(stopped.interruptions[0])
        return await Runner.run(agent, state, session=session, run_config=CONFIG)

    assert run(approve_and_resume()).final_output == "3."
    [live] = seen_while_running
    assert calls(live) == ["c1"]
    assert outputs(live) == []  # in flight: kept, not answered as interrupted
    assert outputs(model.inputs[-1]) == [("c1", "3")]
    assert check_messages(store.load("chat")).ok


def test_an_approved_call_in_flight_is_never_answered_in_a_streamed_run() -> None:
    # Runner.run_streamed saves and reads the session at the same points (the SDK's own
    # ScriptedModel streams the scripted items).
    store = MemoryStore()
    session = ThreadlineSession(store, "chat")
    seen_while_running: list[list[Any]] = []

    @function_tool(name_override="add", needs_approval=True)
    async def add_watched(a: int, b: int) -> int:
        """Add two numbers, once a human approves."""
        seen_while_running.append(await ThreadlineSession(store, "chat").get_items())
        return a + b

    model = ScriptedModel(
        [[scripted_call("add", {"a": 1, "b": 2}, call_id="c1")], [scripted_text("3.")]]
    )
    agent = Agent(name="calculator", instructions="Add.", model=model, tools=[add_watched])

    async def approve_and_resume() -> Any:
        streamed = Runner.run_streamed(agent, "1 + 2?", session=session, run_config=CONFIG)
        async for _ in streamed.stream_events():
            pass
        state = streamed.to_state()
        state.approve(streamed.interruptions[0])
        resumed = Runner.run_streamed(agent, state, session=session, run_config=CONFIG)
        async for _ in resumed.stream_events():
            pass
        return resumed

    assert run(approve_and_resume()).final_output == "3."
    model.assert_complete()
    [live] = seen_while_running
    assert (calls(live), outputs(live)) == (["c1"], [])
    inputs = [list(made.input) for made in model.calls]
    for seen in inputs:
        judged(seen)
    assert outputs(json.loads(json.dumps(inputs[-1]))) == [("c1", "3")]
    assert check_messages(store.load("chat")).ok


class LostReplyStore(MemoryStore):
    """Commits the next append, then loses its reply (a connection dropped after the commit)."""

    lose_next = False

    def append(self, *args: Any, **kwargs: Any) -> None:
        super().append(*args, **kwargs)
        if self.lose_next:
            self.lose_next = False
            raise ConnectionError("the reply was lost after the commit")


@pytest.mark.parametrize("pending", ["keep", "answer"])
def test_a_lost_reply_during_an_approved_resume_is_reconciled(pending: Any) -> None:
    # The Runner recovers a write whose reply was lost by comparing the session's tail with what
    # it read before the write. A synthetic output for the call in flight breaks that: the
    # reason pending="keep" is the session's default.
    store = LostReplyStore()
    session = ThreadlineSession(store, "chat", pending=pending)

    @function_tool(name_override="add", needs_approval=True)
    def add_then_lose(a: int, b: int) -> int:
        """Add two numbers, once a human approves."""
        store.lose_next = True  # the write of this output commits, and its reply is lost
        return a + b

    model = FakeModel([[call("c1", 1, 2)], [said("3.", "msg_1")]])
    agent = Agent(name="calculator", instructions="Add.", model=model, tools=[add_then_lose])

    async def resume_twice() -> Any:
        stopped = await Runner.run(agent, "1 + 2?", session=session, run_config=CONFIG)
        state = stopped.to_state()
        state.approve(stopped.interruptions[0])
        with pytest.raises(ConnectionError):
            await Runner.run(agent, state, session=session, run_config=CONFIG)
        return await Runner.run(agent, state, session=session, run_config=CONFIG)

    if pending == "answer":
        with pytest.raises(UserError, match="Cannot reconcile the pending Session write"):
            run(resume_twice())
        return
    assert run(resume_twice()).final_output == "3."
    assert outputs(model.inputs[-1]) == [("c1", "3")]  # the output stored once, sent once
    assert check_messages(store.load("chat")).ok


@pytest.mark.parametrize("pending", ["keep", "answer"])
def test_a_run_abandoned_with_a_call_pending_is_continued(tmp_path: Path, pending: Any) -> None:
    # The Runner stored the call and stopped for approval; the process died with its RunState.
    store = SQLiteStore(tmp_path / "s.db")
    model = FakeModel([[call("c1", 1, 2)], [said("Hello.", "msg_1")], [said("Bye.", "msg_2")]])
    agent = Agent(name="calculator", instructions="Add.", model=model, tools=[add_approved])

    async def abandon_then_continue() -> Any:
        stopped = await Runner.run(
            agent, "1 + 2?", session=ThreadlineSession(store, "chat"), run_config=CONFIG
        )
        assert stopped.interruptions  # and the state is lost
        after_crash = ThreadlineSession(store, "chat", pending=pending)
        await Runner.run(agent, "Hello?", session=after_crash, run_config=CONFIG)
        return await Runner.run(agent, "Bye?", session=after_crash, run_config=CONFIG)

    assert run(abandon_then_continue()).final_output == "Bye."
    _, resumed, later = model.inputs  # each judged: every call answered exactly once
    if pending == "keep":
        assert calls(resumed) == []  # the Runner drops a call without an output itself
    else:  # a session opened knowing no run is live answers it
        assert calls(resumed) == ["c1"]
        [(call_id, text)] = outputs(resumed)
        assert (call_id, INTERRUPTED in text) == ("c1", True)
    # once the conversation moved past it, the call is a crash whatever pending says
    assert calls(later) == ["c1"]
    [(call_id, text)] = outputs(later)
    assert (call_id, INTERRUPTED in text) == ("c1", True)
    stored = store.load("chat")
    store.close()
    assert [m.role for m in stored] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert check_messages(prepare_messages(stored), pending="refuse").ok


def test_call_items_written_before_a_crash_do_not_reach_the_model_unanswered() -> None:
    # Written the way a Runner writes a turn, reasoning and call, and then the process died.
    store = MemoryStore()
    session = ThreadlineSession(store, "chat")
    reasoning = ResponseReasoningItem(id="rs_1", type="reasoning", summary=[])
    items: list[Any] = [
        {"role": "user", "content": "1 + 2?"},
        reasoning.model_dump(exclude_unset=True),
        call("c1", 1, 2).model_dump(exclude_unset=True),
    ]
    run(session.add_items(items))
    model = FakeModel([[call("c2", 3, 4)], [said("7.", "msg_1")]])
    agent = Agent(name="calculator", instructions="Add.", model=model, tools=[add])
    result = run(Runner.run(agent, "3 + 4?", session=session, run_config=CONFIG))
    assert result.final_output == "7."
    assert calls(model.inputs[0]) == []  # dropped by the Runner, with its reasoning
    assert all(item.get("type") != "reasoning" for item in model.inputs[0])
    assert outputs(model.inputs[1]) == [("c2", "7")]
    assert check_messages(prepare_messages(store.load("chat")), pending="refuse").ok


class Died(BaseException):
    """The process dying inside a tool (not an exception the Runner turns into an output)."""


def test_a_tool_that_dies_leaves_no_call_behind() -> None:
    # The Runner stores a turn's calls with their outputs, after the tools ran: a death inside a
    # tool leaves the input only, and the next run starts clean.
    store = MemoryStore()

    @function_tool(name_override="add")
    def add_and_die(a: int, b: int) -> int:
        """Add two numbers."""
        raise Died

    model = FakeModel([[call("c1", 1, 2)], [said("Hello.", "msg_1")]])
    agent = Agent(name="calculator", instructions="Add.", model=model, tools=[add_and_die])
    with pytest.raises(Died):
        run(
            Runner.run(agent, "1 + 2?", session=ThreadlineSession(store, "chat"), run_config=CONFIG)
        )
    assert [m.role for m in store.load("chat")] == ["user"]
    again = ThreadlineSession(store, "chat")
    assert run(Runner.run(agent, "Hello?", session=again, run_config=CONFIG)).final_output == (
        "Hello."
    )
    assert [item.get("role") for item in model.inputs[1]] == ["user", "user"]
