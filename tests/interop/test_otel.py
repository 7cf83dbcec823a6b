"""threadline.interop.otel: the GenAI semantic conventions' message attributes both ways (the
conventions' own examples, a trace another instrumentation exported, every part kind, each loss,
the errors and limits), the round-trip law, and record_model_call with the SDK's in-memory
exporter."""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import threadline as tl
from tests import strategies
from tests.support import examples
from tests.support import require_module
from threadline.codecs import codec_names
from threadline.codecs import encode
from threadline.interop.otel import CAPTURE_CONTENT_ENV
from threadline.interop.otel import INPUT_MESSAGES
from threadline.interop.otel import OUTPUT_MESSAGES
from threadline.interop.otel import SYSTEM_INSTRUCTIONS
from threadline.interop.otel import from_otel_messages
from threadline.interop.otel import record_model_call
from threadline.interop.otel import to_otel_messages
from threadline.limits import Limits

FIXTURE = Path(__file__).parent / "fixtures" / "otel_trace.json"
PNG_BASE64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJ"
    "ggg=="
)
PNG = base64.b64decode(PNG_BASE64)


def exported_attributes() -> dict[str, Any]:
    """The attributes of the one span in the OTLP/JSON fixture, as a flat mapping (what a
    trace backend's export holds, read the way a collector's file exporter writes it)."""
    document = json.loads(FIXTURE.read_text(encoding="utf-8"))
    span = document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    return {item["key"]: otlp_value(item["value"]) for item in span["attributes"]}


def otlp_value(value: dict[str, Any]) -> Any:
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])
    return tuple(otlp_value(item) for item in value["arrayValue"]["values"])


def encodes_everywhere(messages: list[tl.Message]) -> None:
    ready = tl.prepare_messages(messages)
    for name in codec_names():
        assert encode(ready, provider=name), name


def parsed(attributes: dict[str, str]) -> dict[str, Any]:
    return {key: json.loads(value) for key, value in attributes.items()}


# -- the conventions' own examples (docs/gen-ai/non-normative/examples-llm-calls.md) -----------

SIMPLE_INPUT: list[dict[str, Any]] = [
    {"role": "system", "parts": [{"type": "text", "content": "You are a helpful bot"}]},
    {"role": "user", "parts": [{"type": "text", "content": "Tell me a joke about OpenTelemetry"}]},
]
TOOL_INPUT: list[dict[str, Any]] = [
    {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]},
    {
        "role": "assistant",
        "parts": [
            {
                "type": "tool_call",
                "id": "call_VSPygqKTWdrhaFErNvMV18Yl",
                "name": "get_weather",
                "arguments": {"location": "Paris"},
            }
        ],
    },
    {
        "role": "tool",
        "parts": [
            {
                "type": "tool_call_response",
                "id": "call_VSPygqKTWdrhaFErNvMV18Yl",
                "response": "rainy, 57°F",
            }
        ],
    },
]
REASONING_OUTPUT: list[dict[str, Any]] = [
    {
        "role": "assistant",
        "parts": [
            {"type": "reasoning", "content": "Alright, the user wants a joke about OpenTelemetry"},
            {"type": "text", "content": " Why did the developer bring OpenTelemetry to the party?"},
        ],
    }
]


def test_simple_chat_example_keeps_the_system_message_in_place() -> None:
    messages = from_otel_messages({INPUT_MESSAGES: json.dumps(SIMPLE_INPUT)})
    assert [(m.role, m.text) for m in messages] == [
        ("system", "You are a helpful bot"),
        ("user", "Tell me a joke about OpenTelemetry"),
    ]
    encodes_everywhere(messages)


def test_tool_call_example_reads_into_threadline_shape_and_writes_back_exactly() -> None:
    messages = from_otel_messages({INPUT_MESSAGES: TOOL_INPUT})  # parsed values, not text
    _, call, result = messages
    assert call.tool_calls[0].arguments == {"location": "Paris"}
    assert result.tool_results[0].call_id == "call_VSPygqKTWdrhaFErNvMV18Yl"
    assert result.tool_results[0].content == "rainy, 57°F"
    assert parsed(to_otel_messages(messages)) == {INPUT_MESSAGES: TOOL_INPUT}
    encodes_everywhere(messages)


def test_reasoning_output_example_without_finish_reason() -> None:
    (answer,) = from_otel_messages({OUTPUT_MESSAGES: REASONING_OUTPUT})
    reasoning, _ = answer.parts
    assert isinstance(reasoning, tl.ReasoningPart)
    assert reasoning.text.startswith("Alright")
    assert "otel.finish_reason" not in answer.metadata
    written = json.loads(to_otel_messages([], answer)[OUTPUT_MESSAGES])
    assert written == [{**REASONING_OUTPUT[0], "finish_reason": "stop"}]


def test_multimodal_example_parts_map_and_the_file_id_part_is_refused() -> None:
    parts = [
        {"type": "text", "content": "What is in the attached data?"},
        {"type": "uri", "modality": "video", "mime_type": "video/mp4", "uri": "gs://b/v.mp4"},
        {"type": "blob", "modality": "audio", "mime_type": "audio/wav", "content": "aGk="},
        {"type": "uri", "modality": "document", "mime_type": "application/pdf", "uri": "s3://b/k"},
    ]
    (user,) = from_otel_messages({INPUT_MESSAGES: [{"role": "user", "parts": parts}]})
    _, video, audio, pdf = user.parts
    assert isinstance(video, tl.FilePart)
    assert (video.media_type, video.url) == ("video/mp4", "gs://b/v.mp4")
    assert isinstance(audio, tl.FilePart)
    assert (audio.media_type, audio.data) == ("audio/wav", b"hi")
    assert isinstance(pdf, tl.FilePart)
    assert pdf.url == "s3://b/k"
    by_id = [{"role": "user", "parts": [{"type": "file", "file_id": "provider_fileid_123"}]}]
    with pytest.raises(tl.CodecError, match=r"gen_ai\.input\.messages\[0\]\.parts\[0\]\.type"):
        from_otel_messages({INPUT_MESSAGES: by_id})


def test_built_in_tool_example_becomes_provider_tool_parts_of_the_spans_provider() -> None:
    output = [
        {
            "role": "assistant",
            "parts": [
                {
                    "type": "server_tool_call",
                    "id": "call_1",
                    "name": "code_interpreter",
                    "server_tool_call": {"type": "code_interpreter", "code": "1+1"},
                },
                {
                    "type": "server_tool_call_response",
                    "id": "call_1",
                    "server_tool_call_response": {"type": "code_interpreter", "outputs": []},
                },
                {"type": "text", "content": "2"},
            ],
            "finish_reason": "stop",
        }
    ]
    attributes = {OUTPUT_MESSAGES: json.dumps(output), "gen_ai.provider.name": "openai"}
    (answer,) = from_otel_messages(attributes)
    call, result, _ = answer.parts
    assert isinstance(call, tl.ProviderToolCallPart)
    assert (call.provider, call.input) == ("openai", {"type": "code_interpreter", "code": "1+1"})
    assert isinstance(result, tl.ProviderToolResultPart)
    assert result.content == {"type": "code_interpreter", "outputs": []}
    written = json.loads(to_otel_messages([], answer)[OUTPUT_MESSAGES])
    assert [part.pop("provider", None) for part in written[0]["parts"]] == [
        "openai",
        "openai",
        None,
    ]
    assert written == output


# -- a trace another instrumentation exported -------------------------------------------------


def test_exported_trace_loads_into_a_history_every_format_encodes() -> None:
    messages = from_otel_messages(exported_attributes())
    assert [m.role for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]
    answer = messages[-1]
    assert answer.metadata["provider"] == "openai"
    assert answer.metadata["model"] == "gpt-4.1-2025-04-14"
    assert answer.metadata["response_id"] == "resp_68f1a2b3c4d5"
    assert answer.metadata["otel.finish_reason"] == "stop"
    assert answer.usage == tl.Usage(input_tokens=1289, output_tokens=96, cache_read_tokens=1024)
    chart = messages[5].parts[1]
    assert isinstance(chart, tl.FilePart)
    assert chart.data == PNG
    history = tl.History(messages)
    assert history.usage() == answer.usage
    encodes_everywhere(list(history))


def test_exported_trace_writes_back_the_same_message_attributes() -> None:
    attributes = exported_attributes()
    messages = from_otel_messages(attributes)
    written = parsed(to_otel_messages(messages[:-1], messages[-1]))
    expected = {key: json.loads(attributes[key]) for key in written}
    for part in written[OUTPUT_MESSAGES][0]["parts"]:
        part.pop("provider", None)  # threadline names who ran a provider tool; the span did
    assert written == expected


# -- every part kind written -------------------------------------------------------------------


def every_part_kind() -> tuple[list[tl.Message], tl.Message]:
    messages = [
        tl.system_message("Be brief."),
        tl.user_message(
            "Look:",
            tl.file_part(PNG, "image/png", filename="dot.png"),
            tl.file_part("https://example.com/a.pdf", "application/pdf"),
            tl.file_part("data:text/plain;base64,aGk=", "text/plain"),
        ),
        tl.assistant_message(
            tl.reasoning_part("think", signature="sig", provider="anthropic"),
            tl.tool_call_part("c1", "lookup", {"q": "x"}),
            tl.tool_call_part("c2", "broken", '{"q": '),
            tl.hook_part("approval", {"pending": True}),
        ),
        tl.tool_message(
            tl.tool_result_part("c1", [tl.text_part("found"), tl.file_part(PNG, "image/png")]),
            tl.tool_result_part("c2", "bad arguments", name="broken", is_error=True),
        ),
        tl.internal_message("ui note"),
    ]
    output = tl.assistant_message(
        tl.ProviderToolCallPart(id="s1", name="web_search", input={"q": "x"}, provider="openai"),
        tl.ProviderToolResultPart(call_id="s1", content=["hit"], provider="openai"),
        "Done.",
        metadata={"stop_reason": "end_turn"},
    )
    return messages, output


def test_every_part_kind_is_written_as_the_conventions_name_it() -> None:
    messages, output = every_part_kind()
    png = PNG_BASE64
    assert parsed(to_otel_messages(messages, output)) == {
        SYSTEM_INSTRUCTIONS: [{"type": "text", "content": "Be brief."}],
        INPUT_MESSAGES: [
            {
                "role": "user",
                "parts": [
                    {"type": "text", "content": "Look:"},
                    {
                        "type": "blob",
                        "modality": "image",
                        "mime_type": "image/png",
                        "content": png,
                        "filename": "dot.png",
                    },
                    {
                        "type": "uri",
                        "modality": "document",
                        "mime_type": "application/pdf",
                        "uri": "https://example.com/a.pdf",
                    },
                    {
                        "type": "blob",
                        "modality": "document",
                        "mime_type": "text/plain",
                        "content": "aGk=",
                    },
                ],
            },
            {
                "role": "assistant",
                "parts": [
                    {"type": "reasoning", "content": "think"},
                    {"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {"q": "x"}},
                    {"type": "tool_call", "id": "c2", "name": "broken", "arguments": '{"q": '},
                ],
            },
            {
                "role": "tool",
                "parts": [
                    {
                        "type": "tool_call_response",
                        "id": "c1",
                        "response": [
                            {"type": "text", "content": "found"},
                            {
                                "type": "blob",
                                "modality": "image",
                                "mime_type": "image/png",
                                "content": png,
                            },
                        ],
                    },
                    {
                        "type": "tool_call_response",
                        "id": "c2",
                        "response": "bad arguments",
                        "name": "broken",
                        "is_error": True,
                    },
                ],
            },
        ],
        OUTPUT_MESSAGES: [
            {
                "role": "assistant",
                "parts": [
                    {
                        "type": "server_tool_call",
                        "id": "s1",
                        "name": "web_search",
                        "server_tool_call": {"type": "web_search", "input": {"q": "x"}},
                        "provider": "openai",
                    },
                    {
                        "type": "server_tool_call_response",
                        "id": "s1",
                        "server_tool_call_response": {"type": "web_search", "content": ["hit"]},
                        "provider": "openai",
                    },
                    {"type": "text", "content": "Done."},
                ],
                "finish_reason": "stop",
            }
        ],
    }


def test_every_part_kind_reads_back_with_its_content() -> None:
    messages, output = every_part_kind()
    back = from_otel_messages(to_otel_messages(messages, output))
    assert [m.role for m in back] == ["system", "user", "assistant", "tool", "assistant"]
    call, broken = back[2].tool_calls
    assert (call.arguments, broken.raw_arguments) == ({"q": "x"}, '{"q": ')
    found, failed = back[3].tool_results
    assert found.content == (tl.text_part("found"), tl.file_part(PNG, "image/png"))
    assert (failed.name, failed.is_error) == ("broken", True)
    assert back[1].parts[3] == tl.file_part(b"hi", "text/plain")  # a data: URL comes back as bytes
    assert back[4].parts == output.parts
    encodes_everywhere(back)


# -- what is lost, named ----------------------------------------------------------------------


def test_losses_are_the_documented_ones() -> None:
    messages, output = every_part_kind()
    back = from_otel_messages(to_otel_messages(messages, output))
    reasoning = back[2].parts[0]
    assert reasoning == tl.reasoning_part("think")  # signature and provider state: not carried
    assert all(not isinstance(p, tl.HookPart) for m in back for p in m.parts)  # app state
    assert "internal" not in [m.role for m in back]  # never sent to a model
    assert {m.id for m in back}.isdisjoint(m.id for m in messages)  # ids are new
    kept = tl.text_part("x", metadata={"anthropic.cache_control": {"type": "ephemeral"}})
    (user,) = from_otel_messages(to_otel_messages([tl.user_message(kept)]))
    assert user.parts == (tl.text_part("x"),)  # part metadata other than otel.*


def test_two_system_messages_become_one_with_both_parts() -> None:
    attributes = to_otel_messages([tl.system_message("a"), tl.system_message("b")])
    (system,) = from_otel_messages(attributes)
    assert system.parts == (tl.text_part("a"), tl.text_part("b"))


def test_unknown_properties_and_parts_are_kept_and_written_back() -> None:
    inputs = [
        {
            "role": "assistant",
            "name": "planner",
            "parts": [
                {"type": "text", "content": "hi", "annotations": [1]},
                {"type": "file", "modality": "image", "file_id": "file-123"},
                {"type": "refusal", "content": "no"},
            ],
        }
    ]
    (message,) = from_otel_messages({INPUT_MESSAGES: inputs})
    assert message.metadata == {"otel.name": "planner"}
    text, by_id, refusal = message.parts
    assert text.metadata == {"otel.annotations": [1]}
    assert isinstance(by_id, tl.HookPart)
    assert by_id.name == "otel.file"
    assert isinstance(refusal, tl.HookPart)
    assert parsed(to_otel_messages([message])) == {INPUT_MESSAGES: inputs}
    encodes_everywhere([tl.user_message("q"), message])


def test_tool_responses_in_user_and_assistant_messages_move_to_a_tool_message() -> None:
    inputs = [
        {"role": "user", "parts": [{"type": "text", "content": "go"}]},
        {"role": "assistant", "parts": [{"type": "tool_call", "name": "f", "arguments": None}]},
        {
            "role": "user",
            "parts": [
                {"type": "tool_call_response", "response": {"ok": True}},
                {"type": "text", "content": "and then?"},
            ],
        },
    ]
    messages = from_otel_messages({INPUT_MESSAGES: inputs})
    assert [m.role for m in messages] == ["user", "assistant", "tool", "user"]
    (call,) = messages[1].tool_calls
    (result,) = messages[2].tool_results
    assert result.call_id == call.id  # calls without ids are answered in order
    assert result.content == '{"ok":true}'
    encodes_everywhere(messages)


def test_result_key_of_the_conventions_attribute_table_is_read_too() -> None:
    inputs = [*TOOL_INPUT[:2], {"role": "tool", "parts": [{**TOOL_INPUT[2]["parts"][0]}]}]
    inputs[2]["parts"][0]["result"] = inputs[2]["parts"][0].pop("response")
    messages = from_otel_messages({INPUT_MESSAGES: inputs})
    assert messages[2].tool_results[0].content == "rainy, 57°F"
    assert not messages[2].tool_results[0].metadata
    inputs[2]["parts"][0]["response"] = "the response"  # both: result is kept beside it
    (result,) = from_otel_messages({INPUT_MESSAGES: inputs})[2].tool_results
    assert (result.content, result.metadata) == ("the response", {"otel.result": "rainy, 57°F"})


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("end_turn", "stop"),
        ("MAX_TOKENS", "length"),
        ("tool_calls", "tool_call"),
        ("SAFETY", "content_filter"),
        ("pause_turn", "pause_turn"),
    ],
)
def test_stop_reasons_become_finish_reasons(reason: str, expected: str) -> None:
    message = tl.assistant_message("x", metadata={"stop_reason": reason})
    (written,) = json.loads(to_otel_messages([], message)[OUTPUT_MESSAGES])
    assert written["finish_reason"] == expected


# -- errors and limits -------------------------------------------------------------------------


def one(role: str, part: dict[str, Any]) -> dict[str, Any]:
    return {INPUT_MESSAGES: [{"role": role, "parts": [part]}]}


@pytest.mark.parametrize(
    ("attributes", "path"),
    [
        ({INPUT_MESSAGES: [{"role": "robot", "parts": []}]}, r"messages\[0\]\.role"),
        ({INPUT_MESSAGES: [{"role": "user"}]}, r"messages\[0\]\.parts"),
        (one("user", {"type": "text"}), r"parts\[0\]\.content"),
        (one("user", {"type": "reasoning", "content": ""}), r"parts\[0\]\.type"),
        (one("tool", {"type": "text", "content": "x"}), r"messages\[0\]\.parts"),
        (one("tool", {"type": "tool_call_response", "response": "x"}), r"parts\[0\]\.id"),
        (one("user", {"type": "blob", "content": "%%"}), r"parts\[0\]\.content"),
        (one("user", {"type": "uri", "uri": "/etc/passwd"}), r"messages\[0\]\.parts\[0\]"),
        ({SYSTEM_INSTRUCTIONS: [{"type": "blob", "content": ""}]}, r"instructions\[0\]\.type"),
        ({OUTPUT_MESSAGES: [{"role": "user", "parts": []}]}, r"output\.messages\[0\]\.role"),
        ({INPUT_MESSAGES: {"role": "user"}}, r"gen_ai\.input\.messages"),
    ],
)
def test_invalid_attributes_name_the_field(attributes: dict[str, Any], path: str) -> None:
    with pytest.raises(tl.CodecError, match=path):
        from_otel_messages(attributes)


def test_text_that_is_not_json_is_refused() -> None:
    with pytest.raises(tl.ValidationError):
        from_otel_messages({INPUT_MESSAGES: "[{"})


def test_untrusted_limits_by_default_and_wider_ones_on_request() -> None:
    deep: Any = "x"
    for _ in range(40):
        deep = [deep]
    call = {"type": "tool_call", "id": "c", "name": "f", "arguments": {"a": deep}}
    inputs = [{"role": "assistant", "parts": [call]}]
    with pytest.raises(tl.LimitExceededError, match="max_depth"):
        from_otel_messages({INPUT_MESSAGES: json.dumps(inputs)})
    many = [{"role": "user", "parts": [{"type": "text", "content": "x"}]}] * 1_001
    with pytest.raises(tl.LimitExceededError, match="max_messages"):
        from_otel_messages({INPUT_MESSAGES: many})
    assert len(from_otel_messages({INPUT_MESSAGES: many}, limits=Limits())) == 1_001


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(TypeError, match="mapping of span attributes"):
        from_otel_messages([])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Message"):
        to_otel_messages([{"role": "user"}])  # type: ignore[list-item]


def test_output_must_be_an_assistant_message() -> None:
    with pytest.raises(tl.ValidationError, match="output"):
        to_otel_messages([], tl.user_message("hi"))


def test_span_helper_without_opentelemetry_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    with (
        pytest.raises(ImportError, match=r"threadline\[otel\]"),
        record_model_call([tl.user_message("hi")], provider="openai", model="gpt-4.1"),
    ):
        pass


def test_no_attribute_means_no_message() -> None:
    assert from_otel_messages({"gen_ai.operation.name": "chat"}) == []
    assert to_otel_messages([tl.internal_message("x")]) == {}


# -- the round-trip law ------------------------------------------------------------------------


def carried(messages: list[tl.Message]) -> list[tuple[str, list[Any]]]:
    """What both sides carry: roles and parts, without ids, timestamps, metadata, reasoning's
    opaque state, hook parts and internal messages, with system text in one message first."""
    system = [p for m in messages if m.role == "system" for p in m.parts]
    out: list[tuple[str, list[Any]]] = [("system", [bare(p) for p in system])] if system else []
    for message in messages:
        if message.role in ("system", "internal"):
            continue
        parts = [bare(p) for p in message.parts if not isinstance(p, tl.HookPart)]
        if parts:
            out.append((message.role, parts))
    return out


def bare(part: Any) -> Any:
    if isinstance(part, tl.ReasoningPart):
        return tl.reasoning_part(part.text)
    if isinstance(part, tl.ToolResultPart) and not isinstance(part.content, str):
        part = dataclasses.replace(part, content=tuple(bare(item) for item in part.content))
    return dataclasses.replace(part, metadata={})


@settings(max_examples=examples(100))
@given(strategies.conversations(replay=False), st.booleans())
def test_from_otel_of_to_otel_has_the_same_content(
    messages: list[tl.Message], with_output: bool
) -> None:
    output = messages[-1] if with_output and messages and messages[-1].role == "assistant" else None
    sent = messages[:-1] if output is not None else messages
    back = from_otel_messages(to_otel_messages(sent, output), limits=Limits())
    assert carried(back) == carried(messages)


# -- import cost --------------------------------------------------------------------------------


def test_importing_the_adapter_imports_no_opentelemetry() -> None:
    code = (
        "import sys, threadline.interop.otel; "
        "print(any(m.startswith('opentelemetry') for m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "False"


# -- record_model_call --------------------------------------------------------------------------


@pytest.fixture
def exporter() -> Iterator[Any]:
    require_module("opentelemetry.sdk", 'pip install "opentelemetry-sdk==1.45.2"')
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    memory.tracer = provider.get_tracer("tests")  # type: ignore[attr-defined]
    yield memory
    provider.shutdown()


def response() -> tl.Message:
    return tl.assistant_message(
        "It is rainy.",
        metadata={
            "provider": "gemini",
            "model": "gemini-2.5-flash-001",
            "response_id": "r-1",
            "stop_reason": "STOP",
            "usage": tl.Usage(
                input_tokens=120, output_tokens=30, cache_read_tokens=100, reasoning_tokens=12
            ).to_dict(),
        },
    )


def test_span_holds_the_conventions_attributes_and_no_content_by_default(
    exporter: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CAPTURE_CONTENT_ENV, raising=False)
    from opentelemetry.trace import SpanKind

    sent = [tl.system_message("Be brief."), tl.user_message("Weather?")]
    with record_model_call(
        sent,
        provider="gemini",
        model="gemini-2.5-flash",
        tracer=exporter.tracer,
        conversation_id="c-9",
    ) as call:
        call.record_response(response())
    (span,) = exporter.get_finished_spans()
    assert span.name == "chat gemini-2.5-flash"
    assert span.kind is SpanKind.CLIENT
    assert dict(span.attributes) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "gcp.gemini",
        "gen_ai.request.model": "gemini-2.5-flash",
        "gen_ai.conversation.id": "c-9",
        "gen_ai.response.model": "gemini-2.5-flash-001",
        "gen_ai.response.id": "r-1",
        "gen_ai.response.finish_reasons": ("stop",),
        "gen_ai.usage.input_tokens": 120,
        "gen_ai.usage.output_tokens": 30,
        "gen_ai.usage.cache_read.input_tokens": 100,
        "gen_ai.usage.reasoning.output_tokens": 12,
    }


@pytest.mark.parametrize("switch", ["argument", "true", "span_only", "SPAN_AND_EVENT"])
def test_span_holds_the_messages_when_content_capture_is_on(
    exporter: Any, monkeypatch: pytest.MonkeyPatch, switch: str
) -> None:
    capture: bool | None = None
    if switch == "argument":
        monkeypatch.setenv(CAPTURE_CONTENT_ENV, "false")
        capture = True
    else:
        monkeypatch.setenv(CAPTURE_CONTENT_ENV, switch)
    sent = [tl.system_message("Be brief."), tl.user_message("Weather?")]
    with record_model_call(
        sent, provider="anthropic", model="claude", tracer=exporter.tracer, capture_content=capture
    ) as call:
        call.record_response(response())
    (span,) = exporter.get_finished_spans()
    assert span.attributes[INPUT_MESSAGES] == to_otel_messages(sent)[INPUT_MESSAGES]
    back = from_otel_messages(span.attributes)
    assert [m.text for m in back] == ["Be brief.", "Weather?", "It is rainy."]
    assert back[-1].usage == response().usage
    encodes_everywhere(back)


def test_span_records_the_error_of_a_failed_call(exporter: Any) -> None:
    from opentelemetry.trace import StatusCode

    with (
        pytest.raises(TimeoutError),
        record_model_call(
            [tl.user_message("hi")], provider="openai_chat", model="gpt-4.1", tracer=exporter.tracer
        ),
    ):
        raise TimeoutError("no answer")
    (span,) = exporter.get_finished_spans()
    assert span.attributes["error.type"] == "TimeoutError"
    assert span.attributes["gen_ai.provider.name"] == "openai"
    assert span.status.status_code is StatusCode.ERROR


def test_span_helper_takes_its_tracer_from_the_global_provider_when_given_none(
    exporter: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from opentelemetry import trace

    asked: list[str] = []

    def get_tracer(name: str, *args: Any, **kwargs: Any) -> Any:
        asked.append(name)
        return exporter.tracer

    monkeypatch.setattr(trace, "get_tracer", get_tracer)
    with record_model_call([tl.user_message("hi")], provider="ollama", model="llama3"):
        pass
    assert asked == ["threadline.interop.otel"]
    (span,) = exporter.get_finished_spans()
    assert span.attributes["gen_ai.provider.name"] == "ollama"  # a name the conventions lack


# -- hostile shapes: a trace is another party's data --------------------------------------------

_PART_TYPES = ("text", "reasoning", "tool_call", "tool_call_response", "blob", "uri", "file", "x")
_hostile_parts = st.fixed_dictionaries(
    {"type": st.sampled_from(_PART_TYPES)},
    optional={
        "content": strategies.json_values,
        "id": st.one_of(st.text(max_size=4), strategies.json_scalars),
        "name": st.one_of(st.text(max_size=4), strategies.json_scalars),
        "arguments": strategies.json_values,
        "response": strategies.json_values,
        "modality": st.one_of(st.sampled_from(["image", "audio", "video"]), st.text(max_size=3)),
        "mime_type": st.one_of(st.just("image/png"), st.text(max_size=8)),
        "uri": st.one_of(st.just("https://example.com/a.png"), st.text(max_size=8)),
        "threadline.seal": strategies.json_values,
    },
)
_hostile_messages = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "tool", "system", "boss", ""])},
        optional={
            "parts": st.one_of(st.lists(_hostile_parts, max_size=4), strategies.json_values),
            "finish_reason": st.one_of(st.text(max_size=6), strategies.json_scalars),
        },
    ),
    max_size=5,
)


@settings(max_examples=examples(200))
@given(_hostile_messages, _hostile_messages, st.booleans())
def test_any_shape_is_read_or_refused_with_a_threadline_error(
    inputs: list[Any], outputs: list[Any], as_text: bool
) -> None:
    attributes: dict[str, Any] = {INPUT_MESSAGES: inputs, OUTPUT_MESSAGES: outputs}
    if as_text:
        attributes = {key: json.dumps(value) for key, value in attributes.items()}
    try:
        messages = from_otel_messages(attributes)
    except tl.ThreadlineError:
        return  # refused, naming what (every refusal is one of the library's errors)
    for message in messages:  # what was read is threadline's own shape, and no forged key
        assert not any(key.startswith("threadline.") for key in message.metadata)
        for part in message.parts:
            assert not any(key.startswith("threadline.") for key in part.metadata)
    with contextlib.suppress(tl.IntegrityError):  # what integrity refuses, it names
        tl.prepare_messages(messages)


def test_a_lone_surrogate_in_a_trace_is_refused_naming_it() -> None:
    text = '[{"role": "user", "parts": [{"type": "text", "content": "\\ud800"}]}]'
    with pytest.raises(tl.ThreadlineError):
        from_otel_messages({INPUT_MESSAGES: text})


def test_one_call_id_repeated_ten_thousand_times_is_read_and_left_to_integrity() -> None:
    calls = [{"type": "tool_call", "id": "c", "name": "f", "arguments": {}}] * 10_000
    inputs = [{"role": "assistant", "parts": calls}]
    messages = from_otel_messages({INPUT_MESSAGES: inputs})  # 10,000 parts: within untrusted
    assert len(messages[0].parts) == 10_000
    with pytest.raises(tl.LimitExceededError, match="max_parts"):
        from_otel_messages({INPUT_MESSAGES: [{"role": "assistant", "parts": [*calls, *calls]}]})
    with pytest.raises(tl.IntegrityError, match="duplicate-tool-call"):  # integrity refuses it
        tl.prepare_messages(messages)


def test_the_integrity_error_for_ten_thousand_repeats_is_short_and_keeps_every_issue() -> None:
    calls = [{"type": "tool_call", "id": "c", "name": "f", "arguments": {}}] * 10_000
    messages = from_otel_messages({INPUT_MESSAGES: [{"role": "assistant", "parts": calls}]})
    with pytest.raises(tl.IntegrityError) as caught:
        tl.prepare_messages(messages)
    assert len(caught.value.issues) == 9_999
    assert str(caught.value).count("duplicate-tool-call at") == 20
    assert "and 9979 more" in str(caught.value)
