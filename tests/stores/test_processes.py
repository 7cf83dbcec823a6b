"""Separate processes: concurrent writers lose nothing, and a writer killed mid-stream (SIGKILL)
leaves a whole prefix of what it appended."""

from __future__ import annotations

import multiprocessing
import sys
import time
import warnings
from pathlib import Path

import pytest

import threadline as tl
from tests.stores._workers import append_batches
from tests.stores._workers import append_until_killed
from tests.stores._workers import batch
from tests.stores._workers import open_store
from threadline.stores import Store
from threadline.testing._store_kit import _check_batches

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and flock")

KINDS = ["sqlite", "jsonl"]
HANG_GUARD = 120.0  # seconds: only against a deadlock, never a performance assertion


def location(kind: str, tmp_path: Path) -> str:
    return str(tmp_path / ("threads.db" if kind == "sqlite" else "threads"))


@pytest.mark.parametrize("kind", KINDS)
def test_writer_processes_lose_nothing_and_never_interleave(kind: str, tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    where = location(kind, tmp_path)
    open_store(kind, where).list_conversations()  # create the file or directory up front
    writers, batches, size = 4, 25, 3
    start = context.Event()
    processes = [
        context.Process(target=append_batches, args=(kind, where, w, batches, size, start))
        for w in range(writers)
    ]
    for process in processes:
        process.start()
    start.set()
    for process in processes:
        process.join(HANG_GUARD)
    assert [p.exitcode for p in processes] == [0] * writers
    _check_batches(open_store(kind, where).load("shared"), writers, batches, size)


@pytest.mark.parametrize("kind", KINDS)
def test_a_writer_killed_mid_stream_leaves_a_whole_prefix(kind: str, tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    where = location(kind, tmp_path)
    store = open_store(kind, where)
    store.list_conversations()
    intended, size, padding = 100_000, 3, 20_000
    process = context.Process(
        target=append_until_killed, args=(kind, where, intended, size, padding)
    )
    process.start()
    deadline = time.monotonic() + HANG_GUARD
    try:
        while len(_load_allowing_recovery(store)) < 20 * size:  # the stream is flowing
            assert process.is_alive(), f"the writer died early (exit code {process.exitcode})"
            assert time.monotonic() < deadline, "the writer made no progress"
            time.sleep(0.01)
    finally:
        process.kill()  # SIGKILL: no cleanup, no flush, possibly mid-write
        process.join(HANG_GUARD)
    assert process.exitcode == -9

    loaded = _load_allowing_recovery(open_store(kind, where))
    assert 0 < len(loaded) < intended * size, f"the kill did not land mid-stream: {len(loaded)}"
    assert len(loaded) % size == 0, f"{len(loaded)} messages: a batch was cut"
    expected = [m for number in range(len(loaded) // size) for m in batch(0, number, size, padding)]
    assert loaded == expected  # a prefix, in order, every message whole

    # A new writer carries on where the dead one stopped.
    after = open_store(kind, where)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tl.StoreRecoveryWarning)  # it may drop a torn tail
        after.append("victim", batch(1, 0, size))
    assert _load_allowing_recovery(after) == [*expected, *batch(1, 0, size)]


def _load_allowing_recovery(store: Store) -> list[tl.Message]:
    """Load, allowing only the torn-tail warning a killed JSONL writer may leave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        messages = store.load("victim")
    unexpected = [w for w in caught if not issubclass(w.category, tl.StoreRecoveryWarning)]
    assert not unexpected, [str(w.message) for w in unexpected]
    return messages


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="needs the fork start method"
)
def test_a_forked_child_opens_its_own_sqlite_connection(tmp_path: Path) -> None:
    store = open_store("sqlite", str(tmp_path / "threads.db"))
    store.append("c", batch(0, 0, 2))  # the parent now holds a connection
    context = multiprocessing.get_context("fork")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: fork with threads alive
        child = context.Process(target=store.append, args=("c", batch(1, 0, 2)))
        child.start()
    child.join(HANG_GUARD)
    assert child.exitcode == 0
    store.append("c", batch(0, 1, 2))
    assert store.load("c") == [*batch(0, 0, 2), *batch(1, 0, 2), *batch(0, 1, 2)]
