"""JsonlStore's file names are injective, even on a case-insensitive filesystem.

A conversation's file was ``<id>.jsonl``, so on macOS (case-insensitive by default) ``Chat``
and ``chat`` shared a file: one tenant read and appended to another's history.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import threadline as tl
from tests.stores._helpers import KINDS
from tests.stores._helpers import store_factory
from tests.stores._names import conversation_ids
from threadline.stores import JsonlStore

NAME_MAX = 255  # bytes in one file name on every filesystem JsonlStore runs on


def msgs(tag: str, count: int = 1) -> list[tl.Message]:
    return [tl.user_message(f"{tag} {i}", id=f"{tag}{i}") for i in range(count)]


def _named(cid: str) -> str:
    store = JsonlStore.__new__(JsonlStore)  # only the naming is under test: no directory
    store.directory = Path("nowhere")
    return store.path(cid).name


@given(conversation_ids, conversation_ids)
def test_file_names_differ_even_ignoring_case(cid1: str, cid2: str) -> None:
    if cid1 != cid2:
        assert _named(cid1).casefold() != _named(cid2).casefold(), (cid1, cid2)


@given(conversation_ids, st.lists(st.booleans(), min_size=200, max_size=200))
def test_ids_differing_only_in_case_get_file_names_differing_in_more(
    cid: str, flips: list[bool]
) -> None:
    other = "".join(c.swapcase() if flip else c for c, flip in zip(cid, flips, strict=False))
    if other != cid:
        assert _named(cid).casefold() != _named(other).casefold(), (cid, other)


@pytest.mark.parametrize(
    "cid", ["A" * 200, "aB" * 100, "Z" + "9" * 199, "9" * 200, "a" * 199 + "Q"]
)
def test_file_names_fit_in_name_max(cid: str) -> None:
    assert len(_named(cid).encode()) <= NAME_MAX


@pytest.mark.parametrize("cid", ["A" * 200, "aB" * 100, "Z" + "._:-Q" * 39 + "AAAA"])
def test_every_file_a_write_makes_fits_in_name_max(tmp_path: Path, cid: str) -> None:
    # The temporary files of replace, fork and delete too (they were 262 to 270 bytes).
    store = JsonlStore(tmp_path)
    store.append("source", msgs("s", 2))
    store.fork("source", cid)
    store.replace(cid, msgs("r", 2))
    seen = {path.name for path in tmp_path.iterdir()}
    store.delete(cid)
    assert store.load(cid) == []
    assert not any(name.endswith(".tmp") for name in os.listdir(tmp_path))
    assert max(len(name.encode()) for name in seen) <= NAME_MAX


def test_ids_differing_only_in_case_have_their_own_files(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path)
    store.append("Chat", msgs("upper"))
    store.append("chat", msgs("lower"))
    store.append("CHAT", msgs("shout"))
    names = [path.name for path in tmp_path.iterdir()]
    assert len({name.casefold() for name in names}) == 3, names
    assert store.list_conversations() == ["CHAT", "Chat", "chat"]
    assert store.load("Chat") == msgs("upper")
    assert store.load("CHAT") == msgs("shout")
    store.delete("CHAT")
    store.replace("Chat", msgs("again"))
    assert store.list_conversations() == ["Chat", "chat"]
    assert store.load("chat") == msgs("lower")
    assert store.load("Chat") == msgs("again")


def test_lower_case_ids_keep_their_plain_file_names(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path)
    store.append("support-42", msgs("a"))
    store.append("user:7.x_y", msgs("b"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["support-42.jsonl", "user:7.x_y.jsonl"]
    assert store.path("support-42") == tmp_path / "support-42.jsonl"
    with pytest.raises(tl.ValidationError):
        store.path("../x")


def test_the_documented_file_names() -> None:
    assert _named("chat") == "chat.jsonl"
    assert _named("Chat") == "chat+1.jsonl"  # bit 0: the first character is upper case
    assert _named("userID-7") == "userid-7+1c.jsonl"  # bits 4 and 5: 48, "1c" in base 36
    name = _named("A" * 200)
    assert name.startswith("a" * 200 + "+")
    assert name.endswith(".jsonl")
    assert int(name[201:-6], 36) == 2**200 - 1


@pytest.mark.parametrize("stray", ["chat+01.jsonl", "chat+0.jsonl", "Chat.jsonl", "chat+.jsonl"])
def test_listing_skips_names_the_store_would_not_write(tmp_path: Path, stray: str) -> None:
    # Only an id's own name counts, so no two files list as the same id.
    store = JsonlStore(tmp_path)
    store.append("Chat", msgs("a"))
    (tmp_path / stray).write_bytes(b'{"x":1}\n')
    assert store.list_conversations() == ["Chat"]


@pytest.mark.parametrize("kind", KINDS)
def test_every_store_keeps_layout_words_and_cases_apart(kind: str, tmp_path: Path) -> None:
    store = store_factory(kind, tmp_path)()
    cids = ["conversations", "conv", "conv:conversations", "Conv", "CONV:42", "conv:42", "index"]
    for number, cid in enumerate(cids):
        store.append(cid, msgs(f"m{number}"))
    assert store.list_conversations() == sorted(cids)
    for number, cid in enumerate(cids):
        assert store.load(cid) == msgs(f"m{number}")
