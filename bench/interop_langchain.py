"""The LangChain adapter (issue 26, "Performance"): converting 10,000 messages either way
costs at most what LangChain's own JSON validation of the same history costs
(``json.loads`` + ``messages_from_dict``)."""

from __future__ import annotations

import sys
from typing import Any

import data
import peers
from timing import measure
from timing import timed

SIZE = 10_000
PEER = "langchain json.loads+messages_from_dict"


def bench_interop_langchain(report: Any, samples: int, min_time: float) -> None:
    """``from_langchain`` and ``to_langchain`` over a 10,000-message history against
    LangChain's own JSON validation of it; two targets (each ≤ 1x the peer)."""
    from threadline.interop.langchain import from_langchain
    from threadline.interop.langchain import to_langchain

    row_type = sys.modules[type(report).__module__].Row  # run.py's, whatever name it runs as
    native = data.to_langchain(data.conversation(SIZE))
    blob = peers.langchain_dump(native)
    messages = from_langchain(native)
    stats = measure(
        {
            "from_langchain": timed(lambda: from_langchain(native), min_time),
            "to_langchain": timed(lambda: to_langchain(messages), min_time),
            PEER: timed(lambda: peers.langchain_load(blob), min_time),
        },
        samples,
    )
    note = f"{len(native):,} LangChain messages = {len(messages):,} threadline messages"
    for subject in ("from_langchain", "to_langchain"):
        own = {name: stat for name, stat in stats.items() if name in (subject, PEER)}
        report.rows.append(
            row_type(f"interop_langchain: {subject}", SIZE, subject, own, peers=[PEER], note=note)
        )
        report.compare(f"{subject} ÷ {PEER}", SIZE, stats[subject], stats[PEER], "≤ 1")
