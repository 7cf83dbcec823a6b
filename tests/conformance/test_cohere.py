"""Cohere v2 Chat output, judged by the ``cohere`` package's own types and client: its message
types (with the keys they do not define refused), its ``ClientV2`` over a mock transport (what
it sends, what it returns, its stream events)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings

import threadline as tl
from tests.conformance._histories import agent_histories
from tests.conformance._histories import encode_options
from tests.conformance._histories import role_parts
from tests.conformance._rules import judge_rules
from tests.conformance.judges import WireError
from tests.conformance.judges_cohere import capture_cohere
from tests.conformance.judges_cohere import judge_cohere
from tests.stream_recordings import COHERE as RECORDED
from tests.support import require_module
from threadline import Message
from threadline.codecs import cohere
from threadline.integrity import prepare_messages
from threadline.testing import check_codec

pytestmark = pytest.mark.requires_sdk

# Cohere's tool-use docs: a plan and a call, then the answer with a citation of the result.
CALL_REPLY: dict[str, Any] = {
    "id": "c14c80c3-18eb-4519-9460-6c92edd8cfb4",
    "finish_reason": "TOOL_CALL",
    "message": {
        "role": "assistant",
        "tool_plan": "I will look up the weather in Toronto.",
        "tool_calls": [
            {
                "id": "get_weather_1byjy32y4hvq",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"location":"Toronto"}'},
            }
        ],
    },
    "usage": {
        "billed_units": {"input_tokens": 37, "output_tokens": 28},
        "tokens": {"input_tokens": 913, "output_tokens": 83},
    },
}
ANSWER_REPLY: dict[str, Any] = {
    "id": "6e6ae7d4-9b8a-4a0e-9b1b-0c1d1b0c1d1b",
    "finish_reason": "COMPLETE",
    "message": {
        "role": "assistant",
        "content": [{"type": "text", "text": "It is 24 degrees in Toronto."}],
        "citations": [
            {
                "start": 6,
                "end": 16,
                "text": "24 degrees",
                "type": "TEXT_CONTENT",
                "sources": [
                    {
                        "type": "tool",
                        "id": "get_weather_1byjy32y4hvq:0",
                        "tool_output": {"temperature": 24},
                    }
                ],
            }
        ],
    },
    "usage": {
        "billed_units": {"input_tokens": 61, "output_tokens": 9},
        "tokens": {"input_tokens": 1011, "output_tokens": 41},
        "cached_tokens": 896,
    },
}


@pytest.fixture(autouse=True)
def _sdk() -> None:
    require_module("cohere")


def stream_events(events: list[dict[str, Any]]) -> Iterator[Any]:
    """What ``ClientV2(...).chat_stream`` yields for the SSE stream of ``events``."""
    cohere_sdk = require_module("cohere")
    httpx = require_module("httpx")
    text = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)

    def handle(request: Any) -> Any:
        headers = {"content-type": "text/event-stream"}
        return httpx.Response(200, content=text.encode(), headers=headers)

    client = cohere_sdk.ClientV2(
        api_key="capture-key", httpx_client=httpx.Client(transport=httpx.MockTransport(handle))
    )
    return iter(
        client.chat_stream(model="command-a-03-2025", messages=[{"role": "user", "content": "Hi"}])
    )


@given(agent_histories(), encode_options)
def test_every_payload_passes_the_sdk_types_and_the_rules(
    history: list[Message], kw: dict[str, Any]
) -> None:
    payload = cohere.encode(history, **kw)
    judge_cohere(payload)
    judge_rules("cohere", payload)


@given(agent_histories(), encode_options)
def test_decode_reads_back_the_prepared_history_up_to_the_declared_losses(
    history: list[Message], kw: dict[str, Any]
) -> None:
    decoded = cohere.decode(cohere.encode(history, **kw))
    expected = cohere.normalize_for_round_trip(prepare_messages(history), **kw)
    assert role_parts(decoded) == role_parts(expected)


@settings(max_examples=15)
@given(agent_histories(max_turns=3))
def test_the_real_client_sends_exactly_our_payload(history: list[Message]) -> None:
    payload = cohere.encode([*history, tl.user_message("And now?")])
    sent = capture_cohere({"model": "command-a-03-2025", **payload}, ANSWER_REPLY)
    assert sent["url"] == "https://api.cohere.com/v2/chat"
    assert sent["json"] == {"model": "command-a-03-2025", "stream": False, **payload}


def test_the_judge_refuses_what_the_api_refuses() -> None:
    with pytest.raises(WireError, match="unknown key 'refusal'"):
        judge_cohere({"messages": [{"role": "assistant", "content": "x", "refusal": None}]})
    with pytest.raises(WireError, match="answers no earlier call"):
        judge_cohere({"messages": [{"role": "tool", "tool_call_id": "c1", "content": "x"}]})
    with pytest.raises(WireError):
        judge_cohere({"messages": [{"role": "tool", "content": "x"}]})


def test_a_tool_loop_reads_from_the_sdk_and_goes_back_out() -> None:
    asked = [tl.user_message("What's the weather in Toronto?")]
    sent = capture_cohere({"model": "command-a-03-2025", **cohere.encode(asked)}, CALL_REPLY)
    called = cohere.decode_response(sent["response"])
    assert called.parts == (
        tl.TextPart(
            text="I will look up the weather in Toronto.", metadata={cohere.TOOL_PLAN: True}
        ),
        tl.tool_call_part("get_weather_1byjy32y4hvq", "get_weather", {"location": "Toronto"}),
    )
    assert called.metadata["usage"] == tl.Usage(input_tokens=913, output_tokens=83).to_dict()
    assert called == cohere.decode_response(CALL_REPLY).model_copy(update={"id": called.id})
    result = tl.ToolResultPart(
        call_id="get_weather_1byjy32y4hvq",
        content=(tl.TextPart(text='{"temperature":24}', metadata={cohere.DOCUMENT: True}),),
    )
    history = [*asked, called, tl.tool_message(result)]
    payload = cohere.encode(history)
    judge_cohere(payload)
    assert payload["messages"][1:] == [
        {
            "role": "assistant",
            "tool_plan": "I will look up the weather in Toronto.",
            "tool_calls": CALL_REPLY["message"]["tool_calls"],
        },
        {
            "role": "tool",
            "tool_call_id": "get_weather_1byjy32y4hvq",
            "content": [{"type": "document", "document": {"data": {"temperature": 24}}}],
        },
    ]
    answered = capture_cohere({"model": "command-a-03-2025", **payload}, ANSWER_REPLY)
    assert answered["json"]["messages"] == payload["messages"]
    answer = cohere.decode_response(answered["response"])
    assert answer.text == "It is 24 degrees in Toronto."
    citations = answer.parts[0].metadata[cohere.CITATIONS]
    assert citations == ANSWER_REPLY["message"]["citations"]
    assert answer.metadata["usage"]["cache_read_tokens"] == 896


def test_the_sdk_stream_events_assemble_into_what_decode_response_reads() -> None:
    assembler = tl.StreamAssembler("cohere")
    for event in stream_events(RECORDED):
        assembler.feed(event)
    message = assembler.message()
    assert message.text == "I will look up the weather in Toronto."
    assert [type(part).__name__ for part in message.parts] == [
        "ReasoningPart",
        "TextPart",
        "ToolCallPart",
    ]
    assert message.tool_calls[0].arguments == {"location": "Toronto"}
    assert message.metadata["stop_reason"] == "TOOL_CALL"
    plain = tl.StreamAssembler("cohere")
    for event in RECORDED:
        plain.feed(event)
    assert plain.message().parts == message.parts


def test_check_codec_passes_with_the_sdk_judge() -> None:
    check_codec(cohere, validate=judge_cohere)
