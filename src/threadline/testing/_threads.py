"""How the store kits run threads against one store: started together, each joined within a
guard timeout, the first error raised."""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["TIMEOUT", "run_threads"]

TIMEOUT = 120.0
"""Seconds; only a guard against a store that deadlocks."""


def run_threads(*targets: Callable[[], None], timeout: float = TIMEOUT) -> None:
    """Run each target in a thread of its own, wait for all, and raise the first error.

    Raises:
        AssertionError: a thread was still running after ``timeout`` seconds.
    """
    errors: list[BaseException] = []

    def run(target: Callable[[], None]) -> None:
        try:
            target()
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=run, args=(target,), daemon=True) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
        assert not thread.is_alive(), f"a thread was still running after {timeout:.0f} s"
    if errors:
        raise errors[0]
