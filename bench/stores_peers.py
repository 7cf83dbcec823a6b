"""Workload ``stores_peers``: threadline's SQLiteStore against the SQLite histories users would
otherwise reach for, on one machine with the same messages (issue 25, "Performance").

- **durable append of one message** onto a conversation of ``size`` messages: threadline's
  ``SQLiteStore.append`` (plain, and with ``expected_version`` as a bound History writes);
  LangChain's ``SQLChatMessageHistory.add_message`` (langchain-community, SQLite through
  SQLAlchemy); the OpenAI Agents SDK's ``SQLiteSession.add_items`` (the message as Responses
  input items, awaited on an event loop, as the SDK is called).
- **resume**: load the whole conversation: ``SQLiteStore.load`` (validated ``Message`` objects),
  ``SQLChatMessageHistory.messages`` (LangChain message objects), ``SQLiteSession.get_items``
  (the items as decoded JSON dicts, the SDK validates nothing).

Durability is made the same for all three: WAL journal and ``synchronous=FULL`` (each commit is
fsynced before it returns; ``strace -f`` counts one ``fdatasync`` per append for each).
threadline sets both itself; the Agents SDK sets WAL and leaves SQLite's default
``synchronous=FULL``; LangChain's engine gets both from a connect hook here (SQLAlchemy's
default is a rollback journal, which costs more fsyncs per commit, so this is the faster
setting for it). Each store has its own file.

The appends are timed in CPU time (``timing.py``): their wall time is mostly the wait for that
fsync, and it moved from 0.13 ms to 3.99 ms per append between the samples of one run
(``docs/performance.md``). ``SQLiteSession`` does its SQLite work in a
worker thread (``asyncio.to_thread``); ``time.process_time`` counts that thread as well as the
event loop's. The wall time is printed beside the CPU time, never judged. The resume rows read
from the page cache and wait on nothing: they stay in wall time.
"""

from __future__ import annotations

import asyncio
import itertools
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import data
from timing import CpuSample
from timing import Stat
from timing import Stopwatch
from timing import measure
from timing import timed

import threadline as tl
from threadline.codecs import openai_responses
from threadline.stores import SQLiteStore

__all__ = ["bench_stores_peers"]

APPENDS_PER_SAMPLE = 20


def _langchain_history(path: Path, session_id: str = "conversation") -> Any:
    from langchain_community.chat_message_histories import SQLChatMessageHistory
    from sqlalchemy import create_engine
    from sqlalchemy import event

    engine = create_engine(f"sqlite:///{path}")

    @event.listens_for(engine, "connect")
    def _durable(connection: Any, _record: Any) -> None:
        cursor = connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.close()

    return SQLChatMessageHistory(session_id=session_id, connection=engine)


def _items(messages: list[tl.Message]) -> list[Any]:
    """The messages as Responses input items (threadline's codec writes them)."""
    body = openai_responses.encode(messages)
    items: list[Any] = list(body["input"])
    return items


def _per_append(
    append: Callable[[int], None], counter: itertools.count[int]
) -> Callable[[], float | CpuSample]:
    """A sampler: ``APPENDS_PER_SAMPLE`` appends of message ``n``, CPU seconds per append."""

    def sample() -> float | CpuSample:
        numbers = list(itertools.islice(counter, APPENDS_PER_SAMPLE))
        watch = Stopwatch("cpu")
        for n in numbers:
            append(n)
        return watch.per(len(numbers))

    return sample


def _after(
    setup: Callable[[], None], sample: Callable[[], float | CpuSample]
) -> Callable[[], float | CpuSample]:
    def run() -> float | CpuSample:
        setup()
        return sample()

    return run


def _ms(stat: Stat) -> str:
    return f"CPU {stat.median * 1e3:.2f} ms (wall {stat.wall_median * 1e3:.2f} ms)"


def bench_stores_peers(report: Any, row: Any, size: int, samples: int, min_time: float) -> None:
    """Rows ``SQLite durable append (1 message)`` and ``SQLite resume (load)`` at ``size``;
    ``row`` is ``run.Row``. Targets: threadline faster than each peer on both."""
    from agents.memory import SQLiteSession
    from langchain_core.messages import HumanMessage

    spec = data.conversation(size)
    messages = data.to_threadline(spec)
    lc_messages = data.to_langchain(spec)
    items = _items(messages)
    loop = asyncio.new_event_loop()
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "threadline.db")
        store.append("conversation", messages)
        langchain = _langchain_history(Path(tmp) / "langchain.db")
        langchain.add_messages(lc_messages)
        session = SQLiteSession("conversation", Path(tmp) / "agents.db")
        loop.run_until_complete(session.add_items(items))
        try:
            counter = itertools.count()

            def threadline_append(n: int) -> None:
                store.append("conversation", [tl.user_message(f"next {n}", id=f"next-{n}")])

            def versioned_append(n: int) -> None:
                version = versions["now"]
                store.append(
                    "conversation",
                    [tl.user_message(f"next {n}", id=f"next-{n}")],
                    expected_version=version,
                )
                versions["now"] = version + 1

            versions = {"now": store.version("conversation")}

            def _read_version() -> None:  # outside the timing: a bound History knows it
                versions["now"] = store.version("conversation")

            def langchain_append(n: int) -> None:
                langchain.add_message(HumanMessage(content=f"next {n}", id=f"next-{n}"))

            def agents_append(n: int) -> None:
                item = {"role": "user", "content": f"next {n}"}
                loop.run_until_complete(session.add_items([item]))

            stats = measure(
                {
                    "threadline": _per_append(threadline_append, counter),
                    "versioned": _after(_read_version, _per_append(versioned_append, counter)),
                    "langchain": _per_append(langchain_append, counter),
                    "openai-agents": _per_append(agents_append, counter),
                },
                samples,
            )
            append_row = row(
                "SQLite durable append (1 message)",
                size,
                "threadline",
                stats,
                peers=["langchain", "openai-agents"],
                note=f"onto {size:,} stored; all WAL + synchronous=FULL (fsync per commit); "
                "versioned (expected_version, as a bound History) "
                f"{_ms(stats['versioned'])}; langchain: "
                "SQLChatMessageHistory.add_message (SQLAlchemy); openai-agents: "
                "SQLiteSession.add_items awaited (its SQLite work in a worker thread, counted)",
            )
            report.rows.append(append_row)
            blob = tl.dump_json(store.load("conversation"))  # the floor: validation alone
            stats = measure(
                {
                    "threadline": timed(lambda: store.load("conversation"), min_time),
                    "load_json": timed(lambda: tl.load_json(blob), min_time),
                    "langchain": timed(lambda: langchain.messages, min_time),
                    "openai-agents": timed(
                        lambda: loop.run_until_complete(session.get_items()), min_time
                    ),
                },
                samples,
            )
            load_row = row(
                "SQLite resume (load)",
                size,
                "threadline",
                stats,
                floors=["load_json"],
                peers=["langchain", "openai-agents"],
                note=f"{size:,} messages ({len(items):,} Responses items) plus the appended; "
                "threadline: validated Messages (floor: load_json of the same messages' JSON); "
                "langchain: message objects; openai-agents: json.loads dicts, unvalidated",
            )
            report.rows.append(load_row)
            for name, measured in (("append", append_row), ("load", load_row)):
                for peer in ("langchain", "openai-agents"):
                    for mine in (
                        ("threadline", "versioned") if name == "append" else ("threadline",)
                    ):
                        what = f"SQLiteStore {name}{' (versioned)' if mine == 'versioned' else ''}"
                        report.compare(
                            f"{what} ÷ {peer}",
                            size,
                            measured.stats[mine],
                            measured.stats[peer],
                            "< 1",
                        )
        finally:
            store.close()
            session.close()
            loop.close()
