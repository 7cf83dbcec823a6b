"""OpenAI Responses output, judged by the ``openai`` SDK's own types and client.

Also: the judge rejects what the API rejects, and reasoning items survive a tool loop (and
are dropped, with the item ids tied to them, when the target model changes).
"""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import threadline as tl
from tests.conformance._histories import agent_histories
from tests.conformance._histories import encode_options
from tests.conformance._histories import role_parts
from tests.conformance._payloads import changed
from tests.conformance._provider_state import openai_histories
from tests.conformance.capture_more import capture_openai_responses
from tests.conformance.judges import WireError
from tests.conformance.judges_responses_gemini import judge_openai_responses
from tests.support import require_module
from threadline import Message
from threadline.codecs import openai_responses
from threadline.integrity import prepare_messages
from threadline.testing import check_codec

pytestmark = pytest.mark.requires_sdk

histories = st.one_of(agent_histories(), openai_histories())


@pytest.fixture(autouse=True)
def _sdk() -> None:
    require_module("openai")


@given(histories, encode_options)
def test_every_payload_passes_the_sdk_types_and_the_api_rules(
    history: list[Message], kw: dict[str, Any]
) -> None:
    judge_openai_responses(openai_responses.encode(history, **kw))


@given(histories, encode_options)
def test_decode_reads_back_the_prepared_history_up_to_the_declared_losses(
    history: list[Message], kw: dict[str, Any]
) -> None:
    decoded = openai_responses.decode(openai_responses.encode(history, **kw))
    expected = openai_responses.normalize_for_round_trip(prepare_messages(history), **kw)
    assert role_parts(decoded) == role_parts(expected)


@given(openai_histories())
def test_openai_reasoning_replays_in_place_for_its_model(history: list[Message]) -> None:
    items = openai_responses.encode(history)["input"]
    sent = {item["id"] for item in items if item.get("type") == "reasoning"}
    stored = [
        part
        for message in prepare_messages(history)
        for part in message.parts
        if isinstance(part, tl.ReasoningPart) and part.provider == "openai"
    ]
    for part in stored:
        if part.item_id in sent:
            index = next(i for i, item in enumerate(items) if item.get("id") == part.item_id)
            assert items[index]["summary"] == [
                {"type": "summary_text", "text": text} for text in part.summary
            ]
            assert items[index].get("encrypted_content") == part.encrypted
            assert items[index + 1].get("id"), "a reasoning item is followed by its item"


@settings(max_examples=15)
@given(histories)
def test_the_real_client_sends_exactly_our_payload(history: list[Message]) -> None:
    body = {"model": "gpt-test", **openai_responses.encode(history, system="Be brief.")}
    sent = capture_openai_responses(body)
    assert sent["url"].endswith("/v1/responses")
    assert sent["json"] == json.loads(json.dumps(body))


def test_check_codec_passes_with_the_sdk_judge() -> None:
    check_codec(openai_responses, validate=judge_openai_responses)


# ---------------------------------------------------------------------------------------------
# Reasoning continuity through a tool loop, on a response built with the SDK's own model


def reasoning_response() -> dict[str, Any]:
    responses = require_module("openai.types.responses")
    response = responses.Response.model_validate(
        {
            "id": "resp_1",
            "object": "response",
            "created_at": 1_770_000_000,
            "model": "gpt-5-2025-08-07",
            "status": "completed",
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "output": [
                {
                    "type": "reasoning",
                    "id": "rs_0a1b",
                    "summary": [{"type": "summary_text", "text": "Look it up first."}],
                    "encrypted_content": "gAAAAABo-encrypted==",
                },
                {
                    "type": "web_search_call",
                    "id": "ws_0a1c",
                    "status": "completed",
                    "action": {"type": "search", "query": "weather paris"},
                },
                {
                    "type": "reasoning",
                    "id": "rs_0a1d",
                    "summary": [],
                    "encrypted_content": "gAAAAABo-second==",
                },
                {
                    "type": "function_call",
                    "id": "fc_0a1e",
                    "call_id": "call_w",
                    "name": "weather",
                    "arguments": '{"city":"Paris"}',
                    "status": "completed",
                },
            ],
            "usage": {
                "input_tokens": 10,
                "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                "output_tokens": 20,
                "output_tokens_details": {"reasoning_tokens": 12},
                "total_tokens": 30,
            },
        }
    )
    dumped: dict[str, Any] = response.model_dump(mode="json", exclude_none=True)
    return dumped


def tool_loop() -> list[Message]:
    return [
        tl.user_message("Weather in Paris?"),
        openai_responses.decode_response(reasoning_response()),
        tl.tool_message(tl.tool_result_part("call_w", "sunny")),
    ]


def test_reasoning_items_go_back_before_the_items_they_produced() -> None:
    payload = openai_responses.encode(tool_loop(), model="gpt-5-2025-08-07")
    judge_openai_responses(payload)
    assert [item["type"] for item in payload["input"]] == [
        "message",
        "reasoning",
        "web_search_call",
        "reasoning",
        "function_call",
        "function_call_output",
    ]
    first, search, second, call = payload["input"][1:5]
    assert first == {
        "type": "reasoning",
        "id": "rs_0a1b",
        "summary": [{"type": "summary_text", "text": "Look it up first."}],
        "encrypted_content": "gAAAAABo-encrypted==",
    }
    assert search == {
        "type": "web_search_call",
        "id": "ws_0a1c",
        "status": "completed",
        "action": {"type": "search", "query": "weather paris"},
    }
    assert second["id"] == "rs_0a1d"
    assert call["id"] == "fc_0a1e"
    stored = tool_loop()[1].parts
    read_back = openai_responses.decode(payload)[1].parts
    assert read_back == tuple(
        dataclasses.replace(part, model=None) if isinstance(part, tl.ReasoningPart) else part
        for part in stored
    )  # only the reasoning's model is not on the wire


def test_for_another_model_reasoning_is_dropped_with_the_ids_tied_to_it() -> None:
    payload = openai_responses.encode(tool_loop(), model="gpt-4.1")
    judge_openai_responses(payload)
    assert [item["type"] for item in payload["input"]] == [
        "message",
        "web_search_call",
        "function_call",
        "function_call_output",
    ]
    call = payload["input"][2]
    assert "id" not in call  # fc_0a1e needs rs_0a1d, which is not sent
    assert call["call_id"] == "call_w"


HOSTED_ITEMS = [
    {
        "type": "web_search_call",
        "id": "ws_1",
        "status": "completed",
        "action": {
            "type": "search",
            "query": "paris",
            "sources": [{"type": "url", "url": "https://w.test"}],
        },
    },
    {
        "type": "file_search_call",
        "id": "fs_1",
        "status": "completed",
        "queries": ["refund policy"],
        "results": [
            {"file_id": "file-1", "filename": "policy.pdf", "score": 0.9, "text": "30 days"}
        ],
    },
    {
        "type": "code_interpreter_call",
        "id": "ci_1",
        "status": "completed",
        "code": "print(1 + 1)",
        "container_id": "cntr_1",
        "outputs": None,
    },
    {
        "type": "image_generation_call",
        "id": "ig_1",
        "status": "generating",
        "result": None,
    },
    {
        "type": "mcp_call",
        "id": "mcp_1",
        "name": "lookup",
        "arguments": "{}",
        "server_label": "docs",
        "output": "found",
    },
    {
        "type": "mcp_list_tools",
        "id": "mcpl_1",
        "server_label": "docs",
        "tools": [{"name": "lookup", "input_schema": {"type": "object"}}],
    },
    {
        "type": "mcp_approval_request",
        "id": "mcpr_1",
        "name": "lookup",
        "arguments": "{}",
        "server_label": "docs",
    },
]


@pytest.mark.parametrize("item", HOSTED_ITEMS, ids=lambda item: item["type"])
def test_hosted_tool_items_go_back_as_the_request_types_take_them(item: dict[str, Any]) -> None:
    responses = require_module("openai.types.responses")
    sdk_response = responses.Response.model_validate(
        {
            "id": "resp_h",
            "object": "response",
            "created_at": 0,
            "model": "gpt-5",
            "status": "completed",
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "output": [item],
        }
    )
    message = openai_responses.decode_response(sdk_response)  # every optional field as null
    (part,) = message.parts
    assert isinstance(part, tl.ProviderToolCallPart)
    assert part.metadata["openai.type"] == item["type"]
    payload = openai_responses.encode([tl.user_message("go"), message])
    judge_openai_responses(payload)
    sent = payload["input"][1]
    required_nulls = dict.fromkeys(openai_responses.HOSTED_TOOLS[item["type"]])
    assert sent == required_nulls | {key: value for key, value in item.items() if value is not None}


def test_the_judge_rejects_an_fc_item_whose_reasoning_item_is_missing_its_successor() -> None:
    payload = openai_responses.encode(tool_loop())
    broken = copy.deepcopy(payload)
    del broken["input"][4]["id"]  # the function_call the second reasoning item produced
    with pytest.raises(WireError, match="required following item"):
        judge_openai_responses(broken)


# ---------------------------------------------------------------------------------------------
# The judge rejects what the API rejects

PNG = (  # a 1x1 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)

VALID: dict[str, Any] = {
    "instructions": "Be brief.",
    "input": [
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": "What is in this image?"},
                {
                    "type": "input_image",
                    "image_url": f"data:image/png;base64,{PNG}",
                    "detail": "auto",
                },
            ],
        },
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA"},
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "classify",
            "arguments": '{"top": 1}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "a cat"},
        {
            "type": "message",
            "role": "assistant",
            "id": "msg_1",
            "status": "completed",
            "content": [{"type": "output_text", "text": "A cat.", "annotations": []}],
        },
    ],
}


def test_the_valid_payload_passes() -> None:
    judge_openai_responses(VALID)


@pytest.mark.parametrize(
    ("why", "path", "value", "says"),
    [
        ("arguments as an object", ("input", 2, "arguments"), {"top": 1}, "arguments"),
        ("arguments that are not JSON", ("input", 2, "arguments"), "{top: 1", "JSON object"),
        ("a call_id over 64 characters", ("input", 2, "call_id"), "c" * 65, "64"),
        ("an output for another call", ("input", 3, "call_id"), "call_2", "'call_2'"),
        ("an unknown key", ("input", 3, "is_error"), True, "is_error"),
        (
            "an image without detail in a message",
            ("input", 0, "content", 1, "detail"),
            ...,
            "detail",
        ),
        ("a reasoning item without its summary", ("input", 1, "summary"), ..., "summary"),
        ("a reasoning id that is not OpenAI's", ("input", 1, "id"), "thinking_1", "rs_"),
        ("a reasoning item with nothing after it", ("input", 2, "id"), ..., "following item"),
        ("an output message without status", ("input", 4, "status"), ..., "status"),
        (
            "input_text in an assistant message (the types accept it, the API does not)",
            ("input", 4),
            {"role": "assistant", "content": [{"type": "input_text", "text": "A cat."}]},
            "output_text",
        ),
        ("an unanswered call", ("input", 3), ..., "no output"),
        ("an unknown item type", ("input", 3, "type"), "tool_result", "input.3"),
    ],
)
def test_the_judge_rejects(why: str, path: tuple[Any, ...], value: Any, says: str) -> None:
    with pytest.raises(WireError, match="OpenAI Responses") as caught:
        judge_openai_responses(changed(VALID, path, value))
    assert says in str(caught.value), why


def test_the_judge_rejects_an_output_before_its_call() -> None:
    payload = copy.deepcopy(VALID)
    payload["input"][2], payload["input"][3] = payload["input"][3], payload["input"][2]
    with pytest.raises(WireError, match="earlier in input"):
        judge_openai_responses(payload)
