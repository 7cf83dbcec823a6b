"""A primary of a Redis Cluster killed and restarted under writers: nothing acknowledged is
lost, nothing is stored twice.

Each test runs against a private 3-master cluster of its own (``tests/faults/_cluster.py``),
append-only persistence on, so killing a node disturbs nobody else. Writers, threads of one
``RedisStore`` or tasks of one ``AsyncRedisStore`` (``cluster=True``), append numbered batches,
some to one conversation all share and some to conversations of their own spread over the
shards. The primary holding the shared conversation is killed (``SIGKILL``) while they write,
then restarted on its own files. Every call in flight or made while the cluster is down raises
:class:`~threadline.StoreError` (never a raw driver exception); a writer sends the failed batch
again until it is acknowledged, as the docs tell users to. At the end each conversation holds
every batch of each of its writers exactly once, whole and in order: the acknowledged ones
survived the crash, and the ones sent again were recognised as replays, not stored twice.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

import threadline as tl
from tests.faults._cluster import PrivateRedisCluster
from tests.faults._cluster import private_redis_cluster
from tests.faults._servers import HANG_GUARD
from tests.faults._workers import batch

__all__ = ["private_redis_cluster"]  # the fixture, found by pytest through this import

pytestmark = pytest.mark.requires_server

SHARED, OWN, SIZE = 4, 4, 3  # writers on the shared conversation, writers on their own


def conversation_of(writer: int) -> str:
    return "shared" if writer < SHARED else f"own-{writer}"


class Outcome:
    """Each writer's acknowledged batches, its failures, and anything but a StoreError."""

    def __init__(self) -> None:
        self.acknowledged = [0] * (SHARED + OWN)
        self.failures = [0] * (SHARED + OWN)
        self.unexpected: list[BaseException] = []

    def total(self) -> int:
        return sum(self.acknowledged)


def check(loaded: dict[str, list[tl.Message]], outcome: Outcome) -> None:
    """Every acknowledged batch of each writer once, whole, in order; after them at most the
    batch whose call failed as the writers stopped (so never sent again), whole."""
    assert not outcome.unexpected, outcome.unexpected
    assert any(outcome.failures), "no call failed: the kill did not happen under the writers"
    for writer in range(SHARED + OWN):
        messages = [m for m in loaded[conversation_of(writer)] if m.id.startswith(f"w{writer}-")]
        count = outcome.acknowledged[writer]
        expected = [m for n in range(count) for m in batch(writer, n, SIZE)]
        if len(messages) > len(expected) and outcome.failures[writer]:
            expected += batch(writer, count, SIZE)  # failed, maybe stored: whole if at all
        assert messages == expected, (
            f"writer {writer}: {len(messages)} messages stored, {count} batches acknowledged"
        )


def _wait_until(condition: Any, what: str) -> None:
    deadline = time.monotonic() + HANG_GUARD
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.01)


def test_a_primary_killed_mid_write_loses_and_duplicates_nothing(
    private_redis_cluster: PrivateRedisCluster,
) -> None:
    cluster = private_redis_cluster
    outcome, stop = Outcome(), threading.Event()
    from threadline.stores.redis import RedisStore

    with RedisStore(cluster.url, cluster=True) as store:

        def write(writer: int) -> None:
            number = 0
            try:
                while not stop.is_set():
                    try:
                        store.append(conversation_of(writer), batch(writer, number, SIZE))
                    except tl.StoreError:
                        outcome.failures[writer] += 1
                        time.sleep(0.05)  # the cluster is down: send the same batch again
                        continue
                    outcome.acknowledged[writer] += 1
                    number += 1
            except BaseException as error:
                outcome.unexpected.append(error)

        writers = [threading.Thread(target=write, args=(w,)) for w in range(SHARED + OWN)]
        for thread in writers:
            thread.start()
        try:
            _wait_until(lambda: outcome.total() >= 80, "the writers got going")
            victim = cluster.node_of(store._key("shared"))
            cluster.kill(victim)
            cluster.restart(victim)
            before = outcome.total()
            _wait_until(lambda: outcome.total() >= before + 80, "the writers carried on")
        finally:
            stop.set()
            for thread in writers:
                thread.join(HANG_GUARD)
        ids = {conversation_of(w) for w in range(SHARED + OWN)}
        check({cid: store.load(cid) for cid in ids}, outcome)
        assert store.list_conversations() == sorted(ids)


def test_async_writers_and_a_watch_through_a_killed_primary(
    private_redis_cluster: PrivateRedisCluster,
) -> None:
    """As above with tasks; and a watch of the shared conversation, on a store of its own,
    sees every stored message exactly once, in order, across the kill."""
    cluster = private_redis_cluster
    from threadline.stores.redis import AsyncRedisStore

    async def run() -> None:
        outcome, stop = Outcome(), asyncio.Event()
        seen: list[tl.Message] = []
        watcher = AsyncRedisStore(cluster.url, cluster=True)

        async def follow() -> None:
            async for appended in watcher.watch("shared", after_version=0):
                seen.extend(appended)

        following = asyncio.create_task(follow())
        async with AsyncRedisStore(cluster.url, cluster=True) as store:

            async def write(writer: int) -> None:
                number = 0
                try:
                    while not stop.is_set():
                        try:
                            await store.append(conversation_of(writer), batch(writer, number, SIZE))
                        except tl.StoreError:
                            outcome.failures[writer] += 1
                            await asyncio.sleep(0.05)  # down: send the same batch again
                            continue
                        outcome.acknowledged[writer] += 1
                        number += 1
                except BaseException as error:
                    outcome.unexpected.append(error)

            async def until(count: int, what: str) -> None:
                deadline = time.monotonic() + HANG_GUARD
                while outcome.total() < count:
                    assert time.monotonic() < deadline, f"timed out waiting until {what}"
                    await asyncio.sleep(0.01)

            tasks = [asyncio.create_task(write(w)) for w in range(SHARED + OWN)]
            try:
                await until(80, "the writers got going")
                victim = cluster.node_of(store._key("shared"))
                await asyncio.to_thread(cluster.kill, victim)
                await asyncio.to_thread(cluster.restart, victim)
                await until(outcome.total() + 80, "the writers carried on")
            finally:
                stop.set()
                await asyncio.wait_for(asyncio.gather(*tasks), HANG_GUARD)
            ids = {conversation_of(w) for w in range(SHARED + OWN)}
            check({cid: await store.load(cid) for cid in ids}, outcome)
            assert await store.list_conversations() == sorted(ids)
            shared = await store.load("shared")
            deadline = time.monotonic() + HANG_GUARD
            while len(seen) < len(shared) and not following.done():
                assert time.monotonic() < deadline, "the watch did not catch up"
                await asyncio.sleep(0.01)
            if following.done():  # it ended: show why
                following.result()
            following.cancel()
            await watcher.aclose()
            assert seen == shared

    asyncio.run(run())
