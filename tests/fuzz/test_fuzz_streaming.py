"""Fuzzing the stream assembler: a stream is untrusted input, so whatever arrives, only
``CodecError`` (and its subclasses) comes out of ``feed`` and ``message``, and
``message(partial=True)`` answers whatever arrived, as a history ``prepare_messages`` repairs.

Each format's valid streams (``tests/stream_cases.py``) get one event damaged as a document
(a value replaced, removed, duplicated or wrapped), or events dropped or repeated; and hostile
sequences: cut at random, events repeated and moved out of order, indices made huge or
negative, values nested 100,000 deep, numbers of 5,000 digits, texts past ``max_string``,
events fed as JSON text, all read within drawn limits.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import threadline as tl
from tests.fuzz._guard import call_expecting
from tests.fuzz._mutations import mutated_documents
from tests.fuzz._mutations import nested
from tests.stream_cases import STREAMS
from tests.support import examples

EXPECTED = (tl.CodecError,)


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


# -- hostile sequences --------------------------------------------------------------------------

INDEX_KEYS = ("index", "output_index", "content_index", "summary_index", "contentBlockIndex")
HUGE_INDICES = (10**8, 2**63, 4_000_000, 10_000, -1, True, 1.5, "0", None)
DEEP = 100_000
LIMITS = {
    "default": tl.Limits(),
    "untrusted": tl.Limits.untrusted(),
    "tiny": tl.Limits(max_string=40, max_parts=3, max_depth=8),
}
OPERATIONS = st.sampled_from(
    [
        "cut",
        "repeat",
        "move",
        "swap",
        "huge index",
        "deep value",
        "deep text",
        "huge number",
        "long text",
    ]
)


def _places(document: Any, keys: tuple[str, ...] | None = None) -> list[tuple[Any, Any]]:
    """Every (container, key) of ``document`` (only those keyed by ``keys``, if given)."""
    found: list[tuple[Any, Any]] = []
    stack = [document]
    while stack:
        value = stack.pop()
        members = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in members:
            if keys is None or key in keys:
                found.append((value, key))
            if isinstance(item, (dict, list)):
                stack.append(item)
    return found


def _texts(document: Any) -> list[tuple[Any, Any]]:
    return [(c, k) for c, k in _places(document) if isinstance(c[k], str)]


# Placeholders for the values too deep or too big to copy or print, put in their place once
# the sequence is drawn: nested DEEP levels (as Python lists, or as JSON text), and an integer
# of 5,000 digits.
_DEEP = "\x00deep"
_NUMBER = "\x00number"
_VALUES: dict[str, Any] = {_DEEP: nested(DEEP), _NUMBER: 10**5000}
_TEXTS = {json.dumps(_DEEP): "[" * DEEP + "]" * DEEP, json.dumps(_NUMBER): "1" * 5000}


def _hostile(data: st.DataObject, events: list[Any]) -> list[Any]:
    """``events`` with one to four hostile operations applied (drawn as small choices, deep
    and huge values as placeholders: hypothesis prints every draw)."""
    events = json.loads(json.dumps(events))
    for _ in range(data.draw(st.integers(1, 4))):
        operation = data.draw(OPERATIONS)
        if not events:
            break
        at = data.draw(st.integers(0, len(events) - 1))
        if operation == "cut":
            del events[at:]
        elif operation == "repeat":
            events.insert(at, json.loads(json.dumps(events[at])))
        elif operation == "move":
            events.insert(data.draw(st.integers(0, len(events) - 1)), events.pop(at))
        elif operation == "swap":
            other = data.draw(st.integers(0, len(events) - 1))
            events[at], events[other] = events[other], events[at]
        elif operation == "huge index":
            places = _places(events[at], INDEX_KEYS)
            if places:
                container, key = data.draw(st.sampled_from(places))
                container[key] = data.draw(st.sampled_from(HUGE_INDICES))
        elif operation in ("deep value", "huge number"):
            places = _places(events[at])
            value = _DEEP if operation == "deep value" else _NUMBER
            if places:
                container, key = places[data.draw(st.integers(0, len(places) - 1))]
                container[key] = value
            else:
                events[at]["x"] = value
        else:  # a text (tool arguments, a delta, an id...) made deep JSON text, or long
            texts = _texts(events[at])
            if texts:
                container, key = texts[data.draw(st.integers(0, len(texts) - 1))]
                if operation == "deep text":
                    container[key] = '{"a": ' + "[" * DEEP + "]" * DEEP + "}"
                else:
                    container[key] = container[key] * 5 + "x" * 5_000
    return events


def _as_fed(event: Any, as_text: bool) -> Any:
    """The event with its placeholders replaced, as a dict or as JSON text."""
    if as_text:
        text = json.dumps(event)
        for mark, value in _TEXTS.items():
            text = text.replace(mark, value)
        return text
    for container, key in _places(event):
        if isinstance(container[key], str) and container[key] in _VALUES:
            container[key] = _VALUES[container[key]]
    return event


def _feed_hostile(assembler: tl.StreamAssembler, events: list[Any]) -> None:
    for event in events:
        with contextlib.suppress(*EXPECTED):
            assembler.feed(event)


@pytest.mark.parametrize("provider", sorted(STREAMS))
@settings(max_examples=examples(60), deadline=None)
@given(data=st.data())
def test_hostile_event_sequences_raise_only_codec_errors(
    provider: str, data: st.DataObject
) -> None:
    _, events = data.draw(STREAMS[provider])
    hostile = _hostile(data, list(events))
    hostile = [_as_fed(event, data.draw(st.booleans())) for event in hostile]
    limits = LIMITS[data.draw(st.sampled_from(sorted(LIMITS)))]
    assembler = tl.StreamAssembler(provider, limits=limits)
    call_expecting(EXPECTED, _feed_hostile, assembler, hostile)
    call_expecting(EXPECTED, assembler.close)
    call_expecting(EXPECTED, assembler.message)
    partial = call_expecting((), assembler.message, partial=True)
    assert partial is not None
    assert partial.metadata["threadline.incomplete"] is True
    ready = tl.prepare_messages([tl.user_message("hi"), partial])
    assert tl.prepare_messages(ready, "strict") == ready
