"""Fuzzing with lone surrogates: every entry point refuses them with ValidationError.

A surrogate code point is put into a random string or object key of a valid history (as the
Python value ``json.loads`` gives for ``"\\ud800"``, and as that escape in JSON text). Each
entry point must raise ``threadline.ValidationError`` (pydantic's own error for the pydantic
API), never another exception, and never accept it: nothing may come out with U+FFFD in its
place.
"""

from __future__ import annotations

import json
from typing import Any

import pydantic
from hypothesis import assume
from hypothesis import given
from hypothesis import strategies as st

import threadline as tl
from tests.fuzz._guard import call_expecting
from tests.strategies import conversations
from threadline.codecs import codec_names
from threadline.codecs import get_codec
from threadline.sealing import seal
from threadline.sealing import verify
from threadline.sealing import verify_prefix

KEY = bytes(range(32))
surrogates = st.integers(0xD800, 0xDFFF).map(chr)


def _places(document: Any) -> list[tuple[Any, Any, bool]]:
    """Every ``(container, key, is_key)`` holding a string or a key, in document order."""
    found: list[tuple[Any, Any, bool]] = []
    stack = [document]
    while stack:
        value = stack.pop()
        members = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in list(members):
            if isinstance(value, dict):
                found.append((value, key, True))
            if isinstance(item, str):
                found.append((value, key, False))
            elif isinstance(item, (dict, list)):
                stack.append(item)
    return found


@st.composite
def poisoned(draw: st.DrawFn, document: Any) -> Any:
    """``document`` (JSON values, copied) with a surrogate put into one string or key."""
    copy = json.loads(json.dumps(document))
    places = _places(copy)
    container, key, is_key = draw(st.sampled_from(places))
    bad = draw(surrogates)
    at = draw(st.integers(0, len(key if is_key else container[key])))
    if is_key:
        new = key[:at] + bad + key[at:]
        container[new] = container.pop(key)
    else:
        container[key] = container[key][:at] + bad + container[key][at:]
    return copy


def refused(expected: tuple[type[BaseException], ...], function: Any, *args: Any) -> None:
    """``function(*args)`` raises one of ``expected``: never another error, never a result
    (a result would hold the surrogate, or a U+FFFD put in its place)."""
    result = call_expecting(expected, function, *args)
    assert result is None, f"accepted: {result!r}"


@given(conversations(), st.data())
def test_mappings_with_one_are_refused_everywhere(
    messages: list[tl.Message], data: st.DataObject
) -> None:
    dumped = [message.model_dump(mode="json") for message in messages]
    assume(dumped)
    mappings = data.draw(poisoned(dumped))
    expected = (tl.ValidationError,)
    refused(expected, tl.sanitize_untrusted, mappings)
    refused(expected, lambda m: tl.History().extend(m), mappings)
    refused(expected, lambda m: tl.History().restore(m), mappings)
    refused(expected, lambda m: seal(m, KEY, conversation_id="c"), mappings)
    token = seal(messages, KEY, conversation_id="c")
    refused(expected, lambda m: verify(m, token, KEY, conversation_id="c"), mappings)
    refused(expected, lambda m: verify_prefix(m, token, KEY, conversation_id="c"), mappings)
    (index,) = [i for i, (a, b) in enumerate(zip(mappings, dumped, strict=True)) if a != b]
    refused((pydantic.ValidationError,), tl.Message.model_validate, mappings[index])
    refused(expected, lambda m: tl.History().append(m), mappings[index])


@given(conversations(), st.data())
def test_json_text_with_one_is_refused(messages: list[tl.Message], data: st.DataObject) -> None:
    document = json.loads(tl.dump_json(messages))
    bad = data.draw(poisoned(document))
    escaped = json.dumps(bad)  # "\ud800" as an escape without its pair
    raw = json.dumps(bad, ensure_ascii=False)  # the surrogate itself, in a str
    for text in (escaped, escaped.encode(), raw, raw.encode("utf-8", "surrogatepass")):
        refused((tl.ValidationError,), tl.load_json, text)


@given(conversations(), st.data(), st.sampled_from(codec_names()))
def test_codec_payloads_with_one_are_refused(
    messages: list[tl.Message], data: st.DataObject, name: str
) -> None:
    codec = get_codec(name)
    payload = codec.encode(messages)
    # JSON values only (Bedrock keeps file bytes as bytes: here as text, which it refuses too).
    document = json.loads(json.dumps(payload, default=lambda b: b.decode("latin-1")))
    refused((tl.ValidationError,), codec.decode, data.draw(poisoned(document)))
