"""``<think>`` streams (issue 41): where a dialect's server leaves reasoning in ``content`` as
``<think>…</think>``, what the stream says as it arrives agrees with the assembled message,
for any chunking, including cuts inside the tags and hostile texts (an unclosed tag, a tag in
later text, nested tags, blanks and newlines around them)."""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.support import examples
from threadline import Message
from threadline import PartEnd
from threadline import PartStart
from threadline import ReasoningDelta
from threadline import ReasoningPart
from threadline import StreamAssembler
from threadline import TextDelta
from threadline import TextPart
from threadline import decode_response
from threadline.codecs._dialects import DIALECTS
from threadline.codecs._think import ThinkSplitter
from threadline.codecs._think import split_think

THINKING = sorted(name for name, codec in DIALECTS.items() if codec.dialect.think_tags)
"""The dialects that read ``<think>`` tags in ``content``."""

FIELD = {"vllm": "reasoning_content", "groq": "reasoning", "together": "reasoning"}
"""A reasoning field each of them also streams."""

BITS = st.sampled_from(
    ["<think>", "</think>", "<think", "</th", "ink>", "<", ">", "/", "\n", "\n\n", " ", "\t"]
)
WORDS = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=6)
CONTENT = st.lists(st.one_of(BITS, BITS, WORDS), max_size=12).map("".join)
"""Reply texts dense in tag fragments, blanks and newlines."""


def cuts(draw: Callable[[st.SearchStrategy[Any]], Any], text: str) -> list[str]:
    """``text`` cut anywhere (pieces of one character included)."""
    if len(text) < 2:
        return [text] if text else []
    at = sorted(set(draw(st.lists(st.integers(1, len(text) - 1), max_size=len(text)))))
    return [text[a:b] for a, b in pairwise([0, *at, len(text)])]


@st.composite
def think_streams(draw: st.DrawFn, name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    content = draw(CONTENT)
    thought = draw(st.one_of(st.none(), WORDS.filter(bool)))
    call = draw(st.booleans())
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if thought is not None:
        message[FIELD[name]] = thought
    if call:
        message["tool_calls"] = [
            {
                "id": "call_0",
                "type": "function",
                "function": {"name": "get_weather", "arguments": json.dumps({"city": "Paris"})},
            }
        ]
    top = {"id": "chatcmpl-1", "created": 1_770_000_000, "model": "Qwen/Qwen3-8B"}
    finish = "tool_calls" if call else "stop"
    response = {
        **top,
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }

    def chunk(delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": reason}
        return {**top, "object": "chat.completion.chunk", "choices": [choice]}

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({FIELD[name]: piece}) for piece in cuts(draw, thought or "")]
    events += [chunk({"content": piece}) for piece in cuts(draw, content)]
    if call:
        events.append(chunk({"tool_calls": [{"index": 0, **message["tool_calls"][0]}]}))
    events.append(chunk({}, finish))
    return response, events


def said(events: list[Any]) -> list[tuple[str, str]]:
    """The text and reasoning parts the neutral events built, in the order they started."""
    kinds = {e.index: e.kind for e in events if isinstance(e, PartStart)}
    texts: dict[int, list[str]] = {index: [] for index in kinds}
    for event in events:
        if isinstance(event, (TextDelta, ReasoningDelta)):
            assert kinds[event.index] == ("text" if isinstance(event, TextDelta) else "reasoning")
            texts[event.index].append(event.text)
    return [(kinds[i], "".join(texts[i])) for i in sorted(kinds) if kinds[i] != "tool_call"]


def held(message: Message) -> list[tuple[str, str]]:
    """The message's text and reasoning parts (an empty text, ``content: ""``, streams as no
    part)."""
    return [
        (part.type, part.text)
        for part in message.parts
        if isinstance(part, (TextPart, ReasoningPart)) and part.text
    ]


@pytest.mark.parametrize("name", THINKING)
@settings(max_examples=examples(150), deadline=None)
@given(data=st.data())
def test_deltas_by_part_are_the_assembled_parts(name: str, data: st.DataObject) -> None:
    response, events = data.draw(think_streams(name))
    assembler = StreamAssembler(name)
    seen = [neutral for event in events for neutral in assembler.feed(event)]
    seen += assembler.close()
    message = assembler.message()
    assert message.parts == decode_response(response, provider=name).parts
    assert said(seen) == held(message)
    # each part ends once, as the message holds it (blanks held back until the reply ends
    # may start their text part after a tool call's)
    ends = [e.part for e in seen if isinstance(e, PartEnd)]
    assert None not in ends
    order: list[Any] = list(message.parts)
    assert sorted(ends, key=order.index) == [
        part for part in message.parts if not (isinstance(part, TextPart) and not part.text)
    ]


@settings(max_examples=examples(300), deadline=None)
@given(text=CONTENT, data=st.data())
def test_the_splitter_says_what_split_think_reads(text: str, data: st.DataObject) -> None:
    splitter = ThinkSplitter()
    pieces = [piece for cut in cuts(data.draw, text) for piece in splitter.feed(cut)]
    pieces += splitter.flush()
    thought, answer = split_think(text)
    expected = [("reasoning", thought or ""), ("text", answer)]
    joined = [(kind, "".join(t for k, t in pieces if k == kind)) for kind in ("reasoning", "text")]
    assert joined == expected
    kinds = [kind for kind, _ in pieces]
    assert kinds == sorted(kinds)  # reasoning first: "reasoning" < "text"
    assert all(piece for _, piece in pieces)
