"""Reasoning replay across model aliases (DESIGN, Codecs): an alias and a dated snapshot of it,
and a Bedrock inference profile and its base model, name the same model; two snapshots do not.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

import threadline as tl
from threadline.codecs import anthropic
from threadline.codecs import bedrock
from threadline.codecs import gemini
from threadline.codecs import openai_responses
from threadline.codecs._policies import same_model

CLAUDE = "anthropic.claude-sonnet-4-5-20250929-v1:0"


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("claude-sonnet-4-5", "claude-sonnet-4-5-20250929"),
        ("claude-3-5-sonnet-latest", "claude-3-5-sonnet-20241022"),
        ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
        ("gpt-5", "gpt-5-2025-08-07"),
        ("gpt-4o", "gpt-4o-2024-08-06"),
        ("o3", "o3-2025-04-16"),
        ("gemini-2.0-flash", "gemini-2.0-flash-001"),
        ("models/gemini-2.5-pro", "gemini-2.5-pro"),
        ("gemini-2.5-flash-latest", "gemini-2.5-flash"),
        ("mistral-medium-latest", "mistral-medium-2508"),
        (f"us.{CLAUDE}", CLAUDE),
        (f"global.{CLAUDE}", f"eu.{CLAUDE}"),
        (f"apac.{CLAUDE}", CLAUDE),
        (f"arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.{CLAUDE}", CLAUDE),
        (f"arn:aws:bedrock:us-east-1::foundation-model/{CLAUDE}", f"us.{CLAUDE}"),
        ("gpt-5", "gpt-5"),
        ("qwen3", "qwen3:latest"),  # Ollama's default tag
        ("hf.co/unsloth/Qwen3-8B-GGUF:latest", "hf.co/unsloth/Qwen3-8B-GGUF"),
    ],
)
def test_an_alias_and_its_snapshot_name_the_same_model(first: str, second: str) -> None:
    assert same_model(first, second)
    assert same_model(second, first)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5-20251101"),
        ("gpt-4o-2024-05-13", "gpt-4o-2024-08-06"),
        ("gpt-5", "gpt-5-mini"),
        ("gpt-5", "gpt-5-mini-2025-08-07"),
        ("claude-sonnet-4-5", "claude-sonnet-4"),
        ("gemini-2.5-pro", "gemini-2.5-pro-preview-06-05"),
        (CLAUDE, "anthropic.claude-opus-4-1-20250805-v1:0"),
        ("us.amazon.nova-pro-v1:0", "amazon.nova-lite-v1:0"),
        ("arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc", CLAUDE),
        ("qwen3", "qwen3:8b"),  # another Ollama tag is another model
        ("qwen3:8b", "qwen3:14b"),
    ],
)
def test_other_models_and_other_snapshots_do_not_match(first: str, second: str) -> None:
    assert not same_model(first, second)
    assert not same_model(second, first)


def thinking_loop(model: str) -> list[tl.Message]:
    return [
        tl.user_message("Weather in Paris?"),
        tl.assistant_message(
            tl.reasoning_part("Use the tool.", signature="c2ln", provider="anthropic", model=model),
            tl.tool_call_part("toolu_1", "get_weather", {"city": "Paris"}),
            metadata={"model": model},
        ),
        tl.tool_message(tl.tool_result_part("toolu_1", "18C")),
    ]


@pytest.mark.parametrize(
    ("produced", "target"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-sonnet-4-5", "claude-sonnet-4-5-20250929"),
    ],
)
def test_anthropic_thinking_is_replayed_to_an_alias_of_its_model(
    produced: str, target: str
) -> None:
    turn = anthropic.encode(thinking_loop(produced), model=target)["messages"][1]
    assert turn["content"][0] == {
        "type": "thinking",
        "thinking": "Use the tool.",
        "signature": "c2ln",
    }


def test_anthropic_thinking_is_not_replayed_to_another_snapshot() -> None:
    history = thinking_loop("claude-sonnet-4-5-20250929")
    turn = anthropic.encode(history, model="claude-sonnet-4-5-20251101")["messages"][1]
    assert turn["content"][0]["type"] == "tool_use"


def test_a_responses_reasoning_item_goes_back_to_an_alias_with_its_ids() -> None:
    reasoning = tl.reasoning_part(
        "", provider="openai", model="gpt-5-2025-08-07", item_id="rs_1", encrypted="gAAAA"
    )
    call = tl.tool_call_part("call_1", "f", {}).with_metadata({"openai.item_id": "fc_1"})
    history = [
        tl.user_message("go"),
        tl.assistant_message(reasoning, call, metadata={"model": "gpt-5-2025-08-07"}),
        tl.tool_message(tl.tool_result_part("call_1", "ok")),
    ]
    items = openai_responses.encode(history, model="gpt-5")["input"][1:]
    assert [(item.get("type"), item.get("id")) for item in items] == [
        ("reasoning", "rs_1"),
        ("function_call", "fc_1"),
        ("function_call_output", None),
    ]


def test_gemini_thought_signatures_go_back_to_a_versioned_name_of_the_model() -> None:
    signature = base64.b64encode(b"sig").decode()
    call = tl.tool_call_part("c1", "f", {}, metadata={"gemini.thought_signature": signature})
    history = [
        tl.user_message("go"),
        tl.assistant_message(call, metadata={"model": "gemini-2.0-flash-001"}),
        tl.tool_message(tl.tool_result_part("c1", "ok")),
    ]
    part = gemini.encode(history, model="models/gemini-2.0-flash")["contents"][1]["parts"][0]
    assert part.get("thoughtSignature") == signature


RESPONSE: dict[str, Any] = {
    "output": {
        "message": {
            "role": "assistant",
            "content": [
                {"reasoningContent": {"reasoningText": {"text": "Think.", "signature": "sig"}}},
                {"toolUse": {"toolUseId": "t1", "name": "f", "input": {}}},
            ],
        }
    },
    "stopReason": "tool_use",
    "usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7},
}


def test_bedrock_decode_response_tags_the_model_the_caller_names() -> None:
    message = bedrock.decode_response(RESPONSE, model=f"us.{CLAUDE}")
    assert message.metadata["model"] == f"us.{CLAUDE}"
    reasoning = message.parts[0]
    assert isinstance(reasoning, tl.ReasoningPart)
    assert reasoning.model == f"us.{CLAUDE}"
    assert tl.decode_response(RESPONSE, provider="bedrock", model=CLAUDE).metadata["model"] == (
        CLAUDE
    )


def test_bedrock_reasoning_is_replayed_to_the_base_id_of_its_inference_profile() -> None:
    history = [
        tl.user_message("go"),
        bedrock.decode_response(RESPONSE, model=f"us.{CLAUDE}"),
        tl.tool_message(tl.tool_result_part("t1", "ok")),
    ]
    for target in (CLAUDE, f"eu.{CLAUDE}", f"arn:aws:bedrock:us-west-2::foundation-model/{CLAUDE}"):
        turn = bedrock.encode(history, model=target)["messages"][1]
        assert "reasoningContent" in turn["content"][0], target
    turn = bedrock.encode(history, model="amazon.nova-pro-v1:0")["messages"][1]
    assert "reasoningContent" not in turn["content"][0]


def test_a_response_that_names_its_model_keeps_it() -> None:
    response = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [{"type": "text", "text": "Hi."}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    message = anthropic.decode_response(response, model="claude-sonnet-4-5")
    assert message.metadata["model"] == "claude-sonnet-4-5-20250929"
    no_model = {key: value for key, value in response.items() if key != "model"}
    assert anthropic.decode_response(no_model, model="claude-sonnet-4-5").metadata["model"] == (
        "claude-sonnet-4-5"
    )
