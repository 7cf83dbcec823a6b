"""Ollama ``/api/chat`` output, judged by the ``ollama`` package's own types and sent through its
real client over a mock transport; responses and streams as the docs show them
(docs.ollama.com/api/chat)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings

import threadline as tl
from tests.conformance._histories import agent_histories
from tests.conformance._histories import encode_options
from tests.conformance._histories import role_parts
from tests.conformance.judges import WireError
from tests.conformance.judges_ollama import capture_ollama
from tests.conformance.judges_ollama import judge_ollama
from tests.support import examples
from tests.support import require_module
from threadline import Message
from threadline.codecs import ollama
from threadline.integrity import prepare_messages
from threadline.testing import check_codec

pytestmark = pytest.mark.requires_sdk

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8


@pytest.fixture(autouse=True)
def _sdk() -> None:
    require_module("ollama")


@given(agent_histories(), encode_options)
def test_every_payload_passes_the_package_types(history: list[Message], kw: dict[str, Any]) -> None:
    judge_ollama(ollama.encode(history, **kw))


@given(agent_histories(), encode_options)
def test_decode_reads_back_the_prepared_history_up_to_the_declared_losses(
    history: list[Message], kw: dict[str, Any]
) -> None:
    decoded = ollama.decode(ollama.encode(history, **kw))
    expected = ollama.normalize_for_round_trip(prepare_messages(history), **kw)
    assert role_parts(decoded) == role_parts(expected)


def test_check_codec_passes_with_the_package_judge() -> None:
    check_codec(ollama, validate=judge_ollama)


def client_view(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Our messages as the client sends them: it leaves out every empty value (``content:
    ""`` beside tool calls), nothing else."""
    return [{k: v for k, v in m.items() if v} for m in json.loads(json.dumps(messages))]


@settings(max_examples=examples(15))
@given(agent_histories(max_turns=3))
def test_the_real_client_sends_exactly_our_payload(history: list[Message]) -> None:
    payload = ollama.encode([*history, tl.user_message("And now?")])
    sent = capture_ollama({"model": "qwen3:8b", **payload})
    assert sent["url"].endswith("/api/chat")
    assert sent["json"]["model"] == "qwen3:8b"
    assert sent["json"]["messages"] == client_view(payload["messages"])


# ---------------------------------------------------------------------------------------------
# Responses, as the docs show them

THINKING_TOOL_REPLY: dict[str, Any] = {
    "model": "qwen3:8b",
    "created_at": "2025-10-17T23:14:07.414671Z",
    "message": {
        "role": "assistant",
        "content": "",
        "thinking": "The user wants the weather in Tokyo; call get_weather.",
        "tool_calls": [
            {"function": {"name": "get_weather", "arguments": {"city": "Tokyo"}}},
            {"function": {"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}},
        ],
    },
    "done": True,
    "done_reason": "stop",
    "total_duration": 4883583458,
    "load_duration": 1334875,
    "prompt_eval_count": 26,
    "prompt_eval_duration": 342546000,
    "eval_count": 282,
    "eval_duration": 4535599000,
}


def test_decode_response_reads_what_the_client_returns_and_it_goes_back_out() -> None:
    sent = capture_ollama(
        {"model": "qwen3:8b", "messages": [{"role": "user", "content": "Weather?"}]},
        reply=THINKING_TOOL_REPLY,
    )
    message = ollama.decode_response(sent["response"])  # the package's ChatResponse
    plain = ollama.decode_response(THINKING_TOOL_REPLY)
    assert (message.parts, message.metadata) == (plain.parts, plain.metadata)
    reasoning, weather, time = message.parts
    assert reasoning == tl.ReasoningPart(
        text="The user wants the weather in Tokyo; call get_weather.",
        provider="ollama",
        model="qwen3:8b",
    )
    assert isinstance(weather, tl.ToolCallPart)
    assert isinstance(time, tl.ToolCallPart)
    assert (weather.name, dict(weather.arguments)) == ("get_weather", {"city": "Tokyo"})
    assert weather.id != time.id
    assert weather.id.startswith("call_")
    assert message.metadata["stop_reason"] == "stop"
    assert message.metadata["usage"]["input_tokens"] == 26
    assert message.metadata["usage"]["output_tokens"] == 282
    assert message.metadata["ollama.usage"]["eval_duration"] == 4535599000

    history = [
        tl.user_message("Weather?"),
        message,
        tl.tool_message(
            tl.tool_result_part(time.id, "16:05"),  # answered out of order
            tl.tool_result_part(weather.id, "sunny"),
        ),
    ]
    payload = ollama.encode(history, model="qwen3:8b")
    judge_ollama(payload)
    assert payload["messages"][1:] == [
        {
            "role": "assistant",
            "content": "",
            "thinking": "The user wants the weather in Tokyo; call get_weather.",
            "tool_calls": [
                {"function": {"name": "get_weather", "arguments": {"city": "Tokyo"}}},
                {"function": {"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}},
            ],
        },
        {"role": "tool", "content": "sunny", "tool_name": "get_weather"},  # in call order
        {"role": "tool", "content": "16:05", "tool_name": "get_time"},
    ]
    # another model's turn: Ollama's reasoning stays behind
    assert "thinking" not in ollama.encode(history, model="llama3.2")["messages"][1]


def test_two_responses_without_call_ids_give_different_ids() -> None:
    later = {**THINKING_TOOL_REPLY, "created_at": "2025-10-17T23:14:09.000001Z"}
    first = ollama.decode_response(THINKING_TOOL_REPLY).tool_calls
    second = ollama.decode_response(later).tool_calls
    assert {c.id for c in first}.isdisjoint(c.id for c in second)
    assert ollama.decode_response(THINKING_TOOL_REPLY).tool_calls == first  # deterministic
    with_ids = json.loads(json.dumps(THINKING_TOOL_REPLY))
    with_ids["message"]["tool_calls"][0]["id"] = "call_abc"  # newer servers send one
    assert ollama.decode_response(with_ids).tool_calls[0].id == "call_abc"


def test_decode_pairs_results_by_tool_name_then_order_or_by_tool_call_id() -> None:
    calls = [
        {"function": {"name": "a", "arguments": {}}},
        {"function": {"name": "b", "arguments": {"x": 1}}},
    ]
    payload: dict[str, list[dict[str, Any]]] = {
        "messages": [
            {"role": "user", "content": "Go."},
            {"role": "assistant", "content": "", "tool_calls": calls},
            {"role": "tool", "content": "from b", "tool_name": "b"},
            {"role": "tool", "content": "from a", "tool_name": "a"},
        ]
    }
    _, assistant, results = ollama.decode(payload)
    ids = [call.id for call in assistant.tool_calls]
    assert ids == ["call_0", "call_1"]
    assert [(r.call_id, r.content) for r in results.tool_results] == [
        ("call_1", "from b"),
        ("call_0", "from a"),
    ]
    payload["messages"][1]["tool_calls"] = [
        {"id": "x1", **calls[0]},
        {"id": "x2", **calls[1]},
    ]
    payload["messages"][2] = {"role": "tool", "content": "from a", "tool_call_id": "x1"}
    payload["messages"][3] = {"role": "tool", "content": "from b"}
    _, _, results = ollama.decode(payload)
    assert [r.call_id for r in results.tool_results] == ["x1", "x2"]


def test_user_images_and_texts_go_in_order_and_come_back() -> None:
    history = [
        tl.user_message("Look:", tl.file_part(PNG, "image/png"), "and tell me."),
        tl.assistant_message("A black square."),
    ]
    payload = ollama.encode(history)
    judge_ollama(payload)
    assert payload["messages"][:2] == [
        {"role": "user", "content": "Look:", "images": ["iVBORw0KGgoAAAAAAAAAAA=="]},
        {"role": "user", "content": "and tell me."},
    ]
    decoded = ollama.decode(payload)
    assert [p for m in decoded for p in m.parts][:3] == [
        tl.text_part("Look:"),
        tl.FilePart(data=PNG, media_type="image/png"),
        tl.text_part("and tell me."),
    ]
    by_url = ollama.encode([tl.user_message(tl.file_part("https://x.test/a.png", "image/png"))])
    assert by_url["messages"][0]["content"] == "[image/png omitted: not supported by ollama]"


def test_a_failed_result_and_a_result_of_parts_are_text() -> None:
    history = [
        tl.user_message("Go."),
        tl.assistant_message(tl.tool_call_part("c1", "f", {})),
        tl.tool_message(tl.tool_result_part("c1", ("one", "two"), is_error=True)),
    ]
    payload = ollama.encode(history)
    assert payload["messages"][-1] == {
        "role": "tool",
        "content": "[tool error] one\ntwo",
        "tool_name": "f",
    }
    result = ollama.decode(payload)[-1].tool_results[0]
    assert (result.content, result.is_error) == ("one\ntwo", True)


# ---------------------------------------------------------------------------------------------
# Request fields


def test_tools_and_structured_output_pass_the_package_types() -> None:
    tool = tl.tool_from_function(_get_weather)
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    body = tl.encode(
        [tl.user_message("Weather?")],
        provider="ollama",
        tools=[tool],
        tool_choice="auto",
        output_schema=schema,
    )
    judge_ollama(body)
    assert body["tools"][0]["type"] == "function"
    assert body["tools"][0]["function"]["name"] == "_get_weather"
    assert body["format"]["properties"] == {"answer": {"type": "string"}}
    assert "tool_choice" not in body
    sent = capture_ollama({"model": "qwen3:8b", **body})  # as it is: no copy needed
    function = sent["json"]["tools"][0]["function"]
    ours = body["tools"][0]["function"]
    assert (function["name"], function["description"]) == (ours["name"], ours["description"])
    # the client's Tool model keeps the schema keys Ollama reads (others, such as
    # additionalProperties, it leaves out)
    for key in ("type", "properties", "required"):
        assert function["parameters"][key] == ours["parameters"][key]
    assert sent["json"]["format"] == body["format"]


@pytest.mark.parametrize("choice", ["none", "required", "_get_weather"])
def test_a_tool_choice_ollama_cannot_express_is_refused(choice: str) -> None:
    tool = tl.tool_from_function(_get_weather)
    with pytest.raises(tl.UnsupportedContentError, match="no tool_choice"):
        tl.encode([tl.user_message("Hi")], provider="ollama", tools=[tool], tool_choice=choice)


def _get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: the city's name.
    """
    return city


# ---------------------------------------------------------------------------------------------
# Streams: NDJSON lines, as the server writes them


def test_ndjson_lines_assemble_into_the_decoded_response() -> None:
    from tests.stream_recordings import OLLAMA

    lines = [json.dumps(line) for line in OLLAMA]
    message = tl.assemble(lines, provider="ollama")
    final = {
        **OLLAMA[-1],
        "message": {
            "role": "assistant",
            "content": "Let me check.",
            "thinking": "The user wants the weather.",
            "tool_calls": [
                {"function": {"name": "get_weather", "arguments": {"city": "Tokyo"}}},
            ],
        },
    }
    expected = ollama.decode_response(final)
    assert (message.parts, message.metadata) == (expected.parts, expected.metadata)
    assert message.metadata["usage"]["output_tokens"] == 282


# ---------------------------------------------------------------------------------------------
# The judge rejects what the package's types (and the server) reject

VALID: dict[str, Any] = {
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather?", "images": ["iVBORw0KGgo="]},
        {
            "role": "assistant",
            "content": "",
            "thinking": "Call it.",
            "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}],
        },
        {"role": "tool", "content": "sunny", "tool_name": "get_weather"},
    ]
}


def test_the_judge_takes_the_valid_example() -> None:
    judge_ollama(VALID)


@pytest.mark.parametrize(
    ("where", "value", "problem"),
    [
        ((2, "tool_calls", 0, "function", "arguments"), '{"city": "Paris"}', "arguments"),
        ((2, "tool_calls", 0, "type"), "function", "type"),
        ((3, "tool_call_id"), "call_1", "tool_call_id"),
        ((1, "images", 0), "not base64!", "image"),
        ((1, "content"), ["Weather?"], "content"),
        ((0, "role"), "developer", "role"),
    ],
)
def test_the_judge_rejects(where: tuple[Any, ...], value: Any, problem: str) -> None:
    payload = json.loads(json.dumps(VALID))
    target = payload["messages"]
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    with pytest.raises(WireError, match=problem):
        judge_ollama(payload)


def test_the_clients_chunks_assemble_as_the_lines_do() -> None:
    """``client.chat(..., stream=True)`` yields a ``ChatResponse`` per line."""
    from tests.stream_recordings import OLLAMA

    chunk_type = require_module("ollama._types").ChatResponse
    chunks = [chunk_type.model_validate(line) for line in OLLAMA]
    from_chunks = tl.assemble(chunks, provider="ollama")
    from_lines = tl.assemble(OLLAMA, provider="ollama")
    assert (from_chunks.parts, from_chunks.metadata) == (from_lines.parts, from_lines.metadata)
