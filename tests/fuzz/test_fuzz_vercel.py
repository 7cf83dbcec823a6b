"""Fuzzing threadline.interop.vercel: damaged ``useChat`` bodies, as documents and as JSON text,
raise only ValidationError or CodecError, trusted or not, under the hang guard."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import threadline as tl
from tests.fuzz._guard import call_expecting
from tests.fuzz._mutations import mutated_bytes
from tests.fuzz._mutations import mutated_documents
from tests.fuzz._mutations import nested
from tests.strategies import conversations
from threadline.interop.vercel import from_ui_messages
from threadline.interop.vercel import to_ui_messages

EXPECTED = (tl.ValidationError, tl.CodecError)
FIXTURE = Path(__file__).resolve().parents[1] / "interop" / "fixtures" / "usechat_request.json"
SEED: dict[str, Any] = json.loads(FIXTURE.read_bytes())


def read(data: Any, trusted: bool) -> list[tl.Message] | None:
    messages = call_expecting(EXPECTED, from_ui_messages, data, trusted=trusted)
    if messages is not None:
        tl.dump_json(messages)  # whatever is read can be stored
    return messages


@given(document=mutated_documents(SEED), trusted=st.booleans())
def test_damaged_request_bodies(document: Any, trusted: bool) -> None:
    read(document, trusted)


@given(data=mutated_bytes(FIXTURE.read_bytes()), trusted=st.booleans())
def test_damaged_request_text(data: bytes, trusted: bool) -> None:
    read(data, trusted)


@given(messages=conversations(max_turns=2, replay=False), data=st.data())
def test_damaged_output_of_to_ui_messages(messages: list[tl.Message], data: Any) -> None:
    document = data.draw(mutated_documents(to_ui_messages(messages)))
    read(document, data.draw(st.booleans()))


def test_hostile_shapes() -> None:
    user = {"id": "u", "role": "user", "parts": [{"type": "text", "text": "x"}]}
    shapes: list[Any] = [
        nested(5_000),
        [{**user, "metadata": nested(5_000)}],
        [{**user, "parts": [{"type": "text", "text": "\ud800"}]}],
        [{**user, "parts": [{"type": "text", "text": "x", "\udc00": 1}]}],
        [{**user, "role": "system"}] * 2,
        [{**user, "parts": [{"type": "text", "text": "x" * (9 << 20)}]}],
        [{**user, "parts": [{"type": "data-x", "data": 1}] * 20_000}],
        [{"id": "a", "role": "assistant", "parts": [{"type": "tool-x", "toolCallId": "c"}]}],
        [{**user, "parts": [{"type": "text", "text": float("nan")}]}],
        [{**user, "metadata": float("inf")}],
        [{**user, "metadata": {1: "key is not a string"}}],
        [{**user, "id": 10**5000}],
        "[" * 100_000,
        b"\xff\xfe",
        None,
        42,
    ]
    for shape in shapes:
        for trusted in (False, True):
            read(shape, trusted)
