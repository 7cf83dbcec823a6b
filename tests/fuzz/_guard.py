"""Run one call of a fuzz test: only the errors the API documents may escape, and no call may
hang.

The hang guard is a generous per-call budget of CPU time (2 s for inputs of a few kilobytes
that take milliseconds), not a benchmark: a call that spins is interrupted by ``SIGPROF`` where
the platform has it, and any call that used more fails the test either way. CPU time, not wall
time, so a busy shared machine (CI beside other jobs) never fails a fuzz test; a wall-clock
backstop of ``WALL_SECONDS`` still interrupts a call that waits forever.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable
from collections.abc import Iterator
from typing import Any
from typing import TypeVar

HANG_SECONDS = 2.0
"""CPU seconds one call may use."""
WALL_SECONDS = 120.0
"""Wall seconds after which a call is interrupted however little CPU it used (a deadlock)."""

T = TypeVar("T")


class Hang(BaseException):
    """A call ran past the hang guard. A BaseException, so no ``except Exception`` in the
    code under test can swallow it."""


@contextlib.contextmanager
def hang_guard(seconds: float = HANG_SECONDS) -> Iterator[None]:
    """Interrupt the block after ``seconds`` of CPU time or ``WALL_SECONDS`` of wall time (main
    thread, POSIX), and fail it if it used more CPU time anyway."""
    can_interrupt = (
        hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    )
    previous: list[tuple[int, Any]] = []
    if can_interrupt:

        def interrupt(signum: int, frame: object) -> None:
            raise Hang(f"the call did not return within {seconds} s of CPU time")

        timers: list[tuple[signal.Signals, int, float]] = [
            (signal.SIGPROF, signal.ITIMER_PROF, seconds),
            (signal.SIGALRM, signal.ITIMER_REAL, WALL_SECONDS),
        ]
        for signum, timer, budget in timers:
            previous.append((signum, signal.signal(signum, interrupt)))
            signal.setitimer(timer, budget)
    started = time.process_time()
    try:
        yield
    finally:
        if can_interrupt:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.setitimer(signal.ITIMER_REAL, 0)
            for number, handler in previous:
                signal.signal(number, handler)
    elapsed = time.process_time() - started
    if elapsed > seconds:
        raise Hang(f"the call used {elapsed:.2f} s of CPU time (guard: {seconds} s)")


def call_expecting(
    expected: tuple[type[BaseException], ...],
    function: Callable[..., T],
    *args: Any,
    **kwargs: Any,
) -> T | None:
    """``function(*args, **kwargs)`` under the hang guard; ``None`` when it raised one of
    ``expected``.

    Anything else propagates, so hypothesis reports (and shrinks) the input that caused it.
    """
    with hang_guard():
        try:
            return function(*args, **kwargs)
        except expected:
            return None
