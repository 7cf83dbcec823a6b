"""Workload ``stores_watch``: ``AsyncPostgresStore.watch`` at 1, 100 and 1,000 watched
conversations (issue 40, item 3).

One store in this process watches ``count`` conversations (one watch each, every one started:
it has read and waits); then ``writes`` appends go round-robin to the watched conversations,
each awaited until its watch has yielded it. A row gives:

- **CPU per write**, ``time.process_time`` of the process (the write, the listener's dispatch
  and the woken watch's read), with wall time beside: it should not grow with the number of
  watches, since a write wakes the watches of its conversation only;
- **connections held** while watching, counted in ``pg_stat_activity`` by the store's
  application name: the pool's (``max_connections``, 10 here) plus one ``LISTEN`` connection,
  whatever the number of watches (one connection per watch before issue 40);
- **wake-ups**: how many watches the listener woke for the ``writes`` writes (one each).

Needs ``THREADLINE_POSTGRES_DSN`` (skipped with a note when unset). The tables live under a
fresh prefix and are dropped afterwards.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from typing import Any

from stores_servers import _cleanup
from timing import CpuSample
from timing import Stat
from timing import Stopwatch

__all__ = ["bench_stores_watch"]

COUNTS = (1, 100, 1000)


def _sessions(dsn: str, name: str) -> int:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as connection:
        row = connection.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name IN (%s, %s)",
            (name, f"{name} watch"),
        ).fetchone()
    return int(row[0]) if row else 0


async def _run(dsn: str, prefix: str, count: int, writes: int) -> tuple[CpuSample, int, int]:
    import threadline as tl
    from threadline.stores.postgres import AsyncPostgresStore

    name = f"tlbench-{uuid.uuid4().hex[:8]}"
    async with AsyncPostgresStore(
        dsn, table_prefix=prefix, connect_kwargs={"application_name": name}
    ) as store:
        await store.version("c0")  # the tables exist before the watches start
        watches = [store.watch(f"c{k}", after_version=0) for k in range(count)]
        pending = [asyncio.ensure_future(watch.__anext__()) for watch in watches]
        while not all(watch._started for watch in watches):
            await asyncio.sleep(0.01)
        held = await asyncio.to_thread(_sessions, dsn, name)
        listener = store._listeners.current()
        woken_before = sum(listener.wakeups.values())
        clock = Stopwatch("cpu")
        for k in range(writes):
            target = k % count
            await store.append(f"c{target}", [tl.user_message(f"m{k}", id=f"m{k}")])
            await asyncio.wait_for(pending[target], 60)
            pending[target] = asyncio.ensure_future(watches[target].__anext__())
        sample = clock.both(writes)
        woken = sum(listener.wakeups.values()) - woken_before
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        for watch in watches:
            await watch.aclose()
    return sample, held, woken


def bench_stores_watch(report: Any, row: Any, writes: int) -> None:
    """Rows of CPU per write and connections held at 1, 100 and 1,000 watched conversations;
    ``row`` is ``run.Row``."""
    dsn = os.environ.get("THREADLINE_POSTGRES_DSN", "")
    if not dsn:
        report.notes.append("stores_watch: skipped, THREADLINE_POSTGRES_DSN is unset")
        return
    for count in COUNTS:
        prefix = f"tlbench_{uuid.uuid4().hex[:12]}_"
        try:
            sample, held, woken = asyncio.run(_run(dsn, prefix, count, writes))
        finally:
            _cleanup("postgres", dsn, prefix)
        stat = Stat(sample.cpu, sample.cpu, [sample.cpu], writes, clock="cpu", wall=[sample.wall])
        report.rows.append(
            row(
                f"AsyncPostgresStore watch, write and wake, {count:,} watched "
                + ("conversation" if count == 1 else "conversations"),
                count,
                "threadline",
                {"threadline": stat},
                note=f"{held} connections held (pool and one LISTEN; one per watch before "
                f"issue 40); {woken} wake-ups for {writes} writes; CPU {sample.cpu * 1e3:.2f} ms, "
                f"wall {sample.wall * 1e3:.2f} ms per write",
            )
        )
