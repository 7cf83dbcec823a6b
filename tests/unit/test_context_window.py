"""Unit tests for threadline.context.window (trim_messages) and History windows."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

import threadline as tl
from threadline.context import Trimmed
from threadline.context import trim_messages
from threadline.context.window import valid_cuts
from threadline.history import History
from threadline.history import HistoryEvent
from threadline.integrity import prepare_messages
from threadline.tokens import estimate_tokens


def ids(messages: Any) -> list[str]:
    return [message.id for message in messages]


def turn(n: int, *, calls: int = 1) -> list[tl.Message]:
    """A user question, an assistant calling ``calls`` tools, their results, an answer."""
    out = [tl.user_message(f"question {n}", id=f"u{n}")]
    if calls:
        parts = [tl.tool_call_part(f"c{n}.{i}", "lookup", {"n": n}) for i in range(calls)]
        out.append(tl.assistant_message(*parts, id=f"a{n}"))
        results = [tl.tool_result_part(f"c{n}.{i}", f"result {n}") for i in range(calls)]
        out.append(tl.tool_message(*results, id=f"t{n}"))
    out.append(tl.assistant_message(f"answer {n}", id=f"b{n}"))
    return out


SYSTEM = tl.system_message("Be brief.", id="s")
SUMMARY = tl.user_message("Earlier: ...", id="sum", metadata={"threadline.summary": True})
B = tl.assistant_message("more", id="b")


def conversation(turns: int, **kw: Any) -> list[tl.Message]:
    out = [SYSTEM]
    for n in range(turns):
        out.extend(turn(n, **kw))
    return out


# -- trim_messages -----------------------------------------------------------------------------


class TestTrimMessages:
    def test_no_budget_keeps_everything(self) -> None:
        messages = conversation(3)
        trimmed = trim_messages(messages)
        assert trimmed == Trimmed(messages, [], over_budget=False)
        assert trimmed.messages is not messages

    def test_a_snapshot_and_a_list_trim_alike(self) -> None:
        messages = [*conversation(3), tl.system_message("late", id="s2"), *turn(3)]
        history = History(messages)
        for source in (messages, history.snapshot(), tuple(messages)):
            trimmed = trim_messages(source, max_messages=7)
            assert ids(trimmed.messages) == ["s", "s2", "u3", "a3", "t3", "b3"]
            assert ids(trimmed.dropped) == ids(m for m in messages[:-4] if m.role != "system")

    def test_the_result_is_immutable_and_compares_by_value(self) -> None:
        messages = conversation(3)
        trimmed = trim_messages(messages, max_messages=5)
        again = trim_messages(messages, max_messages=5)
        assert trimmed == again
        assert trimmed == Trimmed(list(trimmed.messages), list(trimmed.dropped), False)
        assert trimmed != Trimmed(trimmed.messages, [], False)
        assert trimmed.dropped is trimmed.dropped  # built once, on first use
        with pytest.raises(AttributeError, match="immutable"):
            trimmed.over_budget = True
        assert "dropped=[Message(" in repr(again)

    def test_a_history_that_fits_is_unchanged(self) -> None:
        messages = conversation(3)
        trimmed = trim_messages(messages, max_messages=len(messages))
        assert trimmed.messages == messages
        assert trimmed.dropped == []
        assert not trimmed.over_budget

    def test_drops_whole_oldest_turns_and_keeps_the_system_message(self) -> None:
        messages = conversation(3)  # s + 3 turns of 4
        trimmed = trim_messages(messages, max_messages=9)
        assert ids(trimmed.messages) == ["s", "u1", "a1", "t1", "b1", "u2", "a2", "t2", "b2"]
        assert ids(trimmed.dropped) == ["u0", "a0", "t0", "b0"]

    def test_never_separates_a_call_from_its_results(self) -> None:
        # No question (see TestTheQuestionIsKept): sum a0 t0 b0 a1 t1 b1.
        messages = [SUMMARY, *(m for m in conversation(2, calls=2)[1:] if m.role != "user")]
        for budget in range(1, len(messages) + 1):
            kept = trim_messages(messages, max_messages=budget).messages
            calls = {call.id for m in kept for call in m.tool_calls}
            assert all(r.call_id in calls for m in kept for r in m.tool_results)
        # Two messages would fit "t1 b1" but t1 answers a1: the window starts at a1.
        assert ids(trim_messages(messages, max_messages=3).messages) == ["a1", "t1", "b1"]

    def test_starts_on_a_user_message_when_one_fits(self) -> None:
        messages = conversation(2)
        # 7 fit from a0 on ("s a0 t0 b0 u1 a1 t1 b1" is 8), but the window starts at u1.
        trimmed = trim_messages(messages, max_messages=8)
        assert ids(trimmed.messages) == ["s", "u1", "a1", "t1", "b1"]

    def test_without_a_user_message_in_reach_it_starts_on_an_assistant_unit(self) -> None:
        messages = [
            SUMMARY,  # a user message, but not a question
            *[
                m
                for n in range(4)
                for m in (
                    tl.assistant_message(tl.tool_call_part(f"c{n}", "step", {}), id=f"a{n}"),
                    tl.tool_message(tl.tool_result_part(f"c{n}", "ok"), id=f"t{n}"),
                )
            ],
        ]
        trimmed = trim_messages(messages, max_messages=5)
        assert ids(trimmed.messages) == ["a2", "t2", "a3", "t3"]

    def test_pairing_is_by_id_so_an_interjection_stays_with_its_call(self) -> None:
        messages = [
            tl.user_message("q", id="u0"),
            tl.assistant_message(tl.tool_call_part("c", "slow", {}), id="a"),
            tl.user_message("are you there?", id="u1"),  # typed while the tool ran
            tl.tool_message(tl.tool_result_part("c", "done"), id="t"),
            tl.assistant_message("yes", id="b"),
        ]
        # Starting at u1 would orphan the result, so the window starts at the call.
        trimmed = trim_messages(messages, max_messages=4)
        assert ids(trimmed.messages) == ["a", "u1", "t", "b"]
        assert not trimmed.over_budget
        assert valid_cuts(messages) == [0, 1, 4]

    def test_internal_messages_between_a_call_and_its_results_stay_with_them(self) -> None:
        messages = [
            tl.user_message("q", id="u"),
            tl.assistant_message(tl.tool_call_part("c", "delete_file", {}), id="a"),
            tl.internal_message(tl.hook_part("approval", {"granted": True}), id="i"),
            tl.tool_message(tl.tool_result_part("c", "deleted"), id="t"),
        ]
        trimmed = trim_messages(messages, max_messages=2)
        assert ids(trimmed.messages) == ["u", "a", "i", "t"]  # the question and all after it
        assert trimmed.over_budget
        prepare_messages(trimmed.messages, "strict")
        trimmed = trim_messages([SUMMARY, *messages[1:]], max_messages=2)
        assert ids(trimmed.messages) == ["a", "i", "t"]
        assert trimmed.over_budget

    def test_a_user_message_at_a_cut_is_preferred_to_an_internal_one(self) -> None:
        messages = [
            tl.user_message("q", id="u0"),
            tl.internal_message(tl.hook_part("ui", {}), id="i"),
            tl.user_message("q", id="u1"),
        ]
        assert ids(trim_messages(messages, max_messages=2).messages) == ["u1"]

    def test_internal_messages_are_units_of_their_own(self) -> None:
        # Issue 19 item 8: a user message followed by internal state was one unit, so nothing
        # was trimmed (13 messages under max_messages=5, flagged over budget). Since issue 36
        # item 5 what follows the question is kept whole, so the run here follows a summary.
        messages = [
            SUMMARY,
            *[tl.internal_message(tl.hook_part("ui", {"n": n}), id=f"i{n}") for n in range(12)],
        ]
        trimmed = trim_messages(messages, max_messages=5)
        assert ids(trimmed.messages) == ["i7", "i8", "i9", "i10", "i11"]
        assert not trimmed.over_budget
        # The next user message starts a turn: the window starts there, as with any unit.
        trimmed = trim_messages([*messages, tl.user_message("next", id="u2")], max_messages=5)
        assert ids(trimmed.messages) == ["u2"]
        assert not trimmed.over_budget

    def test_system_messages_are_pinned_in_order_and_counted(self) -> None:
        messages = [
            tl.system_message("first", id="s0"),
            *turn(0, calls=0),
            tl.system_message("second", id="s1"),
            *turn(1, calls=0),
            tl.system_message("third", id="s2"),
            *turn(2, calls=0),
        ]
        trimmed = trim_messages(messages, max_messages=6)
        assert ids(trimmed.messages) == ["s0", "s1", "s2", "u2", "b2"]
        assert all(m.role != "system" for m in trimmed.dropped)

    def test_a_system_message_inside_the_window_stays_in_place(self) -> None:
        messages = [*turn(0, calls=0), tl.system_message("mid", id="s"), *turn(1, calls=0)]
        trimmed = trim_messages(messages, max_messages=4)
        assert ids(trimmed.messages) == ["s", "u1", "b1"]
        trimmed = trim_messages([*turn(0, calls=0), *turn(1, calls=0), SYSTEM], max_messages=4)
        assert ids(trimmed.messages) == ["u1", "b1", "s"]

    def test_by_tokens(self) -> None:
        messages = conversation(3)
        budget = sum(map(estimate_tokens, messages[-4:])) + estimate_tokens(SYSTEM)
        trimmed = trim_messages(messages, max_tokens=budget)
        assert ids(trimmed.messages) == ["s", "u2", "a2", "t2", "b2"]
        trimmed = trim_messages(messages, max_tokens=budget - 1)
        assert ids(trimmed.messages) == ["s", "u2", "a2", "t2", "b2"]  # the question stays
        assert trimmed.over_budget
        without = [m for m in messages if m.role != "user"]  # no question
        trimmed = trim_messages(without, max_tokens=budget - estimate_tokens(messages[-4]))
        assert ids(trimmed.messages) == ["s", "a2", "t2", "b2"]
        assert not trimmed.over_budget

    def test_both_budgets_apply(self) -> None:
        messages = conversation(3)
        trimmed = trim_messages(messages, max_messages=100, max_tokens=estimate_tokens(SYSTEM) + 8)
        assert ids(trimmed.messages) == ["s", "u2", "a2", "t2", "b2"]
        assert trimmed.over_budget
        trimmed = trim_messages([*messages, SUMMARY, B], max_messages=100, max_tokens=20)
        assert ids(trimmed.messages) == ["s", "u2", "a2", "t2", "b2", "sum", "b"]
        trimmed = trim_messages(messages, max_messages=5, max_tokens=10_000)
        assert ids(trimmed.messages) == ["s", "u2", "a2", "t2", "b2"]

    def test_a_unit_too_big_on_its_own_is_kept_and_flagged(self) -> None:
        messages = [tl.user_message("small", id="u0"), tl.user_message("x" * 4000, id="u1")]
        trimmed = trim_messages(messages, max_tokens=100)
        assert ids(trimmed.messages) == ["u1"]
        assert ids(trimmed.dropped) == ["u0"]
        assert trimmed.over_budget

    def test_system_messages_over_budget_keep_the_question_or_the_newest_unit(self) -> None:
        messages = [tl.system_message("rules " * 100, id="s"), *turn(0)]
        trimmed = trim_messages(messages, max_tokens=20)
        assert ids(trimmed.messages) == ["s", "u0", "a0", "t0", "b0"]
        assert trimmed.over_budget
        trimmed = trim_messages([messages[0], SUMMARY, *messages[2:]], max_tokens=20)
        assert ids(trimmed.messages) == ["s", "b0"]
        assert trimmed.over_budget
        only_system = trim_messages([messages[0]], max_tokens=20)
        assert ids(only_system.messages) == ["s"]
        assert only_system.over_budget
        assert trim_messages([messages[0]], max_tokens=10_000).over_budget is False

    def test_a_dangling_call_at_the_end_is_kept_with_its_unit(self) -> None:
        messages = [
            *turn(0, calls=0),
            tl.user_message("next", id="u1"),
            tl.assistant_message(tl.tool_call_part("c", "f", {}), id="a1"),
        ]
        trimmed = trim_messages(messages, max_messages=2)
        assert ids(trimmed.messages) == ["u1", "a1"]

    def test_a_broken_tail_falls_back_to_the_newest_message_that_is_not_a_result(self) -> None:
        messages = [
            tl.user_message("q0", id="u0"),
            tl.user_message("q1", id="u1"),
            tl.tool_message(tl.tool_result_part("nowhere", "orphan"), id="t"),
        ]
        trimmed = trim_messages(messages, max_messages=1)
        assert ids(trimmed.messages) == ["u1", "t"]
        assert trimmed.over_budget

    def test_the_input_is_not_changed_and_mappings_are_accepted(self) -> None:
        messages = conversation(2)
        before = list(messages)
        trimmed = trim_messages([m.model_dump(mode="json") for m in messages], max_messages=5)  # type: ignore[misc]
        assert messages == before
        assert ids(trimmed.messages) == ["s", "u1", "a1", "t1", "b1"]

    @pytest.mark.parametrize(
        ("options", "error"),
        [
            ({"max_messages": 0}, ValueError),
            ({"max_tokens": 0}, ValueError),
            ({"max_messages": "3"}, TypeError),
            ({"max_tokens": False}, TypeError),
        ],
    )
    def test_bad_budgets(self, options: dict[str, Any], error: type[Exception]) -> None:
        with pytest.raises(error, match=next(iter(options))):
            trim_messages(conversation(1), **options)

    def test_not_a_sequence(self) -> None:
        with pytest.raises(tl.ValidationError):
            trim_messages(tl.user_message("x"), max_messages=1)  # type: ignore[arg-type]

    def test_a_bad_counter_result_names_the_counter(self) -> None:
        with pytest.raises(TypeError, match="returned str"):
            trim_messages(conversation(1), max_tokens=5, counter=lambda m: "3")  # type: ignore[arg-type]

    def test_strict_integrity_holds_after_trimming(self) -> None:
        messages = conversation(6, calls=3)
        for budget in range(1, len(messages) + 1):
            prepare_messages(trim_messages(messages, max_messages=budget).messages, "strict")


class TestValidCuts:
    def test_cuts_are_user_and_assistant_messages_outside_pairs(self) -> None:
        messages = conversation(2)  # s u0 a0 t0 b0 u1 a1 t1 b1
        assert valid_cuts(messages) == [1, 2, 4, 5, 6, 8]

    def test_internal_messages_outside_pairs_are_cuts(self) -> None:
        messages = [
            tl.user_message("q", id="u"),
            tl.internal_message("after the question", id="i0"),
            tl.assistant_message(tl.tool_call_part("c", "f", {}), id="a"),
            tl.internal_message("while the tool runs", id="i1"),
            tl.tool_message(tl.tool_result_part("c", "ok"), id="t"),
            tl.internal_message("after the result", id="i2"),
        ]
        assert valid_cuts(messages) == [0, 1, 2, 5]


# -- History windows ---------------------------------------------------------------------------


def recorder(history: History) -> list[HistoryEvent]:
    events: list[HistoryEvent] = []
    history.subscribe(events.append)
    return events


class TestHistoryWindow:
    def test_append_emits_append_then_trim_with_the_dropped_messages(self) -> None:
        history = History(conversation(1), max_messages=5)
        events = recorder(history)
        history.extend(turn(1)[:1])  # u1 alone fits? 6 messages: no, trims turn 0
        assert [e.kind for e in events] == ["extend", "trim"]
        assert ids(events[1].messages) == ["u0", "a0", "t0", "b0"]
        assert [e.version for e in events] == [1, 2]
        assert ids(events[0].snapshot) == ["s", "u0", "a0", "t0", "b0", "u1"]
        assert ids(events[1].snapshot) == ["s", "u1"]
        assert history.version == 2

    def test_a_window_is_trim_messages_after_every_append(self) -> None:
        messages = conversation(6, calls=2)
        for budget in (2, 3, 5, 8):
            history = History(max_messages=budget)
            expected: list[tl.Message] = []
            for message in messages:
                history.append(message)
                expected = trim_messages([*expected, message], max_messages=budget).messages
                assert list(history) == expected

    def test_initial_messages_are_trimmed_silently(self) -> None:
        history = History(conversation(3), max_messages=5)
        assert ids(history) == ["s", "u2", "a2", "t2", "b2"]
        assert history.version == 0

    def test_restore_trims_with_a_trim_event(self) -> None:
        history = History(max_messages=5)
        events = recorder(history)
        history.restore(conversation(2))
        assert [e.kind for e in events] == ["restore", "trim"]
        assert ids(events[0].messages) == ids(conversation(2))
        assert ids(history) == ["s", "u1", "a1", "t1", "b1"]

    def test_no_trim_no_trim_event(self) -> None:
        history = History(max_messages=50)
        events = recorder(history)
        history.extend(conversation(2))
        assert [e.kind for e in events] == ["extend"]

    def test_old_snapshots_survive_trims_and_compaction(self) -> None:
        history = History(max_messages=3)
        taken = []
        for n in range(200):
            history.append(tl.user_message(f"m{n}", id=f"m{n}"))
            taken.append((history.snapshot(), [f"m{k}" for k in range(max(0, n - 2), n + 1)]))
        for snapshot, expected in taken:
            assert ids(snapshot) == expected
        assert len(history._log.items) <= 8  # compacted: storage stays near the window's size

    def test_derived_state_follows_trims(self) -> None:
        history = History(max_messages=5)
        history.extend(conversation(3))
        assert history.total_tokens == sum(map(estimate_tokens, history))
        assert history.size == sum(map(tl.tokens.content_chars, history))
        assert history.get_tool_result("c0.0") is None  # dropped with its turn
        assert history.get_tool_result("c2.0") is not None
        assert history.system_messages == (SYSTEM,)

    def test_a_long_tool_loop_without_user_messages_keeps_trimming(self) -> None:
        history = History(max_tokens=200)
        history.append(SUMMARY)  # no question (with one, see TestTheQuestion)
        for n in range(500):
            history.append(tl.assistant_message(tl.tool_call_part(f"c{n}", "step", {}), id=f"a{n}"))
            history.append(tl.tool_message(tl.tool_result_part(f"c{n}", "ok"), id=f"t{n}"))
            assert history.total_tokens <= 200
            assert history[0].role == "assistant" or history[0].id == "sum"
        history.append(tl.user_message("stop", id="u2"))
        history.append(tl.assistant_message("x" * 700, id="big"))  # forces a trim
        assert ids(history) == ["u2", "big"]
        prepare_messages(history.snapshot(), "strict")

    def test_a_pending_call_followed_by_internal_state_is_not_orphaned(self) -> None:
        history = History(max_messages=3)
        history.append(tl.user_message("delete it", id="u"))
        history.append(tl.assistant_message(tl.tool_call_part("c", "delete", {}), id="a"))
        history.append(tl.internal_message(tl.hook_part("approval", {}), id="i1"))
        history.append(tl.internal_message(tl.hook_part("approval", {"ok": True}), id="i2"))
        history.append(tl.tool_message(tl.tool_result_part("c", "deleted"), id="t"))
        assert ids(history) == ["u", "a", "i1", "i2", "t"]  # the question and all after it
        prepare_messages(history.snapshot(), "strict")
        history = History(max_messages=3)
        history.append(SUMMARY)
        for message in [
            tl.assistant_message(tl.tool_call_part("c", "delete", {}), id="a"),
            tl.internal_message(tl.hook_part("approval", {}), id="i1"),
            tl.internal_message(tl.hook_part("approval", {"ok": True}), id="i2"),
            tl.tool_message(tl.tool_result_part("c", "deleted"), id="t"),
        ]:
            history.append(message)
        assert ids(history) == ["a", "i1", "i2", "t"]
        prepare_messages(history.snapshot(), "strict")

    def test_internal_messages_are_trimmed_to_the_bound_unless_after_the_question(
        self,
    ) -> None:
        # Issue 19 item 8: 13 messages were kept under max_messages=5, then the next user
        # message dropped all of them at once. Issue 36 item 5: the question and what follows
        # it are kept whole, so a run after a summary is trimmed, one after a question is not.
        history = History(max_messages=5)
        history.append(SUMMARY)
        for n in range(12):
            history.append(tl.internal_message(tl.hook_part("ui", {"n": n}), id=f"i{n}"))
            assert len(history) <= 5
        assert ids(history) == ["i7", "i8", "i9", "i10", "i11"]
        history.append(tl.user_message("next", id="u2"))
        assert ids(history) == ["u2"]
        for n in range(6):
            history.append(tl.internal_message(tl.hook_part("ui", {"n": n}), id=f"j{n}"))
        assert ids(history) == ["u2", "j0", "j1", "j2", "j3", "j4", "j5"]
        assert trim_messages(history.snapshot(), max_messages=5).over_budget
        prepare_messages(history.snapshot(), "strict")

    def test_trimmed_results_answering_calls_that_come_back_are_orphans(self) -> None:
        # A result whose call was dropped: no window may keep it at its start.
        history = History(max_messages=2)
        history.extend([tl.user_message("a", id="u0"), tl.user_message("b", id="u1")])
        history.append(tl.tool_message(tl.tool_result_part("gone", "late"), id="t"))
        assert ids(history) == ["u1", "t"]
        history.append(tl.user_message("c", id="u2"))
        assert ids(history) == ["u2"]

    def test_a_remembered_user_search_learns_of_results_that_arrive_later(self) -> None:
        # After a fruitless search for a user message, the history remembers where it stopped.
        # A result arriving later for a call inside the searched span must still rule out the
        # user message typed before that result (it would be orphaned).
        def call(id: str, *calls: str) -> tl.Message:
            return tl.assistant_message(*(tl.tool_call_part(c, "f", {}) for c in calls), id=id)

        def results(id: str, *calls: str) -> tl.Message:
            return tl.tool_message(*(tl.tool_result_part(c, "r") for c in calls), id=id)

        messages = [
            call("a1", "y"),
            results("t1", "y"),
            tl.assistant_message("x" * 200, id="big"),
            call("a2", "x"),
            call("a3", "y"),
            results("t2", "x", "y"),
            tl.user_message("u", id="u"),  # typed while more results were on their way
            results("t3", "y", "x"),  # answers a2 and a3 again (a defect, but a real one)
        ]
        history = History(max_tokens=74)
        expected: list[tl.Message] = []
        for message in messages:
            history.append(message)
            expected = trim_messages([*expected, message], max_tokens=74).messages
            assert ids(history) == ids(expected)
        assert ids(history) == ["a2", "a3", "t2", "u", "t3"]

    def test_copy_and_pickle_keep_the_window(self) -> None:
        history = History(conversation(1), max_messages=5)
        for clone in (history.copy(), pickle.loads(pickle.dumps(history))):
            clone.extend(turn(1))
            assert ids(clone) == ["s", "u1", "a1", "t1", "b1"]
            assert clone.total_tokens == sum(map(estimate_tokens, clone))

    def test_reset_then_append(self) -> None:
        history = History(conversation(3), max_messages=5)
        history.reset()
        assert len(history) == 0
        assert history.total_tokens == 0
        history.extend(conversation(1))
        assert ids(history) == ["s", "u0", "a0", "t0", "b0"]

    def test_messages_for_model_passes_strict_after_trims(self) -> None:
        history = History(max_tokens=60)
        for message in conversation(10, calls=2):
            history.append(message)
            if message.role != "assistant" or not message.tool_calls:
                history.messages_for_model("strict")


def test_a_message_appended_twice_keeps_its_result_indexed_while_one_copy_is_left() -> None:
    result = tl.tool_message(tl.tool_result_part("c", "r"), id="t")
    history = History(max_messages=2)
    history.extend([tl.assistant_message(tl.tool_call_part("c", "f", {}), id="a1"), result])
    # The same call id and the very same result object again (defects, but possible).
    history.extend([tl.assistant_message(tl.tool_call_part("c", "f", {}), id="a2"), result])
    assert ids(history) == ["a2", "t"]
    assert history.get_tool_result("c") is result.parts[0]


# -- the question is kept (issue 36 item 5) ----------------------------------------------------


def four_call_round(*, split: bool = False) -> list[tl.Message]:
    """A system message, a question, an assistant making four calls and their results: in one
    tool message, or (``split``) one tool message per result."""
    calls = [tl.tool_call_part(f"c{n}", "lookup", {"n": n}) for n in range(4)]
    results = [tl.tool_result_part(f"c{n}", f"result {n}") for n in range(4)]
    tools = (
        [tl.tool_message(result, id=f"t{n}") for n, result in enumerate(results)]
        if split
        else [tl.tool_message(*results, id="t")]
    )
    return [
        SYSTEM,
        tl.user_message("Compare the four.", id="u"),
        tl.assistant_message(*calls, id="a"),
        *tools,
    ]


class TestTheQuestionIsKept:
    # Issue 36 item 5: with max_messages=3 the window kept the system message and the tool
    # round and dropped the question, so a codec had to invent a user turn.

    @pytest.mark.parametrize("split", [False, True])
    def test_trim_messages_keeps_the_question_of_a_round_over_max_messages(
        self, split: bool
    ) -> None:
        messages = four_call_round(split=split)
        trimmed = trim_messages(messages, max_messages=3)
        assert trimmed.messages == messages
        assert trimmed.dropped == []
        assert trimmed.over_budget
        prepare_messages(trimmed.messages, "strict")

    @pytest.mark.parametrize("split", [False, True])
    def test_trim_messages_keeps_the_question_of_a_round_over_max_tokens(self, split: bool) -> None:
        messages = four_call_round(split=split)
        round_only = [m for m in messages if m.id != "u"]
        budget = sum(map(estimate_tokens, round_only))  # the round fits, the question does not
        trimmed = trim_messages(messages, max_tokens=budget)
        assert trimmed.messages == messages
        assert trimmed.over_budget

    @pytest.mark.parametrize("by", ["max_messages", "max_tokens"])
    @pytest.mark.parametrize("split", [False, True])
    def test_a_history_window_keeps_the_question_after_appends(self, split: bool, by: str) -> None:
        messages = four_call_round(split=split)
        # Three messages, or the tokens of all but the question: the round fits, not with it.
        size = 3 if by == "max_messages" else sum(map(estimate_tokens, messages[:1] + messages[2:]))
        budget: dict[str, Any] = {by: size}
        history = History(**budget)
        for message in messages:
            history.append(message)  # never an error
        assert list(history) == messages
        assert list(History(messages, **budget)) == messages
        history = History(**budget)
        history.extend(messages)
        assert list(history) == messages
        prepare_messages(history.snapshot(), "strict")

    def test_earlier_turns_are_dropped_and_the_question_kept(self) -> None:
        messages = [*conversation(2), *four_call_round()[1:]]
        trimmed = trim_messages(messages, max_messages=3)
        assert ids(trimmed.messages) == ["s", "u", "a", "t"]
        assert ids(trimmed.dropped) == ids(messages[1:-3])
        assert trimmed.over_budget
        history = History(max_messages=3)
        history.extend(messages[:5])
        history.extend(messages[5:])
        assert ids(history) == ["s", "u", "a", "t"]

    def test_what_follows_the_question_is_kept_whole(self) -> None:
        messages = [
            tl.user_message("go", id="u"),
            *[
                m
                for n in range(4)
                for m in (
                    tl.assistant_message(tl.tool_call_part(f"c{n}", "step", {}), id=f"a{n}"),
                    tl.tool_message(tl.tool_result_part(f"c{n}", "ok"), id=f"t{n}"),
                )
            ],
        ]
        trimmed = trim_messages(messages, max_messages=5)
        assert trimmed.messages == messages
        assert trimmed.over_budget

    def test_a_question_inside_a_pair_keeps_the_call_before_it(self) -> None:
        messages = [
            tl.user_message("q0", id="u0"),
            tl.assistant_message(tl.tool_call_part("c", "slow", {}), id="a"),
            tl.user_message("are you there?", id="u1"),  # typed while the tool ran
            tl.tool_message(tl.tool_result_part("c", "done"), id="t"),
        ]
        trimmed = trim_messages(messages, max_messages=2)
        assert ids(trimmed.messages) == ["a", "u1", "t"]
        assert trimmed.over_budget
        history = History(max_messages=2)
        history.extend(messages)
        assert ids(history) == ["a", "u1", "t"]
        # Appended one by one, the call was still waiting when the question came: the window
        # started at the question, and the result came an orphan, as trim_messages would do.
        history = History(max_messages=2)
        for message in messages:
            history.append(message)
        assert ids(history) == ["u1", "t"]

    def test_a_summary_is_not_the_question(self) -> None:
        summary = tl.user_message("earlier: ...", id="sum", metadata={"threadline.summary": True})
        rounds = [
            m
            for n in range(3)
            for m in (
                tl.assistant_message(tl.tool_call_part(f"c{n}", "step", {}), id=f"a{n}"),
                tl.tool_message(tl.tool_result_part(f"c{n}", "ok"), id=f"t{n}"),
            )
        ]
        # No question: the newest units that fit, as before.
        messages = [SYSTEM, summary, *rounds]
        trimmed = trim_messages(messages, max_messages=3)
        assert ids(trimmed.messages) == ["s", "a2", "t2"]
        assert not trimmed.over_budget
        # A question before the summary is still the question.
        messages = [SYSTEM, tl.user_message("q", id="u"), summary, *rounds]
        trimmed = trim_messages(messages, max_messages=3)
        assert ids(trimmed.messages) == ids(messages)
        assert trimmed.over_budget
        for budget in (3, 5):
            history = History(max_messages=budget)
            for message in messages:
                history.append(message)
                assert list(history) == trim_messages(list(history), max_messages=budget).messages
            assert list(history) == trim_messages(messages, max_messages=budget).messages

    def test_over_budget_only_when_what_is_kept_exceeds_a_budget(self) -> None:
        # A broken tail (an orphan result after the question): no window may start at a cut
        # before it, so the window starts at the question, and it fits.
        messages = [
            tl.user_message("q0", id="u0"),
            tl.user_message("q1", id="u1"),
            tl.tool_message(tl.tool_result_part("nowhere", "orphan"), id="t"),
        ]
        trimmed = trim_messages(messages, max_messages=2)
        assert ids(trimmed.messages) == ["u1", "t"]
        assert not trimmed.over_budget

    def test_a_long_tool_loop_after_one_question_keeps_it_cheaply(self) -> None:
        history = History(max_tokens=200)
        history.append(tl.user_message("do 300 steps", id="u"))
        for n in range(300):
            history.append(tl.assistant_message(tl.tool_call_part(f"c{n}", "step", {}), id=f"a{n}"))
            history.append(tl.tool_message(tl.tool_result_part(f"c{n}", "ok"), id=f"t{n}"))
        assert len(history) == 601
        assert history[0].id == "u"
        history.append(tl.user_message("stop", id="u2"))
        assert ids(history) == ["u2"]
        prepare_messages(history.snapshot(), "strict")
