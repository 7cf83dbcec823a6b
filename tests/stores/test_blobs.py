"""Blobs: large file bytes leave the message JSON, come back intact, and are checked."""

from __future__ import annotations

import base64
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import threadline as tl
from tests.strategies import conversations
from tests.support import examples
from threadline.stores import FileBlobStore
from threadline.stores import JsonlStore
from threadline.stores import SQLiteBlobStore
from threadline.stores import SQLiteStore
from threadline.stores import Store
from threadline.stores.blobs import BLOB_METADATA_KEY
from threadline.stores.blobs import BLOB_URL_PREFIX
from threadline.stores.blobs import blob_key
from threadline.stores.blobs import offload_files
from threadline.stores.blobs import scoped_blob_key

BIG = bytes(range(256)) * 40  # 10,240 bytes
OTHER = b"\xfb\xff" * 6000
THRESHOLD = 4096


def raw_text(store: Store) -> bytes:
    """Everything the store wrote for messages, as bytes (files or rows)."""
    if isinstance(store, JsonlStore):
        return b"".join(p.read_bytes() for p in store.directory.glob("*.jsonl"))
    assert isinstance(store, SQLiteStore)
    with sqlite3.connect(store.path) as connection:
        rows = connection.execute("SELECT message FROM threadline_messages").fetchall()
    return "".join(row[0] for row in rows).encode()


def jsonl_with_files(root: Path) -> JsonlStore:
    return JsonlStore(root / "j", blobs=FileBlobStore(root / "blobs"), blob_threshold=THRESHOLD)


def jsonl_with_sqlite_blobs(root: Path) -> Store:
    blobs = SQLiteBlobStore(root / "blobs.db")
    return JsonlStore(root / "j", blobs=blobs, blob_threshold=THRESHOLD)


def sqlite_with_table(root: Path) -> Store:
    path = root / "all.db"
    return SQLiteStore(path, blobs=SQLiteBlobStore(path), blob_threshold=THRESHOLD)


def sqlite_with_files(root: Path) -> Store:
    return SQLiteStore(root / "m.db", blobs=FileBlobStore(root / "blobs"), blob_threshold=THRESHOLD)


STORES = [jsonl_with_files, jsonl_with_sqlite_blobs, sqlite_with_table, sqlite_with_files]


def with_files() -> list[tl.Message]:
    return [
        tl.user_message(
            "look",
            tl.file_part(BIG, "image/png", filename="a.png", metadata={"k": 1}),
            tl.file_part(b"small", "image/png"),
            tl.file_part("https://example.com/x.png", "image/png"),
            id="u1",
        ),
        tl.assistant_message(tl.tool_call_part("c1", "render", {}), id="a1"),
        tl.tool_message(
            tl.tool_result_part("c1", ["done", tl.file_part(OTHER, "application/pdf")]), id="t1"
        ),
        tl.assistant_message("same picture again", tl.file_part(BIG, "image/png"), id="a2"),
    ]


@pytest.mark.parametrize("make", STORES)
def test_bytes_round_trip_and_stay_out_of_the_json(
    make: Callable[[Path], Store], tmp_path: Path
) -> None:
    store = make(tmp_path)
    messages = with_files()
    store.append("c", messages[:2])
    store.append("c", messages[2:])
    assert store.load("c") == messages
    raw = raw_text(store)
    for data in (BIG, OTHER):
        assert base64.b64encode(data)[:200] not in raw
        assert f"{BLOB_URL_PREFIX}{scoped_blob_key('c', data)}".encode() in raw
    assert base64.b64encode(b"small") in raw  # at or under the threshold: inline
    store.replace("c", messages[::-1])
    assert store.load("c") == messages[::-1]
    assert base64.b64encode(BIG)[:200] not in raw_text(store)


def test_the_threshold_is_exclusive(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path / "j", blobs=FileBlobStore(tmp_path / "b"), blob_threshold=10)
    store.append(
        "c", [tl.user_message(tl.file_part(b"x" * 10, "a/b"), tl.file_part(b"y" * 11, "a/b"))]
    )
    raw = raw_text(store)
    assert base64.b64encode(b"x" * 10) in raw
    assert base64.b64encode(b"y" * 11) not in raw


def test_same_bytes_are_stored_once_per_conversation(tmp_path: Path) -> None:
    blobs = FileBlobStore(tmp_path / "blobs")
    store = JsonlStore(tmp_path / "j", blobs=blobs, blob_threshold=THRESHOLD)
    store.append("c", with_files())  # BIG twice, OTHER once
    store.append("c", with_files())
    store.append("d", with_files())
    files = sorted(p for p in (tmp_path / "blobs").rglob("*") if p.is_file())
    keys = [scoped_blob_key(c, data) for c in ("c", "d") for data in (BIG, OTHER)]
    assert [p.name for p in files] == sorted(key[7:] for key in keys)
    key = scoped_blob_key("c", BIG)
    stored = (tmp_path / "blobs" / key[7:9] / key[7:]).read_bytes()
    assert stored.endswith(BIG)
    assert blob_key(stored) == key


def test_offloading_does_not_touch_the_callers_messages(tmp_path: Path) -> None:
    messages = with_files()
    snapshot = [m.model_copy() for m in messages]
    offloaded = offload_files(messages, FileBlobStore(tmp_path), THRESHOLD, "c")
    assert messages == snapshot
    assert offloaded[1] is messages[1]  # nothing to move: the same object
    key = scoped_blob_key("c", BIG)
    assert offloaded[0].parts[1].url == BLOB_URL_PREFIX + key  # type: ignore[union-attr]
    assert offloaded[0].parts[1].metadata == {"k": 1, BLOB_METADATA_KEY: key}


def test_a_store_opened_without_its_blob_store_shows_references(tmp_path: Path) -> None:
    jsonl_with_files(tmp_path).append("c", with_files()[:1])
    part = JsonlStore(tmp_path / "j").load("c")[0].parts[1]
    assert isinstance(part, tl.FilePart)
    assert part.data is None
    assert part.url == BLOB_URL_PREFIX + scoped_blob_key("c", BIG)


@pytest.mark.parametrize("kind", ["file", "sqlite"])
def test_corrupt_blobs_are_detected(kind: str, tmp_path: Path) -> None:
    key = blob_key(BIG)
    if kind == "file":
        blobs: FileBlobStore | SQLiteBlobStore = FileBlobStore(tmp_path)
        blobs.put(BIG)
        (tmp_path / key[7:9] / key[7:]).write_bytes(BIG[:-1] + b"!")
    else:
        blobs = SQLiteBlobStore(tmp_path / "b.db")
        blobs.put(BIG)
        with sqlite3.connect(tmp_path / "b.db") as connection:
            connection.execute("UPDATE threadline_blobs SET data = x'00'")
    with pytest.raises(tl.StoreError, match="is corrupt"):
        blobs.get(key)


@pytest.mark.parametrize("make", [FileBlobStore, lambda p: SQLiteBlobStore(p / "b.db")])
def test_blob_stores_refuse_keys_that_are_not_content_addresses(
    make: Callable[[Path], FileBlobStore | SQLiteBlobStore], tmp_path: Path
) -> None:
    blobs = make(tmp_path)
    for bad in ("../../etc/passwd", "sha256:" + "A" * 64, "sha256:abc", "md5:" + "0" * 32):
        with pytest.raises(tl.StoreError, match="is not a blob key"):
            blobs.get(bad)
    with pytest.raises(KeyError):
        blobs.get(blob_key(b"never stored"))
    assert blobs.put(b"abc") == blob_key(b"abc") == blobs.put(b"abc")
    assert blobs.get(blob_key(b"abc")) == b"abc"


@pytest.mark.parametrize("key", ["sha256:../../secret", "../secret"])
def test_a_forged_reference_cannot_read_outside_the_blob_store(key: str, tmp_path: Path) -> None:
    store = jsonl_with_files(tmp_path)
    (tmp_path / "secret").write_bytes(b"secret")
    forged = tl.FilePart(
        url=BLOB_URL_PREFIX + key, media_type="image/png", metadata={BLOB_METADATA_KEY: key}
    )
    with pytest.raises(tl.ValidationError, match="reserved"):
        store.append("c", [tl.user_message(forged)])
    JsonlStore(tmp_path / "j").append("c", [tl.user_message(forged)])  # past the check
    if key.startswith("sha256:"):
        with pytest.warns(tl.StoreRecoveryWarning, match="is not a blob key"):
            (message,) = store.load("c")
        assert isinstance(message.parts[0], tl.TextPart)
    else:  # not even shaped like a reference: it comes back as stored
        assert store.load("c")[0].parts == (forged,)


def test_parts_that_look_like_references_round_trip_unchanged(tmp_path: Path) -> None:
    store = jsonl_with_files(tmp_path)
    messages = [
        tl.user_message(tl.file_part(BLOB_URL_PREFIX + "sha256:" + "0" * 64, "image/png")),
        tl.user_message(tl.file_part("https://example.com/a.png", "image/png", metadata={"k": 1})),
    ]
    store.append("c", messages)
    assert store.load("c") == messages
    # The reserved key itself is refused (tests/stores/test_blob_scoping.py).
    with pytest.raises(tl.ValidationError, match="reserved"):
        store.append(
            "c", [tl.user_message(tl.file_part(BIG, "a/b", metadata={BLOB_METADATA_KEY: "mine"}))]
        )


def test_blobs_are_written_durably_and_atomically(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    FileBlobStore(tmp_path).put(BIG)
    assert len(synced) >= 2  # the blob's file, then its directory
    assert not list(tmp_path.rglob(".tmp-*"))


@pytest.mark.parametrize("make", [jsonl_with_files, sqlite_with_table])
@settings(max_examples=examples(25), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(messages=conversations(min_turns=1), threshold=st.sampled_from([0, 8, 40]))
def test_any_conversation_round_trips_through_blobs(
    make: Callable[[Path], Store], tmp_path: Path, messages: list[tl.Message], threshold: int
) -> None:
    store = make(tmp_path)
    store.blob_threshold = threshold  # type: ignore[attr-defined]
    store.replace("c", messages)
    expected = [m.model_copy(update={"replay": False}) if m.replay else m for m in messages]
    assert store.load("c") == expected
