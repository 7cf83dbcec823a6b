"""The live frontier (issue 36): which calls are pending, and what each ``pending=`` does."""

from __future__ import annotations

import pytest

from threadline import History
from threadline import IntegrityError
from threadline import Message
from threadline import ToolCallPart
from threadline import assistant_message
from threadline import hook_part
from threadline import internal_message
from threadline import pending_calls
from threadline import prepare_messages
from threadline import system_message
from threadline import tool_message
from threadline import tool_result_part
from threadline import user_message
from threadline.integrity import MISSING_RESULT_TEXT
from threadline.integrity import check_messages
from threadline.integrity import repair_messages


def call(call_id: str) -> ToolCallPart:
    return ToolCallPart(id=call_id, name="lookup", arguments={"q": call_id})


def round_in_flight() -> list[Message]:
    return [
        user_message("weather in Paris and Rome?", id="u1"),
        assistant_message(call("c1"), call("c2"), id="a1"),
        tool_message(tool_result_part("c1", "18C"), id="t1"),
    ]


def ids(calls: list[ToolCallPart]) -> list[str]:
    return [c.id for c in calls]


def test_the_unanswered_calls_of_the_newest_assistant_message_are_pending() -> None:
    assert ids(pending_calls(round_in_flight())) == ["c2"]


def test_internal_and_hook_only_messages_do_not_end_the_frontier() -> None:
    messages = [
        *round_in_flight(),
        internal_message("approval requested", id="i1"),
        assistant_message(hook_part("approval", {"call": "c2"}), id="h1"),
    ]
    assert ids(pending_calls(messages)) == ["c2"]


@pytest.mark.parametrize(
    "after",
    [
        user_message("never mind", id="u2"),
        system_message("Be brief.", id="s2"),
        assistant_message("I will not call it after all.", id="a2"),
    ],
    ids=["user", "system", "assistant-text"],
)
def test_a_later_non_tool_message_means_nothing_is_pending(after: Message) -> None:
    messages = [*round_in_flight(), after]
    assert pending_calls(messages) == []
    report = check_messages(messages, pending="keep")
    assert report.pending == ()
    assert report.codes == ("missing-tool-result",)  # a crash, repaired whatever pending says


def test_a_cut_stream_has_no_pending_calls() -> None:
    cut = assistant_message(call("c1"), id="a1", metadata={"threadline.incomplete": True})
    messages = [user_message("hi", id="u1"), cut]
    assert pending_calls(messages) == []
    out = prepare_messages(messages, pending="keep")
    assert out[-1].parts[0].content == MISSING_RESULT_TEXT  # type: ignore[union-attr]


def test_an_answered_round_and_an_empty_history_have_none() -> None:
    answered = [*round_in_flight(), tool_message(tool_result_part("c2", "21C"), id="t2")]
    assert pending_calls(answered) == []
    assert pending_calls([]) == []


def test_answer_is_the_default_and_answers_as_interrupted() -> None:
    repaired = repair_messages(round_in_flight())
    assert repaired.report.codes == ("missing-tool-result",)
    assert [(i.code, i.call_id) for i in repaired.report.pending] == [("pending-tool-call", "c2")]
    assert repaired.report.pending_choice == "answer"
    assert "answered as interrupted" in repaired.report.pending[0].detail
    results = repaired.messages[-1].parts
    assert [r.call_id for r in results] == ["c1", "c2"]  # type: ignore[union-attr]
    assert pending_calls(repaired.messages) == []


def test_keep_leaves_the_calls_in_flight_and_says_so() -> None:
    messages = round_in_flight()
    repaired = repair_messages(messages, pending="keep")
    assert repaired.messages == messages
    assert repaired.report.ok
    assert "kept unanswered" in repaired.report.pending[0].detail
    assert "1 pending tool call (pending='keep')" in str(repaired.report)
    assert repair_messages(messages, mode="strict", pending="keep").messages == messages


def test_refuse_raises_naming_the_calls_and_the_choices() -> None:
    with pytest.raises(IntegrityError) as raised:
        prepare_messages(round_in_flight(), pending="refuse")
    assert [(i.code, i.call_id) for i in raised.value.issues] == [("pending-tool-call", "c2")]
    assert "pending='keep'" in str(raised.value)
    assert "pending='answer'" in str(raised.value)


def test_strict_with_answer_refuses_a_pending_call_as_missing() -> None:
    with pytest.raises(IntegrityError) as raised:
        repair_messages(round_in_flight(), mode="strict")
    assert [i.code for i in raised.value.issues] == ["missing-tool-result"]


@pytest.mark.parametrize("bad", ["skip", None, "Keep"])
def test_a_bad_choice_is_refused_with_the_values(bad: object) -> None:
    for function in (check_messages, prepare_messages, repair_messages):
        with pytest.raises(ValueError, match="pending must be 'answer'"):
            function(round_in_flight(), pending=bad)  # type: ignore[arg-type]


def test_history_reads_its_frontier_and_prepares_either_way() -> None:
    history = History(round_in_flight())
    assert ids(history.pending_calls()) == ["c2"]
    assert history.messages_for_model(pending="keep") == list(history)
    assert pending_calls(history.messages_for_model()) == []
