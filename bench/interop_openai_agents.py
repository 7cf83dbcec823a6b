"""The ``interop_openai_agents`` workload, on 10,000 Agents SDK items: the conversions
``ThreadlineSession`` makes each way against the SDK item types' own JSON validation of the
same items (issue 26: at most 1 each), and ``ThreadlineSession`` against the SDK's own
``SQLiteSession`` plus that validation (the peer's cost of the same work, validated).

Both sessions write to a SQLite file in a temporary directory: ``add_items`` in batches of
100 items (a run saves one turn's items per call), then one ``get_items()`` of the whole
history. Each batch is a durable commit (one fsync) in both, so the sessions are timed in CPU
time (``timing.py``), with the wall time in the row's note: both do their SQLite work in
``asyncio.to_thread`` workers, which ``time.process_time`` counts.

The items are a typical agent history: user messages, reasoning, function calls with their
outputs, and assistant output messages with the fields the SDK sets (``status``,
``annotations``, ``logprobs``).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

from timing import CpuSample
from timing import Stat
from timing import Stopwatch
from timing import measure
from timing import timed

ITEMS = 10_000
BATCH = 100
PEER = "TypeAdapter(list[TResponseInputItem]).validate_json"
"""The peer's own JSON validation of the same history, with the SDK's item types (the SDK
ships no adapter for them: ``TResponseInputItem`` is openai's ``ResponseInputItemParam``)."""


def agent_items(count: int) -> list[dict[str, Any]]:
    """``count`` items of an agent conversation, turn after turn."""
    items: list[dict[str, Any]] = []
    turn = 0
    while len(items) < count:
        call_id = f"call_{turn}"
        turn_items: list[dict[str, Any]] = [
            {"role": "user", "content": f"Question {turn}: what is the weather in Paris?"},
            {
                "type": "reasoning",
                "id": f"rs_{turn}",
                "summary": [{"type": "summary_text", "text": "Look the weather up."}],
                "encrypted_content": "gAAAA" + "x" * 200,
            },
            {
                "type": "function_call",
                "id": f"fc_{turn}",
                "call_id": call_id,
                "name": "get_weather",
                "arguments": json.dumps({"city": "Paris", "unit": "celsius"}),
                "status": "completed",
            },
            {
                "type": "function_call_output",
                "call_id": call_id,
                "output": json.dumps({"temperature": 21, "sky": "clear"}),
            },
            {
                "id": f"msg_{turn}",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [
                    {
                        "type": "output_text",
                        "text": "It is 21 °C and clear in Paris. " * 4,
                        "annotations": [],
                        "logprobs": [],
                    }
                ],
            },
        ]
        items.extend(turn_items)
        turn += 1
    return items[:count]


async def _add_and_get(session: Any, items: list[dict[str, Any]]) -> tuple[CpuSample, CpuSample]:
    watch = Stopwatch("cpu")
    for at in range(0, len(items), BATCH):
        await session.add_items(items[at : at + BATCH])
    added = watch.both()
    watch = Stopwatch("cpu")
    got = await session.get_items()
    read = watch.both()
    if len(got) != len(items):
        raise AssertionError(f"{type(session).__name__} returned {len(got)} of {len(items)} items")
    return added, read


def _stat(values: list[CpuSample]) -> Stat:
    cpu = [v.cpu for v in values]
    return Stat(statistics.median(cpu), min(cpu), cpu, 1, "cpu", [v.wall for v in values])


def bench_interop_openai_agents(report: Any, samples: int, min_time: float) -> None:
    """The conversions each way (``messages_of`` in batches of 100, ``items_of`` of what they
    made) against the SDK item types' ``validate_json`` of the same items: at most 1 each
    (issue 26). Then the sessions, both on a SQLite file: 10,000 items added in batches of 100
    and one ``get_items()``, each step of ``ThreadlineSession`` against the same step of
    ``SQLiteSession`` (which stores and returns JSON text as it is) plus ``validate_json``."""
    from agents import SQLiteSession
    from agents.items import TResponseInputItem
    from pydantic import TypeAdapter
    from run import Row

    from threadline.interop.openai_agents import ThreadlineSession
    from threadline.interop.openai_agents import items_of
    from threadline.interop.openai_agents import messages_of
    from threadline.stores import SQLiteStore

    items = agent_items(ITEMS)
    payload = json.dumps(items).encode()
    adapter: Any = TypeAdapter(list[TResponseInputItem])

    def add_all() -> list[Any]:
        return [m for at in range(0, ITEMS, BATCH) for m in messages_of(items[at : at + BATCH])]

    stored = add_all()
    if items_of(stored) != items:
        raise AssertionError("items_of(messages_of(items)) is not items")
    conversions = measure(
        {
            "messages_of": timed(add_all, min_time),
            "items_of": timed(lambda: items_of(stored), min_time),
            PEER: timed(lambda: adapter.validate_json(payload), min_time),
        },
        samples,
    )
    for subject in ("messages_of", "items_of"):
        report.rows.append(
            Row(f"interop_openai_agents ({subject})", ITEMS, subject, conversions, peers=[PEER],
                note=f"{ITEMS:,} Agents SDK items, batches of {BATCH}")
        )  # fmt: skip
        report.compare(f"{subject} ÷ {PEER}", ITEMS, conversions[subject], conversions[PEER], "≤ 1")

    times: dict[str, list[CpuSample]] = {}

    def sampler(name: str) -> Any:
        def sample() -> CpuSample:
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "sessions.db"
                if name == "threadline":
                    store = SQLiteStore(path)
                    session: Any = ThreadlineSession(store, "bench")
                else:
                    store = None
                    session = SQLiteSession("bench", str(path))
                add, get = asyncio.run(_add_and_get(session, items))
                if store is not None:
                    store.close()
                else:
                    session.close()
            times.setdefault(f"{name} add", []).append(add)
            times.setdefault(f"{name} get", []).append(get)
            return CpuSample(add.cpu + get.cpu, add.wall + get.wall)

        return sample

    def validate() -> CpuSample:
        watch = Stopwatch("cpu")
        adapter.validate_json(payload)
        taken = watch.both()
        times.setdefault("validate_json", []).append(taken)
        return taken

    stats = measure(
        {
            "threadline": sampler("threadline"),
            "SQLiteSession": sampler("SQLiteSession"),
            "validate_json": validate,
        },
        max(5, samples),
    )
    # the first value of each is measure()'s warm-up
    steps = {name: _stat(values[1:]) for name, values in times.items()}
    for step in ("add", "get"):
        mine, sdk = steps[f"threadline {step}"], steps[f"SQLiteSession {step}"]
        check = steps["validate_json"]
        peer = Stat(sdk.median + check.median, sdk.min + check.min, [], 1, "cpu")
        report.compare(
            f"ThreadlineSession.{step}_items ÷ (SQLiteSession.{step}_items + {PEER})",
            ITEMS,
            mine,
            peer,
            "≤ 1",
        )
    detail = ", ".join(
        f"{name} CPU {stat.median * 1000:.0f} ms (wall {stat.wall_median * 1000:.0f} ms)"
        for name, stat in sorted(steps.items())
    )
    report.rows.append(
        Row(
            "interop_openai_agents (sessions, add + get)",
            ITEMS,
            "threadline",
            stats,
            peers=["SQLiteSession"],
            note=f"add_items in batches of {BATCH}, then get_items(); SQLite files; {detail}",
        )
    )
