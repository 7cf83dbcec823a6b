"""Anthropic: the live-API rules the SDK types do not check (wire-formats.md, section 9).

A failed ``tool_result`` holds text only and is never empty; the first message is a user
turn. Each case also reads back: texts, ``is_error``, pairing and file bytes survive.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

import threadline as tl
from threadline.codecs import anthropic

PNG = b"\x89PNG\r\n\x1a\n\xfb\xff"
PNG_B64 = base64.b64encode(PNG).decode()
IMAGE = tl.FilePart(media_type="image/png", data=PNG)


def ask(text: str = "Weather in Paris?") -> tl.Message:
    return tl.user_message(text)


def call(call_id: str = "call_1") -> tl.Message:
    return tl.assistant_message(tl.tool_call_part(call_id, "get_weather", {"city": "Paris"}))


def failed(content: Any, call_id: str = "call_1") -> tl.Message:
    return tl.tool_message(tl.tool_result_part(call_id, content, is_error=True))


def result_turn(history: list[tl.Message]) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = anthropic.encode(history)["messages"][2]["content"]
    return content


def read_back_result(history: list[tl.Message]) -> tl.ToolResultPart:
    decoded = anthropic.decode(anthropic.encode(history))
    results = [
        part for message in decoded for part in message.parts if isinstance(part, tl.ToolResultPart)
    ]
    assert len(results) == 1
    return results[0]


def test_a_failed_results_image_goes_after_the_results_of_its_turn() -> None:
    history = [ask(), call(), failed(["the request failed", IMAGE])]
    assert result_turn(history) == [
        {
            "type": "tool_result",
            "tool_use_id": "call_1",
            "content": [
                {"type": "text", "text": "the request failed"},
                {"type": "text", "text": "[file 1 (image/png) is after the tool results]"},
            ],
            "is_error": True,
        },
        {"type": "text", "text": "[files from tool result call_1]"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}},
    ]


def test_a_failed_results_image_reads_back_into_the_result() -> None:
    history = [ask(), call(), failed(["the request failed", IMAGE])]
    back = read_back_result(history)
    assert back.is_error
    assert back.call_id == "call_1"
    assert back.content == (tl.TextPart(text="the request failed"), IMAGE)


def test_the_users_next_words_stay_after_the_moved_files_and_read_back_as_theirs() -> None:
    history = [ask(), call(), failed([IMAGE]), ask("Try again?")]
    turn = result_turn(history)
    assert [block["type"] for block in turn] == ["tool_result", "text", "image", "text"]
    assert turn[-1] == {"type": "text", "text": "Try again?"}
    decoded = anthropic.decode(anthropic.encode(history))
    assert [message.role for message in decoded] == ["user", "assistant", "tool", "user"]
    back = decoded[2].parts[0]
    assert isinstance(back, tl.ToolResultPart)
    assert (back.call_id, back.content, back.is_error) == ("call_1", (IMAGE,), True)
    assert decoded[3].parts == (tl.TextPart(text="Try again?"),)


def test_files_of_several_failed_results_go_back_to_their_own_results() -> None:
    other = tl.FilePart(media_type="application/pdf", data=b"%PDF-1.4", filename="log.pdf")
    history = [
        ask(),
        tl.assistant_message(
            tl.tool_call_part("call_1", "get_weather", {"city": "Paris"}),
            tl.tool_call_part("call_2", "get_weather", {"city": "Rome"}),
        ),
        tl.tool_message(
            tl.tool_result_part("call_1", ["down", IMAGE], is_error=True),
            tl.tool_result_part("call_2", [other, "also down"], is_error=True),
        ),
    ]
    turn = result_turn(history)
    assert [block["type"] for block in turn[:2]] == ["tool_result", "tool_result"]
    for block in turn[:2]:
        assert {inner["type"] for inner in block["content"]} == {"text"}
    decoded = anthropic.decode(anthropic.encode(history))
    contents = {
        part.call_id: part.content
        for message in decoded
        for part in message.parts
        if isinstance(part, tl.ToolResultPart)
    }
    assert contents == {
        "call_1": (tl.TextPart(text="down"), IMAGE),
        "call_2": (other, tl.TextPart(text="also down")),
    }
    assert [message.role for message in decoded] == ["user", "assistant", "tool"]


def test_a_successful_results_image_stays_inside_the_result() -> None:
    history = [ask(), call(), tl.tool_message(tl.tool_result_part("call_1", ["map", IMAGE]))]
    turn = result_turn(history)
    assert len(turn) == 1
    assert [inner["type"] for inner in turn[0]["content"]] == ["text", "image"]


@pytest.mark.parametrize("content", ["", "  ", (), ["", " "]])
def test_an_empty_failed_result_says_so_and_reads_back_empty(content: Any) -> None:
    history = [ask(), call(), failed(content)]
    block = result_turn(history)[0]
    assert block["is_error"] is True
    assert block["content"] == "[no content]"
    back = read_back_result(history)
    assert back.is_error
    assert back.content == ""


def test_a_failed_result_whose_only_file_is_dropped_is_not_empty() -> None:
    audio = tl.FilePart(media_type="audio/wav", data=b"RIFF....WAVE")
    history = [ask(), call(), failed([audio])]
    block = anthropic.encode(history, unsupported="drop")["messages"][2]["content"][0]
    assert block["content"] == "[no content]"
    placeholder = anthropic.encode(history)["messages"][2]["content"][0]
    assert placeholder["content"] == [
        {"type": "text", "text": "[audio/wav omitted: not supported by anthropic]"}
    ]


def test_an_empty_successful_result_is_still_sent_without_content() -> None:
    history = [ask(), call(), tl.tool_message(tl.tool_result_part("call_1", ""))]
    assert "content" not in result_turn(history)[0]


def test_a_history_that_opens_with_the_assistant_gets_a_user_turn_first() -> None:
    history = [tl.assistant_message("Hello!"), ask()]
    payload = anthropic.encode(history)
    assert payload["messages"][0] == {
        "role": "user",
        "content": [{"type": "text", "text": "[conversation start]"}],
    }
    assert payload["messages"][1]["role"] == "assistant"
    decoded = anthropic.decode(payload)
    assert [message.role for message in decoded] == ["assistant", "user"]


def test_a_leading_system_message_does_not_count_as_the_first_turn() -> None:
    history = [tl.system_message("Be brief."), tl.assistant_message("Hello!"), ask()]
    payload = anthropic.encode(history)
    assert payload["system"] == "Be brief."
    assert payload["messages"][0]["role"] == "user"
    assert [m.role for m in anthropic.decode(payload)] == ["system", "assistant", "user"]


def test_a_history_that_opens_with_the_user_is_unchanged() -> None:
    payload = anthropic.encode([ask(), tl.assistant_message("Hi.")])
    assert payload["messages"][0]["content"] == [{"type": "text", "text": "Weather in Paris?"}]
