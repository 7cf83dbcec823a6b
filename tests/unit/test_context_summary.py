"""Unit tests for threadline.context.summary (RollingSummary) and History.reduce."""

from __future__ import annotations

import asyncio
import pickle
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from typing import Any

import pytest

import threadline as tl
from threadline.context import RollingSummary
from threadline.context import is_summary
from threadline.context.summary import SUMMARY_KEY
from threadline.history import History
from threadline.history import HistoryEvent
from threadline.integrity import prepare_messages

SYSTEM = tl.system_message("Be brief.", id="s")


def turn(n: int, *, when: datetime | None = None) -> list[tl.Message]:
    kw: dict[str, Any] = {"created_at": when} if when else {}
    return [
        tl.user_message(f"question {n}", id=f"u{n}", **kw),
        tl.assistant_message(tl.tool_call_part(f"c{n}", "lookup", {"n": n}), id=f"a{n}", **kw),
        tl.tool_message(tl.tool_result_part(f"c{n}", f"result {n}"), id=f"t{n}", **kw),
        tl.assistant_message(f"answer {n}", id=f"b{n}", **kw),
    ]


def conversation(turns: int) -> list[tl.Message]:
    return [SYSTEM, *(m for n in range(turns) for m in turn(n))]


class Recorder:
    """A sync summarizer that records its calls and names what it summarized."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], str | None]] = []

    def __call__(self, messages: list[tl.Message], previous: str | None) -> str:
        self.calls.append(([m.id for m in messages], previous))
        return f"summary of {len(messages)} messages"


def ids(messages: Any) -> list[str]:
    return [m.id for m in messages]


def summary_of(history: History) -> tl.Message:
    (summary,) = [m for m in history if is_summary(m)]
    return summary


class TestReduceByHand:
    def test_without_options_everything_but_the_newest_unit(self) -> None:
        summarize = Recorder()
        history = History(conversation(2), plugins=[RollingSummary(summarize)])
        assert asyncio.run(history.reduce()) is True
        assert summarize.calls == [(["u0", "a0", "t0", "b0", "u1", "a1", "t1"], None)]
        summary = summary_of(history)
        assert ids(history) == ["s", summary.id, "b1"]
        assert summary.role == "user"
        assert summary.metadata[SUMMARY_KEY] is True
        assert summary.text == "summary of 7 messages"

    def test_the_previous_summary_is_passed_back_and_replaced(self) -> None:
        summarize = Recorder()
        history = History(conversation(1), plugins=[RollingSummary(summarize)])
        asyncio.run(history.reduce())
        history.extend(turn(1))
        asyncio.run(history.reduce())
        assert summarize.calls[1] == (["b0", "u1", "a1", "t1"], "summary of 3 messages")
        assert len([m for m in history if is_summary(m)]) == 1
        assert ids(history)[0] == "s"
        assert ids(history)[-1] == "b1"

    def test_max_messages_keeps_that_many_verbatim(self) -> None:
        summarize = Recorder()
        history = History(conversation(3), plugins=[RollingSummary(summarize)])
        asyncio.run(history.reduce(max_messages=5))
        kept = [m for m in history if not is_summary(m)]
        assert ids(kept) == ["s", "u2", "a2", "t2", "b2"]
        assert len(history) == 6  # the summary comes on top

    def test_max_tokens_and_a_history_that_fits(self) -> None:
        summarize = Recorder()
        history = History(conversation(3), plugins=[RollingSummary(summarize)])
        assert asyncio.run(history.reduce(max_tokens=10_000)) is False
        assert summarize.calls == []  # nothing to summarize: the summarizer is not called
        assert asyncio.run(history.reduce(max_tokens=60)) is True
        assert sum(map(tl.tokens.estimate_tokens, [m for m in history if not is_summary(m)])) <= 60

    def test_older_than_a_datetime_or_an_age(self) -> None:
        now = datetime.now(timezone.utc)
        messages = [
            *turn(0, when=now - timedelta(days=3)),
            *turn(1, when=now - timedelta(days=2)),
            *turn(2, when=now),
        ]
        summarize = Recorder()
        history = History(messages, plugins=[RollingSummary(summarize)])
        asyncio.run(history.reduce(older_than=timedelta(days=1)))
        assert summarize.calls[0][0] == ids(messages[:8])
        history = History(messages, plugins=[RollingSummary(summarize)])
        naive = (now - timedelta(days=2, hours=12)).replace(tzinfo=None)  # counts as UTC
        asyncio.run(history.reduce(older_than=naive))
        assert summarize.calls[1][0] == ids(messages[:4])

    def test_messages_without_a_date_are_refused_not_silently_kept(self) -> None:
        summarize = Recorder()
        history = History(conversation(2), plugins=[RollingSummary(summarize)])
        with pytest.raises(tl.ValidationError, match="timestamps=True"):
            asyncio.run(history.reduce(older_than=timedelta(0)))
        assert summarize.calls == []

    def test_several_options_take_the_most_any_asks_for(self) -> None:
        summarize = Recorder()
        history = History(conversation(3), plugins=[RollingSummary(summarize)])
        asyncio.run(history.reduce(max_messages=100, max_tokens=30))
        assert len(summarize.calls[0][0]) == 9  # the token budget asks for more

    def test_defaults_from_the_constructor_and_overrides(self) -> None:
        summarize = Recorder()
        plugin = RollingSummary(summarize, max_messages=5)
        history = History(conversation(3), plugins=[plugin])
        asyncio.run(history.reduce())
        assert len(summarize.calls[0][0]) == 8
        history = History(conversation(3), plugins=[plugin])
        asyncio.run(history.reduce(max_messages=9))
        assert len(summarize.calls[1][0]) == 4

    def test_pairs_are_never_split(self) -> None:
        summarize = Recorder()
        history = History(conversation(2), plugins=[RollingSummary(summarize)])
        asyncio.run(history.reduce(max_messages=4))  # "s t1 b1" would split a1 from t1
        assert ids(m for m in history if not is_summary(m)) == ["s", "a1", "t1", "b1"]
        prepare_messages(history.snapshot(), "strict")

    def test_an_async_summarizer(self) -> None:
        async def summarize(messages: list[tl.Message], previous: str | None) -> str:
            await asyncio.sleep(0)
            return "async summary"

        history = History(conversation(2), plugins=[RollingSummary(summarize)])
        assert asyncio.run(history.reduce()) is True
        assert summary_of(history).text == "async summary"

    def test_one_restore_event(self) -> None:
        history = History(conversation(2), plugins=[RollingSummary(Recorder())])
        events: list[HistoryEvent] = []
        history.subscribe(events.append)
        asyncio.run(history.reduce())
        assert [e.kind for e in events] == ["restore"]
        assert list(events[0].messages) == list(history)

    def test_system_messages_in_the_summarized_part_are_kept_before_the_summary(self) -> None:
        messages = [*turn(0), tl.system_message("late rule", id="s2"), *turn(1)]
        history = History(messages, plugins=[RollingSummary(Recorder())])
        asyncio.run(history.reduce())
        assert ids(history)[0] == "s2"
        assert is_summary(history[1])

    def test_appends_during_an_async_summary_are_kept_after_it(self) -> None:
        async def main() -> History:
            gate = asyncio.Event()

            async def summarize(messages: list[tl.Message], previous: str | None) -> str:
                await gate.wait()
                return "s"

            history = History(conversation(2), plugins=[RollingSummary(summarize)])
            task = asyncio.create_task(history.reduce())
            await asyncio.sleep(0)
            history.append(tl.user_message("meanwhile", id="late"))
            gate.set()
            await task
            return history

        history = asyncio.run(main())
        assert ids(history)[-2:] == ["b1", "late"]


class TestReduceFailures:
    def test_no_reducing_plugin_is_nothing_to_do(self) -> None:
        history = History(conversation(1))
        assert asyncio.run(history.reduce(max_messages=1)) is False
        assert list(history) == conversation(1)

    def test_a_summarizer_error_is_a_plugin_error_and_nothing_changes(self) -> None:
        def summarize(messages: list[tl.Message], previous: str | None) -> str:
            raise ConnectionError("model unreachable")

        history = History(conversation(2), plugins=[RollingSummary(summarize)])
        before = history.snapshot()
        with pytest.raises(tl.PluginError, match="model unreachable") as caught:
            asyncio.run(history.reduce())
        assert isinstance(caught.value.__cause__, ConnectionError)
        assert history.snapshot() is before

    def test_a_summary_that_is_not_text(self) -> None:
        history = History(conversation(2), plugins=[RollingSummary(lambda m, p: 42)])  # type: ignore[arg-type,return-value]
        with pytest.raises(tl.PluginError, match="returned int"):
            asyncio.run(history.reduce())
        assert not any(is_summary(m) for m in history)

    def test_a_reset_while_summarizing_replaces_nothing(self) -> None:
        async def main() -> History:
            history = History(conversation(2))

            async def summarize(messages: list[tl.Message], previous: str | None) -> str:
                history.reset()
                history.append(tl.user_message("fresh start", id="new"))
                return "stale"

            history.use(RollingSummary(summarize))
            with pytest.raises(tl.PluginError, match="nothing was replaced"):
                await history.reduce()
            return history

        assert ids(asyncio.run(main())) == ["new"]

    def test_one_reduce_at_a_time(self) -> None:
        async def main() -> None:
            gate = asyncio.Event()

            async def summarize(messages: list[tl.Message], previous: str | None) -> str:
                await gate.wait()
                return "s"

            history = History(conversation(2), plugins=[RollingSummary(summarize)])
            first = asyncio.create_task(history.reduce())
            await asyncio.sleep(0)
            with pytest.raises(tl.PluginError, match="already running"):
                await history.reduce()
            gate.set()
            assert await first is True
            history.extend(turn(5))
            assert await history.reduce() is True  # the guard was released

        asyncio.run(main())

    @pytest.mark.parametrize(
        ("options", "error"),
        [
            ({"max_tokens": 0}, ValueError),
            ({"max_messages": "5"}, TypeError),
            ({"older_than": 3600}, TypeError),
        ],
    )
    def test_bad_options(self, options: dict[str, Any], error: type[Exception]) -> None:
        with pytest.raises(error, match=next(iter(options))):
            RollingSummary(Recorder(), **options)
        history = History(conversation(1), plugins=[RollingSummary(Recorder())])
        with pytest.raises(tl.PluginError, match=next(iter(options))):
            asyncio.run(history.reduce(**options))

    def test_bad_constructor_arguments(self) -> None:
        with pytest.raises(TypeError, match="summarizer"):
            RollingSummary("not callable")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="auto_reduce_when"):
            RollingSummary(Recorder(), auto_reduce_when=1000)  # type: ignore[arg-type]


class TestAutoReduce:
    def test_a_sync_summarizer_runs_inside_append(self) -> None:
        summarize = Recorder()
        plugin = RollingSummary(summarize, auto_reduce_when=lambda h: len(h) > 6, max_messages=3)
        history = History([SYSTEM], plugins=[plugin])
        for message in conversation(3)[1:]:
            history.append(message)
            assert len([m for m in history if not is_summary(m)]) <= 6
        assert len(summarize.calls) >= 1
        assert len([m for m in history if is_summary(m)]) == 1

    def test_an_async_summarizer_without_a_running_loop_runs_before_append_returns(self) -> None:
        async def summarize(messages: list[tl.Message], previous: str | None) -> str:
            await asyncio.sleep(0)
            return "done in asyncio.run"

        plugin = RollingSummary(summarize, auto_reduce_when=lambda h: len(h) >= 9)
        history = History(conversation(2)[:-1], plugins=[plugin])
        history.append(conversation(2)[-1])
        assert summary_of(history).text == "done in asyncio.run"

    def test_an_async_summarizer_with_a_running_loop_runs_as_a_task(self) -> None:
        async def main() -> History:
            async def summarize(messages: list[tl.Message], previous: str | None) -> str:
                await asyncio.sleep(0)
                return "done in a task"

            plugin = RollingSummary(summarize, auto_reduce_when=lambda h: len(h) >= 9)
            history = History(conversation(2)[:-1], plugins=[plugin])
            history.append(conversation(2)[-1])
            assert not any(is_summary(m) for m in history)  # not yet: it is a task
            history.append(tl.user_message("meanwhile", id="late"))  # the guard holds
            await plugin.drain()
            return history

        history = asyncio.run(main())
        assert summary_of(history).text == "done in a task"
        assert ids(history)[-1] == "late"

    def test_errors_go_to_on_plugin_error(self) -> None:
        errors: list[tuple[Any, ...]] = []

        def summarize(messages: list[tl.Message], previous: str | None) -> str:
            raise RuntimeError("summarizer down")

        plugin = RollingSummary(summarize, auto_reduce_when=lambda h: True)
        history = History(
            conversation(1), plugins=[plugin], on_plugin_error=lambda *a: errors.append(a)
        )
        history.append(tl.user_message("x"))  # does not raise
        ((error, who, hook),) = errors
        assert (str(error), who, hook) == ("summarizer down", plugin, "after_append")
        assert len(history) == 6

    def test_background_errors_go_to_on_plugin_error(self) -> None:
        errors: list[tuple[Any, ...]] = []

        async def summarize(messages: list[tl.Message], previous: str | None) -> str:
            raise RuntimeError("async summarizer down")

        async def main() -> None:
            plugin = RollingSummary(summarize, auto_reduce_when=lambda h: True)
            history = History(
                conversation(1), plugins=[plugin], on_plugin_error=lambda *a: errors.append(a)
            )
            history.append(tl.user_message("x"))
            await plugin.drain()

        asyncio.run(main())
        ((error, _, hook),) = errors
        assert (str(error), hook) == ("async summarizer down", "reduce")

    def test_a_summarizer_that_appends_does_not_reduce_again(self) -> None:
        calls: list[int] = []
        history = History(conversation(2))

        def summarize(messages: list[tl.Message], previous: str | None) -> str:
            calls.append(1)
            history.append(tl.internal_message("summarizing...", id=f"note{len(calls)}"))
            return "s"

        history.use(RollingSummary(summarize, auto_reduce_when=lambda h: True))
        history.append(tl.user_message("go", id="go"))
        assert calls == [1]
        assert ids(history)[-2:] == ["go", "note1"]


class TestPickling:
    def test_a_history_with_a_summary_plugin_pickles(self) -> None:
        history = History(conversation(2), plugins=[RollingSummary(_module_summarizer)])
        thawed = pickle.loads(pickle.dumps(history))
        assert asyncio.run(thawed.reduce()) is True
        assert summary_of(thawed).text == "module-level"


def _module_summarizer(messages: list[tl.Message], previous: str | None) -> str:
    return "module-level"
