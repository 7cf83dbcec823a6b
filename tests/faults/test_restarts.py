"""A server restarted or crashed under the Redis and PostgreSQL stores: every scenario on both.

Each test runs against a private server of its own (``tests/faults/_servers.py``), so crashing
it disturbs nobody else: a ``redis-server`` that fsyncs every write to its append-only file,
and a PostgreSQL cluster. A crash is ``SIGKILL`` for Redis and ``pg_ctl stop -m immediate`` for
PostgreSQL (the WAL is replayed on start); a clean shutdown is ``-m fast`` (Redis is killed
then too).

- **Between calls.** A blocking store whose pooled connections the restart left dead, and an
  async store, each lose at most one call to it, and that call is whole or absent.
- **Mid-stream.** A crash under a writer thread (a blocking store), or under several tasks of
  one async store writing to one conversation: calls in flight or made while the server is
  down raise :class:`~threadline.StoreError`, never anything else; each writer fails once (a
  thread) or twice at most (a task) and carries on after the restart; the conversation holds
  every acknowledged batch whole and in each writer's order, plus any failed batch either
  whole or not at all.
- **A bound History.** With ``abind``, while the server is down its writes stay queued and
  ``flush`` raises ``StoreError``; once the server is back, ``flush`` sends each write once, in
  order.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

import threadline as tl
from tests.faults._servers import HANG_GUARD
from tests.faults._workers import batch

pytestmark = pytest.mark.requires_server

WRITERS, SIZE = 4, 3


class Server:
    """A private server of either kind, and stores on it, driven the same way."""

    def __init__(self, kind: str, request: pytest.FixtureRequest) -> None:
        self.kind = kind
        self.private: Any = request.getfixturevalue(f"private_{kind}")

    def store(self) -> Any:
        if self.kind == "redis":
            from threadline.stores.redis import RedisStore

            return RedisStore(self.private.url)
        from threadline.stores.postgres import PostgresStore

        return PostgresStore(self.private.dsn)

    def async_store(self) -> Any:
        if self.kind == "redis":
            from threadline.stores.redis import AsyncRedisStore

            return AsyncRedisStore(self.private.url)
        from threadline.stores.postgres import AsyncPostgresStore

        return AsyncPostgresStore(self.private.dsn)

    def crash(self) -> None:
        """No shutdown: clients see their connections drop (``appendfsync always`` and the WAL
        keep every acknowledged batch)."""
        if self.kind == "redis":
            self.private.kill()
        else:
            self.private.stop("immediate")

    def shut_down(self) -> None:
        """A clean stop where the server has one (PostgreSQL closes its sessions first)."""
        if self.kind == "redis":
            self.private.kill()
        else:
            self.private.stop("fast")

    def start(self) -> None:
        self.private.start()


@pytest.fixture(params=["redis", "postgres"])
def server(request: pytest.FixtureRequest) -> Server:
    return Server(request.param, request)


class Outcome:
    """What each writer saw: the batches acknowledged, those that raised, and surprises."""

    def __init__(self, writers: int) -> None:
        self.acknowledged: list[list[int]] = [[] for _ in range(writers)]
        self.failed: list[list[int]] = [[] for _ in range(writers)]
        self.unexpected: list[BaseException] = []
        self.errors: list[str] = []  # what each failure said, for the assertion messages

    def total(self) -> int:
        return sum(len(numbers) for numbers in self.acknowledged)


def check(
    loaded: list[tl.Message], outcome: Outcome, size: int, most_failed: int, crashed: bool
) -> None:
    """Whole batches; per writer in order, every acknowledged one, a failed one whole or absent.

    Args:
        most_failed: how many calls of one writer may fail.
        crashed: the crash happened under the writers, so some call failed.
    """
    assert not outcome.unexpected, outcome.unexpected
    if crashed:
        assert any(outcome.failed), "no call failed: the crash did not happen under the writers"
    for writer, failed in enumerate(outcome.failed):
        assert len(failed) <= most_failed, f"writer {writer}: {failed} failed: {outcome.errors}"
    assert len(loaded) % size == 0, f"{len(loaded)} messages: a batch was cut"
    stored: list[list[int]] = [[] for _ in outcome.acknowledged]
    for start in range(0, len(loaded), size):
        writer, number, _ = (int(part[1:]) for part in loaded[start].id.split("-"))
        assert loaded[start : start + size] == batch(writer, number, size), f"{writer}/{number}"
        stored[writer].append(number)
    for writer, numbers in enumerate(stored):
        assert numbers == sorted(set(numbers)), f"writer {writer}: out of order: {numbers}"
        acknowledged, failed = outcome.acknowledged[writer], outcome.failed[writer]
        assert set(acknowledged) <= set(numbers), f"writer {writer}: an acknowledged batch lost"
        assert set(numbers) <= set(acknowledged) | set(failed), f"writer {writer}: from nowhere"


def _wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + HANG_GUARD
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.01)


async def _await_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + HANG_GUARD
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        await asyncio.sleep(0.01)


# ---------------------------------------------------------------------------------------------
# Between calls


def test_a_restart_between_calls_costs_at_most_one_error(server: Server) -> None:
    with server.store() as store:
        # Several pooled connections, all of which the crash will leave dead.
        threads = [
            threading.Thread(target=store.append, args=(f"c{i}", batch(i, 0, 2))) for i in range(4)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(HANG_GUARD)
        if server.kind == "postgres":
            with store._pool.connection(), store._pool.connection(), store._pool.connection():
                pass  # three at once, however the threads shared theirs
        server.crash()
        server.start()

        outcome = Outcome(1)
        outcome.acknowledged[0].append(0)
        for number in range(1, 6):
            try:
                store.append("c0", batch(0, number, 2))
                outcome.acknowledged[0].append(number)
            except tl.StoreError as error:
                outcome.failed[0].append(number)
                outcome.errors.append(str(error))
        check(store.load("c0"), outcome, size=2, most_failed=1, crashed=False)
        assert store.list_conversations() == ["c0", "c1", "c2", "c3"]
        assert store.load("c3") == batch(3, 0, 2)


def test_an_async_store_survives_a_restart_between_calls(server: Server) -> None:
    async def run() -> None:
        async with server.async_store() as store:
            await asyncio.gather(*(store.append(f"c{i}", batch(i, 0, 1)) for i in range(3)))
            server.shut_down()
            server.start()
            failures = 0
            for number in range(1, 4):
                try:
                    await store.append("c0", batch(0, number, 1))
                except tl.StoreError:
                    failures += 1
            assert failures <= 1
            loaded = await store.load("c0")
            assert 4 - failures <= len(loaded) <= 4  # a failed append is whole or absent
            assert await store.list_conversations() == ["c0", "c1", "c2"]

    asyncio.run(run())


# ---------------------------------------------------------------------------------------------
# Mid-stream


def test_a_crash_mid_stream_leaves_whole_batches(server: Server) -> None:
    outcome = Outcome(1)
    back, stop = threading.Event(), threading.Event()

    with server.store() as store:

        def write() -> None:
            number = 0
            try:
                while not stop.is_set():
                    try:
                        store.append("stream", batch(0, number, SIZE))
                        outcome.acknowledged[0].append(number)
                    except tl.StoreError as error:
                        outcome.failed[0].append(number)
                        outcome.errors.append(str(error))
                        back.wait(HANG_GUARD)  # the server is down: wait until it is back
                    number += 1
            except BaseException as error:
                outcome.unexpected.append(error)

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        try:
            _wait_until(lambda: outcome.total() >= 30, "the writer got going")
            server.crash()
            server.start()
            before = outcome.total()
            back.set()
            _wait_until(lambda: outcome.total() >= before + 30, "the writer carried on")
        finally:
            back.set()
            stop.set()
            writer.join(HANG_GUARD)
        check(store.load("stream"), outcome, size=SIZE, most_failed=1, crashed=False)


async def write_through_a_crash(store: Any, server: Server) -> Outcome:
    """Run ``WRITERS`` tasks appending to ``"stream"`` and crash and restart the server (in a
    thread, so the tasks keep going while it is down) once they are flowing."""
    outcome = Outcome(WRITERS)
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

    def restart() -> None:
        server.crash()
        server.start()

    tasks = [asyncio.create_task(write(w)) for w in range(WRITERS)]
    try:
        await _await_until(lambda: outcome.total() >= 40, "the writers got going")
        await asyncio.to_thread(restart)
        before = outcome.total()
        back.set()
        await _await_until(lambda: outcome.total() >= before + 40, "the writers carried on")
    finally:
        back.set()
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), HANG_GUARD)
    return outcome


def test_async_writers_through_a_crash(server: Server) -> None:
    async def run() -> None:
        async with server.async_store() as store:
            outcome = await write_through_a_crash(store, server)
            # The call the crash cut (or that found the server down), and rarely (seen about
            # once in 30 runs with Redis, cause not yet pinned down) one more just after.
            check(await store.load("stream"), outcome, size=SIZE, most_failed=2, crashed=True)
            assert await store.list_conversations() == ["stream"]

    asyncio.run(run())


# ---------------------------------------------------------------------------------------------
# A History bound with abind: writes queue while the server is down, and flush when it is back


def test_a_bound_history_keeps_its_writes_queued_while_the_server_is_down(
    server: Server,
) -> None:
    store = server.async_store()
    messages = batch(0, 0, 4)

    async def run() -> None:
        async with store:
            history = await tl.History().abind(store, "c")
            history.append(messages[0])
            await history.flush()

            await asyncio.to_thread(server.crash)
            history.append(messages[1])
            history.extend(messages[2:])
            with pytest.raises(tl.StoreError):
                await history.flush()
            assert list(history.snapshot()) == messages  # memory keeps them, queued

            await asyncio.to_thread(server.start)
            try:
                await history.flush()
            except tl.StoreError:
                await history.flush()  # a pooled connection the crash left dead: once at most
            assert await store.load("c") == messages  # each write once, in order
            again = await tl.History().abind(store, "c")
            assert list(again.snapshot()) == messages

    asyncio.run(run())
