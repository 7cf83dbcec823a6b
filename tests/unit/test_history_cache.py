"""``HistoryCache`` and ``AsyncHistoryCache``: one bound history per conversation, refreshed on
each ``get``, the least recently used dropped beyond ``max_histories`` or ``max_messages``."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

import threadline as tl
from threadline.history import History
from threadline.stores import AsyncMemoryStore
from threadline.stores import MemoryStore
from threadline.stores import SQLiteStore
from threadline.testing._threads import run_threads


def ids(messages: Iterable[tl.Message]) -> list[str]:
    return [m.id for m in messages]


def user(message_id: str) -> tl.Message:
    return tl.user_message(message_id, id=message_id)


def test_get_returns_the_same_history_refreshed_with_other_writers_appends(
    tmp_path: Path,
) -> None:
    with SQLiteStore(tmp_path / "c.db") as store, SQLiteStore(tmp_path / "c.db") as other:
        cache = tl.HistoryCache(store)
        history = cache.get("c")
        history.append(user("a"))
        other.append("c", [user("b")])  # another process's step
        again = cache.get("c")
        assert again is history
        assert ids(again) == ["a", "b"]
        again.append(user("c"))  # expects the version the refresh read
        assert ids(other.load("c")) == ["a", "b", "c"]


def test_the_least_recently_used_history_goes_beyond_max_histories() -> None:
    cache = tl.HistoryCache(MemoryStore(), max_histories=2)
    first = cache.get("a")
    cache.get("b")
    assert cache.get("a") is first  # a is now the most recent
    cache.get("c")
    assert "a" in cache
    assert "c" in cache
    assert "b" not in cache
    assert len(cache) == 2


def test_histories_go_when_their_messages_pass_max_messages() -> None:
    store = MemoryStore()
    for name, count in (("a", 3), ("b", 3), ("c", 5)):
        store.append(name, [user(f"{name}{i}") for i in range(count)])
    cache = tl.HistoryCache(store, max_messages=6)
    cache.get("a")
    cache.get("b")
    assert len(cache) == 2
    big = cache.get("c")  # 5 more: a and b go; c stays although it alone is near the bound
    assert len(cache) == 1
    assert "c" in cache
    assert len(big) == 5
    cache.discard("c")
    assert len(cache) == 0


def test_threads_getting_one_conversation_share_one_history() -> None:
    cache = tl.HistoryCache(MemoryStore())
    got: list[History] = []
    lock = threading.Lock()

    def get() -> None:
        history = cache.get("c")
        with lock:
            got.append(history)

    run_threads(*(get for _ in range(8)))
    assert len({id(history) for history in got}) == 1
    assert len(cache) == 1


def test_the_factory_configures_each_history() -> None:
    store = MemoryStore()
    store.append("c", [user(f"m{i}") for i in range(5)])
    cache = tl.HistoryCache(store, factory=lambda: History(max_messages=2))
    assert ids(cache.get("c")) == ["m3", "m4"]
    with pytest.raises(TypeError, match="unbound History"):
        tl.HistoryCache(store, factory=lambda: History().bind(store, "x")).get("d")


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"max_histories": 0}, ValueError, "max_histories must be at least 1"),
        ({"max_messages": True}, TypeError, "max_messages must be an int"),
        ({"max_messages": 1.5}, TypeError, "max_messages must be an int"),
        ({"on_conflict": "merge"}, ValueError, "on_conflict"),
        ({"factory": 3}, TypeError, "factory"),
    ],
)
def test_bad_arguments_are_refused(options: dict[str, object], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        tl.HistoryCache(MemoryStore(), **options)  # type: ignore[arg-type]


def test_each_cache_takes_its_kind_of_store() -> None:
    with pytest.raises(TypeError, match="async store"):
        tl.HistoryCache(AsyncMemoryStore())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="blocking store"):
        tl.AsyncHistoryCache(MemoryStore())  # type: ignore[arg-type]


def test_the_async_cache_refreshes_and_keeps_histories_with_unsent_writes() -> None:
    async def main() -> None:
        store = AsyncMemoryStore()
        cache = tl.AsyncHistoryCache(store, max_histories=1)
        history = await cache.get("a")
        history.append(user("a1"))  # queued, not flushed
        await cache.get("b")
        assert "a" in cache, "a history with unsent writes was dropped"
        await history.flush()
        await store.append("a", [user("a2")])
        assert await cache.get("a") is history
        assert ids(history) == ["a1", "a2"]
        await cache.get("b")
        assert "a" not in cache
        assert len(cache) == 1

    asyncio.run(main())


@pytest.mark.requires_server
@pytest.mark.parametrize("kind", ["redis", "postgres"])
def test_the_async_cache_catches_up_with_another_process_on_a_server(
    kind: str, request: pytest.FixtureRequest
) -> None:
    async def main() -> None:
        if kind == "redis":
            from threadline.stores import AsyncRedisStore

            url = request.getfixturevalue("redis_url")
            prefix = request.getfixturevalue("redis_prefix")
            store: Any = AsyncRedisStore(url, prefix=prefix)
            other: Any = AsyncRedisStore(url, prefix=prefix)
        else:
            from threadline.stores import AsyncPostgresStore

            dsn = request.getfixturevalue("postgres_dsn")
            prefix = request.getfixturevalue("postgres_prefix")
            store = AsyncPostgresStore(dsn, table_prefix=prefix)
            other = AsyncPostgresStore(dsn, table_prefix=prefix)
        async with store, other:
            cache = tl.AsyncHistoryCache(store)
            history = await cache.get("c")
            history.append(user("a"))
            await history.flush()
            await other.append("c", [user("b")])
            assert await cache.get("c") is history
            assert ids(history) == ["a", "b"]
            history.append(user("c"))
            await history.flush()  # expects the version the refresh read
            await other.replace("c", [user("r")])
            await cache.get("c")
            assert ids(history) == ["r"]
            assert ids(await other.load("c")) == ["r"]

    asyncio.run(main())
