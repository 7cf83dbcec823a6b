"""`prepare_history`, the one walk every ``encode`` makes before it maps messages, gives what
`to_wire_names`, `map_call_ids` and `resolve` give, each walking the history on its own."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import threadline as tl
from tests.strategies import conversations
from threadline import Message
from threadline.codecs import anthropic
from threadline.codecs import openai_chat
from threadline.codecs import openai_responses
from threadline.codecs._policies import Capabilities
from threadline.codecs._policies import resolve
from threadline.codecs._policies import resolve_indexed
from threadline.codecs._policies import resolve_parts
from threadline.codecs._prepared import PreparedHistory
from threadline.codecs._prepared import prepare_history
from threadline.codecs._tool_names import GEMINI
from threadline.codecs._tool_names import STANDARD
from threadline.codecs._tool_names import ToolNameRule
from threadline.codecs._tool_names import to_wire_names
from threadline.codecs._tools import map_call_ids
from threadline.codecs.base import EncodeOptions
from threadline.codecs.base import ReasoningPolicy

CAPABILITIES = {
    "anthropic": anthropic.CAPABILITIES,
    "openai": openai_responses.CAPABILITIES,
    "openai_chat": openai_chat.CAPABILITIES,
}


def _short(value: str) -> bool:
    return 0 < len(value) <= 29  # hashed_id's ids are 29 characters


def _history() -> list[Message]:
    return [
        tl.user_message("Go.", tl.file_part(b"\x89PNG", "image/png")),
        tl.assistant_message(
            tl.reasoning_part("think", provider="anthropic", signature="s"),
            tl.tool_call_part("call_1", "files.read", {}),
            tl.reasoning_part("more", provider="openai", encrypted="e"),
            tl.tool_call_part("an_id_much_longer_than_29_characters", "get weather", {}),
        ),
        tl.tool_message(
            tl.tool_result_part("call_1", "x", name="files.read"),
            tl.tool_result_part(
                "an_id_much_longer_than_29_characters",
                (tl.text_part("y"), tl.file_part(b"%PDF", "application/pdf")),
                name="get weather",
            ),
        ),
        tl.tool_message(tl.tool_result_part("an_orphan_result_id_over_29_characters", "z")),
    ]


def _prepare(
    history: list[Message],
    rule: ToolNameRule,
    capabilities: Capabilities,
    options: EncodeOptions,
) -> PreparedHistory:
    return prepare_history(
        history,
        provider=options.provider,
        capabilities=capabilities,
        rule=rule,
        is_valid=_short,
        model=options.model,
        integrity="off",
        reasoning=options.reasoning,
        unsupported=options.unsupported,
    )


def _check(
    history: list[Message],
    rule: ToolNameRule,
    capabilities: Capabilities,
    options: EncodeOptions,
) -> None:
    prepared = _prepare(history, rule, capabilities, options)
    messages, ids, ready = prepared.messages, prepared.ids, prepared.ready
    assert messages == to_wire_names(history, rule)
    assert ids == map_call_ids(history, is_valid=_short)
    assert prepared.capabilities is capabilities
    assert {
        old.name: new.name
        for before, after in zip(history, messages, strict=True)
        for old, new in zip(before.tool_calls, after.tool_calls, strict=True)
        if old.name != new.name
    }.items() <= prepared.tool_names.items()
    assert len(ready) == len(messages)
    for index, message in enumerate(messages):
        expected = [part for _, part in resolve_parts(message, index, options, capabilities)]
        shortcut = ready[index]  # what a codec maps without calling resolve
        if shortcut is not None:
            assert list(shortcut) == expected
            assert all(any(p is part for p in message.parts) for part in shortcut)
        assert list(prepared.parts(index)) == expected
        assert list(prepared.parts_of(index, message)) == expected
        assert list(resolve(message, index, options, capabilities)) == expected
        indexed = resolve_parts(message, index, options, capabilities)
        assert list(prepared.indexed(index)) == indexed
        assert list(resolve_indexed(message, index, options, capabilities)) == indexed


def test_one_walk_gives_the_names_ids_and_parts_of_three() -> None:
    history = _history()
    for provider, capabilities in CAPABILITIES.items():
        reasonings: tuple[ReasoningPolicy, ...] = ("auto", "text", "drop")
        for reasoning in reasonings:
            options = EncodeOptions(
                provider=provider.split("_")[0],
                model=None,
                reasoning=reasoning,
                unsupported="placeholder",
            )
            for rule in (STANDARD, GEMINI):
                _check(history, rule, capabilities, options)
    prepared = _prepare(history, STANDARD, anthropic.CAPABILITIES, options)
    messages, ids = prepared.messages, prepared.ids
    assert ids.keys() == {
        "an_id_much_longer_than_29_characters",
        "an_orphan_result_id_over_29_characters",
    }
    assert messages[1].tool_calls[0].name.startswith("files_read__")


def test_a_history_with_nothing_to_map_is_returned_as_it_is() -> None:
    history = [tl.user_message("hi"), tl.assistant_message("hello")]
    options = EncodeOptions(
        provider="anthropic", model=None, reasoning="auto", unsupported="placeholder"
    )
    prepared = _prepare(history, STANDARD, anthropic.CAPABILITIES, options)
    assert prepared.messages == history
    assert all(new is old for new, old in zip(prepared.messages, history, strict=True))
    assert prepared.ids == {}
    assert prepared.tool_names == {}


def test_a_message_the_plan_is_not_for_is_resolved_on_its_own() -> None:
    """A codec may map a changed copy of a prepared message (a system note, an escaped user
    text): the plan's decision for the original is not used for it."""
    history = [tl.assistant_message(tl.reasoning_part("r", provider="openai"), "text")]
    options = EncodeOptions(
        provider="anthropic", model=None, reasoning="text", unsupported="placeholder"
    )
    prepared = _prepare(history, STANDARD, anthropic.CAPABILITIES, options)
    other = tl.assistant_message("only text")
    assert list(prepared.parts_of(0, other)) == list(other.parts)
    assert [part.text for part in prepared.parts_of(0, history[0])] == [  # type: ignore[union-attr]
        "r",
        "text",
    ]


@given(
    conversations(),
    st.sampled_from([STANDARD, GEMINI]),
    st.sampled_from(sorted(CAPABILITIES)),
    st.sampled_from(["auto", "text", "drop"]),
)
def test_prepare_history_is_to_wire_names_map_call_ids_and_resolve(
    history: list[Message], rule: ToolNameRule, provider: str, reasoning: ReasoningPolicy
) -> None:
    options = EncodeOptions(
        provider=provider.split("_")[0],
        model=None,
        reasoning=reasoning,
        unsupported="placeholder",
    )
    _check(history, rule, CAPABILITIES[provider], options)


def test_the_plan_holds_the_renamed_parts_of_a_message_with_nothing_to_resolve() -> None:
    history = [
        tl.user_message("Go."),
        tl.assistant_message(
            tl.reasoning_part("r", provider="openai"),
            tl.tool_call_part("call_1", "files.read", {}),
        ),
        tl.tool_message(tl.tool_result_part("call_1", "x", name="files.read")),
    ]
    options = EncodeOptions(
        provider="anthropic", model=None, reasoning="auto", unsupported="placeholder"
    )
    prepared = _prepare(history, STANDARD, anthropic.CAPABILITIES, options)
    messages, ready = prepared.messages, prepared.ready
    assert ready[1] == messages[1].parts[1:]  # the dropped reasoning is left out
    assert ready[2] is messages[2].parts
    call, result = ready[1][0], ready[2][0]
    assert isinstance(call, tl.ToolCallPart)
    assert call.name.startswith("files_read__")
    assert isinstance(result, tl.ToolResultPart)
    assert result.name == call.name
    _check(history, STANDARD, anthropic.CAPABILITIES, options)


def _prepare_for_anthropic(messages: list[Message], **settings: Any) -> PreparedHistory:
    return prepare_history(
        messages,
        provider="anthropic",
        capabilities=anthropic.CAPABILITIES,
        rule=STANDARD,
        is_valid=lambda _: True,
        model=None,
        integrity="auto",
        reasoning="auto",
        unsupported="placeholder",
        **settings,
    )


def test_the_cache_plan_is_made_once_in_the_prepared_history() -> None:
    """``cache`` is planned against the caller's messages: an explicit index marks that
    message's last part (a copy), and the plan is the history's."""
    from threadline.codecs._caching import CachePlan

    history = [tl.user_message("a"), tl.assistant_message("b"), tl.user_message("c")]
    assert _prepare_for_anthropic(history).cache is None
    prepared = _prepare_for_anthropic(history, cache=["system", 0])
    assert prepared.cache == CachePlan(system=True, indexes=(0,))
    assert prepared.messages[0].parts[0].metadata["anthropic.cache_control"] == {
        "type": "ephemeral"
    }
    assert not history[0].parts[0].metadata  # the caller's message is unchanged
    assert _prepare_for_anthropic(history, cache="auto").cache == CachePlan(auto=True)


def test_a_cache_index_is_the_callers_and_checked_before_the_integrity_pass() -> None:
    # the integrity pass answers the pending call: index 2 is still the caller's "c"
    history = [
        tl.user_message("a"),
        tl.assistant_message(tl.tool_call_part("call_1", "look", {})),
        tl.user_message("c"),
    ]
    prepared = _prepare_for_anthropic(history, cache=[2])
    assert len(prepared.messages) == 4
    marked = [
        message.text
        for message in prepared.messages
        if any("anthropic.cache_control" in part.metadata for part in message.parts)
    ]
    assert marked == ["c"]
    with pytest.raises(tl.ValidationError, match=r"cache\[0\].*outside the history of 3"):
        _prepare_for_anthropic(history, cache=[3])
