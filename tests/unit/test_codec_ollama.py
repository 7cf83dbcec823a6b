"""The Ollama codec's own choices, without the ``ollama`` package (its judge and client are in
``tests/conformance/test_ollama.py``): how parts split into wire messages, how ``decode``
pairs results with calls that carry no id, and what it refuses."""

from __future__ import annotations

import re
from typing import Any

import pytest

import threadline as tl
from threadline import CodecError
from threadline.codecs import ollama

PNG = b"\x89PNG\r\n\x1a\n" + bytes(8)


def test_an_assistant_turn_splits_where_a_part_cannot_follow_in_one_message() -> None:
    turn = tl.assistant_message(
        tl.reasoning_part("First.", provider="ollama"),
        "Looking.",
        tl.tool_call_part("c1", "f", {"a": 1}),
        "And more.",
        tl.reasoning_part("Second.", provider="ollama"),
        "Done.",
    )
    # (the call goes unanswered: repair adds a failed result after the turn)
    messages = ollama.encode([tl.user_message("Go."), turn])["messages"][1:4]
    assert messages == [
        {
            "role": "assistant",
            "content": "Looking.",
            "thinking": "First.",
            "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}],
        },
        {"role": "assistant", "content": "And more."},
        {"role": "assistant", "content": "Done.", "thinking": "Second."},
    ]
    parts = [part for message in ollama.decode(messages) for part in message.parts]
    assert [type(part).__name__ for part in parts] == [
        "ReasoningPart",
        "TextPart",
        "ToolCallPart",
        "TextPart",
        "ReasoningPart",
        "TextPart",
    ]


def test_several_texts_go_as_several_messages_never_joined() -> None:
    payload = ollama.encode([tl.user_message("One.", "Two."), tl.system_message("Be brief.")])
    assert payload["messages"] == [
        {"role": "user", "content": "One."},
        {"role": "user", "content": "Two."},
        {"role": "system", "content": "Be brief."},
    ]


def test_an_image_before_any_text_goes_with_empty_content() -> None:
    payload = ollama.encode([tl.user_message(tl.file_part(PNG, "image/png"), "What is it?")])
    assert payload["messages"] == [
        {"role": "user", "content": "", "images": ["iVBORw0KGgoAAAAAAAAAAA=="]},
        {"role": "user", "content": "What is it?"},
    ]
    (first, second) = ollama.decode(payload)
    assert first.parts == (tl.FilePart(data=PNG, media_type="image/png"),)
    assert second.text == "What is it?"


def test_bytes_that_are_not_the_named_image_follow_the_unsupported_policy() -> None:
    history = [tl.user_message("See.", tl.file_part(b"not a png", "image/png"))]
    assert ollama.encode(history)["messages"][1]["content"] == (
        "[image/png omitted: not supported by ollama]"
    )
    with pytest.raises(tl.UnsupportedContentError, match="ollama"):
        ollama.encode(history, unsupported="raise")


def test_foreign_reasoning_is_dropped_or_sent_as_text() -> None:
    history = [
        tl.user_message("Hi."),
        tl.assistant_message(
            tl.reasoning_part("Hmm.", signature="sig", provider="anthropic"), "Hello."
        ),
    ]
    assert ollama.encode(history)["messages"][1] == {"role": "assistant", "content": "Hello."}
    texts = ollama.encode(history, reasoning="text")["messages"][1:]
    assert texts == [
        {"role": "assistant", "content": "Hmm."},
        {"role": "assistant", "content": "Hello."},
    ]


def test_decode_takes_json_text_arguments_and_keeps_what_is_not_an_object() -> None:
    call = {"function": {"name": "f", "arguments": '{"tz": "Eu'}}
    messages = [
        {"role": "user", "content": "Go."},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "content": "[tool error] bad arguments"},
    ]
    _, assistant, results = ollama.decode(messages)
    (read,) = assistant.tool_calls
    assert (read.id, dict(read.arguments), read.raw_arguments) == ("call_0", {}, '{"tz": "Eu')
    (result,) = results.tool_results
    assert (result.call_id, result.content, result.is_error) == ("call_0", "bad arguments", True)


def test_a_result_without_a_call_gets_an_id_of_its_own() -> None:
    messages = [
        {"role": "user", "content": "Go."},
        {"role": "tool", "content": "stray", "tool_name": "f"},
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f"}}]},
    ]
    _, results, assistant = ollama.decode(messages)
    assert results.tool_results[0].call_id == "call_0"
    assert assistant.tool_calls[0].id == "call_1"
    assert dict(assistant.tool_calls[0].arguments) == {}


@pytest.mark.parametrize(
    ("messages", "where"),
    [
        ([{"role": "developer", "content": "x"}], "messages[0].role"),
        ([{"role": "user", "content": ["x"]}], "messages[0].content"),
        ([{"role": "system", "content": "x", "images": ["aGk="]}], "messages[0].images"),
        ([{"role": "user", "content": "x", "images": ["not base64!"]}], "messages[0].images[0]"),
        ([{"role": "tool", "content": "x", "images": []}], "messages[0].images"),
        (
            [{"role": "assistant", "content": "", "tool_calls": [{"function": {"name": 3}}]}],
            "messages[0].tool_calls[0].function.name",
        ),
        (
            [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": 3}}]}],
            "messages[0].tool_calls[0].function.arguments",
        ),
        ([{"role": "assistant", "content": "", "tool_calls": {}}], "messages[0].tool_calls"),
    ],
)
def test_decode_names_the_value_that_does_not_fit(messages: list[Any], where: str) -> None:
    with pytest.raises(CodecError, match=f"Ollama chat payload: {re.escape(where)}:"):
        ollama.decode({"messages": messages})


def test_decode_response_holds_one_message() -> None:
    reply = {"model": "llama3.2", "message": {"role": "assistant", "content": "Hi."}, "done": True}
    assert ollama.decode_response(reply).text == "Hi."
    assert ollama.decode_response(reply).metadata == {"provider": "ollama", "model": "llama3.2"}
    with pytest.raises(ValueError, match="one message"):
        ollama.decode_response(reply, choice=1)
    with pytest.raises(CodecError, match="message: required but missing"):
        ollama.decode_response({"model": "llama3.2", "done": True})
    with pytest.raises(CodecError, match="eval_count"):
        ollama.decode_response({**reply, "eval_count": -1})
