"""Plugins and listeners are never silently ignored (issue 21, item 4).

An ``async def after_append`` is awaited (as a task on the running loop, which
``History.flush`` waits for, or to completion when no loop runs) and its error reaches
``on_plugin_error``; an object with none of the plugin hooks (a bare function) is refused when
registered; a listener that takes no argument is called without one, an async listener is
awaited, and one that can take neither form is refused when it subscribes.
"""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import pytest

import threadline as tl
from threadline.context import Plugin
from threadline.history import History
from threadline.history import HistoryEvent


class AsyncAfterAppend(Plugin):
    def __init__(self, seen: list[str], fail: bool = False) -> None:
        self.seen = seen
        self.fail = fail

    async def after_append(self, history: History, messages: tuple[tl.Message, ...]) -> None:
        await asyncio.sleep(0)
        if self.fail:
            raise RuntimeError("indexing failed")
        self.seen.extend(message.text for message in messages)


def _errors() -> tuple[list[tuple[Exception, Any, str]], Any]:
    errors: list[tuple[Exception, Any, str]] = []

    def handler(error: Exception, plugin: Any, hook: str) -> None:
        errors.append((error, plugin, hook))

    return errors, handler


class TestAsyncAfterAppend:
    def test_on_a_running_loop_flush_awaits_it(self) -> None:
        seen: list[str] = []

        async def main() -> None:
            history = History(plugins=[AsyncAfterAppend(seen)])
            history.append(tl.user_message("a"))
            history.extend([tl.user_message("b"), tl.user_message("c")])
            await history.flush()
            assert seen == ["a", "b", "c"]

        with warnings.catch_warnings():
            warnings.simplefilter("error")
            asyncio.run(main())

    def test_its_error_reaches_on_plugin_error(self) -> None:
        errors, handler = _errors()
        plugin = AsyncAfterAppend([], fail=True)

        async def main() -> None:
            history = History(plugins=[plugin], on_plugin_error=handler)
            history.append(tl.user_message("a"))
            await history.flush()  # never raises a plugin's error

        asyncio.run(main())
        assert [(type(e), p, h) for e, p, h in errors] == [(RuntimeError, plugin, "after_append")]

    def test_without_a_running_loop_it_runs_to_completion(self) -> None:
        seen: list[str] = []
        errors, handler = _errors()
        history = History(plugins=[AsyncAfterAppend(seen)], on_plugin_error=handler)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            history.append(tl.user_message("a"))
        assert seen == ["a"]
        failing = History(plugins=[AsyncAfterAppend([], fail=True)], on_plugin_error=handler)
        failing.append(tl.user_message("a"))
        assert [hook for _, _, hook in errors] == ["after_append"]

    def test_an_async_transform_or_on_registered_is_refused(self) -> None:
        class AsyncTransform(Plugin):
            async def transform(  # type: ignore[override]
                self, history: History, messages: list[tl.Message]
            ) -> Any:
                return messages

        class AsyncRegistered:
            async def on_registered(self, history: History) -> None:
                pass

        with pytest.raises(TypeError, match=r"async transform.*plain method"):
            History(plugins=[AsyncTransform()])
        with pytest.raises(TypeError, match=r"async on_registered.*plain method"):
            History().use(AsyncRegistered())  # type: ignore[arg-type]


class TestPluginsWithoutHooks:
    def test_a_bare_function_is_refused_with_what_to_write(self) -> None:
        def log_it(history: History, messages: tuple[tl.Message, ...]) -> None:
            pass

        with pytest.raises(TypeError) as caught:
            History(plugins=[log_it])  # type: ignore[list-item]
        text = str(caught.value)
        assert "log_it" in text
        assert "after_append" in text
        assert "subscribe" in text

    def test_an_object_with_no_hook_is_refused_by_use(self) -> None:
        with pytest.raises(TypeError, match="none of the plugin hooks"):
            History().use(object())  # type: ignore[arg-type]

    def test_a_single_plugin_given_as_plugins_is_named(self) -> None:
        with pytest.raises(TypeError, match=r"plugins=\[.*\]"):
            History(plugins=tl.context.ToolResultMasking())  # type: ignore[arg-type]


class TestListeners:
    def test_a_listener_taking_no_argument_is_called(self) -> None:
        calls: list[str] = []
        errors: list[Exception] = []
        history = History(on_listener_error=lambda error, event, listener: errors.append(error))
        history.subscribe(lambda: calls.append("changed"))
        history.append(tl.user_message("a"))
        history.reset()
        assert calls == ["changed", "changed"]
        assert errors == []

    def test_a_listener_that_needs_two_arguments_is_refused(self) -> None:
        def listener(event: HistoryEvent, extra: int) -> None:
            pass

        with pytest.raises(TypeError, match=r"listener .*one argument"):
            History().subscribe(listener)  # type: ignore[arg-type]

    def test_an_async_listener_is_awaited(self) -> None:
        seen: list[str] = []
        errors: list[Exception] = []

        async def listener(event: HistoryEvent) -> None:
            await asyncio.sleep(0)
            if event.kind == "reset":
                raise RuntimeError("boom")
            seen.append(event.kind)

        async def main() -> None:
            history = History(on_listener_error=lambda error, event, listener: errors.append(error))
            history.subscribe(listener)
            history.append(tl.user_message("a"))
            history.reset()
            await history.flush()

        with warnings.catch_warnings():
            warnings.simplefilter("error")
            asyncio.run(main())
        assert seen == ["append"]
        assert [str(error) for error in errors] == ["boom"]

    def test_builtins_and_callables_with_one_argument_still_work(self) -> None:
        events: list[HistoryEvent] = []
        history = History()
        history.subscribe(events.append)

        class Callback:
            def __call__(self, event: HistoryEvent, *rest: object) -> None:
                events.append(event)

        history.subscribe(Callback())
        history.append(tl.user_message("a"))
        assert [event.kind for event in events] == ["append", "append"]
