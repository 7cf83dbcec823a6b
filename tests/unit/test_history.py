"""Unit tests for threadline.history: History, Snapshot, HistoryEvent."""

from __future__ import annotations

import copy
import logging
import pickle
from collections.abc import Sequence
from typing import Any

import pytest

import threadline as tl
from threadline.history import History
from threadline.history import HistoryEvent
from threadline.history import Snapshot
from threadline.history import content_chars


def make(n: int, prefix: str = "m") -> list[tl.Message]:
    return [tl.user_message(f"text {i}", id=f"{prefix}{i}") for i in range(n)]


def recorder(history: History) -> list[HistoryEvent]:
    events: list[HistoryEvent] = []
    history.subscribe(events.append)
    return events


RECORDED_ERRORS: list[str] = []


def record_errors(error: Exception, event: HistoryEvent, listener: Any) -> None:
    """A module-level on_listener_error, so that it pickles."""
    RECORDED_ERRORS.append(str(error))


BAD_CALL = {
    "role": "assistant",
    "parts": [{"type": "tool_call", "id": "c", "name": "f", "arguments": {"x": float("nan")}}],
}


# -- Snapshot ----------------------------------------------------------------------------------


class TestSnapshotIdentity:
    def test_same_object_until_a_mutation(self) -> None:
        history = History(make(3))
        first = history.snapshot()
        assert history.snapshot() is first
        history.append(tl.user_message("more"))
        second = history.snapshot()
        assert second is not first
        assert history.snapshot() is second

    def test_reading_does_not_change_the_snapshot(self) -> None:
        history = History(make(3))
        first = history.snapshot()
        _ = len(history), list(history), history[0], history.last, history.size
        assert history.snapshot() is first

    def test_old_snapshot_unchanged_by_append_and_extend(self) -> None:
        history = History(make(3))
        before = history.snapshot()
        history.append(tl.user_message("four"))
        history.extend(make(5, "x"))
        assert list(before) == make(3)
        assert len(before) == 3
        assert before.version == 0
        assert len(history.snapshot()) == 9

    @pytest.mark.parametrize("mutation", ["reset", "restore"])
    def test_old_snapshot_unchanged_by_reset_and_restore(self, mutation: str) -> None:
        history = History(make(3))
        before = history.snapshot()
        if mutation == "reset":
            history.reset()
        else:
            history.restore(make(2, "r"))
        history.append(tl.user_message("after"))
        assert list(before) == make(3)
        assert before.version == 0

    def test_version_follows_mutations(self) -> None:
        history = History(make(2))
        assert history.snapshot().version == history.version == 0
        history.append(tl.user_message("a"))
        history.extend(make(3, "x"))
        history.reset()
        history.restore(make(1))
        assert history.version == 4
        assert history.snapshot().version == 4


class TestSnapshotSequence:
    def test_is_a_sequence(self) -> None:
        snapshot = History(make(2)).snapshot()
        assert isinstance(snapshot, Sequence)

    def test_indexing(self) -> None:
        messages = make(5)
        snapshot = History(messages).snapshot()
        assert snapshot[0] == messages[0]
        assert snapshot[4] == messages[4]
        assert snapshot[-1] == messages[-1]
        assert snapshot[-5] == messages[0]

    @pytest.mark.parametrize("index", [5, -6, 100])
    def test_index_out_of_range(self, index: int) -> None:
        snapshot = History(make(5)).snapshot()
        with pytest.raises(IndexError):
            snapshot[index]

    def test_index_must_be_an_integer(self) -> None:
        snapshot = History(make(2)).snapshot()
        with pytest.raises(TypeError):
            snapshot["0"]  # type: ignore[call-overload]

    @pytest.mark.parametrize(
        "key",
        [
            slice(None),
            slice(1, 3),
            slice(-2, None),
            slice(None, -1),
            slice(3, 1),
            slice(None, None, 2),
            slice(None, None, -1),
            slice(4, 0, -2),
            slice(-100, 100),
        ],
    )
    def test_slicing_returns_a_tuple_like_list_slicing(self, key: slice) -> None:
        messages = make(5)
        history = History(make(1, "old"))
        history.restore(messages)
        snapshot = history.snapshot()
        history.append(tl.user_message("later"))  # storage past the snapshot's stop
        assert snapshot[key] == tuple(messages[key])
        assert isinstance(snapshot[key], tuple)

    def test_slicing_a_view_stops_at_its_stop(self) -> None:
        history = History(make(3))
        snapshot = history.snapshot()
        history.extend(make(3, "x"))
        assert snapshot[:] == tuple(make(3))
        assert snapshot[1:100] == tuple(make(3)[1:])

    def test_iteration_len_contains_reversed(self) -> None:
        messages = make(4)
        history = History(messages)
        snapshot = history.snapshot()
        history.append(tl.user_message("not in the snapshot", id="later"))
        assert list(snapshot) == messages
        assert len(snapshot) == 4
        assert messages[2] in snapshot
        assert history.last not in snapshot
        assert list(reversed(snapshot)) == messages[::-1]
        assert snapshot.index(messages[3]) == 3
        assert snapshot.count(messages[1]) == 1

    def test_empty(self) -> None:
        snapshot = History().snapshot()
        assert len(snapshot) == 0
        assert not snapshot
        assert list(snapshot) == []
        assert snapshot == []
        with pytest.raises(IndexError):
            snapshot[0]


class TestSnapshotEquality:
    def test_equal_to_list_tuple_and_snapshot(self) -> None:
        messages = make(3)
        snapshot = History(messages).snapshot()
        assert snapshot == messages
        assert messages == snapshot
        assert snapshot == tuple(messages)
        assert tuple(messages) == snapshot
        assert snapshot == History(messages).snapshot()
        assert snapshot == Snapshot(messages, version=7)

    def test_unequal(self) -> None:
        messages = make(3)
        snapshot = History(messages).snapshot()
        assert snapshot != messages[:2]
        assert snapshot != [*messages, messages[0]]
        assert snapshot != make(3, "other")
        assert snapshot != History(make(2)).snapshot()
        assert snapshot != "abc"
        assert snapshot != 3

    def test_empty_snapshot_is_not_equal_to_an_empty_string(self) -> None:
        assert History().snapshot() != ""
        assert History().snapshot() != b""

    def test_unhashable_like_a_list(self) -> None:
        with pytest.raises(TypeError):
            hash(History(make(1)).snapshot())


class TestSnapshotImmutability:
    def test_attributes_cannot_be_set_or_deleted(self) -> None:
        snapshot = History(make(2)).snapshot()
        with pytest.raises(AttributeError):
            snapshot.version = 9  # type: ignore[misc]
        with pytest.raises(AttributeError):
            snapshot._items = []
        with pytest.raises(AttributeError):
            del snapshot.version
        with pytest.raises(AttributeError):
            snapshot.anything = 1  # type: ignore[attr-defined]
        assert snapshot.version == 0

    def test_no_item_assignment(self) -> None:
        snapshot = History(make(2)).snapshot()
        with pytest.raises(TypeError):
            snapshot[0] = make(1)[0]  # type: ignore[index]


class TestSnapshotPickleCopyRepr:
    def test_pickle_keeps_messages_and_version(self) -> None:
        history = History(make(3))
        history.append(tl.user_message("x", id="x"))
        snapshot = history.snapshot()
        loaded = pickle.loads(pickle.dumps(snapshot))
        assert isinstance(loaded, Snapshot)
        assert loaded == snapshot
        assert loaded.version == 1

    def test_copy_is_the_same_object_and_deepcopy_is_equal(self) -> None:
        snapshot = History(make(3)).snapshot()
        assert copy.copy(snapshot) is snapshot
        deep = copy.deepcopy(snapshot)
        assert deep == snapshot
        assert deep.version == snapshot.version

    def test_repr_shows_version_length_and_messages(self) -> None:
        text = repr(History(make(2)).snapshot())
        assert text == "<Snapshot version=0 len=2 [user m0, user m1]>"

    def test_repr_of_a_long_snapshot_is_short(self) -> None:
        text = repr(History(make(1000)).snapshot())
        shown = "user m0, user m1, user m2, ..., user m998, user m999"
        assert text == f"<Snapshot version=0 len=1000 [{shown}]>"


class TestSnapshotConstructor:
    def test_builds_a_standalone_snapshot(self) -> None:
        messages = make(2)
        snapshot = Snapshot(messages, version=3)
        messages.append(tl.user_message("not copied"))
        assert list(snapshot) == make(2)
        assert snapshot.version == 3

    def test_validates_mappings(self) -> None:
        snapshot = Snapshot([{"role": "user", "parts": [{"type": "text", "text": "hi"}]}])
        assert snapshot[0].text == "hi"
        with pytest.raises(tl.ValidationError) as caught:
            Snapshot([BAD_CALL])
        assert caught.value.errors[0].path == "messages[0].parts[0].arguments"


# -- History: construction ---------------------------------------------------------------------


class TestConstruction:
    def test_initial_messages_are_the_starting_state(self) -> None:
        history = History(make(3))
        assert list(history) == make(3)
        assert history.version == 0

    def test_accepts_mappings_and_iterables(self) -> None:
        history = History(m.model_dump(mode="json") for m in make(2))
        assert list(history) == make(2)

    def test_does_not_keep_the_callers_list(self) -> None:
        messages = make(2)
        history = History(messages)
        messages.append(tl.user_message("later"))
        history.append(tl.user_message("mine"))
        assert len(messages) == 3
        assert len(history) == 3
        assert history[2].text == "mine"

    def test_invalid_initial_messages_raise_with_a_path(self) -> None:
        with pytest.raises(tl.ValidationError) as caught:
            History([*make(2), BAD_CALL])
        assert [e.path for e in caught.value.errors] == ["messages[2].parts[0].arguments"]

    @pytest.mark.parametrize(
        ("options", "error"),
        [
            ({"max_messages": 0}, ValueError),
            ({"max_tokens": -5}, ValueError),
            ({"max_messages": 2.5}, TypeError),
            ({"max_tokens": True}, TypeError),
            ({"token_counter": 42}, TypeError),
        ],
    )
    def test_bad_window_options_raise_naming_the_option(
        self, options: dict[str, Any], error: type[Exception]
    ) -> None:
        with pytest.raises(error, match=next(iter(options))):
            History(**options)

    def test_other_options_are_accepted(self) -> None:
        history = History(
            token_counter=lambda message: 1,
            on_listener_error=record_errors,
            on_plugin_error=lambda *args: None,
            plugins=(),
        )
        assert len(history) == 0


# -- History: reading --------------------------------------------------------------------------


class TestReading:
    def test_len_iteration_indexing_slicing(self) -> None:
        messages = make(4)
        history = History(messages)
        assert len(history) == 4
        assert list(history) == messages
        assert history[1] == messages[1]
        assert history[-1] == messages[-1]
        assert history[1:3] == tuple(messages[1:3])
        with pytest.raises(IndexError):
            history[4]

    def test_iteration_is_over_a_snapshot(self) -> None:
        history = History(make(3))
        seen = []
        for message in history:
            seen.append(message)
            if len(seen) == 1:
                history.append(tl.user_message("appended while iterating"))
        assert seen == make(3)

    def test_last(self) -> None:
        history = History()

        def last() -> tl.Message | None:  # read afresh: append and reset change it
            return history.last

        assert last() is None
        history.append(tl.user_message("one", id="one"))
        message = last()
        assert message is not None
        assert message.id == "one"
        history.reset()
        assert last() is None

    def test_system_messages_and_without_system(self) -> None:
        system_a = tl.system_message("be brief", id="s1")
        system_b = tl.system_message("be kind", id="s2")
        user = tl.user_message("hi", id="u")
        history = History([system_a, user])
        history.append(system_b)
        systems: tuple[tl.Message, ...] = (system_a, system_b)  # not narrowed past restore()
        assert history.system_messages == systems
        assert isinstance(history.system_messages, tuple)
        assert history.without_system() == [user]
        history.restore([user])
        assert history.system_messages == ()

    def test_without_system_returns_a_new_list(self) -> None:
        history = History(make(2))
        first = history.without_system()
        first.clear()
        assert history.without_system() == make(2)

    def test_get_tool_result(self) -> None:
        call = tl.tool_call_part("call_1", "weather", {"city": "Oslo"})
        result_1 = tl.tool_result_part("call_1", "4°C")
        result_2 = tl.tool_result_part("call_2", "ok")
        history = History([tl.user_message("?"), tl.assistant_message(call)])
        assert history.get_tool_result("call_1") is None
        history.append(tl.tool_message(result_1, result_2))
        assert history.get_tool_result("call_1") == result_1
        assert history.get_tool_result("call_2") == result_2
        assert history.get_tool_result("call_3") is None
        assert history.get_tool_result("call_1") is history[-1].parts[0]

    def test_get_tool_result_follows_extend_restore_and_reset(self) -> None:
        result = tl.tool_result_part("c", "done")
        history = History()
        history.extend([tl.user_message("x"), tl.tool_message(result)])
        assert history.get_tool_result("c") == result
        history.reset()
        assert history.get_tool_result("c") is None
        history.restore([tl.tool_message(result)])
        assert history.get_tool_result("c") == result
        assert History([tl.tool_message(result)]).get_tool_result("c") == result

    def test_get_tool_result_last_appended_wins(self) -> None:
        first = tl.tool_result_part("c", "first")
        second = tl.tool_result_part("c", "second")
        history = History([tl.tool_message(first), tl.tool_message(second)])
        assert history.get_tool_result("c") == second

    def test_repr(self) -> None:
        history = History(make(2))
        history.append(tl.user_message("x"))
        assert repr(history) == "History(3 messages, version=1)"


class TestSize:
    def test_counts_every_kind_of_content(self) -> None:
        message = tl.assistant_message(
            "hello",  # 5
            tl.reasoning_part("think", signature="not counted", provider="anthropic"),  # 5
            tl.tool_call_part("c1", "f", {"city": "Zürich"}),  # {"city":"Zürich"} = 17
            tl.tool_call_part("c2", "g", "not json"),  # raw text, 8
            tl.tool_call_part("c3", "h", {}),  # {} = 2
            tl.file_part(b"\x00" * 100, "image/png"),  # 0
            tl.hook_part("approval", {"ok": True}),  # 0
        )
        assert content_chars(message) == 5 + 5 + 17 + 8 + 2
        results = tl.tool_message(
            tl.tool_result_part("c1", "sunny"),  # 5
            tl.tool_result_part("c2", ["ab", tl.file_part("https://x.test/a.png", "image/png")]),
        )
        assert content_chars(results) == 5 + 2
        history = History([message])
        history.append(results)
        assert history.size == 37 + 7

    def test_follows_mutations(self) -> None:
        history = History([tl.user_message("abc")])
        assert history.size == 3
        history.extend([tl.user_message("de"), tl.system_message("f")])
        assert history.size == 6
        history.restore([tl.user_message("0123456789")])
        assert history.size == 10
        history.reset()
        assert history.size == 0


# -- History: mutating -------------------------------------------------------------------------


class TestAppend:
    def test_appends_a_message(self) -> None:
        history = History(make(1))
        message = tl.user_message("next")
        history.append(message)
        assert history[-1] is message
        assert history.version == 1

    def test_validates_a_mapping(self) -> None:
        history = History()
        history.append({"role": "user", "parts": [{"type": "text", "text": "hi"}]})
        assert history[0].role == "user"
        assert history[0].text == "hi"

    def test_invalid_mapping_raises_and_changes_nothing(self) -> None:
        history = History(make(1))
        events = recorder(history)
        before = history.snapshot()
        with pytest.raises(tl.ValidationError) as caught:
            history.append(BAD_CALL)
        assert [e.path for e in caught.value.errors] == ["message.parts[0].arguments"]
        assert isinstance(caught.value, ValueError)
        assert history.snapshot() is before
        assert history.version == 0
        assert events == []

    @pytest.mark.parametrize("value", ["hello", 3, None, [{"role": "user"}]])
    def test_not_a_message_raises(self, value: Any) -> None:
        history = History()
        with pytest.raises(tl.ValidationError, match="not a message"):
            history.append(value)
        assert len(history) == 0

    def test_wrong_role_part_names_the_part(self) -> None:
        bad = {
            "role": "user",
            "parts": [{"type": "tool_call", "id": "c", "name": "f", "arguments": {}}],
        }
        with pytest.raises(tl.ValidationError) as caught:
            History().append(bad)
        assert caught.value.errors[0].path == "message.parts[0]"


class TestExtend:
    def test_one_event_and_one_version_step_for_the_batch(self) -> None:
        history = History()
        events = recorder(history)
        history.extend(make(3))
        assert list(history) == make(3)
        assert history.version == 1
        assert [(e.kind, e.messages, e.version) for e in events] == [("extend", tuple(make(3)), 1)]

    def test_empty_batch_changes_nothing(self) -> None:
        history = History(make(1))
        events = recorder(history)
        before = history.snapshot()
        history.extend([])
        history.extend(iter(()))
        assert history.version == 0
        assert history.snapshot() is before
        assert events == []

    def test_accepts_a_generator_and_mappings(self) -> None:
        history = History()
        history.extend(m.model_dump(mode="json") if i % 2 else m for i, m in enumerate(make(4)))
        assert list(history) == make(4)

    def test_invalid_item_raises_with_its_path_and_changes_nothing(self) -> None:
        history = History(make(1))
        events = recorder(history)
        with pytest.raises(tl.ValidationError) as caught:
            history.extend([*make(2, "x"), BAD_CALL])
        assert [e.path for e in caught.value.errors] == ["messages[2].parts[0].arguments"]
        assert list(history) == make(1)
        assert history.version == 0
        assert events == []

    def test_every_problem_is_listed(self) -> None:
        with pytest.raises(tl.ValidationError) as caught:
            History().extend([BAD_CALL, make(1)[0], "oops", {"role": "robot", "parts": []}])  # type: ignore[list-item]
        paths = [e.path for e in caught.value.errors]
        assert paths[0] == "messages[0].parts[0].arguments"
        assert "messages[2]" in paths
        assert any(path.startswith("messages[3]") for path in paths)
        assert "nothing was changed" in str(caught.value)

    @pytest.mark.parametrize(
        "value",
        [tl.user_message("one"), {"role": "user"}, "text", 42],
        ids=["message", "mapping", "str", "int"],
    )
    def test_not_an_iterable_of_messages(self, value: Any) -> None:
        with pytest.raises(tl.ValidationError, match="iterable of messages"):
            History().extend(value)

    def test_a_single_message_gets_a_hint(self) -> None:
        with pytest.raises(tl.ValidationError, match="wrap a single message in a list"):
            History().extend(tl.user_message("one"))  # type: ignore[arg-type]


class TestResetRestore:
    def test_reset_clears_and_notifies_once(self) -> None:
        history = History(make(3))
        events = recorder(history)
        history.reset()
        assert list(history) == []
        assert len(history) == 0
        assert [(e.kind, e.messages, e.version) for e in events] == [("reset", (), 1)]

    def test_reset_of_an_empty_history_is_still_a_mutation(self) -> None:
        history = History()
        events = recorder(history)
        history.reset()
        assert history.version == 1
        assert [e.kind for e in events] == ["reset"]

    def test_restore_replaces_everything_and_notifies_once(self) -> None:
        history = History(make(3))
        events = recorder(history)
        history.restore(make(2, "r"))
        assert list(history) == make(2, "r")
        assert [(e.kind, e.messages, e.version) for e in events] == [
            ("restore", tuple(make(2, "r")), 1)
        ]

    def test_restore_an_earlier_snapshot_undoes(self) -> None:
        history = History(make(2))
        earlier = history.snapshot()
        history.extend(make(3, "x"))
        history.restore(earlier)
        assert list(history) == make(2)
        history.append(tl.user_message("new"))
        assert list(earlier) == make(2)
        assert len(history) == 3

    def test_restore_validates_first(self) -> None:
        history = History(make(2))
        events = recorder(history)
        with pytest.raises(tl.ValidationError) as caught:
            history.restore([{"role": "user", "parts": [{"type": "text", "text": 1}]}])
        assert caught.value.errors[0].path == "messages[0].parts[0].text"
        assert list(history) == make(2)
        assert history.version == 0
        assert events == []

    def test_restore_accepts_mappings(self) -> None:
        history = History()
        history.restore([m.model_dump(mode="json") for m in make(2)])
        assert list(history) == make(2)


# -- subscribe ---------------------------------------------------------------------------------


class TestSubscribe:
    def test_events_describe_each_mutation(self) -> None:
        history = History()
        events = recorder(history)
        one = tl.user_message("one")
        history.append(one)
        history.extend(make(2))
        history.reset()
        history.restore(make(1))
        assert [(e.kind, e.messages, e.version) for e in events] == [
            ("append", (one,), 1),
            ("extend", tuple(make(2)), 2),
            ("reset", (), 3),
            ("restore", tuple(make(1)), 4),
        ]

    def test_event_snapshot_is_the_state_after_the_mutation(self) -> None:
        history = History(make(1))
        events = recorder(history)
        history.append(tl.user_message("two"))
        event = events[0]
        assert event.snapshot is history.snapshot()
        assert event.snapshot.version == event.version
        history.append(tl.user_message("three"))
        assert len(event.snapshot) == 2

    def test_listeners_run_in_subscription_order(self) -> None:
        history = History()
        calls: list[str] = []
        history.subscribe(lambda event: calls.append("a"))
        history.subscribe(lambda event: calls.append("b"))
        history.subscribe(lambda event: calls.append("c"))
        history.append(tl.user_message("x"))
        assert calls == ["a", "b", "c"]

    def test_unsubscribe_stops_events_and_is_idempotent(self) -> None:
        history = History()
        events: list[HistoryEvent] = []
        unsubscribe = history.subscribe(events.append)
        history.append(tl.user_message("seen"))
        unsubscribe()
        unsubscribe()
        history.append(tl.user_message("not seen"))
        assert len(events) == 1

    def test_the_same_listener_twice_gets_each_event_twice(self) -> None:
        history = History()
        events: list[HistoryEvent] = []
        first = history.subscribe(events.append)
        history.subscribe(events.append)
        history.append(tl.user_message("x"))
        assert len(events) == 2
        first()
        history.append(tl.user_message("y"))
        assert len(events) == 3

    def test_a_new_listener_does_not_see_earlier_events(self) -> None:
        history = History()
        history.append(tl.user_message("before"))
        events = recorder(history)
        assert events == []

    def test_not_callable(self) -> None:
        with pytest.raises(TypeError, match="callable"):
            History().subscribe("print")  # type: ignore[arg-type]

    def test_listener_reads_the_mutated_history(self) -> None:
        history = History()
        seen: list[tuple[int, int, tl.Message | None]] = []
        history.subscribe(lambda event: seen.append((len(history), history.version, history.last)))
        message = tl.user_message("x")
        history.append(message)
        assert seen == [(1, 1, message)]

    def test_listener_mutation_is_delivered_after_the_current_event(self) -> None:
        history = History()
        log: list[tuple[str, int]] = []

        def echo(event: HistoryEvent) -> None:
            log.append(("echo", event.version))
            if event.kind == "append" and event.messages[0].role == "user":
                history.append(tl.assistant_message("echo"))

        history.subscribe(echo)
        history.subscribe(lambda event: log.append(("second", event.version)))
        history.append(tl.user_message("hi"))
        assert log == [("echo", 1), ("second", 1), ("echo", 2), ("second", 2)]
        assert [m.role for m in history] == ["user", "assistant"]

    def test_unsubscribed_during_delivery_gets_nothing_more(self) -> None:
        history = History()
        events: list[HistoryEvent] = []
        unsubscribe_second: list[Any] = []

        def first(event: HistoryEvent) -> None:
            if event.version == 1:
                history.append(tl.user_message("queued"))
                unsubscribe_second[0]()

        history.subscribe(first)
        unsubscribe_second.append(history.subscribe(events.append))
        history.append(tl.user_message("x"))
        assert events == []  # neither the event being delivered nor the queued one
        assert history.version == 2


class TestListenerErrors:
    def test_a_raising_listener_breaks_nothing(self) -> None:
        errors: list[tuple[Exception, HistoryEvent, Any]] = []
        history = History(on_listener_error=lambda *args: errors.append(args))
        before: list[int] = []
        after: list[int] = []

        def boom(event: HistoryEvent) -> None:
            raise RuntimeError("listener bug")

        history.subscribe(lambda event: before.append(event.version))
        history.subscribe(boom)
        history.subscribe(lambda event: after.append(event.version))
        history.append(tl.user_message("x"))
        history.extend(make(2))
        assert len(history) == 3
        assert before == after == [1, 2]
        assert [(str(e), ev.version, listener) for e, ev, listener in errors] == [
            ("listener bug", 1, boom),
            ("listener bug", 2, boom),
        ]

    def test_default_handler_logs(self, caplog: pytest.LogCaptureFixture) -> None:
        history = History()

        def boom(event: HistoryEvent) -> None:
            raise RuntimeError("listener bug")

        history.subscribe(boom)
        with caplog.at_level(logging.ERROR, logger="threadline"):
            history.append(tl.user_message("x"))
        [record] = caplog.records
        assert record.name == "threadline"
        assert "'append' event (version 1)" in record.getMessage()
        assert record.exc_info is not None
        assert str(record.exc_info[1]) == "listener bug"
        assert len(history) == 1

    def test_a_raising_error_handler_is_logged_too(self, caplog: pytest.LogCaptureFixture) -> None:
        def bad_handler(*args: Any) -> None:
            raise ValueError("handler bug")

        history = History(on_listener_error=bad_handler)
        calls: list[int] = []
        history.subscribe(lambda event: 1 / 0)
        history.subscribe(lambda event: calls.append(event.version))
        with caplog.at_level(logging.ERROR, logger="threadline"):
            history.append(tl.user_message("x"))
        assert calls == [1]
        assert "on_listener_error" in caplog.records[0].getMessage()

    def test_base_exceptions_propagate_and_delivery_resumes(self) -> None:
        history = History()
        seen: list[int] = []

        def interrupt(event: HistoryEvent) -> None:
            if event.version == 1:
                raise KeyboardInterrupt

        history.subscribe(interrupt)
        history.subscribe(lambda event: seen.append(event.version))
        with pytest.raises(KeyboardInterrupt):
            history.append(tl.user_message("x"))
        assert len(history) == 1
        history.append(tl.user_message("y"))
        assert seen == [2]


class TestHistoryEvent:
    def test_is_frozen(self) -> None:
        history = History()
        events = recorder(history)
        history.append(tl.user_message("x"))
        with pytest.raises(AttributeError):
            events[0].kind = "reset"  # type: ignore[misc]

    def test_repr_leaves_out_the_snapshot(self) -> None:
        history = History()
        events = recorder(history)
        history.reset()
        assert repr(events[0]) == "HistoryEvent(kind='reset', messages=(), version=1)"


# -- persistence and copies --------------------------------------------------------------------


class TestJson:
    def test_to_json_is_the_envelope(self) -> None:
        messages = make(3)
        assert History(messages).to_json() == tl.dump_json(messages)
        assert History(messages).to_json(indent=2) == tl.dump_json(messages, indent=2)

    def test_round_trip(self) -> None:
        history = History(
            [
                tl.system_message("s"),
                tl.user_message("u"),
                tl.tool_message(tl.tool_result_part("c", "r")),
            ]
        )
        loaded = History.from_json(history.to_json())
        assert isinstance(loaded, History)
        assert list(loaded) == list(history)
        assert loaded.get_tool_result("c") == history.get_tool_result("c")
        assert loaded.system_messages == history.system_messages

    def test_from_json_rejects_bad_data(self) -> None:
        with pytest.raises(tl.ValidationError):
            History.from_json(b'{"format": "threadline", "version": 1, "messages": [{"role": 1}]}')


class TestCopyAndPickle:
    def test_copy_has_messages_version_and_configuration_but_not_listeners(self) -> None:
        errors: list[Any] = []
        history = History(make(2), on_listener_error=lambda *args: errors.append(args))
        events = recorder(history)
        history.append(tl.user_message("x"))
        clone = history.copy()
        assert list(clone) == list(history)
        assert clone.version == history.version == 1
        clone.subscribe(lambda event: 1 / 0)
        clone.append(tl.user_message("only in the clone"))
        assert len(history) == 3
        assert len(clone) == 4
        assert len(events) == 1  # the original's listener heard nothing from the clone
        assert len(errors) == 1  # the clone reported through the copied handler

    def test_copy_module_uses_copy(self) -> None:
        history = History(make(2))
        clone = copy.copy(history)
        clone.append(tl.user_message("x"))
        assert len(history) == 2
        assert len(clone) == 3

    def test_pickle_keeps_messages_version_and_configuration(self) -> None:
        history = History(make(2), on_listener_error=record_errors)
        history.subscribe(lambda event: None)  # a lambda: pickling must not try to include it
        history.append(tl.tool_message(tl.tool_result_part("c", "r")))
        loaded = pickle.loads(pickle.dumps(history))
        assert list(loaded) == list(history)
        assert loaded.version == 1
        assert loaded.get_tool_result("c") == history.get_tool_result("c")
        assert loaded.size == history.size
        events = recorder(loaded)
        loaded.subscribe(lambda event: 1 / 0)
        RECORDED_ERRORS.clear()
        loaded.append(tl.user_message("after"))
        assert [e.version for e in events] == [2]
        assert RECORDED_ERRORS == ["division by zero"]  # the handler came along

    def test_pickles_naming_the_old_rebuild_path_still_load(self) -> None:
        # Pickles written before copies moved to _forking name threadline.history._rebuild_history.
        history = History(make(2), max_messages=5)
        new = pickle.dumps(history, protocol=2)  # protocol 2 names globals as "module\nname\n"
        assert b"threadline._forking\nrebuild_history\n" in new
        old = new.replace(
            b"threadline._forking\nrebuild_history\n", b"threadline.history\n_rebuild_history\n"
        )
        loaded = pickle.loads(old)
        assert type(loaded) is History
        assert list(loaded) == list(history)
        assert loaded.version == history.version

    def test_subclasses_survive_copy_and_from_json(self) -> None:
        class Custom(History):
            pass

        history = Custom(make(1))
        assert type(history.copy()) is Custom
        assert type(Custom.from_json(history.to_json())) is Custom
