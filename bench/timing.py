"""Taking samples: the loop every benchmark here times its candidates with.

Shared by ``run.py`` and the child processes it starts (``untrusted.py``), so a number measured
in a fresh interpreter means the same as one measured in the main process.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Stat:
    """Seconds per call over the samples of one candidate."""

    median: float
    min: float
    samples: list[float]
    calls: int


Sampler = Callable[[], float]
"""Takes one sample and returns seconds per operation."""


def timed(fn: Callable[[], object], min_time: float) -> Sampler:
    """A sampler that calls ``fn`` in a loop lasting about ``min_time``, calibrated once."""
    number = 0

    def sample() -> float:
        nonlocal number
        if number == 0:
            start = time.perf_counter()
            fn()
            once = time.perf_counter() - start
            number = max(1, min(100_000, int(min_time / max(once, 1e-7))))
        gc.disable()
        try:
            start = time.perf_counter()
            for _ in range(number):
                fn()
            elapsed = time.perf_counter() - start
        finally:
            gc.enable()
        return elapsed / number

    sample.calls = lambda: number  # type: ignore[attr-defined]
    return sample


def measure(candidates: dict[str, Sampler], samples: int) -> dict[str, Stat]:
    """Warm up each candidate, then take ``samples`` rounds, round-robin in rotating order."""
    names = list(candidates)
    # The conversations are alive for the whole run: move them out of the collector's sight, so
    # the collection before each sample stays cheap (a full one over them takes seconds).
    gc.collect()
    gc.freeze()
    for name in names:
        gc.collect()
        candidates[name]()  # warm-up (and calibration)
    taken: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(samples):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            gc.collect()
            taken[name].append(candidates[name]())
    return {
        name: Stat(
            statistics.median(values),
            min(values),
            values,
            getattr(candidates[name], "calls", lambda: 1)(),
        )
        for name, values in taken.items()
    }
