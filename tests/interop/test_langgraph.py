"""The LangGraph recipe of docs/interop/langchain.md, run with a model that refuses what a
provider refuses: a ``StateGraph`` over ``add_messages`` state, with a model node and a
``ToolNode``, persisting each node's messages to a threadline store through
``from_langchain`` and reading them back through ``to_langchain``. Two tool rounds send each
result once; a crash between a call and its result resumes by running the calls again or by a
new turn that answers them as interrupted."""

from __future__ import annotations

from typing import Annotated
from typing import cast

import pytest

from tests.support import REQUIRE_ALL

if not REQUIRE_ALL:  # under THREADLINE_REQUIRE_ALL=1 a missing package fails the collection
    pytest.importorskip("langchain_core")
    pytest.importorskip("langgraph")

from langchain_core.messages import AIMessage
from langchain_core.messages import AnyMessage
from langchain_core.messages import BaseMessage
from langchain_core.messages import HumanMessage
from langgraph.graph import END
from langgraph.graph import START
from langgraph.graph import StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode
from typing_extensions import TypedDict

from tests.interop.test_langchain_runners import Recorder
from tests.interop.test_langchain_runners import assert_each_result_once
from tests.interop.test_langchain_runners import calls
from tests.interop.test_langchain_runners import results
from tests.interop.test_langchain_runners import weather
from threadline import MemoryStore
from threadline import check_messages
from threadline import prepare_messages
from threadline.integrity import MISSING_RESULT_TEXT
from threadline.interop.langchain import from_langchain
from threadline.interop.langchain import to_langchain


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def graph(model: Recorder) -> CompiledStateGraph[State, None, State, State]:
    def agent(state: State) -> State:
        return {"messages": [model.invoke(state["messages"])]}

    def calls_left(state: State) -> bool:
        last = state["messages"][-1]
        return isinstance(last, AIMessage) and bool(last.tool_calls)

    builder = StateGraph(State)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([weather]))
    # Resuming with pending calls starts at the tools; a new turn starts at the model.
    builder.add_conditional_edges(START, lambda s: "tools" if calls_left(s) else "agent")
    builder.add_conditional_edges("agent", lambda s: "tools" if calls_left(s) else END)
    builder.add_edge("tools", "agent")
    return builder.compile()


def run(
    app: CompiledStateGraph[State, None, State, State],
    store: MemoryStore,
    *new: BaseMessage,
    crash_after: str | None = None,
) -> None:
    """The recipe's turn: write the input, read with pending calls kept, write each node's
    messages as it finishes (stopping after the node ``crash_after``, as a crash would)."""
    store.append("c", from_langchain(list(new)))
    history = prepare_messages(store.load("c"), pending="keep")
    state: State = {"messages": cast("list[AnyMessage]", to_langchain(history))}
    for update in app.stream(state, stream_mode="updates"):
        for node, delta in update.items():
            store.append("c", from_langchain(delta["messages"]))
            if node == crash_after:
                return


def test_two_tool_rounds_send_each_result_once() -> None:
    store = MemoryStore()
    model = Recorder(
        replies=[calls("Oslo", "Rome", id="a1"), calls("Paris", id="a2"), AIMessage("Done.")]
    )
    run(graph(model), store, HumanMessage("Oslo, Rome, then Paris?", id="h1"))
    assert len(model.seen) == 3
    assert_each_result_once(model)
    assert list(results(model.seen[2])) == [
        ("a1-Oslo", "rain"),
        ("a1-Rome", "sun"),
        ("a2-Paris", "fog"),
    ]
    stored = store.load("c")
    assert check_messages(stored).ok
    assert [m.role for m in stored] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]


def crashed() -> MemoryStore:
    store = MemoryStore()
    model = Recorder(replies=[calls("Oslo", "Rome", id="a1")])
    run(graph(model), store, HumanMessage("Oslo and Rome?", id="h1"), crash_after="agent")
    assert [m.role for m in store.load("c")] == ["user", "assistant"]
    return store


def test_resume_by_running_the_pending_calls_again() -> None:
    store = crashed()
    model = Recorder(replies=[AIMessage("Rain in Oslo, sun in Rome.")])
    run(graph(model), store)  # no new message: the graph starts at the tools
    assert len(model.seen) == 1
    assert_each_result_once(model)
    assert list(results(model.seen[0])) == [("a1-Oslo", "rain"), ("a1-Rome", "sun")]
    assert check_messages(store.load("c")).ok


def test_resume_with_a_new_turn_answers_the_calls_as_interrupted() -> None:
    store = crashed()
    model = Recorder(replies=[AIMessage("Hi!")])
    run(graph(model), store, HumanMessage("Never mind. Hi!", id="h2"))
    (sent,) = model.seen
    assert [content for _, content in results(sent)] == [MISSING_RESULT_TEXT] * 2
    assert [m.type for m in sent] == ["human", "ai", "tool", "tool", "human"]
    stored = store.load("c")  # the calls stay dangling in the store, answered on each read
    assert [m.role for m in stored] == ["user", "assistant", "user", "assistant"]
    assert check_messages(stored).codes == ("missing-tool-result", "missing-tool-result")
    assert to_langchain(prepare_messages(stored))[:-1] == sent
