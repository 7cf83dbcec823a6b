"""Run one call of a fuzz test: only the errors the API documents may escape, and no call may
hang.

The hang guard is a generous per-call timer (2 s for inputs of a few kilobytes that take
milliseconds), not a benchmark: a call that hangs is interrupted by ``SIGALRM`` where the
platform has it, and any call that took longer fails the test either way.
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

T = TypeVar("T")


class Hang(BaseException):
    """A call ran past the hang guard. A BaseException, so no ``except Exception`` in the
    code under test can swallow it."""


@contextlib.contextmanager
def hang_guard(seconds: float = HANG_SECONDS) -> Iterator[None]:
    """Interrupt the block after ``seconds`` (main thread, POSIX), and fail it if it took
    longer anyway."""
    can_interrupt = (
        hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    )
    previous: Any = None
    if can_interrupt:

        def interrupt(signum: int, frame: object) -> None:
            raise Hang(f"the call did not return within {seconds} s")

        previous = signal.signal(signal.SIGALRM, interrupt)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    started = time.perf_counter()
    try:
        yield
    finally:
        if can_interrupt:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    elapsed = time.perf_counter() - started
    if elapsed > seconds:
        raise Hang(f"the call took {elapsed:.2f} s (guard: {seconds} s)")


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
