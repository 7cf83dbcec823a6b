"""Unit tests for threadline.context.base: the Plugin hooks and how a History runs them."""

from __future__ import annotations

import asyncio
import pickle
from typing import Any

import pytest

import threadline as tl
from threadline.context import Plugin, ToolDefinition
from threadline.history import History, HistoryEvent


class Log(Plugin):
    """Records every hook call in a shared list."""

    def __init__(self, name: str, log: list[Any]) -> None:
        self.name = name
        self.log = log

    def on_registered(self, history: History) -> None:
        self.log.append((self.name, "on_registered", len(history)))

    def after_append(self, history: History, messages: tuple[tl.Message, ...]) -> None:
        self.log.append((self.name, "after_append", [m.text for m in messages]))

    async def reduce(self, history: History, **options: Any) -> bool:
        self.log.append((self.name, "reduce", options))
        return self.name == "b"


class TestRegistration:
    def test_use_is_chainable_and_calls_on_registered(self) -> None:
        log: list[Any] = []
        a, b = Log("a", log), Log("b", log)
        history = History([tl.user_message("x")])
        assert history.use(a).use(b) is history
        assert history.plugins == (a, b)
        assert log == [("a", "on_registered", 1), ("b", "on_registered", 1)]

    def test_plugins_in_the_constructor_register_after_the_messages(self) -> None:
        log: list[Any] = []
        History([tl.user_message("x"), tl.user_message("y")], plugins=[Log("a", log)])
        assert log == [("a", "on_registered", 2)]

    def test_a_failing_on_registered_refuses_the_plugin(self) -> None:
        class Picky(Plugin):
            def on_registered(self, history: History) -> None:
                raise ValueError("needs a window")

        history = History()
        with pytest.raises(tl.PluginError, match="needs a window") as caught:
            history.use(Picky())
        assert isinstance(caught.value.__cause__, ValueError)
        assert history.plugins == ()

    def test_a_hook_that_is_not_callable(self) -> None:
        class Odd:
            transform = "not a method"

        with pytest.raises(TypeError, match="transform"):
            History().use(Odd())  # type: ignore[arg-type]

    def test_copies_and_pickles_register_the_plugins_again(self) -> None:
        log: list[Any] = []
        history = History([tl.user_message("x")], plugins=[Log("a", log)])
        log.clear()
        clone = history.copy()
        assert clone.plugins == history.plugins
        assert log == [("a", "on_registered", 1)]
        thawed = pickle.loads(pickle.dumps(History(plugins=[_Picklable()])))
        assert isinstance(thawed.plugins[0], _Picklable)


class _Picklable(Plugin):
    pass


class TestAfterAppend:
    def test_runs_in_order_after_the_listeners_for_append_and_extend(self) -> None:
        log: list[Any] = []
        history = History(plugins=[Log("a", log), Log("b", log)])
        history.subscribe(lambda event: log.append(("listener", event.kind)))
        log.clear()
        history.append(tl.user_message("one"))
        history.extend([tl.user_message("two"), tl.user_message("three")])
        history.restore([])
        history.reset()
        assert log == [
            ("listener", "append"),
            ("a", "after_append", ["one"]),
            ("b", "after_append", ["one"]),
            ("listener", "extend"),
            ("a", "after_append", ["two", "three"]),
            ("b", "after_append", ["two", "three"]),
            ("listener", "restore"),
            ("listener", "reset"),
        ]

    def test_an_error_is_isolated_and_reported(self) -> None:
        errors: list[Any] = []
        log: list[Any] = []

        class Failing(Plugin):
            def after_append(self, history: History, messages: tuple[tl.Message, ...]) -> None:
                raise RuntimeError("after_append failed")

        failing = Failing()
        history = History(
            plugins=[failing, Log("b", log)], on_plugin_error=lambda *a: errors.append(a)
        )
        history.append(tl.user_message("x"))
        assert len(history) == 1
        assert [(type(e).__name__, p, h) for e, p, h in errors] == [
            ("RuntimeError", failing, "after_append")
        ]
        assert ("b", "after_append", ["x"]) in log

    def test_it_may_mutate_the_history(self) -> None:
        class Echo(Plugin):
            def after_append(self, history: History, messages: tuple[tl.Message, ...]) -> None:
                if messages[-1].role == "user":
                    history.append(tl.assistant_message(f"echo: {messages[-1].text}"))

        history = History(plugins=[Echo()])
        events: list[HistoryEvent] = []
        history.subscribe(events.append)
        history.append(tl.user_message("hi"))
        assert [m.text for m in history] == ["hi", "echo: hi"]
        assert [e.kind for e in events] == ["append", "append"]


class TestReduce:
    def test_runs_every_reducing_plugin_in_order_with_the_options(self) -> None:
        log: list[Any] = []
        history = History(plugins=[Log("a", log), Log("b", log)])
        log.clear()
        assert asyncio.run(history.reduce(max_tokens=100)) is True  # "b" reports a change
        options = {"max_tokens": 100, "max_messages": None, "older_than": None}
        assert log == [("a", "reduce", options), ("b", "reduce", options)]

    def test_a_sync_reduce_works_too(self) -> None:
        class SyncReduce(Plugin):
            def reduce(self, history: History, **options: Any) -> bool:
                history.reset()
                return True

        history = History([tl.user_message("x")], plugins=[SyncReduce()])
        assert asyncio.run(history.reduce()) is True
        assert len(history) == 0

    def test_an_error_reaches_the_caller_as_a_plugin_error(self) -> None:
        class Failing(Plugin):
            async def reduce(self, history: History, **options: Any) -> bool:
                raise KeyError("gone")

        history = History(plugins=[Failing()])
        with pytest.raises(tl.PluginError, match="failed to reduce") as caught:
            asyncio.run(history.reduce())
        assert isinstance(caught.value.__cause__, KeyError)


class TestToolDefinition:
    def test_calling_the_definition_calls_the_function(self) -> None:
        tool = ToolDefinition(
            name="echo",
            description="Echo the text.",
            parameters={"type": "object", "properties": {"text": {"type": "string"}}},
            function=lambda text: text * 2,
        )
        assert tool(text="ab") == "abab"
        with pytest.raises(AttributeError):
            tool.name = "other"  # type: ignore[misc]
