"""History under threads: nothing lost, order kept, listeners neither deadlock nor break things.

Every test runs its threads as daemons and joins them with a generous timeout, so a deadlock
fails the test instead of hanging the run. Nothing here measures time.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from typing import Any

import pytest

import threadline as tl
from threadline.history import History
from threadline.history import HistoryEvent
from threadline.history import Snapshot

THREADS = 8
PER_THREAD = 10_000
TIMEOUT = 120.0  # seconds; only a guard against hangs


@pytest.fixture(autouse=True)
def frequent_thread_switches() -> Iterator[None]:
    """Switch threads far more often than the default 5 ms, so that races show up."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(previous)


def run_threads(targets: Iterable[Callable[[], None]]) -> None:
    """Start every target at once; fail (never hang) if one does not finish or raises."""
    targets = list(targets)
    barrier = threading.Barrier(len(targets))
    errors: list[BaseException] = []

    def wrap(target: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                barrier.wait(TIMEOUT)
                target()
            except BaseException as error:
                errors.append(error)

        return run

    threads = [threading.Thread(target=wrap(t), daemon=True) for t in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
    assert not any(thread.is_alive() for thread in threads), "a thread hung (deadlock?)"
    assert errors == []


def batches(thread: int, count: int = PER_THREAD) -> list[tl.Message]:
    return [tl.user_message(f"{thread}:{i}", id=f"t{thread}-{i}") for i in range(count)]


def appender(history: History, messages: list[tl.Message]) -> Callable[[], None]:
    def run() -> None:
        for message in messages:
            history.append(message)

    return run


def assert_each_thread_whole_and_in_order(messages: Iterable[tl.Message], threads: int) -> None:
    positions: dict[int, list[int]] = {t: [] for t in range(threads)}
    for message in messages:
        owner, index = message.text.split(":")
        positions[int(owner)].append(int(index))
    for thread in range(threads):
        assert positions[thread] == list(range(PER_THREAD)), f"thread {thread} lost or reordered"


@pytest.mark.slow  # seconds of work: the full tier's
def test_concurrent_appends_lose_nothing_and_keep_each_threads_order() -> None:
    history = History()
    sent = [batches(t) for t in range(THREADS)]
    run_threads(appender(history, messages) for messages in sent)
    assert len(history) == THREADS * PER_THREAD
    assert history.version == THREADS * PER_THREAD
    assert_each_thread_whole_and_in_order(history, THREADS)


@pytest.mark.slow  # seconds of work: the full tier's
def test_listeners_see_every_event_in_mutation_order_across_threads() -> None:
    history = History()
    versions: list[int] = []
    appended: list[tl.Message] = []

    def listener(event: HistoryEvent) -> None:
        time.sleep(0)  # let other threads run here: a delivery out of order would show
        versions.append(event.version)
        appended.extend(event.messages)

    history.subscribe(listener)
    run_threads(appender(history, batches(t, count=2000)) for t in range(THREADS))
    total = THREADS * 2000
    assert versions == list(range(1, total + 1))
    assert appended == list(history)


@pytest.mark.slow  # seconds of work: the full tier's
def test_extend_batches_stay_whole() -> None:
    history = History()
    size = 50

    def extender(thread: int) -> Callable[[], None]:
        messages = batches(thread, count=PER_THREAD)

        def run() -> None:
            for start in range(0, PER_THREAD, size):
                history.extend(messages[start : start + size])

        return run

    run_threads(extender(t) for t in range(THREADS))
    snapshot = history.snapshot()
    for start in range(0, len(snapshot), size):
        owners = {m.id.split("-")[0] for m in snapshot[start : start + size]}
        assert len(owners) == 1, "a batch was interleaved with another thread's"
    assert_each_thread_whole_and_in_order(snapshot, THREADS)


def test_a_listener_reading_the_history_does_not_deadlock() -> None:
    history = History()
    observed: list[tuple[int, int]] = []

    def reader(event: HistoryEvent) -> None:
        snapshot = history.snapshot()
        observed.append((len(history), snapshot.version))
        _ = history.last, history.size, list(history)[-1:], history.get_tool_result("none")

    history.subscribe(reader)
    run_threads(appender(history, batches(t, count=500)) for t in range(4))
    assert len(observed) == 4 * 500
    # Appends only: a snapshot taken inside a listener has one message per version.
    assert all(length >= 1 for length, _ in observed)


def test_a_listener_mutating_the_history_from_many_threads_does_not_deadlock() -> None:
    history = History()
    versions: list[int] = []

    def echo(event: HistoryEvent) -> None:
        versions.append(event.version)
        if event.kind == "append" and event.messages[0].role == "user":
            history.append(tl.assistant_message("echo", id="echo-" + event.messages[0].id))

    history.subscribe(echo)
    run_threads(appender(history, batches(t, count=500)) for t in range(4))
    assert len(history) == 2 * 4 * 500
    assert versions == list(range(1, 2 * 4 * 500 + 1))
    echoed = {m.id for m in history if m.role == "assistant"}
    assert echoed == {"echo-" + m.id for m in history if m.role == "user"}


def test_a_raising_listener_breaks_nothing_under_threads() -> None:
    errors: list[Any] = []
    lock = threading.Lock()

    def on_error(error: Exception, event: HistoryEvent, listener: Any) -> None:
        with lock:
            errors.append(event.version)

    history = History(on_listener_error=on_error)
    seen: list[int] = []

    def boom(event: HistoryEvent) -> None:
        raise RuntimeError("listener bug")

    history.subscribe(boom)
    history.subscribe(lambda event: seen.append(event.version))
    run_threads(appender(history, batches(t, count=1000)) for t in range(4))
    total = 4 * 1000
    assert len(history) == total
    assert seen == list(range(1, total + 1))
    assert sorted(errors) == list(range(1, total + 1))


def test_snapshots_taken_during_appends_are_consistent() -> None:
    history = History()
    taken: list[list[Snapshot]] = [[] for _ in range(4)]

    def writer(thread: int) -> Callable[[], None]:
        messages = batches(thread, count=2000)

        def run() -> None:
            for message in messages:
                history.append(message)
                taken[thread].append(history.snapshot())

        return run

    run_threads(writer(t) for t in range(4))
    final = history.snapshot()
    assert len(final) == 4 * 2000
    snapshots = [snapshot for per_thread in taken for snapshot in per_thread]
    # Only appends happened, so version n holds exactly the first n messages.
    assert all(len(snapshot) == snapshot.version for snapshot in snapshots)
    for snapshot in snapshots[::40]:
        assert snapshot[:] == final[: snapshot.version]
    # A snapshot taken right after an append holds that append.
    for thread, per_thread in enumerate(taken):
        for index in range(0, 2000, 50):
            assert any(m.id == f"t{thread}-{index}" for m in per_thread[index])


def test_reset_and_restore_racing_appends_keep_the_history_consistent() -> None:
    history = History()
    events: list[HistoryEvent] = []
    history.subscribe(events.append)

    def resetter() -> None:
        for i in range(200):
            if i % 2:
                history.reset()
            else:
                history.restore(batches(99, count=3))

    run_threads([resetter, *(appender(history, batches(t, count=2000)) for t in range(3))])
    assert [e.version for e in events] == list(range(1, history.version + 1))
    # Replaying the events on a list gives the history's final contents.
    model: list[tl.Message] = []
    for event in events:
        if event.kind in ("reset", "restore"):
            model = list(event.messages)
        else:
            model.extend(event.messages)
        assert list(event.snapshot) == model
    assert model == list(history)


def test_concurrent_appends_with_a_window_keep_it_exact() -> None:
    # Every message the threads append is seen exactly once by a listener, either still in the
    # history or in a trim event; the window and its running totals stay exact.
    history = History(max_tokens=500)
    dropped: list[tl.Message] = []
    history.subscribe(
        lambda event: dropped.extend(event.messages) if event.kind == "trim" else None
    )
    run_threads(appender(history, batches(t, 2_000)) for t in range(4))
    kept = list(history)
    assert sum(map(tl.tokens.estimate_tokens, kept)) == history.total_tokens <= 500
    assert sorted(m.id for m in dropped + kept) == sorted(
        m.id for t in range(4) for m in batches(t, 2_000)
    )
    assert history.size == sum(map(tl.tokens.content_chars, kept))
