"""A server crashed and restarted under async clients that keep writing.

``tests/stores/test_redis.py`` and ``tests/stores/test_postgres.py`` already restart a private
server under the blocking stores (between calls, and mid-stream under one writer thread) and
under the async stores between calls. What they leave out is here: several tasks of one async
store writing to one conversation while the server crashes (``SIGKILL`` for Redis,
``pg_ctl stop -m immediate`` for PostgreSQL) and comes back. Calls in flight or made while the
server is down must raise :class:`~threadline.StoreError`, never anything else; each writer
fails once or twice at most (a writer waits for the server after a failure), carries on, and
the conversation holds every acknowledged batch whole and in each writer's order, plus any
failed batch either whole or not at all.

Last, a ``History`` bound with ``abind``: while the server is down its writes stay queued and
``flush`` raises ``StoreError``; once the server is back, ``flush`` sends each write once, in
order.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable
from typing import Any

import pytest

import threadline as tl
from tests.faults._workers import batch

pytestmark = pytest.mark.requires_server

HANG_GUARD = 120.0  # seconds: only against a deadlock, never a performance assertion
WRITERS, SIZE = 4, 3


class Outcome:
    """What each writer task saw: the batches acknowledged, those that raised, and surprises."""

    def __init__(self) -> None:
        self.acknowledged: list[list[int]] = [[] for _ in range(WRITERS)]
        self.failed: list[list[int]] = [[] for _ in range(WRITERS)]
        self.unexpected: list[BaseException] = []
        self.errors: list[str] = []  # what each failure said, for the assertion messages

    def total(self) -> int:
        return sum(len(numbers) for numbers in self.acknowledged)


async def write_through_a_restart(store: Any, restart: Callable[[], None]) -> Outcome:
    """Run ``WRITERS`` tasks appending to ``"stream"`` and call ``restart`` (in a thread, so the
    tasks keep going while the server is down) once they are flowing."""
    outcome = Outcome()
    back, stop = asyncio.Event(), asyncio.Event()

    async def write(writer: int) -> None:
        number = 0
        try:
            while not stop.is_set():
                try:
                    await store.append("stream", batch(writer, number, SIZE))
                    outcome.acknowledged[writer].append(number)
                except tl.StoreError as error:
                    outcome.failed[writer].append(number)
                    outcome.errors.append(f"w{writer} b{number} {back.is_set()}: {error}")
                    await asyncio.wait_for(back.wait(), HANG_GUARD)  # down: wait until back
                number += 1
        except BaseException as error:
            outcome.unexpected.append(error)

    tasks = [asyncio.create_task(write(w)) for w in range(WRITERS)]
    try:
        await _wait_for(lambda: outcome.total() >= 40, "the writers got going")
        await asyncio.to_thread(restart)
        before = outcome.total()
        back.set()
        await _wait_for(lambda: outcome.total() >= before + 40, "the writers carried on")
    finally:
        back.set()
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), HANG_GUARD)
    return outcome


def check(loaded: list[tl.Message], outcome: Outcome) -> None:
    """Whole batches; per writer in order, every acknowledged one, a failed one whole or absent."""
    assert not outcome.unexpected, outcome.unexpected
    assert any(outcome.failed), "no call failed: the crash did not happen under the writers"
    for writer, failed in enumerate(outcome.failed):
        # The call the crash cut (or that found the server down), and rarely (seen about once
        # in 30 runs with Redis, cause not yet pinned down) one more just after the restart.
        assert len(failed) <= 2, f"writer {writer}: {failed} failed: {outcome.errors}"
    assert len(loaded) % SIZE == 0, f"{len(loaded)} messages: a batch was cut"
    stored: list[list[int]] = [[] for _ in range(WRITERS)]
    for start in range(0, len(loaded), SIZE):
        writer, number, _ = (int(part[1:]) for part in loaded[start].id.split("-"))
        assert loaded[start : start + SIZE] == batch(writer, number, SIZE), f"{writer}/{number}"
        stored[writer].append(number)
    for writer in range(WRITERS):
        numbers = stored[writer]
        assert numbers == sorted(set(numbers)), f"writer {writer}: out of order: {numbers}"
        acknowledged, failed = outcome.acknowledged[writer], outcome.failed[writer]
        assert set(acknowledged) <= set(numbers), f"writer {writer}: an acknowledged batch lost"
        assert set(numbers) <= set(acknowledged) | set(failed), f"writer {writer}: from nowhere"


async def _wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + HANG_GUARD
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        await asyncio.sleep(0.01)


def test_async_redis_writers_through_a_crash(private_redis: Any) -> None:
    from threadline.stores.redis import AsyncRedisStore

    def restart() -> None:
        private_redis.kill()  # SIGKILL; appendfsync always keeps every acknowledged batch
        private_redis.start()

    async def run() -> None:
        async with AsyncRedisStore(private_redis.url) as store:
            outcome = await write_through_a_restart(store, restart)
            check(await store.load("stream"), outcome)
            assert await store.list_conversations() == ["stream"]

    asyncio.run(run())


def test_async_postgres_writers_through_a_crash(private_postgres: Any) -> None:
    from threadline.stores.postgres import AsyncPostgresStore

    def restart() -> None:
        private_postgres.stop("immediate")  # a crash: WAL replayed on start
        private_postgres.start()

    async def run() -> None:
        async with AsyncPostgresStore(private_postgres.dsn) as store:
            outcome = await write_through_a_restart(store, restart)
            check(await store.load("stream"), outcome)
            assert await store.list_conversations() == ["stream"]

    asyncio.run(run())


# ---------------------------------------------------------------------------------------------
# A History bound with abind: writes queue while the server is down, and flush when it is back


@pytest.mark.parametrize("kind", ["redis", "postgres"])
def test_a_bound_history_keeps_its_writes_queued_while_the_server_is_down(
    kind: str, request: pytest.FixtureRequest
) -> None:
    if kind == "redis":
        from threadline.stores.redis import AsyncRedisStore

        server = request.getfixturevalue("private_redis")
        store: Any = AsyncRedisStore(server.url)
        down, up = server.kill, server.start
    else:
        from threadline.stores.postgres import AsyncPostgresStore

        server = request.getfixturevalue("private_postgres")
        store = AsyncPostgresStore(server.dsn)
        down, up = functools.partial(server.stop, "immediate"), server.start
    messages = batch(0, 0, 4)

    async def run() -> None:
        async with store:
            history = await tl.History().abind(store, "c")
            history.append(messages[0])
            await history.flush()

            await asyncio.to_thread(down)
            history.append(messages[1])
            history.extend(messages[2:])
            with pytest.raises(tl.StoreError):
                await history.flush()
            assert list(history.snapshot()) == messages  # memory keeps them, queued

            await asyncio.to_thread(up)
            try:
                await history.flush()
            except tl.StoreError:
                await history.flush()  # a pooled connection the crash left dead: once at most
            assert await store.load("c") == messages  # each write once, in order
            again = await tl.History().abind(store, "c")
            assert list(again.snapshot()) == messages

    asyncio.run(run())
