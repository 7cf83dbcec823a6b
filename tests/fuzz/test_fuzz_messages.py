"""Fuzzing the message model: damaged mappings and JSON raise pydantic's ValidationError only.

``Message.model_validate`` is pydantic's own API, so it raises pydantic's error (a
``ValueError``), never a ``TypeError`` or ``RecursionError``.
"""

from __future__ import annotations

from typing import Any

import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st

import threadline as tl
from tests.fuzz._guard import call_expecting
from tests.fuzz._mutations import json_text, mutated_bytes, mutated_documents, nested
from tests.strategies import any_messages, json_values

EXPECTED = (pydantic.ValidationError,)


@given(any_messages(), st.data())
def test_damaged_mappings(message: tl.Message, data: st.DataObject) -> None:
    # Deeper values overflow the stack (a known bug: see the xfail test below).
    mapping = data.draw(mutated_documents(message.model_dump(mode="json"), too_deep=False))
    call_expecting(EXPECTED, tl.Message.model_validate, mapping)


@given(any_messages(), st.data())
def test_damaged_json(message: tl.Message, data: st.DataObject) -> None:
    text = data.draw(mutated_bytes(message.model_dump_json().encode()))
    call_expecting(EXPECTED, tl.Message.model_validate_json, text)
    document = json_text(data.draw(mutated_documents(message.model_dump(mode="json"))))
    if document is not None:
        call_expecting(EXPECTED, tl.Message.model_validate_json, document)


@given(json_values)
def test_any_json_value(value: Any) -> None:
    call_expecting(EXPECTED, tl.Message.model_validate, value)


def deep_mapping() -> dict[str, Any]:
    return {
        "role": "user",
        "parts": [{"type": "text", "text": "x"}],
        "metadata": {"a": nested(100_000)},
    }


@pytest.mark.xfail(
    raises=RecursionError,
    strict=True,
    reason="_json.check_json_value recurses once per level of a Python value: metadata "
    "nested a few hundred levels deep overflows the stack instead of failing validation",
)
def test_metadata_nested_too_deeply_is_a_validation_error() -> None:
    with pytest.raises(pydantic.ValidationError):
        tl.Message.model_validate(deep_mapping())


@pytest.mark.xfail(
    raises=RecursionError,
    strict=True,
    reason="the same recursion, reached from every threadline function that validates "
    "mappings without limits= (History.restore, load_json and the codecs have limits)",
)
@pytest.mark.parametrize(
    "call",
    [
        lambda m: tl.sanitize_untrusted([m]),
        lambda m: tl.prepare_messages([m]),
        lambda m: tl.History().append(m),
        lambda m: tl.History().extend([m]),
        lambda m: tl.History([m]),
    ],
    ids=["sanitize_untrusted", "prepare_messages", "History.append", "History.extend", "History"],
)
def test_functions_taking_mappings_refuse_deep_nesting(call: Any) -> None:
    with pytest.raises(tl.ValidationError):
        call(deep_mapping())
