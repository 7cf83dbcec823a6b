"""Invariants of threadline.integrity over generated conversations with injected defects."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence

import pytest
from hypothesis import assume
from hypothesis import given
from hypothesis import strategies as st

from tests.property._defects import FATAL
from tests.property._defects import HOSTILE
from tests.property._defects import RENAME_SAFE
from tests.property._defects import REPAIRABLE
from tests.property._defects import Defective
from tests.property._defects import defective_conversations
from tests.strategies import conversations
from tests.support import part_as
from threadline import FilePart
from threadline import HookPart
from threadline import IntegrityError
from threadline import Message
from threadline import ProviderToolCallPart
from threadline import ProviderToolResultPart
from threadline import ToolCallPart
from threadline import ToolResultPart
from threadline import dump_json
from threadline.codecs import codec_names
from threadline.codecs import get_codec
from threadline.integrity import IntegrityReport
from threadline.integrity import check_messages
from threadline.integrity import prepare_messages
from threadline.integrity import repair_messages
from threadline.integrity import sanitize_untrusted

REPAIR_MARKS = {
    "duplicate-tool-call",
    "invalid-tool-args",
    "misplaced-tool-result",
    "missing-tool-result",
}
DROP_CODES = {"internal-message", "internal-part", "empty-message"}

repairable = defective_conversations(REPAIRABLE, min_defects=0)
with_fatal = st.sampled_from(FATAL).flatmap(
    lambda fatal: defective_conversations(REPAIRABLE, last=fatal, min_defects=0, max_defects=3)
)
renamable = st.sampled_from(["duplicate_across_turns", "reused_many_times"]).flatmap(
    lambda last: defective_conversations(RENAME_SAFE, last=last, min_defects=0, max_defects=3)
)
hostile = defective_conversations(HOSTILE, max_defects=3)
PROVIDERS = codec_names()


def fingerprint(messages: Sequence[Message]) -> list[tuple[int, str, bool]]:
    """Identity, full JSON and the runtime-only flag of every message."""
    return [
        (id(m), json.dumps(m.model_dump(mode="json"), sort_keys=True), m.replay) for m in messages
    ]


def marker(part: object) -> object:
    metadata = getattr(part, "metadata", {})
    return metadata.get("threadline.repair")


def input_positions(messages: Sequence[Message]) -> dict[int, tuple[int, int]]:
    return {id(part): (i, j) for i, m in enumerate(messages) for j, part in enumerate(m.parts)}


# --- the laws -------------------------------------------------------------------------------


@given(conversations())
def test_a_well_formed_conversation_only_loses_internal_content(messages: list[Message]) -> None:
    report = check_messages(messages)
    assert set(report.codes) <= DROP_CODES
    out = prepare_messages(messages)
    expected = [
        m
        for m in messages
        if m.role != "internal" and not all(isinstance(p, HookPart) for p in m.parts)
    ]
    assert [m.id for m in out] == [m.id for m in expected]
    for before, after in zip(expected, out, strict=True):
        kept = tuple(p for p in before.parts if not isinstance(p, HookPart))
        assert after.parts == kept
        if kept == before.parts:
            assert after is before  # nothing rebuilt


@given(repairable)
def test_prepare_is_idempotent(case: Defective) -> None:
    once = prepare_messages(case.messages)
    assert prepare_messages(once) == once
    assert dump_json(prepare_messages(once)) == dump_json(once)


@given(repairable)
def test_auto_output_passes_strict_unchanged(case: Defective) -> None:
    out = prepare_messages(case.messages)
    assert check_messages(out).ok, check_messages(out)
    strict = repair_messages(out, mode="strict")
    assert strict.messages == out
    assert strict.report.ok


@given(st.one_of(repairable, with_fatal, renamable), st.booleans())
def test_input_is_never_mutated(case: Defective, rename: bool) -> None:
    messages = case.messages
    before = fingerprint(messages)
    kept = list(messages)
    check_messages(messages)
    for mode in ("auto", "strict"):
        with contextlib.suppress(IntegrityError):
            repair_messages(messages, mode=mode, rename_duplicate_ids=rename)
    sanitize_untrusted(messages)
    assert messages == kept
    assert fingerprint(messages) == before


@given(repairable)
def test_relative_order_is_kept_except_moved_results(case: Defective) -> None:
    positions = input_positions(case.messages)
    out = prepare_messages(case.messages)
    kept = [positions[id(part)] for m in out for part in m.parts if id(part) in positions]
    assert kept == sorted(kept)
    ids = {m.id: i for i, m in enumerate(case.messages)}
    message_order = [ids[m.id] for m in out if m.id in ids]
    assert message_order == sorted(message_order)


@given(st.one_of(repairable, renamable))
def test_every_synthesised_or_rewritten_part_is_marked(case: Defective) -> None:
    positions = input_positions(case.messages)
    out = repair_messages(case.messages, rename_duplicate_ids=True).messages
    for message in out:
        for part in message.parts:
            if id(part) not in positions:
                assert marker(part) in REPAIR_MARKS, part


@given(st.one_of(repairable, renamable))
def test_every_change_is_in_the_report(case: Defective) -> None:
    messages = case.messages
    repaired = repair_messages(messages, rename_duplicate_ids=True)
    at = {(i.message_index, i.part_index): i.code for i in repaired.report.issues}
    out_by_id = {m.id: m for m in repaired.messages}
    input_ids = {m.id for m in messages}
    for index, message in enumerate(messages):
        new = out_by_id.get(message.id)
        if new is None:  # dropped
            assert at.get((index, None)) in {"internal-message", "empty-message"}
            continue
        if new is message:
            continue
        # only the parts changed, and every input part that changed or went away is reported
        assert new.model_copy(update={"parts": message.parts}) == message
        survivors = {id(part) for part in new.parts}
        for part_index, part in enumerate(message.parts):
            if id(part) not in survivors:
                assert (index, part_index) in at, (index, part_index, part)
        originals = {id(part) for part in message.parts}
        for part in new.parts:
            if id(part) not in originals:
                assert marker(part) in REPAIR_MARKS
    synthesised = {
        part_as(ToolResultPart, part).call_id
        for m in repaired.messages
        for part in m.parts
        if marker(part) == "missing-tool-result"
    }
    # One issue per synthesised result. The report names ids as the input has them, so a call
    # renamed for a duplicate id whose result is missing too is reported under the id it
    # shares (two issues, one id), while its synthetic result carries the new id.
    reported = [i.call_id for i in repaired.report.issues if i.code == "missing-tool-result"]
    renamed = any(i.code == "duplicate-tool-call" for i in repaired.report.issues)
    if not renamed:
        assert synthesised == set(reported)
    assert len(synthesised) == len(reported)
    for message in repaired.messages:
        if message.id not in input_ids:
            assert message.id.endswith(":results")
            assert all(marker(p) in {"misplaced-tool-result", "missing-tool-result"}
                       for p in message.parts)  # fmt: skip


@given(repairable)
def test_check_lists_exactly_what_repair_reports(case: Defective) -> None:
    checked = check_messages(case.messages)
    repaired = repair_messages(case.messages)
    where = [(i.code, i.message_index, i.part_index, i.call_id) for i in checked.issues]
    assert where == [
        (i.code, i.message_index, i.part_index, i.call_id) for i in repaired.report.issues
    ]
    assert checked.ok == (repaired.messages == case.messages)


@given(repairable)
def test_strict_raises_exactly_when_auto_repairs_more_than_drops(case: Defective) -> None:
    report = repair_messages(case.messages).report
    refused = [i for i in report.issues if i.code not in DROP_CODES]
    if refused:
        with pytest.raises(IntegrityError) as raised:
            repair_messages(case.messages, mode="strict")
        assert [i.code for i in raised.value.issues] == [i.code for i in refused]
    else:
        assert repair_messages(case.messages, mode="strict").messages == prepare_messages(
            case.messages
        )


@given(with_fatal, st.sampled_from(["auto", "strict"]))
def test_fatal_defects_always_raise(case: Defective, mode: str) -> None:
    # A later injection can undo an earlier one (a result moved, then its call moved past it);
    # the law is about histories that do hold a fatal defect.
    fatal = {"orphan-tool-result", "duplicate-tool-call", "duplicate-tool-result"}
    assume(fatal & {issue.code for issue in check_messages(case.messages).issues})
    with pytest.raises(IntegrityError) as raised:
        repair_messages(case.messages, mode=mode)  # type: ignore[arg-type]
    codes = {issue.code for issue in raised.value.issues}
    assert codes & {"orphan-tool-result", "duplicate-tool-call", "duplicate-tool-result"}
    assert codes <= {i.code for i in check_messages(case.messages).issues}
    for issue in raised.value.issues:
        assert f"{issue.code} at {issue.location}" in str(raised.value)


@given(with_fatal)
def test_duplicates_within_a_turn_raise_even_when_renaming(case: Defective) -> None:
    if case.defects[-1] != "duplicate_in_turn":
        return
    with pytest.raises(IntegrityError):
        repair_messages(case.messages, rename_duplicate_ids=True)


@given(renamable)
def test_renaming_resolves_a_reused_id(case: Defective) -> None:
    with pytest.raises(IntegrityError):
        prepare_messages(case.messages)
    repaired = repair_messages(case.messages, rename_duplicate_ids=True)
    assert "duplicate-tool-call" in repaired.report.codes
    out = repaired.messages
    assert check_messages(out).ok
    call_ids = [p.id for m in out for p in m.parts if isinstance(p, ToolCallPart)]
    assert len(call_ids) == len(set(call_ids))
    assert repair_messages(case.messages, rename_duplicate_ids=True).messages == out


# --- the hostile shapes (issue 19): many calls, results or messages in one place -----------


@given(hostile)
def test_hostile_shapes_repair_to_what_strict_accepts(case: Defective) -> None:
    repaired = repair_messages(case.messages)
    out = repaired.messages
    assert check_messages(out).ok, check_messages(out)
    assert prepare_messages(out) == out
    checked = check_messages(case.messages)
    assert [(i.code, i.message_index, i.part_index, i.call_id) for i in checked.issues] == [
        (i.code, i.message_index, i.part_index, i.call_id) for i in repaired.report.issues
    ]
    answered = [
        part_as(ToolResultPart, p).call_id for m in out if m.role == "tool" for p in m.parts
    ]
    called = [p.id for m in out for p in m.parts if isinstance(p, ToolCallPart)]
    assert sorted(answered) == sorted(called)


@given(hostile, st.sampled_from(PROVIDERS))
def test_encode_sends_the_repaired_hostile_shape(case: Defective, provider: str) -> None:
    codec = get_codec(provider)
    prepared = prepare_messages(case.messages)
    assert codec.encode(case.messages) == codec.encode(prepared, integrity="off")


# --- sanitize_untrusted ---------------------------------------------------------------------


@given(st.one_of(conversations(), repairable.map(lambda case: case.messages)))
def test_sanitized_history_holds_nothing_a_client_may_not_set(messages: list[Message]) -> None:
    out = sanitize_untrusted(messages)
    assert not any("replay" in message for message in json.loads(dump_json(out))["messages"])
    for message in out:
        assert message.role in {"user", "assistant", "tool"}
        assert message.replay is False
        assert not any(key.startswith("threadline.") for key in message.metadata)
        for part in message.parts:
            assert not isinstance(part, (HookPart, ProviderToolCallPart, ProviderToolResultPart))
            assert not any(key.startswith("threadline.") for key in part.metadata)
            nested = part.content if isinstance(part, ToolResultPart) else ()
            for item in (part, *(nested if isinstance(nested, tuple) else ())):
                if isinstance(item, FilePart) and item.url is not None:
                    assert item.url.lower().startswith(("http://", "https://"))
    assert sanitize_untrusted(out) == out


@given(conversations())
def test_sanitized_conversation_prepares_without_error(messages: list[Message]) -> None:
    out = prepare_messages(sanitize_untrusted(messages))
    assert check_messages(out).ok
    if out and out[-1].role == "assistant":
        assert not any(isinstance(p, ToolCallPart) for p in out[-1].parts)


def test_report_of_a_clean_conversation_is_empty() -> None:
    assert check_messages([]) == IntegrityReport()
    assert prepare_messages([]) == []
