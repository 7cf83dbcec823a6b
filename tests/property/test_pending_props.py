"""The live frontier (issue 36): the laws of ``pending=`` over generated live conversations.

A live conversation is a repairable one (``tests.property._defects``) that may end in a tool
round in flight: an assistant message with calls, a tool message answering some of them, and
internal messages between. For each ``pending`` value the integrity laws hold: repair is
idempotent, ``auto``'s output passes ``strict`` unchanged, ``check_messages`` lists what repair
reports, and the report's ``pending`` lists exactly [`pending_calls`][].
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.property._defects import REPAIRABLE
from tests.property._defects import Defective
from tests.property._defects import defective_conversations
from tests.support import examples
from threadline import IntegrityError
from threadline import Message
from threadline import ToolCallPart
from threadline import assistant_message
from threadline import internal_message
from threadline import pending_calls
from threadline import tool_message
from threadline import tool_result_part
from threadline import user_message
from threadline.integrity import check_messages
from threadline.integrity import prepare_messages
from threadline.integrity import repair_messages

_ids = itertools.count()


@st.composite
def live_conversations(draw: st.DrawFn) -> list[Message]:
    """A repairable conversation, often ending in a round of calls in flight."""
    base: Defective = draw(defective_conversations(REPAIRABLE, min_defects=0, max_defects=2))
    messages = list(base.messages)
    if not draw(st.booleans()):
        return messages
    n = next(_ids)
    calls = [
        ToolCallPart(id=f"live_{n}_{k}", name="lookup", arguments={"k": k})
        for k in range(draw(st.integers(1, 4)))
    ]
    metadata = {"threadline.incomplete": True} if draw(st.integers(0, 4)) == 0 else {}
    messages.append(user_message("go", id=f"live_{n}_u"))
    messages.append(assistant_message(*calls, id=f"live_{n}_a", metadata=metadata))
    answered = draw(st.lists(st.sampled_from(calls), unique_by=lambda c: c.id))
    for k, call in enumerate(answered):
        if draw(st.booleans()):
            messages.append(internal_message("ui", id=f"live_{n}_i{k}"))
        messages.append(tool_message(tool_result_part(call.id, "ok"), id=f"live_{n}_t{k}"))
    return messages


pendings = st.sampled_from(["answer", "keep", "refuse"])
# Each example builds a defective conversation and repairs it several ways: 80 examples per law
# in the full tier (the integrity laws themselves run at 200 in test_integrity_props).
FULL = examples(80)


def pending_ids(messages: list[Message]) -> list[str]:
    return [call.id for call in pending_calls(messages)]


@settings(max_examples=FULL)
@given(live_conversations(), pendings)
def test_report_lists_exactly_the_pending_calls(messages: list[Message], pending: str) -> None:
    expected = pending_ids(messages)
    report = check_messages(messages, pending=pending)  # type: ignore[arg-type]
    assert [issue.call_id for issue in report.pending] == expected
    assert all(issue.code == "pending-tool-call" for issue in report.pending)
    assert report.pending_choice == pending
    if pending == "refuse" and expected:
        with pytest.raises(IntegrityError) as raised:
            repair_messages(messages, pending="refuse")
        refused = [i.call_id for i in raised.value.issues if i.code == "pending-tool-call"]
        assert refused == expected
        return
    repaired = repair_messages(messages, pending=pending)
    assert [issue.call_id for issue in repaired.report.pending] == expected
    checked = [(i.code, i.message_index, i.part_index) for i in report.issues]
    assert checked == [(i.code, i.message_index, i.part_index) for i in repaired.report.issues]


@settings(max_examples=FULL)
@given(live_conversations(), pendings)
def test_the_laws_hold_for_each_choice(messages: list[Message], pending: str) -> None:
    if pending == "refuse" and pending_ids(messages):
        return
    out = prepare_messages(messages, pending=pending)  # type: ignore[arg-type]
    assert prepare_messages(out, pending=pending) == out  # type: ignore[arg-type]
    strict = repair_messages(out, mode="strict", pending=pending)  # type: ignore[arg-type]
    assert strict.messages == out
    assert strict.report.ok
    kept = pending_ids(out)
    assert kept == (pending_ids(messages) if pending == "keep" else [])


@settings(max_examples=FULL)
@given(live_conversations())
def test_a_model_request_never_has_a_pending_call(messages: list[Message]) -> None:
    out = prepare_messages(messages)
    assert pending_ids(out) == []
    assert check_messages(out, pending="refuse").ok
