"""Fuzzing the stream assembler: damaged events raise only CodecError (or ValidationError for
values no message can hold), and ``message(partial=True)`` answers whatever arrived.

Each format's valid streams (``tests/stream_cases.py``) get one event damaged as a document
(a value replaced, removed, duplicated or wrapped), or events dropped or repeated.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import threadline as tl
from tests.fuzz._guard import call_expecting
from tests.fuzz._mutations import mutated_documents
from tests.stream_cases import STREAMS
from tests.support import examples

EXPECTED = (tl.CodecError, tl.ValidationError)


class _Damaged:
    """A damaged event, drawn through this holder: hypothesis prints every draw, and its
    printer recurses past the interpreter's limit on the too-deep values the mutations make."""

    def __init__(self, event: Any) -> None:
        self.event = event

    def __repr__(self) -> str:
        return "<a damaged event>"


def _feed_all(assembler: tl.StreamAssembler, events: list[Any]) -> None:
    for event in events:
        try:
            assembler.feed(event)
        except EXPECTED:
            continue  # a damaged event is refused; the stream goes on


@pytest.mark.parametrize("provider", sorted(STREAMS))
@settings(max_examples=examples(40), deadline=None)
@given(data=st.data())
def test_damaged_events_are_refused_or_read(provider: str, data: st.DataObject) -> None:
    _, events = data.draw(STREAMS[provider])
    events = list(events)
    how = data.draw(st.sampled_from(["mutate", "drop", "repeat"]))
    at = data.draw(st.integers(0, len(events) - 1))
    if how == "mutate":
        events[at] = data.draw(mutated_documents(events[at]).map(_Damaged)).event
    elif how == "drop":
        del events[at]
    else:
        events.insert(at, events[at])
    assembler = tl.StreamAssembler(provider)
    call_expecting(EXPECTED, _feed_all, assembler, events)
    with contextlib.suppress(*EXPECTED):
        call_expecting(EXPECTED, assembler.message)
    partial = assembler.message(partial=True)
    assert partial.metadata["threadline.incomplete"] is True
    ready = tl.prepare_messages([tl.user_message("hi"), partial])
    assert tl.prepare_messages(ready, "strict") == ready
