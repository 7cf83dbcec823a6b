"""Recorded-shape streams, one per format, as the SSE ``data`` of each event (Bedrock: as
boto3 yields them): what the provider sends for a reply with reasoning, text and tool calls.
Shared by the streaming tests."""

from __future__ import annotations

from typing import Any

from tests.dialect_cases import DIALECTS
from tests.dialect_cases import recording

ANTHROPIC: list[dict[str, Any]] = [
    {
        "type": "message_start",
        "message": {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": "claude-sonnet-4-5-20250929",
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": 472,
                "output_tokens": 2,
                "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0,
            },
        },
    },
    {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "thinking", "thinking": "", "signature": ""},
    },
    {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "thinking_delta", "thinking": "The user wants "},
    },
    {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "thinking_delta", "thinking": "the weather."},
    },
    {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},
    },
    {"type": "content_block_stop", "index": 0},
    {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
    {"type": "ping"},
    {
        "type": "content_block_delta",
        "index": 1,
        "delta": {"type": "text_delta", "text": "Let me check"},
    },
    {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "."}},
    {"type": "content_block_stop", "index": 1},
    {
        "type": "content_block_start",
        "index": 2,
        "content_block": {
            "type": "tool_use",
            "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
            "name": "get_weather",
            "input": {},
        },
    },
    {
        "type": "content_block_delta",
        "index": 2,
        "delta": {"type": "input_json_delta", "partial_json": ""},
    },
    {
        "type": "content_block_delta",
        "index": 2,
        "delta": {"type": "input_json_delta", "partial_json": '{"location": "San Fra'},
    },
    {
        "type": "content_block_delta",
        "index": 2,
        "delta": {"type": "input_json_delta", "partial_json": 'ncisco, CA"}'},
    },
    {"type": "content_block_stop", "index": 2},
    {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        "usage": {"output_tokens": 89},
    },
    {"type": "message_stop"},
]


def chat_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-B9",
        "object": "chat.completion.chunk",
        "created": 1741570283,
        "model": "gpt-4o-2024-08-06",
        "system_fingerprint": "fp_eb9dce56a8",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


OPENAI_CHAT: list[dict[str, Any]] = [
    chat_chunk({"role": "assistant", "content": None, "refusal": None}),
    chat_chunk({"content": "Checking"}),
    chat_chunk({"content": " both."}),
    chat_chunk(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": ""},
                }
            ]
        }
    ),
    chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city": '}}]}),
    chat_chunk(
        {
            "tool_calls": [
                {
                    "index": 1,
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": "get_time", "arguments": '{"tz"'},
                }
            ]
        }
    ),
    chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]}),
    chat_chunk({"tool_calls": [{"index": 1, "function": {"arguments": ': "CET"}'}}]}),
    chat_chunk({}, "tool_calls"),
    {
        **chat_chunk({}),
        "choices": [],
        "usage": {
            "prompt_tokens": 82,
            "completion_tokens": 40,
            "total_tokens": 122,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        },
    },
]


def mistral_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "cmpl-e5cc70bb",
        "object": "chat.completion.chunk",
        "created": 1702256327,
        "model": "mistral-large-latest",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


MISTRAL: list[dict[str, Any]] = [
    mistral_chunk({"role": "assistant", "content": ""}),
    mistral_chunk({"content": "Let me "}),
    mistral_chunk({"content": "look."}),
    mistral_chunk(
        {
            "tool_calls": [
                {
                    "id": "D681PevKs",
                    "index": 0,
                    "function": {
                        "name": "retrieve_payment_status",
                        "arguments": '{"transaction_id": "T1001"}',
                    },
                }
            ]
        }
    ),
    {
        **mistral_chunk({"content": ""}, "tool_calls"),
        "usage": {"prompt_tokens": 90, "completion_tokens": 25, "total_tokens": 115},
    },
]

# As boto3's ``converse_stream(...)["stream"]`` yields them (there is no typed event object).
BEDROCK: list[dict[str, Any]] = [
    {"messageStart": {"role": "assistant"}},
    {
        "contentBlockDelta": {
            "delta": {"reasoningContent": {"text": "Weather: use "}},
            "contentBlockIndex": 0,
        }
    },
    {
        "contentBlockDelta": {
            "delta": {"reasoningContent": {"text": "the tool."}},
            "contentBlockIndex": 0,
        }
    },
    {
        "contentBlockDelta": {
            "delta": {"reasoningContent": {"signature": "ErcBCkgIBRAB"}},
            "contentBlockIndex": 0,
        }
    },
    {"contentBlockStop": {"contentBlockIndex": 0}},
    {"contentBlockDelta": {"delta": {"text": "Checking"}, "contentBlockIndex": 1}},
    {"contentBlockDelta": {"delta": {"text": " now."}, "contentBlockIndex": 1}},
    {"contentBlockStop": {"contentBlockIndex": 1}},
    {
        "contentBlockStart": {
            "start": {
                "toolUse": {"toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "name": "top_song"}
            },
            "contentBlockIndex": 2,
        }
    },
    {"contentBlockDelta": {"delta": {"toolUse": {"input": '{"sign": '}}, "contentBlockIndex": 2}},
    {"contentBlockDelta": {"delta": {"toolUse": {"input": '"WZPZ"}'}}, "contentBlockIndex": 2}},
    {"contentBlockStop": {"contentBlockIndex": 2}},
    {"messageStop": {"stopReason": "tool_use"}},
    {
        "metadata": {
            "usage": {"inputTokens": 375, "outputTokens": 71, "totalTokens": 446},
            "metrics": {"latencyMs": 1664},
        }
    },
]


def _gemini_chunk(parts: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}],
        "usageMetadata": {"promptTokenCount": 31, "totalTokenCount": 31},
        "modelVersion": "gemini-2.5-flash",
        "responseId": "mC9taNvXBLGCxN8P5p3d2Qo",
        **extra,
    }


GEMINI: list[dict[str, Any]] = [
    _gemini_chunk([{"text": "**Checking the weather**\n\nI need", "thought": True}]),
    _gemini_chunk([{"text": " the tool.", "thought": True}]),
    _gemini_chunk([{"text": "Let me look", "thoughtSignature": "CiQB0e2Kb3zq"}]),
    _gemini_chunk(
        [
            {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
            {"functionCall": {"name": "get_time", "args": {"tz": "CET"}}},
        ]
    ),
    {
        **_gemini_chunk([{"text": "", "thoughtSignature": "EqwDCqkDAdHtim9w"}]),
        "usageMetadata": {
            "promptTokenCount": 31,
            "candidatesTokenCount": 40,
            "totalTokenCount": 120,
            "thoughtsTokenCount": 49,
        },
    },
]
GEMINI[-1]["candidates"][0]["finishReason"] = "STOP"

RESPONSE_TOP: dict[str, Any] = {
    "id": "resp_67ccd2bed1ec8190b14f964abc054267",
    "object": "response",
    "created_at": 1741476542,
    "model": "gpt-5-2025-08-07",
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
}
_REASONING = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": "**Plan**\n\nCall the tool."}],
    "encrypted_content": "gAAAAABo-enc",
}
_MESSAGE = {
    "type": "message",
    "id": "msg_1",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "One moment.", "annotations": []}],
}
_CALL = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_9kP",
    "name": "get_weather",
    "arguments": '{"city":"Paris"}',
    "status": "completed",
}
_RESPONSE_DONE = {
    **RESPONSE_TOP,
    "status": "completed",
    "output": [_REASONING, _MESSAGE, _CALL],
    "usage": {
        "input_tokens": 36,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": 87,
        "output_tokens_details": {"reasoning_tokens": 64},
        "total_tokens": 123,
    },
}
OPENAI_RESPONSES: list[dict[str, Any]] = [
    {
        "type": "response.created",
        "response": {**RESPONSE_TOP, "status": "in_progress", "output": []},
    },
    {
        "type": "response.output_item.added",
        "output_index": 0,
        "item": {**_REASONING, "summary": []},
    },
    {
        "type": "response.reasoning_summary_part.added",
        "item_id": "rs_1",
        "output_index": 0,
        "summary_index": 0,
        "part": {"type": "summary_text", "text": ""},
    },
    {
        "type": "response.reasoning_summary_text.delta",
        "item_id": "rs_1",
        "output_index": 0,
        "summary_index": 0,
        "delta": "**Plan**\n\n",
    },
    {
        "type": "response.reasoning_summary_text.delta",
        "item_id": "rs_1",
        "output_index": 0,
        "summary_index": 0,
        "delta": "Call the tool.",
    },
    {
        "type": "response.reasoning_summary_text.done",
        "item_id": "rs_1",
        "output_index": 0,
        "summary_index": 0,
        "text": "**Plan**\n\nCall the tool.",
    },
    {
        "type": "response.reasoning_summary_part.done",
        "item_id": "rs_1",
        "output_index": 0,
        "summary_index": 0,
        "part": _REASONING["summary"][0],
    },
    {"type": "response.output_item.done", "output_index": 0, "item": _REASONING},
    {
        "type": "response.output_item.added",
        "output_index": 1,
        "item": {**_MESSAGE, "status": "in_progress", "content": []},
    },
    {
        "type": "response.content_part.added",
        "item_id": "msg_1",
        "output_index": 1,
        "content_index": 0,
        "part": {"type": "output_text", "text": "", "annotations": []},
    },
    {
        "type": "response.output_text.delta",
        "logprobs": [],
        "item_id": "msg_1",
        "output_index": 1,
        "content_index": 0,
        "delta": "One ",
    },
    {
        "type": "response.output_text.delta",
        "logprobs": [],
        "item_id": "msg_1",
        "output_index": 1,
        "content_index": 0,
        "delta": "moment.",
    },
    {
        "type": "response.output_text.done",
        "logprobs": [],
        "item_id": "msg_1",
        "output_index": 1,
        "content_index": 0,
        "text": "One moment.",
    },
    {
        "type": "response.content_part.done",
        "item_id": "msg_1",
        "output_index": 1,
        "content_index": 0,
        "part": _MESSAGE["content"][0],
    },
    {"type": "response.output_item.done", "output_index": 1, "item": _MESSAGE},
    {
        "type": "response.output_item.added",
        "output_index": 2,
        "item": {**_CALL, "arguments": "", "status": "in_progress"},
    },
    {
        "type": "response.function_call_arguments.delta",
        "item_id": "fc_1",
        "output_index": 2,
        "delta": '{"city":',
    },
    {
        "type": "response.function_call_arguments.delta",
        "item_id": "fc_1",
        "output_index": 2,
        "delta": '"Paris"}',
    },
    {
        "type": "response.function_call_arguments.done",
        "item_id": "fc_1",
        "output_index": 2,
        "arguments": '{"city":"Paris"}',
    },
    {"type": "response.output_item.done", "output_index": 2, "item": _CALL},
    {"type": "response.completed", "response": _RESPONSE_DONE},
]
for _number, _event in enumerate(OPENAI_RESPONSES):
    _event["sequence_number"] = _number

# Cohere's v2 streaming docs (a tool call with its plan), and a thinking reply's shape.
COHERE: list[dict[str, Any]] = [
    {
        "type": "message-start",
        "id": "f3c5c5a8-5b16-4c0b-9b33-8a1c1f6f5f3e",
        "delta": {
            "message": {
                "role": "assistant",
                "content": [],
                "tool_plan": "",
                "tool_calls": [],
                "citations": [],
            }
        },
    },
    {
        "type": "content-start",
        "index": 0,
        "delta": {"message": {"content": {"type": "thinking", "thinking": ""}}},
    },
    {
        "type": "content-delta",
        "index": 0,
        "delta": {"message": {"content": {"thinking": "The user wants "}}},
    },
    {
        "type": "content-delta",
        "index": 0,
        "delta": {"message": {"content": {"thinking": "the weather."}}},
    },
    {"type": "content-end", "index": 0},
    {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "I will look up "}}},
    {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "the weather in Toronto."}}},
    {
        "type": "tool-call-start",
        "index": 0,
        "delta": {
            "message": {
                "tool_calls": {
                    "id": "get_weather_1byjy32y4hvq",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": ""},
                }
            }
        },
    },
    {
        "type": "tool-call-delta",
        "index": 0,
        "delta": {"message": {"tool_calls": {"function": {"arguments": '{"location":'}}}},
    },
    {
        "type": "tool-call-delta",
        "index": 0,
        "delta": {"message": {"tool_calls": {"function": {"arguments": ' "Toronto"}'}}}},
    },
    {"type": "tool-call-end", "index": 0},
    {
        "type": "message-end",
        "delta": {
            "finish_reason": "TOOL_CALL",
            "usage": {
                "billed_units": {"input_tokens": 37, "output_tokens": 28},
                "tokens": {"input_tokens": 913, "output_tokens": 83},
            },
        },
    },
]


def ollama_line(**message: Any) -> dict[str, Any]:
    return {
        "model": "qwen3:8b",
        "created_at": "2025-10-17T23:14:07.414671Z",
        "message": {"role": "assistant", "content": "", **message},
        "done": False,
    }


# ``/api/chat`` with ``think: true`` and tools, one NDJSON line each (docs.ollama.com/api/chat,
# "Chat request (streaming)" and "Chat request (with tools)").
OLLAMA: list[dict[str, Any]] = [
    ollama_line(thinking="The user wants "),
    ollama_line(thinking="the weather."),
    ollama_line(content="Let me "),
    ollama_line(content="check."),
    ollama_line(tool_calls=[{"function": {"name": "get_weather", "arguments": {"city": "Tokyo"}}}]),
    {
        **ollama_line(),
        "done": True,
        "done_reason": "stop",
        "total_duration": 4883583458,
        "load_duration": 1334875,
        "prompt_eval_count": 26,
        "prompt_eval_duration": 342546000,
        "eval_count": 282,
        "eval_duration": 4535599000,
    },
]

RECORDED = {
    "cohere": COHERE,
    "anthropic": ANTHROPIC,
    "bedrock": BEDROCK,
    "gemini": GEMINI,
    "mistral": MISTRAL,
    "openai_chat": OPENAI_CHAT,
    "openai_responses": OPENAI_RESPONSES,
    "ollama": OLLAMA,
    **{name: recording(name, OPENAI_CHAT) for name in DIALECTS},
}
