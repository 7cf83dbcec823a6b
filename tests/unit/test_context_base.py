"""Unit tests for threadline.context.base: the Plugin hooks and how a History runs them."""

from __future__ import annotations

import asyncio
import logging
import pickle
from typing import Any

import pytest

import threadline as tl
from threadline.context import Plugin
from threadline.context import ToolDefinition
from threadline.history import History
from threadline.history import HistoryEvent
from threadline.stores import MemoryStore


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

    def test_a_hook_that_is_not_callable_refuses_the_plugin_before_on_registered(self) -> None:
        seen: list[str] = []

        class Odd:
            def on_registered(self, history: History) -> None:
                seen.append("on_registered")

            def transform(self, history: History, messages: list[tl.Message]) -> list[tl.Message]:
                return messages

            after_append = 3

        history = History()
        with pytest.raises(TypeError, match="after_append"):
            history.use(Odd())  # type: ignore[arg-type]
        assert history.plugins == ()
        assert history.messages_for_model() == []  # its transform was not registered either
        assert seen == []

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


class TestWhatAReducerCalls:
    """The public methods a plugin uses to rewrite a history: a compare-and-swap
    ``replace_prefix``, ``count_tokens`` and ``report_plugin_error``."""

    def test_replace_prefix_swaps_the_start_and_keeps_what_came_after(self) -> None:
        history = History([tl.user_message(f"m{i}") for i in range(4)])
        seen = history.snapshot()
        history.append(tl.user_message("later"))
        events: list[HistoryEvent] = []
        history.subscribe(events.append)
        assert history.replace_prefix(seen[:3], [tl.user_message("summary")]) is True
        assert [m.text for m in history] == ["summary", "m3", "later"]
        assert [(e.kind, e.version) for e in events] == [("restore", seen.version + 2)]
        assert events[0].snapshot == list(history)

    def test_replace_prefix_refuses_a_history_that_changed_under_it(self) -> None:
        history = History([tl.user_message("a"), tl.user_message("b")])
        seen = history.snapshot()
        history.restore([tl.user_message("a"), tl.user_message("b")])  # equal, not the same
        version = history.version
        assert history.replace_prefix(seen, [tl.user_message("summary")]) is False
        assert [m.text for m in history] == ["a", "b"]
        assert history.version == version
        history.reset()
        assert history.replace_prefix(seen[:1], []) is False

    def test_replace_prefix_removes_by_identity_and_validates_the_replacement(self) -> None:
        stale = tl.user_message("old summary")
        history = History([tl.user_message("a"), stale, tl.user_message("b")])
        seen = history.snapshot()
        with pytest.raises(tl.ValidationError, match=r"History.replace_prefix"):
            history.replace_prefix(seen[:1], [{"role": "user", "parts": "nope"}])
        assert history.snapshot() is seen
        with pytest.raises(TypeError, match="expected must be"):
            history.replace_prefix(seen[0], [])  # type: ignore[arg-type]
        summary = {"role": "user", "parts": [{"type": "text", "text": "s"}]}
        assert history.replace_prefix(seen[:1], [summary], remove=[stale])
        assert [m.text for m in history] == ["s", "b"]

    def test_replace_prefix_writes_through_a_bound_store_and_applies_the_window(self) -> None:
        store = MemoryStore()
        history = History(max_messages=3).bind(store, "c1")
        history.extend([tl.user_message(f"m{i}") for i in range(3)])
        seen = history.snapshot()
        events: list[HistoryEvent] = []
        history.subscribe(events.append)
        replacement = [tl.user_message("s1"), tl.user_message("s2")]
        assert history.replace_prefix(seen[:1], replacement) is True
        assert [e.kind for e in events] == ["restore", "trim"]
        assert [m.text for m in history] == ["s2", "m1", "m2"]
        assert [m.text for m in store.load("c1")] == ["s1", "s2", "m1", "m2"]

    def test_a_third_party_reducer_needs_only_the_public_api(self) -> None:
        class DropAllButLast(Plugin):
            async def reduce(self, history: History, **options: Any) -> bool:
                seen = history.snapshot()
                await asyncio.sleep(0)  # a model call would be awaited here
                return history.replace_prefix(seen[:-1], [])

        async def main() -> tuple[bool, list[str]]:
            history = History([tl.user_message("a"), tl.user_message("b")])
            history.use(DropAllButLast())
            task = asyncio.ensure_future(history.reduce())
            await asyncio.sleep(0)
            history.append(tl.user_message("c"))  # while the reduce is awaiting
            return await task, [m.text for m in history]

        assert asyncio.run(main()) == (True, ["b", "c"])

    def test_count_tokens_counts_as_the_history_does(self) -> None:
        message = tl.user_message("one two three")
        assert History().count_tokens(message) == tl.estimate_tokens(message)
        words = History(token_counter=lambda m: len(m.text.split()))
        assert words.count_tokens(message) == 3

        def negative(message: tl.Message) -> int:
            return -1

        with pytest.raises(ValueError, match="negative"):
            History(token_counter=negative).count_tokens(message)

    def test_report_plugin_error_goes_to_on_plugin_error(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        errors: list[Any] = []
        plugin = _Picklable()
        error = RuntimeError("background reduce failed")
        History(on_plugin_error=lambda *a: errors.append(a)).report_plugin_error(
            error, plugin, "reduce"
        )
        assert errors == [(error, plugin, "reduce")]

        def broken(*args: Any) -> None:
            raise KeyError("handler")

        with caplog.at_level(logging.ERROR, logger="threadline"):
            History().report_plugin_error(error, plugin, "reduce")  # logged by default
            History(on_plugin_error=broken).report_plugin_error(error, plugin, "reduce")
        assert len(caplog.records) == 2


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
