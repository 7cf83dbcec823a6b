"""Taking samples: the loop every benchmark here times its candidates with.

Shared by ``run.py`` and the child processes it starts (``fresh.py``, ``hostile.py``), so a
number measured in a fresh interpreter means the same as one measured in the main process.

Work is timed on one of two clocks. ``"wall"`` (``time.perf_counter``) for work the CPU does.
``"cpu"`` (``time.process_time``: user and system time of every thread of this process, so
the thread an ``asyncio.to_thread`` call runs in is counted) for durable work: an append that
waits on ``fsync`` spends most of its wall time waiting for the disk, a wait that varies by an
order of magnitude between the samples of one run on a shared machine and says nothing about
the library. CPU time leaves the wait out, and
the kernel's work that no thread of the process does (the filesystem's journal thread, the
device) with it. A CPU-timed sample keeps its wall time beside it, to be read, never judged.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Literal
from typing import NamedTuple

Clock = Literal["wall", "cpu"]
"""``"wall"``: ``time.perf_counter``; ``"cpu"``: ``time.process_time`` (every thread)."""


class CpuSample(NamedTuple):
    """One sample of CPU-timed work: seconds per operation in CPU time, and in wall time."""

    cpu: float
    wall: float


@dataclass
class Stat:
    """Seconds per call over the samples of one candidate, on ``clock``."""

    median: float
    min: float
    samples: list[float]
    calls: int
    clock: Clock = "wall"
    wall: list[float] = field(default_factory=list)
    """With ``clock="cpu"``: each sample's wall time per call, beside its CPU time."""

    @property
    def wall_median(self) -> float:
        return statistics.median(self.wall or self.samples)


Sampler = Callable[[], float | CpuSample]
"""Takes one sample and returns seconds per operation: a float of wall time, or ``CpuSample``."""


class Stopwatch:
    """Started when made; ``per(count)`` is the time since, per operation, on ``clock``."""

    def __init__(self, clock: Clock = "wall") -> None:
        self.clock = clock
        self._cpu = time.process_time()
        self._wall = time.perf_counter()

    def per(self, count: int) -> float | CpuSample:
        both = self.both(count)
        return both if self.clock == "cpu" else both.wall

    def both(self, count: int = 1) -> CpuSample:
        """The time since, per operation, on both clocks."""
        wall = (time.perf_counter() - self._wall) / count
        return CpuSample((time.process_time() - self._cpu) / count, wall)


def timed(fn: Callable[[], object], min_time: float, clock: Clock = "wall") -> Sampler:
    """A sampler that calls ``fn`` in a loop lasting about ``min_time`` of wall time,
    calibrated once, and times the loop on ``clock``."""
    number = 0

    def sample() -> float | CpuSample:
        nonlocal number
        if number == 0:
            start = time.perf_counter()
            fn()
            once = time.perf_counter() - start
            number = max(1, min(100_000, int(min_time / max(once, 1e-7))))
        gc.disable()
        try:
            watch = Stopwatch(clock)
            for _ in range(number):
                fn()
            return watch.per(number)
        finally:
            gc.enable()

    sample.calls = lambda: number  # type: ignore[attr-defined]
    return sample


def measure(candidates: dict[str, Sampler], samples: int) -> dict[str, Stat]:
    """Warm up each candidate, then take ``samples`` rounds, round-robin in rotating order.

    Every candidate must time on the same clock: a ratio of CPU time to wall time means nothing.
    """
    names = list(candidates)
    # The conversations are alive for the whole run: move them out of the collector's sight, so
    # the collection before each sample stays cheap (a full one over them takes seconds).
    gc.collect()
    gc.freeze()
    for name in names:
        gc.collect()
        candidates[name]()  # warm-up (and calibration)
    taken: dict[str, list[float | CpuSample]] = {name: [] for name in names}
    for round_ in range(samples):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            gc.collect()
            taken[name].append(candidates[name]())
    clocks = {isinstance(value, CpuSample) for values in taken.values() for value in values}
    if len(clocks) > 1:
        raise ValueError(f"candidates {names} mix CPU-timed and wall-timed samples")
    stats: dict[str, Stat] = {}
    for name, values in taken.items():
        calls = getattr(candidates[name], "calls", lambda: 1)()
        if clocks == {True}:
            cpu = [v.cpu for v in values if isinstance(v, CpuSample)]
            wall = [v.wall for v in values if isinstance(v, CpuSample)]
            stats[name] = Stat(statistics.median(cpu), min(cpu), cpu, calls, "cpu", wall)
        else:
            plain = [v for v in values if not isinstance(v, CpuSample)]
            stats[name] = Stat(statistics.median(plain), min(plain), plain, calls)
    return stats
