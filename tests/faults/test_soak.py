"""Load: many threads on one bound ``History``, many processes on one server conversation.

Each test runs a fixed amount of work (no time-boxed loops), so a result is exact and the run
stays well under a minute; the only clocks are guards against a hang.
"""

from __future__ import annotations

import functools
import multiprocessing
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import threadline as tl
from tests.faults._workers import append_to_both
from tests.faults._workers import open_store
from threadline.stores import SQLiteStore
from threadline.testing._store_kit import _check_batches

HANG_GUARD = 120.0  # seconds: only against a deadlock, never a performance assertion

# ---------------------------------------------------------------------------------------------
# Eight threads on one History bound to SQLite

APPENDERS, OPERATIONS, RESETS = 4, 150, 5
CID = "soak"


def message(writer: int, number: int) -> tl.Message:
    return tl.user_message(f"w{writer} n{number}", id=f"w{writer}-n{number}")


def operations(writer: int) -> list[list[tl.Message]]:
    """A writer's mutations: single appends and two-message extends, alternately."""
    batches, number = [], 0
    for operation in range(OPERATIONS):
        size = 1 + operation % 2
        batches.append([message(writer, number + k) for k in range(size)])
        number += size
    return batches


def check_order(messages: Any, where: str) -> None:
    """Each writer's messages in its order, and each extend's pair side by side."""
    last: dict[int, int] = {}
    ids = [m.id for m in messages]
    for index, identifier in enumerate(ids):
        writer, number = (int(part[1:]) for part in identifier.split("-"))
        assert number > last.get(writer, -1), f"{where}: writer {writer} out of order at {index}"
        last[writer] = number
        if number % 3 == 1:  # the first of an extend's two messages (numbers 1, 4, 7, ...)
            following = ids[index + 1] if index + 1 < len(ids) else None
            assert following == f"w{writer}-n{number + 1}", f"{where}: extend split at {index}"


def record_version(versions: list[int], event: Any) -> None:
    versions.append(event.version)


def run_threads(targets: list[Callable[[], None]]) -> list[BaseException]:
    errors: list[BaseException] = []

    def guarded(target: Callable[[], None]) -> None:
        try:
            target()
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(target,)) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(HANG_GUARD)
    assert not any(thread.is_alive() for thread in threads), "a thread hung"
    return errors


def test_eight_threads_on_a_history_bound_to_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "soak.db"
    store = SQLiteStore(path)
    history = tl.History()
    history.bind(store, CID)

    # A mirror rebuilt from the events alone, in delivery order: it must end equal to the history.
    mirror: list[tl.Message] = []
    kinds: list[str] = []

    heard: dict[str, list[str]] = {f"w{w}": [] for w in range(APPENDERS)}

    def follow(event: Any) -> None:
        kinds.append(event.kind)
        if event.kind in ("append", "extend"):
            mirror.extend(event.messages)
            for item in event.messages:
                heard[item.id.split("-")[0]].append(item.id)
        elif event.kind == "reset":
            mirror.clear()
        else:
            raise AssertionError(f"unexpected event {event.kind}")

    history.subscribe(follow)
    writers_done = threading.Event()
    appenders_left = [APPENDERS]
    count_lock = threading.Lock()

    def appender(writer: int) -> Callable[[], None]:
        def run() -> None:
            for batch in operations(writer):
                if len(batch) == 1:
                    history.append(batch[0])
                else:
                    history.extend(batch)
            with count_lock:
                appenders_left[0] -= 1
                if appenders_left[0] == 0:
                    writers_done.set()

        return run

    def snapshotter() -> None:
        version = -1
        while not writers_done.is_set():
            snapshot = history.snapshot()
            assert snapshot.version >= version, "a snapshot's version went back"
            version = snapshot.version
            check_order(snapshot, "a snapshot")
            time.sleep(0.001)

    def subscriber() -> None:
        for _ in range(50):
            versions: list[int] = []
            unsubscribe = history.subscribe(functools.partial(record_version, versions))
            time.sleep(0.002)
            unsubscribe()
            unsubscribe()  # twice is harmless
            assert versions == sorted(versions), "events arrived out of order"

    def resetter() -> None:
        # Spread the resets over the run by progress (not time), so each lands among appends
        # and the last leaves a sixth of the work to end up in the final history.
        step = APPENDERS * OPERATIONS // (RESETS + 1)
        deadline = time.monotonic() + HANG_GUARD
        for number in range(1, RESETS + 1):
            while history.version < number * step:
                assert time.monotonic() < deadline, "the appenders stalled"
                time.sleep(0.001)
            history.reset()

    def store_reader() -> None:
        with SQLiteStore(path) as reader:  # another connection, as another process would have
            while not writers_done.is_set():
                check_order(reader.load(CID), "a concurrent load")
                time.sleep(0.002)

    errors = run_threads(
        [
            *(appender(w) for w in range(APPENDERS)),
            snapshotter,
            subscriber,
            resetter,
            store_reader,
        ]
    )
    assert not errors, errors

    final = list(history.snapshot())
    appended = sum(len(batch) for w in range(APPENDERS) for batch in operations(w))
    assert kinds.count("reset") == RESETS
    assert kinds.count("append") + 2 * kinds.count("extend") == appended  # every one, once
    for w in range(APPENDERS):  # and each writer's, in its order, resets notwithstanding
        assert heard[f"w{w}"] == [m.id for batch in operations(w) for m in batch]
    assert final, "the last reset came after every append"
    assert mirror == final  # the events tell the whole story, in order
    check_order(final, "the final history")
    assert store.load(CID) == final  # memory and store agree
    with SQLiteStore(path) as fresh:
        again = tl.History().bind(fresh, CID)
        assert list(again.snapshot()) == final  # and a new process would load the same
    store.close()


# ---------------------------------------------------------------------------------------------
# Four processes on one Redis and one PostgreSQL conversation

PROCESSES, BATCHES, SIZE = 4, 25, 3


@pytest.mark.requires_server
def test_four_processes_on_a_redis_and_a_postgres_conversation(
    redis_url: str, redis_prefix: str, postgres_dsn: str, postgres_prefix: str
) -> None:
    targets = [("redis", redis_url, redis_prefix), ("postgres", postgres_dsn, postgres_prefix)]
    readers = [open_store(*target) for target in targets]
    for reader in readers:
        reader.list_conversations()  # create the tables before the writers race for them
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    processes = [
        context.Process(target=append_to_both, args=(targets, w, BATCHES, SIZE, start))
        for w in range(PROCESSES)
    ]
    for process in processes:
        process.start()
    start.set()

    # Read while they write: every load is whole batches, and a prefix of the final order.
    seen: list[list[list[tl.Message]]] = [[], []]
    deadline = time.monotonic() + HANG_GUARD
    while any(process.is_alive() for process in processes):
        assert time.monotonic() < deadline, "the writers hung"
        for views, reader in zip(seen, readers, strict=True):
            views.append(reader.load("shared"))
        time.sleep(0.01)
    for process in processes:
        process.join(HANG_GUARD)
    assert [p.exitcode for p in processes] == [0] * PROCESSES

    for (kind, _, _), views, reader in zip(targets, seen, readers, strict=True):
        final = reader.load("shared")
        _check_batches(final, PROCESSES, BATCHES, SIZE)  # exact count, per-writer order
        for view in views:
            assert len(view) % SIZE == 0, f"{kind}: a reader saw part of a batch"
            assert view == final[: len(view)], f"{kind}: a reader's view is not a prefix"
        assert reader.list_conversations() == ["shared"]
        reader.close()
