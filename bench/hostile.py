"""Hostile shapes, timed for linearity (issue 19): 10x the input costs at most 12x the time.

    python bench/hostile.py [--sizes 1000,10000,100000] [--rounds 1] [--samples 5]
                            [--min-time 0.05] [--only NAME,...]

Each shape once made repair (or the error report) take N squared steps for N calls, results,
messages or errors, all within ``Limits.untrusted()`` (10,000 parts): ``prepare_messages`` on
one assistant message of 9,998 unanswered calls took 6.97 s. The sizes go past what the
untrusted limits let in (1,000 messages, 10,000 parts), since trusted histories reach these
functions without limits. Each (shape, size) is built and timed in a fresh interpreter, as in
``fresh.py`` (a large size's heap must not slow the next one): this script runs itself as
``python bench/hostile.py --child SHAPE SIZE SAMPLES MIN_TIME``, which prints the stats as
JSON. With ``--rounds`` above 1 the sizes run in a rotating order and a shape's median is the
median of its rounds'. ``run.py`` runs the same through :func:`measure_all` and
:func:`growths` (``--only hostile``). The exit status is 1 when a shape grows more than 12x.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import asdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from timing import Clock  # noqa: E402
from timing import Stat  # noqa: E402
from timing import measure  # noqa: E402
from timing import timed  # noqa: E402

import threadline as tl  # noqa: E402
from threadline import Message  # noqa: E402
from threadline.codecs import get_codec  # noqa: E402
from threadline.testing.hostile import internal_after_calls  # noqa: E402
from threadline.testing.hostile import invalid_messages  # noqa: E402
from threadline.testing.hostile import merged  # noqa: E402
from threadline.testing.hostile import misplaced  # noqa: E402
from threadline.testing.hostile import provider_pairs  # noqa: E402
from threadline.testing.hostile import reasoning_items  # noqa: E402
from threadline.testing.hostile import reused_id  # noqa: E402
from threadline.testing.hostile import shared_ids  # noqa: E402
from threadline.testing.hostile import unanswered  # noqa: E402

SIZES = (1_000, 10_000, 100_000)
GROWTH_LIMIT = 12.0


# ---------------------------------------------------------------------------------------------
# The shapes (threadline.testing.hostile): N calls, results, messages or errors where one of
# each is ordinary


def _invalid_messages(n: int) -> bytes:
    return invalid_messages(n).encode()


def _rename(messages: list[Message]) -> object:
    try:
        return tl.repair_messages(messages, rename_duplicate_ids=True)
    except tl.IntegrityError as error:  # the orphans: reported after every id was looked at
        return error


def _load(data: bytes) -> object:
    try:
        return tl.load_json(data)
    except tl.ValidationError as error:
        return error


def _encode(provider: str) -> Callable[[list[Message]], object]:
    codec = get_codec(provider)
    return lambda messages: codec.encode(messages)


def _dump(messages: list[Message]) -> object:
    return tl.dump_json(messages)


def _parse(data: bytes) -> object:
    return json.loads(data)


@dataclass(frozen=True)
class Shape:
    label: str
    build: Callable[[int], Any]
    run: Callable[[Any], object]
    floor: Callable[[Any], object] = _dump
    """Linear work on the same input, timed beside it: at 100,000 memory effects make even
    this grow more than 10x (it shows how much of a growth is the machine's)."""
    clock: Clock = "wall"
    """What times it (``timing.py``): ``"cpu"`` leaves out the waits of a loaded machine."""


SHAPES: dict[str, Shape] = {
    "unanswered": Shape(
        "prepare_messages: one message of N unanswered calls", unanswered, tl.prepare_messages
    ),
    "merged": Shape(
        "prepare_messages: N results merged into a tool message", merged, tl.prepare_messages
    ),
    "misplaced": Shape("prepare_messages: N misplaced results", misplaced, tl.prepare_messages),
    "provider": Shape(
        "prepare_messages: N provider call/result pairs", provider_pairs, tl.prepare_messages
    ),
    "internal": Shape(
        "prepare_messages: N calls, then N internal messages",
        internal_after_calls,
        tl.prepare_messages,
    ),
    "rename": Shape("rename_duplicate_ids: one id reused N times", reused_id, _rename),
    "rename-shared": Shape(
        "rename_duplicate_ids: N ids shared by two turns, N orphans", shared_ids, _rename
    ),
    "encode": Shape("anthropic encode: N misplaced results", misplaced, _encode("anthropic")),
    "encode-responses": Shape(
        "openai_responses encode: N reasoning items", reasoning_items, _encode("openai_responses")
    ),
    "load_json": Shape(
        "load_json error report: N invalid messages", _invalid_messages, _load, _parse
    ),
}


# ---------------------------------------------------------------------------------------------
# Measuring: one fresh interpreter per (shape, size)


FLOOR = "floor"


def child(
    name: str, size: int, samples: int, min_time: float, shapes: dict[str, Shape] = SHAPES
) -> dict[str, Stat]:
    shape = shapes[name]
    data = shape.build(size)
    return measure(
        {
            name: timed(lambda: shape.run(data), min_time, shape.clock),
            FLOOR: timed(lambda: shape.floor(data), min_time, shape.clock),
        },
        samples,
    )


def fresh(
    name: str, size: int, samples: int, min_time: float, script: str = __file__
) -> dict[str, Stat]:
    """``child`` in a fresh interpreter: ``script --child NAME SIZE SAMPLES MIN_TIME``."""
    out = subprocess.run(
        [sys.executable, script, "--child", name, str(size), str(samples), str(min_time)],
        check=True,
        capture_output=True,
        text=True,
    )
    return {key: Stat(**value) for key, value in json.loads(out.stdout).items()}


def measure_all(
    names: Sequence[str],
    sizes: Sequence[int],
    samples: int,
    min_time: float,
    rounds: int,
    progress: Callable[[str], None] | None = None,
    script: str = __file__,
) -> dict[tuple[str, int], dict[str, Stat]]:
    """Every shape (and its floor) at every size, ``rounds`` times, the sizes in a rotating
    order; ``script`` (another module's shapes, as ``bench/streaming.py``'s) runs each."""
    taken: dict[tuple[str, int], list[dict[str, Stat]]] = {(n, s): [] for n in names for s in sizes}
    for round_ in range(rounds):
        shift = round_ % len(sizes)
        for size in [*sizes[shift:], *sizes[:shift]]:
            for name in names:
                if progress is not None:
                    progress(f"{name} at {size:,} (round {round_ + 1} of {rounds})")
                taken[name, size].append(fresh(name, size, samples, min_time, script))
    return {
        key: {
            candidate: Stat(
                statistics.median(run[candidate].median for run in runs),
                min(run[candidate].min for run in runs),
                [value for run in runs for value in run[candidate].samples],
                runs[-1][candidate].calls,
                runs[-1][candidate].clock,
                [value for run in runs for value in run[candidate].wall],
            )
            for candidate in runs[0]
        }
        for key, runs in taken.items()
    }


@dataclass(frozen=True)
class Growth:
    shape: str
    small: int
    large: int
    median: float
    """The median at ``large`` over the median at ``small``: what the limit judges."""
    min: float
    """The same for the fastest samples, which a busy machine slows least."""
    floor: float
    """The floor's median growth."""


def growths(measured: dict[tuple[str, int], dict[str, Stat]]) -> Iterator[Growth]:
    """The growth of every shape over every measured pair of sizes ``n``, ``10n`` from 1,000."""
    sizes = sorted({size for _, size in measured})
    names = list(dict.fromkeys(name for name, _ in measured))
    for name in names:
        for small in sizes:
            large = small * 10
            if small >= 1_000 and (name, large) in measured:
                a, b = measured[name, small], measured[name, large]
                yield Growth(
                    name,
                    small,
                    large,
                    b[name].median / a[name].median,
                    b[name].min / a[name].min,
                    b[FLOOR].median / a[FLOOR].median,
                )


def _time(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def render(
    measured: dict[tuple[str, int], dict[str, Stat]],
    sizes: Sequence[int],
    shapes: dict[str, Shape] = SHAPES,
) -> str:
    lines = [
        "Medians; growth at 10x the input: median (min; the floor's median).\n",
        "| shape | " + " | ".join(f"{size:,}" for size in sizes) + " | growth at 10x |",
        "|---|" + "---:|" * len(sizes) + "---|",
    ]
    grown: dict[str, list[str]] = {}
    for g in growths(measured):
        mark = "" if g.median <= GROWTH_LIMIT else " **MISS**"
        grown.setdefault(g.shape, []).append(
            f"{g.small:,} → {g.large:,}: {g.median:.1f}x{mark} ({g.min:.1f}x; {g.floor:.1f}x)"
        )
    for name in dict.fromkeys(name for name, _ in measured):
        cells = [_time(measured[name, size][name].median) for size in sizes]
        growth = "; ".join(grown.get(name, ["-"]))
        lines.append(f"| {shapes[name].label} | " + " | ".join(cells) + f" | {growth} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "--child":
        name, size, samples, min_time = args[1], int(args[2]), int(args[3]), float(args[4])
        stats = child(name, size, samples, min_time)
        print(json.dumps({key: asdict(stat) for key, stat in stats.items()}))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.05)
    parser.add_argument("--only", default=None, help="comma-separated shape names")
    parsed = parser.parse_args(args)
    sizes = sorted({int(size) for size in parsed.sizes.split(",")})
    names = parsed.only.split(",") if parsed.only else list(SHAPES)
    measured = measure_all(
        names,
        sizes,
        parsed.samples,
        parsed.min_time,
        parsed.rounds,
        lambda what: print(what, file=sys.stderr, flush=True),
    )
    print(render(measured, sizes))
    return 0 if all(g.median <= GROWTH_LIMIT for g in growths(measured)) else 1


if __name__ == "__main__":
    raise SystemExit(main())
