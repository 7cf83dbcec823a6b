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
from tests.fuzz._mutations import json_text
from tests.fuzz._mutations import mutated_bytes
from tests.fuzz._mutations import mutated_documents
from tests.fuzz._mutations import nested
from tests.strategies import any_messages
from tests.strategies import json_values

EXPECTED = (pydantic.ValidationError,)


@given(any_messages(), st.data())
def test_damaged_mappings(message: tl.Message, data: st.DataObject) -> None:
    mapping = data.draw(mutated_documents(message.model_dump(mode="json")))
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


def test_a_part_type_nested_too_deeply_is_a_validation_error() -> None:
    # Found by fuzzing: pydantic-core's own error for an unknown tag shows the tag, and showing
    # this one raised RecursionError inside it (reported as "unraisable"). Ours does not.
    mapping = {"role": "user", "parts": [{"type": nested(100_000)}]}
    with pytest.raises(pydantic.ValidationError, match="a part needs a 'type' tag"):
        tl.Message.model_validate(mapping)


def test_metadata_nested_too_deeply_is_a_validation_error() -> None:
    # Found by fuzzing: the JSON value check recursed once per level and overflowed the stack.
    with pytest.raises(pydantic.ValidationError, match="nests deeper than 190 levels"):
        tl.Message.model_validate(deep_mapping())


def test_a_metadata_value_that_contains_itself_is_a_validation_error() -> None:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    with pytest.raises(tl.ValidationError, match="nests deeper"):
        tl.user_message("x", metadata=loop)


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
    # sanitize_untrusted checks Limits.untrusted() first; the others refuse it in validation.
    with pytest.raises(tl.ValidationError, match=r"nests deeper than 190 levels|max_depth=32"):
        call(deep_mapping())
