"""Mistral: nothing but an assistant (or another tool) message right after a tool message.

Mistral answers ``Unexpected role 'user' after role 'tool'`` (code 3230) to a user or system
message right after a tool message. ``encode`` puts a marked assistant message there
(``[tool results received]``) and ``decode`` leaves it out again, whatever the history holds.
"""

from __future__ import annotations

import pytest

import threadline as tl
from tests.conformance import _rules
from threadline import FilePart
from threadline import Message
from threadline import same_content
from threadline.codecs import mistral
from threadline.integrity import prepare_messages

PNG = FilePart(media_type="image/png", data=b"\x89PNG\r\n\x1a\n")
BETWEEN = {"role": "assistant", "content": "[tool results received]"}


def ask(text: str = "What's the weather in Paris?") -> Message:
    return tl.user_message(text)


def call() -> Message:
    return tl.assistant_message(tl.tool_call_part("call_1", "get_weather", {"city": "Paris"}))


def result(content: str | tuple[str | FilePart, ...] = "18C") -> Message:
    return tl.tool_message(tl.tool_result_part("call_1", content))


def roles(history: list[Message]) -> list[str]:
    return [item["role"] for item in mistral.encode(history)["messages"]]


def assert_round_trip(history: list[Message]) -> None:
    payload = mistral.encode(history)
    assert _rules.violations("mistral", payload) == []
    decoded = mistral.decode(payload)
    expected = mistral.normalize_for_round_trip(prepare_messages(history))
    assert len(decoded) == len(expected)
    for got, want in zip(decoded, expected, strict=True):
        assert got.role == want.role
        assert same_content(got, want.model_copy(update={"id": got.id})), (got, want)


def test_the_users_next_question_after_a_result_comes_after_an_assistant_message() -> None:
    history = [ask(), call(), result(), ask("And tomorrow?")]
    assert roles(history) == ["user", "assistant", "tool", "assistant", "user"]
    assert mistral.encode(history)["messages"][3] == BETWEEN
    assert [m.role for m in mistral.decode(mistral.encode(history))] == [
        "user",
        "assistant",
        "tool",
        "user",
    ]
    assert_round_trip(history)


def test_a_repaired_call_followed_by_the_users_question() -> None:
    history = [ask(), call(), ask("Never mind: and tomorrow?")]
    assert roles(history) == ["user", "assistant", "tool", "assistant", "user"]
    assert_round_trip(history)


def test_a_user_message_written_before_the_result() -> None:
    history = [ask(), call(), ask("Still there?"), result()]
    assert roles(history) == ["user", "assistant", "tool", "assistant", "user"]
    assert_round_trip(history)


def test_a_system_message_after_a_result() -> None:
    system = tl.system_message("Be brief.")
    history = [ask(), call(), result(), system, tl.assistant_message("18C.")]
    assert roles(history) == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    assert_round_trip(history)


def test_files_moved_out_of_a_result_come_after_an_assistant_message() -> None:
    history = [ask(), call(), result(("the map", PNG)), tl.assistant_message("Sunny.")]
    assert roles(history) == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    decoded = mistral.decode(mistral.encode(history))
    assert [m.role for m in decoded] == ["user", "assistant", "tool", "assistant"]
    content = decoded[2].tool_results[0].content
    assert isinstance(content, tuple)
    assert PNG in content
    assert_round_trip(history)


def test_files_moved_out_of_the_last_result() -> None:
    history = [ask(), call(), result(("the map", PNG))]
    assert roles(history) == ["user", "assistant", "tool", "assistant", "user"]
    assert_round_trip(history)


def test_an_assistant_message_after_a_result_gets_nothing_in_between() -> None:
    history = [ask(), call(), result(), tl.assistant_message("18C."), ask("Thanks")]
    assert roles(history) == ["user", "assistant", "tool", "assistant", "user"]
    assert mistral.encode(history)["messages"][3] == {"role": "assistant", "content": "18C."}


@pytest.mark.parametrize("following", ["user", "end", "assistant"])
def test_an_assistant_message_that_reads_like_the_marker(following: str) -> None:
    """Written by the caller right after a result: read back unless a user message follows
    (then it is the message ``encode`` adds, a declared loss)."""
    history = [ask(), call(), result(), tl.assistant_message("[tool results received]")]
    if following == "user":
        history.append(ask("And tomorrow?"))
    elif following == "assistant":
        history.append(tl.assistant_message("18C."))
    decoded = mistral.decode(mistral.encode(history))
    kept = any(m.role == "assistant" and m.text == "[tool results received]" for m in decoded)
    assert kept is (following != "user")
    assert_round_trip(history)
