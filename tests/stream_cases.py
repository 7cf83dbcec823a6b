"""Responses and valid event sequences for them, per stream format (shared by the streaming
tests): ``draw_<format>(draw) -> (response, events)``."""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import pairwise
from typing import Any

from hypothesis import strategies as st

from tests.dialect_cases import DIALECTS

TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=30)
NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
ARGS = st.dictionaries(NAMES, st.one_of(st.integers(), TEXT, st.booleans()), max_size=3)


def pieces(draw: st.DrawFn, text: str) -> list[str]:
    """``text`` cut at random points (each piece non-empty)."""
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=4))))
    cuts = [c for c in cuts if 0 < c < len(text)]
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in pairwise(bounds) if b > a]


def interleave(draw: st.DrawFn, queues: list[list[Any]]) -> list[Any]:
    """The items of ``queues`` merged in a random order that keeps each queue's order and
    starts the queues in order (a provider opens parallel call ``i`` before ``i + 1``)."""
    pending = [list(q) for q in queues if q]
    live: list[list[Any]] = []
    out: list[Any] = []
    while pending or live:
        at = draw(st.integers(0, len(live) - (0 if pending else 1)))
        if at == len(live):
            live.append(pending.pop(0))
        out.append(live[at].pop(0))
        if not live[at]:
            live.pop(at)
    return out


@st.composite
def anthropic_streams(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    blocks: list[dict[str, Any]] = []
    for at in range(draw(st.integers(0, 4))):
        kind = draw(
            st.sampled_from(
                ["text", "thinking", "tool_use", "redacted_thinking", "server_tool_use"]
            )
        )
        if kind == "text":
            blocks.append({"type": "text", "text": draw(TEXT)})
        elif kind == "redacted_thinking":
            blocks.append({"type": "redacted_thinking", "data": draw(TEXT)})
        elif kind == "server_tool_use":
            blocks.append(
                {
                    "type": "server_tool_use",
                    "id": f"srvtoolu_{at}",
                    "name": "web_search",
                    "input": {"query": draw(TEXT)},
                }
            )
        elif kind == "thinking":
            blocks.append({"type": "thinking", "thinking": draw(TEXT), "signature": draw(TEXT)})
        else:
            blocks.append(
                {"type": "tool_use", "id": f"toolu_{at}", "name": draw(NAMES), "input": draw(ARGS)}
            )
    usage = {"input_tokens": draw(st.integers(0, 999)), "output_tokens": draw(st.integers(0, 999))}
    stop = draw(st.sampled_from(["end_turn", "tool_use", "max_tokens"]))
    response = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                **response,
                "content": [],
                "stop_reason": None,
                "usage": {"input_tokens": usage["input_tokens"], "output_tokens": 1},
            },
        }
    ]
    for at, block in enumerate(blocks):
        start: dict[str, Any]
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in pieces(draw, block["text"])]
        elif block["type"] == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": p} for p in pieces(draw, block["thinking"])
            ]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        elif block["type"] == "redacted_thinking":
            start, deltas = block, []  # arrives whole
        else:
            start = {**block, "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": p}
                for p in pieces(draw, json.dumps(block["input"]))
            ]
        events.append({"type": "content_block_start", "index": at, "content_block": start})
        events.extend({"type": "content_block_delta", "index": at, "delta": d} for d in deltas)
        if draw(st.booleans()):
            events.append({"type": "ping"})
        events.append({"type": "content_block_stop", "index": at})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]},
        }
    )
    events.append({"type": "message_stop"})
    return response, events


def _chat_streams(provider: str) -> st.SearchStrategy[tuple[dict[str, Any], list[dict[str, Any]]]]:
    @st.composite
    def build(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        content = draw(st.one_of(st.none(), TEXT))
        calls: list[dict[str, Any]] = [
            {
                "id": f"call_{at}",
                "type": "function",
                "function": {"name": draw(NAMES), "arguments": json.dumps(draw(ARGS))},
            }
            for at in range(draw(st.integers(0, 3)))
        ]
        if content is None and not calls:
            content = draw(TEXT)
        usage = {
            "prompt_tokens": draw(st.integers(0, 999)),
            "completion_tokens": draw(st.integers(0, 999)),
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        finish = "tool_calls" if calls else "stop"
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = calls
        top: dict[str, Any] = {"id": "chatcmpl-1", "created": 1700000000, "model": "gpt-4o-mini"}
        if provider == "mistral":
            top["model"] = "mistral-large-latest"
        response = {
            **top,
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }
        chunk = {**top, "object": "chat.completion.chunk"}

        def delta(d: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**chunk, "choices": [{"index": 0, "delta": d, "finish_reason": finish}]}

        events = [delta({"role": "assistant", "content": None if content is None else ""})]
        events += [delta({"content": p}) for p in pieces(draw, content or "")]
        queues = []
        for at, call in enumerate(calls):
            parts = pieces(draw, call["function"]["arguments"])
            first = {
                "index": at,
                "id": call["id"],
                "type": "function",
                "function": {"name": call["function"]["name"], "arguments": parts[0]},
            }
            rest = [{"index": at, "function": {"arguments": p}} for p in parts[1:]]
            queues.append([first, *rest])
        events += [delta({"tool_calls": [c]}) for c in interleave(draw, queues)]
        if provider == "mistral":
            events.append({**delta({"content": ""}, finish), "usage": usage})
        else:
            events.append(delta({}, finish))
            events.append({**chunk, "choices": [], "usage": usage})
        return response, events

    return build()


openai_chat_streams = _chat_streams("openai_chat")
mistral_streams = _chat_streams("mistral")


@st.composite
def bedrock_streams(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    blocks: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = [{"messageStart": {"role": "assistant"}}]
    for at in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["text", "reasoning", "toolUse"]))
        deltas: list[dict[str, Any]]
        if kind == "text":
            text = draw(TEXT)
            blocks.append({"text": text})
            deltas = [{"text": p} for p in pieces(draw, text)]
        elif kind == "reasoning":
            text, signature = draw(TEXT), draw(TEXT)
            blocks.append(
                {"reasoningContent": {"reasoningText": {"text": text, "signature": signature}}}
            )
            deltas = [{"reasoningContent": {"text": p}} for p in pieces(draw, text)]
            deltas.append({"reasoningContent": {"signature": signature}})
        else:
            use = {"toolUseId": f"tooluse_{at}", "name": draw(NAMES), "input": draw(ARGS)}
            blocks.append({"toolUse": use})
            start = {"toolUseId": use["toolUseId"], "name": use["name"]}
            events.append(
                {"contentBlockStart": {"start": {"toolUse": start}, "contentBlockIndex": at}}
            )
            deltas = [{"toolUse": {"input": p}} for p in pieces(draw, json.dumps(use["input"]))]
        events.extend({"contentBlockDelta": {"delta": d, "contentBlockIndex": at}} for d in deltas)
        events.append({"contentBlockStop": {"contentBlockIndex": at}})
    stop = draw(st.sampled_from(["end_turn", "tool_use", "max_tokens"]))
    usage = {"inputTokens": draw(st.integers(0, 999)), "outputTokens": draw(st.integers(0, 999))}
    usage["totalTokens"] = usage["inputTokens"] + usage["outputTokens"]
    metrics = {"latencyMs": draw(st.integers(1, 9999))}
    events.append({"messageStop": {"stopReason": stop}})
    events.append({"metadata": {"usage": usage, "metrics": metrics}})
    response = {
        "output": {"message": {"role": "assistant", "content": blocks}},
        "stopReason": stop,
        "usage": usage,
        "metrics": metrics,
    }
    return response, events


@st.composite
def gemini_streams(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    parts: list[dict[str, Any]] = []
    pieces_: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 4))):
        signature = draw(st.one_of(st.none(), TEXT))
        if draw(st.booleans()):
            thought = draw(st.booleans())
            last = parts[-1] if parts else None
            if (
                last is not None
                and "text" in last
                and bool(last.get("thought")) == thought
                and "thoughtSignature" not in last
            ):
                # a stream cannot tell two such parts from one: the earlier one is closed
                last["thoughtSignature"] = "sig"
                pieces_[-1]["thoughtSignature"] = "sig"
            part: dict[str, Any] = {"text": draw(TEXT)}
            flag = {"thought": True} if thought else {}
            part.update(flag)
            cut = [{"text": p, **flag} for p in pieces(draw, part["text"])]
            if signature is not None:
                part["thoughtSignature"] = signature
                if draw(st.booleans()):
                    cut.append({"text": "", **flag, "thoughtSignature": signature})
                else:
                    cut[-1]["thoughtSignature"] = signature
        else:
            part = {"functionCall": {"name": draw(NAMES), "args": draw(ARGS)}}
            if signature is not None:
                part["thoughtSignature"] = signature
            cut = [dict(part)]
        parts.append(part)
        pieces_.extend(cut)
    usage = {
        "promptTokenCount": draw(st.integers(1, 999)),
        "candidatesTokenCount": draw(st.integers(1, 999)),
    }
    usage["totalTokenCount"] = usage["promptTokenCount"] + usage["candidatesTokenCount"]
    top = {"modelVersion": "gemini-2.5-flash", "responseId": "resp-abc"}
    finish = draw(st.sampled_from(["STOP", "MAX_TOKENS"]))
    response = {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": finish, "index": 0}
        ],
        "usageMetadata": usage,
        **top,
    }
    events: list[dict[str, Any]] = []
    at = 0
    while at < len(pieces_) or not events:
        size = draw(st.integers(1, 3))
        group = pieces_[at : at + size]
        at += size
        events.append(
            {
                "candidates": [{"content": {"role": "model", "parts": group}, "index": 0}],
                "usageMetadata": {"promptTokenCount": usage["promptTokenCount"]},
                **top,
            }
        )
    events[-1]["candidates"][0]["finishReason"] = finish
    events[-1]["usageMetadata"] = usage
    return response, events


@st.composite
def responses_streams(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    items: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    for at in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["message", "function_call", "reasoning"]))
        sub: list[dict[str, Any]] = []
        where = {"output_index": at}
        item: dict[str, Any]
        content: list[dict[str, Any]]
        if kind == "message":
            texts = draw(st.lists(TEXT, min_size=1, max_size=2))
            content = [{"type": "output_text", "text": t, "annotations": []} for t in texts]
            item = {
                "type": "message",
                "id": f"msg_{at}",
                "role": "assistant",
                "status": "completed",
                "content": content,
            }
            start = {**item, "status": "in_progress", "content": []}
            for ci, part in enumerate(content):
                at_part = {**where, "item_id": item["id"], "content_index": ci}
                sub.append(
                    {"type": "response.content_part.added", **at_part, "part": {**part, "text": ""}}
                )
                sub += [
                    {"type": "response.output_text.delta", "logprobs": [], **at_part, "delta": p}
                    for p in pieces(draw, part["text"])
                ]
                sub.append(
                    {
                        "type": "response.output_text.done",
                        "logprobs": [],
                        **at_part,
                        "text": part["text"],
                    }
                )
                sub.append({"type": "response.content_part.done", **at_part, "part": part})
        elif kind == "function_call":
            arguments = json.dumps(draw(ARGS))
            item = {
                "type": "function_call",
                "id": f"fc_{at}",
                "call_id": f"call_{at}",
                "name": draw(NAMES),
                "arguments": arguments,
                "status": "completed",
            }
            start = {**item, "arguments": "", "status": "in_progress"}
            sub += [
                {
                    "type": "response.function_call_arguments.delta",
                    **where,
                    "item_id": item["id"],
                    "delta": p,
                }
                for p in pieces(draw, arguments)
            ]
            sub.append(
                {
                    "type": "response.function_call_arguments.done",
                    **where,
                    "item_id": item["id"],
                    "arguments": arguments,
                }
            )
        else:
            summary: list[dict[str, Any]] = [
                {"type": "summary_text", "text": t} for t in draw(st.lists(TEXT, max_size=2))
            ]
            item = {"type": "reasoning", "id": f"rs_{at}", "summary": summary}
            if draw(st.booleans()):
                item["encrypted_content"] = draw(TEXT)
            start = {**item, "summary": []}
            for si, part in enumerate(summary):
                at_part = {**where, "item_id": item["id"], "summary_index": si}
                sub.append(
                    {
                        "type": "response.reasoning_summary_part.added",
                        **at_part,
                        "part": {"type": "summary_text", "text": ""},
                    }
                )
                sub += [
                    {"type": "response.reasoning_summary_text.delta", **at_part, "delta": p}
                    for p in pieces(draw, part["text"])
                ]
                sub.append(
                    {"type": "response.reasoning_summary_part.done", **at_part, "part": part}
                )
        items.append(item)
        events.append({"type": "response.output_item.added", **where, "item": start})
        events += sub
        events.append({"type": "response.output_item.done", **where, "item": item})
    usage: dict[str, Any] = {
        "input_tokens": draw(st.integers(0, 999)),
        "output_tokens": draw(st.integers(0, 999)),
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
    top = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1741476777,
        "model": "gpt-5",
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }
    response = {**top, "status": "completed", "output": items, "usage": usage}
    created = {**top, "status": "in_progress", "output": []}
    final = dict(response)
    if draw(st.booleans()):
        final["output"] = []  # a final event without output: the items streamed are used
    events = [
        {"type": "response.created", "response": created},
        {"type": "response.in_progress", "response": created},
        *events,
        {"type": "response.completed", "response": final},
    ]
    for number, event in enumerate(events):
        event["sequence_number"] = number
    return response, events


@st.composite
def cohere_streams(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A Cohere v2 Chat response and its SSE events: an optional tool plan, then content items
    (text, thinking) or tool calls, each in its own index space."""
    message: dict[str, Any] = {"role": "assistant"}
    events: list[dict[str, Any]] = [
        {"type": "message-start", "id": "msg-1", "delta": {"message": {"role": "assistant"}}}
    ]
    calls = draw(st.lists(st.tuples(NAMES, ARGS), max_size=3))
    if calls:
        plan = draw(TEXT)
        message["tool_plan"] = plan
        events.extend(
            {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": p}}}
            for p in pieces(draw, plan)
        )
        message["tool_calls"] = []
        for at, (name, arguments) in enumerate(calls):
            text = json.dumps(arguments)
            call_id = f"{name}_{at}"
            message["tool_calls"].append(
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}
            )
            start = {"id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
            events.append(
                {
                    "type": "tool-call-start",
                    "index": at,
                    "delta": {"message": {"tool_calls": start}},
                }
            )
            events.extend(
                {
                    "type": "tool-call-delta",
                    "index": at,
                    "delta": {"message": {"tool_calls": {"function": {"arguments": p}}}},
                }
                for p in pieces(draw, text)
            )
            events.append({"type": "tool-call-end", "index": at})
        reason = "TOOL_CALL"
    else:
        content = []
        for at in range(draw(st.integers(0, 3))):
            kind = draw(st.sampled_from(["text", "thinking"]))
            text = draw(TEXT)
            content.append({"type": kind, kind: text})
            opening = {"type": kind, kind: ""}
            events.append(
                {"type": "content-start", "index": at, "delta": {"message": {"content": opening}}}
            )
            events.extend(
                {
                    "type": "content-delta",
                    "index": at,
                    "delta": {"message": {"content": {kind: p}}},
                }
                for p in pieces(draw, text)
            )
            events.append({"type": "content-end", "index": at})
        if content:
            message["content"] = content
        reason = draw(st.sampled_from(["COMPLETE", "MAX_TOKENS"]))
    usage = {
        "billed_units": {"input_tokens": draw(st.integers(0, 99)), "output_tokens": 3},
        "tokens": {"input_tokens": draw(st.integers(0, 999)), "output_tokens": 9},
    }
    events.append({"type": "message-end", "delta": {"finish_reason": reason, "usage": usage}})
    response = {"id": "msg-1", "finish_reason": reason, "message": message, "usage": usage}
    return response, events


@st.composite
def ollama_streams(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """An ``/api/chat`` reply and its NDJSON lines: thinking pieces, then content pieces,
    then the calls (each whole, one or several per line), then ``done: true`` with the
    counts (every line shares the reply's ``created_at``)."""
    thinking = draw(st.one_of(st.none(), TEXT))
    content = draw(st.one_of(st.none(), TEXT))
    calls = [
        {"function": {"name": draw(NAMES), "arguments": draw(ARGS)}}
        for _ in range(draw(st.integers(0, 3)))
    ]
    if content is None and not calls:
        content = draw(TEXT)
    top = {"model": "qwen3:8b", "created_at": "2026-03-13T16:05:00.123456Z"}
    message: dict[str, Any] = {"role": "assistant", "content": content or ""}
    if thinking is not None:
        message["thinking"] = thinking
    if calls:
        message["tool_calls"] = calls
    end = {
        "done": True,
        "done_reason": "stop",
        "total_duration": draw(st.integers(0, 10**9)),
        "prompt_eval_count": draw(st.integers(0, 999)),
        "eval_count": draw(st.integers(0, 999)),
    }
    response = {**top, "message": message, **end}

    def line(**fields: Any) -> dict[str, Any]:
        return {**top, "message": {"role": "assistant", "content": "", **fields}, "done": False}

    events = [line(thinking=p) for p in pieces(draw, thinking or "")]
    events += [line(content=p) for p in pieces(draw, content or "")]
    at = 0
    while at < len(calls):
        size = draw(st.integers(1, len(calls) - at))
        events.append(line(tool_calls=calls[at : at + size]))
        at += size
    events.append({**top, "message": {"role": "assistant", "content": ""}, **end})
    return response, events


def _chat_final(event: dict[str, Any]) -> bool:
    return any(c.get("finish_reason") is not None for c in event.get("choices") or ())


FINAL: dict[str, Callable[[dict[str, Any]], bool]] = {
    "anthropic": lambda event: event.get("type") == "message_stop",
    "openai_chat": _chat_final,
    "mistral": _chat_final,
    "bedrock": lambda event: "metadata" in event,  # always last, after messageStop
    "openai_responses": lambda event: event.get("type") == "response.completed",
    "gemini": lambda event: any("finishReason" in c for c in event.get("candidates") or ()),
    "cohere": lambda event: event.get("type") == "message-end",
    "ollama": lambda event: event.get("done") is True,
    **dict.fromkeys(DIALECTS, _chat_final),
}
"""Per format: whether an event completes the response (what follows may add usage)."""

STREAMS = {
    "anthropic": anthropic_streams(),
    "openai_chat": openai_chat_streams,
    "mistral": mistral_streams,
    "bedrock": bedrock_streams(),
    "gemini": gemini_streams(),
    "openai_responses": responses_streams(),
    "cohere": cohere_streams(),
    "ollama": ollama_streams(),
    **{name: _chat_streams(name) for name in DIALECTS},
}
