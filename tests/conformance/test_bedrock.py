"""Bedrock Converse output, judged by botocore's own service model and client."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings

import threadline as tl
from tests.conformance._histories import agent_histories
from tests.conformance._histories import encode_options
from tests.conformance._histories import role_parts
from tests.conformance._payloads import changed as edit
from tests.conformance.capture_mistral_bedrock import capture_bedrock
from tests.conformance.judges import WireError
from tests.conformance.judges_mistral_bedrock import converse_response_problems
from tests.conformance.judges_mistral_bedrock import judge_bedrock
from tests.support import require_module
from threadline import Message
from threadline.codecs import bedrock
from threadline.integrity import prepare_messages
from threadline.testing import check_codec

pytestmark = pytest.mark.requires_sdk


@pytest.fixture(autouse=True)
def _sdk() -> None:
    require_module("botocore")


@given(agent_histories(), encode_options)
def test_every_payload_passes_the_service_model_and_the_api_rules(
    history: list[Message], kw: dict[str, Any]
) -> None:
    judge_bedrock(bedrock.encode(history, **kw))


@given(agent_histories(), encode_options)
def test_decode_reads_back_the_prepared_history_up_to_the_declared_losses(
    history: list[Message], kw: dict[str, Any]
) -> None:
    decoded = bedrock.decode(bedrock.encode(history, **kw))
    expected = bedrock.normalize_for_round_trip(prepare_messages(history), **kw)
    assert role_parts(decoded) == role_parts(expected)


def as_json(value: Any) -> Any:
    """boto3 parameters as botocore writes them on the wire: bytes become base64 text."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {key: as_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [as_json(item) for item in value]
    return value


@settings(max_examples=15)
@given(agent_histories(max_turns=3))
def test_the_real_client_sends_exactly_our_payload(history: list[Message]) -> None:
    payload = bedrock.encode(history)
    sent = capture_bedrock({"modelId": "anthropic.claude-test-v1:0", **payload})
    assert sent["url"].endswith("/model/anthropic.claude-test-v1%3A0/converse")
    assert sent["json"] == as_json(payload)


def test_the_wire_json_decodes_like_the_boto3_payload() -> None:
    history = [
        tl.user_message("What is this?", tl.file_part(b"\x89PNG\r\n", "image/png")),
        tl.assistant_message(
            tl.reasoning_part(
                encrypted=base64.b64encode(b"\x00opaque").decode(),
                redacted=True,
                provider="bedrock",
            ),
            "A PNG.",
        ),
    ]
    payload = bedrock.encode(history)
    sent = capture_bedrock({"modelId": "m", **payload})
    assert role_parts(bedrock.decode(sent["json"])) == role_parts(bedrock.decode(payload))


REASONING_REPLY: dict[str, Any] = {
    "output": {
        "message": {
            "role": "assistant",
            "content": [
                {
                    "reasoningContent": {
                        "reasoningText": {
                            "text": "The user wants the weather in Paris.",
                            "signature": "ErUBCkYIBxgCIkB0",
                        }
                    }
                },
                {
                    "reasoningContent": {
                        "redactedContent": base64.b64encode(b"\x01\x02secret").decode()
                    }
                },
                {"text": "Let me check."},
                {
                    "toolUse": {
                        "toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q",
                        "name": "get_weather",
                        "input": {"city": "Paris", "units": "metric"},
                    }
                },
            ],
        }
    },
    "stopReason": "tool_use",
    "usage": {  # inputTokens leaves the cache reads and writes out; totalTokens counts them
        "inputTokens": 512,
        "outputTokens": 87,
        "totalTokens": 855,
        "cacheReadInputTokens": 256,
        "cacheWriteInputTokens": 0,
    },
    "metrics": {"latencyMs": 1830},
}


def test_decode_response_reads_what_boto3_returns_and_it_goes_back_out() -> None:
    sent = capture_bedrock(
        {"modelId": "m", "messages": [{"role": "user", "content": [{"text": "Weather?"}]}]},
        reply=REASONING_REPLY,
    )
    response = sent["response"]
    assert converse_response_problems(response) == []
    assert (
        response["output"]["message"]["content"][1]["reasoningContent"]["redactedContent"]
        == b"\x01\x02secret"
    )
    message = bedrock.decode_response(response)
    assert message.parts == (
        tl.reasoning_part(
            "The user wants the weather in Paris.", signature="ErUBCkYIBxgCIkB0", provider="bedrock"
        ),
        tl.reasoning_part(
            encrypted=base64.b64encode(b"\x01\x02secret").decode(),
            redacted=True,
            provider="bedrock",
        ),
        tl.text_part("Let me check."),
        tl.tool_call_part(
            "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "get_weather", {"city": "Paris", "units": "metric"}
        ),
    )
    assert message.metadata == {
        "provider": "bedrock",
        "response_id": "req-capture",
        "stop_reason": "tool_use",
        "usage": {
            "input_tokens": 768,
            "output_tokens": 87,
            "cache_read_tokens": 256,
            "cache_write_tokens": 0,
            "reasoning_tokens": 0,
        },
        "bedrock.usage": REASONING_REPLY["usage"],
    }
    history = [
        tl.user_message("Weather?"),
        message,
        tl.tool_message(tl.tool_result_part("tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "18°C, cloudy")),
    ]
    payload = bedrock.encode(history)
    judge_bedrock(payload)
    assert payload["messages"][1] == response["output"]["message"]


def test_check_codec_passes_with_the_service_model_judge() -> None:
    check_codec(bedrock, validate=judge_bedrock)


# ---------------------------------------------------------------------------------------------
# The judge rejects what Bedrock rejects


VALID: dict[str, Any] = {
    "system": [{"text": "Be brief."}],
    "messages": [
        {
            "role": "user",
            "content": [
                {"text": "Summarise this."},
                {
                    "document": {
                        "format": "pdf",
                        "name": "Q3 report (final)",
                        "source": {"bytes": b"%PDF-1.4"},
                    }
                },
            ],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "reasoningContent": {
                        "reasoningText": {"text": "Use the tool.", "signature": "sig"}
                    }
                },
                {"toolUse": {"toolUseId": "tooluse_1", "name": "summarise", "input": {"pages": 3}}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "tooluse_1",
                        "content": [{"text": "Revenue up."}],
                        "status": "error",
                    }
                },
                {"text": "Thanks"},
            ],
        },
    ],
}


def changed(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """:data:`VALID` with the value at ``path`` replaced (``...`` deletes it)."""
    return edit(VALID, path, value)


def test_the_valid_payload_passes() -> None:
    judge_bedrock(VALID)


USER = ("messages", 0, "content")
RESULT = ("messages", 2, "content", 0, "toolResult")


@pytest.mark.parametrize(
    ("why", "payload", "says"),
    [
        (
            "an unknown key",
            changed((*RESULT, "isError"), True),
            'Unknown parameter in messages[2].content[0].toolResult: "isError"',
        ),
        ("two keys in one block", changed((*USER, 0, "image"), {}), "Can only set one of"),
        (
            "a role outside the enum",
            changed(("messages", 2, "role"), "tool"),
            "'tool' is not one of",
        ),
        (
            "a status outside the enum",
            changed((*RESULT, "status"), "failed"),
            "'failed' is not one of",
        ),
        ("an id with a pipe", changed((*RESULT, "toolUseId"), "tooluse|1"), "does not match"),
        (
            "an id of 65 characters",
            changed((*RESULT, "toolUseId"), "t" * 65),
            "more than the maximum 64",
        ),
        (
            "an image format outside the enum",
            changed((*USER, 1), {"image": {"format": "bmp", "source": {"bytes": b"BM"}}}),
            "'bmp'",
        ),
        (
            "base64 text where bytes go",
            changed((*USER, 1, "document", "source", "bytes"), "JVBERi0xLjQ="),
            "must be bytes",
        ),
        (
            "empty bytes",
            changed((*USER, 1, "document", "source", "bytes"), b""),
            "fewer than the minimum 1",
        ),
        (
            "a document name of 201 characters",
            changed((*USER, 1, "document", "name"), "a" * 201),
            "more than the maximum 200",
        ),
        (
            "a document name with a dot",
            changed((*USER, 1, "document", "name"), "report.pdf"),
            "characters the service refuses",
        ),
        (
            "a document name with two spaces",
            changed((*USER, 1, "document", "name"), "Q3  report"),
            "characters the service refuses",
        ),
        ("a blank text block", changed(("messages", 2, "content", 1, "text"), "  "), "blank"),
        ("a blank system text", changed(("system", 0, "text"), ""), "system"),
        ("a blank text in a tool result", changed((*RESULT, "content", 0, "text"), ""), "blank"),
        (
            "two user turns in a row",
            {"messages": [VALID["messages"][0], {"role": "user", "content": [{"text": "Hello?"}]}]},
            "alternate between user and assistant",
        ),
        (
            "a conversation that starts with an assistant turn",
            {"messages": VALID["messages"][1:]},
            "must start with a user message",
        ),
        (
            "an unanswered toolUse",
            changed(("messages", 2, "content"), [{"text": "Thanks"}]),
            "no toolResult in the next turn",
        ),
        (
            "a toolResult for another call",
            changed((*RESULT, "toolUseId"), "tooluse_2"),
            "answers no toolUse",
        ),
        (
            "text before the toolResult in its turn",
            changed(
                ("messages", 2, "content"), [{"text": "Thanks"}, VALID["messages"][2]["content"][0]]
            ),
            "must come first",
        ),
        (
            "reasoning in a user turn",
            changed((*USER, 0), {"reasoningContent": {"reasoningText": {"text": "hmm"}}}),
            "only valid in assistant turns",
        ),
    ],
)
def test_the_judge_rejects(why: str, payload: dict[str, Any], says: str) -> None:
    with pytest.raises(WireError, match="Bedrock Converse") as caught:
        judge_bedrock(payload)
    assert says in str(caught.value), why


def test_the_judge_rejects_a_result_before_its_call() -> None:
    user, call, result = copy.deepcopy(VALID["messages"])
    user["content"].insert(0, result["content"][0])
    payload = {"messages": [user, call, {"role": "user", "content": [{"text": "Thanks"}]}]}
    with pytest.raises(WireError) as caught:
        judge_bedrock(payload)
    message = str(caught.value)
    assert "answers no toolUse of the turn before" in message
    assert "no toolResult in the next turn" in message


def test_a_hand_built_response_is_checked_against_the_service_model() -> None:
    assert converse_response_problems(REASONING_REPLY | {"stopReason": "done"}) != []
    assert (
        converse_response_problems({k: v for k, v in REASONING_REPLY.items() if k != "usage"}) != []
    )
