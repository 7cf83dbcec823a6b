"""StreamAssembler: recorded-shape streams fed as dicts and as the SDKs' own event objects,
checked against the SDKs' own accumulators where they have one; failures and the public API."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.stream_cases import FINAL
from tests.stream_cases import STREAMS
from tests.stream_recordings import ANTHROPIC
from tests.stream_recordings import BEDROCK
from tests.stream_recordings import GEMINI
from tests.stream_recordings import MISTRAL
from tests.stream_recordings import OPENAI_CHAT
from tests.stream_recordings import OPENAI_RESPONSES
from tests.stream_recordings import RECORDED
from tests.stream_recordings import RESPONSE_TOP
from tests.stream_recordings import chat_chunk
from tests.stream_recordings import mistral_chunk
from tests.support import examples
from threadline import CodecError
from threadline import Finish
from threadline import Message
from threadline import PartEnd
from threadline import PartStart
from threadline import ReasoningDelta
from threadline import StreamAssembler
from threadline import TextDelta
from threadline import ToolCallDelta
from threadline import ToolCallPart
from threadline import UnknownProviderError
from threadline import assemble
from threadline import astream
from threadline import decode_response
from threadline import prepare_messages
from threadline import user_message


def same(a: Message, b: Message) -> bool:
    return (a.role, a.parts, a.metadata) == (b.role, b.parts, b.metadata)


SDK_MODULE = {
    "openai_responses": "openai",
    "gemini": "google.genai",
    "anthropic": "anthropic",
    "openai_chat": "openai",
    "mistral": "mistralai",
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
@settings(max_examples=examples(20), deadline=None)
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
    assert seen[-1] == Finish("tool_use", assembler.message().usage)


@pytest.mark.parametrize("provider", sorted(RECORDED))
def test_chat_neutral_parts_end_with_the_message_parts(provider: str) -> None:
    assembler = StreamAssembler(provider)
    seen = [event for raw in RECORDED[provider] for event in assembler.feed(raw)]
    ends = [e.part for e in seen if isinstance(e, PartEnd)]
    assert ends == list(assembler.message().parts)
    assert isinstance(seen[-1], Finish)
    assert seen[-1].usage == assembler.message().usage


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
        events[6] = chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Par'}}]})
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
    events[3] = mistral_chunk(
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
    from threadline import ReasoningPart
    from threadline import TextPart

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
            **RESPONSE_TOP,
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
        return {**mistral_chunk(delta, finish), "model": "magistral-medium-latest", **extra}

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
