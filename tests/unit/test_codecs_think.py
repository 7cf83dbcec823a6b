"""``<think>…</think>`` in ``content`` (``threadline.codecs._think``): one rule for a whole
reply and for a stream of it, so a stream's reasoning and text deltas are the assembled
message's parts, with the tags cut across chunks and in hostile replies."""

from __future__ import annotations

from typing import Any

import pytest

from threadline import PartEnd
from threadline import PartStart
from threadline import ReasoningDelta
from threadline import ReasoningPart
from threadline import StreamAssembler
from threadline import TextDelta
from threadline import TextPart
from threadline.codecs import decode
from threadline.codecs import decode_response
from threadline.codecs._dialects import DIALECTS
from threadline.codecs._stream_chat import dialect_builders
from threadline.codecs._think import ThinkSplitter
from threadline.codecs._think import split_think

MODEL = "Qwen/Qwen3-8B"
TOP = {"id": "chatcmpl-1", "created": 1_770_000_000, "model": MODEL}

CASES: list[tuple[list[str], str | None, str]] = [
    # (content pieces, the reasoning the message holds (None: no reasoning part), its text)
    (
        ["<think>\nCompare 9.11 and 9.8.\n</think>\n\n9.8 is greater."],
        "Compare 9.11 and 9.8.",
        "9.8 is greater.",
    ),
    (["<thi", "nk>", "Compare", "</thi", "nk>", "Answer"], "Compare", "Answer"),
    (["<", "t", "h", "i", "n", "k", ">", "a", "\n", "<", "/", "think", ">", "\n", "b"], "a", "b"),
    (["  \n<think>plan", "</think>done"], "plan", "done"),  # blanks before the tag
    (["<think>cut while thinking"], "cut while thinking", ""),  # unclosed
    (["<think>cut\n\n", "</thi"], "cut\n\n</thi", ""),  # unclosed, a closing tag half sent
    (["<think>a<think>b</think>c</think>d"], "a<think>b", "c</think>d"),  # nested
    (["Sure. <think>", "not reasoning</think>"], None, "Sure. <think>not reasoning</think>"),
    (["<think>x</think>", "<think>y</think>"], "x", "<think>y</think>"),  # a tag in the answer
    (["<think>\n\n</think>\n\n", "Hi"], None, "Hi"),  # Qwen3 with thinking off: empty
    (["<thinking>no</thinking>"], None, "<thinking>no</thinking>"),
    (["<thi", "s is text"], None, "<this is text"),
    (["\n\n"], None, "\n\n"),
    (["<think>a\n", "\nb\n", "</think>"], "a\n\nb", ""),  # newlines inside are kept
]


def chunks(pieces: list[str], **first: Any) -> list[dict[str, Any]]:
    def chunk(delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": reason}
        return {**TOP, "object": "chat.completion.chunk", "choices": [choice]}

    return [
        chunk({"role": "assistant", "content": "", **first}),
        *(chunk({"content": piece}) for piece in pieces),
        chunk({}, "stop"),
    ]


def response(content: str, **fields: Any) -> dict[str, Any]:
    message = {"role": "assistant", "content": content, **fields}
    return {
        **TOP,
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }


def expected_parts(thought: str | None, text: str) -> list[Any]:
    parts: list[Any] = []
    if thought is not None:
        parts.append(ReasoningPart(text=thought, provider="vllm", model=MODEL))
    if text:
        parts.append(TextPart(text=text))
    return parts


@pytest.mark.parametrize(("pieces", "thought", "text"), CASES)
def test_a_reply_reads_as_its_stream_says(
    pieces: list[str], thought: str | None, text: str
) -> None:
    assert list(decode_response(response("".join(pieces)), provider="vllm").parts) == (
        expected_parts(thought, text)
    )
    assembler = StreamAssembler("vllm")
    seen = [event for raw in chunks(pieces) for event in assembler.feed(raw)]
    seen += assembler.close()
    assert list(assembler.message().parts) == expected_parts(thought, text)
    starts = [event.kind for event in seen if isinstance(event, PartStart)]
    assert starts == (["reasoning"] if thought else []) + (["text"] if text else [])
    assert "".join(e.text for e in seen if isinstance(e, ReasoningDelta)) == (thought or "")
    assert "".join(e.text for e in seen if isinstance(e, TextDelta)) == text
    assert [e.part for e in seen if isinstance(e, PartEnd)] == expected_parts(thought, text)


def test_reasoning_streams_before_the_closing_tag_arrives() -> None:
    assembler = StreamAssembler("together")
    events = chunks(["<think>Step one. ", "Step two.", "</think>", "Done."])
    assert assembler.feed(events[0]) == []
    assert assembler.feed(events[1]) == [PartStart(0, "reasoning"), ReasoningDelta(0, "Step one. ")]
    assert assembler.feed(events[2]) == [ReasoningDelta(0, "Step two.")]
    assert assembler.feed(events[3]) == []
    assert assembler.feed(events[4]) == [PartStart(1, "text"), TextDelta(1, "Done.")]


def test_a_reasoning_field_and_tags_both_read_as_reasoning() -> None:
    content = "<think>in content</think>answer"
    read = decode_response(response(content, reasoning_content="in field"), provider="vllm")
    assert list(read.parts) == [
        ReasoningPart(text="in field", provider="vllm", model=MODEL),
        ReasoningPart(text="in content", provider="vllm", model=MODEL),
        TextPart(text="answer"),
    ]
    streamed = StreamAssembler("vllm")
    for raw in chunks(["<think>in ", "content</think>answer"], reasoning_content="in field"):
        streamed.feed(raw)
    assert streamed.message().parts == read.parts


def test_a_request_reads_its_assistant_tags_as_reasoning() -> None:
    messages = [
        {"role": "user", "content": "Which is greater, 9.11 or 9.8?"},
        {"role": "assistant", "content": "<think>Compare.</think>\n\n9.8."},
    ]
    parts = decode({"messages": messages}, provider="groq")[1].parts
    assert parts == (ReasoningPart(text="Compare.", provider="groq"), TextPart(text="9.8."))


@pytest.mark.parametrize(("pieces", "thought", "text"), CASES)
def test_the_splitter_says_as_split_think_reads(
    pieces: list[str], thought: str | None, text: str
) -> None:
    splitter = ThinkSplitter()
    said = [piece for chunk in pieces for piece in splitter.feed(chunk)] + splitter.flush()
    reasoning, answer = split_think("".join(pieces))
    assert (reasoning or None, answer) == (thought, text)
    assert "".join(t for kind, t in said if kind == "reasoning") == (reasoning or "")
    assert "".join(t for kind, t in said if kind == "text") == answer
    with pytest.raises(ValueError, match="after the end"):
        splitter.feed("more")


def test_the_stream_builders_read_tags_where_the_dialects_do() -> None:
    for name, codec in DIALECTS.items():
        builder = getattr(dialect_builders, name)()
        assert (builder._think is not None) == codec.dialect.think_tags, name
