"""Invariants of what the ``threadline`` command line prints from a file (issue 19, item 9).

Whatever the strings in a history hold, a transcript (coloured or not) and every escaped line
carry no character a terminal would act on: C0 controls but newline and tab, DEL, C1 controls,
bidirectional overrides and isolates, lone surrogates. Text without them prints unchanged.
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

import threadline as tl
from threadline.cli import Style
from threadline.cli import printable
from threadline.cli import render_transcript

UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
SGR = re.compile(r"\x1b\[[0-9;]*m")

# Mostly the characters that matter, with ordinary and wide ones around them.
hostile_chars = st.one_of(
    st.characters(min_codepoint=0, max_codepoint=0x20),
    st.characters(min_codepoint=0x7F, max_codepoint=0xA0),
    st.characters(min_codepoint=0x2028, max_codepoint=0x206F),
    st.sampled_from("ab[;m\\é日🧵"),
    st.characters(codec="utf-8"),
)
hostile_text = st.text(hostile_chars, max_size=24)
ids = hostile_text.filter(bool)


@st.composite
def hostile_histories(draw: st.DrawFn) -> list[tl.Message]:
    call = draw(ids)
    return [
        tl.user_message(draw(hostile_text), id=draw(ids)),
        tl.assistant_message(
            tl.reasoning_part(draw(hostile_text), provider=draw(hostile_text) or None),
            tl.tool_call_part(call, draw(ids), {draw(hostile_text): draw(hostile_text)}),
            tl.tool_call_part(draw(ids), draw(ids), draw(hostile_text)),
            id=draw(ids),
        ),
        tl.tool_message(
            tl.tool_result_part(call, draw(hostile_text)),
            tl.tool_result_part(draw(ids), draw(hostile_text), is_error=True),
            id=draw(ids),
        ),
        tl.internal_message(tl.hook_part(draw(ids), {"s": draw(hostile_text)}), id=draw(ids)),
    ]


@given(hostile_histories(), st.booleans())
def test_a_transcript_holds_nothing_a_terminal_acts_on(
    messages: list[tl.Message], full: bool
) -> None:
    plain = "\n".join(render_transcript(messages, Style(False), full=full))
    assert not UNSAFE.search(plain)
    assert "\x1b" not in plain
    coloured = "\n".join(render_transcript(messages, Style(True), full=full))
    assert SGR.sub("", coloured) == plain


@given(
    st.text(hostile_chars | st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)),
    st.booleans(),
)
def test_printable_escapes_exactly_what_a_terminal_acts_on(text: str, keep_lines: bool) -> None:
    shown = printable(text, text=keep_lines)
    assert not UNSAFE.search(shown)
    if not keep_lines:
        assert "\n" not in shown
        assert "\t" not in shown
    if not UNSAFE.search(text) and (keep_lines or not re.search("[\n\t]", text)):
        assert shown == text
