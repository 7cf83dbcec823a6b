"""Small valid streams of each format, built from their pieces, for the hostile-stream tests:
a reply of text (in the pieces given) and a reply of one tool call (its arguments' JSON text in
the pieces given), each with the response ``decode_response`` reads for it."""

from __future__ import annotations

import json
from typing import Any

from tests.dialect_cases import DIALECTS
from threadline.codecs import codec_names

FORMATS = codec_names()  # every registered format

_CHUNK = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m-1"}
_USAGE = {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}


def _chat(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {**_CHUNK, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def _chat_end(provider: str, finish: str) -> list[dict[str, Any]]:
    if provider == "mistral":
        return [{**_chat({"content": ""}, finish), "usage": _USAGE}]
    return [_chat({}, finish), {**_CHUNK, "choices": [], "usage": _USAGE}]


def _anthropic_start() -> dict[str, Any]:
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x"}
    usage = {"input_tokens": 3, "output_tokens": 1}
    return {"type": "message_start", "message": {**message, "content": [], "usage": usage}}


def _anthropic_end(stop: str) -> list[dict[str, Any]]:
    return [
        {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 4}},
        {"type": "message_stop"},
    ]


def _bedrock_end(stop: str) -> list[dict[str, Any]]:
    usage = {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7}
    return [{"messageStop": {"stopReason": stop}}, {"metadata": {"usage": usage}}]


_CREATED: dict[str, Any] = {
    "type": "response.created",
    "response": {"id": "resp_1", "model": "gpt-x", "status": "in_progress", "output": []},
}


def _gemini(parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "modelVersion": "gemini-x", "responseId": "r-1"}


def _cohere_end(finish: str) -> dict[str, Any]:
    usage = {"tokens": {"input_tokens": 3, "output_tokens": 2}}
    return {"type": "message-end", "delta": {"finish_reason": finish, "usage": usage}}


def _cohere_call(at: int, arguments: str = "") -> dict[str, Any]:
    call = {
        "id": f"call_{at}",
        "type": "function",
        "function": {"name": "f", "arguments": arguments},
    }
    return {"type": "tool-call-start", "index": at, "delta": {"message": {"tool_calls": call}}}


def _ollama(done: bool = False, **message: Any) -> dict[str, Any]:
    line: dict[str, Any] = {
        "model": "m-1",
        "created_at": "2026-01-01T00:00:00Z",
        "message": {"role": "assistant", "content": "", **message},
        "done": done,
    }
    if done:
        line.update(done_reason="stop", prompt_eval_count=3, eval_count=4)
    return line


def text_stream(provider: str, pieces: list[str]) -> list[dict[str, Any]]:
    """A reply of one text part, sent in ``pieces``."""
    if provider == "anthropic":
        return [
            _anthropic_start(),
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            *(
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": p},
                }
                for p in pieces
            ),
            {"type": "content_block_stop", "index": 0},
            *_anthropic_end("end_turn"),
        ]
    if provider == "bedrock":
        return [
            {"messageStart": {"role": "assistant"}},
            *(
                {"contentBlockDelta": {"delta": {"text": p}, "contentBlockIndex": 0}}
                for p in pieces
            ),
            {"contentBlockStop": {"contentBlockIndex": 0}},
            *_bedrock_end("end_turn"),
        ]
    if provider == "gemini":
        return [*(_gemini([{"text": p}]) for p in pieces), _gemini([], "STOP")]
    if provider == "cohere":
        content = {"type": "text", "text": ""}
        return [
            {"type": "message-start", "id": "m1", "delta": {"message": {"role": "assistant"}}},
            {"type": "content-start", "index": 0, "delta": {"message": {"content": content}}},
            *(
                {
                    "type": "content-delta",
                    "index": 0,
                    "delta": {"message": {"content": {"text": p}}},
                }
                for p in pieces
            ),
            {"type": "content-end", "index": 0},
            _cohere_end("COMPLETE"),
        ]
    if provider == "ollama":
        return [*(_ollama(content=p) for p in pieces), _ollama(done=True)]
    if provider in ("openai_chat", "mistral", *DIALECTS):
        return [
            _chat({"role": "assistant", "content": ""}),
            *(_chat({"content": p}) for p in pieces),
            *_chat_end(provider, "stop"),
        ]
    assert provider == "openai_responses"
    item = {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress"}
    at = {"output_index": 0, "item_id": "msg_1", "content_index": 0}
    text = "".join(pieces)
    part = {"type": "output_text", "text": text, "annotations": []}
    done = {**item, "status": "completed", "content": [part]}
    return [
        _CREATED,
        {"type": "response.output_item.added", "output_index": 0, "item": {**item, "content": []}},
        {"type": "response.content_part.added", **at, "part": {**part, "text": ""}},
        *({"type": "response.output_text.delta", **at, "delta": p} for p in pieces),
        {"type": "response.output_text.done", **at, "text": text},
        {"type": "response.content_part.done", **at, "part": part},
        {"type": "response.output_item.done", "output_index": 0, "item": done},
        {
            "type": "response.completed",
            "response": {**_CREATED["response"], "status": "completed", "output": [done]},
        },
    ]


def call_stream(provider: str, pieces: list[str]) -> list[dict[str, Any]]:
    """A reply of one tool call ``f`` whose arguments' JSON text arrives in ``pieces`` (for
    Gemini, which sends arguments as an object, the joined text parsed: it must be JSON)."""
    text = "".join(pieces)
    if provider == "anthropic":
        call = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}
        return [
            _anthropic_start(),
            {"type": "content_block_start", "index": 0, "content_block": call},
            *(
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": p},
                }
                for p in pieces
            ),
            {"type": "content_block_stop", "index": 0},
            *_anthropic_end("tool_use"),
        ]
    if provider == "bedrock":
        use = {"toolUseId": "tooluse_1", "name": "f"}
        return [
            {"messageStart": {"role": "assistant"}},
            {"contentBlockStart": {"start": {"toolUse": use}, "contentBlockIndex": 0}},
            *(
                {"contentBlockDelta": {"delta": {"toolUse": {"input": p}}, "contentBlockIndex": 0}}
                for p in pieces
            ),
            {"contentBlockStop": {"contentBlockIndex": 0}},
            *_bedrock_end("tool_use"),
        ]
    if provider == "gemini":
        return [_gemini([{"functionCall": {"name": "f", "args": json.loads(text)}}], "STOP")]
    if provider == "cohere":
        return [
            {"type": "message-start", "id": "m1", "delta": {"message": {"role": "assistant"}}},
            {**_cohere_call(0), "index": 0},
            *(
                {
                    "type": "tool-call-delta",
                    "index": 0,
                    "delta": {"message": {"tool_calls": {"function": {"arguments": p}}}},
                }
                for p in pieces
            ),
            {"type": "tool-call-end", "index": 0},
            _cohere_end("TOOL_CALL"),
        ]
    if provider == "ollama":  # arguments come as an object, whole
        call = {"function": {"name": "f", "arguments": json.loads(text)}}
        return [_ollama(tool_calls=[call]), _ollama(done=True)]
    if provider in ("openai_chat", "mistral", *DIALECTS):
        first = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f"}}
        return [
            _chat({"role": "assistant", "content": None}),
            _chat({"tool_calls": [first]}),
            *(_chat({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in pieces),
            *_chat_end(provider, "tool_calls"),
        ]
    assert provider == "openai_responses"
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f"}
    done = {**call, "arguments": text, "status": "completed"}
    at = {"output_index": 0, "item_id": "fc_1"}
    return [
        _CREATED,
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**call, "arguments": "", "status": "in_progress"},
        },
        *({"type": "response.function_call_arguments.delta", **at, "delta": p} for p in pieces),
        {"type": "response.function_call_arguments.done", **at, "arguments": text},
        {"type": "response.output_item.done", "output_index": 0, "item": done},
        {
            "type": "response.completed",
            "response": {**_CREATED["response"], "status": "completed", "output": [done]},
        },
    ]


def call_response(provider: str, arguments: str) -> dict[str, Any]:
    """The non-streamed response of `call_stream` for the formats that send arguments as
    text (Chat, Mistral, Responses)."""
    if provider in ("openai_chat", "mistral", *DIALECTS):
        call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": "f", "arguments": arguments},
        }
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        return {
            **_CHUNK,
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
            "usage": _USAGE,
        }
    assert provider == "openai_responses"
    done = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "f",
        "arguments": arguments,
        "status": "completed",
    }
    return {**_CREATED["response"], "status": "completed", "output": [done]}


def many_parts_stream(provider: str, count: int) -> list[dict[str, Any]]:
    """A reply of ``count`` tool calls (Gemini: ``count`` function calls in one chunk)."""
    events: list[dict[str, Any]]
    if provider == "anthropic":
        events = [_anthropic_start()]
        for at in range(count):
            call = {"type": "tool_use", "id": f"toolu_{at}", "name": "f", "input": {}}
            events.append({"type": "content_block_start", "index": at, "content_block": call})
            events.append({"type": "content_block_stop", "index": at})
        return [*events, *_anthropic_end("tool_use")]
    if provider == "bedrock":
        events = [{"messageStart": {"role": "assistant"}}]
        for at in range(count):
            use = {"toolUseId": f"tooluse_{at}", "name": "f"}
            events.append(
                {"contentBlockStart": {"start": {"toolUse": use}, "contentBlockIndex": at}}
            )
            events.append({"contentBlockStop": {"contentBlockIndex": at}})
        return [*events, *_bedrock_end("tool_use")]
    if provider == "cohere":
        return [
            {"type": "message-start", "id": "m1", "delta": {"message": {"role": "assistant"}}},
            *(
                event
                for at in range(count)
                for event in (_cohere_call(at, "{}"), {"type": "tool-call-end", "index": at})
            ),
            _cohere_end("TOOL_CALL"),
        ]
    if provider == "gemini":
        calls = [{"functionCall": {"name": "f", "args": {"n": at}}} for at in range(count)]
        return [_gemini(calls, "STOP")]
    if provider == "ollama":
        calls = [{"function": {"name": "f", "arguments": {"n": at}}} for at in range(count)]
        return [_ollama(tool_calls=calls), _ollama(done=True)]
    if provider in ("openai_chat", "mistral", *DIALECTS):
        calls = [
            _chat(
                {
                    "tool_calls": [
                        {
                            "index": at,
                            "id": f"call_{at}",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                        }
                    ]
                }
            )
            for at in range(count)
        ]
        return [
            _chat({"role": "assistant", "content": None}),
            *calls,
            *_chat_end(provider, "tool_calls"),
        ]
    assert provider == "openai_responses"
    events = [_CREATED]
    for at in range(count):
        call = {
            "type": "function_call",
            "id": f"fc_{at}",
            "call_id": f"call_{at}",
            "name": "f",
            "arguments": "{}",
            "status": "completed",
        }
        events.append({"type": "response.output_item.added", "output_index": at, "item": call})
        events.append({"type": "response.output_item.done", "output_index": at, "item": call})
    events.append(
        {"type": "response.completed", "response": {**_CREATED["response"], "status": "completed"}}
    )
    return events
