"""A watcher in this process sees every append a writer PROCESS makes, exactly once, in order:
pushed on Redis (the log stream) and PostgreSQL (LISTEN/NOTIFY), polled on SQLite and JSONL."""

from __future__ import annotations

import asyncio
import multiprocessing
from pathlib import Path
from typing import Any

import pytest

import threadline as tl
from tests.stores._watch_workers import append_one_by_one

GUARD = 120.0  # seconds: against a hang only
COUNT = 60

KINDS = [
    "sqlite",
    "jsonl",
    pytest.param("redis", marks=pytest.mark.requires_server),
    pytest.param("postgres", marks=pytest.mark.requires_server),
]


def _open(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Any, str]:
    """The watching store (async for the servers) and where a child process finds it."""
    if kind == "redis":
        from threadline.stores import AsyncRedisStore

        url, prefix = request.getfixturevalue("redis_url"), request.getfixturevalue("redis_prefix")
        return AsyncRedisStore(url, prefix=prefix), f"{url} {prefix}"
    if kind == "postgres":
        from threadline.stores import AsyncPostgresStore

        dsn = request.getfixturevalue("postgres_dsn")
        prefix = request.getfixturevalue("postgres_prefix")
        return AsyncPostgresStore(dsn, table_prefix=prefix), f"{dsn} {prefix}"
    if kind == "sqlite":
        return tl.SQLiteStore(tmp_path / "w.db"), str(tmp_path / "w.db")
    return tl.JsonlStore(tmp_path / "w"), str(tmp_path / "w")


def _expected() -> list[str]:
    return [
        text for k in range(COUNT) for text in ([f"m{k}", f"m{k}b"] if k % 3 == 0 else [f"m{k}"])
    ]


@pytest.mark.parametrize("kind", KINDS)
def test_a_second_process_sees_every_append_once_in_order(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    store, location = _open(kind, request, tmp_path)
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    child = context.Process(target=append_one_by_one, args=(kind, location, COUNT, start))

    async def main() -> list[str]:
        version = store.version("watched")
        if asyncio.iscoroutine(version):
            version = await version
        watch = store.watch("watched", after_version=version)
        seen: list[str] = []

        async def collect() -> None:
            while len(seen) < len(_expected()):
                seen.extend(message.text for message in await watch.__anext__())

        task = asyncio.ensure_future(collect())
        await asyncio.sleep(0.5)  # the watch has read where it starts
        child.start()
        start.set()
        try:
            await asyncio.wait_for(task, GUARD)
        finally:
            await watch.aclose()
            close = getattr(store, "aclose", None)
            if close is not None:
                await close()
        return seen

    try:
        seen = asyncio.run(main())
    finally:
        child.join(GUARD)
    assert child.exitcode == 0
    assert seen == _expected()


@pytest.mark.requires_server
@pytest.mark.parametrize("kind", ["redis", "postgres"])
def test_a_history_follows_a_server_store(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    store, location = _open(kind, request, tmp_path)
    events: list[tuple[str, list[str]]] = []

    async def main() -> None:
        history = await tl.History([tl.user_message("hi")]).abind(store, "watched", follow=True)
        history.subscribe(lambda e: events.append((e.kind, [m.text for m in e.messages])))
        history.append(tl.user_message("mine"))
        await history.flush()
        other = store.__class__(*location.split(" ")[:1], **_prefix(kind, location))
        try:
            await other.append("watched", [tl.assistant_message("theirs")])
            await asyncio.wait_for(_until(lambda: len(history) == 3), GUARD)
            await other.replace("watched", [tl.user_message("fresh")])
            await asyncio.wait_for(_until(lambda: len(history) == 1), GUARD)
        finally:  # guarded too: a hang here fails the test instead of the whole run
            await asyncio.wait_for(history.unfollow(), GUARD)
            await asyncio.wait_for(other.aclose(), GUARD)
            await asyncio.wait_for(store.aclose(), GUARD)

    asyncio.run(main())
    assert events == [
        ("append", ["mine"]),
        ("extend", ["theirs"]),
        ("restore", ["fresh"]),
    ]


def _prefix(kind: str, location: str) -> dict[str, str]:
    prefix = location.split(" ")[1]
    return {"prefix": prefix} if kind == "redis" else {"table_prefix": prefix}


async def _until(condition: Any) -> None:
    while not condition():
        await asyncio.sleep(0.01)
