"""threadline's benchmark suite: threadline, its peers and plain-dict floors, side by side.

    python bench/run.py [--sizes 100,1000,10000,100000] [--quick] [--json-out FILE]

Every workload runs its candidates (threadline, the floors in ``floors.py``, the peers in
``peers.py``) interleaved round-robin in one process (``timing.py``): a warm-up call each, then
``--samples`` rounds in which every candidate takes one sample, in a rotating order. A sample
is one timed loop of enough calls to last ``--min-time`` (one call for slow ones), with the
garbage collector collected before and disabled during the loop (as ``timeit`` does). Medians
and minimums are per call. Most workloads run in this process; memory, ``import threadline``
and the workloads whose targets compare sizes (``fresh.py``: the ``limits=`` entry points and
appends, one interpreter per size, in 3 rounds; ``hostile.py``: issue 19's hostile shapes, one
interpreter per shape and size) run in fresh interpreters.

Durable work (the SQLite appends of ``sqlite`` and ``stores_peers``, the sessions of
``interop_openai_agents``: every commit waits on fsync) is timed in CPU time of this process,
every thread (``timing.py`` says why); its rows and targets say "CPU", and its wall time is
printed beside, never judged.

The output is markdown: the machine and versions, the medians with ratios to the floors and
peers, and one PASS/MISS line per target of issue 11 (targets are judged at sizes 10,000 and
100,000 only), judged on the ratio of the medians. ``bench/README.md`` says how each library
gets the same conversation.

Exit status: 1 when a target is missed, 0 otherwise. With ``--quick`` (5 samples, 20 ms
samples, one round of the fresh interpreters), a verdict is *indicative* when the same ratio
of the fastest samples falls on the other side of the limit: the run cannot tell which side
the target is on. Such a verdict reads ``PASS (indicative)`` or ``MISS (indicative)`` and does
not count: a quick run exits 1 only on a miss that is not indicative. A full run's verdicts are
all counted.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import itertools
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import data  # noqa: E402
import floors  # noqa: E402
import fresh as fresh_child  # noqa: E402
import hostile  # noqa: E402
import peers  # noqa: E402
import redis_cluster  # noqa: E402
import step as step_workload  # noqa: E402
import stores_peers  # noqa: E402
import stores_servers  # noqa: E402
import stores_watch  # noqa: E402
import view as view_workload  # noqa: E402
from timing import Clock  # noqa: E402
from timing import CpuSample  # noqa: E402
from timing import Stat  # noqa: E402
from timing import Stopwatch  # noqa: E402
from timing import measure  # noqa: E402
from timing import timed  # noqa: E402

import threadline as tl  # noqa: E402
from threadline.context import trim_messages  # noqa: E402

PROVIDERS = (
    "openai_chat",
    "openai_responses",
    "anthropic",
    "gemini",
    "mistral",
    "bedrock",
    "ollama",
    "cohere",
    # the OpenAI-compatible dialects (issue 41): Chat Completions with each one's reasoning
    "deepseek",
    "openrouter",
    "vllm",
    "groq",
    "qwen",
    "moonshot",
    "xai",
    "together",
)
TARGET_SIZES = (10_000, 100_000)
APPEND_SIZES = (100, 10_000, 100_000)
CONTEXT_WINDOW = 128_000
FRESH_ROUNDS = 3
"""How many times each size of a fresh-interpreter workload is measured (1 with --quick)."""
"""The token budget of the "context window" trim: a common model context size."""
OPTIONAL_MODULES = (
    "redis",
    "psycopg",
    "psycopg_pool",
    "openai",
    "anthropic",
    "google.genai",
    "mistralai",
    "mistral_common",
    "botocore",
    "boto3",
    "ollama",
    "tiktoken",
    "orjson",
    "httpx",
    "pydantic_ai",
    "langchain_core",
    "agents",
)
LAZY_MODULES = (
    "threadline.codecs",
    "threadline.stores",
    "threadline.context",
    "threadline.interop",
)


# ---------------------------------------------------------------------------------------------
# Measuring


# ---------------------------------------------------------------------------------------------
# Results


@dataclass
class Row:
    """One workload at one size: threadline against its floors and peers."""

    workload: str
    size: int
    subject: str
    stats: dict[str, Stat]
    floors: list[str] = field(default_factory=list)
    peers: list[str] = field(default_factory=list)
    note: str = ""


@dataclass
class Target:
    """One target of issue 11 checked against one measured ratio."""

    what: str
    size: int | None
    measured: float
    limit: str
    passed: bool
    detail: str = ""
    fastest: float | None = None
    """The same ratio of the fastest samples (``min``), where there are samples."""
    clock: Clock = "wall"
    indicative: bool = False
    """A quick run's verdict it cannot resolve: ``fastest`` is on the other side of the limit."""


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    memory: list[dict[str, Any]] = field(default_factory=list)
    imports: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    quick: bool = False

    def check(
        self,
        what: str,
        size: int | None,
        measured: float,
        limit: str,
        ok: bool,
        detail: str = "",
        *,
        fastest: float | None = None,
        clock: Clock = "wall",
    ) -> None:
        """Judge ``measured`` (from medians) against ``limit``. In a quick run, a verdict the
        fastest samples contradict is indicative: too few, too short samples on a shared
        machine to tell which side of the limit the ratio is on."""
        indicative = self.quick and fastest is not None and meets(fastest, limit) != ok
        self.targets.append(
            Target(what, size, measured, limit, ok, detail, fastest, clock, indicative)
        )

    def compare(
        self, what: str, size: int | None, a: Stat, b: Stat, limit: str, detail: str = ""
    ) -> None:
        """Target: ``a`` ÷ ``b`` within ``limit``, judged on the medians, on their clock."""
        if a.clock != b.clock:
            raise ValueError(f"{what}: a ratio of {a.clock} time to {b.clock} time")
        measured = a.median / b.median
        self.check(
            what,
            size,
            measured,
            limit,
            meets(measured, limit),
            detail,
            fastest=a.min / b.min,
            clock=a.clock,
        )

    def failed(self) -> list[Target]:
        """The misses the exit status counts: every miss but a quick run's indicative ones."""
        return [t for t in self.targets if not t.passed and not t.indicative]


_COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    "≤": lambda a, b: a <= b,
    "≥": lambda a, b: a >= b,
    "<": lambda a, b: a < b,
    ">": lambda a, b: a > b,
}


def meets(value: float, limit: str) -> bool:
    """``value`` against a limit as the targets table writes it (``"≤ 1.5"``, ``"< 1"``)."""
    op, bound = limit.split()
    return _COMPARISONS[op](value, float(bound))


# ---------------------------------------------------------------------------------------------
# Workloads


@dataclass
class Corpus:
    """One conversation of ``size`` messages in every library's types."""

    size: int
    spec: list[dict[str, Any]]
    threadline: list[tl.Message]
    dicts: list[dict[str, Any]]
    pydantic_ai: list[Any]
    langchain: list[Any]
    threadline_json: bytes
    pydantic_ai_json: bytes
    langchain_json: bytes
    label: str = ""
    """The conversation shape, appended to row and target names ("" for the usual one)."""


def corpus(size: int, shape: str = "agent turns") -> Corpus:
    spec = data.SHAPES[shape](size)
    messages = data.to_threadline(spec)
    pai = data.to_pydantic_ai(spec)
    lc = data.to_langchain(spec)
    dicts = data.to_floor_dicts(spec)
    blob = tl.dump_json(messages)
    # The floors must write the very document dump_json writes, or they do less work.
    if floors.load_orjson(blob) != floors.load_orjson(floors.dump_orjson(dicts)):
        raise AssertionError("the floor dicts do not hold the same data as the messages")
    return Corpus(
        size,
        spec,
        messages,
        dicts,
        pai,
        lc,
        blob,
        peers.pydantic_ai_dump(pai),
        peers.langchain_dump(lc),
        "" if shape == "agent turns" else f" ({shape})",
    )


def bench_build(report: Report, c: Corpus, samples: int, min_time: float) -> None:
    stats = measure(
        {
            "threadline": timed(lambda: data.to_threadline(c.spec), min_time),
            "pydantic-ai": timed(lambda: data.to_pydantic_ai(c.spec), min_time),
            "langchain-core": timed(lambda: data.to_langchain(c.spec), min_time),
        },
        samples,
    )
    report.rows.append(
        Row(
            "build typed objects",
            c.size,
            "threadline",
            stats,
            peers=["pydantic-ai", "langchain-core"],
            note="from the spec dicts; threadline validates, the peers' constructors do not",
        )
    )


def bench_dump(report: Report, c: Corpus, samples: int, min_time: float) -> None:
    stats = measure(
        {
            "threadline": timed(lambda: tl.dump_json(c.threadline), min_time),
            "pydantic_core.to_json": timed(lambda: floors.dump_pydantic_core(c.dicts), min_time),
            "orjson.dumps": timed(lambda: floors.dump_orjson(c.dicts), min_time),
            "pydantic-ai": timed(lambda: peers.pydantic_ai_dump(c.pydantic_ai), min_time),
            "langchain-core": timed(lambda: peers.langchain_dump(c.langchain), min_time),
        },
        samples,
    )
    row = Row(
        "dump_json" + c.label,
        c.size,
        "threadline",
        stats,
        floors=["pydantic_core.to_json", "orjson.dumps"],
        peers=["pydantic-ai", "langchain-core"],
    )
    report.rows.append(row)
    if c.size in TARGET_SIZES:
        s = row.stats
        report.compare(
            "dump_json ÷ pydantic_core.to_json" + c.label,
            c.size,
            s["threadline"],
            s["pydantic_core.to_json"],
            "≤ 2",
        )
        report.compare(
            "pydantic-ai dump_json ÷ dump_json" + c.label,
            c.size,
            s["pydantic-ai"],
            s["threadline"],
            "≥ 3",
        )
        report.compare(
            "langchain messages_to_dict+json.dumps ÷ dump_json" + c.label,
            c.size,
            s["langchain-core"],
            s["threadline"],
            "≥ 1.5",
        )


def _threadline_loader(blob: bytes) -> tuple[Callable[[bytes], Any], str]:
    """``load_json`` with its default limits, or ``Limits.none()`` when ``blob`` is too big.

    The default ``max_bytes`` is meant for requests; the docs say to read a trusted history
    file larger than that with ``Limits.none()``.
    """
    try:
        from threadline.limits import Limits
    except ImportError:  # a threadline without limits
        return tl.load_json, ""
    if Limits().max_bytes is None or len(blob) <= Limits().max_bytes:
        return tl.load_json, ""
    none = Limits.none()
    return (lambda data: tl.load_json(data, limits=none)), "limits=Limits.none()"


def bench_load(report: Report, c: Corpus, samples: int, min_time: float) -> None:
    load, note = _threadline_loader(c.threadline_json)
    stats = measure(
        {
            "threadline": timed(lambda: load(c.threadline_json), min_time),
            "orjson.loads": timed(lambda: floors.load_orjson(c.threadline_json), min_time),
            "pydantic_core.from_json": timed(
                lambda: floors.load_pydantic_core(c.threadline_json), min_time
            ),
            "pydantic-ai": timed(lambda: peers.pydantic_ai_load(c.pydantic_ai_json), min_time),
            "langchain-core": timed(lambda: peers.langchain_load(c.langchain_json), min_time),
        },
        samples,
    )
    row = Row(
        "load_json" + c.label,
        c.size,
        "threadline",
        stats,
        floors=["orjson.loads", "pydantic_core.from_json"],
        peers=["pydantic-ai", "langchain-core"],
        note=note,
    )
    report.rows.append(row)
    if c.size in TARGET_SIZES:
        s = row.stats
        report.compare(
            "load_json ÷ orjson.loads" + c.label, c.size, s["threadline"], s["orjson.loads"], "≤ 4"
        )
        report.compare(
            "pydantic-ai validate_json ÷ load_json" + c.label,
            c.size,
            s["pydantic-ai"],
            s["threadline"],
            "≥ 2",
        )
        report.compare(
            "langchain json.loads+messages_from_dict ÷ load_json" + c.label,
            c.size,
            s["langchain-core"],
            s["threadline"],
            "≥ 2",
        )


def _messages_of(corpora: dict[int, Corpus], size: int) -> list[tl.Message]:
    if size in corpora:
        return corpora[size].threadline
    return data.to_threadline(data.conversation(size))


def fresh(workload: str, size: int, samples: int, min_time: float) -> dict[str, Stat]:
    """Run ``fresh.py``'s ``workload`` at ``size`` in a fresh interpreter; its stats."""
    out = subprocess.run(
        [sys.executable, str(HERE / "fresh.py"), workload, str(size), str(samples), str(min_time)],
        check=True,
        capture_output=True,
        text=True,
    )
    return {name: Stat(**values) for name, values in json.loads(out.stdout).items()}


def _rounds(count: int) -> str:
    return f"{count} round" if count == 1 else f"{count} rounds"


def fresh_rounds(
    workload: str, sizes: Sequence[int], samples: int, min_time: float, rounds: int
) -> dict[int, dict[str, Stat]]:
    """``fresh`` for every size, ``rounds`` times over, the sizes in a rotating order: a size
    is compared with another measured minutes apart, so a shared machine's drift in between
    must hit every size alike. A candidate's median is the median of its rounds' medians."""
    taken: dict[int, list[dict[str, Stat]]] = {size: [] for size in sizes}
    for round_ in range(rounds):
        shift = round_ % len(sizes)
        for size in [*sizes[shift:], *sizes[:shift]]:
            taken[size].append(fresh(workload, size, samples, min_time))
    return {
        size: {
            name: Stat(
                statistics.median(run[name].median for run in runs),
                min(run[name].min for run in runs),
                [value for run in runs for value in run[name].samples],
                runs[-1][name].calls,
            )
            for name in runs[0]
        }
        for size, runs in taken.items()
    }


def bench_append(
    report: Report, sizes: Sequence[int], samples: int, min_time: float, rounds: int
) -> None:
    """``History.append`` + ``snapshot()`` and appends to a full token window, each size in a
    fresh interpreter (``fresh.py`` says why), in ``rounds`` rounds: their targets compare
    sizes."""
    measured = fresh_rounds("append", sizes, samples, min_time, rounds)
    for size in sizes:
        stats = measured[size]
        report.rows.append(
            Row(
                "History.append + snapshot()",
                size,
                "threadline",
                stats,
                floors=["list.append + list()"],
                note=f"per operation; fresh interpreters, {_rounds(rounds)}",
            )
        )
        report.rows.append(
            Row(
                "History(max_tokens).append (window full)",
                size,
                "window append",
                stats,
                note=f"window of ~{size:,} messages; per append; fresh interpreters",
            )
        )
    rows = {r.size: r for r in report.rows if r.workload == "History.append + snapshot()"}
    small = rows.get(100)
    for size in sizes:
        if size not in TARGET_SIZES or size not in rows:
            continue
        stats = rows[size].stats
        if small is not None:
            for name, what in (
                ("threadline", "append+snapshot cost ÷ cost at 100"),
                ("window append", "token-window append cost ÷ cost at 100 (O(1) amortized)"),
            ):
                report.compare(what, size, stats[name], small.stats[name], "≤ 1.5")
        if size == 100_000:
            report.compare(
                "append+snapshot ÷ list.append+list()",
                size,
                stats["threadline"],
                stats["list.append + list()"],
                "≤ 0.1",
            )


def bench_prepare(report: Report, c: Corpus, samples: int, min_time: float) -> None:
    broken_spec = data.with_defects(c.spec)
    broken = data.to_threadline(broken_spec)
    broken_dicts = data.to_floor_dicts(broken_spec)
    broken_pai = data.to_pydantic_ai(broken_spec)
    for label, messages, dicts, pai in (
        ("clean", c.threadline, c.dicts, c.pydantic_ai),
        ("with defects", broken, broken_dicts, broken_pai),
    ):
        stats = measure(
            {
                "threadline": timed(lambda m=messages: tl.prepare_messages(m), min_time),
                "pairing pass": timed(lambda d=dicts: floors.pairing_pass(d), min_time),
                "pydantic-ai": timed(lambda p=pai: peers.pydantic_ai_repair(p), min_time),
            },
            samples,
        )
        row = Row(
            f"prepare_messages ({label})",
            c.size,
            "threadline",
            stats,
            floors=["pairing pass"],
            peers=["pydantic-ai"],
            note="" if label == "clean" else "~1 defect per 100 messages",
        )
        report.rows.append(row)
        if c.size in TARGET_SIZES:
            limit = 3 if label == "clean" else 4
            report.compare(
                f"prepare_messages ({label}) ÷ pairing pass",
                c.size,
                stats["threadline"],
                stats["pairing pass"],
                f"≤ {limit}",
            )


def bench_trim(report: Report, c: Corpus, samples: int, min_time: float) -> None:
    """``trim_messages`` on a ``History`` snapshot (which knows where its system messages are,
    so the cost is the window's) and on a plain list (validated and scanned for system
    messages in full), against the plain-dict suffix scan and langchain-core."""
    total = sum(map(floors.estimate, c.dicts))
    snapshot = tl.History(c.threadline).snapshot()
    for label, budget in (("128k-token window", CONTEXT_WINDOW), ("half the tokens", total // 2)):
        if budget >= total:
            continue
        stats = measure(
            {
                "threadline": timed(
                    lambda b=budget: trim_messages(snapshot, max_tokens=b), min_time
                ),
                "threadline (list)": timed(
                    lambda b=budget: trim_messages(c.threadline, max_tokens=b), min_time
                ),
                "suffix scan": timed(lambda b=budget: floors.suffix_scan(c.dicts, b), min_time),
                "langchain-core": timed(
                    lambda b=budget: peers.langchain_trim(c.langchain, b), min_time
                ),
            },
            samples,
        )
        for subject, form in (("threadline", "History snapshot"), ("threadline (list)", "list")):
            row = Row(
                f"trim_messages ({label}, {form})",
                c.size,
                subject,
                stats,
                floors=["suffix scan"],
                peers=["langchain-core"],
                note=f"max_tokens={budget:,} of {total:,}",
            )
            report.rows.append(row)
            if c.size in TARGET_SIZES:
                report.compare(
                    f"trim_messages ({label}, {form}) ÷ suffix scan",
                    c.size,
                    stats[subject],
                    stats["suffix scan"],
                    "≤ 3",
                )


def bench_encode(report: Report, c: Corpus, samples: int, min_time: float) -> None:
    candidates = {"dump_json": timed(lambda: tl.dump_json(c.threadline), min_time)}
    for provider in PROVIDERS:
        candidates[provider] = timed(
            lambda p=provider: tl.encode(c.threadline, provider=p), min_time
        )
    stats = measure(candidates, samples)
    for provider in PROVIDERS:
        row = Row(f"encode ({provider})", c.size, provider, stats, floors=["dump_json"])
        report.rows.append(row)
        if c.size in TARGET_SIZES:
            report.compare(
                f"encode {provider} ÷ dump_json", c.size, stats[provider], stats["dump_json"], "≤ 3"
            )


def bench_tools(report: Report, samples: int, min_time: float) -> None:
    """``tool_from_function`` against pydantic's own schema generation for the same function
    (issue 23: at most 1.5 times). Both start from the function each call: nothing cached."""
    import pydantic
    import tool_sample

    fn = tool_sample.get_weather
    candidates = {
        "TypeAdapter.json_schema": timed(lambda: pydantic.TypeAdapter(fn).json_schema(), min_time),
        "tool_from_function": timed(lambda: tl.tool_from_function(fn), min_time),
    }
    stats = measure(candidates, samples)
    row = Row("tool_from_function", 1, "tool_from_function", stats, ["TypeAdapter.json_schema"])
    report.rows.append(row)
    report.compare(
        "tool_from_function ÷ TypeAdapter.json_schema",
        None,
        stats["tool_from_function"],
        stats["TypeAdapter.json_schema"],
        "≤ 1.5",
    )


TOOLS_ENCODE_LIMITS = {100: 1.2, 10_000: 1.05}
"""Issue 23: ``encode`` with 20 tools ÷ ``encode`` without, per history size (schemas cached)."""


def bench_encode_tools(report: Report, c: Corpus, samples: int, min_time: float) -> None:
    """``encode`` with 20 tools against ``encode`` without them, per provider (issue 23). The
    adapted schemas are cached after the first call, as they are in an agent loop."""
    if c.size not in TOOLS_ENCODE_LIMITS:
        return
    import tool_sample

    base = tl.tool_from_function(tool_sample.get_weather)
    tools = [dataclasses.replace(base, name=f"tool_{n}") for n in range(20)]
    for provider in PROVIDERS:
        tl.encode(c.threadline, provider=provider, tools=tools)  # warm the schema cache
        candidates = {
            "without": timed(lambda p=provider: tl.encode(c.threadline, provider=p), min_time),
            "with 20 tools": timed(
                lambda p=provider: tl.encode(c.threadline, provider=p, tools=tools), min_time
            ),
        }
        stats = measure(candidates, samples)
        row = Row(f"encode + 20 tools ({provider})", c.size, "with 20 tools", stats, ["without"])
        report.rows.append(row)
        report.compare(
            f"encode {provider} 20 tools ÷ none",
            c.size,
            stats["with 20 tools"],
            stats["without"],
            f"≤ {TOOLS_ENCODE_LIMITS[c.size]}",
        )


UNTRUSTED = {
    "load_json": "load_json(text)",
    "restore": "History.restore(mappings)",
    "openai_chat.decode": "openai_chat decode(payload)",
    "anthropic.decode": "anthropic decode(payload)",
}
"""The entry points that read outside data with limits, timed for linearity (issue 13)."""


def bench_untrusted(
    report: Report, sizes: Sequence[int], samples: int, min_time: float, rounds: int
) -> None:
    """The entry points that take ``limits=``, each size timed in a fresh interpreter that
    holds only its conversation (``fresh.py`` says why), in ``rounds`` rounds; the linearity
    check (10x the input costs at most 12x the time) compares sizes afterwards."""
    measured = fresh_rounds("untrusted", sizes, samples, min_time, rounds)
    for size in sizes:
        for name, label in UNTRUSTED.items():
            report.rows.append(
                Row(
                    f"untrusted: {label}",
                    size,
                    name,
                    measured[size],
                    ["orjson.loads", "pydantic_core.from_json"],
                    note=f"fresh interpreters, {_rounds(rounds)}",
                )
            )


def check_linearity(report: Report) -> None:
    """For every pair of measured sizes ``n`` and ``10n`` (from 1,000 up): the time at ``10n``
    over the time at ``n``, which must be at most 12 for each entry point; the floor's own
    growth is shown beside it, since memory effects make even ``orjson.loads`` superlinear."""
    rows = {
        (row.subject, row.size): row for row in report.rows if row.workload.startswith("untrusted")
    }
    sizes = sorted({size for _, size in rows})
    for small in sizes:
        large = small * 10
        if small < 1_000 or large not in sizes:
            continue
        for name, label in UNTRUSTED.items():
            a, b = rows[name, small], rows[name, large]
            grown = ", ".join(
                f"{floor} grew {b.stats[floor].median / a.stats[floor].median:.1f}x"
                for floor in ("orjson.loads", "pydantic_core.from_json")
                if floor in a.stats and floor in b.stats
            )
            report.compare(
                f"linearity: {label} at 10x the input",
                large,
                b.stats[name],
                a.stats[name],
                "≤ 12",
                grown,
            )


def bench_hostile(
    report: Report,
    sizes: Sequence[int],
    samples: int,
    min_time: float,
    rounds: int,
    progress: Callable[[str], None],
) -> None:
    """The hostile shapes of issue 19 (``hostile.py``: repair, one codec's ``encode`` and the
    error report on N calls, results, messages or errors in one place), each shape and size
    timed in a fresh interpreter, in ``rounds`` rounds: 10x the input costs at most 12x the
    time, from 1,000 up."""
    check_growth(
        report,
        hostile.SHAPES,
        hostile.__file__,
        "hostile: ",
        sizes,
        samples,
        min_time,
        rounds,
        progress,
    )


def bench_streaming(
    report: Report,
    sizes: Sequence[int],
    samples: int,
    min_time: float,
    rounds: int,
    progress: Callable[[str], None],
) -> None:
    """Issue 35, item 4: every stream format and shape (``streaming.LINEAR``: tiny text deltas,
    tool calls, argument deltas, citations or part boundaries) at N events, assembled in CPU
    time, each (shape, N) in a fresh interpreter, in ``rounds`` rounds: 10x the events cost at
    most 12x the time, from 1,000 up."""
    import streaming

    check_growth(
        report,
        streaming.LINEAR,
        streaming.__file__,
        "stream ",
        sizes,
        samples,
        min_time,
        rounds,
        progress,
    )


def check_growth(
    report: Report,
    shapes: dict[str, hostile.Shape],
    script: str,
    prefix: str,
    sizes: Sequence[int],
    samples: int,
    min_time: float,
    rounds: int,
    progress: Callable[[str], None],
) -> None:
    """``shapes`` (run by ``script --child``, ``hostile.py``'s loop) at every size from 1,000,
    a row each (``prefix`` + the shape's label), and a linearity target for every pair of sizes
    ``n`` and ``10n``."""
    sizes = [size for size in sizes if size >= 1_000]
    if not sizes:
        return
    measured = hostile.measure_all(list(shapes), sizes, samples, min_time, rounds, progress, script)
    for (name, size), stats in measured.items():
        report.rows.append(
            Row(
                prefix + shapes[name].label,
                size,
                name,
                stats,
                floors=[hostile.FLOOR],
                note=f"fresh interpreters, {_rounds(rounds)}",
            )
        )
    limit = hostile.GROWTH_LIMIT
    for g in hostile.growths(measured):
        report.check(
            f"linearity: {shapes[g.shape].label} at 10x the input",
            g.large,
            g.median,
            f"≤ {limit:.0f}",
            g.median <= limit,
            f"fastest samples grew {g.min:.1f}x, the floor {g.floor:.1f}x",
            fastest=g.min,
            clock=shapes[g.shape].clock,
        )


def bench_sqlite(
    report: Report, corpora: dict[int, Corpus], sizes: Sequence[int], samples: int, min_time: float
) -> None:
    from threadline.stores import SQLiteStore

    pool = fresh_child.append_pool()
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            base = _messages_of(corpora, size)
            store = SQLiteStore(Path(tmp) / f"bench_{size}.db")
            store.append("conversation", base)
            blob = tl.dump_json(base)
            load, _ = _threadline_loader(blob)
            counter = itertools.count()

            def append_sample(
                store: Any = store, counter: Any = counter, versioned: bool = False
            ) -> float | CpuSample:
                # Fresh ids: a stored conversation holds each message id once.
                batch = [
                    pool[n % len(pool)].model_copy(update={"id": f"bench-append-{n}"})
                    for n in itertools.islice(counter, 20)
                ]
                # As a bound History does: the version is known, each write expects it.
                version = store.version("conversation") if versioned else None
                gc.disable()
                watch = Stopwatch("cpu")  # durable: the fsync wait is the disk's, not ours
                for message in batch:
                    store.append("conversation", [message], expected_version=version)
                    if version is not None:
                        version += 1
                per_append = watch.per(len(batch))
                gc.enable()
                return per_append

            stats = measure(
                {
                    "threadline": append_sample,
                    "versioned": lambda: append_sample(versioned=True),
                },
                samples,
            )
            row = Row(
                "SQLiteStore.append (1 message)",
                size,
                "threadline",
                stats,
                note=f"{size:,} messages stored; one durable (fsync) transaction each; "
                "versioned: with expected_version",
            )
            report.rows.append(row)
            report.compare(
                "SQLiteStore versioned ÷ unversioned append",
                size,
                stats["versioned"],
                stats["threadline"],
                "≤ 1.2",
            )
            stats = measure(
                {
                    "threadline": timed(lambda s=store: s.load("conversation"), min_time),
                    "load_json": timed(lambda b=blob, f=load: f(b), min_time),
                },
                samples,
            )
            report.rows.append(
                Row(
                    "SQLiteStore.load",
                    size,
                    "threadline",
                    stats,
                    floors=["load_json"],
                    note="plus the appended messages",
                )
            )
            store.close()


def bench_memory(report: Report, c: Corpus) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        files = {
            "threadline": c.threadline_json,
            "threadline-list": c.threadline_json,
            "pydantic-ai": c.pydantic_ai_json,
            "langchain-core": c.langchain_json,
        }
        results: dict[tuple[str, str], int] = {}
        for library, blob in files.items():
            path = Path(tmp) / f"{library}.json"
            path.write_bytes(blob)
            for mode in ("tracemalloc", "rss"):
                out = subprocess.run(
                    [sys.executable, str(HERE / "memory.py"), library, str(path), mode],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
                results[library, mode] = json.loads(out)["retained"]
    for library in files:
        report.memory.append(
            {
                "library": library + c.label,
                "size": c.size,
                "tracemalloc": results[library, "tracemalloc"],
                "rss": results[library, "rss"],
            }
        )
    for mode in ("tracemalloc", "rss"):
        ours = results["threadline", mode] / c.size
        theirs = results["pydantic-ai", mode] / c.size
        report.check(
            f"memory retained per message ({mode}) ÷ pydantic-ai's{c.label}",
            c.size,
            ours / theirs,
            "≤ 1",
            ours <= theirs,
            f"{ours:,.0f} vs {theirs:,.0f} bytes/message",
        )


_PYDANTIC_PROBE = """
import json, time
start = time.perf_counter()
import pydantic.dataclasses, pydantic.fields, pydantic.json_schema, pydantic.main
print(json.dumps({"ms": (time.perf_counter() - start) * 1000}))
"""
"""What importing the parts of pydantic that threadline builds on costs by itself."""

_IMPORT_PROBE = """
import json, sys, time
start = time.perf_counter()
import threadline
elapsed = time.perf_counter() - start
optional = json.loads(sys.argv[1])
lazy = json.loads(sys.argv[2])
print(json.dumps({
    "ms": elapsed * 1000,
    "optional": [m for m in optional if m in sys.modules],
    "lazy": [m for m in lazy if m in sys.modules],
}))
"""


def bench_import(report: Report, runs: int = 5) -> None:
    command = [
        sys.executable,
        "-c",
        _IMPORT_PROBE,
        json.dumps(OPTIONAL_MODULES),
        json.dumps(LAZY_MODULES),
    ]
    with tempfile.TemporaryDirectory() as cache:
        # As installed: with bytecode (a source checkout under PYTHONDONTWRITEBYTECODE would
        # recompile threadline in every interpreter), kept out of the source tree.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        subprocess.run(command, check=True, capture_output=True, env=env)  # writes the bytecode
        probes = [
            json.loads(
                subprocess.run(command, check=True, capture_output=True, text=True, env=env).stdout
            )
            for _ in range(runs)
        ]
        pydantic_runs = sorted(
            json.loads(
                subprocess.run(
                    [sys.executable, "-c", _PYDANTIC_PROBE],
                    check=True,
                    capture_output=True,
                    text=True,
                    env=env,
                ).stdout
            )["ms"]
            for _ in range(runs)
        )
    times = sorted(p["ms"] for p in probes)
    optional = sorted({m for p in probes for m in p["optional"]})
    lazy = sorted({m for p in probes for m in p["lazy"]})
    report.imports = {
        "median_ms": statistics.median(times),
        "min_ms": times[0],
        "runs": times,
        "pydantic_median_ms": statistics.median(pydantic_runs),
        "optional_imported": optional,
        "lazy_imported": lazy,
    }
    median = statistics.median(times)
    report.check(
        "import threadline (ms, median of 5 fresh interpreters)",
        None,
        median,
        "≤ 150",
        median <= 150,
        fastest=times[0],
    )
    report.check(
        "optional dependencies imported by import threadline",
        None,
        len(optional),
        "none",
        not optional,
        ", ".join(optional) or "none",
    )


# ---------------------------------------------------------------------------------------------
# Output


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "os": platform.platform(),
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
    }


def _time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.2f} µs"


def _clocked(stat: Stat, ratio: float) -> str:
    """The median and ``ratio``; CPU-timed work says so and has its wall time after them."""
    cell = f"{_time(stat.median)} (x{ratio:.2f})"
    if stat.clock == "cpu":
        return f"CPU {cell}; wall {_time(stat.wall_median)}"
    return cell


def _bytes(count: float) -> str:
    return f"{count / 1e6:,.1f} MB"


def render(report: Report, meta: dict[str, Any]) -> str:
    out: list[str] = []
    m = meta["machine"]
    out.append("## Machine and versions\n")
    out.append(f"- CPU: {m['cpu']}, {m['cores']} cores; {m['python']}; {m['os']}")
    load = meta["load"]
    out.append(f"- load average (1, 5, 15 min) at start: {load['start']}; at end: {load['end']}")
    out.append("- " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()))
    out.append(
        f"- command: `{meta['command']}`; {meta['samples']} samples per candidate, "
        f"duration {meta['duration_s']:.0f} s"
    )
    for note in report.notes:
        out.append(f"- note: {note}")
    out.append("\n## Targets (issues 11 and 13)\n")
    out.append(
        "Ratios of medians. A target marked (CPU time) is judged on the CPU time of this "
        "process (`time.process_time`, every thread): durable work, whose wall time is mostly "
        "the wait for fsync.\n"
    )
    if report.quick:
        out.append(
            "A quick run cannot resolve every target: a verdict is *indicative* when the same "
            "ratio of the fastest samples falls on the other side of the limit (shown beside "
            "it). The exit status counts only the misses that are not indicative.\n"
        )
    out.append("| target | size | measured | limit | result |")
    out.append("|---|---:|---:|---|---|")
    for t in report.targets:
        size = f"{t.size:,}" if t.size else "-"
        details = [t.detail] if t.detail else []
        if t.indicative:
            details.append(f"fastest samples: {t.fastest:.2f}")
        value = f"{t.measured:.2f}" + (f" ({'; '.join(details)})" if details else "")
        what = t.what + (" (CPU time)" if t.clock == "cpu" else "")
        result = "PASS" if t.passed else "MISS"
        result = f"{result} (indicative)" if t.indicative else result
        result = result if t.passed or t.indicative else f"**{result}**"
        out.append(f"| {what} | {size} | {value} | {t.limit} | {result} |")
    out.append("\n## Medians\n")
    out.append(
        "Time per call, median (min in brackets). Floors: threadline ÷ floor (x). "
        "Peers: peer ÷ threadline (above 1: threadline is faster). Rows whose times read "
        '"CPU" are timed in CPU time (durable work), their ratios too; the wall time beside '
        "them is for reading, never judged.\n"
    )
    out.append("| workload | size | threadline | floors | peers | note |")
    out.append("|---|---:|---:|---|---|---|")
    for row in report.rows:
        subject = row.stats[row.subject]
        cell = f"{_time(subject.median)} ({_time(subject.min)})"
        if subject.clock == "cpu":
            cell = f"CPU {cell}; wall {_time(subject.wall_median)}"
        floor_cells = [
            f"{name} {_clocked(row.stats[name], subject.median / row.stats[name].median)}"
            for name in row.floors
        ]
        peer_cells = [
            f"{name} {_clocked(row.stats[name], row.stats[name].median / subject.median)}"
            for name in row.peers
        ]
        out.append(
            f"| {row.workload} | {row.size:,} | {cell} | {'<br>'.join(floor_cells)} | "
            f"{'<br>'.join(peer_cells)} | {row.note} |"
        )
    if report.memory:
        out.append("\n## Memory retained by a loaded history (fresh interpreter each)\n")
        out.append("| library | messages | tracemalloc | per message | RSS | per message |")
        out.append("|---|---:|---:|---:|---:|---:|")
        for entry in report.memory:
            n = entry["size"]
            out.append(
                f"| {entry['library']} | {n:,} | {_bytes(entry['tracemalloc'])} | "
                f"{entry['tracemalloc'] / n:,.0f} B | {_bytes(entry['rss'])} | "
                f"{entry['rss'] / n:,.0f} B |"
            )
        out.append("\n`threadline` is `History.from_json`; `threadline-list` is `load_json`.")
    if report.imports:
        i = report.imports
        out.append("\n## import threadline\n")
        runs = ", ".join(f"{t:.0f}" for t in i["runs"])
        out.append(f"- median {i['median_ms']:.0f} ms (runs: {runs} ms)")
        out.append(
            f"- of which pydantic's own modules (imported alone, median of 5): "
            f"{i['pydantic_median_ms']:.0f} ms"
        )
        out.append(
            f"- optional dependencies imported: {', '.join(i['optional_imported']) or 'none'}"
        )
        out.append(f"- lazy threadline modules imported: {', '.join(i['lazy_imported']) or 'none'}")
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=None, help="comma-separated conversation sizes")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="sizes 100,10000, shorter samples, memory at 10,000 (~3 min); verdicts it cannot "
        "resolve are indicative and do not set the exit status",
    )
    parser.add_argument("--samples", type=int, default=None, help="samples per candidate (≥ 5)")
    parser.add_argument("--min-time", type=float, default=None, help="seconds per sample")
    parser.add_argument("--json-out", default=None, help="also write the results as JSON here")
    parser.add_argument("--only", default=None, help="comma-separated workload names (debugging)")
    args = parser.parse_args(argv)
    default_sizes = "100,10000" if args.quick else "100,1000,10000,100000"
    sizes = sorted({int(s) for s in (args.sizes or default_sizes).split(",")})
    samples = max(5, args.samples or 5 if args.quick else args.samples or 7)
    min_time = args.min_time or (0.02 if args.quick else 0.1)
    only = set(args.only.split(",")) if args.only else None

    def wanted(name: str) -> bool:
        return only is None or name in only

    started = time.perf_counter()

    def progress(what: str) -> None:
        print(f"[bench {time.perf_counter() - started:6.1f} s] {what}", file=sys.stderr)

    load_start = os.getloadavg()
    report = Report(quick=args.quick)
    corpora: dict[int, Corpus] = {}
    per_size = ("build", "dump", "load", "prepare", "trim", "encode", "encode_tools")
    for size in sizes if any(map(wanted, per_size)) else ():
        progress(f"size {size:,}: building the conversation")
        c = corpora[size] = corpus(size)
        steps = [
            ("build", bench_build),
            ("dump", bench_dump),
            ("load", bench_load),
            ("prepare", bench_prepare),
            ("trim", bench_trim),
            ("encode", bench_encode),
            ("encode_tools", bench_encode_tools),
        ]
        for name, bench in steps:
            if wanted(name):
                progress(f"size {size:,}: {name}")
                bench(report, c, samples, min_time)
        if wanted("load") or wanted("dump"):  # issue 27: every load/dump target on both shapes
            small = corpus(size, "many small messages")
            for name, bench in (("dump", bench_dump), ("load", bench_load)):
                if wanted(name):
                    progress(f"size {size:,}: {name}{small.label}")
                    bench(report, small, samples, min_time)
    if wanted("tools"):
        progress("tool_from_function")
        bench_tools(report, samples, min_time)
    rounds = 1 if args.quick else FRESH_ROUNDS
    if wanted("untrusted"):
        progress(f"untrusted input, fresh interpreters, {rounds} round(s)")
        bench_untrusted(report, sizes, samples, min_time, rounds)
        check_linearity(report)
    if wanted("hostile"):
        progress(f"hostile shapes (issue 19), fresh interpreters, {rounds} round(s)")
        bench_hostile(report, sizes, samples, min_time, rounds, progress)
    if wanted("streaming"):
        progress(f"stream assembly (issue 35), fresh interpreters, {rounds} round(s)")
        bench_streaming(report, sizes, samples, min_time, rounds, progress)
    append_sizes = [s for s in APPEND_SIZES if s in sizes or s == 100]
    if args.quick:
        append_sizes = [s for s in append_sizes if s <= max(sizes)]
    if wanted("append"):
        progress(f"append + snapshot, token-window append, {rounds} round(s)")
        bench_append(report, append_sizes, samples, min_time, rounds)
    if wanted("sqlite"):
        progress("SQLiteStore")
        bench_sqlite(report, corpora, sorted({100, max(sizes)}), samples, min_time)
    if wanted("stores_peers"):
        progress("SQLite stores: threadline, LangChain, OpenAI Agents SDK")
        stores_peers.bench_stores_peers(report, Row, 10_000, samples, min_time)
    if wanted("stores_servers"):
        progress("Redis/PostgreSQL appends per second, 8 processes")
        stores_servers.bench_stores_servers(report, Row, 8, 1.0 if args.quick else 3.0)
    if wanted("redis_cluster"):
        progress("RedisStore on a private 3-master cluster against one node (issue 40)")
        redis_cluster.bench_redis_cluster(report, Row, args.quick)
    if wanted("stores_watch"):
        progress("AsyncPostgresStore watch at 1, 100 and 1,000 watched conversations")
        stores_watch.bench_stores_watch(report, Row, 30 if args.quick else 200)
    if wanted("step"):
        # The step's sizes start at 10 (issue 39); --sizes picks them, --quick takes 100 and
        # 10,000.
        step_sizes = sizes if args.sizes or args.quick else list(step_workload.STEP_SIZES)
        progress(f"agent step (issue 39) at {', '.join(f'{s:,}' for s in step_sizes)}")
        step_workload.bench_step(report, Row, step_sizes, samples, min_time, progress)
    if wanted("view"):
        progress("viewer page (issue 42): render and open 10,000 messages in headless Chromium")
        view_workload.bench_view(report, Row, 3 if args.quick else samples)
    if wanted("memory"):
        size = min(max(sizes), 100_000)
        progress(f"memory at {size:,}")
        bench_memory(report, corpora[size] if size in corpora else corpus(size))
        bench_memory(report, corpus(size, "many small messages"))
    if wanted("interop_openai_agents"):
        progress("interop: ThreadlineSession against the Agents SDK's SQLiteSession")
        from interop_openai_agents import bench_interop_openai_agents

        bench_interop_openai_agents(report, samples, min_time)
    if wanted("interop_pydantic_ai"):
        from interop_pydantic_ai import bench_interop_pydantic_ai

        progress("interop_pydantic_ai: 10,000 messages each way")
        bench_interop_pydantic_ai(report, samples, min_time)
    if wanted("import"):
        progress("import threadline")
        bench_import(report)
    if wanted("interop_vercel"):
        progress("interop_vercel: 10,000 messages each way")
        from interop_vercel import bench_interop_vercel

        bench_interop_vercel(report, samples, min_time)
    if wanted("interop_langchain"):
        progress("interop: LangChain, 10,000 messages each way")
        from interop_langchain import bench_interop_langchain

        bench_interop_langchain(report, samples, min_time)
    meta = {
        "machine": machine(),
        "versions": {"threadline": tl.__version__, **peers.versions()},
        "load": {
            "start": tuple(round(x, 2) for x in load_start),
            "end": tuple(round(x, 2) for x in os.getloadavg()),
        },
        "command": "python bench/run.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "quick": args.quick,
        "samples": samples,
        "duration_s": time.perf_counter() - started,
    }
    print(render(report, meta))
    if args.json_out:
        payload = {
            "meta": meta,
            "targets": [asdict(t) for t in report.targets],
            "rows": [
                {
                    "workload": r.workload,
                    "size": r.size,
                    "subject": r.subject,
                    "note": r.note,
                    "stats": {k: asdict(v) for k, v in r.stats.items()},
                }
                for r in report.rows
            ],
            "memory": report.memory,
            "import": report.imports,
        }
        Path(args.json_out).write_text(json.dumps(payload, indent=2, default=str))
    return 1 if report.failed() else 0


if __name__ == "__main__":
    raise SystemExit(main())
