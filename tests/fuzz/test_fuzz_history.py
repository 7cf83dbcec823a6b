"""Fuzzing History.restore: damaged message mappings raise ValidationError and change nothing."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

import threadline as tl
from tests.fuzz._guard import call_expecting
from tests.fuzz._mutations import mutated_documents
from tests.fuzz._mutations import nested
from tests.strategies import conversations

EXPECTED = (tl.ValidationError,)


@given(conversations(min_turns=1), st.data())
def test_restore_of_damaged_mappings(messages: list[tl.Message], data: st.DataObject) -> None:
    items = json.loads(tl.dump_json(messages))["messages"]
    damaged = data.draw(mutated_documents(items))
    history = tl.History([tl.user_message("before", id="before")])
    snapshot = history.snapshot()

    def restore() -> bool:
        history.restore(damaged)
        return True

    restored = call_expecting(EXPECTED, restore)
    if restored is None:
        assert history.snapshot() is snapshot


def test_restore_of_metadata_nested_too_deeply_is_a_validation_error() -> None:
    item = {"role": "user", "parts": [{"type": "text", "text": "x"}], "metadata": {}}
    item["metadata"] = {"a": nested(100_000)}
    history = tl.History()
    with pytest.raises(tl.ValidationError, match="max_depth"):
        history.restore([item])
    assert len(history) == 0
