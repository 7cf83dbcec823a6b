"""Blob references come only from the store, and resolve only in their own conversation.

Issue 19, item 5: a client mapping carrying the reference marks made conv-B load conv-A's file,
and a reference to a missing blob made the whole conversation unloadable.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings

import threadline as tl
from tests.stores.test_blobs import BIG
from tests.stores.test_blobs import STORES
from tests.stores.test_blobs import THRESHOLD
from tests.stores.test_blobs import jsonl_with_files
from tests.stores.test_blobs import with_files
from tests.strategies import conversations
from tests.support import examples
from threadline.limits import Limits
from threadline.stores import FileBlobStore
from threadline.stores import JsonlStore
from threadline.stores import SQLiteStore
from threadline.stores import Store
from threadline.stores.blobs import BLOB_METADATA_KEY
from threadline.stores.blobs import BLOB_URL_PREFIX
from threadline.stores.blobs import blob_key

SECRET = b"conv-A's private scan " * 500  # 11,000 bytes: over THRESHOLD, so it goes to a blob
MISSING_KEY = "threadline.missing_blob"
RESERVED_PATH = f"[{BLOB_METADATA_KEY!r}]"


def without_blobs(store: Store) -> Store:
    """The same messages, opened without the blob store: references load as they are stored."""
    if isinstance(store, JsonlStore):
        return JsonlStore(store.directory)
    assert isinstance(store, SQLiteStore)
    return SQLiteStore(store.path)


def delete_every_blob(root: Path) -> None:
    """Lose every blob the STORES of test_blobs wrote (files, or rows of a blob table)."""
    if (root / "blobs").exists():
        shutil.rmtree(root / "blobs")
    for database in root.glob("*.db"):
        with sqlite3.connect(database) as connection:
            tables = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if ("threadline_blobs",) in tables.fetchall():
                connection.execute("DELETE FROM threadline_blobs")


def reference(store: Store, conversation_id: str) -> tl.FilePart:
    """The reference part the store wrote for the first file of the conversation."""
    for message in without_blobs(store).load(conversation_id):
        for part in message.parts:
            if isinstance(part, tl.FilePart) and BLOB_METADATA_KEY in part.metadata:
                return part
    raise AssertionError(f"no reference in {conversation_id!r}")


def forged_part(key: str) -> tl.FilePart:
    return tl.FilePart(
        url=BLOB_URL_PREFIX + key, media_type="application/pdf", metadata={BLOB_METADATA_KEY: key}
    )


def forged_mapping(key: str) -> dict[str, Any]:
    part = {"type": "file", "url": BLOB_URL_PREFIX + key, "media_type": "application/pdf"}
    return {"role": "user", "parts": [{**part, "metadata": {BLOB_METADATA_KEY: key}}]}


def holds_bytes(messages: list[tl.Message], data: bytes) -> bool:
    for message in messages:
        for part in message.parts:
            items = part.content if isinstance(part, tl.ToolResultPart) else (part,)
            if any(isinstance(item, tl.FilePart) and item.data == data for item in items):
                return True
    return False


def store_secret(store: Store) -> str:
    """conv-A stores a file; returns the key its reference names (what an attacker would use)."""
    store.append("conv-A", [tl.user_message("my scan", tl.file_part(SECRET, "application/pdf"))])
    key = reference(store, "conv-A").metadata[BLOB_METADATA_KEY]
    assert isinstance(key, str)
    return key


@pytest.mark.parametrize("make", STORES)
def test_a_client_mapping_cannot_make_one_conversation_load_anothers_file(
    make: Callable[[Path], Store], tmp_path: Path
) -> None:
    store = make(tmp_path)
    key = store_secret(store)
    history = tl.History().bind(store, "conv-B")
    refused: tl.ValidationError | None = None
    for forged_key in (key, blob_key(SECRET)):  # the stored reference, and the bytes' hash
        try:
            history.append(forged_mapping(forged_key), limits=Limits.untrusted())
        except tl.ValidationError as error:
            refused = error
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tl.StoreRecoveryWarning)
        assert not holds_bytes(store.load("conv-B"), SECRET), "conv-B loaded conv-A's file"
    assert refused is not None
    assert [detail.path for detail in refused.errors] == [
        f"message.parts[0].metadata{RESERVED_PATH}"
    ]
    assert len(history) == 0
    assert store.load("conv-B") == []
    assert holds_bytes(store.load("conv-A"), SECRET)


@pytest.mark.parametrize("make", STORES)
@pytest.mark.parametrize("which", ["the stored reference", "the bytes' hash"])
def test_a_reference_that_slips_into_another_conversation_never_resolves(
    make: Callable[[Path], Store], which: str, tmp_path: Path
) -> None:
    store = make(tmp_path)
    key = store_secret(store) if which == "the stored reference" else blob_key(SECRET)
    if which == "the bytes' hash":
        store_secret(store)
    # Written past every check: a tampered file, or a writer that had no blob store.
    without_blobs(store).append("conv-B", [tl.user_message("hi", id="b0")])
    without_blobs(store).append("conv-B", [tl.user_message(forged_part(key), id="b1")])
    with pytest.warns(tl.StoreRecoveryWarning) as caught:
        loaded = store.load("conv-B")
    assert not holds_bytes(loaded, SECRET), "conv-B loaded conv-A's file"
    assert loaded[0] == tl.user_message("hi", id="b0")
    (placeholder,) = loaded[1].parts
    assert isinstance(placeholder, tl.TextPart)
    assert placeholder.text == "[file unavailable: application/pdf]"
    assert placeholder.metadata[MISSING_KEY] == {
        "key": key,
        "media_type": "application/pdf",
        "filename": None,
    }
    (warning,) = caught
    assert "conversation 'conv-B'" in str(warning.message)
    assert f"message 1 ('b1') refers to blob '{key}'" in str(warning.message)
    assert holds_bytes(store.load("conv-A"), SECRET)


def test_a_conversation_file_copied_under_another_id_does_not_read_the_originals_blobs(
    tmp_path: Path,
) -> None:
    store = jsonl_with_files(tmp_path)
    store_secret(store)
    shutil.copy(store.path("conv-A"), store.path("conv-B"))
    with pytest.warns(tl.StoreRecoveryWarning, match="not stored for this conversation"):
        assert not holds_bytes(store.load("conv-B"), SECRET)
    # Moving a conversation the supported way (load, then write) stores its files anew.
    store.replace("conv-C", store.load("conv-A"))
    assert holds_bytes(store.load("conv-C"), SECRET)


@pytest.mark.parametrize("make", STORES)
def test_a_store_with_blobs_refuses_messages_carrying_the_reserved_key(
    make: Callable[[Path], Store], tmp_path: Path
) -> None:
    store = make(tmp_path)
    store.append("c", [tl.user_message("before", id="m0")])
    cases = {
        "messages[0].parts[0].metadata": tl.user_message(forged_part(blob_key(SECRET))),
        "messages[0].parts[1].metadata": tl.user_message(
            tl.file_part(BIG, "image/png"),
            tl.file_part(BIG, "image/png", metadata={BLOB_METADATA_KEY: "mine"}),
        ),
        "messages[0].metadata": tl.user_message("x", metadata={BLOB_METADATA_KEY: "k"}),
        "messages[0].parts[0].content[1].metadata": tl.tool_message(
            tl.tool_result_part("c1", ["done", forged_part(blob_key(SECRET))])
        ),
    }
    for path, message in cases.items():
        for write in (store.append, store.replace):
            with pytest.raises(tl.ValidationError) as info:
                write("c", [message])
            assert [detail.path for detail in info.value.errors] == [path + RESERVED_PATH]
            assert "conversation 'c'" in str(info.value)
    assert store.load("c") == [tl.user_message("before", id="m0")]
    # Refused before any blob was written (the second case also holds a file to offload).
    assert not holds_bytes(store.load("c"), BIG)


@pytest.mark.parametrize("make", STORES)
def test_a_missing_blob_loads_as_a_placeholder_and_the_rest_loads(
    make: Callable[[Path], Store], tmp_path: Path
) -> None:
    store = make(tmp_path)
    messages = with_files()
    store.append("c", messages)
    delete_every_blob(tmp_path)
    with pytest.warns(tl.StoreRecoveryWarning) as caught:
        loaded = store.load("c")
    text = [str(warning.message) for warning in caught]
    assert len(text) == 3  # BIG twice (messages 0 and 3) and OTHER once (inside a result)
    assert "conversation 'c'" in text[0]
    assert "message 0 ('u1') refers to blob 'sha256:" in text[0]
    assert "message 2 ('t1')" in text[1]
    assert "message 3 ('a2')" in text[2]
    assert all("does not hold" in line for line in text)
    assert loaded[1] == messages[1]
    first = loaded[0].parts
    assert first[0] == messages[0].parts[0]
    assert first[2:] == messages[0].parts[2:]
    assert isinstance(first[1], tl.TextPart)
    assert first[1].text == "[file unavailable: image/png 'a.png']"
    assert first[1].metadata["k"] == 1  # the file's own metadata is kept
    assert first[1].metadata[MISSING_KEY]["filename"] == "a.png"
    result = loaded[2].parts[0]
    assert isinstance(result, tl.ToolResultPart)
    assert not isinstance(result.content, str)
    assert result.content[0] == tl.TextPart(text="done")
    assert result.content[1] == tl.TextPart(
        text="[file unavailable: application/pdf]",
        metadata={MISSING_KEY: result.content[1].metadata[MISSING_KEY]},
    )
    # Writing the conversation back keeps the placeholders, and it then loads quietly.
    store.replace("c", loaded)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert store.load("c") == loaded


@pytest.mark.parametrize("key", ["sha256:../../secret", "sha256:" + "A" * 64])
def test_a_reference_whose_key_is_not_a_blob_key_loads_as_a_placeholder(
    key: str, tmp_path: Path
) -> None:
    store = jsonl_with_files(tmp_path)
    (tmp_path / "secret").write_bytes(b"secret")
    JsonlStore(tmp_path / "j").append("c", [tl.user_message(forged_part(key))])
    with pytest.warns(tl.StoreRecoveryWarning, match="which is not a blob key"):
        (message,) = store.load("c")
    assert message.parts[0] == tl.TextPart(
        text="[file unavailable: application/pdf]",
        metadata={MISSING_KEY: {"key": key, "media_type": "application/pdf", "filename": None}},
    )


def test_a_corrupt_blob_is_still_a_store_error(tmp_path: Path) -> None:
    store = jsonl_with_files(tmp_path)
    store.append("c", [tl.user_message(tl.file_part(BIG, "image/png"))])
    (path,) = (p for p in (tmp_path / "blobs").rglob("*") if p.is_file())
    path.write_bytes(path.read_bytes()[:-1] + b"!")
    with pytest.raises(tl.StoreError, match="is corrupt"):
        store.load("c")


def test_the_same_file_is_stored_once_per_conversation(tmp_path: Path) -> None:
    blobs = FileBlobStore(tmp_path / "blobs")
    store = JsonlStore(tmp_path / "j", blobs=blobs, blob_threshold=THRESHOLD)
    twice = [
        tl.user_message(tl.file_part(BIG, "image/png")),
        tl.user_message(tl.file_part(BIG, "a/b")),
    ]
    store.append("c", twice)
    store.append("c", twice)
    assert len([p for p in (tmp_path / "blobs").rglob("*") if p.is_file()]) == 1
    store.append("d", twice)
    assert len([p for p in (tmp_path / "blobs").rglob("*") if p.is_file()]) == 2
    assert reference(store, "c").url != reference(store, "d").url


def test_scoped_keys_name_the_blob_the_store_wrote(tmp_path: Path) -> None:
    from threadline.stores.blobs import scoped_blob_key

    store = jsonl_with_files(tmp_path)
    store.append("c", [tl.user_message(tl.file_part(BIG, "image/png"))])
    assert reference(store, "c").url == BLOB_URL_PREFIX + scoped_blob_key("c", BIG)
    assert scoped_blob_key("c", BIG) != blob_key(BIG)
    # The header is length-prefixed: no id and bytes can pose as another id and other bytes.
    assert scoped_blob_key("a", b"\x00b") != scoped_blob_key("a\x00", b"b")


# ---------------------------------------------------------------------------------------------
# The entry points that read outside data refuse the reserved key; sanitize_untrusted drops it.


def _client_messages(key: str) -> list[dict[str, Any]]:
    call = {"type": "tool_call", "id": "c1", "name": "f", "arguments": {}}
    forged = forged_mapping(key)["parts"][0]
    result = {
        "type": "tool_result",
        "call_id": "c1",
        "content": [{"type": "text", "text": "ok"}, forged],
    }
    return [
        {
            "role": "user",
            "parts": [{"type": "text", "text": "hi"}],
            "metadata": {BLOB_METADATA_KEY: key},
        },
        {"role": "assistant", "parts": [call]},
        {"role": "tool", "parts": [result]},
        forged_mapping(key),
    ]


EXPECTED_PATHS = [
    f"messages[0].metadata{RESERVED_PATH}",
    f"messages[2].parts[0].content[1].metadata{RESERVED_PATH}",
    f"messages[3].parts[0].metadata{RESERVED_PATH}",
]


@pytest.mark.parametrize("escaped", [False, True])
def test_load_json_refuses_the_reserved_key_wherever_it_is(escaped: bool) -> None:
    text = json.dumps({"format": "threadline", "version": 1, "messages": _client_messages("k")})
    if escaped:  # JSON may spell the key with escapes; it is the same key
        text = text.replace(BLOB_METADATA_KEY, "threadline\\u002eblob")
    for data in (text, text.encode()):
        with pytest.raises(tl.ValidationError) as info:
            tl.load_json(data, limits=Limits.untrusted())
        assert [detail.path for detail in info.value.errors] == EXPECTED_PATHS
        assert all(detail.type == "reserved_key" for detail in info.value.errors)
    with pytest.raises(tl.ValidationError):
        tl.History.from_json(text)


def test_history_methods_refuse_mappings_carrying_the_reserved_key() -> None:
    items = _client_messages(blob_key(b"x"))
    for method in ("extend", "restore"):
        history = tl.History([tl.user_message("before")])
        snapshot = history.snapshot()
        with pytest.raises(tl.ValidationError) as info:
            getattr(history, method)(items, limits=Limits.untrusted())
        assert [detail.path for detail in info.value.errors] == EXPECTED_PATHS
        assert history.snapshot() is snapshot
    with pytest.raises(tl.ValidationError):
        tl.History(items)


def test_sanitize_untrusted_drops_every_reference_mark() -> None:
    cleaned = tl.sanitize_untrusted(_client_messages(blob_key(b"x")))  # type: ignore[arg-type]
    text = tl.dump_json(cleaned)
    assert BLOB_METADATA_KEY.encode() not in text
    assert BLOB_URL_PREFIX.encode() not in text


# ---------------------------------------------------------------------------------------------
# Property: whatever conversation conv-A stored, its references copied into conv-B read nothing.


def files_of(messages: list[tl.Message]) -> list[tl.FilePart]:
    found: list[tl.FilePart] = []
    for message in messages:
        for part in message.parts:
            items = part.content if isinstance(part, tl.ToolResultPart) else (part,)
            found.extend(item for item in items if isinstance(item, tl.FilePart))
    return found


@settings(max_examples=examples(25), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(messages=conversations(min_turns=1))
def test_references_copied_between_conversations_never_resolve(
    tmp_path_factory: pytest.TempPathFactory, messages: list[tl.Message]
) -> None:
    root = tmp_path_factory.mktemp("copied")
    store = JsonlStore(root / "j", blobs=FileBlobStore(root / "blobs"), blob_threshold=0)
    store.replace("conv-A", messages)
    as_stored = JsonlStore(root / "j").load("conv-A")
    references = [f for f in files_of(as_stored) if BLOB_METADATA_KEY in f.metadata]
    JsonlStore(root / "j").replace("conv-B", as_stored)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = store.load("conv-B")
    assert all(not part.data for part in files_of(loaded)), "conv-B read a blob of conv-A"
    assert len(caught) == len(references)
    assert all(issubclass(w.category, tl.StoreRecoveryWarning) for w in caught)
    assert len(loaded) == len(messages)
    expected = [m.model_copy(update={"replay": False}) if m.replay else m for m in messages]
    assert store.load("conv-A") == expected
