"""Fuzzing load_json: random and damaged JSON raises ValidationError, quickly, or loads.

What loads must survive a round trip. Every call runs under the hang guard.
"""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

import threadline as tl
from tests.fuzz._guard import call_expecting
from tests.fuzz._mutations import json_text
from tests.fuzz._mutations import mutated_bytes
from tests.fuzz._mutations import mutated_documents
from tests.strategies import conversations
from threadline.limits import Limits

EXPECTED = (tl.ValidationError,)
LIMITS = (None, Limits.untrusted(), Limits.none())


def load(data: bytes | str) -> None:
    for limits in LIMITS:
        messages = call_expecting(EXPECTED, tl.load_json, data, limits=limits)
        if messages is not None:
            assert tl.load_json(tl.dump_json(messages), limits=Limits.none()) == messages


@given(st.binary(max_size=2000))
def test_random_bytes(data: bytes) -> None:
    load(data)


@given(st.text(max_size=500))
def test_random_text(data: str) -> None:
    load(data)


@given(conversations(), st.data())
def test_damaged_json_text(messages: list[tl.Message], data: st.DataObject) -> None:
    load(data.draw(mutated_bytes(tl.dump_json(messages))))


@given(conversations(), st.booleans(), st.data())
def test_damaged_documents(messages: list[tl.Message], bare: bool, data: st.DataObject) -> None:
    document = json.loads(tl.dump_json(messages))
    text = json_text(data.draw(mutated_documents(document["messages"] if bare else document)))
    if text is not None:
        load(text)
