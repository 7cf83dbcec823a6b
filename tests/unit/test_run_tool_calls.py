"""run_tool_calls / arun_tool_calls: tools that run themselves (issue 36, item 2)."""

from __future__ import annotations

import asyncio
import contextvars
import enum
import math
import threading
from collections.abc import Callable
from typing import Any

import pydantic
import pytest

import threadline as tl
from threadline import ToolCallPart
from threadline import ToolDefinition
from threadline import ValidationError
from threadline import arun_tool_calls
from threadline import run_tool_calls
from threadline import tool_from_function
from threadline._running import THREAD_LIMIT

GUARD = 30.0
"""Seconds a test waits for a thread before it gives up: a guard against hangs, never timed."""


def call(id: str, name: str, arguments: Any = None) -> ToolCallPart:
    return tl.tool_call_part(id, name, arguments)


def results(message: tl.Message | None) -> list[tuple[str, str | None, bool, str]]:
    assert message is not None
    assert message.role == "tool"
    return [(part.call_id, part.name, part.is_error, part.text) for part in message.tool_results]


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Place(pydantic.BaseModel):
    city: str


def weather(city: str, days: int = 1) -> dict[str, Any]:
    """The weather."""
    return {"city": city, "days": days}


WEATHER = tool_from_function(weather)


# -- ToolDefinition.retry_safe -------------------------------------------------------------------


class TestRetrySafe:
    def test_default_and_keyword(self) -> None:
        assert WEATHER.retry_safe is False
        safe = tool_from_function(weather, retry_safe=True)
        assert safe.retry_safe is True
        assert ToolDefinition("x", retry_safe=True).retry_safe is True

    def test_refused_when_not_a_bool(self) -> None:
        with pytest.raises(ValidationError) as caught:
            ToolDefinition("x", retry_safe="yes")  # type: ignore[arg-type]
        assert caught.value.errors[0].path == "retry_safe"

    def test_equality_and_hash(self) -> None:
        assert tool_from_function(weather) == WEATHER
        assert hash(tool_from_function(weather)) == hash(WEATHER)
        assert tool_from_function(weather, retry_safe=True) != WEATHER

    @pytest.mark.parametrize("provider", ["openai_chat", "anthropic", "gemini", "bedrock"])
    def test_never_sent(self, provider: str) -> None:
        messages = [tl.user_message("Weather?")]
        safe = tool_from_function(weather, retry_safe=True)
        assert tl.encode(messages, provider=provider, tools=[safe]) == tl.encode(
            messages, provider=provider, tools=[WEATHER]
        )


# -- What is run ---------------------------------------------------------------------------------


class TestInput:
    def test_an_assistant_message(self) -> None:
        message = tl.assistant_message(call("c1", "weather", {"city": "Oslo"}))
        assert results(run_tool_calls(message, [WEATHER])) == [
            ("c1", "weather", False, '{"city":"Oslo","days":1}')
        ]

    def test_a_history_skips_answered_calls(self) -> None:
        history = [
            tl.user_message("Weather?"),
            tl.assistant_message(
                call("c1", "weather", {"city": "Oslo"}), call("c2", "weather", {"city": "Rome"})
            ),
            tl.tool_message(tl.tool_result_part("c1", "rain", name="weather")),
        ]
        assert [r[0] for r in results(run_tool_calls(history, [WEATHER]))] == ["c2"]
        assert [r[0] for r in results(run_tool_calls(tl.History(history), [WEATHER]))] == ["c2"]
        assert [r[0] for r in results(run_tool_calls(tl.pending_calls(history), [WEATHER]))] == [
            "c2"
        ]

    def test_nothing_to_run_is_none(self) -> None:
        assert run_tool_calls([], [WEATHER]) is None
        assert run_tool_calls([tl.user_message("hi")], [WEATHER]) is None
        answered = [
            tl.assistant_message(call("c1", "weather", {"city": "Oslo"})),
            tl.tool_message(tl.tool_result_part("c1", "rain")),
        ]
        assert run_tool_calls(answered, [WEATHER]) is None
        assert asyncio.run(arun_tool_calls(answered, [WEATHER])) is None

    def test_a_cut_stream_has_no_calls_to_run(self) -> None:
        cut = tl.assistant_message(
            call("c1", "weather", {"city": "Oslo"}), metadata={"threadline.incomplete": True}
        )
        assert run_tool_calls(cut, [WEATHER]) is None

    def test_a_duplicate_id_runs_once(self) -> None:
        ran: list[str] = []

        def note(city: str) -> str:
            ran.append(city)
            return city

        calls = [call("c1", "note", {"city": "a"}), call("c1", "note", {"city": "b"})]
        assert results(run_tool_calls(calls, [tool_from_function(note)])) == [
            ("c1", "note", False, "a")
        ]
        assert ran == ["a"]

    def test_a_message_of_another_role_is_refused(self) -> None:
        with pytest.raises(ValidationError, match="is a user message"):
            run_tool_calls(tl.user_message("hi"), [WEATHER])

    @pytest.mark.parametrize("given", ["calls", b"x", {"c1": 1}, 3, None])
    def test_other_input_is_refused(self, given: Any) -> None:
        with pytest.raises(TypeError, match="run_tool_calls takes"):
            run_tool_calls(given, [WEATHER])

    def test_a_mix_is_refused(self) -> None:
        with pytest.raises(TypeError, match=r"message_or_calls\[1\] is a ToolCallPart"):
            run_tool_calls([tl.user_message("x"), call("c", "weather", {})], [WEATHER])  # type: ignore[arg-type]


class TestTools:
    def test_a_mapping_by_name(self) -> None:
        message = tl.assistant_message(call("c1", "weather", {"city": "Oslo"}))
        assert results(run_tool_calls(message, {"weather": WEATHER}))[0][2] is False

    def test_a_mapping_key_must_be_the_name(self) -> None:
        with pytest.raises(ValidationError, match="is the tool named 'weather'") as caught:
            run_tool_calls([], {"forecast": WEATHER})
        assert caught.value.errors[0].path == "tools['forecast']"

    def test_two_tools_with_one_name(self) -> None:
        with pytest.raises(ValidationError, match="second tool named 'weather'") as caught:
            run_tool_calls([], [WEATHER, tool_from_function(weather, description="Other.")])
        assert caught.value.errors[0].path == "tools[1]"

    def test_a_tool_without_a_function(self) -> None:
        with pytest.raises(ValidationError, match="tool 'search' has no function"):
            run_tool_calls([], [WEATHER, ToolDefinition("search")])

    def test_a_model_tool_runs_nothing(self) -> None:
        with pytest.raises(ValidationError, match=r"Place.model_validate\(call.arguments\)"):
            run_tool_calls([], [tl.tool_from_model(Place)])

    @pytest.mark.parametrize("tools", [WEATHER, "weather", None, [WEATHER, "x"]])
    def test_not_tools(self, tools: Any) -> None:
        with pytest.raises(TypeError, match="ToolDefinition"):
            run_tool_calls([], tools)

    def test_nothing_runs_when_a_tool_is_refused(self) -> None:
        ran: list[str] = []
        first = ToolDefinition("first", function=lambda: ran.append("first"))
        with pytest.raises(ValidationError):
            run_tool_calls([call("c1", "first", {})], [first, ToolDefinition("second")])
        assert ran == []


class TestOptions:
    @pytest.mark.parametrize("value", [0, -1, True, 1.5, "2"])
    def test_max_concurrency(self, value: Any) -> None:
        with pytest.raises(ValidationError) as caught:
            run_tool_calls([], [WEATHER], max_concurrency=value)
        assert caught.value.errors[0].path == "max_concurrency"

    @pytest.mark.parametrize("value", [0, -1.0, math.nan, math.inf, True, "1"])
    def test_timeout(self, value: Any) -> None:
        with pytest.raises(ValidationError) as caught:
            run_tool_calls([], [WEATHER], timeout=value)
        assert caught.value.errors[0].path == "timeout"

    def test_on_error_and_retry_safe_only(self) -> None:
        with pytest.raises(TypeError, match="on_error"):
            run_tool_calls([], [WEATHER], on_error="quiet")  # type: ignore[arg-type]
        with pytest.raises(ValidationError):
            run_tool_calls([], [WEATHER], retry_safe_only=1)  # type: ignore[arg-type]


# -- Arguments -----------------------------------------------------------------------------------


class TestArguments:
    def test_converted_through_the_signature(self) -> None:
        seen: list[Any] = []

        def forecast(place: Place, unit: Unit = Unit.CELSIUS, days: int = 1) -> str:
            seen.append((place, unit, days))
            return "ok"

        arguments = {"place": {"city": "Oslo"}, "unit": "fahrenheit", "days": "3"}
        run_tool_calls([call("c1", "forecast", arguments)], [tool_from_function(forecast)])
        assert seen == [(Place(city="Oslo"), Unit.FAHRENHEIT, 3)]

    def test_defaults_are_the_functions(self) -> None:
        seen: list[Any] = []

        def f(a: int, b: list[int] | None = None) -> str:
            seen.append(b)
            return "ok"

        run_tool_calls([call("c1", "f", {"a": 1})], [tool_from_function(f)])
        assert seen == [None]

    def test_bad_arguments_tell_the_model_what_is_wrong(self) -> None:
        message = run_tool_calls([call("c1", "weather", {"days": "x", "town": 1})], [WEATHER])
        [(_, name, is_error, text)] = results(message)
        assert (name, is_error) == ("weather", True)
        assert "- city: missing (required)" in text
        assert "- days: Input should be a valid integer" in text
        assert '(got "x")' in text
        assert "- town: not an argument of this tool" in text
        assert "Traceback" not in text

    def test_nested_problems_name_their_path(self) -> None:
        def f(places: list[Place]) -> str:
            return "ok"

        message = run_tool_calls(
            [call("c1", "f", {"places": [{"city": 1}]})], [tool_from_function(f)]
        )
        assert "- places[0].city: Input should be a valid string" in results(message)[0][3]

    def test_many_problems_are_counted_not_listed(self) -> None:
        arguments = {f"x{i}": i for i in range(100)}
        text = results(run_tool_calls([call("c1", "weather", arguments)], [WEATHER]))[0][3]
        assert "- and 81 more" in text  # 100 unknown + 1 missing, 20 listed

    def test_parameters_named_like_pydantics_own(self) -> None:
        def f(json: str, model_config: int, schema: str) -> str:
            return f"{json}{model_config}{schema}"

        arguments = {"json": "a", "model_config": 1, "schema": "b"}
        assert (
            results(run_tool_calls([call("c1", "f", arguments)], [tool_from_function(f)]))[0][3]
            == "a1b"
        )

    def test_a_hand_written_tool_is_checked_by_its_signature(self) -> None:
        echo = ToolDefinition("echo", function=lambda text: text * 2)
        assert results(run_tool_calls([call("c1", "echo", {"text": "ab"})], [echo]))[0][3] == "abab"
        text = results(run_tool_calls([call("c1", "echo", {})], [echo]))[0][3]
        assert "- text: missing (required)" in text

    def test_keyword_arguments_pass_through(self) -> None:
        def any_args(**kwargs: Any) -> dict[str, Any]:
            return kwargs

        tool = ToolDefinition("any", function=any_args)
        message = run_tool_calls([call("c1", "any", {"a": 1, "b": [2]})], [tool])
        assert results(message)[0][3] == '{"a":1,"b":[2]}'

    def test_the_call_is_not_changed_by_the_tool(self) -> None:
        def grab(items: Any) -> str:
            items.append("mutated")
            return "ok"

        the_call = call("c1", "grab", {"items": ["a"]})
        run_tool_calls([the_call], [tool_from_function(grab)])
        assert the_call.arguments == {"items": ["a"]}

    def test_unknown_tool_lists_the_available_ones(self) -> None:
        text = results(run_tool_calls([call("c1", "wether", {})], [WEATHER]))[0][3]
        assert text == "There is no tool named 'wether'. The available tools are 'weather'."
        text = results(run_tool_calls([call("c1", "wether", {})], []))[0][3]
        assert "no tool is available" in text

    def test_arguments_that_were_not_json(self) -> None:
        [(_, _, is_error, text)] = results(
            run_tool_calls([call("c1", "weather", "{city:")], [WEATHER])
        )
        assert is_error
        assert "were not a JSON object: '{city:'" in text


# -- Outcomes ------------------------------------------------------------------------------------


def one(function: Callable[..., Any], **options: Any) -> tuple[bool, str]:
    tool = ToolDefinition("t", function=function)
    [(_, name, is_error, text)] = results(run_tool_calls([call("c1", "t", {})], [tool], **options))
    assert name == "t"
    return is_error, text


class Opaque:
    pass


class Killed(BaseException):
    """An application's own way to end a process: raised through the run like the others."""


class TestOutcomes:
    @pytest.mark.parametrize(
        ("value", "text"),
        [
            ("plain text", "plain text"),
            ({"temp": 22, "sky": "clear"}, '{"temp":22,"sky":"clear"}'),
            ([1, 2], "[1,2]"),
            (None, "null"),
            (3.5, "3.5"),
            (["a", tl.text_part("b")], "ab"),
        ],
    )
    def test_return_values(self, value: Any, text: str) -> None:
        assert one(lambda: value) == (False, text)

    def test_parts_are_kept(self) -> None:
        image = tl.file_part(b"\x89PNG", "image/png")
        tool = ToolDefinition("t", function=lambda: ["chart:", image])
        message = run_tool_calls([call("c1", "t", {})], [tool])
        assert message is not None
        assert message.tool_results[0].content[1] == image

    def test_a_returned_result_is_the_result(self) -> None:
        returned = tl.tool_result_part("other", "not found", is_error=True, metadata={"k": 1})
        tool = ToolDefinition("t", function=lambda: returned)
        [part] = run_tool_calls([call("c1", "t", {})], [tool]).tool_results  # type: ignore[union-attr]
        assert (part.call_id, part.name, part.is_error, part.text) == ("c1", "t", True, "not found")
        assert part.metadata == {"k": 1}

    @pytest.mark.parametrize(
        ("value", "kind"), [({1}, "set"), (Opaque(), "Opaque"), (b"x", "bytes")]
    )
    def test_what_cannot_be_a_result(self, value: Any, kind: str) -> None:
        is_error, text = one(lambda: value)
        assert is_error
        assert text.startswith(f"The tool returned a {kind}, which cannot be a tool result")

    def test_a_circular_or_deep_value(self) -> None:
        circular: list[Any] = []
        circular.append(circular)
        assert one(lambda: circular)[0]
        deep: dict[str, Any] = {}
        node = deep
        for _ in range(10_000):
            node["a"] = {}
            node = node["a"]
        is_error, text = one(lambda: deep)
        assert is_error
        assert "nests deeper" in text

    def test_an_exception_is_named_without_a_traceback(self) -> None:
        def fail() -> str:
            raise ValueError("no such city")

        assert one(fail) == (True, "ValueError: no such city")
        empty: dict[str, int] = {}
        assert one(lambda: empty["k"]) == (True, "KeyError: 'k'")

    def test_an_exception_without_a_message(self) -> None:
        def fail() -> str:
            raise RuntimeError

        assert one(fail) == (True, "RuntimeError")

    def test_a_long_or_broken_message(self) -> None:
        def long() -> str:
            raise ValueError("x" * 10_000)

        is_error, text = one(long)
        assert is_error
        assert len(text) < 2100
        assert text.endswith("... (cut)")

        def surrogate() -> str:
            raise ValueError("bad \ud800 text")

        assert one(surrogate) == (True, "ValueError: bad \ufffd text")

    def test_on_error_words_it(self) -> None:
        seen: list[Any] = []

        def on_error(error: Exception, the_call: ToolCallPart) -> str:
            seen.append((type(error), the_call.id))
            return "The lookup failed; try another city."

        def fail() -> str:
            raise ValueError("secret token abc")

        assert one(fail, on_error=on_error) == (True, "The lookup failed; try another city.")
        assert seen == [(ValueError, "c1")]

    @pytest.mark.parametrize("returns", [None, 3])
    def test_on_error_failing_falls_back(self, returns: Any) -> None:
        def on_error(error: Exception, the_call: ToolCallPart) -> Any:
            if returns is None:
                raise RuntimeError("on_error broke")
            return returns

        def fail() -> str:
            raise ValueError("boom")

        assert one(fail, on_error=on_error) == (True, "ValueError: boom")

    @pytest.mark.parametrize("kind", [KeyboardInterrupt, SystemExit, Killed])
    @pytest.mark.parametrize("options", [{}, {"timeout": GUARD}, {"max_concurrency": 2}])
    def test_interrupts_propagate(self, kind: type[BaseException], options: dict[str, Any]) -> None:
        def stop() -> str:
            raise kind

        tool = ToolDefinition("t", function=stop)
        calls = [call("c1", "t", {}), call("c2", "t", {})]
        with pytest.raises(kind):
            run_tool_calls(calls, [tool], **options)

    def test_an_async_interrupt_propagates(self) -> None:
        async def stop() -> str:
            raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            run_tool_calls([call("c1", "t", {})], [ToolDefinition("t", function=stop)])


# -- How calls run -------------------------------------------------------------------------------


class TestRunning:
    def test_one_call_runs_in_the_calling_thread(self) -> None:
        assert one(lambda: threading.get_ident()) == (False, str(threading.get_ident()))

    def test_max_concurrency_one_runs_in_order_here(self) -> None:
        order: list[tuple[str, int]] = []

        def note(name: str) -> str:
            order.append((name, threading.get_ident()))
            return name

        calls = [call(f"c{i}", "note", {"name": str(i)}) for i in range(5)]
        run_tool_calls(calls, [tool_from_function(note)], max_concurrency=1)
        assert order == [(str(i), threading.get_ident()) for i in range(5)]

    def test_results_come_in_call_order(self) -> None:
        # Each call waits for the next one to start: they finish in reverse order.
        count = 6
        started = [threading.Event() for _ in range(count)]

        def step(i: int) -> int:
            started[i].set()
            if i + 1 < count:
                assert started[i + 1].wait(GUARD)
            return i

        calls = [call(f"c{i}", "step", {"i": i}) for i in range(count)]
        message = run_tool_calls(calls, [tool_from_function(step)])
        assert [(r[0], r[3]) for r in results(message)] == [(f"c{i}", str(i)) for i in range(count)]

    def test_max_concurrency_is_a_bound(self) -> None:
        barrier = threading.Barrier(2, timeout=GUARD)
        lock = threading.Lock()
        active = [0, 0]  # now, peak

        def work(i: int) -> int:
            with lock:
                active[0] += 1
                active[1] = max(active)
            barrier.wait()  # two at a time get through: the bound must let exactly two run
            with lock:
                active[0] -= 1
            return i

        calls = [call(f"c{i}", "work", {"i": i}) for i in range(8)]
        message = run_tool_calls(calls, [tool_from_function(work)], max_concurrency=2)
        assert not any(r[2] for r in results(message))
        assert active[1] == 2

    def test_threads_are_bounded_without_a_limit(self) -> None:
        lock = threading.Lock()
        active = [0, 0]
        release = threading.Event()

        def work(i: int) -> int:
            with lock:
                active[0] += 1
                active[1] = max(active)
                if active[0] == THREAD_LIMIT:
                    release.set()
            assert release.wait(GUARD)
            with lock:
                active[0] -= 1
            return i

        calls = [call(f"c{i}", "work", {"i": i}) for i in range(THREAD_LIMIT * 3)]
        message = run_tool_calls(calls, [tool_from_function(work)])
        assert len(results(message)) == THREAD_LIMIT * 3
        assert active[1] == THREAD_LIMIT

    def test_async_functions_are_awaited(self) -> None:
        async def double(x: int) -> int:
            await asyncio.sleep(0)
            return x * 2

        message = run_tool_calls([call("c1", "double", {"x": 21})], [tool_from_function(double)])
        assert results(message)[0][3] == "42"

    def test_a_sync_wrapper_returning_a_coroutine(self) -> None:
        async def value() -> str:
            return "awaited"

        assert one(lambda: value()) == (False, "awaited")

    def test_sync_run_inside_a_running_loop(self) -> None:
        async def double(x: int) -> int:
            return x * 2

        async def main() -> tl.Message | None:
            return run_tool_calls([call("c1", "double", {"x": 2})], [tool_from_function(double)])

        assert results(asyncio.run(main()))[0][3] == "4"

    def test_context_variables_reach_worker_threads(self) -> None:
        variable: contextvars.ContextVar[str] = contextvars.ContextVar("v", default="unset")
        variable.set("set")
        tool = ToolDefinition("t", function=lambda: variable.get())
        calls = [call("c1", "t", {}), call("c2", "t", {})]
        assert [r[3] for r in results(run_tool_calls(calls, [tool]))] == ["set", "set"]


class TestTimeout:
    def test_a_sync_call_is_abandoned(self) -> None:
        release = threading.Event()
        finished = threading.Event()

        def block() -> str:
            release.wait(GUARD)
            finished.set()
            return "late"

        try:
            message = run_tool_calls(
                [call("c1", "block", {})], [tool_from_function(block)], timeout=0.05
            )
            assert results(message) == [
                (
                    "c1",
                    "block",
                    True,
                    "The tool 'block' did not finish within 0.05 s; its outcome is unknown.",
                )
            ]
            assert not finished.is_set()  # abandoned, still running
        finally:
            release.set()
        assert finished.wait(GUARD)

    def test_an_async_call_is_cancelled(self) -> None:
        cancelled = threading.Event()

        async def block() -> str:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled.set()
                raise
            return "never"

        for run in (run_tool_calls, lambda *a, **k: asyncio.run(arun_tool_calls(*a, **k))):
            cancelled.clear()
            message = run([call("c1", "block", {})], [tool_from_function(block)], timeout=0.01)
            assert results(message)[0][2:] == (
                True,
                "The tool 'block' did not finish within 0.01 s; its outcome is unknown.",
            )
            assert cancelled.is_set()

    def test_a_tools_own_timeout_error_is_an_exception(self) -> None:
        def fail() -> str:
            raise TimeoutError("upstream took too long")

        assert one(fail, timeout=GUARD) == (True, "TimeoutError: upstream took too long")


class TestAsync:
    def test_sync_functions_run_off_the_loop(self) -> None:
        async def main() -> tuple[tl.Message | None, int]:
            tool = ToolDefinition("t", function=lambda: threading.get_ident())
            return await arun_tool_calls([call("c1", "t", {})], [tool]), threading.get_ident()

        message, loop_thread = asyncio.run(main())
        assert results(message)[0][3] != str(loop_thread)

    def test_max_concurrency_bounds_coroutines(self) -> None:
        active = [0, 0]

        async def work(i: int) -> int:
            active[0] += 1
            active[1] = max(active)
            for _ in range(3):
                await asyncio.sleep(0)
            active[0] -= 1
            return i

        calls = [call(f"c{i}", "work", {"i": i}) for i in range(10)]
        message = asyncio.run(arun_tool_calls(calls, [tool_from_function(work)], max_concurrency=3))
        assert [r[3] for r in results(message)] == [str(i) for i in range(10)]
        assert active[1] == 3

    def test_cancelling_the_run_cancels_its_calls(self) -> None:
        started = asyncio.Event()
        cancelled = asyncio.Event()

        async def block() -> str:
            started.set()
            try:
                await asyncio.Event().wait()
            finally:
                cancelled.set()
            return "never"

        async def main() -> None:
            tool = tool_from_function(block)
            run = asyncio.ensure_future(arun_tool_calls([call("c1", "block", {})], [tool]))
            await asyncio.wait_for(started.wait(), GUARD)
            run.cancel()
            with pytest.raises(asyncio.CancelledError):
                await run
            await asyncio.wait_for(cancelled.wait(), GUARD)

        asyncio.run(main())


# -- Resume after a crash ------------------------------------------------------------------------


class TestRetrySafeOnly:
    def test_only_retry_safe_tools_run_the_rest_stay_pending(self) -> None:
        booked: list[str] = []

        def book(table: str) -> str:
            booked.append(table)
            return "booked"

        tools = [tool_from_function(weather, retry_safe=True), tool_from_function(book)]
        history = [
            tl.user_message("Book and weather"),
            tl.assistant_message(
                call("c1", "weather", {"city": "Oslo"}),
                call("c2", "book", {"table": "8pm"}),
                call("c3", "gone", {}),
            ),
        ]
        message = run_tool_calls(tl.pending_calls(history), tools, retry_safe_only=True)
        assert [r[0] for r in results(message)] == ["c1"]
        assert booked == []
        assert message is not None
        ready = tl.prepare_messages([*history, message])
        answered = {part.call_id: part for m in ready for part in m.tool_results}
        assert answered["c1"].is_error is False
        assert answered["c2"].is_error
        assert answered["c3"].is_error

    def test_none_when_nothing_is_retry_safe(self) -> None:
        calls = [call("c1", "weather", {"city": "Oslo"})]
        assert run_tool_calls(calls, [WEATHER], retry_safe_only=True) is None
