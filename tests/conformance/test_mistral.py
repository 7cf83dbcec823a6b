"""Mistral chat output, judged by ``mistralai``'s own types and client and by ``mistral_common``'s
request validator."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings

import threadline as tl
from tests.conformance._histories import agent_histories
from tests.conformance._histories import encode_options
from tests.conformance._histories import role_parts
from tests.conformance._payloads import changed as edit
from tests.conformance.capture_mistral_bedrock import capture_mistral
from tests.conformance.judges import WireError
from tests.conformance.judges_mistral_bedrock import judge_mistral
from tests.support import require_module
from threadline import Message
from threadline.codecs import mistral
from threadline.integrity import prepare_messages
from threadline.testing import check_codec

pytestmark = pytest.mark.requires_sdk

SDK_DEFAULTS = {"prefix": False}
"""What ``mistralai``'s models add to an assistant message we left it out of."""


@pytest.fixture(autouse=True)
def _sdk() -> None:
    require_module("mistralai")
    require_module("mistral_common")


@given(agent_histories(), encode_options)
def test_every_payload_passes_the_sdk_types_and_mistral_common(
    history: list[Message], kw: dict[str, Any]
) -> None:
    judge_mistral(mistral.encode(history, **kw), as_prefix=True)


@given(agent_histories(), encode_options)
def test_a_history_that_ends_in_a_user_message_is_a_complete_valid_request(
    history: list[Message], kw: dict[str, Any]
) -> None:
    judge_mistral(mistral.encode([*history, tl.user_message("And now?")], **kw))


@given(agent_histories(), encode_options)
def test_decode_reads_back_the_prepared_history_up_to_the_declared_losses(
    history: list[Message], kw: dict[str, Any]
) -> None:
    decoded = mistral.decode(mistral.encode(history, **kw))
    expected = mistral.normalize_for_round_trip(prepare_messages(history), **kw)
    assert role_parts(decoded) == role_parts(expected)


def sdk_view(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Our messages as the SDK serializes them: it adds ``prefix: false`` to assistant
    messages and ``index: 0`` to tool calls, nothing else."""
    out = []
    for message in json.loads(json.dumps(messages)):
        if message["role"] == "assistant":
            message = {**message, **{k: v for k, v in SDK_DEFAULTS.items() if k not in message}}
            for call in message.get("tool_calls", []):
                call.setdefault("index", 0)
        out.append(message)
    return out


@settings(max_examples=15)
@given(agent_histories(max_turns=3))
def test_the_real_client_sends_exactly_our_payload(history: list[Message]) -> None:
    payload = mistral.encode([*history, tl.user_message("And now?")])
    sent = capture_mistral({"model": "mistral-test", **payload})
    assert sent["url"].endswith("/v1/chat/completions")
    assert sent["json"]["model"] == "mistral-test"
    assert sent["json"]["messages"] == sdk_view(payload["messages"])
    assert set(sent["json"]) == {"model", "messages", "stream"}


MAGISTRAL_REPLY: dict[str, Any] = {
    "id": "0a1b2c3d4e5f",
    "object": "chat.completion",
    "model": "magistral-medium-2509",
    "created": 1_770_000_000,
    "usage": {"prompt_tokens": 412, "completion_tokens": 96, "total_tokens": 508},
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "thinking",
                        "thinking": [{"type": "text", "text": "The user wants the weather."}],
                        "signature": "c2lnbmF0dXJl",
                    },
                    {"type": "text", "text": "Let me look that up."},
                ],
                "tool_calls": [
                    {
                        "id": "D681PevKs",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                        "index": 0,
                    },
                    {
                        "id": "Q2x9vB7rT",
                        "type": "function",
                        "function": {"name": "get_time", "arguments": '{"tz": "Europe/Par'},
                        "index": 1,
                    },
                ],
            },
        }
    ],
}


def test_decode_response_reads_what_the_sdk_returns_and_it_goes_back_out() -> None:
    sent = capture_mistral(
        {"model": "magistral-medium-2509", "messages": [{"role": "user", "content": "Weather?"}]},
        reply=MAGISTRAL_REPLY,
    )
    message = mistral.decode_response(sent["response"])
    assert message.parts == (
        tl.ReasoningPart(
            text="The user wants the weather.",
            signature="c2lnbmF0dXJl",
            provider="mistral",
            model="magistral-medium-2509",
        ),
        tl.text_part("Let me look that up."),
        tl.tool_call_part("D681PevKs", "get_weather", {"city": "Paris"}),
        tl.ToolCallPart(
            id="Q2x9vB7rT", name="get_time", arguments={}, raw_arguments='{"tz": "Europe/Par'
        ),
    )
    assert message.metadata["usage"]["input_tokens"] == 412
    history = [
        tl.user_message("Weather?"),
        message,
        tl.tool_message(
            tl.tool_result_part("D681PevKs", "sunny"), tl.tool_result_part("Q2x9vB7rT", "12:00")
        ),
    ]
    payload = mistral.encode(history, model="magistral-medium-2509")
    judge_mistral(payload)
    assert payload["messages"][1] == {
        "role": "assistant",
        "content": [
            {
                "type": "thinking",
                "thinking": [{"type": "text", "text": "The user wants the weather."}],
                "signature": "c2lnbmF0dXJl",
            },
            {"type": "text", "text": "Let me look that up."},
        ],
        "tool_calls": [
            {
                "id": "D681PevKs",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
            },
            {
                "id": "Q2x9vB7rT",
                "type": "function",
                "function": {"name": "get_time", "arguments": "{}"},  # repaired
            },
        ],
    }


def test_check_codec_passes_with_the_sdk_and_mistral_common_judges() -> None:
    check_codec(mistral, validate=lambda payload: judge_mistral(payload, as_prefix=True))


# ---------------------------------------------------------------------------------------------
# The judge rejects what Mistral rejects


VALID: dict[str, Any] = {
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {
                    "id": "aB3xK9mP2",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "aB3xK9mP2", "name": "get_weather", "content": "sunny"},
    ]
}


def changed(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """:data:`VALID` with the value at ``path`` replaced (``...`` deletes it)."""
    return edit(VALID, path, value)


def with_id(call_id: str) -> dict[str, Any]:
    """VALID with another id on the call and its result alike."""
    out = changed(("messages", 2, "tool_calls", 0, "id"), call_id)
    out["messages"][3]["tool_call_id"] = call_id
    return out


def test_the_valid_payload_passes() -> None:
    judge_mistral(VALID)


@pytest.mark.parametrize(
    ("why", "payload", "says"),
    [
        ("a 10-character call id", with_id("aB3xK9mP2Z"), "length of 9"),
        ("an 8-character call id", with_id("aB3xK9mP"), "length of 9"),
        ("a call id with an underscore", with_id("call_9abc"), "length of 9"),
        (
            "a result id that answers no call",
            changed(("messages", 3, "tool_call_id"), "zzzzzzzzz"),
            "Unexpected tool call id",
        ),
        ("an unknown key", changed(("messages", 3, "is_error"), True), "is_error"),
        (
            "a chunk type the API does not have",
            changed(("messages", 1, "content", 0, "type"), "image"),
            "messages.1",
        ),
        (
            "a system message right after a tool message",
            {"messages": [*VALID["messages"], {"role": "system", "content": "late"}]},
            "Unexpected role 'system' after role 'tool'",
        ),
        (
            "a request that ends with an assistant message",
            {"messages": [*VALID["messages"], {"role": "assistant", "content": "Sunny."}]},
            "Expected last role",
        ),
        ("an unanswered call", changed(("messages", 3), ...), "Expected last role"),
        (
            "arguments that are not a JSON object",
            changed(("messages", 2, "tool_calls", 0, "function", "arguments"), "[1]"),
            "not a JSON object",
        ),
        (
            "a tool message named after another tool",
            changed(("messages", 3, "name"), "get_time"),
            "'get_time'",
        ),
        (
            "an assistant message with nothing in it",
            {
                "messages": [
                    VALID["messages"][1],
                    {"role": "assistant", "content": ""},
                    VALID["messages"][1],
                ]
            },
            "needs content or tool_calls",
        ),
    ],
)
def test_the_judge_rejects(why: str, payload: dict[str, Any], says: str) -> None:
    with pytest.raises(WireError, match="Mistral") as caught:
        judge_mistral(payload)
    assert says in str(caught.value), why


def test_the_judge_rejects_a_result_before_its_call() -> None:
    system, user, call, result = copy.deepcopy(VALID["messages"])
    payload = {"messages": [system, user, result, call, {"role": "user", "content": "?"}]}
    with pytest.raises(WireError, match="Unexpected role 'tool' after role 'user'"):
        judge_mistral(payload)


def test_the_judge_rejects_a_second_result_for_one_call() -> None:
    payload = copy.deepcopy(VALID)
    payload["messages"].append(copy.deepcopy(payload["messages"][3]))
    with pytest.raises(WireError, match="Duplicate tool call id"):
        judge_mistral(payload)
