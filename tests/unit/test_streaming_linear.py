"""Stream assembly does work linear in the stream (issue 35, item 4): each test counts the
work one shape makes, exactly, where a quadratic path once did N squared of it. The times are
in ``bench/streaming.py`` (``python bench/run.py --only streaming``)."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from threadline import PartEnd
from threadline import StreamAssembler
from threadline import ToolCallPart
from threadline.codecs._stream_base import parse_object
from threadline.messages import Message


def _gemini_chunk(part: dict[str, Any], **candidate: Any) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "index": 0, **candidate}],
        "modelVersion": "gemini-2.5-flash",
        "responseId": "r1",
    }


def _gemini_calls(n: int) -> list[dict[str, Any]]:
    chunks = [_gemini_chunk({"functionCall": {"name": "f", "args": {"i": i}}}) for i in range(n)]
    chunks.append(_gemini_chunk({"text": "done"}, finishReason="STOP"))
    return chunks


def test_gemini_reads_each_part_once_when_it_ends() -> None:
    # Each part end read the whole response so far: N parts read N * (N + 1) / 2 parts.
    n = 200
    assembler = StreamAssembler("gemini")
    builder = assembler._builder
    decode = builder.decode
    read: list[int] = []

    def counting(response: dict[str, Any]) -> Message:
        read.append(len(response["candidates"][0]["content"]["parts"]))
        return decode(response)

    builder.decode = counting
    for chunk in _gemini_calls(n):
        assembler.feed(chunk)
    assert read == [1] * (n + 1)


def test_gemini_part_ends_carry_the_ids_the_message_has() -> None:
    # A call without an id gets one derived from the response id and its place among the
    # parts; a part read alone must get the same one, and a code result its code's.
    code = {"executableCode": {"code": "print(1)", "language": "PYTHON"}}
    result = {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1"}}
    chunks = [
        _gemini_chunk({"text": "a"}),
        _gemini_chunk(code),
        *_gemini_calls(3)[:-1],
        _gemini_chunk(result),
        _gemini_chunk({"codeExecutionResult": {"outcome": "OUTCOME_OK", "id": ""}}),
        _gemini_chunk({"toolCall": {"toolType": "URL_CONTEXT", "args": {}}}),
        _gemini_chunk({"functionCall": {"name": "g", "id": "given"}}, finishReason="STOP"),
    ]
    assembler = StreamAssembler("gemini")
    ends = [e.part for chunk in chunks for e in assembler.feed(chunk) if isinstance(e, PartEnd)]
    message = assembler.message()
    assert tuple(ends) == message.parts
    assert len({part.id for part in message.parts if isinstance(part, ToolCallPart)}) == 4


def test_anthropic_citations_are_appended_not_copied() -> None:
    # Each citations_delta built a new list of every citation so far: N deltas copied N
    # squared / 2 citations. The block's list is now the same list, appended to.
    assembler = StreamAssembler("anthropic")
    start = {"type": "text", "text": "", "citations": []}
    assembler.feed({"type": "message_start", "message": {"id": "m", "model": "claude"}})
    assembler.feed({"type": "content_block_start", "index": 0, "content_block": start})
    held = []
    for i in range(50):
        citation = {"type": "char_location", "cited_text": str(i), "document_index": 0}
        delta = {"type": "citations_delta", "citation": citation}
        assembler.feed({"type": "content_block_delta", "index": 0, "delta": delta})
        held.append(assembler._builder._blocks[0]["citations"])  # type: ignore[attr-defined]
    assert all(cited is held[0] for cited in held)
    assert start["citations"] == []  # the caller's event is left as it was
    assembler.feed({"type": "content_block_stop", "index": 0})
    assembler.feed({"type": "message_stop"})
    cited = assembler.message().parts[0].metadata
    assert len(next(iter(v for v in cited.values() if isinstance(v, (list, tuple))))) == 50


def test_a_repeated_end_of_the_response_reads_the_message_once() -> None:
    # Each message_stop (metadata, response.completed) said Finish again, and a Finish reads
    # the whole message (Anthropic's also rebuilt the response): N calls then N repeated ends
    # read N messages of N calls.
    assembler = StreamAssembler("anthropic")
    reads = 0
    decode = assembler._decode

    def counting(response: dict[str, Any]) -> Message:
        nonlocal reads
        reads += 1
        return decode(response)

    assembler._decode = counting  # type: ignore[method-assign]
    builder = assembler._builder
    built = 0
    response = builder.response

    def building(*, partial: bool = False) -> dict[str, Any]:
        nonlocal built
        built += 1
        return response(partial=partial)

    builder.response = building  # type: ignore[method-assign]
    assembler.feed({"type": "message_start", "message": {"id": "m", "model": "claude"}})
    assembler.feed({"type": "content_block_start", "index": 0, "content_block": {"type": "text"}})
    assembler.feed({"type": "content_block_stop", "index": 0})
    finishes = [assembler.feed({"type": "message_stop"}) for _ in range(20)]
    assert [len(events) for events in finishes] == [1] + [0] * 19
    assert reads == 1
    assert built == 1  # message_stop rebuilt the whole response for its stop reason


def _chat_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "c",
        "model": "gpt-4o",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def test_a_chat_finish_reason_ends_only_the_open_parts() -> None:
    # Each chunk with a finish_reason built the blocks of every part, open or ended: N calls
    # and N such chunks built N squared blocks.
    n = 50
    assembler = StreamAssembler("openai_chat")
    builder = assembler._builder
    end_all = builder.end_all
    built: list[int] = []

    def counting(blocks: Any) -> Any:
        built.append(len(blocks))
        return end_all(blocks)

    builder.end_all = counting  # type: ignore[method-assign]
    for i in range(n):
        call = {"index": i, "id": f"c{i}", "function": {"name": "f", "arguments": "{}"}}
        assembler.feed(_chat_chunk({"tool_calls": [call]}))
    for _ in range(n):
        assembler.feed(_chat_chunk({}, "tool_calls"))
    assert built == [n] + [0] * (n - 1)
    assert len(assembler.message().parts) == n


@pytest.mark.parametrize("provider", ["anthropic", "bedrock"])
def test_a_block_stopped_again_is_not_parsed_again(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each stop of a tool block parsed its whole input, stopped or not: N stops of a block of
    # N argument pieces parsed N squared characters.
    module = importlib.import_module(f"threadline.codecs._stream_{provider}")
    parsed: list[str] = []

    def counting(text: str) -> Any:
        parsed.append(text)
        return parse_object(text)

    monkeypatch.setattr(module, "parse_object", counting)
    pieces = ['{"a": "', *"x" * 20, '"}']
    if provider == "anthropic":
        start = {"type": "tool_use", "id": "t", "name": "f", "input": {}}
        events: list[dict[str, Any]] = [
            {"type": "message_start", "message": {"id": "m", "model": "claude"}},
            {"type": "content_block_start", "index": 0, "content_block": start},
        ]
        events += [
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": p},
            }
            for p in pieces
        ]
        stop: dict[str, Any] = {"type": "content_block_stop", "index": 0}
    else:
        use = {"toolUse": {"toolUseId": "t", "name": "f"}}
        events = [{"contentBlockStart": {"start": use, "contentBlockIndex": 0}}]
        events += [
            {"contentBlockDelta": {"delta": {"toolUse": {"input": p}}, "contentBlockIndex": 0}}
            for p in pieces
        ]
        stop = {"contentBlockStop": {"contentBlockIndex": 0}}
    assembler = StreamAssembler(provider)
    for event in [*events, *[stop] * 30]:
        assembler.feed(event)
    assert len(parsed) == 1


def test_ollama_reads_the_response_once_when_the_stream_is_done() -> None:
    # Calls arrive whole, one line each; their ids depend on their place in the response,
    # so the parts end together, from one reading of it (not one reading per call).
    n = 200
    call = {"function": {"name": "f", "arguments": {"i": 1}}}
    lines = [{"message": {"role": "assistant", "tool_calls": [call]}, "done": False}] * n
    lines.append({"message": {"role": "assistant", "content": ""}, "done": True})
    assembler = StreamAssembler("ollama")
    builder = assembler._builder
    decode = builder.decode
    read: list[int] = []

    def counting(response: dict[str, Any]) -> Message:
        read.append(len(response["message"].get("tool_calls", ())))
        return decode(response)

    builder.decode = counting
    ends = [event for line in lines for event in assembler.feed(line) if isinstance(event, PartEnd)]
    assert read == [n]
    assert len({event.part.id for event in ends if isinstance(event.part, ToolCallPart)}) == n
