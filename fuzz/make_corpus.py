"""Regenerate the seed corpus in ``fuzz/corpus`` (checked in; run this after a format change).

``corpus/load_json``: threadline JSON, from the deterministic sample conversations of
``threadline.testing`` plus a few edge cases. ``corpus/codecs``: for each codec, what
``encode`` writes for those conversations (``<codec>.decode.<n>.json``) and provider
responses shaped like the real APIs' (``<codec>.decode_response.<n>.json``). The files are
plain JSON; ``run.py`` adds the selector byte the codec harness expects.

    python fuzz/make_corpus.py
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import threadline as tl
from threadline.codecs import codec_names
from threadline.codecs import get_codec
from threadline.testing._conversations import hostile_id_conversation
from threadline.testing._conversations import sample_conversations

CORPUS = Path(__file__).resolve().parent / "corpus"

_USAGE_OPENAI = {"prompt_tokens": 120, "completion_tokens": 35, "total_tokens": 155}
_CALLS_OPENAI = [
    {
        "id": "call_w",
        "type": "function",
        "function": {"name": "weather", "arguments": '{"city":"Paris"}'},
    },
    {"id": "call_t", "type": "function", "function": {"name": "time", "arguments": '{"tz": "Eu'}},
]

RESPONSES: dict[str, list[dict[str, Any]]] = {
    "openai_chat": [
        {
            "id": "chatcmpl-abc123",
            "object": "chat.completion",
            "created": 1_770_000_000,
            "model": "gpt-4.1-2025-04-14",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": "Checking both.",
                        "tool_calls": _CALLS_OPENAI,
                    },
                }
            ],
            "usage": _USAGE_OPENAI,
        },
        {
            "id": "chatcmpl-2",
            "object": "chat.completion",
            "created": 1_770_000_000,
            "model": "gpt-4.1",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "refusal": "I can't help with that.",
                        "annotations": [
                            {
                                "type": "url_citation",
                                "url_citation": {
                                    "start_index": 0,
                                    "end_index": 4,
                                    "url": "https://example.com",
                                    "title": "Example",
                                },
                            }
                        ],
                    },
                }
            ],
        },
    ],
    "mistral": [
        {
            "id": "cmpl-e5cc70bb28c444948073e77776eb30ef",
            "object": "chat.completion",
            "model": "magistral-medium-2509",
            "created": 1_770_000_000,
            "usage": _USAGE_OPENAI,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": [
                            {
                                "type": "thinking",
                                "thinking": [{"type": "text", "text": "Two tools."}],
                                "signature": "sg",
                            },
                            {"type": "text", "text": "Checking both."},
                        ],
                        "tool_calls": [
                            {
                                "id": "D681PevKs",
                                "function": {"name": "weather", "arguments": '{"city":"Paris"}'},
                            }
                        ],
                    },
                }
            ],
        },
        {
            "id": "cmpl-2",
            "object": "chat.completion",
            "model": "mistral-large-latest",
            "created": 1_770_000_000,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "Paris."},
                }
            ],
        },
    ],
    "anthropic": [
        {
            "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [
                {"type": "thinking", "thinking": "Need the weather.", "signature": "EqQBCgIY"},
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3"},
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": "toolu_01A", "name": "weather", "input": {"c": "P"}},
            ],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {
                "input_tokens": 2095,
                "output_tokens": 503,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 1800,
            },
        },
        {
            "id": "msg_2",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [
                {
                    "type": "server_tool_use",
                    "id": "srvtoolu_1",
                    "name": "web_search",
                    "input": {"query": "news"},
                },
                {
                    "type": "web_search_tool_result",
                    "tool_use_id": "srvtoolu_1",
                    "content": [
                        {
                            "type": "web_search_result",
                            "url": "https://example.com/news",
                            "title": "News",
                            "encrypted_content": "abc",
                        }
                    ],
                },
                {
                    "type": "text",
                    "text": "Here is the news.",
                    "citations": [
                        {
                            "type": "web_search_result_location",
                            "url": "https://example.com/news",
                            "title": "News",
                            "encrypted_index": "xyz",
                            "cited_text": "news",
                        }
                    ],
                },
            ],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        },
    ],
    "gemini": [
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [
                            {"text": "Two calls.", "thought": True, "thoughtSignature": "c2ln"},
                            {
                                "functionCall": {
                                    "id": "fc_1",
                                    "name": "weather",
                                    "args": {"city": "Paris"},
                                },
                                "thoughtSignature": "c2ln",
                            },
                            {"functionCall": {"name": "time", "args": {}}},
                        ],
                    },
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "modelVersion": "gemini-3-pro-preview",
            "responseId": "resp-123",
            "usageMetadata": {
                "promptTokenCount": 100,
                "candidatesTokenCount": 20,
                "thoughtsTokenCount": 50,
                "totalTokenCount": 170,
            },
        },
        {"promptFeedback": {"blockReason": "SAFETY"}, "modelVersion": "gemini-2.5-flash"},
    ],
    "bedrock": [
        {
            "ResponseMetadata": {"RequestId": "4c2b7a70", "HTTPStatusCode": 200},
            "output": {
                "message": {
                    "role": "assistant",
                    "content": [
                        {
                            "reasoningContent": {
                                "reasoningText": {"text": "Weather first.", "signature": "sig"}
                            }
                        },
                        {"text": "Checking."},
                        {
                            "toolUse": {
                                "toolUseId": "tooluse_1",
                                "name": "weather",
                                "input": {"city": "Paris"},
                            }
                        },
                    ],
                }
            },
            "stopReason": "tool_use",
            "usage": {"inputTokens": 120, "outputTokens": 35, "totalTokens": 155},
            "metrics": {"latencyMs": 640},
        },
        {
            "output": {
                "message": {
                    "role": "assistant",
                    "content": [{"reasoningContent": {"redactedContent": "cmVkYWN0ZWQ="}}],
                }
            },
            "stopReason": "end_turn",
        },
    ],
    "openai_responses": [
        {
            "id": "resp_abc",
            "object": "response",
            "created_at": 1_770_000_000,
            "model": "gpt-5-2025-08-07",
            "status": "completed",
            "output": [
                {
                    "type": "reasoning",
                    "id": "rs_9",
                    "summary": [{"type": "summary_text", "text": "Two tools."}],
                    "encrypted_content": "gAAAAB-enc",
                },
                {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "call_w",
                    "name": "weather",
                    "arguments": '{"city":"Paris"}',
                },
                {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "completed",
                    "content": [
                        {"type": "output_text", "text": "Checking.", "annotations": []},
                        {"type": "refusal", "refusal": "Not that."},
                    ],
                },
            ],
            "usage": {
                "input_tokens": 120,
                "input_tokens_details": {"cached_tokens": 64},
                "output_tokens": 35,
                "output_tokens_details": {"reasoning_tokens": 20},
                "total_tokens": 155,
            },
        },
        {
            "id": "resp_2",
            "object": "response",
            "model": "gpt-5",
            "status": "completed",
            "output": [
                {
                    "type": "web_search_call",
                    "id": "ws_1",
                    "status": "completed",
                    "action": {"type": "search", "query": "news"},
                }
            ],
        },
    ],
}


def _json_default(value: object) -> str:
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")  # the HTTP API's form of Bedrock bytes
    raise TypeError(f"{type(value).__name__} is not JSON")


def _write(path: Path, document: Any) -> None:
    text = json.dumps(document, default=_json_default, ensure_ascii=False, indent=None)
    path.write_text(text + "\n", encoding="utf-8")


def main() -> None:
    conversations = [*sample_conversations(13, 4), hostile_id_conversation()]
    load_json = CORPUS / "load_json"
    codecs = CORPUS / "codecs"
    for directory in (load_json, codecs):
        directory.mkdir(parents=True, exist_ok=True)
        for old in directory.glob("*.json"):
            old.unlink()
    for index, messages in enumerate(conversations):
        (load_json / f"envelope.{index}.json").write_bytes(tl.dump_json(messages))
    bare = json.loads(tl.dump_json(conversations[0]))["messages"]
    (load_json / "bare.json").write_text(json.dumps(bare, ensure_ascii=False) + "\n")
    (load_json / "empty.json").write_text('{"format":"threadline","version":1,"messages":[]}\n')
    for name in codec_names():
        codec = get_codec(name)
        for index, messages in enumerate(conversations):
            _write(codecs / f"{name}.decode.{index}.json", codec.encode(messages))
        for index, response in enumerate(RESPONSES[name]):
            codec.decode_response(response)  # a seed that does not decode fuzzes little
            _write(codecs / f"{name}.decode_response.{index}.json", response)


if __name__ == "__main__":
    main()
