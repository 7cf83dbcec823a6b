"""Workload ``stores_servers``: appends per second to Redis and PostgreSQL from several writer
processes (issue 25, "Performance").

Each of ``processes`` spawned processes opens its own ``RedisStore`` / ``PostgresStore`` and
appends one message at a time for ``seconds``, with ``expected_version`` as a bound History
writes:

- **one conversation**, shared by all: each append reads the version and writes with it,
  retrying on ``ConflictError`` (the retry loop of the issue); only successful appends count;
- **one conversation each**: the writer knows its version (it is the only writer), so no read.

Needs ``THREADLINE_REDIS_URL`` / ``THREADLINE_POSTGRES_DSN``; a backend whose variable is unset
is skipped with a note. Durability is each server's as configured (the row says what it is):
Redis ``appendonly``/``appendfsync``, PostgreSQL ``synchronous_commit``/``fsync``. Keys and
tables live under a fresh prefix and are removed afterwards.
"""

from __future__ import annotations

import multiprocessing
import os
import time
import uuid
from typing import Any

from timing import Stat

__all__ = ["bench_stores_servers"]


def _open(kind: str, location: str, prefix: str) -> Any:
    if kind == "redis":
        from threadline.stores import RedisStore

        return RedisStore(location, prefix=prefix)
    from threadline.stores import PostgresStore

    return PostgresStore(location, table_prefix=prefix)


def _writer(
    kind: str, location: str, prefix: str, conversation: str, seconds: float, start: Any, out: Any
) -> None:
    import threadline as tl

    store = _open(kind, location, prefix)
    store.version(conversation)  # connect before the start
    shared = conversation == "shared"
    start.wait()
    deadline = time.perf_counter() + seconds
    done = conflicts = 0
    version = store.version(conversation)
    tag = uuid.uuid4().hex[:8]
    while time.perf_counter() < deadline:
        if shared:
            version = store.version(conversation)
        message = tl.user_message(f"{tag} {done}", id=f"{tag}-{done}")
        try:
            store.append(conversation, [message], expected_version=version)
        except tl.ConflictError:
            conflicts += 1
            continue
        done += 1
        version += 1
    store.close()
    out.put((done, conflicts))


def _run(
    kind: str, location: str, prefix: str, processes: int, seconds: float, shared: bool
) -> tuple[int, int]:
    context = multiprocessing.get_context("spawn")
    start, out = context.Event(), context.Queue()
    _open(kind, location, prefix).version("shared")  # tables or keys exist before the race
    workers = [
        context.Process(
            target=_writer,
            args=(kind, location, prefix, "shared" if shared else f"own-{w}", seconds, start, out),
        )
        for w in range(processes)
    ]
    for worker in workers:
        worker.start()
    time.sleep(1.0)  # let every process import and connect
    start.set()
    results = [out.get(timeout=seconds + 120) for _ in workers]
    for worker in workers:
        worker.join(60)
    done = sum(r[0] for r in results)
    conflicts = sum(r[1] for r in results)
    return done, conflicts


def _durability(kind: str, location: str) -> str:
    try:
        if kind == "redis":
            import redis

            client = redis.Redis.from_url(location)
            aof = client.config_get("appendonly").get("appendonly")
            fsync = client.config_get("appendfsync").get("appendfsync")
            client.close()
            return f"appendonly {aof}, appendfsync {fsync}"
        import psycopg

        with psycopg.connect(location) as connection:
            sync = connection.execute("SHOW synchronous_commit").fetchone()
            fsync = connection.execute("SHOW fsync").fetchone()
        return f"synchronous_commit {sync[0] if sync else '?'}, fsync {fsync[0] if fsync else '?'}"
    except Exception as error:  # the note says so; the numbers stand
        return f"durability settings unreadable ({type(error).__name__})"


def _cleanup(kind: str, location: str, prefix: str) -> None:
    if kind == "redis":
        import redis

        client = redis.Redis.from_url(location)
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
        client.close()
        return
    import psycopg

    with psycopg.connect(location, autocommit=True) as connection:
        tables = connection.execute(
            "SELECT tablename FROM pg_tables WHERE tablename LIKE %s", (prefix + "%",)
        ).fetchall()
        for (table,) in tables:
            connection.execute(f'DROP TABLE IF EXISTS "{table}" CASCADE')


def bench_stores_servers(report: Any, row: Any, processes: int, seconds: float) -> None:
    """Rows of appends per second, per backend and layout; ``row`` is ``run.Row``."""
    backends = (
        ("redis", "RedisStore", os.environ.get("THREADLINE_REDIS_URL", "")),
        ("postgres", "PostgresStore", os.environ.get("THREADLINE_POSTGRES_DSN", "")),
    )
    for kind, name, location in backends:
        if not location:
            variable = "THREADLINE_REDIS_URL" if kind == "redis" else "THREADLINE_POSTGRES_DSN"
            report.notes.append(f"stores_servers: {name} skipped, {variable} is unset")
            continue
        durability = _durability(kind, location)
        for shared in (True, False):
            prefix = (
                f"tlbench:{uuid.uuid4().hex[:12]}:"
                if kind == "redis"
                else (f"tlbench_{uuid.uuid4().hex[:12]}_")
            )
            try:
                done, conflicts = _run(kind, location, prefix, processes, seconds, shared)
            finally:
                _cleanup(kind, location, prefix)
            per_second = done / seconds
            layout = "1 conversation" if shared else f"{processes} conversations"
            stat = Stat(1 / per_second if per_second else float("inf"), 0.0, [], done)
            stat.min = stat.median
            report.rows.append(
                row(
                    f"{name} appends, {processes} processes, {layout}",
                    processes,
                    "threadline",
                    {"threadline": stat},
                    note=f"{per_second:,.0f} appends/s ({done:,} in {seconds:g} s"
                    + (f", {conflicts:,} conflicts retried" if shared else "")
                    + f"); expected_version on each; server: {durability}",
                )
            )
