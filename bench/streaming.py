"""Stream assembly: events per second for a 2,000-event stream per format, and the cost
against the SDK's own accumulator where one exists (Anthropic, OpenAI Chat).

Issue 24's targets: feeding costs at most 1.5x the SDK's accumulator on the same events, and a
few microseconds per event. Run ``python bench/streaming.py`` (the SDKs from
``bench/requirements.txt`` or the test extras); the markdown table goes to stdout.
"""

from __future__ import annotations

import gc
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

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
    for provider, events in streams.items():
        seconds = timed(ours(provider, events))
        row = [
            provider,
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
    main()
