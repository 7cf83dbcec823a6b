"""Conversation ids: the documented rule, and errors that name the id and the rule."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import threadline as tl
from tests.stores._helpers import KINDS
from tests.stores._helpers import store_factory
from threadline.stores import CONVERSATION_ID_PATTERN
from threadline.stores import validate_conversation_id
from threadline.testing._store_kit import INVALID_IDS
from threadline.testing._store_kit import VALID_IDS


@pytest.mark.parametrize("cid", VALID_IDS)
def test_valid_ids_pass_unchanged(cid: str) -> None:
    assert validate_conversation_id(cid) is cid


@pytest.mark.parametrize("cid", INVALID_IDS)
def test_invalid_ids_raise_naming_the_id_and_the_rule(cid: str) -> None:
    with pytest.raises(tl.ValidationError) as caught:
        validate_conversation_id(cid)
    message = str(caught.value)
    assert repr(cid[:57]).rstrip("'") in message
    assert "1 to 200 characters" in message
    assert caught.value.errors[0].path == "conversation_id"


@pytest.mark.parametrize("value", [None, 5, b"abc", ["a"]])
def test_non_strings_are_refused(value: object) -> None:
    with pytest.raises(tl.ValidationError, match="must be a str"):
        validate_conversation_id(value)


def test_the_pattern_is_the_documented_rule() -> None:
    assert CONVERSATION_ID_PATTERN == r"[A-Za-z0-9][A-Za-z0-9._:-]{0,199}"
    assert re.fullmatch(CONVERSATION_ID_PATTERN, "a..b")  # the pattern alone allows it...
    with pytest.raises(tl.ValidationError):
        validate_conversation_id("a..b")  # ...the extra '..' rule does not


def test_a_long_id_is_shortened_in_the_message() -> None:
    with pytest.raises(tl.ValidationError) as caught:
        validate_conversation_id("x" * 5000)
    assert "5000 characters" in str(caught.value)
    assert len(str(caught.value)) < 500


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("cid", ["../escape", "a/b", "..", "/etc/passwd"])
def test_no_store_writes_outside_its_place(kind: str, cid: str, tmp_path: Path) -> None:
    store = store_factory(kind, tmp_path / "inner")()
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    with pytest.raises(tl.ValidationError):
        store.append(cid, [tl.user_message("x")])
    with pytest.raises(tl.ValidationError):
        store.replace(cid, [tl.user_message("x")])
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
