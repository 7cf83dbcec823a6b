"""threadline.interop.pydantic_ai inside pydantic-ai's own runner: responses as its models build
them convert without a warning, ids are deterministic (a run appended twice is stored once), the
pending calls of a crashed run are kept for pydantic-ai to run or answered as asked, and an
``Agent.iter`` loop persisting each node survives two tool rounds and a crash between a call and
its result. Warnings are errors here, as everywhere (``pyproject.toml``)."""

from __future__ import annotations

import asyncio
import re
import typing
from collections.abc import Iterator
from datetime import datetime
from datetime import timezone
from pathlib import Path
from typing import Any

import pydantic
import pytest

from tests.support import require_module

require_module("pydantic_ai", 'pip install "threadline[pydantic-ai]"')

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai import messages as pai  # noqa: E402
from pydantic_ai.exceptions import UserError  # noqa: E402
from pydantic_ai.messages import ModelMessagesTypeAdapter  # noqa: E402
from pydantic_ai.models.function import AgentInfo  # noqa: E402
from pydantic_ai.models.function import FunctionModel  # noqa: E402
from pydantic_ai.models.test import TestModel  # noqa: E402
from pydantic_ai.usage import RequestUsage  # noqa: E402

import threadline as tl  # noqa: E402
from threadline.integrity import MISSING_RESULT_TEXT  # noqa: E402
from threadline.interop import _pydantic_ai_fields  # noqa: E402
from threadline.interop.pydantic_ai import from_pydantic_ai  # noqa: E402
from threadline.interop.pydantic_ai import to_pydantic_ai  # noqa: E402
from threadline.stores import SQLiteStore  # noqa: E402

ID = re.compile(r"msg_[0-9a-f]{32}")


def returns_in(messages: list[pai.ModelMessage]) -> list[pai.ToolReturnPart]:
    return [
        part
        for message in messages
        if isinstance(message, pai.ModelRequest)
        for part in message.parts
        if isinstance(part, pai.ToolReturnPart)
    ]


class Weather:
    """An agent whose model asks for the weather in Paris, then in Rome, then answers; it
    records what the model saw and which tool calls ran."""

    def __init__(self) -> None:
        self.seen: list[list[pai.ModelMessage]] = []
        self.ran: list[str] = []
        self.agent = Agent(FunctionModel(self.model))

        @self.agent.tool_plain
        def weather(city: str) -> str:
            self.ran.append(city)
            return f"sunny in {city}"

    def model(self, messages: list[pai.ModelMessage], info: AgentInfo) -> pai.ModelResponse:
        self.seen.append(list(messages))
        done = len(returns_in(messages))
        if done < 2:
            call = pai.ToolCallPart("weather", {"city": ["Paris", "Rome"][done]}, f"c{done + 1}")
            thinking = pai.ThinkingPart("Look it up.", signature="sig", provider_name="anthropic")
            return pai.ModelResponse(
                parts=[thinking, call],
                provider_name="anthropic",
                provider_details={"stop_reason": "tool_use"},
                provider_response_id=f"resp_{done}",
                finish_reason="tool_call",
                usage=RequestUsage(input_tokens=10, output_tokens=5),
            )
        return pai.ModelResponse(parts=[pai.TextPart("Sunny in both.")], finish_reason="stop")

    async def turn(
        self,
        store: SQLiteStore,
        prompt: str | None,
        *,
        stop: Any = None,
        history: list[tl.Message] | None = None,
    ) -> pai.ModelResponse | None:
        """One run of ``Agent.iter``, appending the run's new messages after each node; ``stop``
        (a node predicate) ends the process there, as a crash would."""
        stored = store.load("c1") if history is None else history
        after = stored[-1].id if stored else None
        async with self.agent.iter(prompt, message_history=to_pydantic_ai(stored)) as run:
            async for node in run:
                store.append("c1", from_pydantic_ai(run.new_messages(), after=after))
                if stop is not None and stop(node):
                    return None
        assert run.result is not None
        return run.result.response


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    with SQLiteStore(tmp_path / "runs.db") as opened:
        yield opened


def answered_once(messages: list[pai.ModelMessage]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for part in returns_in(messages):
        counts[part.tool_call_id] = counts.get(part.tool_call_id, 0) + 1
    return counts


# -- no warning on what pydantic-ai's models produce -------------------------------------------


def test_real_responses_convert_both_ways_without_a_warning(store: SQLiteStore) -> None:
    # The field validators are cached: build them afresh, as a new process does.
    _pydantic_ai_fields.field_adapter.cache_clear()
    weather = Weather()
    result = asyncio.run(weather.agent.run("Weather?"))
    tested = asyncio.run(Agent(TestModel()).run("Hi"))
    for native in (result.all_messages(), tested.all_messages()):
        converted = from_pydantic_ai(native)
        assert to_pydantic_ai(converted) == native
        assert to_pydantic_ai(from_pydantic_ai(ModelMessagesTypeAdapter.dump_json(native))) == (
            ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(native))
        )
    response = result.all_messages()[1]
    assert isinstance(response, pai.ModelResponse)
    back = from_pydantic_ai([response])[0]
    assert back.metadata["pydantic_ai.provider_details"] == {"stop_reason": "tool_use"}
    assert back.metadata["response_id"] == "resp_0"


def test_a_field_validator_keeps_constraints_and_drops_field_settings() -> None:
    plain = _pydantic_ai_fields._value_type(typing.Annotated[int, pydantic.Field(alias="x")])
    assert plain is int
    bounded = _pydantic_ai_fields._value_type(
        typing.Annotated[int, pydantic.Field(gt=1, validation_alias="y")]
    )
    with pytest.raises(pydantic.ValidationError):
        pydantic.TypeAdapter(bounded).validate_python(0)


# -- deterministic ids ---------------------------------------------------------------------------


def test_ids_are_deterministic_and_differ_for_equal_messages() -> None:
    native: list[Any] = [
        pai.ModelRequest(parts=[pai.UserPromptPart("again", timestamp=pai_time())]),
        pai.ModelResponse(parts=[pai.TextPart("ok")], timestamp=pai_time()),
        pai.ModelRequest(parts=[pai.UserPromptPart("again", timestamp=pai_time())]),
        pai.ModelResponse(parts=[pai.TextPart("ok")], timestamp=pai_time()),
    ]
    first = from_pydantic_ai(native)
    ids = [m.id for m in first]
    assert all(ID.fullmatch(i) for i in ids)
    assert len(set(ids)) == 4  # equal messages, different places
    assert [m.id for m in from_pydantic_ai(native)] == ids
    assert [m.id for m in from_pydantic_ai(ModelMessagesTypeAdapter.dump_json(native))] == ids
    # A longer run keeps the ids of what it held before; new_messages() chained after the last
    # stored id gets the ids all_messages() would give.
    assert [m.id for m in from_pydantic_ai(native[:2])] == ids[:2]
    assert [m.id for m in from_pydantic_ai(native[2:], after=ids[1])] == ids[2:]
    assert [m.id for m in from_pydantic_ai(native[2:])] != ids[2:]


def pai_time() -> datetime:
    return datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


@pytest.mark.parametrize("after", ["", 7, b"msg_1"])
def test_a_bad_after_is_refused_naming_it(after: Any) -> None:
    with pytest.raises(ValueError, match="after="):
        from_pydantic_ai([], after=after)


def test_a_run_appended_twice_is_stored_once(store: SQLiteStore) -> None:
    result = asyncio.run(Weather().agent.run("Weather?"))
    store.append("c1", from_pydantic_ai(result.all_messages()))
    store.append("c1", from_pydantic_ai(result.all_messages()))
    store.append("c1", from_pydantic_ai(result.all_messages_json()))
    stored = store.load("c1")
    assert to_pydantic_ai(stored) == result.all_messages()
    assert [m.role for m in stored] == ["user", *["assistant", "tool"] * 2, "assistant"]


def test_all_messages_after_each_run_never_duplicates(store: SQLiteStore) -> None:
    weather = Weather()
    first = asyncio.run(weather.agent.run("Weather?"))
    store.append("c1", from_pydantic_ai(first.all_messages()))
    history = to_pydantic_ai(store.load("c1"))
    second = asyncio.run(weather.agent.run("And tomorrow?", message_history=history))
    store.append("c1", from_pydantic_ai(second.all_messages()))
    assert to_pydantic_ai(store.load("c1")) == second.all_messages()


# -- pending calls -------------------------------------------------------------------------------


def crashed() -> list[tl.Message]:
    return [
        tl.user_message("Weather in Paris and Rome?", id="u1", created_at=pai_time()),
        tl.assistant_message(
            tl.tool_call_part("c1", "weather", {"city": "Paris"}),
            tl.tool_call_part("c2", "weather", {"city": "Rome"}),
            id="a1",
            created_at=pai_time(),
        ),
    ]


def test_pending_calls_are_kept_by_default() -> None:
    native = to_pydantic_ai(crashed())
    assert native == to_pydantic_ai(crashed(), pending="keep")
    assert isinstance(native[-1], pai.ModelResponse)
    assert len(native[-1].tool_calls) == 2


def test_pending_calls_answered_as_interrupted() -> None:
    native = to_pydantic_ai(crashed(), pending="answer")
    answers = returns_in(native)
    assert [(r.tool_call_id, r.outcome) for r in answers] == [("c1", "failed"), ("c2", "failed")]
    assert answers[0].content == MISSING_RESULT_TEXT
    back = from_pydantic_ai(native)
    assert back[-1].tool_results[0].metadata["threadline.repair"] == "missing-tool-result"
    assert tl.check_messages(back).ok


def test_a_half_answered_round_gets_the_rest_in_its_tool_message() -> None:
    result = tl.tool_result_part("c1", "18C")
    live = [*crashed(), tl.tool_message(result, id="t1", created_at=pai_time())]
    native = to_pydantic_ai(live, pending="answer")
    assert len(native) == 3
    assert [r.tool_call_id for r in returns_in(native)] == ["c1", "c2"]
    assert returns_in(native)[1].outcome == "failed"
    assert to_pydantic_ai(live) == to_pydantic_ai(live, pending="keep")
    assert len(returns_in(to_pydantic_ai(live))) == 1


def test_a_half_answered_round_kept_is_answered_by_pydantic_ai_without_running_the_tool() -> None:
    weather = Weather()
    result = tl.tool_result_part("c1", "18C")
    live = [*crashed(), tl.tool_message(result, id="t1", created_at=pai_time())]
    asyncio.run(weather.agent.run(None, message_history=to_pydantic_ai(live)))
    assert weather.ran == []
    sent = returns_in(weather.seen[0])
    assert [(r.tool_call_id, r.outcome) for r in sent] == [("c1", "success"), ("c2", "interrupted")]
    asyncio.run(weather.agent.run(None, message_history=to_pydantic_ai(live, pending="answer")))
    sent = returns_in(weather.seen[1])
    expected = [("c1", "18C"), ("c2", MISSING_RESULT_TEXT)]
    assert [(r.tool_call_id, r.content) for r in sent] == expected


def test_pending_calls_refused() -> None:
    with pytest.raises(tl.IntegrityError, match="pending") as raised:
        to_pydantic_ai(crashed(), pending="refuse")
    assert [issue.code for issue in raised.value.issues] == ["pending-tool-call"] * 2
    assert to_pydantic_ai(crashed()[:1], pending="refuse") == to_pydantic_ai(crashed()[:1])


def test_a_bad_pending_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match="pending="):
        to_pydantic_ai(crashed(), pending="drop")  # type: ignore[arg-type]


def test_a_new_prompt_after_kept_calls_is_pydantic_ais_error_and_answer_lets_it_run() -> None:
    weather = Weather()
    with pytest.raises(UserError, match="unprocessed tool calls"):
        asyncio.run(weather.agent.run("Never mind.", message_history=to_pydantic_ai(crashed())))
    history = to_pydantic_ai(crashed(), pending="answer")
    result = asyncio.run(weather.agent.run("Never mind.", message_history=history))
    assert weather.ran == []  # the crashed calls never ran
    assert answered_once(weather.seen[0]) == {"c1": 1, "c2": 1}
    assert result.output == "Sunny in both."


# -- Agent.iter persisting each node -------------------------------------------------------------


def test_two_tool_rounds_are_stored_once_each(store: SQLiteStore) -> None:
    weather = Weather()
    response = asyncio.run(weather.turn(store, "Weather?"))
    assert response is not None
    assert response.text == "Sunny in both."
    stored = store.load("c1")
    assert [m.role for m in stored] == ["user", *["assistant", "tool"] * 2, "assistant"]
    assert to_pydantic_ai(stored) == weather.seen[-1] + [response]
    assert weather.ran == ["Paris", "Rome"]
    assert answered_once(weather.seen[-1]) == {"c1": 1, "c2": 1}
    assert tl.check_messages(stored).ok
    # A second turn over the stored history appends only what it adds.
    asyncio.run(weather.turn(store, "Thanks!"))
    again = store.load("c1")
    assert [m.id for m in again[: len(stored)]] == [m.id for m in stored]
    assert [m.role for m in again[len(stored) :]] == ["user", "assistant"]


def test_a_crash_before_the_tool_ran_resumes_by_running_it(store: SQLiteStore) -> None:
    weather = Weather()
    asyncio.run(weather.turn(store, "Weather?", stop=Agent.is_call_tools_node))
    stored = store.load("c1")
    assert [m.role for m in stored] == ["user", "assistant"]
    assert [c.id for c in tl.pending_calls(stored)] == ["c1"]
    assert weather.ran == []
    # A fresh process: a new agent, the history from the store, no new prompt.
    resumed = Weather()
    response = asyncio.run(resumed.turn(store, None))
    assert response is not None
    assert response.text == "Sunny in both."
    assert resumed.ran == ["Paris", "Rome"]
    for seen in resumed.seen:
        assert all(count == 1 for count in answered_once(seen).values())
    assert not any(r.content == MISSING_RESULT_TEXT for r in returns_in(resumed.seen[-1]))
    final = store.load("c1")
    assert [m.role for m in final] == ["user", *["assistant", "tool"] * 2, "assistant"]
    assert tl.check_messages(final).ok


def test_a_crash_after_the_tool_ran_runs_it_again_and_sends_one_result(
    store: SQLiteStore,
) -> None:
    # The tool's result reaches the store with the next request; dying before that loses it,
    # and pydantic-ai runs the call again on resume (pending="answer" if it must not).
    weather = Weather()

    def after_the_tools(node: Any) -> bool:
        return Agent.is_model_request_node(node) and weather.ran == ["Paris"]

    asyncio.run(weather.turn(store, "Weather?", stop=after_the_tools))
    assert weather.ran == ["Paris"]
    resumed = Weather()
    asyncio.run(resumed.turn(store, None))
    assert resumed.ran == ["Paris", "Rome"]
    assert answered_once(resumed.seen[-1]) == {"c1": 1, "c2": 1}
    final = store.load("c1")
    assert [m.role for m in final] == ["user", *["assistant", "tool"] * 2, "assistant"]


def test_a_crash_resumed_without_running_the_tool_sends_only_the_interrupted_result(
    store: SQLiteStore,
) -> None:
    weather = Weather()
    asyncio.run(weather.turn(store, "Weather?", stop=Agent.is_call_tools_node))
    # The tool must not run twice: answer the pending call, and store the answer first.
    answered = tl.repair_messages(store.load("c1"), pending="answer").messages
    store.append("c1", answered)
    resumed = Weather()
    asyncio.run(resumed.turn(store, None, history=answered))
    assert resumed.ran == ["Rome"]  # Paris was answered as interrupted, never run
    first = returns_in(resumed.seen[0])
    assert [(r.tool_call_id, r.content) for r in first] == [("c1", MISSING_RESULT_TEXT)]
    assert all(count == 1 for count in answered_once(resumed.seen[-1]).values())
    final = store.load("c1")
    assert [m.role for m in final] == ["user", *["assistant", "tool"] * 2, "assistant"]
    assert tl.check_messages(final).ok


def test_the_same_run_appended_twice_by_iter_is_stored_once(store: SQLiteStore) -> None:
    weather = Weather()
    response = asyncio.run(weather.turn(store, "Weather?"))
    assert response is not None
    stored = store.load("c1")
    run = [*weather.seen[-1], response]  # everything the run made, as pydantic-ai objects
    # The run's messages sent again (a retried job), whole and node by node: all replays.
    store.append("c1", from_pydantic_ai(run))
    for end in range(len(run) + 1):
        store.append("c1", from_pydantic_ai(run[:end]))
    store.append("c1", from_pydantic_ai(ModelMessagesTypeAdapter.dump_json(run)))
    assert store.load("c1") == stored
    assert [m.id for m in from_pydantic_ai(run)] == [m.id for m in stored]
