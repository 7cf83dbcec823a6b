"""The Cohere v2 Chat codec (``cohere``): what it writes, reads and refuses."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings

import threadline as tl
from tests.strategies import conversations
from tests.support import examples
from threadline.codecs import cohere
from threadline.integrity import prepare_messages

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
WEATHER = tl.ToolDefinition(
    name="get_weather",
    description="The weather in a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)


def last_result(messages: list[tl.Message]) -> tl.ToolResultPart:
    part = messages[-1].parts[0]
    assert isinstance(part, tl.ToolResultPart)
    return part


def call_history() -> list[tl.Message]:
    return [
        tl.user_message("Weather?"),
        tl.assistant_message(
            tl.TextPart(text="I will look it up.", metadata={cohere.TOOL_PLAN: True}),
            tl.tool_call_part("c1", "get_weather", {"city": "Paris"}),
        ),
        tl.tool_message(tl.tool_result_part("c1", "18C")),
    ]


def test_a_tool_loop_is_written_as_cohere_takes_it() -> None:
    payload = cohere.encode(call_history(), system="Be brief.")
    assert payload == {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "tool_plan": "I will look it up.",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "18C"},
        ]
    }
    decoded = cohere.decode(payload)
    assert [m.role for m in decoded] == ["system", "user", "assistant", "tool"]
    assert decoded[2].parts == call_history()[1].parts
    assert last_result(decoded).name == "get_weather"  # named after its call


def test_a_document_result_goes_as_a_document_and_other_texts_as_text() -> None:
    document = tl.TextPart(text='{"temp":18}', metadata={cohere.DOCUMENT: "doc-1"})
    spaced = tl.TextPart(text='{"temp": 18}', metadata={cohere.DOCUMENT: True})  # not compact
    result = tl.ToolResultPart(call_id="c1", content=(document, spaced, tl.text_part("note")))
    history = [*call_history()[:2], tl.tool_message(result)]
    content = cohere.encode(history)["messages"][-1]["content"]
    assert content == [
        {"type": "document", "document": {"data": {"temp": 18}, "id": "doc-1"}},
        {"type": "text", "text": '{"temp": 18}'},
        {"type": "text", "text": "note"},
    ]
    read = last_result(cohere.decode(cohere.encode(history)))
    assert read.content[0] == document
    assert read.content[1] == tl.TextPart(text='{"temp": 18}')


def test_a_failed_result_is_text_with_the_error_prefix() -> None:
    document = tl.TextPart(text='{"e":1}', metadata={cohere.DOCUMENT: True})
    result = tl.ToolResultPart(call_id="c1", content=(document,), is_error=True)
    history = [*call_history()[:2], tl.tool_message(result)]
    content = cohere.encode(history)["messages"][-1]["content"]
    assert content == [{"type": "text", "text": '[tool error] {"e":1}'}]
    read = last_result(cohere.decode(cohere.encode(history)))
    assert read.is_error
    assert read.content == (tl.TextPart(text='{"e":1}'),)


def test_a_result_image_moves_to_a_user_message_and_comes_back() -> None:
    image = tl.FilePart(media_type="image/png", data=PNG)
    result = tl.ToolResultPart(call_id="c1", content=(tl.text_part("chart:"), image))
    history = [*call_history()[:2], tl.tool_message(result)]
    messages = cohere.encode(history)["messages"]
    assert messages[-1]["role"] == "user"
    assert messages[-1]["content"][1]["type"] == "image_url"
    read = last_result(cohere.decode(messages))
    assert read.content == (tl.text_part("chart:"), image)


def test_cohere_reasoning_goes_back_as_thinking_and_others_do_not() -> None:
    own = tl.ReasoningPart(text="Think.", provider="cohere")
    other = tl.ReasoningPart(text="Hmm.", signature="sig", provider="anthropic")
    history = [tl.user_message("Hi"), tl.assistant_message(own, other, tl.text_part("Hello."))]
    assistant = cohere.encode(history)["messages"][1]
    assert assistant["content"] == [
        {"type": "thinking", "thinking": "Think."},
        {"type": "text", "text": "Hello."},
    ]


def test_decode_response_reads_the_sdk_float_counts_and_citations() -> None:
    response: dict[str, Any] = {
        "id": "r1",
        "finish_reason": "COMPLETE",
        "message": {
            "role": "assistant",
            "content": [{"type": "thinking", "thinking": "Plan."}, {"type": "text", "text": "Hi"}],
            "citations": [{"start": 0, "end": 2, "text": "Hi", "sources": None}],
        },
        "usage": {"billed_units": {"input_tokens": 2.0, "output_tokens": 1.0}},
    }
    message = cohere.decode_response(response, model="command-a-reasoning-08-2025")
    assert message.parts[0] == tl.ReasoningPart(
        text="Plan.", provider="cohere", model="command-a-reasoning-08-2025"
    )
    assert message.parts[1].metadata[cohere.CITATIONS] == [{"start": 0, "end": 2, "text": "Hi"}]
    assert message.metadata["usage"]["input_tokens"] == 2
    assert message.metadata["stop_reason"] == "COMPLETE"


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ({"messages": [{"role": "developer", "content": "x"}]}, "messages[0].role"),
        (
            {"messages": [{"role": "user", "content": [{"type": "document", "document": {}}]}]},
            "messages[0].content[0].type",
        ),
        (
            {"messages": [{"role": "tool", "tool_call_id": "c", "content": [{"type": "image"}]}]},
            "messages[0].content[0].type",
        ),
    ],
)
def test_decode_refuses_what_is_not_cohere_naming_the_path(payload: Any, path: str) -> None:
    with pytest.raises(tl.CodecError, match=path.replace("[", r"\[").replace("]", r"\]")):
        cohere.decode(payload)


def test_a_response_of_another_format_is_named() -> None:
    with pytest.raises(tl.CodecError, match="provider='openai_chat'"):
        cohere.decode_response({"choices": [{"message": {"role": "assistant", "content": "x"}}]})


def test_tools_tool_choice_and_output_schema_in_cohere_shape() -> None:
    body = tl.encode(call_history(), provider="cohere", tools=[WEATHER], tool_choice="required")
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "The weather in a city.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]
    assert body["tool_choice"] == "REQUIRED"
    none = tl.encode(call_history(), provider="cohere", tools=[WEATHER], tool_choice="none")
    assert none["tool_choice"] == "NONE"
    auto = tl.encode(call_history(), provider="cohere", tools=[WEATHER], tool_choice="auto")
    assert "tool_choice" not in auto
    with pytest.raises(tl.UnsupportedContentError, match="REQUIRED or NONE"):
        tl.encode(call_history(), provider="cohere", tools=[WEATHER], tool_choice="get_weather")
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    shaped = tl.encode([tl.user_message("Hi")], provider="cohere", output_schema=schema)
    assert shaped["response_format"] == {"type": "json_object", "json_schema": schema}


@settings(max_examples=examples(40), deadline=None)
@given(conversations())
def test_the_round_trip_is_the_declared_losses(history: list[tl.Message]) -> None:
    prepared = prepare_messages(history)
    decoded = cohere.decode(cohere.encode(prepared, integrity="off"))
    expected = cohere.normalize_for_round_trip(prepared)
    assert [(m.role, m.parts) for m in decoded] == [(m.role, m.parts) for m in expected]
