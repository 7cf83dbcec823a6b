"""ThreadlineChatMessageHistory inside LangChain's own runner, ``RunnableWithMessageHistory``:
two tool rounds send each result once, and a crash between a call and its result resumes
both ways (running the calls again, or a new turn that answers them as interrupted). The
model is a recorder that refuses what a provider refuses (a request ``check_messages`` finds
a defect in, as a 400 would)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support import REQUIRE_ALL

if not REQUIRE_ALL:  # under THREADLINE_REQUIRE_ALL=1 a missing package fails the collection
    pytest.importorskip("langchain_core")

from langchain_core._api.deprecation import LangChainDeprecationWarning
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.messages import BaseMessage
from langchain_core.messages import HumanMessage
from langchain_core.messages import ToolMessage
from langchain_core.outputs import ChatGeneration
from langchain_core.outputs import ChatResult
from langchain_core.runnables.history import RunnableWithMessageHistory
from langchain_core.tools import tool
from pydantic import Field

from threadline import MemoryStore
from threadline import check_messages
from threadline import prepare_messages
from threadline.integrity import MISSING_RESULT_TEXT
from threadline.integrity import Pending
from threadline.interop.langchain import ThreadlineChatMessageHistory
from threadline.interop.langchain import from_langchain
from threadline.interop.langchain import to_langchain
from threadline.stores import AsyncMemoryStore
from threadline.stores import AsyncStore
from threadline.stores import Store

CONFIG: Any = {"configurable": {"session_id": "s1"}}


class Recorder(BaseChatModel):
    """Records each request and answers from ``replies``; refuses an invalid request."""

    replies: list[AIMessage]
    seen: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "recorder"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        report = check_messages(from_langchain(messages))
        if not report.ok:  # what every provider answers with a 400
            raise ValueError(f"400 Bad Request: {report}")
        return ChatResult(generations=[ChatGeneration(message=self.replies.pop(0))])


@tool
def weather(city: str) -> str:
    """The weather in a city."""
    return {"Oslo": "rain", "Rome": "sun"}.get(city, "fog")


def calls(*cities: str, id: str) -> AIMessage:
    wanted = [{"name": "weather", "args": {"city": city}, "id": f"{id}-{city}"} for city in cities]
    return AIMessage("", id=id, tool_calls=wanted)


def runner(
    model: Recorder, store: Store | AsyncStore, pending: Pending = "keep"
) -> RunnableWithMessageHistory:
    # Deprecated in langchain-core 1.3.3 (LangGraph persistence instead): it says so each time.
    with pytest.warns(LangChainDeprecationWarning, match="RunnableWithMessageHistory"):
        return RunnableWithMessageHistory(
            model,
            lambda session_id: ThreadlineChatMessageHistory(store, session_id, pending=pending),
        )


def run_tools(message: BaseMessage) -> list[BaseMessage]:
    assert isinstance(message, AIMessage)
    return [weather.invoke(call) for call in message.tool_calls]


def results(request: list[BaseMessage]) -> Iterator[tuple[str, str]]:
    for message in request:
        if isinstance(message, ToolMessage):
            yield message.tool_call_id, str(message.content)


def bare(messages: list[BaseMessage]) -> list[BaseMessage]:
    """``messages`` without ids (a tool's ToolMessage has none; the store gives it one)."""
    return [message.model_copy(update={"id": None}) for message in messages]


def assert_each_result_once(model: Recorder) -> None:
    for request in model.seen:
        ids = [call_id for call_id, _ in results(request)]
        assert len(ids) == len(set(ids)), ids
        assert MISSING_RESULT_TEXT not in [content for _, content in results(request)]


# ---------------------------------------------------------------------------------------------


def test_two_tool_rounds_send_each_result_once() -> None:
    store = MemoryStore()
    model = Recorder(
        replies=[calls("Oslo", "Rome", id="a1"), calls("Paris", id="a2"), AIMessage("Done.")]
    )
    chain = runner(model, store)
    reply = chain.invoke([HumanMessage("Weather in Oslo, Rome, then Paris?", id="h1")], CONFIG)
    reply = chain.invoke(run_tools(reply), CONFIG)  # round 1: two results as the input
    reply = chain.invoke(run_tools(reply), CONFIG)  # round 2
    assert reply.content == "Done."
    assert len(model.seen) == 3
    assert_each_result_once(model)
    assert list(results(model.seen[1])) == [("a1-Oslo", "rain"), ("a1-Rome", "sun")]
    assert list(results(model.seen[2]))[-1] == ("a2-Paris", "fog")
    stored = store.load("s1")
    assert check_messages(stored).ok
    assert [m.role for m in stored] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert bare(to_langchain(stored)[:-1]) == bare(
        model.seen[2]
    )  # stored is what the model was sent


def test_two_tool_rounds_over_an_async_store() -> None:
    async def run() -> tuple[Recorder, AsyncMemoryStore]:
        store = AsyncMemoryStore()
        model = Recorder(replies=[calls("Oslo", id="a1"), calls("Rome", id="a2"), AIMessage("ok")])
        chain = runner(model, store)
        reply = await chain.ainvoke([HumanMessage("Oslo, then Rome?", id="h1")], CONFIG)
        reply = await chain.ainvoke(run_tools(reply), CONFIG)
        await chain.ainvoke(run_tools(reply), CONFIG)
        return model, store

    model, store = asyncio.run(run())
    assert len(model.seen) == 3
    assert_each_result_once(model)
    stored = asyncio.run(store.load("s1"))
    assert check_messages(stored).ok
    assert len(stored) == 6


def test_answering_pending_calls_on_every_read_sends_results_twice() -> None:
    # Why reads keep pending calls: the old behaviour (pending="answer" on each read) sends the
    # model a fake "interrupted" result next to the real one, which a provider refuses.
    store = MemoryStore()
    model = Recorder(replies=[calls("Oslo", id="a1"), AIMessage("unused")])
    chain = runner(model, store, pending="answer")
    reply = chain.invoke([HumanMessage("Oslo?", id="h1")], CONFIG)
    with pytest.raises(ValueError, match="duplicate-tool-result"):
        chain.invoke(run_tools(reply), CONFIG)
    assert [content for _, content in results(model.seen[1])] == [MISSING_RESULT_TEXT, "rain"]


# ---------------------------------------------------------------------------------------------
# A crash between a call and its result


def crashed() -> MemoryStore:
    """A conversation whose process died while its two tools ran: the calls are stored alone."""
    store = MemoryStore()
    model = Recorder(replies=[calls("Oslo", "Rome", id="a1")])
    runner(model, store).invoke([HumanMessage("Oslo and Rome?", id="h1")], CONFIG)
    assert [m.role for m in store.load("s1")] == ["user", "assistant"]
    return store


def test_resume_by_running_the_pending_calls_again() -> None:
    store = crashed()
    history = ThreadlineChatMessageHistory(store, "s1")
    pending = history.pending_calls()
    assert [call["id"] for call in pending] == ["a1-Oslo", "a1-Rome"]
    model = Recorder(replies=[AIMessage("Rain in Oslo, sun in Rome.")])
    reply = runner(model, store).invoke([weather.invoke(call) for call in pending], CONFIG)
    assert reply.content == "Rain in Oslo, sun in Rome."
    assert_each_result_once(model)
    assert list(results(model.seen[0])) == [("a1-Oslo", "rain"), ("a1-Rome", "sun")]
    assert check_messages(store.load("s1")).ok
    assert history.pending_calls() == []


def test_resume_with_a_new_turn_answers_the_calls_as_interrupted() -> None:
    store = crashed()
    # Without telling the history, the new turn's request still holds the dangling calls:
    # the provider refuses it and nothing is written.
    model = Recorder(replies=[AIMessage("unused")])
    with pytest.raises(ValueError, match="missing-tool-result"):
        runner(model, store).invoke([HumanMessage("Never mind. Hi!", id="h2")], CONFIG)
    assert len(store.load("s1")) == 2
    # The application knows it resumes after a crash and does not run the calls again: this
    # turn's history answers them (pending="answer"), and the write stores that answer.
    model = Recorder(replies=[AIMessage("Hi! The weather lookup was interrupted.", id="a2")])
    runner(model, store, pending="answer").invoke(
        [HumanMessage("Never mind. Hi!", id="h2")], CONFIG
    )
    sent = model.seen[0]
    assert [content for _, content in results(sent)] == [MISSING_RESULT_TEXT] * 2
    stored = store.load("s1")
    assert check_messages(stored).ok
    assert stored[2].id == "a1:results"
    assert to_langchain(stored) == [
        *sent,
        AIMessage("Hi! The weather lookup was interrupted.", id="a2"),
    ]
    assert stored == prepare_messages(stored, "strict")
    # ...and the next turn runs with the default again
    model = Recorder(replies=[AIMessage("Bye.")])
    runner(model, store).invoke([HumanMessage("Bye.", id="h3")], CONFIG)
    assert model.seen[0] == [*to_langchain(stored), HumanMessage("Bye.", id="h3")]


def test_the_deprecations_the_docs_state() -> None:
    # langchain-core 1.8.3: BaseChatMessageHistory and InMemoryChatMessageHistory are marked
    # deprecated since 1.6.4, RunnableWithMessageHistory since 1.3.3 (removal in 2.0.0).
    from langchain_core.chat_history import BaseChatMessageHistory
    from langchain_core.chat_history import InMemoryChatMessageHistory

    assert (BaseChatMessageHistory.__doc__ or "").startswith('!!! deprecated "1.6.4')
    with pytest.warns(LangChainDeprecationWarning, match="deprecated in LangChain 1.6.4"):
        InMemoryChatMessageHistory()
    with pytest.warns(LangChainDeprecationWarning, match="Use LangGraph's built-in persistence"):
        RunnableWithMessageHistory(Recorder(replies=[]), lambda _: InMemoryChatMessageHistory())
    ThreadlineChatMessageHistory(MemoryStore(), "c")  # a subclass: no warning (they are errors)
