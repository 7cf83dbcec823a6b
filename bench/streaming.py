"""Stream assembly: events per second for a 2,000-event stream per format, and the cost
against the SDK's own accumulator where one exists (Anthropic, OpenAI Chat).

Issue 24's targets: feeding costs at most 1.5x the SDK's accumulator on the same events, and a
few microseconds per event. Run ``python bench/streaming.py`` (the SDKs from
``bench/requirements.txt`` or the test extras); the markdown table goes to stdout.

Issue 35 (item 4): every format assembles in time linear in the stream. ``LINEAR`` holds one
stream of N events per format and shape (tiny text deltas; tool calls; argument deltas of one
call; citations, content parts, signed parts, chunks or blocks, where the format has them),
timed in CPU time at N = 1,000, 10,000 and 100,000, each (shape, N) in a fresh interpreter by
``hostile.py``'s loop, beside ``json.dumps`` of the same events: 10x the events must cost at
most 12x the time. ``python bench/streaming.py --linear [--only anthropic/text,...]`` runs them
alone; ``python bench/run.py --only streaming`` runs them as targets. Issue 41 adds Cohere
(its four shapes), the OpenAI-compatible dialects (Chat's shapes for ``deepseek`` and
``openrouter``, which share Chat's builder; a reasoning shape for every dialect; for the ones
reading ``<think>`` tags, a reply cut into one-character pieces inside the tags) and, in the
events-per-second table, a reply of each dialect (half reasoning, half text).
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import hostile

import threadline as tl

EVENTS = 2_000
WORDS = [f"word{n} " for n in range(EVENTS)]


def anthropic_events() -> list[dict[str, Any]]:
    half = EVENTS // 2 - 4
    args = json.dumps({"items": list(range(half))})
    step = max(1, len(args) // half)
    pieces = [args[at : at + step] for at in range(0, len(args), step)]
    return [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": "claude-sonnet-5-5",
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        *(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": word},
            }
            for word in WORDS[:half]
        ),
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
        },
        *(
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": piece},
            }
            for piece in pieces
        ),
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 999},
        },
        {"type": "message_stop"},
    ]


def chat_events(model: str = "gpt-4o") -> list[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "c1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    return [
        chunk({"role": "assistant", "content": ""}),
        *(chunk({"content": word}) for word in WORDS[: EVENTS - 3]),
        chunk({}, "stop"),
        {
            **chunk({}),
            "choices": [],
            "usage": {"prompt_tokens": 5, "completion_tokens": 999, "total_tokens": 1004},
        },
    ]


def responses_events() -> list[dict[str, Any]]:
    text = "".join(WORDS[: EVENTS - 6])
    item = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    top = {"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-5"}
    where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    return [
        {"type": "response.created", "response": {**top, "status": "in_progress", "output": []}},
        {"type": "response.output_item.added", "output_index": 0, "item": {**item, "content": []}},
        {
            "type": "response.content_part.added",
            **where,
            "part": {"type": "output_text", "text": "", "annotations": []},
        },
        *(
            {"type": "response.output_text.delta", **where, "delta": word}
            for word in WORDS[: EVENTS - 6]
        ),
        {"type": "response.content_part.done", **where, "part": item["content"][0]},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {
            "type": "response.completed",
            "response": {**top, "status": "completed", "output": [item]},
        },
    ]


def gemini_events() -> list[dict[str, Any]]:
    chunks = [
        {
            "candidates": [{"content": {"role": "model", "parts": [{"text": word}]}, "index": 0}],
            "modelVersion": "gemini-2.5-flash",
            "responseId": "r1",
        }
        for word in WORDS
    ]
    chunks[-1]["candidates"][0]["finishReason"] = "STOP"
    return chunks


def _ollama_line(message: dict[str, Any], done: bool = False) -> dict[str, Any]:
    line: dict[str, Any] = {
        "model": "qwen3:8b",
        "created_at": "2025-10-17T23:14:07.414671Z",
        "message": {"role": "assistant", "content": "", **message},
        "done": done,
    }
    if done:
        line.update(done_reason="stop", prompt_eval_count=1, eval_count=2)
    return line


def ollama_events() -> list[dict[str, Any]]:
    lines = [_ollama_line({"content": word}) for word in WORDS[: EVENTS - 1]]
    return [*lines, _ollama_line({}, done=True)]


def cohere_events() -> list[dict[str, Any]]:
    def delta(at: int, content: dict[str, Any]) -> dict[str, Any]:
        return {"type": "content-delta", "index": at, "delta": {"message": {"content": content}}}

    opening = {"message": {"content": {"type": "text", "text": ""}}}
    return [
        {"type": "message-start", "id": "m1", "delta": {"message": {"role": "assistant"}}},
        {"type": "content-start", "index": 0, "delta": opening},
        *(delta(0, {"text": word}) for word in WORDS[: EVENTS - 4]),
        {"type": "content-end", "index": 0},
        {"type": "message-end", "delta": {"finish_reason": "COMPLETE"}},
    ]


DIALECTS = ("deepseek", "openrouter", "vllm", "groq", "qwen", "moonshot", "xai", "together")
"""The OpenAI-compatible dialects (``threadline.codecs._dialects``)."""
_FIELDS = {
    "deepseek": "reasoning_content",
    "openrouter": "reasoning",
    "vllm": "reasoning_content",
    "groq": "reasoning",
    "qwen": "reasoning_content",
    "moonshot": "reasoning_content",
    "xai": "reasoning_content",
    "together": "reasoning",
}
"""The delta field each dialect streams reasoning text in."""
THINK_TAGS = ("vllm", "groq", "together")
"""The dialects that read ``<think>…</think>`` at the start of ``content``."""


def _reasoning_delta(provider: str, piece: str) -> dict[str, Any]:
    """A dialect's reasoning delta (OpenRouter's with its ``reasoning_details`` entry)."""
    delta: dict[str, Any] = {_FIELDS[provider]: piece}
    if provider == "openrouter":
        delta["reasoning_details"] = [{"type": "reasoning.text", "text": piece, "index": 0}]
    return delta


def dialect_events(provider: str, think: bool = False) -> list[dict[str, Any]]:
    """A dialect's reply: half reasoning deltas (in its field, or ``<think>`` in ``content``),
    half text deltas."""
    half = (EVENTS - 3) // 2
    if think:
        reasoning = [{"content": "<think>"}] + [{"content": w} for w in WORDS[: half - 2]]
        reasoning.append({"content": "</think>\n\n"})
    else:
        reasoning = [_reasoning_delta(provider, word) for word in WORDS[:half]]
    text = [{"content": word} for word in WORDS[: EVENTS - 3 - half]]
    return _chat(provider, reasoning + text)


def bedrock_events() -> list[dict[str, Any]]:
    return [
        {"messageStart": {"role": "assistant"}},
        *(
            {"contentBlockDelta": {"delta": {"text": word}, "contentBlockIndex": 0}}
            for word in WORDS[: EVENTS - 4]
        ),
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"messageStop": {"stopReason": "end_turn"}},
        {"metadata": {"usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3}}},
    ]


# ---------------------------------------------------------------------------------------------
# Linearity (issue 35, item 4): each format's stream of N events in four shapes


def _anthropic(blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """A Messages stream of ``blocks``: (the ``content_block_start`` block, its deltas)."""
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": "claude-sonnet-4-5",
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        }
    ]
    for at, (block, deltas) in enumerate(blocks):
        events.append({"type": "content_block_start", "index": at, "content_block": block})
        events += [{"type": "content_block_delta", "index": at, "delta": d} for d in deltas]
        events.append({"type": "content_block_stop", "index": at})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 9},
        }
    )
    events.append({"type": "message_stop"})
    return events


def _argument_pieces(n: int) -> list[str]:
    """A JSON object's text in ``n`` pieces (a string of ``n - 2`` characters between)."""
    return ['{"text": "', *("x" * max(0, n - 2)), '"}']


def anthropic_shape(shape: str, n: int) -> list[dict[str, Any]]:
    if shape == "text":
        text = [{"type": "text_delta", "text": "w "} for _ in range(n)]
        return _anthropic([({"type": "text", "text": ""}, text)])
    if shape == "calls":
        return _anthropic(
            [
                (
                    {"type": "tool_use", "id": f"toolu_{at}", "name": "f", "input": {}},
                    [{"type": "input_json_delta", "partial_json": f'{{"i": {at}}}'}],
                )
                for at in range(n // 3)
            ]
        )
    if shape == "arguments":
        pieces = [{"type": "input_json_delta", "partial_json": p} for p in _argument_pieces(n)]
        return _anthropic(
            [({"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}, pieces)]
        )
    citation = {
        "type": "char_location",
        "cited_text": "a fact",
        "document_index": 0,
        "document_title": "doc",
        "start_char_index": 0,
        "end_char_index": 6,
    }
    deltas = [{"type": "text_delta", "text": "cited "}]
    deltas += [{"type": "citations_delta", "citation": dict(citation)} for _ in range(n)]
    return _anthropic([({"type": "text", "text": ""}, deltas)])


_MODELS = {
    "mistral": "mistral-large-latest",
    "deepseek": "deepseek-v4-pro",
    "openrouter": "google/gemini-3-pro-preview",
    "vllm": "Qwen/Qwen3-8B",
    "groq": "openai/gpt-oss-120b",
    "qwen": "qwen-plus",
    "moonshot": "kimi-k2-thinking",
    "xai": "grok-3-mini",
    "together": "deepseek-ai/DeepSeek-R1",
}


def _chat(provider: str, deltas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    top = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": _MODELS.get(provider, "gpt-4o"),
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**top, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    usage = {"prompt_tokens": 5, "completion_tokens": 9, "total_tokens": 14}
    events = [chunk({"role": "assistant", "content": ""}), *map(chunk, deltas)]
    if provider == "mistral":
        return [*events, {**chunk({"content": ""}, "stop"), "usage": usage}]
    return [*events, chunk({}, "stop"), {**top, "choices": [], "usage": usage}]


def chat_shape(provider: str, shape: str, n: int) -> list[dict[str, Any]]:
    if shape == "text":
        return _chat(provider, [{"content": "w "} for _ in range(n)])
    if shape == "calls":
        calls = [
            {
                "tool_calls": [
                    {
                        "index": at,
                        "id": f"call_{at}",
                        "type": "function",
                        "function": {"name": "f", "arguments": f'{{"i": {at}}}'},
                    }
                ]
            }
            for at in range(n)
        ]
        return _chat(provider, calls)
    if shape == "arguments":
        pieces = _argument_pieces(n)
        first = {"index": 0, "id": "call_0", "type": "function", "function": {"name": "f"}}
        calls = [{"tool_calls": [{**first, "function": {"name": "f", "arguments": pieces[0]}}]}]
        calls += [{"tool_calls": [{"index": 0, "function": {"arguments": p}}]} for p in pieces[1:]]
        return _chat(provider, calls)
    if shape == "reasoning":
        return _chat(provider, [_reasoning_delta(provider, "hm ") for _ in range(n)])
    if shape == "think":  # the worst cuts: one character, newlines held back, half tags
        pieces = ["<", "think", ">"] + ["h", "\n", "\n", "<", "/th", "m"] * (n // 6)
        return _chat(provider, [{"content": p} for p in [*pieces, "</think>", "\n", "w"]])
    # Mistral's content chunks: thinking and text in turn, each a part of its own
    chunks = [
        {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "hm "}]}]}
        if at % 2 == 0
        else {"content": [{"type": "text", "text": "w "}]}
        for at in range(n)
    ]
    return _chat(provider, chunks)


def _responses(items: list[tuple[dict[str, Any], list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """A Responses stream of output ``items``: (the item as added, the events between)."""
    top = {"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-5"}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**top, "status": "in_progress", "output": []}}
    ]
    done = []
    for at, (item, between) in enumerate(items):
        events.append({"type": "response.output_item.added", "output_index": at, "item": item})
        events += [{**event, "output_index": at} for event in between]
        done.append(at)
    usage = {"input_tokens": 5, "output_tokens": 9, "total_tokens": 14}
    # no output in the final event: the items are the ones the stream built
    final = {**top, "status": "completed", "output": [], "usage": usage}
    return [*events, {"type": "response.completed", "response": final}]


def responses_shape(shape: str, n: int) -> list[dict[str, Any]]:
    message = {"type": "message", "id": "msg_1", "role": "assistant", "content": []}
    text_part = {"type": "output_text", "text": "", "annotations": []}
    if shape == "text":
        where = {"item_id": "msg_1", "content_index": 0}
        between = [{"type": "response.content_part.added", **where, "part": text_part}]
        between += [
            {"type": "response.output_text.delta", **where, "delta": "w "} for _ in range(n)
        ]
        return _responses([(message, between)])

    def call(at: int, pieces: list[str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        item = {"type": "function_call", "id": f"fc_{at}", "call_id": f"call_{at}", "name": "f"}
        deltas = [
            {"type": "response.function_call_arguments.delta", "item_id": item["id"], "delta": p}
            for p in pieces
        ]
        return {**item, "arguments": ""}, deltas

    if shape == "calls":
        return _responses([call(at, [f'{{"i": {at}}}']) for at in range(n // 2)])
    if shape == "arguments":
        return _responses([call(0, _argument_pieces(n))])
    between = []
    for at in range(n // 3):
        where = {"item_id": "msg_1", "content_index": at}
        between += [
            {"type": "response.content_part.added", **where, "part": text_part},
            {"type": "response.output_text.delta", **where, "delta": "w "},
            {"type": "response.content_part.done", **where, "part": {**text_part, "text": "w "}},
        ]
    return _responses([(message, between)])


def gemini_shape(shape: str, n: int) -> list[dict[str, Any]]:
    def chunk(part: dict[str, Any]) -> dict[str, Any]:
        return {
            "candidates": [{"content": {"role": "model", "parts": [part]}, "index": 0}],
            "modelVersion": "gemini-2.5-flash",
            "responseId": "r1",
        }

    if shape == "text":
        chunks = [chunk({"text": "w "}) for _ in range(n)]
    elif shape == "calls":
        chunks = [chunk({"functionCall": {"name": "f", "args": {"i": at}}}) for at in range(n)]
    else:  # parts closed by a signature, each a part of its own
        chunks = [chunk({"text": "w ", "thoughtSignature": f"s{at}"}) for at in range(n)]
    chunks[-1]["candidates"][0]["finishReason"] = "STOP"
    chunks[-1]["usageMetadata"] = {"promptTokenCount": 5, "candidatesTokenCount": 9}
    return chunks


def ollama_shape(shape: str, n: int) -> list[dict[str, Any]]:
    if shape == "text":
        lines = [_ollama_line({"content": "w "}) for _ in range(n)]
    else:  # calls, each whole in a line of its own
        call = {"function": {"name": "f", "arguments": {}}}
        lines = [_ollama_line({"tool_calls": [call]}) for _ in range(n)]
    return [*lines, _ollama_line({}, done=True)]


def cohere_shape(shape: str, n: int) -> list[dict[str, Any]]:
    start = {"type": "message-start", "id": "m1", "delta": {"message": {"role": "assistant"}}}
    end = {"type": "message-end", "delta": {"finish_reason": "COMPLETE"}}

    def content(at: int, kind: str, pieces: list[str]) -> list[dict[str, Any]]:
        opening = {"message": {"content": {"type": kind, kind: ""}}}
        return [
            {"type": "content-start", "index": at, "delta": opening},
            *(
                {"type": "content-delta", "index": at, "delta": {"message": {"content": {kind: p}}}}
                for p in pieces
            ),
            {"type": "content-end", "index": at},
        ]

    def call(at: int, pieces: list[str]) -> list[dict[str, Any]]:
        opening = {"id": f"f_{at}", "type": "function", "function": {"name": "f", "arguments": ""}}
        return [
            {"type": "tool-call-start", "index": at, "delta": {"message": {"tool_calls": opening}}},
            *(
                {
                    "type": "tool-call-delta",
                    "index": at,
                    "delta": {"message": {"tool_calls": {"function": {"arguments": p}}}},
                }
                for p in pieces
            ),
            {"type": "tool-call-end", "index": at},
        ]

    if shape == "text":
        events = content(0, "text", ["w "] * n)
    elif shape == "calls":
        events = [e for at in range(n // 3) for e in call(at, ['{"i": 1}'])]
    elif shape == "arguments":
        events = call(0, _argument_pieces(n))
    else:  # content items, thinking and text in turn
        kinds = ("thinking", "text")
        events = [e for at in range(n // 3) for e in content(at, kinds[at % 2], ["w "])]
    return [start, *events, end]


def bedrock_shape(shape: str, n: int) -> list[dict[str, Any]]:
    def delta(at: int, body: dict[str, Any]) -> dict[str, Any]:
        return {"contentBlockDelta": {"delta": body, "contentBlockIndex": at}}

    def stop(at: int) -> dict[str, Any]:
        return {"contentBlockStop": {"contentBlockIndex": at}}

    def use(at: int) -> dict[str, Any]:
        start = {"toolUse": {"toolUseId": f"tooluse_{at}", "name": "f"}}
        return {"contentBlockStart": {"start": start, "contentBlockIndex": at}}

    events: list[dict[str, Any]] = [{"messageStart": {"role": "assistant"}}]
    if shape == "text":
        events += [delta(0, {"text": "w "}) for _ in range(n)] + [stop(0)]
    elif shape == "calls":
        for at in range(n // 3):
            events += [use(at), delta(at, {"toolUse": {"input": f'{{"i": {at}}}'}}), stop(at)]
    elif shape == "arguments":
        events.append(use(0))
        events += [delta(0, {"toolUse": {"input": p}}) for p in _argument_pieces(n)]
        events.append(stop(0))
    else:  # many blocks
        for at in range(n // 2):
            events += [delta(at, {"text": "w "}), stop(at)]
    usage = {"inputTokens": 5, "outputTokens": 9, "totalTokens": 14}
    return [*events, {"messageStop": {"stopReason": "end_turn"}}, {"metadata": {"usage": usage}}]


def _assemble(provider: str) -> Callable[[list[dict[str, Any]]], object]:
    def run(events: list[dict[str, Any]]) -> object:
        return tl.assemble(events, provider=provider)

    return run


def _dumps(events: list[dict[str, Any]]) -> object:
    return json.dumps(events)


_SHAPE_LABELS = {
    "text": "N tiny text deltas",
    "calls": "N/3 tool calls",
    "arguments": "N argument deltas of one call",
}
_BOUNDARIES = {
    "anthropic": "N citations_delta",
    "openai_responses": "N/3 content parts",
    "gemini": "N parts closed by a signature",
    "mistral": "N content chunks, thinking and text in turn",
    "bedrock": "N/2 blocks",
    "cohere": "N/3 content items, thinking and text in turn",
}
_BUILDERS: dict[str, Callable[[str, int], list[dict[str, Any]]]] = {
    "anthropic": anthropic_shape,
    "openai_chat": lambda shape, n: chat_shape("openai_chat", shape, n),
    "openai_responses": responses_shape,
    "gemini": gemini_shape,
    "mistral": lambda shape, n: chat_shape("mistral", shape, n),
    "bedrock": bedrock_shape,
    "ollama": ollama_shape,
    "cohere": cohere_shape,
    **{
        name: lambda shape, n, name=name: chat_shape(name, shape, n)
        for name in ("deepseek", "openrouter")
    },
}
_REASONING: dict[str, str] = {
    **{name: f"N {_FIELDS[name]} deltas" for name in DIALECTS},
    "openrouter": "N reasoning deltas, each with its reasoning_details entry",
}
"""The dialects' reasoning shapes (text, calls and arguments are Chat Completions': timed for
``deepseek`` and ``openrouter`` only)."""


def _linear_shapes() -> dict[str, hostile.Shape]:
    shapes: dict[str, hostile.Shape] = {}
    for provider, build in _BUILDERS.items():
        for shape in ("text", "calls", "arguments", "boundaries"):
            if shape == "boundaries" and provider not in _BOUNDARIES:
                continue  # Chat Completions has one text part, its calls and a refusal
            if shape == "arguments" and provider in ("gemini", "ollama"):
                continue  # Gemini and Ollama send a call's arguments whole
            label = _BOUNDARIES[provider] if shape == "boundaries" else _SHAPE_LABELS[shape]
            if shape == "calls" and provider in (
                "openai_chat",
                "mistral",
                "gemini",
                "ollama",
                "deepseek",
                "openrouter",
            ):
                label = "N tool calls"  # one chunk each
            elif shape == "calls" and provider == "openai_responses":
                label = "N/2 tool calls"
            shapes[f"{provider}/{shape}"] = hostile.Shape(
                f"{provider}: {label}",
                lambda n, build=build, shape=shape: build(shape, n),
                _assemble(provider),
                _dumps,
                clock="cpu",
            )
    for provider in DIALECTS:
        extra = {"reasoning": _REASONING[provider]}
        if provider in THINK_TAGS:
            extra["think"] = "<think> cut into N one-piece deltas (newlines, half tags)"
        for shape, label in extra.items():
            shapes[f"{provider}/{shape}"] = hostile.Shape(
                f"{provider}: {label}",
                lambda n, provider=provider, shape=shape: chat_shape(provider, shape, n),
                _assemble(provider),
                _dumps,
                clock="cpu",
            )
    return shapes


LINEAR = _linear_shapes()
"""Issue 35 item 4's rows: ``"<format>/<shape>"`` -> the stream of about N events of that shape
(``build``), assembled (``run``), beside ``json.dumps`` of the same events (the floor)."""


def linear(argv: list[str]) -> int:
    """``--linear [--sizes ...] [--rounds R] [--samples S] [--min-time T] [--only NAMES]``:
    every (format, shape) at every size, a fresh interpreter each (``hostile.py``'s loop);
    the table to stdout; 1 when one grows more than 12x at 10x the events."""
    parser = argparse.ArgumentParser(prog="bench/streaming.py --linear")
    parser.add_argument("--sizes", default=",".join(map(str, hostile.SIZES)))
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.05)
    parser.add_argument("--only", default=None, help="comma-separated format/shape names")
    args = parser.parse_args(argv)
    sizes = sorted({int(size) for size in args.sizes.split(",")})
    names = args.only.split(",") if args.only else list(LINEAR)
    measured = hostile.measure_all(
        names,
        sizes,
        args.samples,
        args.min_time,
        args.rounds,
        lambda what: print(what, file=sys.stderr, flush=True),
        script=__file__,
    )
    print(hostile.render(measured, sizes, LINEAR))
    return 0 if all(g.median <= hostile.GROWTH_LIMIT for g in hostile.growths(measured)) else 1


def ours(provider: str, events: list[Any]) -> Callable[[], object]:
    def run() -> object:
        assembler = tl.StreamAssembler(provider)
        for event in events:
            assembler.feed(event)
        return assembler.message()

    return run


def sdk_anthropic(events: list[Any]) -> Callable[[], object]:
    from anthropic.lib.streaming._messages import accumulate_event

    def run() -> object:
        snapshot: Any = None
        buffers: dict[int, bytes] = {}
        for event in events:
            snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=buffers)
        return snapshot

    return run


def sdk_chat(events: list[Any]) -> Callable[[], object]:
    from openai.lib.streaming.chat import ChatCompletionStreamState

    def run() -> object:
        state: Any = ChatCompletionStreamState()
        for event in events:
            state.handle_chunk(event)
        return state.get_final_completion()

    return run


def timed(run: Callable[[], object], samples: int = 7) -> float:
    """The median seconds of one call."""
    run()
    times = []
    for _ in range(samples):
        gc.collect()
        gc.disable()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
        gc.enable()
    return statistics.median(times)


def main() -> None:
    from anthropic.types import RawMessageStreamEvent
    from openai.types.chat import ChatCompletionChunk
    from pydantic import TypeAdapter

    streams = {
        "anthropic": anthropic_events(),
        "openai_chat": chat_events(),
        "openai_responses": responses_events(),
        "gemini": gemini_events(),
        "mistral": chat_events("mistral-large-latest"),
        "bedrock": bedrock_events(),
        "ollama": ollama_events(),
        "cohere": cohere_events(),
        **{name: dialect_events(name) for name in DIALECTS},
        **{f"{name} <think>": dialect_events(name, think=True) for name in THINK_TAGS},
    }
    sdk_objects = {
        "anthropic": [
            TypeAdapter(RawMessageStreamEvent).validate_python(e) for e in streams["anthropic"]
        ],
        "openai_chat": [ChatCompletionChunk.model_validate(e) for e in streams["openai_chat"]],
    }
    accumulators = {"anthropic": sdk_anthropic, "openai_chat": sdk_chat}
    print(
        "| format | events | dicts: µs/event | events/s | SDK objects: µs/event "
        "| SDK accumulator: µs/event | ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, events in streams.items():
        provider = label.split()[0]
        seconds = timed(ours(provider, events))
        row = [
            label,
            str(len(events)),
            f"{seconds / len(events) * 1e6:.2f}",
            f"{len(events) / seconds:,.0f}",
        ]
        objects = sdk_objects.get(provider)
        if objects is not None:
            ours_sdk = timed(ours(provider, objects))
            theirs = timed(accumulators[provider](objects))
            row += [
                f"{ours_sdk / len(events) * 1e6:.2f}",
                f"{theirs / len(events) * 1e6:.2f}",
                f"{ours_sdk / theirs:.2f}x",
            ]
        else:
            row += ["", "", ""]
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        name, size, samples, min_time = sys.argv[2:6]
        stats = hostile.child(name, int(size), int(samples), float(min_time), LINEAR)
        print(json.dumps({key: asdict(stat) for key, stat in stats.items()}))
    elif sys.argv[1:2] == ["--linear"]:
        raise SystemExit(linear(sys.argv[2:]))
    else:
        main()
