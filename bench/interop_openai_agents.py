"""The ``interop_openai_agents`` workload: ``ThreadlineSession`` against the Agents SDK's own
``SQLiteSession``, on the same 10,000 items.

Both sessions write to a SQLite file in a temporary directory: ``add_items`` in batches of
100 items (a run saves one turn's items per call), then one ``get_items()`` of the whole
history. The items are a typical agent history: user messages, reasoning, function calls with
their outputs, and assistant output messages with the fields the SDK sets (``status``,
``annotations``, ``logprobs``).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

ITEMS = 10_000
BATCH = 100
TARGET = 10.0
"""``ThreadlineSession`` add + get over ``SQLiteSession`` add + get: at most this.

threadline reads every item into typed messages (the Responses codec, validation, the JSON
checks of metadata) and repairs the history on the way out, where ``SQLiteSession`` stores and
returns the JSON text as it is."""


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


async def _add_and_get(session: Any, items: list[dict[str, Any]]) -> tuple[float, float]:
    start = time.perf_counter()
    for at in range(0, len(items), BATCH):
        await session.add_items(items[at : at + BATCH])
    added = time.perf_counter()
    got = await session.get_items()
    done = time.perf_counter()
    if len(got) != len(items):
        raise AssertionError(f"{type(session).__name__} returned {len(got)} of {len(items)} items")
    return added - start, done - added


def bench_interop_openai_agents(report: Any, samples: int, min_time: float) -> None:
    """Add 10,000 items in batches of 100 and read them back, both sessions on SQLite."""
    from agents import SQLiteSession
    from run import Row
    from timing import measure

    from threadline.interop.openai_agents import ThreadlineSession
    from threadline.stores import SQLiteStore

    items = agent_items(ITEMS)
    times: dict[str, list[float]] = {}

    def sampler(name: str, kind: str) -> Any:
        def sample() -> float:
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
            return add + get if kind == "total" else add

        return sample

    stats = measure(
        {
            "threadline": sampler("threadline", "total"),
            "SQLiteSession": sampler("SQLiteSession", "total"),
        },
        max(3, samples // 2),
    )
    report.rows.append(
        Row(
            "interop_openai_agents (add + get)",
            ITEMS,
            "threadline",
            stats,
            peers=["SQLiteSession"],
            note=f"add_items in batches of {BATCH}, then get_items(); SQLite files",
        )
    )
    ratio = stats["threadline"].median / stats["SQLiteSession"].median
    medians = {name: sorted(values)[len(values) // 2] for name, values in times.items()}
    detail = ", ".join(f"{name} {value * 1000:.0f} ms" for name, value in sorted(medians.items()))
    report.check(
        "ThreadlineSession ÷ SQLiteSession, 10,000 items add + get",
        ITEMS,
        ratio,
        f"≤ {TARGET:g}",
        ratio <= TARGET,
        detail,
    )
