"""`wire_tools`, the one walk every ``encode`` makes for tool names and call ids, gives what
`to_wire_names` and `map_call_ids` give, each walking the history on its own."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import threadline as tl
from tests.strategies import conversations
from threadline import Message
from threadline.codecs._tool_names import GEMINI, STANDARD, ToolNameRule, to_wire_names
from threadline.codecs._tools import map_call_ids, wire_tools


def _short(value: str) -> bool:
    return 0 < len(value) <= 29  # hashed_id's ids are 29 characters


def _history() -> list[Message]:
    return [
        tl.user_message("Go."),
        tl.assistant_message(
            tl.reasoning_part("think", provider="anthropic", signature="s"),
            tl.tool_call_part("call_1", "files.read", {}),
            tl.tool_call_part("an_id_much_longer_than_29_characters", "get weather", {}),
        ),
        tl.tool_message(
            tl.tool_result_part("call_1", "x", name="files.read"),
            tl.tool_result_part("an_id_much_longer_than_29_characters", "y", name="get weather"),
        ),
        tl.tool_message(
            tl.tool_result_part("an_orphan_result_id_over_29_characters", "z", name="orphan name")
        ),
    ]


def _both(messages: list[Message], rule: ToolNameRule) -> tuple[list[Message], dict[str, str]]:
    return to_wire_names(messages, rule), map_call_ids(messages, is_valid=_short)


def test_one_walk_gives_the_names_and_ids_of_two() -> None:
    history = _history()
    for rule in (STANDARD, GEMINI):
        assert wire_tools(history, rule, is_valid=_short) == _both(history, rule)
    renamed, ids = wire_tools(history, STANDARD, is_valid=_short)
    assert ids.keys() == {
        "an_id_much_longer_than_29_characters",
        "an_orphan_result_id_over_29_characters",
    }
    assert renamed[3].tool_results[0].name != "orphan name"  # results with no call are renamed too


def test_a_history_with_nothing_to_map_is_returned_as_it_is() -> None:
    history = [tl.user_message("hi"), tl.assistant_message("hello")]
    renamed, ids = wire_tools(history, STANDARD, is_valid=_short)
    assert renamed is history
    assert ids == {}


@given(conversations(), st.sampled_from([STANDARD, GEMINI]))
def test_wire_tools_is_to_wire_names_and_map_call_ids(
    history: list[Message], rule: ToolNameRule
) -> None:
    assert wire_tools(history, rule, is_valid=_short) == _both(history, rule)
