"""Hostile streams (issue 35, items 1, 2, 3, 5 and 6): a stream is untrusted input, so nesting,
numbers, indices, sizes and events out of place are refused with a ``CodecError`` (naming the
limit, for a limit) and never crash, allocate past the limits or change a finished message;
``message(partial=True)`` gives what arrived up to the limit."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest

from tests.dialect_cases import DIALECTS
from tests.dialect_cases import reasoning_fields
from tests.hostile_streams import FORMATS
from tests.hostile_streams import call_response
from tests.hostile_streams import call_stream
from tests.hostile_streams import many_parts_stream
from tests.hostile_streams import text_stream
from tests.stream_recordings import ANTHROPIC
from tests.stream_recordings import RECORDED
from threadline import CodecError
from threadline import Limits
from threadline import Message
from threadline import StreamAssembler
from threadline import TextPart
from threadline import ToolCallPart
from threadline import assemble
from threadline import astream
from threadline import decode_response
from threadline import prepare_messages
from threadline import user_message
from threadline.limits import LimitExceededError

DEEP = 100_000


def same(a: Message, b: Message) -> bool:
    return (a.role, a.parts, a.metadata) == (b.role, b.parts, b.metadata)


def feed_all(assembler: StreamAssembler, events: list[Any]) -> list[CodecError]:
    """Feed every event, as a caller that goes on after a refused one; the errors raised."""
    errors = []
    for event in events:
        try:
            assembler.feed(event)
        except CodecError as error:
            errors.append(error)
    return errors


def repairable(partial: Message) -> None:
    assert partial.metadata["threadline.incomplete"] is True
    ready = prepare_messages([user_message("hi"), partial])
    assert prepare_messages(ready, "strict") == ready


def deep_arguments(depth: int) -> str:
    return '{"a": ' + "[" * depth + "]" * depth + "}"


# -- 1. nesting ---------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", FORMATS)
def test_arguments_nested_100000_deep_raise_only_codec_errors(provider: str) -> None:
    text = deep_arguments(DEEP)
    if provider in ("gemini", "ollama"):  # arguments arrive as an object: nested lists
        value: Any = []
        for _ in range(DEEP):
            value = [value]
        events = call_stream(provider, ["{}"])
        if provider == "gemini":
            part = events[0]["candidates"][0]["content"]["parts"][0]
            part["functionCall"]["args"] = {"a": value}
        else:
            events[0]["message"]["tool_calls"][0]["function"]["arguments"] = {"a": value}
    else:
        events = call_stream(provider, [text[:7], text[7:60_000], text[60_000:]])
    assembler = StreamAssembler(provider)
    feed_all(assembler, events)  # RecursionError escaped feed() in 4 formats
    with pytest.raises(CodecError, match="max_depth"):
        assembler.message()
    partial = assembler.message(partial=True)  # and message(partial=True) in 2
    repairable(partial)
    calls = [part for part in partial.parts if isinstance(part, ToolCallPart)]
    if provider not in ("gemini", "ollama"):  # the call is kept as text, as a cut one is
        assert [call.raw_arguments for call in calls] == [text]


@pytest.mark.parametrize("provider", FORMATS)
def test_nesting_is_bounded_by_the_limits_depth(provider: str) -> None:
    """40 levels of arguments read with the defaults (64), not with ``untrusted`` (32)."""
    text = deep_arguments(40)
    events = call_stream(provider, [text])
    assert assemble(events, provider=provider).tool_calls[0].arguments["a"]
    assembler = StreamAssembler(provider, limits=Limits.untrusted())
    feed_all(assembler, events)
    with pytest.raises(CodecError, match="max_depth=32"):
        assembler.message()
    repairable(assembler.message(partial=True))


@pytest.mark.parametrize("provider", FORMATS)
def test_an_event_nested_100000_deep_as_json_text_is_refused(provider: str) -> None:
    assembler = StreamAssembler(provider)
    with pytest.raises(CodecError, match="max_depth"):  # json.loads raised RecursionError
        assembler.feed('{"a": ' + "[" * DEEP + "]" * DEEP + "}")
    repairable(assembler.message(partial=True))


@pytest.mark.parametrize("provider", FORMATS)
def test_an_event_deeper_than_the_limit_is_refused_and_what_came_before_kept(
    provider: str,
) -> None:
    events = text_stream(provider, ["Hello", " there"])
    first_text = next(at for at, e in enumerate(events) if "Hello" in json.dumps(e))
    deep: Any = "x"
    for _ in range(40):
        deep = [deep]
    hostile = {**events[first_text + 1], "extra": deep}
    assembler = StreamAssembler(provider, limits=Limits.untrusted())
    for event in events[: first_text + 1]:
        assembler.feed(event)
    with pytest.raises(CodecError, match="max_depth=32") as raised:
        assembler.feed(hostile)
    assert isinstance(raised.value.__cause__, LimitExceededError)
    partial = assembler.message(partial=True)
    assert partial.text == "Hello"
    assert "max_depth" in partial.metadata["threadline.stream_error"]


# -- 2. numbers ---------------------------------------------------------------------------------

HUGE = '{"n": ' + "1" * 5000 + "}"


@pytest.mark.parametrize("provider", ["openai_chat", "mistral", "openai_responses"])
def test_a_5000_digit_integer_in_argument_text_reads_as_decode_response_reads_it(
    provider: str,
) -> None:
    events = call_stream(provider, [HUGE[:10], HUGE[10:]])
    if provider == "openai_responses":  # a final response without output: the streamed one
        final = events[-1]["response"]
        events[-1] = {**events[-1], "response": {k: v for k, v in final.items() if k != "output"}}
    message = assemble(events, provider=provider)  # raised a bare ValueError
    expected = decode_response(call_response(provider, HUGE), provider=provider)
    assert message.parts == expected.parts
    call = message.tool_calls[0]
    assert (dict(call.arguments), call.raw_arguments) == ({}, HUGE)  # an invalid call


@pytest.mark.parametrize("provider", ["anthropic", "bedrock"])
def test_a_5000_digit_integer_in_input_json_is_a_codec_error(provider: str) -> None:
    assembler = StreamAssembler(provider)
    errors = feed_all(assembler, call_stream(provider, [HUGE[:10], HUGE[10:]]))
    assert errors
    assert "number out of range" in str(errors[0])
    with pytest.raises(CodecError):
        assembler.message()
    assert assembler.message(partial=True).tool_calls[0].raw_arguments == HUGE


@pytest.mark.parametrize("provider", FORMATS)
def test_a_5000_digit_python_integer_in_an_event_is_refused(provider: str) -> None:
    events = text_stream(provider, ["Hello"])
    assembler = StreamAssembler(provider)
    with pytest.raises(CodecError, match="4,300 digits"):
        assembler.feed({**events[0], "n": 10**5000})
    with pytest.raises(CodecError, match="not JSON"):
        assembler.feed(json.dumps(events[0])[:-1] + ', "n": ' + "1" * 5000 + "}")
    feed_all(assembler, events)
    assert assembler.message().text == "Hello"  # neither refused event poisoned the stream


# -- 3. indices ---------------------------------------------------------------------------------


def _responses_item(kind: str) -> list[dict[str, Any]]:
    item: dict[str, Any] = {"type": kind, "id": "it_1"}
    if kind == "message":
        item.update(role="assistant", status="in_progress", content=[])
    else:
        item["summary"] = []
    return [
        {
            "type": "response.created",
            "response": {"id": "r", "status": "in_progress", "output": []},
        },
        {"type": "response.output_item.added", "output_index": 0, "item": item},
    ]


_AT = {"output_index": 0, "item_id": "it_1"}
HUGE_INDICES: dict[str, tuple[str, list[dict[str, Any]], dict[str, Any]]] = {
    "responses output_text.delta content_index": (
        "openai_responses",
        _responses_item("message"),
        {"type": "response.output_text.delta", **_AT, "content_index": 10**8, "delta": "x"},
    ),
    "responses content_part.added content_index": (
        "openai_responses",
        _responses_item("message"),
        {
            "type": "response.content_part.added",
            **_AT,
            "content_index": 10**8,
            "part": {"type": "output_text", "text": ""},
        },
    ),
    "responses content_part.done content_index": (
        "openai_responses",
        _responses_item("message"),
        {
            "type": "response.content_part.done",
            **_AT,
            "content_index": 10**8,
            "part": {"type": "output_text", "text": "x"},
        },
    ),
    "responses refusal.delta content_index": (
        "openai_responses",
        _responses_item("message"),
        {"type": "response.refusal.delta", **_AT, "content_index": 10**8, "delta": "x"},
    ),
    "responses annotation.added content_index": (
        "openai_responses",
        _responses_item("message"),
        {
            "type": "response.output_text.annotation.added",
            **_AT,
            "content_index": 10**8,
            "annotation": {"type": "url_citation"},
        },
    ),
    "responses reasoning_text.delta content_index": (
        "openai_responses",
        _responses_item("reasoning"),
        {"type": "response.reasoning_text.delta", **_AT, "content_index": 10**8, "delta": "x"},
    ),
    "responses summary_part.added summary_index": (
        "openai_responses",
        _responses_item("reasoning"),
        {
            "type": "response.reasoning_summary_part.added",
            **_AT,
            "summary_index": 10**8,
            "part": {"type": "summary_text", "text": ""},
        },
    ),
    "responses summary_text.delta summary_index": (
        "openai_responses",
        _responses_item("reasoning"),
        {
            "type": "response.reasoning_summary_text.delta",
            **_AT,
            "summary_index": 10**8,
            "delta": "x",
        },
    ),
    "responses output_item.added output_index": (
        "openai_responses",
        _responses_item("message")[:1],
        {
            "type": "response.output_item.added",
            "output_index": 10**8,
            "item": {"type": "function_call", "call_id": "c", "name": "f", "arguments": ""},
        },
    ),
    "anthropic content_block_start index": (
        "anthropic",
        ANTHROPIC[:1],
        {
            "type": "content_block_start",
            "index": 10**8,
            "content_block": {"type": "text", "text": ""},
        },
    ),
    "anthropic content_block_delta index": (
        "anthropic",
        ANTHROPIC[:1],
        {
            "type": "content_block_delta",
            "index": 10**8,
            "delta": {"type": "text_delta", "text": "x"},
        },
    ),
    "bedrock contentBlockStart contentBlockIndex": (
        "bedrock",
        [{"messageStart": {"role": "assistant"}}],
        {
            "contentBlockStart": {
                "start": {"toolUse": {"toolUseId": "t", "name": "f"}},
                "contentBlockIndex": 10**8,
            }
        },
    ),
    "bedrock contentBlockDelta contentBlockIndex": (
        "bedrock",
        [{"messageStart": {"role": "assistant"}}],
        {"contentBlockDelta": {"delta": {"text": "x"}, "contentBlockIndex": 10**8}},
    ),
    "openai_chat tool_calls index": (
        "openai_chat",
        [],
        call_stream("openai_chat", ["{}"])[1],
    ),
    "mistral tool_calls index": ("mistral", [], call_stream("mistral", ["{}"])[1]),
}
HUGE_INDICES["openai_chat tool_calls index"][2]["choices"][0]["delta"]["tool_calls"][0]["index"] = (
    10**8
)
HUGE_INDICES["mistral tool_calls index"][2]["choices"][0]["delta"]["tool_calls"][0]["index"] = 10**8


def _allocated(call: Callable[[], Any]) -> int:
    tracemalloc.start()
    try:
        call()
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak


@pytest.mark.parametrize("case", sorted(HUGE_INDICES))
def test_an_index_past_max_parts_is_refused_before_anything_is_allocated(case: str) -> None:
    provider, before, event = HUGE_INDICES[case]
    assembler = StreamAssembler(provider)
    for earlier in before:
        assembler.feed(earlier)

    def hostile() -> None:
        with pytest.raises(CodecError, match="max_parts=4,000,000") as raised:
            assembler.feed(event)
        assert isinstance(raised.value.__cause__, LimitExceededError)

    assert _allocated(hostile) < 1 << 20  # Responses padded a list of 10**8 (763 MB, 13 s)
    repairable(assembler.message(partial=True))


@pytest.mark.parametrize("provider", FORMATS)
def test_a_stream_of_more_parts_than_max_parts_is_refused_and_keeps_the_first(
    provider: str,
) -> None:
    assembler = StreamAssembler(provider, limits=Limits(max_parts=5))
    errors = feed_all(assembler, many_parts_stream(provider, 8))
    assert "max_parts=5" in str(errors[0])
    with pytest.raises(CodecError, match="max_parts=5"):
        assembler.message()
    partial = assembler.message(partial=True)
    assert len(partial.parts) == 5
    assert "max_parts" in partial.metadata["threadline.stream_error"]
    repairable(partial)


def test_responses_places_left_empty_count_against_max_parts() -> None:
    """Items each naming a content index just below the limit cannot add up past it."""
    assembler = StreamAssembler("openai_responses", limits=Limits(max_parts=1_000))
    assembler.feed(_responses_item("message")[0])
    errors = []
    for at in range(5):
        item = {"type": "message", "id": f"m{at}", "role": "assistant", "content": []}
        assembler.feed({"type": "response.output_item.added", "output_index": at, "item": item})
        event = {
            "type": "response.output_text.delta",
            "output_index": at,
            "content_index": 999,
            "delta": "x",
        }
        try:
            assembler.feed(event)
        except CodecError as error:
            errors.append((at, str(error)))
            break
    assert [at for at, _ in errors] == [1]
    assert "max_parts=1,000" in errors[0][1]


def test_a_gemini_candidate_index_names_no_place() -> None:
    events = text_stream("gemini", ["Hello"])
    other = json.loads(json.dumps(events[0]))
    other["candidates"][0]["index"] = 10**8
    assembler = StreamAssembler("gemini")
    assert _allocated(lambda: assembler.feed(other)) < 1 << 20
    for event in events:
        assembler.feed(event)
    assert assembler.message().text == "Hello"


# -- 5. limits= ---------------------------------------------------------------------------------


def test_limits_default_to_limits_and_are_checked() -> None:
    assert StreamAssembler("anthropic").limits == Limits()
    assert StreamAssembler("anthropic", limits=Limits.untrusted()).limits == Limits.untrusted()
    with pytest.raises(TypeError, match="Limits"):
        StreamAssembler("anthropic", limits={"max_parts": 3})  # type: ignore[arg-type]


@pytest.mark.parametrize("provider", FORMATS)
@pytest.mark.parametrize("how", ["many deltas", "one delta"])
def test_a_text_past_max_string_is_refused_and_kept_up_to_the_limit(
    provider: str, how: str
) -> None:
    text = "".join(chr(ord("a") + at % 26) for at in range(5_000))
    pieces = (
        [text[at : at + 300] for at in range(0, len(text), 300)] if how == "many deltas" else [text]
    )
    limits = Limits(max_string=1_000)
    assembler = StreamAssembler(provider, limits=limits)
    errors = feed_all(assembler, text_stream(provider, pieces))
    assert "max_string=1,000" in str(errors[0])
    assert isinstance(errors[0].__cause__, LimitExceededError)
    assert all("max_string=1,000" in str(error) for error in errors)  # and every later event
    assert not assembler.finished
    with pytest.raises(CodecError, match="max_string=1,000"):
        assembler.message()
    partial = assembler.message(partial=True)
    assert partial.text == text[:1_000]
    assert "max_string" in partial.metadata["threadline.stream_error"]
    repairable(partial)


def test_every_event_after_a_limit_is_refused() -> None:
    events = text_stream("anthropic", ["x" * 600, "y" * 600, "z"])
    assembler = StreamAssembler("anthropic", limits=Limits(max_string=1_000))
    errors = feed_all(assembler, events)
    assert len(errors) == len(events) - 3  # the second delta, and everything after it
    assert all("max_string=1,000" in str(error) for error in errors)
    assert assembler.message(partial=True).text == "x" * 600 + "y" * 400


def test_a_40_mib_text_under_the_default_limits_keeps_its_first_32_mib() -> None:
    """The issue's case: a 40 MiB reply came back from message(partial=True) empty."""
    mib = 1 << 20
    piece = "abcdefgh" * (mib // 8)
    assembler = StreamAssembler("anthropic")
    errors = feed_all(assembler, text_stream("anthropic", [piece] * 40))
    assert "max_string=33,554,432" in str(errors[0])
    partial = assembler.message(partial=True)
    assert len(partial.text) == 32 * mib
    assert partial.metadata["threadline.incomplete"] is True


@pytest.mark.parametrize("provider", FORMATS)
def test_assemble_and_astream_take_limits(provider: str) -> None:
    events = text_stream(provider, ["a" * 600, "b" * 600])
    assert assemble(events, provider=provider).text == "a" * 600 + "b" * 600
    with pytest.raises(CodecError, match="max_string=1,000"):
        assemble(events, provider=provider, limits=Limits(max_string=1_000))

    async def run() -> Message:
        stream = astream(events, provider=provider, limits=Limits(max_string=1_000))
        with pytest.raises(CodecError, match="max_string"):
            async for _ in stream:
                pass
        return stream.message(partial=True)

    assert asyncio.run(run()).text == "a" * 600 + "b" * 400


# Slow (10,001 parts assembled twice, seconds): the full tier's. The quick tier holds the same
# bound with a small max_parts (test_a_stream_of_more_parts_than_max_parts_is_refused_...).
@pytest.mark.slow
def test_untrusted_limits_bound_a_stream() -> None:
    untrusted = Limits.untrusted()
    assert untrusted.max_parts is not None
    events = many_parts_stream("openai_chat", untrusted.max_parts + 1)
    with pytest.raises(CodecError, match="max_parts=10,000"):
        assemble(events, provider="openai_chat", limits=untrusted)
    roomy = dataclasses.replace(untrusted, max_parts=20_000)
    assert len(assemble(events, provider="openai_chat", limits=roomy).parts) == 10_001


# -- 6. events out of place ---------------------------------------------------------------------

AFTER_THE_END: dict[str, dict[str, Any]] = {
    "cohere": {
        "type": "content-delta",
        "index": 0,
        "delta": {"message": {"content": {"text": "x"}}},
    },
    "anthropic": {
        "type": "content_block_delta",
        "index": 1,
        "delta": {"type": "text_delta", "text": " Sorry, wrong."},
    },
    "bedrock": {"contentBlockDelta": {"delta": {"text": " Sorry."}, "contentBlockIndex": 1}},
    "gemini": {
        "candidates": [{"content": {"role": "model", "parts": [{"text": " Sorry."}]}, "index": 0}]
    },
    "mistral": {
        "id": "cmpl-e5cc70bb",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"content": " Sorry."}, "finish_reason": None}],
    },
    "ollama": {
        "model": "qwen3:8b",
        "message": {"role": "assistant", "content": " Sorry."},
        "done": False,
    },
    "openai_chat": {
        "id": "chatcmpl-B9",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"content": " Sorry."}, "finish_reason": None}],
    },
    "openai_responses": {
        "type": "response.output_text.delta",
        "output_index": 1,
        "content_index": 0,
        "delta": " Sorry.",
    },
    **{  # a dialect's reasoning after the end is refused too
        name: {
            "id": "chatcmpl-B9",
            "object": "chat.completion.chunk",
            "choices": [
                {"index": 0, "delta": reasoning_fields(name, "Wait."), "finish_reason": None}
            ],
        }
        for name in DIALECTS
    },
}


@pytest.mark.parametrize("provider", FORMATS)
def test_a_delta_after_the_end_is_refused_and_changes_nothing(provider: str) -> None:
    assembler = StreamAssembler(provider)
    for event in RECORDED[provider]:
        assembler.feed(event)
    finished = assembler.message()
    with pytest.raises(CodecError, match="after"):
        assembler.feed(AFTER_THE_END[provider])
    assert same(assembler.message(), finished)
    assert assembler.finished


@pytest.mark.parametrize(
    ("provider", "event"),
    [
        ("anthropic", {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}}),
        ("anthropic", {"type": "error", "error": {"type": "overloaded_error", "message": "x"}}),
        ("bedrock", {"messageStop": {"stopReason": "max_tokens"}}),
        ("bedrock", {"metadata": {"usage": {"inputTokens": 1, "outputTokens": 1}}}),
        (
            "openai_chat",
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]},
        ),
        ("openai_responses", {"type": "response.completed", "response": {"output": []}}),
        (
            "gemini",
            {"candidates": [{"content": {"parts": []}, "finishReason": "MAX_TOKENS", "index": 0}]},
        ),
    ],
)
def test_a_second_end_or_a_late_change_is_refused(provider: str, event: dict[str, Any]) -> None:
    assembler = StreamAssembler(provider)
    for earlier in RECORDED[provider]:
        assembler.feed(earlier)
    finished = assembler.message()
    with pytest.raises(CodecError):
        assembler.feed(event)
    assert same(assembler.message(), finished)


def test_a_repeated_message_stop_changes_nothing() -> None:
    assembler = StreamAssembler("anthropic")
    for event in ANTHROPIC:
        assembler.feed(event)
    finished = assembler.message()
    assert assembler.feed({"type": "message_stop"}) == []  # no second Finish
    assert same(assembler.message(), finished)


def test_a_chat_chunk_after_done_is_refused() -> None:
    assembler = StreamAssembler("openai_chat")
    for event in RECORDED["openai_chat"]:
        assembler.feed(event)
    assembler.feed("[DONE]")
    finished = assembler.message()
    assert assembler.feed("[DONE]") == []
    with pytest.raises(CodecError, match="closed"):
        assembler.feed(AFTER_THE_END["openai_chat"])
    assert same(assembler.message(), finished)


def test_a_late_usage_only_gemini_chunk_is_still_read() -> None:
    """Metadata may follow the finish reason (the usage): only parts are refused."""
    assembler = StreamAssembler("gemini")
    for event in RECORDED["gemini"]:
        assembler.feed(event)
    assembler.feed({"usageMetadata": {"promptTokenCount": 31, "candidatesTokenCount": 41}})
    assert assembler.message().usage is not None


STARTED_AGAIN: dict[str, tuple[int, dict[str, Any]]] = {
    # (after how many recorded events, the event that starts an existing part again)
    "anthropic": (
        14,
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
    ),
    "bedrock": (
        12,
        {
            "contentBlockStart": {
                "start": {"toolUse": {"toolUseId": "other", "name": "f"}},
                "contentBlockIndex": 2,
            }
        },
    ),
    "openai_chat": (
        7,
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {"index": 0, "id": "call_other", "function": {"arguments": ""}}
                        ]
                    },
                }
            ]
        },
    ),
    "openai_responses": (
        11,
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": {"type": "message", "id": "msg_2", "role": "assistant", "content": []},
        },
    ),
}


@pytest.mark.parametrize("provider", sorted(STARTED_AGAIN))
def test_a_part_started_again_is_refused_and_the_first_kept(provider: str) -> None:
    cut, again = STARTED_AGAIN[provider]
    events = RECORDED[provider]
    assembler = StreamAssembler(provider)
    for event in events[:cut]:
        assembler.feed(event)
    before = assembler.message(partial=True)
    with pytest.raises(CodecError, match="started again"):
        assembler.feed(again)
    assert same(assembler.message(partial=True), before)
    for event in events[cut:]:
        assembler.feed(event)
    assert same(assembler.message(), assemble(events, provider=provider))


@pytest.mark.parametrize(
    "event",
    [
        {
            "type": "response.content_part.added",
            "output_index": 1,
            "content_index": 0,
            "part": {"type": "output_text", "text": ""},
        },
        {
            "type": "response.reasoning_summary_part.added",
            "output_index": 0,
            "summary_index": 0,
            "part": {"type": "summary_text", "text": ""},
        },
        {"type": "response.output_item.done", "output_index": 0, "item": {"type": "reasoning"}},
    ],
)
def test_responses_parts_started_again_are_refused(event: dict[str, Any]) -> None:
    events = RECORDED["openai_responses"]
    assembler = StreamAssembler("openai_responses")
    for earlier in events[:12]:  # inside the message's text, after the reasoning item is done
        assembler.feed(earlier)
    before = assembler.message(partial=True)
    with pytest.raises(CodecError):
        assembler.feed(event)
    assert same(assembler.message(partial=True), before)


def test_a_bedrock_delta_after_its_block_stopped_is_refused() -> None:
    events = RECORDED["bedrock"]
    assembler = StreamAssembler("bedrock")
    for event in events[:9]:  # the text block 1 stopped
        assembler.feed(event)
    before = assembler.message(partial=True)
    with pytest.raises(CodecError, match="after its stop"):
        assembler.feed({"contentBlockDelta": {"delta": {"text": "!"}, "contentBlockIndex": 1}})
    assert same(assembler.message(partial=True), before)


def test_a_second_message_start_is_refused() -> None:
    assembler = StreamAssembler("anthropic")
    for event in ANTHROPIC[:8]:
        assembler.feed(event)
    with pytest.raises(CodecError, match="second message_start"):
        assembler.feed(ANTHROPIC[0])
    partial = assembler.message(partial=True)
    assert isinstance(partial.parts[-1], TextPart)
