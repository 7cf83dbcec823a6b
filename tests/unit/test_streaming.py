"""StreamAssembler: recorded-shape streams fed as dicts and as the SDKs' own event objects,
checked against the SDKs' own accumulators where they have one; failures and the public API."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.stream_cases import FINAL, STREAMS
from threadline import (
    CodecError,
    Finish,
    Message,
    PartEnd,
    PartStart,
    ReasoningDelta,
    StreamAssembler,
    TextDelta,
    ToolCallDelta,
    ToolCallPart,
    UnknownProviderError,
    assemble,
    astream,
    decode_response,
    prepare_messages,
    user_message,
)


def same(a: Message, b: Message) -> bool:
    return (a.role, a.parts, a.metadata) == (b.role, b.parts, b.metadata)


ANTHROPIC: list[dict[str, Any]] = [
    {
        "type": "message_start",
        "message": {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": "claude-sonnet-4-5-20250929",
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": 472,
                "output_tokens": 2,
                "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0,
            },
        },
    },
    {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "thinking", "thinking": "", "signature": ""},
    },
    {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "thinking_delta", "thinking": "The user wants "},
    },
    {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "thinking_delta", "thinking": "the weather."},
    },
    {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},
    },
    {"type": "content_block_stop", "index": 0},
    {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
    {"type": "ping"},
    {
        "type": "content_block_delta",
        "index": 1,
        "delta": {"type": "text_delta", "text": "Let me check"},
    },
    {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "."}},
    {"type": "content_block_stop", "index": 1},
    {
        "type": "content_block_start",
        "index": 2,
        "content_block": {
            "type": "tool_use",
            "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
            "name": "get_weather",
            "input": {},
        },
    },
    {
        "type": "content_block_delta",
        "index": 2,
        "delta": {"type": "input_json_delta", "partial_json": ""},
    },
    {
        "type": "content_block_delta",
        "index": 2,
        "delta": {"type": "input_json_delta", "partial_json": '{"location": "San Fra'},
    },
    {
        "type": "content_block_delta",
        "index": 2,
        "delta": {"type": "input_json_delta", "partial_json": 'ncisco, CA"}'},
    },
    {"type": "content_block_stop", "index": 2},
    {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        "usage": {"output_tokens": 89},
    },
    {"type": "message_stop"},
]


def _chat_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-B9",
        "object": "chat.completion.chunk",
        "created": 1741570283,
        "model": "gpt-4o-2024-08-06",
        "system_fingerprint": "fp_eb9dce56a8",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


OPENAI_CHAT: list[dict[str, Any]] = [
    _chat_chunk({"role": "assistant", "content": None, "refusal": None}),
    _chat_chunk({"content": "Checking"}),
    _chat_chunk({"content": " both."}),
    _chat_chunk(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": ""},
                }
            ]
        }
    ),
    _chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city": '}}]}),
    _chat_chunk(
        {
            "tool_calls": [
                {
                    "index": 1,
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": "get_time", "arguments": '{"tz"'},
                }
            ]
        }
    ),
    _chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]}),
    _chat_chunk({"tool_calls": [{"index": 1, "function": {"arguments": ': "CET"}'}}]}),
    _chat_chunk({}, "tool_calls"),
    {
        **_chat_chunk({}),
        "choices": [],
        "usage": {
            "prompt_tokens": 82,
            "completion_tokens": 40,
            "total_tokens": 122,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        },
    },
]


def _mistral_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "cmpl-e5cc70bb",
        "object": "chat.completion.chunk",
        "created": 1702256327,
        "model": "mistral-large-latest",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


MISTRAL: list[dict[str, Any]] = [
    _mistral_chunk({"role": "assistant", "content": ""}),
    _mistral_chunk({"content": "Let me "}),
    _mistral_chunk({"content": "look."}),
    _mistral_chunk(
        {
            "tool_calls": [
                {
                    "id": "D681PevKs",
                    "index": 0,
                    "function": {
                        "name": "retrieve_payment_status",
                        "arguments": '{"transaction_id": "T1001"}',
                    },
                }
            ]
        }
    ),
    {
        **_mistral_chunk({"content": ""}, "tool_calls"),
        "usage": {"prompt_tokens": 90, "completion_tokens": 25, "total_tokens": 115},
    },
]

# As boto3's ``converse_stream(...)["stream"]`` yields them (there is no typed event object).
BEDROCK: list[dict[str, Any]] = [
    {"messageStart": {"role": "assistant"}},
    {
        "contentBlockDelta": {
            "delta": {"reasoningContent": {"text": "Weather: use "}},
            "contentBlockIndex": 0,
        }
    },
    {
        "contentBlockDelta": {
            "delta": {"reasoningContent": {"text": "the tool."}},
            "contentBlockIndex": 0,
        }
    },
    {
        "contentBlockDelta": {
            "delta": {"reasoningContent": {"signature": "ErcBCkgIBRAB"}},
            "contentBlockIndex": 0,
        }
    },
    {"contentBlockStop": {"contentBlockIndex": 0}},
    {"contentBlockDelta": {"delta": {"text": "Checking"}, "contentBlockIndex": 1}},
    {"contentBlockDelta": {"delta": {"text": " now."}, "contentBlockIndex": 1}},
    {"contentBlockStop": {"contentBlockIndex": 1}},
    {
        "contentBlockStart": {
            "start": {
                "toolUse": {"toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "name": "top_song"}
            },
            "contentBlockIndex": 2,
        }
    },
    {"contentBlockDelta": {"delta": {"toolUse": {"input": '{"sign": '}}, "contentBlockIndex": 2}},
    {"contentBlockDelta": {"delta": {"toolUse": {"input": '"WZPZ"}'}}, "contentBlockIndex": 2}},
    {"contentBlockStop": {"contentBlockIndex": 2}},
    {"messageStop": {"stopReason": "tool_use"}},
    {
        "metadata": {
            "usage": {"inputTokens": 375, "outputTokens": 71, "totalTokens": 446},
            "metrics": {"latencyMs": 1664},
        }
    },
]


def _gemini_chunk(parts: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}],
        "usageMetadata": {"promptTokenCount": 31, "totalTokenCount": 31},
        "modelVersion": "gemini-2.5-flash",
        "responseId": "mC9taNvXBLGCxN8P5p3d2Qo",
        **extra,
    }


GEMINI: list[dict[str, Any]] = [
    _gemini_chunk([{"text": "**Checking the weather**\n\nI need", "thought": True}]),
    _gemini_chunk([{"text": " the tool.", "thought": True}]),
    _gemini_chunk([{"text": "Let me look", "thoughtSignature": "CiQB0e2Kb3zq"}]),
    _gemini_chunk(
        [
            {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
            {"functionCall": {"name": "get_time", "args": {"tz": "CET"}}},
        ]
    ),
    {
        **_gemini_chunk([{"text": "", "thoughtSignature": "EqwDCqkDAdHtim9w"}]),
        "usageMetadata": {
            "promptTokenCount": 31,
            "candidatesTokenCount": 40,
            "totalTokenCount": 120,
            "thoughtsTokenCount": 49,
        },
    },
]
GEMINI[-1]["candidates"][0]["finishReason"] = "STOP"

_RESPONSE_TOP: dict[str, Any] = {
    "id": "resp_67ccd2bed1ec8190b14f964abc054267",
    "object": "response",
    "created_at": 1741476542,
    "model": "gpt-5-2025-08-07",
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
}
_REASONING = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": "**Plan**\n\nCall the tool."}],
    "encrypted_content": "gAAAAABo-enc",
}
_MESSAGE = {
    "type": "message",
    "id": "msg_1",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "One moment.", "annotations": []}],
}
_CALL = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_9kP",
    "name": "get_weather",
    "arguments": '{"city":"Paris"}',
    "status": "completed",
}
_RESPONSE_DONE = {
    **_RESPONSE_TOP,
    "status": "completed",
    "output": [_REASONING, _MESSAGE, _CALL],
    "usage": {
        "input_tokens": 36,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": 87,
        "output_tokens_details": {"reasoning_tokens": 64},
        "total_tokens": 123,
    },
}
OPENAI_RESPONSES: list[dict[str, Any]] = [
    {
        "type": "response.created",
        "response": {**_RESPONSE_TOP, "status": "in_progress", "output": []},
    },
    {
        "type": "response.output_item.added",
        "output_index": 0,
        "item": {**_REASONING, "summary": []},
    },
    {
        "type": "response.reasoning_summary_part.added",
        "item_id": "rs_1",
        "output_index": 0,
        "summary_index": 0,
        "part": {"type": "summary_text", "text": ""},
    },
    {
        "type": "response.reasoning_summary_text.delta",
        "item_id": "rs_1",
        "output_index": 0,
        "summary_index": 0,
        "delta": "**Plan**\n\n",
    },
    {
        "type": "response.reasoning_summary_text.delta",
        "item_id": "rs_1",
        "output_index": 0,
        "summary_index": 0,
        "delta": "Call the tool.",
    },
    {
        "type": "response.reasoning_summary_text.done",
        "item_id": "rs_1",
        "output_index": 0,
        "summary_index": 0,
        "text": "**Plan**\n\nCall the tool.",
    },
    {
        "type": "response.reasoning_summary_part.done",
        "item_id": "rs_1",
        "output_index": 0,
        "summary_index": 0,
        "part": _REASONING["summary"][0],
    },
    {"type": "response.output_item.done", "output_index": 0, "item": _REASONING},
    {
        "type": "response.output_item.added",
        "output_index": 1,
        "item": {**_MESSAGE, "status": "in_progress", "content": []},
    },
    {
        "type": "response.content_part.added",
        "item_id": "msg_1",
        "output_index": 1,
        "content_index": 0,
        "part": {"type": "output_text", "text": "", "annotations": []},
    },
    {
        "type": "response.output_text.delta",
        "logprobs": [],
        "item_id": "msg_1",
        "output_index": 1,
        "content_index": 0,
        "delta": "One ",
    },
    {
        "type": "response.output_text.delta",
        "logprobs": [],
        "item_id": "msg_1",
        "output_index": 1,
        "content_index": 0,
        "delta": "moment.",
    },
    {
        "type": "response.output_text.done",
        "logprobs": [],
        "item_id": "msg_1",
        "output_index": 1,
        "content_index": 0,
        "text": "One moment.",
    },
    {
        "type": "response.content_part.done",
        "item_id": "msg_1",
        "output_index": 1,
        "content_index": 0,
        "part": _MESSAGE["content"][0],
    },
    {"type": "response.output_item.done", "output_index": 1, "item": _MESSAGE},
    {
        "type": "response.output_item.added",
        "output_index": 2,
        "item": {**_CALL, "arguments": "", "status": "in_progress"},
    },
    {
        "type": "response.function_call_arguments.delta",
        "item_id": "fc_1",
        "output_index": 2,
        "delta": '{"city":',
    },
    {
        "type": "response.function_call_arguments.delta",
        "item_id": "fc_1",
        "output_index": 2,
        "delta": '"Paris"}',
    },
    {
        "type": "response.function_call_arguments.done",
        "item_id": "fc_1",
        "output_index": 2,
        "arguments": '{"city":"Paris"}',
    },
    {"type": "response.output_item.done", "output_index": 2, "item": _CALL},
    {"type": "response.completed", "response": _RESPONSE_DONE},
]
for _number, _event in enumerate(OPENAI_RESPONSES):
    _event["sequence_number"] = _number

SDK_MODULE = {
    "openai_responses": "openai",
    "gemini": "google.genai",
    "anthropic": "anthropic",
    "openai_chat": "openai",
    "mistral": "mistralai",
}

RECORDED = {
    "anthropic": ANTHROPIC,
    "bedrock": BEDROCK,
    "gemini": GEMINI,
    "mistral": MISTRAL,
    "openai_chat": OPENAI_CHAT,
    "openai_responses": OPENAI_RESPONSES,
}


def _sdk_events(provider: str, events: list[dict[str, Any]]) -> list[Any]:
    """The events parsed by the provider SDK's own stream types."""
    if provider == "anthropic":
        from anthropic.types import RawMessageStreamEvent
        from pydantic import TypeAdapter

        adapter: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)
        # the SDK's SSE layer drops pings before its event types see them
        return [adapter.validate_python(e) for e in events if e["type"] != "ping"]
    if provider == "openai_chat":
        from openai.types.chat import ChatCompletionChunk

        return [ChatCompletionChunk.model_validate(event) for event in events]
    if provider == "mistral":
        from mistralai.client.models import CompletionChunk

        return [CompletionChunk.model_validate(event) for event in events]
    if provider == "openai_responses":
        from openai.types.responses import ResponseStreamEvent
        from pydantic import TypeAdapter

        events_adapter: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
        return [events_adapter.validate_python(event) for event in events]
    if provider == "gemini":
        from google.genai import types

        return [types.GenerateContentResponse.model_validate(event) for event in events]
    raise AssertionError(provider)


@pytest.mark.parametrize("provider", sorted(SDK_MODULE))
def test_sdk_event_objects_assemble_like_the_dicts(provider: str) -> None:
    pytest.importorskip(SDK_MODULE[provider])
    events = RECORDED[provider]
    from_dicts = assemble(events, provider=provider)
    from_sdk = assemble(_sdk_events(provider, events), provider=provider)
    assert same(from_dicts, from_sdk)
    assert from_dicts.metadata["usage"]["output_tokens"] > 0


def test_anthropic_matches_the_sdk_accumulator() -> None:
    pytest.importorskip("anthropic")
    from anthropic.lib.streaming._messages import accumulate_event

    snapshot: Any = None
    buffers: dict[int, bytes] = {}
    for event in _sdk_events("anthropic", ANTHROPIC):
        snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=buffers)
    ours = assemble(ANTHROPIC, provider="anthropic")
    assert same(ours, decode_response(snapshot, provider="anthropic"))
    assert [type(part).__name__ for part in ours.parts] == [
        "ReasoningPart",
        "TextPart",
        "ToolCallPart",
    ]


@pytest.mark.parametrize("provider", sorted(STREAMS))
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_generated_streams_match_the_sdk_accumulator(provider: str, data: st.DataObject) -> None:
    if provider not in ("anthropic", "openai_chat", "openai_responses"):
        return  # only these SDKs have an accumulator
    pytest.importorskip(SDK_MODULE[provider])
    _, events = data.draw(STREAMS[provider])
    sdk_events = _sdk_events(provider, events)
    if provider == "anthropic":
        from anthropic.lib.streaming._messages import accumulate_event

        snapshot: Any = None
        buffers: dict[int, bytes] = {}
        for event in sdk_events:
            snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=buffers)
        final: Any = snapshot
    elif provider == "openai_responses":
        final = sdk_events[-1].response
        if not final.output:
            return  # the SDK gives no response to compare with
    else:
        from openai.lib.streaming.chat import ChatCompletionStreamState

        state: Any = ChatCompletionStreamState()
        for event in sdk_events:
            state.handle_chunk(event)
        final = state.get_final_completion()
    ours = assemble(sdk_events, provider=provider)
    assert same(ours, decode_response(final, provider=provider))


def test_openai_chat_matches_the_sdk_stream_state() -> None:
    pytest.importorskip("openai")
    from openai.lib.streaming.chat import ChatCompletionStreamState

    state: Any = ChatCompletionStreamState()
    for chunk in _sdk_events("openai_chat", OPENAI_CHAT):
        state.handle_chunk(chunk)
    ours = assemble(OPENAI_CHAT, provider="openai_chat")
    assert same(ours, decode_response(state.get_final_completion(), provider="openai_chat"))
    calls = [part for part in ours.parts if isinstance(part, ToolCallPart)]
    assert [(c.id, dict(c.arguments)) for c in calls] == [
        ("call_a", {"city": "Paris"}),
        ("call_b", {"tz": "CET"}),
    ]


def test_neutral_events_tell_what_arrived() -> None:
    assembler = StreamAssembler("anthropic")
    seen = [event for raw in ANTHROPIC for event in assembler.feed(raw)]
    assert [e for e in seen if isinstance(e, PartStart)] == [
        PartStart(0, "reasoning"),
        PartStart(1, "text"),
        PartStart(2, "tool_call", "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather"),
    ]
    assert "".join(e.text for e in seen if isinstance(e, TextDelta)) == "Let me check."
    assert "".join(e.text for e in seen if isinstance(e, ReasoningDelta)) == (
        "The user wants the weather."
    )
    assert json.loads("".join(e.arguments for e in seen if isinstance(e, ToolCallDelta))) == {
        "location": "San Francisco, CA"
    }
    ends = [e for e in seen if isinstance(e, PartEnd)]
    assert [e.part for e in ends] == list(assembler.message().parts)
    assert seen[-1] == Finish("tool_use", assembler.message().metadata["usage"])


@pytest.mark.parametrize("provider", sorted(RECORDED))
def test_chat_neutral_parts_end_with_the_message_parts(provider: str) -> None:
    assembler = StreamAssembler(provider)
    seen = [event for raw in RECORDED[provider] for event in assembler.feed(raw)]
    ends = [e.part for e in seen if isinstance(e, PartEnd)]
    assert ends == list(assembler.message().parts)
    assert isinstance(seen[-1], Finish)
    assert seen[-1].usage == assembler.message().metadata["usage"]


@pytest.mark.parametrize("provider", sorted(RECORDED))
def test_every_cut_is_refused_and_its_partial_form_is_repairable(provider: str) -> None:
    events = RECORDED[provider]
    final = next(at for at, event in enumerate(events) if FINAL[provider](event))
    for cut in range(final + 1):
        assembler = StreamAssembler(provider)
        for event in events[:cut]:
            assembler.feed(event)
        with pytest.raises(CodecError, match="not finished"):
            assembler.message()
        partial = assembler.message(partial=True)
        assert partial.metadata["threadline.incomplete"] is True
        prepared = prepare_messages([user_message("hi"), partial])
        assert prepare_messages(prepared, "strict") == prepared


def test_cut_tool_arguments_are_kept_as_raw_text_and_the_call_answered() -> None:
    cut = ANTHROPIC[:14]  # inside the tool call's JSON
    assembler = StreamAssembler("anthropic")
    for event in cut:
        assembler.feed(event)
    partial = assembler.message(partial=True)
    call = partial.parts[-1]
    assert isinstance(call, ToolCallPart)
    assert call.raw_arguments == '{"location": "San Fra'
    prepared = prepare_messages([user_message("weather?"), partial])
    assert prepared[-1].role == "tool"


def test_an_error_event_fails_the_message() -> None:
    assembler = StreamAssembler("anthropic")
    for event in ANTHROPIC[:8]:
        assembler.feed(event)
    assembler.feed(
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    )
    with pytest.raises(CodecError, match="overloaded_error: Overloaded"):
        assembler.message()
    partial = assembler.message(partial=True)
    assert partial.metadata["threadline.stream_error"] == "overloaded_error: Overloaded"


@pytest.mark.parametrize("provider", ["openai_chat", "anthropic"])
def test_invalid_argument_json_fails_the_message(provider: str) -> None:
    if provider == "anthropic":
        events = [dict(e) for e in ANTHROPIC]
        events[14] = {
            "type": "content_block_delta",
            "index": 2,
            "delta": {"type": "input_json_delta", "partial_json": 'ncisco, CA"'},
        }
    else:
        events = list(OPENAI_CHAT)
        events[6] = _chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Par'}}]})
    with pytest.raises(CodecError, match=r"not .*JSON"):
        assemble(events, provider=provider)


def test_unknown_format_and_bad_events() -> None:
    with pytest.raises(UnknownProviderError, match="no stream format named 'nope'"):
        StreamAssembler("nope")
    assembler = StreamAssembler("anthropic")
    with pytest.raises(CodecError, match="must be a dict"):
        assembler.feed([1, 2])
    with pytest.raises(CodecError, match="JSON object"):
        assembler.feed("[1, 2]")
    with pytest.raises(CodecError, match="never started"):
        assembler.feed(
            {
                "type": "content_block_delta",
                "index": 5,
                "delta": {"type": "text_delta", "text": "x"},
            }
        )


def test_json_text_and_done_marker_are_read() -> None:
    texts = [json.dumps(event) for event in OPENAI_CHAT] + ["[DONE]"]
    assert same(
        assemble(texts, provider="openai_chat"), assemble(OPENAI_CHAT, provider="openai_chat")
    )


def test_tools_map_wire_names_back() -> None:
    from threadline import ToolDefinition

    events = [dict(e) for e in MISTRAL]
    from threadline.codecs import wire_tool_names

    wire = {v: k for k, v in wire_tool_names(["get.weather"], provider="mistral").items()}
    name = wire.get("get.weather", "get.weather")
    events[3] = _mistral_chunk(
        {
            "tool_calls": [
                {"id": "D681PevKs", "index": 0, "function": {"name": name, "arguments": "{}"}}
            ]
        }
    )
    message = assemble(events, provider="mistral", tools=[ToolDefinition(name="get.weather")])
    calls = [part for part in message.parts if isinstance(part, ToolCallPart)]
    assert calls[0].name == "get.weather"


def test_astream_over_async_and_sync_iterables() -> None:
    async def source() -> AsyncIterator[dict[str, Any]]:
        for event in ANTHROPIC:
            yield event

    async def run(events: Any) -> tuple[str, Message]:
        stream = astream(events, provider="anthropic")
        text = ""
        async for event in stream:
            if isinstance(event, TextDelta):
                text += event.text
        return text, stream.message()

    for events in (source(), ANTHROPIC):
        text, message = asyncio.run(run(events))
        assert text == "Let me check."
        assert same(message, assemble(ANTHROPIC, provider="anthropic"))


def test_bedrock_reasoning_is_tagged_with_the_model_given() -> None:
    from threadline import ReasoningPart

    message = assemble(BEDROCK, provider="bedrock", model="anthropic.claude-sonnet-4-5")
    reasoning = message.parts[0]
    assert isinstance(reasoning, ReasoningPart)
    assert (reasoning.text, reasoning.signature) == ("Weather: use the tool.", "ErcBCkgIBRAB")
    assert reasoning.model == "anthropic.claude-sonnet-4-5"
    assert message.metadata["usage"]["input_tokens"] == 375


def test_a_bedrock_exception_event_fails_the_message() -> None:
    assembler = StreamAssembler("bedrock")
    for event in BEDROCK[:6]:
        assembler.feed(event)
    assembler.feed({"modelStreamErrorException": {"message": "boom", "originalStatusCode": 500}})
    with pytest.raises(CodecError, match="modelStreamErrorException: boom"):
        assembler.message()
    assert assembler.message(partial=True).metadata["threadline.incomplete"] is True


def test_gemini_pieces_merge_and_the_last_signature_lands_on_its_part() -> None:
    from threadline import ReasoningPart, TextPart

    message = assemble(GEMINI, provider="gemini")
    reasoning, text, first, second, tail = message.parts
    assert isinstance(reasoning, ReasoningPart)
    assert reasoning.text == "**Checking the weather**\n\nI need the tool."
    assert isinstance(text, TextPart)
    assert text.text == "Let me look"
    assert isinstance(first, ToolCallPart)
    assert isinstance(second, ToolCallPart)
    assert first.id != second.id
    assert isinstance(tail, TextPart)
    assert tail.text == ""
    assert message.metadata["usage"]["output_tokens"] == 89


def test_a_failed_response_event_fails_the_message() -> None:
    failed = {
        "type": "response.failed",
        "response": {
            **_RESPONSE_TOP,
            "status": "failed",
            "output": [],
            "error": {"code": "server_error", "message": "The model failed."},
        },
    }
    assembler = StreamAssembler("openai_responses")
    for event in [*OPENAI_RESPONSES[:17], failed]:
        assembler.feed(event)
    with pytest.raises(CodecError, match=r"server_error: The model failed\."):
        assembler.message()
    partial = assembler.message(partial=True)
    call = partial.parts[-1]
    assert isinstance(call, ToolCallPart)
    assert call.raw_arguments == '{"city":'
    prepared = prepare_messages([user_message("weather?"), partial])
    assert prepared[-1].role == "tool"


def test_mistral_completion_events_are_unwrapped() -> None:
    pytest.importorskip("mistralai")
    from mistralai.client.models import CompletionEvent

    events = [CompletionEvent.model_validate({"data": chunk}) for chunk in MISTRAL]
    assert same(assemble(events, provider="mistral"), assemble(MISTRAL, provider="mistral"))


def test_mistral_thinking_chunks_assemble_like_the_response() -> None:
    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        return {**_mistral_chunk(delta, finish), "model": "magistral-medium-latest", **extra}

    def thinking(text: str) -> dict[str, Any]:
        return {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": text}]}]}

    usage = {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}
    events = [
        chunk({"role": "assistant", "content": ""}),
        chunk(thinking("Let me ")),
        chunk(thinking("think.")),
        chunk({"content": [{"type": "text", "text": "The answer"}]}),
        chunk({"content": " is 4."}),
        chunk({"content": ""}, "stop", usage=usage),
    ]
    response = {
        "id": "cmpl-e5cc70bb",
        "object": "chat.completion",
        "created": 1702256327,
        "model": "magistral-medium-latest",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "thinking",
                            "thinking": [{"type": "text", "text": "Let me think."}],
                        },
                        {"type": "text", "text": "The answer is 4."},
                    ],
                },
                "finish_reason": "stop",
            }
        ],
        "usage": usage,
    }
    assembler = StreamAssembler("mistral")
    seen = [event for raw in events for event in assembler.feed(raw)]
    message = assembler.message()
    assert same(message, decode_response(response, provider="mistral"))
    assert "".join(e.text for e in seen if isinstance(e, ReasoningDelta)) == "Let me think."
    assert [e.part for e in seen if isinstance(e, PartEnd)] == list(message.parts)


def test_a_chat_stream_without_usage_finishes_on_close() -> None:
    events = OPENAI_CHAT[:-1]  # no usage chunk: include_usage was not asked for
    assembler = StreamAssembler("openai_chat")
    seen = [event for raw in events for event in assembler.feed(raw)]
    assert not any(isinstance(event, Finish) for event in seen)
    assert assembler.message().metadata["stop_reason"] == "tool_calls"
    assert assembler.close() == [Finish("tool_calls", None)]
    assert assembler.close() == []
    done = StreamAssembler("openai_chat")
    for raw in events:
        done.feed(raw)
    assert done.feed("[DONE]") == [Finish("tool_calls", None)]


def test_part_ends_carry_stored_tool_names_and_the_model() -> None:
    from threadline import ToolDefinition
    from threadline.codecs import wire_tool_names

    wire = {v: k for k, v in wire_tool_names(["get.weather"], provider="bedrock").items()}
    events = [dict(e) for e in BEDROCK]
    events[8] = {
        "contentBlockStart": {
            "start": {"toolUse": {"toolUseId": "tooluse_1", "name": wire["get.weather"]}},
            "contentBlockIndex": 2,
        }
    }
    assembler = StreamAssembler(
        "bedrock", tools=[ToolDefinition(name="get.weather")], model="anthropic.claude-x"
    )
    ends = [e.part for raw in events for e in assembler.feed(raw) if isinstance(e, PartEnd)]
    assert ends == list(assembler.message().parts)
    call = ends[-1]
    assert isinstance(call, ToolCallPart)
    assert call.name == "get.weather"


@pytest.mark.parametrize("provider", sorted(RECORDED))
def test_feeding_changes_nothing_of_the_callers_events(provider: str) -> None:
    import copy

    events = copy.deepcopy(RECORDED[provider])
    assembler = StreamAssembler(provider)
    for event in events:
        assembler.feed(event)
    assembler.message()
    assembler.message(partial=True)
    assert events == RECORDED[provider]
