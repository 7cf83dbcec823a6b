"""``load_json``'s checked validator (issue 27) against the full path it stands in for.

``load_json`` first reads with a validator that checks, as it reads, everything the full path
checks after validation (role rules, finite numbers and nesting inside JSON values, string
lengths, the reserved blob key); on any problem it runs the full path, whose errors say what
and where. The law: on any input, valid or hostile, both give the same messages, or errors of
the same class with the same paths.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

import threadline as tl
from tests.strategies import any_messages
from tests.strategies import conversations
from threadline import serialization
from threadline._json import EMPTY
from threadline._json import FrozenJsonMap
from threadline._message_fields import ALL_FIELDS
from threadline.testing import hostile

_LIMITS = [None, tl.Limits.none(), tl.Limits.untrusted(), tl.Limits(max_depth=8, max_string=40)]


@contextmanager
def _full_path_only() -> Iterator[None]:
    with mock.patch.object(serialization, "_load_checked", return_value=None):
        yield


def _outcome(text: str | bytes, limits: tl.Limits | None) -> tuple[Any, ...]:
    try:
        messages = tl.load_json(text, limits=limits)
    except tl.ValidationError as error:
        return (type(error), sorted(detail.path for detail in error.errors))
    return ("ok", messages, _maps(messages), _fields_sets(messages))


def _fields_sets(messages: list[tl.Message]) -> list[tuple[frozenset[str], bool]]:
    """Each message's fields set, and whether it is the one shared set (a message given every
    serialized field shares it; ``==`` between messages does not compare fields sets)."""
    return [
        (frozenset(message.model_fields_set), message.model_fields_set is ALL_FIELDS)
        for message in messages
    ]


def _maps(messages: list[tl.Message]) -> list[tuple[type, bool]]:
    """Each metadata map's type, and whether an empty one is the shared ``EMPTY``."""
    out: list[tuple[type, bool]] = []
    for message in messages:
        maps = [message.metadata, *(part.metadata for part in message.parts)]
        out.extend((type(value), not value and value is EMPTY) for value in maps)
    return out


def _same(text: str | bytes, limits: tl.Limits | None) -> tuple[Any, ...]:
    checked = _outcome(text, limits)
    with _full_path_only():
        full = _outcome(text, limits)
    assert checked == full
    return checked


@pytest.mark.slow
@given(conversations(), st.sampled_from(_LIMITS), st.booleans())
def test_valid_histories_load_the_same(
    messages: list[tl.Message], limits: tl.Limits | None, bare: bool
) -> None:
    text = tl.dump_json(messages)
    if bare:
        text = serialization.messages_to_json(messages)
    _same(text, limits)


# Values planted in a JSON value of a message: what JSON cannot carry back, what nests deep,
# what is merely unusual.
_PLANTED = [
    "NaN",
    "Infinity",
    "-Infinity",
    "1e999",
    "-1e400",
    "1" * 400 + ".5",
    "-0.0",
    "0e0",
    "1" * 300,
    "[" * 70 + "]" * 70,
    "[" * 210 + "]" * 210,
    '{"a":' * 40 + "1" + "}" * 40,
    "{}",
    "[]",
    '"\\u00e9"',
    '{"threadline.blob":"k"}',
]
# Where they go: a tool call's arguments, message and part metadata, hook state, provider
# tool input, and the reserved blob key as a metadata key.
_PLACES = ["arguments", "message_metadata", "part_metadata", "state", "input"]


def _document(messages: list[tl.Message]) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(tl.dump_json(messages))
    return document


def _plant(document: dict[str, Any], place: str, index: int) -> bool:
    """Put the marker ``"__planted__"`` at ``place`` in the ``index``-th candidate."""
    spots: list[dict[str, Any]] = []
    for message in document["messages"]:
        if place == "message_metadata":
            spots.append(message["metadata"])
        for part in message["parts"]:
            if place == "part_metadata":
                spots.append(part["metadata"])
            elif place == "arguments" and part["type"] == "tool_call":
                spots.append(part["arguments"])
            elif place == "state" and part["type"] == "hook":
                spots.append(part["state"])
            elif place == "input" and part["type"] == "provider_tool_call":
                part["input"] = "__planted__"
                return True
    if not spots:
        return False
    spots[index % len(spots)]["x"] = "__planted__"
    return True


@pytest.mark.slow
@given(
    st.lists(any_messages(), min_size=1, max_size=4),
    st.sampled_from(_PLACES),
    st.sampled_from(_PLANTED),
    st.integers(0, 10),
    st.sampled_from(_LIMITS),
)
def test_hostile_values_fail_or_load_the_same(
    messages: list[tl.Message], place: str, planted: str, index: int, limits: tl.Limits | None
) -> None:
    document = _document(messages)
    if not _plant(document, place, index):
        return
    text = json.dumps(document).replace('"__planted__"', planted)
    _same(text, limits)


@pytest.mark.slow
@given(
    st.lists(any_messages(), min_size=1, max_size=3),
    st.sampled_from(
        [
            ("role", "developer"),
            ("role", "tool"),
            ("role", "system"),
            ("role", 5),
            ("replay", True),
            ("replay", False),
            ("metadata", {"threadline.blob": "sha256:00"}),
            ("metadata", {"threadline\u002eblob": 1}),
            ("metadata", {"k": [1, {"z": None}]}),
            ("metadata", []),
            ("parts", []),
            ("content", "hi"),
        ]
    ),
    st.integers(0, 5),
)
def test_hostile_messages_fail_or_load_the_same(
    messages: list[tl.Message], change: tuple[str, Any], index: int
) -> None:
    document = _document(messages)
    key, value = change
    document["messages"][index % len(document["messages"])][key] = value
    _same(json.dumps(document), None)
    _same(json.dumps(document["messages"]), tl.Limits.untrusted())


def test_each_hostile_value_fails_as_before() -> None:
    """The checked validator refuses what the full path refuses, with its errors."""
    message = tl.assistant_message(tl.tool_call_part("c1", "f", {"a": 1}))
    text = tl.dump_json([message]).decode()
    for planted in ("NaN", "-Infinity", "1e999", "[" * 70 + "]" * 70):
        outcome = _same(text.replace('{"a":1}', '{"a":' + planted + "}"), None)
        assert outcome[0] != "ok", planted
    loaded = _same(text.replace('{"a":1}', '{"a":-0.0,"b":' + "9" * 500 + "}"), None)
    value = loaded[1][0].parts[0].arguments["a"]
    assert value == 0
    assert math.copysign(1, value) == -1


def test_metadata_stays_read_only_and_shared() -> None:
    message = tl.user_message("hi", metadata={"k": {"n": [1]}})
    loaded = tl.load_json(tl.dump_json([message, tl.user_message("no metadata")]))
    assert type(loaded[0].metadata) is FrozenJsonMap
    assert loaded[1].metadata is EMPTY
    assert loaded[1].parts[0].metadata is EMPTY
    with pytest.raises(TypeError, match="read-only"):
        loaded[0].metadata["k"] = 1


def test_the_hostile_builders_load_the_same() -> None:
    for build in (hostile.misplaced, hostile.provider_pairs, hostile.reasoning_items):
        _same(tl.dump_json(build(50)), tl.Limits.untrusted())
    _same(hostile.invalid_messages(20), None)


def test_tool_calls_with_raw_arguments_load_the_same() -> None:
    """The checked validator takes only calls without raw arguments; the others (invalid
    calls, kept with their text) load through the full path, and a call with both is refused."""
    invalid = tl.assistant_message(tl.tool_call_part("c1", "f", "not json"))
    text = tl.dump_json([invalid]).decode()
    loaded = _same(text, None)
    assert loaded[1] == [invalid]
    both = text.replace('"arguments":{}', '"arguments":{"a":1}')
    assert _same(both, None)[0] is tl.ValidationError


# Base64 a file part's data may hold: what the full path reads (standard or URL-safe alphabet,
# padded, with or without canonical trailing bits) and what it refuses (no or wrong padding,
# mixed or foreign characters, escapes that spell base64 characters).
_BASE64 = [
    "",
    "aGk=",
    "aGk",
    "aGk==",
    "aGl=",
    "+/+/",
    "-_-_",
    "+/-_",
    "YQ==YQ==",
    "aG k=",
    "aGk=\\n",
    "\\u0061Gk=",
    "aGk\\u003d",
    "====",
    "=aGk",
    "\u00e9aGk",
]


@pytest.mark.slow
@given(
    st.lists(any_messages(), min_size=1, max_size=3),
    st.sampled_from(_BASE64),
    st.integers(0, 5),
    st.sampled_from(_LIMITS),
)
def test_file_bytes_load_the_same(
    messages: list[tl.Message], data: str, index: int, limits: tl.Limits | None
) -> None:
    """File bytes are decoded by pydantic-core on the checked path, binascii on the full one."""
    document = _document(messages)
    files = [
        part
        for message in document["messages"]
        for part in message["parts"]
        if part["type"] == "file" and part["data"] is not None
    ]
    if not files:
        return
    files[index % len(files)]["data"] = "__planted__"
    _same(json.dumps(document).replace("__planted__", data), limits)


def test_each_base64_form_loads_as_before() -> None:
    message = tl.user_message("see", tl.file_part(b"hi", "image/png"))
    text = tl.dump_json([message]).decode()
    assert '"data":"aGk="' in text
    outcomes = {data: _same(text.replace("aGk=", data), None)[0] for data in _BASE64}
    assert outcomes["aGk="] == "ok"
    assert outcomes["-_-_"] == "ok"
    assert outcomes["aGl="] == "ok"  # non-canonical trailing bits: read as before
    assert outcomes["aGk"] is tl.ValidationError  # unpadded: refused as before
    assert outcomes["aGk=\\n"] is tl.ValidationError


def test_fields_sets_are_shared_only_when_complete() -> None:
    """The checked path shares the fields set after validation, as ``model_post_init`` does."""
    full = tl.dump_json([tl.user_message("hi", id="m1")]).decode()
    loaded = _same(full, None)
    assert loaded[3] == [(frozenset(ALL_FIELDS), True)]
    partial = '[{"id": "m1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]'
    loaded = _same(partial, None)
    assert loaded[3] == [(frozenset({"id", "role", "parts"}), False)]
    loaded = _same(full.replace('"created_at":null', '"created_at":null,"replay":false'), None)
    assert loaded[3] == [(frozenset({*ALL_FIELDS, "replay"}), False)]


def test_part_counts_are_enforced_as_before() -> None:
    messages = [tl.user_message("a", "b"), tl.assistant_message("c", "d", "e")]
    text = tl.dump_json(messages)
    for maximum in (1, 4, 5, 6):
        outcome = _same(text, tl.Limits(max_parts=maximum))
        assert (outcome[0] == "ok") == (maximum >= 5)
    assert _same(text, tl.Limits(max_messages=1))[0] is tl.LimitExceededError
