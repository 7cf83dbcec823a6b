"""Stored data someone edited by hand: a clear StoreError or a StoreRecoveryWarning, never a
raw Python error and never a silent load of a damaged line."""

from __future__ import annotations

import sqlite3
import warnings
from pathlib import Path

import pytest

import threadline as tl
from threadline.stores import JsonlStore
from threadline.stores import SQLiteStore


def msgs(tag: str, count: int) -> list[tl.Message]:
    return [tl.user_message(f"{tag} {i}", id=f"{tag}{i}") for i in range(count)]


# ---------------------------------------------------------------------------------------------
# SQLiteStore: a seq the next append cannot follow


@pytest.mark.parametrize("seq", [2**63 - 1, 2**63 - 2, "x", 1.5, b"\x01"])
def test_a_tampered_seq_is_a_store_error_naming_the_conversation(
    tmp_path: Path, seq: object
) -> None:
    path = tmp_path / "threads.db"
    with SQLiteStore(path) as store:
        store.append("c-1", msgs("a", 1))
        with sqlite3.connect(path) as connection:
            connection.execute("UPDATE threadline_messages SET seq = ?", (seq,))
        with pytest.raises(tl.StoreError, match=r"'c-1'.*\bseq\b") as caught:
            store.append("c-1", msgs("b", 2))
        assert "OverflowError" not in str(caught.value)
        assert store.load("c-1") == msgs("a", 1)  # nothing was appended
        store.append("other", msgs("o", 1))  # other conversations carry on
        assert store.load("other") == msgs("o", 1)


def test_the_largest_seq_still_takes_one_more_message(tmp_path: Path) -> None:
    path = tmp_path / "threads.db"
    with SQLiteStore(path) as store:
        store.append("c", msgs("a", 1))
        with sqlite3.connect(path) as connection:
            connection.execute("UPDATE threadline_messages SET seq = ?", (2**63 - 2,))
        store.append("c", msgs("b", 1))
        assert store.load("c") == msgs("a", 1) + msgs("b", 1)


# ---------------------------------------------------------------------------------------------
# JsonlStore: a batch line whose closing ']' was damaged


@pytest.fixture
def store(tmp_path: Path) -> JsonlStore:
    return JsonlStore(tmp_path)


def _damage_line(path: Path, number: int, old: bytes, new: bytes) -> None:
    lines = path.read_bytes().split(b"\n")
    assert lines[number - 1].endswith(old)
    lines[number - 1] = lines[number - 1][: -len(old)] + new
    path.write_bytes(b"\n".join(lines))


@pytest.mark.parametrize("damage", [b"}", b" ", b",", b"\x00"])
def test_a_damaged_batch_line_before_the_last_is_an_error(store: JsonlStore, damage: bytes) -> None:
    store.append("c", msgs("a", 2))
    store.append("c", msgs("b", 1))
    _damage_line(store.directory / "c.jsonl", 1, b"]", damage)
    with pytest.raises(tl.StoreError, match=r"c\.jsonl:1: the line is not JSON"):
        store.load("c")


@pytest.mark.parametrize("damage", [b"}", b" ", b",", b"\x00"])
def test_a_damaged_last_batch_line_is_skipped_like_a_torn_one(
    store: JsonlStore, damage: bytes
) -> None:
    store.append("c", msgs("a", 1))
    store.append("c", msgs("b", 3))
    _damage_line(store.directory / "c.jsonl", 2, b"]", damage)
    with pytest.warns(tl.StoreRecoveryWarning, match=r"c\.jsonl:2: skipped"):
        assert store.load("c") == msgs("a", 1)
    with pytest.warns(tl.StoreRecoveryWarning, match=r"c\.jsonl:2: removed"):
        store.append("c", msgs("d", 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert store.load("c") == msgs("a", 1) + msgs("d", 1)


def test_a_damaged_opening_bracket_is_an_error_too(store: JsonlStore) -> None:
    store.append("c", msgs("a", 2))
    store.append("c", msgs("b", 1))
    path = store.directory / "c.jsonl"
    data = path.read_bytes()
    path.write_bytes(b"{" + data[1:])
    with pytest.raises(tl.StoreError, match=r"c\.jsonl:1: the line is not JSON"):
        store.load("c")
