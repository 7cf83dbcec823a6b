"""Gemini output, judged by ``google-genai``'s own models, converter and client.

Also: the judge rejects what the API rejects, and thought signatures survive a tool loop (and
are dropped when the history goes to another model or provider).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import assume
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import threadline as tl
from tests.conformance._histories import agent_histories
from tests.conformance._histories import encode_options
from tests.conformance._histories import role_parts
from tests.conformance._payloads import changed
from tests.conformance._provider_state import gemini_histories
from tests.conformance.capture_more import canonical_gemini
from tests.conformance.capture_more import capture_gemini
from tests.conformance.judges import WireError
from tests.conformance.judges import judge_anthropic
from tests.conformance.judges_responses_gemini import judge_gemini
from tests.conformance.judges_responses_gemini import judge_openai_responses
from tests.support import require_module
from threadline import Message
from threadline.codecs import anthropic
from threadline.codecs import gemini
from threadline.codecs import openai_responses
from threadline.integrity import prepare_messages
from threadline.testing import check_codec

pytestmark = pytest.mark.requires_sdk

histories = st.one_of(agent_histories(), gemini_histories())


@pytest.fixture(autouse=True)
def _sdk() -> None:
    require_module("google.genai")


@given(histories, encode_options)
def test_every_payload_passes_the_sdk_models_and_the_api_rules(
    history: list[Message], kw: dict[str, Any]
) -> None:
    judge_gemini(gemini.encode(history, **kw))


@given(histories, encode_options)
def test_decode_reads_back_the_prepared_history_up_to_the_declared_losses(
    history: list[Message], kw: dict[str, Any]
) -> None:
    decoded = gemini.decode(gemini.encode(history, **kw))
    expected = gemini.normalize_for_round_trip(prepare_messages(history), **kw)
    assert role_parts(decoded) == role_parts(expected)


@settings(max_examples=15)
@given(histories)
def test_the_real_client_sends_our_payload(history: list[Message]) -> None:
    body = gemini.encode(history, system="Be brief.")
    assume(body["contents"])  # the client refuses a request without contents, as the API does
    sent = capture_gemini(body)
    assert sent["url"].endswith("/models/gemini-capture:generateContent")
    # The SDK rebuilds the body from its models: same content, its own spelling.
    assert canonical_gemini(sent["json"]) == canonical_gemini(body)


def test_check_codec_passes_with_the_sdk_judge() -> None:
    check_codec(gemini, validate=judge_gemini)


# ---------------------------------------------------------------------------------------------
# Thought signatures through a tool loop, on a response built with the SDK's own model

SIGNATURE = "CiQBcsjafDm5nrm0+mJBuxf9Pg0rWbFSqMb0jYFQPQqlC2DD9yM="


def signed_response() -> dict[str, Any]:
    types = require_module("google.genai.types")
    response = types.GenerateContentResponse.model_validate(
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [
                            {"text": "Checking the forecast.", "thought": True},
                            {
                                "functionCall": {
                                    "id": "fc_a1",
                                    "name": "weather",
                                    "args": {"city": "Paris"},
                                },
                                "thoughtSignature": SIGNATURE,
                            },
                            {"functionCall": {"id": "fc_a2", "name": "time", "args": {}}},
                        ],
                    },
                    "finishReason": "STOP",
                }
            ],
            "modelVersion": "gemini-3-pro-preview",
            "responseId": "resp-gem-1",
            "usageMetadata": {
                "promptTokenCount": 12,
                "candidatesTokenCount": 8,
                "thoughtsTokenCount": 30,
                "totalTokenCount": 50,
            },
        }
    )
    dumped: dict[str, Any] = response.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


def tool_loop() -> list[Message]:
    return [
        tl.user_message("Weather and time in Paris?"),
        gemini.decode_response(signed_response()),
        tl.tool_message(
            tl.tool_result_part("fc_a1", "sunny"), tl.tool_result_part("fc_a2", "12:00")
        ),
    ]


def test_a_thought_signature_goes_back_on_the_part_it_came_on() -> None:
    payload = gemini.encode(tool_loop(), model="gemini-3-pro-preview")
    judge_gemini(payload)
    model_turn = payload["contents"][1]
    assert model_turn == {
        "role": "model",
        "parts": [
            {"text": "Checking the forecast.", "thought": True},
            {
                "functionCall": {"id": "fc_a1", "name": "weather", "args": {"city": "Paris"}},
                "thoughtSignature": canonical_signature(),
            },
            {"functionCall": {"id": "fc_a2", "name": "time", "args": {}}},
        ],
    }
    assert [part["functionResponse"]["id"] for part in payload["contents"][2]["parts"]] == [
        "fc_a1",
        "fc_a2",
    ]


def canonical_signature() -> str:
    """The signature as the SDK dumped it (URL-safe base64): threadline keeps it verbatim."""
    signature: str = signed_response()["candidates"][0]["content"]["parts"][1]["thoughtSignature"]
    return signature


def test_for_another_model_the_signature_is_dropped_and_the_turn_marked_unsigned() -> None:
    payload = gemini.encode(tool_loop(), model="gemini-2.5-flash")
    judge_gemini(payload)
    parts = payload["contents"][1]["parts"]
    assert parts[0] == {
        "functionCall": {"id": "fc_a1", "name": "weather", "args": {"city": "Paris"}},
        "thoughtSignature": gemini.SKIP_SIGNATURE,
    }
    assert "thoughtSignature" not in parts[1]
    assert all("thought" not in part for part in parts)


def test_other_providers_never_see_gemini_signatures() -> None:
    require_module("openai")
    require_module("anthropic")
    for payload, judge in (
        (openai_responses.encode(tool_loop()), judge_openai_responses),
        (anthropic.encode(tool_loop()), judge_anthropic),
    ):
        judge(payload)
        assert "CiQB" not in str(payload)  # neither the signature nor the thought's state


# ---------------------------------------------------------------------------------------------
# The judge rejects what the API rejects

PNG = (  # a 1x1 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)

VALID: dict[str, Any] = {
    "systemInstruction": {"parts": [{"text": "Be brief."}]},
    "contents": [
        {
            "role": "user",
            "parts": [
                {"text": "What is in this image?"},
                {"inlineData": {"mimeType": "image/png", "data": PNG}},
            ],
        },
        {
            "role": "model",
            "parts": [
                {"text": "Look closely.", "thought": True, "thoughtSignature": "c2lnbmF0dXJl"},
                {
                    "functionCall": {"id": "c1", "name": "classify", "args": {"top": 1}},
                    "thoughtSignature": "c2lnbmF0dXJl",
                },
                {"functionCall": {"id": "c2", "name": "describe", "args": {}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": "c1",
                        "name": "classify",
                        "response": {"output": "cat"},
                    }
                },
                {"functionResponse": {"id": "c2", "name": "describe", "response": {"error": "x"}}},
                {"text": "Thanks."},
            ],
        },
        {"role": "model", "parts": [{"text": "A cat."}]},
    ],
}


def test_the_valid_payload_passes() -> None:
    judge_gemini(VALID)


@pytest.mark.parametrize(
    ("why", "path", "value", "says"),
    [
        ("the assistant role", ("contents", 3, "role"), "assistant", "must be 'user' or 'model'"),
        (
            "two data fields in one part",
            ("contents", 0, "parts", 0, "inlineData"),
            {"mimeType": "image/png", "data": PNG},
            "exactly one data field",
        ),
        ("an unknown key (the SDK forbids extras)", ("contents", 0, "parts", 0, "data"), 1, "data"),
        (
            "bytes that are not base64",
            ("contents", 0, "parts", 1, "inlineData", "data"),
            "!!",
            "base64",
        ),
        (
            "args as a JSON string",
            ("contents", 1, "parts", 1, "functionCall", "args"),
            "{}",
            "args",
        ),
        ("an empty text", ("contents", 3, "parts", 0, "text"), "", "empty text"),
        ("no parts", ("contents", 3, "parts"), [], "at least one part"),
        (
            "a Vertex-only field the Gemini API converter refuses",
            ("contents", 1, "parts", 2, "functionCall", "will_continue"),
            True,
            "converter",
        ),
        (
            "a response without its name",
            ("contents", 2, "parts", 0, "functionResponse", "name"),
            ...,
            "name",
        ),
        (
            "one response for two calls",
            ("contents", 2, "parts", 1),
            {"text": "hm"},
            "number of function",
        ),
        (
            "a response for another call",
            ("contents", 2, "parts", 0, "functionResponse", "id"),
            "c9",
            "'c9'",
        ),
        (
            "an unsigned call turn (Gemini 3)",
            ("contents", 1, "parts", 1, "thoughtSignature"),
            ...,
            "missing a thought_signature",
        ),
        ("a model turn first", ("contents", 0, "role"), "model", "start with a user turn"),
        ("a function call in a user turn", ("contents", 1, "role"), "user", "model turn"),
        (
            "a system instruction with a file",
            ("systemInstruction", "parts", 0),
            {"inlineData": {"mimeType": "image/png", "data": PNG}},
            "text parts only",
        ),
        ("an unknown top-level key", ("generation_config",), {}, "generation_config"),
    ],
)
def test_the_judge_rejects(why: str, path: tuple[Any, ...], value: Any, says: str) -> None:
    with pytest.raises(WireError, match="Gemini") as caught:
        judge_gemini(changed(VALID, path, value))
    assert says in str(caught.value), why


def test_the_judge_rejects_a_user_turn_between_calls_and_responses() -> None:
    payload = copy.deepcopy(VALID)
    payload["contents"].insert(2, {"role": "user", "parts": [{"text": "wait"}]})
    with pytest.raises(WireError, match="function response turn comes immediately"):
        judge_gemini(payload)


def test_the_judge_rejects_text_before_the_responses() -> None:
    payload = copy.deepcopy(VALID)
    payload["contents"][2]["parts"].insert(1, {"text": "first"})
    with pytest.raises(WireError, match="sits between"):
        judge_gemini(payload)
