"""threadline.interop.vercel: 10,000 messages each way, against threadline's own JSON.

The AI SDK has no Python validator of its ``UIMessage`` JSON, so the reference is threadline's
``load_json`` of the same history (issue 26, "Performance"): reading the ``useChat`` body with
``from_ui_messages`` (JSON text in, messages out) is compared with ``load_json`` of the
``dump_json`` text, and writing with ``to_ui_messages`` plus ``json.dumps`` with ``dump_json``.
Registered in ``run.py`` as the workload ``interop_vercel``.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import data
from timing import measure
from timing import timed

import threadline as tl
from threadline.interop.vercel import from_ui_messages
from threadline.interop.vercel import to_ui_messages
from threadline.limits import Limits

SIZE = 10_000


def bench_interop_vercel(report: Any, samples: int, min_time: float) -> None:
    from run import Row  # run.py imports this module: import its row type when called

    messages = data.to_threadline(data.conversation(SIZE))
    body = json.dumps({"messages": to_ui_messages(messages)}).encode()
    threadline_json = tl.dump_json(messages)
    # Untrusted limits, widened to this history's size only (a chat request is far smaller).
    wide = dataclasses.replace(
        Limits.untrusted(), max_messages=None, max_parts=None, max_bytes=None
    )
    if len(from_ui_messages(body, trusted=True)) != len(messages):
        raise AssertionError("from_ui_messages does not read back the history it was given")
    stats = measure(
        {
            "from_ui_messages": timed(lambda: from_ui_messages(body, trusted=True), min_time),
            "from_ui_messages untrusted": timed(
                lambda: from_ui_messages(body, limits=wide), min_time
            ),
            "load_json": timed(lambda: tl.load_json(threadline_json), min_time),
            "to_ui_messages+json.dumps": timed(
                lambda: json.dumps(to_ui_messages(messages)), min_time
            ),
            "dump_json": timed(lambda: tl.dump_json(messages), min_time),
        },
        samples,
    )
    reading = Row(
        "interop_vercel read",
        SIZE,
        "from_ui_messages",
        stats,
        floors=["load_json"],
        peers=["from_ui_messages untrusted"],
        note="useChat body (JSON text) → messages, trusted; load_json of the same history",
    )
    writing = Row(
        "interop_vercel write",
        SIZE,
        "to_ui_messages+json.dumps",
        stats,
        floors=["dump_json"],
        note="messages → UIMessage JSON text; dump_json of the same history",
    )
    report.rows.extend([reading, writing])
    report.compare(
        "from_ui_messages ÷ load_json", SIZE, stats["from_ui_messages"], stats["load_json"], "≤ 3"
    )
    report.compare(
        "to_ui_messages+json.dumps ÷ dump_json",
        SIZE,
        stats["to_ui_messages+json.dumps"],
        stats["dump_json"],
        "≤ 5",
    )
