"""Responses decoded whole (issue 22, item 3): what the next request needs and what a caller
reads survives ``decode_response``, and the next request built from it passes the SDK judges."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import threadline
from tests.conformance import _strict_types
from tests.conformance.judges import judge_openai_chat
from tests.conformance.judges import type_problems
from tests.conformance.judges_mistral_bedrock import judge_bedrock
from tests.conformance.judges_responses_gemini import judge_gemini
from tests.conformance.judges_responses_gemini import judge_openai_responses
from threadline import CodecError
from threadline import Message
from threadline.codecs import anthropic
from threadline.codecs import bedrock
from threadline.codecs import gemini
from threadline.codecs import mistral
from threadline.codecs import openai_chat
from threadline.codecs import openai_responses
from threadline.messages import ProviderToolCallPart
from threadline.messages import ProviderToolResultPart
from threadline.messages import ReasoningPart
from threadline.messages import TextPart

USER = Message(role="user", parts=(TextPart(text="Is a golden retriever a good family dog?"),))
NEXT = Message(role="user", parts=(TextPart(text="Why do you say they are loyal?"),))


def _chat_response(*messages: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-123",
        "object": "chat.completion",
        "created": 1729018505,
        "model": "gpt-4o-audio-preview-2024-10-01",
        "choices": [
            {"index": i, "finish_reason": "stop", "logprobs": None, "message": m}
            for i, m in enumerate(messages)
        ],
        "usage": {"prompt_tokens": 17, "completion_tokens": 30, "total_tokens": 47},
    }


# ---------------------------------------------------------------------------------------------
# OpenAI Chat: assistant audio


AUDIO_MESSAGE: dict[str, Any] = {
    "role": "assistant",
    "content": None,
    "refusal": None,
    "annotations": [],
    "audio": {
        "id": "audio_6710a5c6a2548190b4b1e5f2a4e0c8d3",
        "data": "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=",
        "expires_at": 1729022105,
        "transcript": "Yes, golden retrievers are known to be great family dogs.",
    },
}


def test_openai_chat_audio_reply_keeps_its_transcript_and_id() -> None:
    message = openai_chat.decode_response(_chat_response(AUDIO_MESSAGE))
    (part,) = message.parts
    assert isinstance(part, TextPart)
    assert part.text == "Yes, golden retrievers are known to be great family dogs."
    assert part.metadata["openai.audio"] == {
        "id": "audio_6710a5c6a2548190b4b1e5f2a4e0c8d3",
        "expires_at": 1729022105,
    }


def test_openai_chat_audio_reply_goes_back_by_its_id() -> None:
    reply = openai_chat.decode_response(_chat_response(AUDIO_MESSAGE))
    payload = openai_chat.encode([USER, reply, NEXT])
    assert payload["messages"][1] == {
        "role": "assistant",
        "audio": {"id": "audio_6710a5c6a2548190b4b1e5f2a4e0c8d3"},
    }
    judge_openai_chat(payload)
    (back,) = [m for m in openai_chat.decode(payload) if m.role == "assistant"]
    assert back.parts[0].metadata["openai.audio"] == {
        "id": "audio_6710a5c6a2548190b4b1e5f2a4e0c8d3"
    }


def test_openai_chat_audio_round_trip_matches_the_declared_losses() -> None:
    reply = openai_chat.decode_response(_chat_response(AUDIO_MESSAGE))
    history = [USER, reply, NEXT]
    decoded = openai_chat.decode(openai_chat.encode(history))
    expected = openai_chat.normalize_for_round_trip(history)
    assert [(m.role, m.parts) for m in decoded] == [(m.role, m.parts) for m in expected]


def test_openai_chat_audio_reply_after_text_reads_back_first_and_once() -> None:
    """The audio id goes in a field of its own: after other text it still reads back first,
    and a second transcript with an id goes as plain text (the format takes one audio)."""
    reply = openai_chat.decode_response(_chat_response(AUDIO_MESSAGE))
    (transcript,) = [p for p in reply.parts if isinstance(p, TextPart)]
    assistant = reply.model_copy(
        update={"parts": (TextPart(text="Before."), transcript, transcript)}
    )
    history = [USER, assistant, NEXT]
    decoded = openai_chat.decode(openai_chat.encode(history))
    expected = openai_chat.normalize_for_round_trip(history)
    assert [(m.role, m.parts) for m in decoded] == [(m.role, m.parts) for m in expected]
    (back,) = [m for m in expected if m.role == "assistant"]
    assert [p.text for p in back.parts if isinstance(p, TextPart)] == [
        "",
        "Before.",
        transcript.text,
    ]
    assert "openai.audio" in back.parts[0].metadata


# ---------------------------------------------------------------------------------------------
# several choices / candidates


TWO_CHOICES = _chat_response(
    {"role": "assistant", "content": "first"}, {"role": "assistant", "content": "second"}
)


@pytest.mark.parametrize("codec", [openai_chat, mistral])
def test_choice_picks_another_choice(codec: Any) -> None:
    response = copy.deepcopy(TWO_CHOICES)
    response["choices"][1]["finish_reason"] = "length"
    assert codec.decode_response(response).parts == (TextPart(text="first"),)
    second = codec.decode_response(response, choice=1)
    assert second.parts == (TextPart(text="second"),)
    assert second.metadata["stop_reason"] == "length"


@pytest.mark.parametrize("codec", [openai_chat, mistral])
def test_choice_out_of_range_is_a_clear_error(codec: Any) -> None:
    with pytest.raises(CodecError, match=r"choices: the response holds 2 choices: choice=2"):
        codec.decode_response(TWO_CHOICES, choice=2)
    with pytest.raises(ValueError, match="choice must be 0 or more"):
        codec.decode_response(TWO_CHOICES, choice=-1)
    with pytest.raises(TypeError, match="choice must be an int"):
        codec.decode_response(TWO_CHOICES, choice="1")


def test_choice_through_the_dispatcher() -> None:
    second = threadline.decode_response(TWO_CHOICES, provider="openai_chat", choice=1)
    assert second.parts == (TextPart(text="second"),)


GEMINI_TWO: dict[str, Any] = {
    "candidates": [
        {"content": {"role": "model", "parts": [{"text": "one"}]}, "finishReason": "STOP"},
        {"content": {"role": "model", "parts": [{"text": "two"}]}, "finishReason": "MAX_TOKENS"},
    ],
    "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 4, "totalTokenCount": 9},
    "modelVersion": "gemini-2.5-flash",
    "responseId": "abc",
}


def test_gemini_choice_picks_a_candidate() -> None:
    second = gemini.decode_response(GEMINI_TWO, choice=1)
    assert second.parts == (TextPart(text="two"),)
    assert second.metadata["stop_reason"] == "MAX_TOKENS"
    with pytest.raises(CodecError, match="holds 2 candidates: choice=5 is out of range"):
        gemini.decode_response(GEMINI_TWO, choice=5)


@pytest.mark.parametrize("codec", [anthropic, bedrock, openai_responses])
def test_single_message_formats_take_only_choice_zero(codec: Any) -> None:
    with pytest.raises(ValueError, match="holds one message; only choice=0"):
        codec.decode_response({}, choice=1)


# ---------------------------------------------------------------------------------------------
# Gemini: grounding, citations, usage without output tokens


GROUNDED: dict[str, Any] = {
    "candidates": [
        {
            "content": {"role": "model", "parts": [{"text": "Spain won Euro 2024."}]},
            "finishReason": "STOP",
            "groundingMetadata": {
                "webSearchQueries": ["who won euro 2024"],
                "searchEntryPoint": {"renderedContent": "<div>...</div>"},
                "groundingChunks": [{"web": {"uri": "https://example.com/a", "title": "uefa.com"}}],
                "groundingSupports": [
                    {
                        "segment": {
                            "startIndex": 0,
                            "endIndex": 20,
                            "text": "Spain won Euro 2024.",
                        },
                        "groundingChunkIndices": [0],
                        "confidenceScores": [0.97],
                    }
                ],
            },
            "citationMetadata": {
                "citationSources": [
                    {"startIndex": 0, "endIndex": 20, "uri": "https://example.com/a"}
                ]
            },
        }
    ],
    "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 6, "totalTokenCount": 18},
    "modelVersion": "gemini-2.5-flash",
    "responseId": "resp-1",
}


def test_gemini_keeps_grounding_and_citation_metadata() -> None:
    message = gemini.decode_response(GROUNDED)
    grounding = message.metadata["gemini.grounding_metadata"]
    assert grounding["webSearchQueries"] == ["who won euro 2024"]
    assert grounding["groundingSupports"][0]["groundingChunkIndices"] == [0]
    assert (
        message.metadata["gemini.citation_metadata"]
        == GROUNDED["candidates"][0]["citationMetadata"]
    )
    payload = gemini.encode([USER, message, NEXT])
    judge_gemini(payload)


def test_gemini_usage_without_output_tokens_counts_zero() -> None:
    response = {
        "candidates": [{"content": {"role": "model"}, "finishReason": "MAX_TOKENS"}],
        "usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 9},
        "modelVersion": "gemini-2.5-flash",
    }
    usage = gemini.decode_response(response).metadata["usage"]
    assert usage["input_tokens"] == 9
    assert usage["output_tokens"] == 0


# ---------------------------------------------------------------------------------------------
# Anthropic: MCP connector blocks and stop_sequence


MCP_RESPONSE: dict[str, Any] = {
    "id": "msg_01Mcp",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5-20250929",
    "content": [
        {"type": "text", "text": "Let me ask the server."},
        {
            "type": "mcp_tool_use",
            "id": "mcptoolu_014Q35RayjACSWkSj4X2yov1",
            "name": "echo",
            "server_name": "example-mcp",
            "input": {"message": "hi"},
        },
        {
            "type": "mcp_tool_result",
            "tool_use_id": "mcptoolu_014Q35RayjACSWkSj4X2yov1",
            "is_error": True,
            "content": [{"type": "text", "text": "server unavailable", "citations": None}],
        },
        {"type": "text", "text": "The server failed.\n###", "citations": None},
    ],
    "stop_reason": "stop_sequence",
    "stop_sequence": "###",
    "usage": {"input_tokens": 20, "output_tokens": 30},
}


def test_anthropic_reads_mcp_blocks_and_stop_sequence() -> None:
    message = anthropic.decode_response(MCP_RESPONSE)
    call, result = message.parts[1], message.parts[2]
    assert isinstance(call, ProviderToolCallPart)
    assert (call.name, call.input, call.provider) == ("echo", {"message": "hi"}, "anthropic")
    assert call.metadata["anthropic.block"] == {"server_name": "example-mcp"}
    assert isinstance(result, ProviderToolResultPart)
    assert result.is_error is True
    assert message.metadata["stop_reason"] == "stop_sequence"
    assert message.metadata["stop_sequence"] == "###"


def test_anthropic_sends_mcp_blocks_back_as_they_came() -> None:
    reply = anthropic.decode_response(MCP_RESPONSE)
    payload = anthropic.encode([USER, reply, NEXT])
    blocks = payload["messages"][1]["content"]
    assert blocks[1] == {
        "type": "mcp_tool_use",
        "id": "mcptoolu_014Q35RayjACSWkSj4X2yov1",
        "name": "echo",
        "input": {"message": "hi"},
        "server_name": "example-mcp",
    }
    assert blocks[2] == {
        "type": "mcp_tool_result",
        "tool_use_id": "mcptoolu_014Q35RayjACSWkSj4X2yov1",
        "content": [{"type": "text", "text": "server unavailable"}],
        "is_error": True,
    }
    # The MCP connector is a beta: the beta request types take these blocks.
    from anthropic.types.beta.message_create_params import MessageCreateParamsNonStreaming

    body = {"model": "claude-sonnet-4-5", "max_tokens": 1024, **payload}
    assert type_problems(_strict_types.strict_adapter(MessageCreateParamsNonStreaming), body) == []
    decoded = anthropic.decode(payload)
    expected = anthropic.normalize_for_round_trip([USER, reply, NEXT])
    assert [m.parts for m in decoded] == [m.parts for m in expected]


def test_anthropic_unknown_block_is_a_clear_error() -> None:
    response = copy.deepcopy(MCP_RESPONSE)
    response["content"].append({"type": "hologram", "frames": 3})
    with pytest.raises(
        CodecError, match=r"content\[4\]\.type: an assistant turn cannot hold a 'hologram' block"
    ):
        anthropic.decode_response(response)


def test_anthropic_later_tool_blocks_are_kept_and_replayed() -> None:
    response = copy.deepcopy(MCP_RESPONSE)
    response["content"] = [
        {"type": "memory_tool_use", "id": "mtu_1", "name": "recall", "input": {}, "scope": "x"},
        {"type": "memory_tool_result", "tool_use_id": "mtu_1", "content": {"type": "ok"}},
    ]
    reply = anthropic.decode_response(response)
    blocks = anthropic.encode([USER, reply, NEXT])["messages"][1]["content"]
    assert [b["type"] for b in blocks] == ["memory_tool_use", "memory_tool_result"]
    assert blocks[0]["scope"] == "x"


# ---------------------------------------------------------------------------------------------
# Bedrock: citationsContent


CITED: dict[str, Any] = {
    "ResponseMetadata": {"RequestId": "req-1", "HTTPStatusCode": 200},
    "output": {
        "message": {
            "role": "assistant",
            "content": [
                {
                    "citationsContent": {
                        "content": [{"text": "The warranty lasts two years."}],
                        "citations": [
                            {
                                "title": "warranty",
                                "sourceContent": [{"text": "Warranty: 24 months."}],
                                "location": {
                                    "documentChar": {"documentIndex": 0, "start": 0, "end": 20}
                                },
                            }
                        ],
                    }
                },
                {"text": "Anything else?"},
            ],
        }
    },
    "stopReason": "end_turn",
    "usage": {"inputTokens": 50, "outputTokens": 12, "totalTokens": 62},
    "metrics": {"latencyMs": 800},
}


def test_bedrock_reads_citations_content() -> None:
    message = bedrock.decode_response(CITED)
    first = message.parts[0]
    assert isinstance(first, TextPart)
    assert first.text == "The warranty lasts two years."
    assert first.metadata["bedrock.citations"][0]["title"] == "warranty"
    assert message.parts[1] == TextPart(text="Anything else?")


def test_bedrock_sends_citations_back() -> None:
    reply = bedrock.decode_response(CITED)
    history = [USER, reply, NEXT]
    payload = bedrock.encode(history)
    block = payload["messages"][1]["content"][0]
    assert block == CITED["output"]["message"]["content"][0]
    judge_bedrock(payload)
    decoded = bedrock.decode(payload)
    expected = bedrock.normalize_for_round_trip(history)
    assert [m.parts for m in decoded] == [m.parts for m in expected]


def test_bedrock_unknown_block_is_a_clear_error() -> None:
    response = copy.deepcopy(CITED)
    response["output"]["message"]["content"].append({"hologram": {"frames": 3}})
    with pytest.raises(
        CodecError,
        match=r"content\[2\]\.hologram: an assistant turn cannot hold a 'hologram' block",
    ):
        bedrock.decode_response(response)


# ---------------------------------------------------------------------------------------------
# Responses: reasoning_text entries


REASONING: dict[str, Any] = {
    "id": "resp_1",
    "object": "response",
    "created_at": 1741476542,
    "status": "completed",
    "model": "gpt-oss-120b",
    "output": [
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [],
            "content": [
                {"type": "reasoning_text", "text": "First, the user asks about dogs."},
                {"type": "reasoning_text", "text": "Then I recall breed traits."},
            ],
        },
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Yes.", "annotations": []}],
        },
    ],
    "usage": {"input_tokens": 10, "output_tokens": 20, "total_tokens": 30},
}


def test_responses_reasoning_text_entries_stay_apart() -> None:
    reply = openai_responses.decode_response(REASONING)
    reasoning = reply.parts[0]
    assert isinstance(reasoning, ReasoningPart)
    assert reasoning.text == "First, the user asks about dogs.Then I recall breed traits."
    history = [USER, reply, NEXT]
    payload = openai_responses.encode(history)
    (item,) = [i for i in payload["input"] if i.get("type") == "reasoning"]
    assert item["content"] == REASONING["output"][0]["content"]
    judge_openai_responses(payload)
    decoded = openai_responses.decode(payload)
    expected = openai_responses.normalize_for_round_trip(history)
    assert [m.parts for m in decoded] == [m.parts for m in expected]
