"""`prepass`, the one walk every ``encode`` makes before it maps messages, gives what
`to_wire_names`, `map_call_ids` and `resolve` give, each walking the history on its own."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import threadline as tl
from tests.strategies import conversations
from threadline import Message
from threadline.codecs import anthropic
from threadline.codecs import openai_chat
from threadline.codecs import openai_responses
from threadline.codecs._policies import Capabilities
from threadline.codecs._policies import Planned
from threadline.codecs._policies import _resolve_parts
from threadline.codecs._policies import resolve
from threadline.codecs._policies import resolve_indexed
from threadline.codecs._tool_names import GEMINI
from threadline.codecs._tool_names import STANDARD
from threadline.codecs._tool_names import ToolNameRule
from threadline.codecs._tool_names import to_wire_names
from threadline.codecs._tools import map_call_ids
from threadline.codecs._tools import prepass
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


def _check(
    history: list[Message],
    rule: ToolNameRule,
    capabilities: Capabilities,
    options: EncodeOptions,
) -> None:
    messages, ids, plan, ready = prepass(history, options, capabilities, rule, is_valid=_short)
    assert messages == to_wire_names(history, rule)
    assert ids == map_call_ids(history, is_valid=_short)
    assert type(plan) is Planned
    assert len(ready) == len(messages)
    for index, message in enumerate(messages):
        expected = [part for _, part in _resolve_parts(message, index, options, capabilities)]
        shortcut = ready[index]  # what a codec maps without calling resolve
        if shortcut is not None:
            assert list(shortcut) == expected
            assert all(any(p is part for p in message.parts) for part in shortcut)
        assert list(resolve(message, index, plan, capabilities)) == expected
        assert list(resolve(message, index, options, capabilities)) == expected
        indexed = _resolve_parts(message, index, options, capabilities)
        assert list(resolve_indexed(message, index, plan, capabilities)) == indexed


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
    messages, ids, _, _ = prepass(
        history, options, anthropic.CAPABILITIES, STANDARD, is_valid=_short
    )
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
    messages, ids, _, _ = prepass(
        history, options, anthropic.CAPABILITIES, STANDARD, is_valid=_short
    )
    assert messages is history
    assert ids == {}


def test_a_message_the_plan_is_not_for_is_resolved_on_its_own() -> None:
    """A codec may map a changed copy of a prepared message (a system note, an escaped user
    text): the plan's decision for the original is not used for it."""
    history = [tl.assistant_message(tl.reasoning_part("r", provider="openai"), "text")]
    options = EncodeOptions(
        provider="anthropic", model=None, reasoning="text", unsupported="placeholder"
    )
    _, _, plan, _ = prepass(history, options, anthropic.CAPABILITIES, STANDARD, is_valid=_short)
    other = tl.assistant_message("only text")
    assert list(resolve(other, 0, plan, anthropic.CAPABILITIES)) == list(other.parts)
    assert [part.text for part in resolve(history[0], 0, plan, anthropic.CAPABILITIES)] == [  # type: ignore[union-attr]
        "r",
        "text",
    ]


@given(
    conversations(),
    st.sampled_from([STANDARD, GEMINI]),
    st.sampled_from(sorted(CAPABILITIES)),
    st.sampled_from(["auto", "text", "drop"]),
)
def test_prepass_is_to_wire_names_map_call_ids_and_resolve(
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
    messages, _, _, ready = prepass(
        history, options, anthropic.CAPABILITIES, STANDARD, is_valid=_short
    )
    assert ready[1] == messages[1].parts[1:]  # the dropped reasoning is left out
    assert ready[2] is messages[2].parts
    call, result = ready[1][0], ready[2][0]
    assert isinstance(call, tl.ToolCallPart)
    assert call.name.startswith("files_read__")
    assert isinstance(result, tl.ToolResultPart)
    assert result.name == call.name
    _check(history, STANDARD, anthropic.CAPABILITIES, options)
