"""``AsyncPostgresStore`` at many conversations: one ``LISTEN`` connection per store serves all
of its watches, a write wakes the watches of its conversation only, the connection closes with
the last watch, and a dropped one is reopened with nothing lost.

Wake-ups are counted by the store's listener (``Listener.wakeups``), connections by
``pg_stat_activity`` under an application name of the test's own: never by time.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import threadline as tl
from tests.strategies import extreme_conversation_ids
from tests.support import examples
from tests.support import require_module
from threadline.stores import Watch

try:
    import psycopg

    from threadline.stores._postgres_listen import Listener
    from threadline.stores.postgres import AsyncPostgresStore
    from threadline.stores.postgres import PostgresStore
except ImportError:  # each test reports it: skips, or fails under THREADLINE_REQUIRE_ALL=1
    pass

pytestmark = pytest.mark.requires_server

GUARD = 60.0  # seconds: against a hang only, never a performance assertion


@pytest.fixture(autouse=True)
def _driver() -> None:
    require_module("psycopg", 'pip install "threadline[postgres]"')


def sessions(dsn: str, application_name: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as connection:
        row = connection.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s",
            (application_name,),
        ).fetchone()
    assert row is not None
    return int(row[0])


def listener_of(store: Any) -> Listener:
    listener: Listener = store._listeners.current()
    return listener


async def started(watch: Watch) -> asyncio.Future[list[tl.Message]]:
    """The watch's next batch as a task, once the watch has read (so a write now is after its
    version and wakes it)."""
    task = asyncio.ensure_future(watch.__anext__())
    deadline = time.monotonic() + GUARD
    while not watch._started:
        assert time.monotonic() < deadline, "the watch never read"
        assert not task.done(), task
        await asyncio.sleep(0.01)
    return task


async def follow(
    watch: Any, first: asyncio.Future[list[tl.Message]], into: list[str], count: int
) -> None:
    """Put the texts of ``first`` and the watch's next batches in ``into`` until it holds
    ``count``."""
    into.extend(m.text for m in await first)
    while len(into) < count:
        into.extend(m.text for m in await watch.__anext__())


def test_many_watches_hold_one_listening_connection_and_wake_only_their_own(
    postgres_dsn: str, postgres_prefix: str
) -> None:
    name = f"tl-listen-{uuid.uuid4().hex[:8]}"
    count = 40

    async def main() -> None:
        async with AsyncPostgresStore(
            postgres_dsn,
            table_prefix=postgres_prefix,
            connect_kwargs={"application_name": name},
            max_connections=4,
        ) as store:
            watches = [store.watch(f"c{k}", after_version=0) for k in range(count)]
            pending = [await started(watch) for watch in watches]
            listener = listener_of(store)
            assert listener.connections == 1
            assert sessions(postgres_dsn, f"{name} watch") == 1
            assert sessions(postgres_dsn, name) <= 4  # the reads shared the pool

            for round_ in range(3):
                await store.append("c0", [tl.user_message(f"r{round_}", id=f"r{round_}")])
                batch = await asyncio.wait_for(pending[0], GUARD)
                assert [m.text for m in batch] == [f"r{round_}"]
                pending[0] = await started(watches[0])
            # An append to c1 read by its watch: every earlier notification (for c0) has been
            # dispatched by then, as the listener hears them in commit order.
            await store.append("c1", [tl.user_message("other", id="o")])
            assert [m.text for m in await asyncio.wait_for(pending[1], GUARD)] == ["other"]
            woken = dict(listener.wakeups)
            assert woken.get("c0", 0) >= 3
            assert woken.get("c1", 0) >= 1
            assert set(woken) <= {"c0", "c1"}, f"watches of unwritten conversations woke: {woken}"
            assert all(not task.done() for task in pending[2:])
            assert listener.connections == 1

            for task in pending:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                    await task
            for watch in watches:
                await watch.aclose()
            assert not listener.open, "the listening connection outlived the last watch"
        deadline = time.monotonic() + GUARD
        while sessions(postgres_dsn, f"{name} watch"):
            assert time.monotonic() < deadline, "the listening session stayed open"
            await asyncio.sleep(0.05)

    asyncio.run(main())


def test_two_watches_of_one_conversation_each_get_every_write_once(
    postgres_dsn: str, postgres_prefix: str
) -> None:
    async def main() -> tuple[list[str], list[str]]:
        async with AsyncPostgresStore(postgres_dsn, table_prefix=postgres_prefix) as store:
            listener = listener_of(store)
            first = store.watch("c", after_version=0)
            second = store.watch("c", after_version=0)
            seen: tuple[list[str], list[str]] = ([], [])
            tasks = [
                asyncio.ensure_future(follow(watch, await started(watch), into, 6))
                for watch, into in zip((first, second), seen, strict=True)
            ]
            for k in range(6):
                await store.append("c", [tl.user_message(f"m{k}", id=f"m{k}")])
            await asyncio.wait_for(asyncio.gather(*tasks), GUARD)
            await first.aclose()
            await second.aclose()
            assert listener.connections == 1
            assert not listener.open
            return seen

    first, second = asyncio.run(main())
    assert first == second == [f"m{k}" for k in range(6)]


def test_a_killed_listening_connection_is_reopened_and_no_watch_loses_a_write(
    postgres_dsn: str, postgres_prefix: str
) -> None:
    name = f"tl-listen-{uuid.uuid4().hex[:8]}"
    conversations = ["a", "b", "c"]
    writes = 8
    writer = PostgresStore(postgres_dsn, table_prefix=postgres_prefix)

    async def kill() -> int:
        async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as admin:
            cursor = await admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = %s",
                (f"{name} watch",),
            )
            return sum(1 for row in await cursor.fetchall() if row[0])

    async def main() -> tuple[dict[str, list[str]], int, int]:
        async with AsyncPostgresStore(
            postgres_dsn, table_prefix=postgres_prefix, connect_kwargs={"application_name": name}
        ) as store:
            seen: dict[str, list[str]] = {cid: [] for cid in conversations}
            watches = {cid: store.watch(cid, after_version=0) for cid in conversations}
            tasks = [
                asyncio.ensure_future(follow(watch, await started(watch), seen[cid], writes))
                for cid, watch in watches.items()
            ]
            killed = 0
            for k in range(writes):
                if k == writes // 2:
                    killed = await kill()
                for cid in conversations:
                    await asyncio.to_thread(
                        writer.append, cid, [tl.user_message(f"m{k}", id=f"m{k}")]
                    )
            await asyncio.wait_for(asyncio.gather(*tasks), GUARD)
            opened = store._listeners.connections
            for watch in watches.values():
                await watch.aclose()
            return seen, killed, opened

    try:
        seen, killed, opened = asyncio.run(main())
    finally:
        writer.close()
    assert killed == 1, "the one listening connection was not found to kill"
    assert opened == 2, "the listener was not reopened once"
    assert seen == {cid: [f"m{k}" for k in range(writes)] for cid in conversations}


def test_a_watch_cancelled_while_the_listener_connects_leaves_nothing_open(
    postgres_dsn: str, postgres_prefix: str
) -> None:
    async def main() -> None:
        async with AsyncPostgresStore(postgres_dsn, table_prefix=postgres_prefix) as store:
            await store.version("c")  # the tables exist
            listener = listener_of(store)  # the one the watch will use
            watch = store.watch("c")
            task = asyncio.ensure_future(watch.__anext__())
            await asyncio.sleep(0)  # the read has started subscribing
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await watch.aclose()
            assert not listener.open
            assert listener.watched() == 0

    asyncio.run(main())


def test_listen_arguments_are_checked() -> None:
    dsn = "postgresql://u@127.0.0.1:1/db"
    for make in (PostgresStore, AsyncPostgresStore):
        with pytest.raises(ValueError, match="listen_dsn: dsn must be a str"):
            make(dsn, listen_dsn=5)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="pgbouncer must be True or False"):
            make(dsn, pgbouncer="yes")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="prepare_threshold=5: drop one of them"):
            make(dsn, pgbouncer=True, connect_kwargs={"prepare_threshold": 5})
    # Behind a pooler without a direct connection, watch refuses at once (nothing connects).
    with pytest.raises(tl.StoreError, match=r"AsyncPostgresStore\.watch: .*listen_dsn="):
        AsyncPostgresStore(dsn, pgbouncer=True).watch("c")
    assert AsyncPostgresStore(dsn, pgbouncer=True, listen_dsn=dsn).watch("c").version is None


def test_a_blocking_store_s_watches_share_one_listener_and_read_on_its_pool(
    postgres_dsn: str, postgres_prefix: str
) -> None:
    # The source a blocking PostgresStore's watch uses: its reads run in a worker thread on
    # the store's own pool, its wake-ups come from the store's one listener.
    from threadline.stores._postgres_watch import PostgresSource

    store = PostgresStore(postgres_dsn, table_prefix=postgres_prefix)

    async def main() -> dict[str, list[str]]:
        listener = listener_of(store)
        watches = {
            cid: Watch(PostgresSource(store, cid, store._listeners), cid, 0) for cid in "abc"
        }
        seen: dict[str, list[str]] = {cid: [] for cid in watches}
        tasks = [
            asyncio.ensure_future(follow(watch, await started(watch), seen[cid], 3))
            for cid, watch in watches.items()
        ]
        for k in range(3):
            for cid in ("a", "b"):
                await asyncio.to_thread(
                    store.append, cid, [tl.user_message(f"{cid}{k}", id=f"m{k}")]
                )
        await asyncio.wait_for(asyncio.gather(*tasks[:2]), GUARD)
        assert not tasks[2].done()
        assert set(listener.wakeups) == {"a", "b"}
        assert store._listeners.connections == 1
        for task in tasks[2:]:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for watch in watches.values():
            await watch.aclose()
        assert not listener.open
        return seen

    try:
        seen = asyncio.run(main())
    finally:
        store.close()
    assert seen == {"a": ["a0", "a1", "a2"], "b": ["b0", "b1", "b2"], "c": []}


@st.composite
def plans(draw: st.DrawFn) -> tuple[list[str], list[int], list[int]]:
    """Conversation ids (hostile: long, every punctuation mark the rule allows), how many
    watches each has (0 to 2), and the writes, as indexes of the id each goes to."""
    ids = draw(st.lists(extreme_conversation_ids(), min_size=1, max_size=4, unique=True))
    watching = draw(st.lists(st.integers(0, 2), min_size=len(ids), max_size=len(ids)))
    writes = draw(st.lists(st.integers(0, len(ids) - 1), max_size=8))
    return ids, watching, writes


def test_each_write_wakes_each_watch_of_its_conversation_once_and_no_other(
    postgres_dsn: str, postgres_prefix: str
) -> None:
    async def run(ids: list[str], watching: list[int], writes: list[int]) -> None:
        async with AsyncPostgresStore(postgres_dsn, table_prefix=postgres_prefix) as store:
            listener = listener_of(store)
            sentinel = f"sentinel-{uuid.uuid4().hex}"  # no drawn id has lower-case letters
            follows = [
                (cid, store.watch(cid))
                for cid, n in zip(ids, watching, strict=True)
                for _ in range(n)
            ]
            follows.append((sentinel, store.watch(sentinel)))
            expected = {
                cid: [f"w{k}" for k, i in enumerate(writes) if ids[i] == cid] for cid in ids
            }
            expected[sentinel] = ["end"]
            seen: list[list[str]] = [[] for _ in follows]
            tasks = [
                asyncio.ensure_future(follow(watch, await started(watch), into, len(expected[cid])))
                for (cid, watch), into in zip(follows, seen, strict=True)
                if expected[cid]
            ]
            run_tag = uuid.uuid4().hex  # message ids of this example only (not replays)
            for k, index in enumerate(writes):
                message = tl.user_message(f"w{k}", id=f"w{k}-{run_tag}")
                await store.append(ids[index], [message])
            # Notifications come in commit order on the one connection: once the sentinel's
            # watch has its write, every earlier notification has been dispatched.
            await store.append(sentinel, [tl.user_message("end", id="end")])
            await asyncio.wait_for(asyncio.gather(*tasks), GUARD)
            for (cid, _), into in zip(follows, seen, strict=True):
                assert into == expected[cid], cid
            wanted = {
                cid: len(expected[cid]) * sum(1 for other, _ in follows if other == cid)
                for cid in expected
            }
            assert dict(listener.wakeups) == {cid: n for cid, n in wanted.items() if n}
            for _, watch in follows:
                await watch.aclose()
            assert not listener.open
            assert store._listeners.connections == 1

    @settings(
        max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    @given(plans())
    def check(plan: tuple[list[str], list[int], list[int]]) -> None:
        asyncio.run(run(*plan))

    check()
