"""JsonlStore: the file format, torn-tail recovery, damaged files and failed writes."""

from __future__ import annotations

import json
import os
import threading
import warnings
from pathlib import Path

import pytest

import threadline as tl
from threadline.stores import JsonlStore
from threadline.stores.jsonl import read_batch_lines


def msgs(tag: str, count: int) -> list[tl.Message]:
    return [tl.user_message(f"{tag} {i}", id=f"{tag}{i}") for i in range(count)]


@pytest.fixture
def store(tmp_path: Path) -> JsonlStore:
    return JsonlStore(tmp_path / "conversations")


def lines(store: JsonlStore, cid: str) -> list[object]:
    text = (store.directory / f"{cid}.jsonl").read_text(encoding="utf-8")
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def test_one_line_per_append_a_batch_is_an_array(store: JsonlStore) -> None:
    store.append("c", msgs("a", 1))
    store.append("c", msgs("b", 3))
    first, second = lines(store, "c")
    assert first == msgs("a", 1)[0].model_dump(mode="json")
    assert second == [m.model_dump(mode="json") for m in msgs("b", 3)]
    assert store.load("c") == msgs("a", 1) + msgs("b", 3)


def test_replace_writes_one_message_per_line(store: JsonlStore) -> None:
    store.append("c", msgs("a", 3))
    store.replace("c", msgs("r", 2))
    assert lines(store, "c") == [m.model_dump(mode="json") for m in msgs("r", 2)]
    assert not [p for p in store.directory.iterdir() if p.name.endswith(".tmp")]


def test_a_new_store_on_the_same_directory_reads_everything(store: JsonlStore) -> None:
    store.append("c", msgs("a", 3))
    assert JsonlStore(store.directory).load("c") == msgs("a", 3)


def test_listing_ignores_other_files(store: JsonlStore) -> None:
    store.append("c", msgs("a", 1))
    (store.directory / "notes.txt").write_text("x")
    (store.directory / ".c.0123.tmp").write_text("x")
    (store.directory / "bad id.jsonl").write_text("x")
    (store.directory / "empty.jsonl").write_text("")
    (store.directory / "sub.jsonl").mkdir()
    assert store.list_conversations() == ["c"]


def test_a_torn_last_line_is_skipped_with_a_warning(store: JsonlStore) -> None:
    store.append("c", msgs("a", 2))
    store.append("c", msgs("b", 1))
    path = store.directory / "c.jsonl"
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"id":"torn","role":"us')
    with pytest.warns(tl.StoreRecoveryWarning, match=r"c\.jsonl:3: skipped a torn last line"):
        assert store.load("c") == msgs("a", 2) + msgs("b", 1)
    assert path.read_bytes() == whole + b'{"id":"torn","role":"us'  # load never writes


def test_a_partly_written_batch_is_dropped_whole(store: JsonlStore) -> None:
    store.append("c", msgs("a", 1))
    store.append("c", msgs("b", 5))
    path = store.directory / "c.jsonl"
    data = path.read_bytes()
    cut = data.rindex(b'{"id":"b3"')  # the crash hit after 3 of the batch's 5 messages
    path.write_bytes(data[:cut])
    with pytest.warns(tl.StoreRecoveryWarning, match=r"c\.jsonl:2:"):
        assert store.load("c") == msgs("a", 1)


def test_a_complete_but_garbled_last_line_is_torn_too(store: JsonlStore) -> None:
    # After a power cut a line's newline can reach the disk before its middle (zeros).
    store.append("c", msgs("a", 1))
    path = store.directory / "c.jsonl"
    path.write_bytes(path.read_bytes() + b'{"id":"x",\x00\x00\x00\x00}\n')
    with pytest.warns(tl.StoreRecoveryWarning, match=r"c\.jsonl:2: skipped"):
        assert store.load("c") == msgs("a", 1)


@pytest.mark.parametrize(
    "tail", [b'{"id":"torn","ro', b'[{"id":"x"}', b'{"id":"x",\x00\x00}\n', b"\x00\x00\x00"]
)
def test_append_after_a_torn_tail_drops_it_first(store: JsonlStore, tail: bytes) -> None:
    store.append("c", msgs("a", 2))
    path = store.directory / "c.jsonl"
    whole = path.read_bytes()
    path.write_bytes(whole + tail)
    with pytest.warns(tl.StoreRecoveryWarning, match=r"c\.jsonl:2: removed a torn last line"):
        store.append("c", msgs("b", 1))
    assert path.read_bytes().startswith(whole)
    assert tail not in path.read_bytes()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert store.load("c") == msgs("a", 2) + msgs("b", 1)


def test_a_file_holding_only_a_torn_line(store: JsonlStore) -> None:
    path = store.directory / "c.jsonl"
    path.write_bytes(b'[{"id":')
    with pytest.warns(tl.StoreRecoveryWarning, match=r"c\.jsonl:1:"):
        assert store.load("c") == []
    with pytest.warns(tl.StoreRecoveryWarning, match=r"c\.jsonl:1: removed"):
        store.append("c", msgs("a", 1))
    assert store.load("c") == msgs("a", 1)


def test_a_damaged_line_before_the_last_is_an_error_naming_it(store: JsonlStore) -> None:
    store.append("c", msgs("a", 1))
    store.append("c", msgs("b", 2))
    store.append("c", msgs("d", 1))
    path = store.directory / "c.jsonl"
    data = path.read_bytes()
    start = data.index(b"\n") + 1
    path.write_bytes(data[:start] + b"\x00" * 20 + data[start + 20 :])  # bad sectors in line 2
    with pytest.raises(tl.StoreError, match=r"c\.jsonl:2: the line is not JSON") as caught:
        store.load("c")
    assert isinstance(caught.value.__cause__, ValueError)


def test_an_invalid_message_is_an_error_naming_the_line(store: JsonlStore) -> None:
    store.append("c", msgs("a", 1))
    path = store.directory / "c.jsonl"
    path.write_bytes(path.read_bytes() + b'{"id":"x","role":"wizard","parts":[]}\n')
    with pytest.raises(tl.StoreError, match=r"c\.jsonl:2: the line holds an invalid message") as e:
        store.load("c")
    assert isinstance(e.value.__cause__, tl.ValidationError)
    assert "role" in str(e.value.__cause__)


def test_a_failed_write_raises_store_error_and_appends_nothing(
    store: JsonlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.append("c", msgs("a", 1))
    before = (store.directory / "c.jsonl").read_bytes()

    def broken_fsync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(tl.StoreError, match="could not append to conversation 'c'") as caught:
        store.append("c", msgs("b", 2))
    assert isinstance(caught.value.__cause__, OSError)
    monkeypatch.undo()
    assert (store.directory / "c.jsonl").read_bytes() == before
    assert store.load("c") == msgs("a", 1)


def test_a_failed_replace_leaves_the_old_history(
    store: JsonlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.append("c", msgs("a", 2))

    def broken_replace(source: object, target: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(tl.StoreError, match="could not replace") as caught:
        store.replace("c", msgs("r", 1))
    assert isinstance(caught.value.__cause__, OSError)
    monkeypatch.undo()
    assert store.load("c") == msgs("a", 2)
    assert sorted(p.name for p in store.directory.iterdir()) == ["c.jsonl"]


def test_an_unusable_directory_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(tl.StoreError) as caught:
        JsonlStore(tmp_path / "file")
    assert isinstance(caught.value.__cause__, OSError)


@pytest.mark.parametrize("swap", ["replace", "delete"])
def test_a_writer_waiting_on_a_swapped_file_writes_to_the_new_one(
    store: JsonlStore, swap: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The append below opens the file, then waits for our lock while the file is replaced or
    # deleted under it; it must append to what the path names afterwards, not to the old inode.
    import fcntl

    store.append("c", msgs("a", 1))
    path = store.directory / "c.jsonl"
    holder = os.open(path, os.O_RDWR)
    fcntl.flock(holder, fcntl.LOCK_EX)
    waiting = threading.Event()
    real_flock = fcntl.flock

    def flock(fd: int, operation: int) -> None:
        waiting.set()
        real_flock(fd, operation)

    monkeypatch.setattr(fcntl, "flock", flock)
    errors: list[BaseException] = []

    def append() -> None:
        try:
            store.append("c", msgs("b", 1))
        except BaseException as error:
            errors.append(error)

    thread = threading.Thread(target=append)
    thread.start()
    try:
        assert waiting.wait(30)
        if swap == "replace":
            new = store.directory / "new.tmp"
            new.write_text(msgs("r", 1)[0].model_dump_json() + "\n")
            os.replace(new, path)
        else:
            path.unlink()
    finally:
        os.close(holder)  # releases the lock
        thread.join(30)
    assert not thread.is_alive()
    assert not errors
    expected = msgs("r", 1) + msgs("b", 1) if swap == "replace" else msgs("b", 1)
    assert store.load("c") == expected


def test_a_replay_is_recognised_after_another_store_appended(store: JsonlStore) -> None:
    other = JsonlStore(store.directory)  # another process's view of the same files
    store.append("c", msgs("a", 2))
    other.append("c", msgs("b", 2))
    store.append("c", [*msgs("b", 2), *msgs("c", 1)])  # sent again, after another's append
    other.append("c", msgs("a", 2))
    assert store.load("c") == [*msgs("a", 2), *msgs("b", 2), *msgs("c", 1)]
    with pytest.raises(tl.ValidationError, match="'b1' already names a different message"):
        store.append("c", [tl.user_message("not b1", id="b1")])


def test_the_id_index_follows_replace_and_delete(store: JsonlStore) -> None:
    store.append("c", msgs("a", 3))
    store.replace("c", msgs("b", 1))
    store.append("c", [tl.user_message("a0 again", id="a0")])  # a0 left with the replace
    store.delete("c")
    store.append("c", msgs("b", 1))
    store.append("c", [tl.user_message("a0 again", id="a0")])
    assert store.load("c") == [*msgs("b", 1), tl.user_message("a0 again", id="a0")]
    # the file made again by another store (the index must notice it is a new file)
    other = JsonlStore(store.directory)
    other.delete("c")
    other.append("c", msgs("z", 1))
    store.append("c", [tl.user_message("b0 is free again", id="b0")])
    assert store.load("c") == [*msgs("z", 1), tl.user_message("b0 is free again", id="b0")]


def test_a_damaged_line_stops_an_append_naming_it(store: JsonlStore) -> None:
    store.append("c", msgs("a", 1))
    path = store.directory / "c.jsonl"
    path.write_bytes(b"{not json\n" + path.read_bytes())
    fresh = JsonlStore(store.directory)
    with pytest.raises(tl.StoreError, match="byte 0 is not JSON"):
        fresh.append("c", msgs("b", 1))


# ---------------------------------------------------------------------------------------------
# read_batch_lines: the torn-line rule, which the CLI shares


def read_all(lines: list[tuple[int, str]]) -> tuple[list[tuple[int, object]], list[int]]:
    torn: list[int] = []
    values = list(
        read_batch_lines(
            lines,
            lambda _, line: json.loads(line),
            torn=lambda number, _: torn.append(number),
            damaged=lambda number, error: tl.StoreError(f"line {number}: {error}"),
        )
    )
    return values, torn


def test_read_batch_lines_gives_each_value_with_its_number() -> None:
    assert read_all([(1, "{}"), (3, "[1, 2]")]) == ([(1, {}), (3, [1, 2])], [])
    assert read_all([]) == ([], [])


def test_read_batch_lines_stops_at_a_torn_last_line() -> None:
    assert read_all([(1, "{}"), (2, '{"id": ')]) == ([(1, {})], [2])
    assert read_all([(4, "[")]) == ([], [4])


def test_read_batch_lines_raises_for_a_damaged_line_before_the_last() -> None:
    with pytest.raises(tl.StoreError, match="line 2: ") as caught:
        read_all([(1, "{}"), (2, "{"), (3, "{}")])
    assert isinstance(caught.value.__cause__, json.JSONDecodeError)


def test_read_batch_lines_parses_as_values_are_asked_for() -> None:
    parsed: list[int] = []

    def parse(number: int, line: str) -> object:
        parsed.append(number)
        return json.loads(line)

    values = read_batch_lines(
        [(1, "{}"), (2, "{"), (3, "{}")],
        parse,
        torn=lambda number, line: None,
        damaged=lambda number, error: tl.StoreError(str(number)),
    )
    assert next(values) == (1, {})
    assert parsed == [1]  # a caller that stops at line 1's value never sees line 2's damage


def test_read_batch_lines_lets_other_errors_through() -> None:
    def parse(number: int, line: bytes) -> object:
        raise KeyError(number)

    with pytest.raises(KeyError):
        list(read_batch_lines([(1, b"x")], parse, torn=print, damaged=tl.StoreError))
