"""Issue 26, "Performance": converting 10,000 messages to and from pydantic-ai costs at most what
pydantic-ai's own JSON validation of the same history (``ModelMessagesTypeAdapter.validate_json``)
costs. The history is the benchmark corpus (``data.conversation``) as threadline messages,
converted once to pydantic-ai for the other direction and for the JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Any

import data
from timing import Stat
from timing import measure
from timing import timed

SIZE = 10_000
PEER = "ModelMessagesTypeAdapter.validate_json"


@dataclass
class _Row:
    """A row of the report (the fields of ``run.Row``, which imports this module)."""

    workload: str
    size: int
    subject: str
    stats: dict[str, Stat]
    floors: list[str] = field(default_factory=list)
    peers: list[str] = field(default_factory=list)
    note: str = ""


def bench_interop_pydantic_ai(report: Any, samples: int, min_time: float) -> None:
    """``to_pydantic_ai`` and ``from_pydantic_ai`` over 10,000 messages, each against
    ``ModelMessagesTypeAdapter.validate_json`` of the same history: at most 1 each."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    from threadline.interop.pydantic_ai import from_pydantic_ai
    from threadline.interop.pydantic_ai import to_pydantic_ai

    messages = data.to_threadline(data.conversation(SIZE))
    native = to_pydantic_ai(messages)
    payload = ModelMessagesTypeAdapter.dump_json(native)
    candidates = {
        "to_pydantic_ai": timed(lambda: to_pydantic_ai(messages), min_time),
        "from_pydantic_ai": timed(lambda: from_pydantic_ai(native), min_time),
        PEER: timed(lambda: ModelMessagesTypeAdapter.validate_json(payload), min_time),
    }
    stats = measure(candidates, samples)
    for subject in ("to_pydantic_ai", "from_pydantic_ai"):
        report.rows.append(
            _Row(f"interop_pydantic_ai ({subject})", SIZE, subject, stats, peers=[PEER],
                 note=f"{len(native):,} pydantic-ai messages")
        )  # fmt: skip
        report.compare(f"{subject} ÷ {PEER}", SIZE, stats[subject], stats[PEER], "≤ 1")
