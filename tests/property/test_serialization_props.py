"""Round-trip invariants of the message model and the neutral JSON format."""

from __future__ import annotations

import base64
import json

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

import threadline as tl
from tests.strategies import any_messages
from tests.strategies import conversations
from tests.strategies import file_bytes
from tests.strategies import media_types


def without_replay(messages: list[tl.Message]) -> list[tl.Message]:
    return [m.model_copy(update={"replay": False}) if m.replay else m for m in messages]


@given(conversations())
def test_load_json_inverts_dump_json(messages: list[tl.Message]) -> None:
    assert tl.load_json(tl.dump_json(messages)) == without_replay(messages)


@given(st.lists(any_messages(), min_size=1, max_size=4), st.integers(0, 40))
def test_load_json_with_a_string_bound_reads_the_same(
    messages: list[tl.Message], slack: int
) -> None:
    # Text longer than max_string is read by a validator with the bound on every string field:
    # a bound no string exceeds changes nothing; one below the longest string is refused.
    data = tl.dump_json(messages)
    longest = max(map(len, _strings(json.loads(data))))
    unbounded = tl.load_json(data, limits=tl.Limits.none())
    bounded = tl.load_json(data, limits=tl.Limits(max_string=longest + slack))
    assert bounded == unbounded
    assert repr(bounded) == repr(unbounded)  # the same types too (read-only metadata)
    if longest > 32:  # longer than any field name or tag, which the bound does not cover
        with pytest.raises(tl.ValidationError, match="max_string"):
            tl.load_json(data, limits=tl.Limits(max_string=longest - 1))


def _strings(value: object) -> list[str]:
    """Every string in a JSON document, object keys included."""
    found: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            found.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


@given(conversations())
def test_dump_json_is_stable(messages: list[tl.Message]) -> None:
    data = tl.dump_json(messages)
    assert tl.dump_json(tl.load_json(data)) == data


@given(any_messages())
def test_model_validate_inverts_model_dump(message: tl.Message) -> None:
    expected = message.model_copy(update={"replay": False})
    assert tl.Message.model_validate(message.model_dump(mode="json")) == expected
    assert tl.Message.model_validate(message.model_dump()) == expected
    assert tl.Message.model_validate_json(message.model_dump_json()) == expected


@given(st.lists(any_messages(), max_size=4))
def test_replay_never_appears_in_json(messages: list[tl.Message]) -> None:
    document = json.loads(tl.dump_json(messages))
    for message in document["messages"]:
        assert "replay" not in message
    assert all(not m.replay for m in tl.load_json(tl.dump_json(messages)))


@given(file_bytes, media_types)
def test_bytes_round_trip_as_standard_base64(data: bytes, media_type: str) -> None:
    message = tl.user_message(tl.file_part(data, media_type))
    document = json.loads(tl.dump_json([message]))
    encoded = document["messages"][0]["parts"][0]["data"]
    assert encoded == base64.standard_b64encode(data).decode()
    assert base64.b64decode(encoded, validate=True) == data
    assert tl.load_json(tl.dump_json([message]))[0].parts[0].data == data  # type: ignore[union-attr]


@given(conversations(max_turns=3))
def test_json_schema_accepts_what_dump_json_writes(messages: list[tl.Message]) -> None:
    jsonschema.validate(json.loads(tl.dump_json(messages)), SCHEMA)


@given(conversations(max_turns=3))
def test_bare_list_and_envelope_load_the_same(messages: list[tl.Message]) -> None:
    bare = json.dumps(json.loads(tl.dump_json(messages))["messages"])
    assert tl.load_json(bare) == tl.load_json(tl.dump_json(messages))


SCHEMA = tl.json_schema()
