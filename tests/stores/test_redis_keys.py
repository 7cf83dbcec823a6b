"""RedisStore's key layout is injective: stores with different prefixes never share a key.

Keys were ``<prefix>conv:<id>`` and ``<prefix>conversations``, and ids may hold ``:``, so prefix
``acme:`` with id ``conv:42`` named the same list as prefix ``acme:conv:`` with id ``42``, and
``delete("conversations")`` under ``acme:`` removed the index of ``acme:conv:``.
"""

from __future__ import annotations

import asyncio
import functools

import pytest
from hypothesis import given

import threadline as tl
from tests.stores._names import conversation_ids
from tests.stores._names import nested_readings
from tests.stores._names import redis_prefixes
from tests.stores._names import small_names
from tests.support import require_module

try:
    import redis

    from threadline.stores.redis import AsyncRedisStore
    from threadline.stores.redis import RedisStore
except ImportError:  # each test reports it: skips, or fails under THREADLINE_REQUIRE_ALL=1
    pass

NOWHERE = "redis://127.0.0.1:1/0"  # a store built on it never connects unless used


@pytest.fixture(autouse=True)
def _driver() -> None:
    require_module("redis", 'pip install "threadline[redis]"')


def msgs(tag: str, count: int = 1) -> list[tl.Message]:
    return [tl.user_message(f"{tag} {i}", id=f"{tag}{i}") for i in range(count)]


@functools.cache
def store_with(prefix: str) -> RedisStore:
    return RedisStore(NOWHERE, prefix=prefix)


def keys_of(prefix: str, cid: str) -> dict[str, tuple[str, ...]]:
    """Every key a store with ``prefix`` touches for ``cid``, and what it holds."""
    store = store_with(prefix)
    return {
        store._key(cid): (prefix, "conversation", cid),
        store._ids_key(cid): (prefix, "ids", cid),
        store._index: (prefix, "index"),
    }


@given(redis_prefixes, conversation_ids, redis_prefixes, conversation_ids)
def test_no_two_prefix_and_id_pairs_share_a_key(
    prefix1: str, cid1: str, prefix2: str, cid2: str
) -> None:
    one, two = keys_of(prefix1, cid1), keys_of(prefix2, cid2)
    for key in one.keys() & two.keys():
        assert one[key] == two[key], f"{one[key]} and {two[key]} both use the key {key!r}"


@given(nested_readings())
def test_nested_prefixes_never_share_a_key(readings: list[tuple[str, str]]) -> None:
    seen: dict[str, tuple[str, ...]] = {}
    for prefix, cid in readings:
        for key, owner in keys_of(prefix, cid).items():
            assert seen.setdefault(key, owner) == owner, f"{seen[key]} and {owner} share {key!r}"


def test_no_key_is_shared_in_a_small_space_searched_exhaustively() -> None:
    words = ["a", "conv", "conversations", "ids", "index", "Q"]
    prefixes = ["", *(name + ":" for name in small_names(words, 2))]
    seen: dict[str, tuple[str, ...]] = {}
    for prefix in prefixes:
        for cid in small_names(words, 3):
            for key, owner in keys_of(prefix, cid).items():
                assert seen.setdefault(key, owner) == owner, f"{seen[key]}, {owner} share {key!r}"


def test_the_documented_keys() -> None:
    store = RedisStore(NOWHERE, prefix="threadline:")
    assert store._key("support-42") == "threadline:conv:support-42"
    assert store._key("user:7") == "threadline:conv:user%3A7"
    assert store._index == "threadline:index:conversations"
    assert RedisStore(NOWHERE, prefix="")._key("a") == "conv:a"


@pytest.mark.parametrize("prefix", ["app", "app:x", "app:conv", "tenant/1"])
def test_a_prefix_must_end_with_a_colon(prefix: str) -> None:
    for store_class in (RedisStore, AsyncRedisStore):
        with pytest.raises(ValueError, match=r"must end with ':'"):
            store_class(NOWHERE, prefix=prefix)


@pytest.fixture
def base(redis_prefix: str) -> str:
    """A key prefix of this test's own (``redis_prefix``, from ``tests/conftest.py``)."""
    return redis_prefix


@pytest.mark.requires_server
def test_stores_whose_prefixes_nest_stay_apart(redis_url: str, base: str) -> None:
    with (
        RedisStore(redis_url, prefix=base) as outer,
        RedisStore(redis_url, prefix=base + "conv:") as inner,
    ):
        outer.append("conv:42", msgs("outer"))
        inner.append("42", msgs("inner"))
        assert outer.load("conv:42") == msgs("outer")
        assert inner.load("42") == msgs("inner")
        outer.delete("conversations")
        assert inner.list_conversations() == ["42"]
        outer.replace("conv:42", [])
        assert inner.load("42") == msgs("inner")
        assert outer.list_conversations() == []


@pytest.mark.requires_server
def test_async_stores_whose_prefixes_nest_stay_apart(redis_url: str, base: str) -> None:
    async def run() -> None:
        async with (
            AsyncRedisStore(redis_url, prefix=base) as outer,
            AsyncRedisStore(redis_url, prefix=base + "conv:") as inner,
        ):
            await outer.append("conv:42", msgs("outer"))
            await inner.append("42", msgs("inner"))
            assert await outer.load("conv:42") == msgs("outer")
            assert await inner.load("42") == msgs("inner")
            await outer.delete("conversations")
            assert await inner.list_conversations() == ["42"]
            await outer.replace("conv:42", [])
            assert await inner.load("42") == msgs("inner")
            assert await outer.list_conversations() == []

    asyncio.run(run())


@pytest.mark.requires_server
def test_sync_and_async_stores_use_the_same_keys(redis_url: str, base: str) -> None:
    with RedisStore(redis_url, prefix=base) as store:
        store.append("user:7", msgs("sync"))
        client = redis.Redis.from_url(redis_url)
        try:
            assert sorted(client.scan_iter(match=f"{base}*")) == [
                f"{base}conv:user%3A7".encode(),
                f"{base}ids:user%3A7".encode(),
                f"{base}index:conversations".encode(),
                f"{base}log:user%3A7".encode(),
                f"{base}ver:user%3A7".encode(),
            ]
        finally:
            client.close()

    async def run() -> list[tl.Message]:
        async with AsyncRedisStore(redis_url, prefix=base) as astore:
            assert await astore.list_conversations() == ["user:7"]
            return await astore.load("user:7")

    assert asyncio.run(run()) == msgs("sync")
