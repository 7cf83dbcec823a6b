"""A writer process killed with SIGKILL mid-stream, for the server stores.

SQLite and JSONL writers are killed the same way in ``tests/stores/test_processes.py``. Here the
victim is a client of a Redis or PostgreSQL server: killing it cuts its connection, possibly in
the middle of sending a batch. The server must apply each batch whole or not at all, so what is
stored is a prefix of whole batches, and a new writer carries on after it.
"""

from __future__ import annotations

import multiprocessing
import sys
import time
from typing import TYPE_CHECKING

import pytest

from tests.faults._workers import append_until_killed
from tests.faults._workers import batch
from tests.faults._workers import open_store

if TYPE_CHECKING:
    from threadline.stores import PostgresStore
    from threadline.stores import RedisStore

pytestmark = [
    pytest.mark.requires_server,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
]

HANG_GUARD = 120.0  # seconds: only against a deadlock, never a performance assertion
INTENDED, SIZE, PADDING = 100_000, 3, 4_000


@pytest.fixture(params=["redis", "postgres"])
def server(request: pytest.FixtureRequest) -> tuple[str, str, str]:
    """``(kind, location, prefix)`` of a fresh namespace on a shared server."""
    kind = str(request.param)
    if kind == "redis":
        return kind, request.getfixturevalue("redis_url"), request.getfixturevalue("redis_prefix")
    dsn = request.getfixturevalue("postgres_dsn")
    return kind, dsn, request.getfixturevalue("postgres_prefix")


def test_a_client_killed_mid_stream_leaves_a_whole_prefix(server: tuple[str, str, str]) -> None:
    kind, location, prefix = server
    with open_store(kind, location, prefix) as store:
        kill_mid_stream(store, kind, location, prefix)


def kill_mid_stream(
    store: RedisStore | PostgresStore, kind: str, location: str, prefix: str
) -> None:
    """Start a writer of ``"victim"``, SIGKILL it once it is flowing, check what it left."""
    context = multiprocessing.get_context("spawn")
    process = context.Process(
        target=append_until_killed, args=(kind, location, prefix, INTENDED, SIZE, PADDING)
    )
    process.start()
    deadline = time.monotonic() + HANG_GUARD
    try:
        while len(store.load("victim")) < 20 * SIZE:  # the stream is flowing
            assert process.is_alive(), f"the writer died early (exit code {process.exitcode})"
            assert time.monotonic() < deadline, "the writer made no progress"
            time.sleep(0.01)
    finally:
        process.kill()  # SIGKILL: the connection drops, possibly mid-batch
        process.join(HANG_GUARD)
    assert process.exitcode == -9

    with open_store(kind, location, prefix) as fresh:
        loaded = fresh.load("victim")
    assert 0 < len(loaded) < INTENDED * SIZE, f"the kill did not land mid-stream: {len(loaded)}"
    assert len(loaded) % SIZE == 0, f"{len(loaded)} messages: a batch was cut"
    expected = [m for number in range(len(loaded) // SIZE) for m in batch(0, number, SIZE, PADDING)]
    assert loaded == expected  # a prefix, in order, every message whole

    # The server has let go of the dead client (no lock left held): a new writer carries on.
    store.append("victim", batch(1, 0, SIZE))
    assert store.load("victim") == [*expected, *batch(1, 0, SIZE)]
    assert store.list_conversations() == ["victim"]
