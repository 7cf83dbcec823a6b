"""Invariants of context management over generated agent conversations.

Windows (``trim_messages`` and ``History`` windows) are checked against a brute-force oracle of
the documented rule, and for the promises users rely on: within budget unless flagged, system
messages kept, whole units, a user message first when one fits, strict integrity. Masking must
be lossless; summaries must replace whole units and leave exactly one summary message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import note
from hypothesis import settings
from hypothesis import strategies as st

import threadline as tl
from tests.strategies import conversations
from tests.support import examples
from threadline.context import RollingSummary
from threadline.context import ToolResultMasking
from threadline.context import is_summary
from threadline.context import trim_messages
from threadline.context.masking import MASKED_KEY
from threadline.context.summary import SUMMARY_KEY
from threadline.history import History
from threadline.history import HistoryEvent
from threadline.integrity import prepare_messages
from threadline.tokens import content_chars
from threadline.tokens import estimate_tokens

# Conversations, sometimes cut short (possibly right after a tool call, before its results).
prefixes = conversations(max_turns=6).flatmap(
    lambda messages: (
        st.integers(0, len(messages)).map(lambda end: messages[:end]) | st.just(messages)
    )
)


@st.composite
def defective(draw: st.DrawFn) -> list[tl.Message]:
    """A conversation edited at random: messages inserted (a user typing while a tool runs),
    removed (orphan results, missing ones) or repeated (duplicate ids)."""
    messages = list(draw(conversations(min_turns=1, max_turns=5)))
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.integers(0, len(messages)))
        edit = draw(st.sampled_from(["insert", "remove", "repeat"]))
        if edit == "insert":
            role = draw(st.sampled_from(["user", "assistant", "internal", "system"]))
            constructors: dict[str, Callable[..., tl.Message]] = {
                "user": tl.user_message,
                "assistant": tl.assistant_message,
                "internal": tl.internal_message,
                "system": tl.system_message,
            }
            made = constructors[role]("edit", id=f"edit{where}.{len(messages)}")
            messages.insert(where, made)
        elif messages and where < len(messages):
            if edit == "remove":
                del messages[where]
            else:
                messages.insert(draw(st.integers(where, len(messages))), messages[where])
    return messages


@st.composite
def tangled(draw: st.DrawFn) -> list[tl.Message]:
    """Short random sequences over two call ids: interjections between a call and its
    result, orphan and duplicate results, repeated call ids, pending calls, all common; texts
    of very different sizes, so that token budgets cut in many places."""
    call_ids = st.lists(st.sampled_from("xy"), min_size=1, max_size=2, unique=True)
    texts = st.sampled_from(["a", "b" * 40, "c" * 200])
    kinds = st.sampled_from(
        ["user", "text", "call", "call", "result", "result", "internal", "system"]
    )
    out: list[tl.Message] = []
    for index in range(draw(st.integers(1, 16))):
        kind = draw(kinds)
        if kind == "user":
            out.append(tl.user_message(draw(texts), id=f"m{index}"))
        elif kind == "text":
            out.append(tl.assistant_message(draw(texts), id=f"m{index}"))
        elif kind == "call":
            parts = [tl.tool_call_part(c, "f", {}) for c in draw(call_ids)]
            out.append(tl.assistant_message(*parts, id=f"m{index}"))
        elif kind == "result":
            results = [tl.tool_result_part(c, draw(texts)) for c in draw(call_ids)]
            out.append(tl.tool_message(*results, id=f"m{index}"))
        elif kind == "internal":
            out.append(tl.internal_message(tl.hook_part("h", {}), id=f"m{index}"))
        else:
            out.append(tl.system_message("s", id=f"m{index}"))
    return out


@st.composite
def with_internal_runs(draw: st.DrawFn) -> list[tl.Message]:
    """A conversation (well formed or tangled) with runs of internal messages inserted
    anywhere: after a user message, between a call and its results, at the end."""
    messages = list(draw(prefixes | tangled()))
    for run in range(draw(st.integers(1, 3))):
        where = draw(st.integers(0, len(messages)))
        size = draw(st.integers(1, 8))
        messages[where:where] = [
            tl.internal_message(tl.hook_part("ui", {"n": n}), id=f"run{run}.{n}")
            for n in range(size)
        ]
    return messages


@st.composite
def with_summaries(draw: st.DrawFn) -> list[tl.Message]:
    """A history in which some user messages are summaries (a user message, but no question)
    and one more summary may be inserted anywhere."""
    messages = list(draw(prefixes | tangled() | with_internal_runs()))
    for index, message in enumerate(messages):
        if message.role == "user" and draw(st.booleans()):
            parts = [part for part in message.parts if isinstance(part, (tl.TextPart, tl.FilePart))]
            messages[index] = tl.user_message(*parts, id=message.id, metadata={SUMMARY_KEY: True})
    if draw(st.booleans()):
        where = draw(st.integers(0, len(messages)))
        messages.insert(where, tl.user_message("so far", id="sum", metadata={SUMMARY_KEY: True}))
    return messages


histories = prefixes | defective() | tangled() | with_internal_runs() | with_summaries()
budgets = st.fixed_dictionaries(
    {},
    optional={"max_messages": st.integers(1, 30), "max_tokens": st.integers(1, 3000)},
)


# -- the oracle ----------------------------------------------------------------------------------


def answered(messages: list[tl.Message]) -> list[tuple[int, int]]:
    """(result position, position of the call it answers or -1): a result answers the latest
    call with its id before it."""
    pairs = []
    for position, message in enumerate(messages):
        for result in message.tool_results:
            calls = [
                index
                for index in range(position)
                if any(call.id == result.call_id for call in messages[index].tool_calls)
            ]
            pairs.append((position, calls[-1] if calls else -1))
    return pairs


def is_cut(
    messages: list[tl.Message], start: int, pairs: list[tuple[int, int]] | None = None
) -> bool:
    """By the definition: a user, assistant or internal message, and no result at or after it
    answers a call before it (or no call at all)."""
    if messages[start].role not in ("user", "assistant", "internal"):
        return False
    pairs = answered(messages) if pairs is None else pairs
    return all(call >= start for result, call in pairs if result >= start)


def strict_ok(messages: list[tl.Message]) -> bool:
    try:
        prepare_messages(messages, "strict")
    except tl.IntegrityError:
        return False
    return True


def question(messages: list[tl.Message]) -> int | None:
    """The position of the latest user message that is not a summary, if any."""
    found = [i for i, m in enumerate(messages) if m.role == "user" and not is_summary(m)]
    return found[-1] if found else None


def exceeds(kept: list[tl.Message], budget: dict[str, Any]) -> bool:
    max_messages: int = budget.get("max_messages", 10**9)
    max_tokens: int = budget.get("max_tokens", 10**9)
    return len(kept) > max_messages or sum(map(estimate_tokens, kept)) > max_tokens


def expected_window(messages: list[tl.Message], budget: dict[str, Any]) -> tuple[int, bool]:
    """(cut, over_budget) by the documented rule, by brute force; cut 0 means nothing dropped.

    The window starts at a cut no later than the question (the latest user message that is not
    a summary), or anywhere without one; over_budget says the kept messages exceed a budget.
    """
    systems = [m for m in messages if m.role == "system"]

    def fits(start: int) -> bool:
        return not exceeds(systems + [m for m in messages[start:] if m.role != "system"], budget)

    if fits(0) or all(m.role == "system" for m in messages):
        return 0, not fits(len(messages))
    last = question(messages)
    last = len(messages) - 1 if last is None else last
    pairs = answered(messages)
    cuts = [start for start in range(last + 1) if is_cut(messages, start, pairs)]
    fitting = [start for start in cuts if fits(start)]
    if fitting:
        users = [start for start in fitting if messages[start].role == "user"]
        return (users[0] if users else fitting[0]), False
    if cuts:
        return cuts[-1], True
    others = [i for i in range(last + 1) if messages[i].role not in ("tool", "system")]
    start = others[-1] if others else 0
    return start, not fits(start)


def ends_with_unanswered_call(messages: list[tl.Message]) -> bool:
    return bool(messages) and bool(messages[-1].tool_calls)


def assert_window(
    messages: list[tl.Message], budget: dict[str, Any], kept: list[tl.Message]
) -> None:
    """``kept`` is what a window over ``messages`` should hold; check every promise."""
    cut, over_budget = expected_window(messages, budget)
    pinned = [m for m in messages[:cut] if m.role == "system"]
    assert kept == pinned + messages[cut:]
    # Every system message is kept, in order.
    assert [m for m in kept if m.role == "system"] == [m for m in messages if m.role == "system"]
    # Over budget exactly when what is kept exceeds a budget.
    assert over_budget == exceeds(kept, budget)
    # The question and everything after it are kept (issue 36 item 5).
    last = question(messages)
    if last is not None:
        assert kept[len(kept) - (len(messages) - last) :] == messages[last:]
    # A trimmed window starts at a cut, on a user message when one at a cut fits.
    body = [i for i, m in enumerate(messages) if i >= cut and m.role != "system"]
    pairs = answered(messages)
    reach = len(messages) if last is None else last + 1
    if cut and body and any(is_cut(messages, i, pairs) for i in range(reach)):
        assert is_cut(messages, body[0], pairs)
    # Valid under strict integrity if the input was, unless it ends in a call awaiting results.
    if not ends_with_unanswered_call(messages) and strict_ok(messages):
        prepare_messages(kept, "strict")


# -- windows -------------------------------------------------------------------------------------


@given(histories, budgets)
def test_trim_messages_follows_the_rule(messages: list[tl.Message], budget: dict[str, Any]) -> None:
    trimmed = trim_messages(messages, **budget)
    cut, over_budget = expected_window(messages, budget)
    note(f"cut={cut} over_budget={over_budget} roles={[m.role for m in messages]}")
    assert_window(messages, budget, trimmed.messages)
    assert trimmed.dropped == [m for m in messages[:cut] if m.role != "system"]
    assert trimmed.over_budget == over_budget


@given(histories, budgets)
def test_a_window_starts_on_a_user_message_when_one_fits(
    messages: list[tl.Message], budget: dict[str, Any]
) -> None:
    trimmed = trim_messages(messages, **budget)
    if not trimmed.dropped or trimmed.over_budget:
        return
    first = next(m for m in trimmed.messages if m.role != "system")
    if first.role != "user":
        # No user message at a cut fits: none of the kept user messages is at a cut. Kept by
        # position (the window is ``messages[cut:]``, as the test above holds): a history may
        # hold two equal messages, one dropped and one kept.
        cut, _ = expected_window(messages, budget)
        kept_users = [
            i
            for i in range(cut, len(messages))
            if messages[i].role == "user" and is_cut(messages, i)
        ]
        assert kept_users == []


@given(histories, budgets, st.data())
def test_history_windows_are_trim_messages_after_every_mutation(
    messages: list[tl.Message], budget: dict[str, Any], data: st.DataObject
) -> None:
    history = History(**budget)
    events: list[HistoryEvent] = []
    history.subscribe(events.append)
    expected: list[tl.Message] = []
    position = 0
    while position < len(messages):
        size = data.draw(st.integers(1, 4), label="batch")
        batch = messages[position : position + size]
        position += size
        events.clear()
        if len(batch) == 1:
            history.append(batch[0])
        else:
            history.extend(batch)
        trimmed = trim_messages([*expected, *batch], **budget)
        assert_window([*expected, *batch], budget, list(history))
        expected = trimmed.messages
        assert list(history) == expected
        assert [e.kind for e in events[1:]] == (["trim"] if trimmed.dropped else [])
        if trimmed.dropped:
            assert list(events[1].messages) == trimmed.dropped
        assert history.total_tokens == sum(map(estimate_tokens, expected))
        assert history.size == sum(map(content_chars, expected))


def units_from(messages: list[tl.Message], start: int) -> list[tl.Message]:
    """What a window starting at ``start`` keeps: the system messages before it, then all."""
    return [m for m in messages[:start] if m.role == "system"] + messages[start:]


@pytest.mark.slow  # 300 examples of its own: the full tier's
@settings(max_examples=examples(300))
@given(with_internal_runs(), st.integers(1, 12))
def test_max_messages_holds_unless_what_must_be_kept_exceeds_it(
    messages: list[tl.Message], max_messages: int
) -> None:
    # Issue 19 item 8: internal messages after a user message formed one unit with it, so a
    # window held any number of them (and flagged itself over budget). Issue 36 item 5: the
    # question and what follows it are kept whole; before it, internal messages are units.
    trimmed = trim_messages(messages, max_messages=max_messages)
    assert list(History(messages, max_messages=max_messages)) == trimmed.messages
    # Appended one by one, a history holds what trimming its last window plus the new message
    # gives, and within the bound whenever that is not over budget.
    history = History(max_messages=max_messages)
    window: list[tl.Message] = []
    for message in messages:
        history.append(message)
        step = trim_messages([*window, message], max_messages=max_messages)
        window = step.messages
        assert list(history) == window
        assert len(history) <= max_messages or step.over_budget
    pairs = answered(messages)
    last = question(messages)
    reach = len(messages) if last is None else last + 1
    cuts = [i for i in range(reach) if is_cut(messages, i, pairs)]
    if trimmed.over_budget:
        # Only as documented: the newest unit, or the question and all after it (from the
        # newest cut before it), does not fit with the system messages (or there is no such
        # cut: a broken tail of results).
        assert not cuts or len(units_from(messages, cuts[-1])) > max_messages
    else:
        assert len(trimmed.messages) <= max_messages
    if not trimmed.dropped:
        return
    # Nothing more is dropped than the rule needs: no earlier cut fits, and a later start is
    # only ever the first user message at a cut after the earliest cut that fits.
    start = next(i for i, m in enumerate(messages) if m in trimmed.messages and m.role != "system")
    fitting = [c for c in cuts if len(units_from(messages, c)) <= max_messages]
    if fitting and not trimmed.over_budget:
        earliest = fitting[0]
        assert start >= earliest
        if start > earliest:
            assert messages[start].role == "user"
            assert not any(messages[c].role == "user" for c in cuts if earliest <= c < start)


small_budgets = st.one_of(
    st.fixed_dictionaries({"max_messages": st.integers(1, 6)}),
    st.fixed_dictionaries({"max_tokens": st.integers(5, 150)}),
)


@settings(max_examples=examples(500))
@given(tangled(), small_budgets)
def test_history_windows_pair_by_id_like_trim_messages(
    messages: list[tl.Message], budget: dict[str, Any]
) -> None:
    # Small budgets over tangled pairings, appended one by one: where the id rule decides the
    # cut and the incremental bookkeeping (reach, the user-search hint) is exercised.
    history = History(**budget)
    expected: list[tl.Message] = []
    for message in messages:
        history.append(message)
        expected = trim_messages([*expected, message], **budget).messages
        assert list(history) == expected


@given(histories, budgets)
def test_history_window_after_restore_and_from_the_constructor(
    messages: list[tl.Message], budget: dict[str, Any]
) -> None:
    expected = trim_messages(messages, **budget).messages
    assert list(History(messages, **budget)) == expected
    history = History(**budget)
    history.restore(messages)
    assert list(history) == expected


@pytest.mark.slow  # 300 examples of its own: the full tier's
@settings(max_examples=examples(300))
@given(histories, budgets, budgets, st.data())
def test_trimming_a_snapshot_is_trimming_its_messages(
    messages: list[tl.Message],
    window: dict[str, Any],
    budget: dict[str, Any],
    data: st.DataObject,
) -> None:
    # A snapshot is trimmed from the history's storage with the system positions the history
    # tracks (pinned head, compaction, appends after it): the result must be the one for a
    # plain list of the same messages, and must not move when the history changes later.
    history = History(**data.draw(st.sampled_from([{}, window]), label="window"))
    taken: list[tuple[list[tl.Message], tl.context.Trimmed]] = []
    for message in messages:
        history.append(message)
        if data.draw(st.booleans(), label="trim this snapshot"):
            snapshot = history.snapshot()
            plain = trim_messages(list(snapshot), **budget)
            trimmed = trim_messages(snapshot, **budget)
            assert trimmed.messages == plain.messages
            assert trimmed.over_budget == plain.over_budget
            taken.append((plain.dropped, trimmed))
    history.restore(messages[: len(messages) // 2])
    for dropped, trimmed in taken:
        assert isinstance(trimmed, tl.context.Trimmed)
        assert trimmed.dropped == dropped


# -- masking -------------------------------------------------------------------------------------


@given(conversations(max_turns=6), st.integers(0, 4), st.integers(0, 40))
def test_masking_is_lossless(messages: list[tl.Message], keep: int, min_tokens: int) -> None:
    masking = ToolResultMasking(keep_recent=keep, min_tokens=min_tokens)
    history = History(messages, plugins=[masking])
    shown = masking.apply(history.snapshot())
    originals = {part.call_id: part for m in messages for part in m.tool_results}
    masked = [part for m in shown for part in m.tool_results if part.metadata.get(MASKED_KEY)]
    for part in masked:
        original = originals[part.call_id]
        assert history.get_tool_result(part.call_id) == original
        assert part.call_id in str(part.content)
        assert (part.call_id, part.name, part.is_error) == (
            original.call_id,
            original.name,
            original.is_error,
        )
        assert masking.retrieve_tool(call_id=part.call_id).startswith(original.text)
    assert list(history) == messages  # stored messages never change
    # Exactly the older eligible results are masked, and pairing is untouched.
    eligible = [
        part
        for m in messages
        for part in m.tool_results
        if tl.tokens.result_tokens(part) >= min_tokens
    ]
    assert len(masked) == max(0, len(eligible) - keep)
    assert [p.call_id for p in masked] == [p.call_id for p in eligible[: len(masked)]]
    assert [m.id for m in shown] == [m.id for m in messages]
    prepare_messages(shown, "strict")
    assert history.messages_for_model("strict") == prepare_messages(shown, "strict")


# -- summaries -----------------------------------------------------------------------------------


def summarizer(messages: list[tl.Message], previous: str | None) -> str:
    return f"{previous or ''}|{','.join(m.id for m in messages)}"


reduce_options = st.fixed_dictionaries(
    {}, optional={"max_messages": st.integers(1, 20), "max_tokens": st.integers(1, 2000)}
)


@given(conversations(min_turns=1, max_turns=6), st.lists(reduce_options, min_size=1, max_size=3))
def test_summaries_replace_whole_units_and_leave_one_summary(
    messages: list[tl.Message], rounds: list[dict[str, Any]]
) -> None:
    seen: list[list[tl.Message]] = []

    def recording(batch: list[tl.Message], previous: str | None) -> str:
        seen.append(batch)
        return summarizer(batch, previous)

    history = History(messages, plugins=[RollingSummary(recording)])
    for options in rounds:
        asyncio.run(history.reduce(**options))
    summaries = [m for m in history if is_summary(m)]
    assert len(summaries) == (1 if seen else 0)
    # Each summarized batch is whole: every result's call and every call's results are in it.
    for batch in seen:
        calls = {call.id for m in batch for call in m.tool_calls}
        results = {result.call_id for m in batch for result in m.tool_results}
        assert calls == results
        assert all(m.role != "system" and not is_summary(m) for m in batch)
    # Nothing is lost: the summarized messages and the rest add up to the original.
    kept = [m for m in history if not is_summary(m)]
    summarized = [m for batch in seen for m in batch]
    assert sorted(m.id for m in kept + summarized) == sorted(m.id for m in messages)
    # The summary comes right after the system messages that precede it.
    if summaries:
        index = list(history).index(summaries[0])
        assert all(m.role == "system" for m in history[:index])
    prepare_messages(history.snapshot(), "strict")
