"""``RedisStore`` and ``AsyncRedisStore`` on a Redis Cluster: the contract kit, the watch kit,
the hash-tagged layout, listing across buckets, fork, and every error a ``StoreError``.

The shared 3-master cluster comes from ``THREADLINE_REDIS_CLUSTER_URL`` (``eval "$(bash
.ci/services.sh)"``); every store here gets its own key prefix, and every key under it is
deleted afterwards on every primary. A primary killed under the stores is in
``tests/faults/test_redis_cluster_restarts.py``. Locally a missing cluster skips; under
``THREADLINE_REQUIRE_ALL=1`` it fails. The layout tests at the top need no server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings

import threadline as tl
from tests.stores._helpers import SMALL_THRESHOLD
from tests.stores._names import conversation_ids
from tests.stores._names import redis_prefixes
from tests.stores._names import small_names
from tests.support import delete_redis_cluster_prefix
from tests.support import examples
from tests.support import new_redis_prefix
from tests.support import require_module
from threadline.stores import FileBlobStore
from threadline.testing import check_async_watch
from threadline.testing import check_watch
from threadline.testing._store_kit import check_async_store
from threadline.testing._store_kit import check_store

try:
    import redis
    import redis.asyncio.cluster
    import redis.cluster
    from redis.crc import key_slot as redis_key_slot

    from threadline.stores._redis_keys import BUCKETS
    from threadline.stores._redis_keys import SLOTS
    from threadline.stores._redis_keys import Layout
    from threadline.stores._redis_keys import bucket_tags
    from threadline.stores._redis_keys import key_slot
    from threadline.stores.redis import AsyncRedisStore
    from threadline.stores.redis import RedisStore
except ImportError:  # each test reports it: skips, or fails under THREADLINE_REQUIRE_ALL=1
    pass

NOWHERE = "redis://127.0.0.1:1/0"  # a store built on it never connects unless used


@pytest.fixture(autouse=True)
def _driver() -> None:
    require_module("redis", 'pip install "threadline[redis]"')


def batch(tag: str, count: int = 2) -> list[tl.Message]:
    return [tl.user_message(f"{tag} {k}", id=f"{tag}-{k}") for k in range(count)]


# ---------------------------------------------------------------------------------------------
# The layout (no server)


@settings(max_examples=examples(200))
@given(redis_prefixes.filter(lambda p: "{" not in p and "}" not in p), conversation_ids)
def test_every_key_of_a_conversation_shares_one_slot(prefix: str, cid: str) -> None:
    keys = Layout(prefix, clustered=True).keys(cid)
    assert len(set(keys)) == 6
    assert {redis_key_slot(key.encode()) for key in keys} == {redis_key_slot(keys[0].encode())}


@settings(max_examples=examples(200))
@given(redis_prefixes.filter(lambda p: "{" not in p), conversation_ids, conversation_ids)
def test_cluster_keys_of_two_conversations_never_meet(prefix: str, cid1: str, cid2: str) -> None:
    layout = Layout(prefix, clustered=True)
    shared = set(layout.keys(cid1)) & set(layout.keys(cid2))
    if cid1 != cid2:  # at most their bucket's index, when both are in one bucket
        assert shared <= {layout.index_for(cid1)} & {layout.index_for(cid2)}


def cluster_keys_of(prefix: str, cid: str) -> dict[str, tuple[str, ...]]:
    """Every key a cluster store with ``prefix`` touches for ``cid``, and what it holds."""
    layout = Layout(prefix, clustered=True)
    kinds = ["conversation", "ids", "index", "version", "parent", "log"]
    owners: dict[str, tuple[str, ...]] = dict.fromkeys(layout.indexes(), (prefix, "index"))
    for key, kind in zip(layout.keys(cid), kinds, strict=True):
        owners[key] = (prefix, kind) if kind == "index" else (prefix, kind, cid)
    return owners


@settings(max_examples=examples(200))
@given(redis_prefixes, conversation_ids, redis_prefixes, conversation_ids)
def test_no_two_prefix_and_id_pairs_share_a_cluster_key(
    prefix1: str, cid1: str, prefix2: str, cid2: str
) -> None:
    one, two = cluster_keys_of(prefix1, cid1), cluster_keys_of(prefix2, cid2)
    for key in one.keys() & two.keys():
        assert one[key] == two[key], f"{one[key]} and {two[key]} both use the key {key!r}"


def test_cluster_keys_in_a_small_space_searched_exhaustively() -> None:
    words = ["a", "conv", "conversations", "ids", "index", "Q"]
    prefixes = ["", *(name + ":" for name in small_names(words, 2))]
    seen: dict[str, tuple[str, ...]] = {}
    for prefix in prefixes:
        for cid in small_names(words, 2):
            for key, owner in cluster_keys_of(prefix, cid).items():
                assert seen.setdefault(key, owner) == owner, f"{seen[key]}, {owner} share {key!r}"


def test_the_buckets_are_spread_evenly_over_the_slots() -> None:
    tags = bucket_tags()
    assert len(tags) == len(set(tags)) == BUCKETS
    width = SLOTS // BUCKETS
    for bucket, tag in enumerate(tags):
        assert key_slot(tag) == redis_key_slot(tag.encode())  # Redis's own CRC16
        assert bucket * width <= key_slot(tag) < (bucket + 1) * width, (bucket, tag)
    assert tags[:4] == ("460", "14", "278", "10")  # the layout is fixed: never recompute it
    layout = Layout("", clustered=True)
    assert set(layout.indexes()) == {layout.index_for(f"c{n}") for n in range(5000)}


def test_the_single_server_layout_is_unchanged() -> None:
    layout = Layout("app:", clustered=False)
    assert layout.keys("user:7") == [
        "app:conv:user%3A7",
        "app:ids:user%3A7",
        "app:index:conversations",
        "app:ver:user%3A7",
        "app:parent:user%3A7",
        "app:log:user%3A7",
    ]
    assert layout.indexes() == ["app:index:conversations"]


@pytest.mark.parametrize("make", ["RedisStore", "AsyncRedisStore"])
def test_a_brace_in_a_cluster_prefix_is_refused(make: str) -> None:
    store_type = RedisStore if make == "RedisStore" else AsyncRedisStore
    with pytest.raises(ValueError, match=r"prefix 'a\{b\}:' holds a brace.*without"):
        store_type(NOWHERE, prefix="a{b}:", cluster=True)
    store_type(NOWHERE, prefix="a{b}:")  # a single server has no hash tags


def test_cluster_true_with_a_single_server_client_is_refused() -> None:
    client = redis.Redis.from_url(NOWHERE)
    with pytest.raises(ValueError, match="cluster=True, but client is a single-server Redis"):
        RedisStore(client=client, cluster=True)
    with pytest.raises(ValueError, match="cluster must be True or False, not 'yes'"):
        RedisStore(NOWHERE, cluster="yes")  # type: ignore[arg-type]


def test_an_unreachable_cluster_raises_store_error() -> None:
    with pytest.raises(tl.StoreError, match=r"could not reach the cluster.*RedisClusterException"):
        RedisStore(NOWHERE, cluster=True)

    async def run() -> None:
        store = AsyncRedisStore(NOWHERE, cluster=True)
        with pytest.raises(tl.StoreError, match="could not load conversation 'c1'"):
            await store.load("c1")
        await store.aclose()

    asyncio.run(run())


# ---------------------------------------------------------------------------------------------
# On the shared cluster


@pytest.fixture
def prefixes(redis_cluster_url: str) -> Iterator[list[str]]:
    """Key prefixes a test used; every key under them is deleted on every primary."""
    used: list[str] = []
    yield used
    for prefix in used:
        delete_redis_cluster_prefix(redis_cluster_url, prefix)


@pytest.fixture
def prefix(prefixes: list[str]) -> str:
    prefixes.append(new_redis_prefix())
    return prefixes[-1]


def factory(
    url: str, used: list[str], make: Callable[..., Any], **options: Any
) -> Callable[[], Any]:
    def build() -> Any:
        used.append(new_redis_prefix())
        return make(url, prefix=used[-1], cluster=True, **options)

    return build


@pytest.mark.requires_server
def test_redis_store_keeps_the_contract_on_a_cluster(
    redis_cluster_url: str, prefixes: list[str]
) -> None:
    check_store(factory(redis_cluster_url, prefixes, RedisStore))


@pytest.mark.requires_server
def test_async_redis_store_keeps_the_contract_on_a_cluster(
    redis_cluster_url: str, prefixes: list[str]
) -> None:
    asyncio.run(check_async_store(factory(redis_cluster_url, prefixes, AsyncRedisStore)))


@pytest.mark.requires_server
def test_cluster_stores_keep_the_contract_with_blobs(
    redis_cluster_url: str, prefixes: list[str], tmp_path: Path
) -> None:
    blobs = FileBlobStore(tmp_path / "blobs")
    options = {"blobs": blobs, "blob_threshold": SMALL_THRESHOLD}
    check_store(factory(redis_cluster_url, prefixes, RedisStore, **options))
    asyncio.run(check_async_store(factory(redis_cluster_url, prefixes, AsyncRedisStore, **options)))
    assert any((tmp_path / "blobs").rglob("*")), "no file bytes went to the blob store"


@pytest.mark.requires_server
def test_async_cluster_store_keeps_the_watch_contract(
    redis_cluster_url: str, prefixes: list[str]
) -> None:
    def make() -> AsyncRedisStore:
        prefixes.append(new_redis_prefix())
        return AsyncRedisStore(redis_cluster_url, prefix=prefixes[-1], cluster=True)

    def reopen(store: Any) -> AsyncRedisStore:
        return AsyncRedisStore(redis_cluster_url, prefix=store.prefix, cluster=True)

    asyncio.run(check_async_watch(make, reopen))


@pytest.mark.requires_server
def test_blocking_cluster_store_keeps_the_watch_contract(
    redis_cluster_url: str, prefixes: list[str]
) -> None:
    def make() -> RedisStore:
        prefixes.append(new_redis_prefix())
        return RedisStore(redis_cluster_url, prefix=prefixes[-1], cluster=True)

    def reopen(store: Any) -> RedisStore:
        return RedisStore(redis_cluster_url, prefix=store.prefix, cluster=True)

    check_watch(make, reopen)


@pytest.mark.requires_server
def test_pages_merge_the_buckets_in_code_point_order(redis_cluster_url: str, prefix: str) -> None:
    ids = [f"c{n:03d}" for n in range(40)] + ["Z", "a:b", "a.b", "0-x"]
    with RedisStore(redis_cluster_url, prefix=prefix, cluster=True) as store:
        for cid in ids:
            store.append(cid, batch(cid, 1))
        pages: list[str] = []
        after = None
        while page := store.list_conversations(limit=7, after=after):
            assert len(page) <= 7
            pages += page
            after = page[-1]
        assert pages == sorted(ids) == store.list_conversations()


@pytest.mark.requires_server
def test_clients_users_build_are_used_and_left_open(redis_cluster_url: str, prefix: str) -> None:
    client = redis.cluster.RedisCluster.from_url(redis_cluster_url)
    with RedisStore(client=client, prefix=prefix) as store:
        store.append("c1", batch("a"))
    assert client.ping()  # left open

    async def run() -> None:
        aclient = redis.asyncio.cluster.RedisCluster.from_url(redis_cluster_url)
        async with AsyncRedisStore(client=aclient, prefix=prefix) as astore:
            assert await astore.load("c1") == batch("a")
            await astore.append("c1", batch("b"))
        assert await aclient.ping()
        await aclient.aclose()

    asyncio.run(run())
    with RedisStore(redis_cluster_url, prefix=prefix, cluster=True) as store:
        assert store.load("c1") == batch("a") + batch("b")
    client.close()


@pytest.mark.requires_server
def test_conversations_spread_over_every_primary_and_list_in_order(
    redis_cluster_url: str, prefix: str
) -> None:
    ids = [f"c{n}" for n in range(60)] + ["z", "Z", "a:b", "a.b", "0-x"]
    with RedisStore(redis_cluster_url, prefix=prefix, cluster=True) as store:
        for cid in ids:
            store.append(cid, batch(cid, 1))
        assert store.list_conversations() == sorted(ids)
        counts = []
        client = store._client
        assert isinstance(client, redis.cluster.RedisCluster)
        for node in client.get_primaries():  # type: ignore[no-untyped-call]
            with redis.Redis(host=node.host, port=node.port) as direct:
                counts.append(len(list(direct.scan_iter(match=f"{prefix}conv:*"))))
        assert len(counts) == 3, counts
        assert min(counts) > 0, counts
        assert sum(counts) == len(ids), counts
        store.delete("c1")
        assert "c1" not in store.list_conversations()


@pytest.mark.requires_server
def test_a_fork_is_written_whole_under_the_branch_slot(redis_cluster_url: str, prefix: str) -> None:
    with RedisStore(redis_cluster_url, prefix=prefix, cluster=True) as store:
        store.append("parent", batch("p", 3))
        layout = store._layout
        assert redis_key_slot(layout.keys("parent")[0].encode()) != redis_key_slot(
            layout.keys("branch")[0].encode()
        ), "pick ids in two slots"
        store.fork("parent", "branch", at=2)
        assert store.load("branch") == batch("p", 3)[:2]
        assert store.parent("branch") == ("parent", 2)
        assert store.version("branch") == 1
        assert store.list_conversations() == ["branch", "parent"]
        with pytest.raises(tl.ValidationError, match="branch"):
            store.fork("parent", "branch")


@pytest.mark.requires_server
def test_a_fork_cut_before_its_script_leaves_no_branch(
    redis_cluster_url: str, prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The branch is one script on its own slot: a failure before or while it is sent leaves
    nothing of the branch, never a parent record without its messages."""
    with RedisStore(redis_cluster_url, prefix=prefix, cluster=True) as store:
        store.append("parent", batch("p", 3))

        def cut(*args: Any, **kwargs: Any) -> Any:
            raise redis.ConnectionError("connection lost (injected)")

        monkeypatch.setattr(store, "_fork", cut)
        with pytest.raises(tl.StoreError, match="fork conversation 'parent' into 'branch'"):
            store.fork("parent", "branch")
        monkeypatch.undo()
        assert store.load("branch") == []
        assert store.parent("branch") is None
        assert store.list_conversations() == ["parent"]
        store.fork("parent", "branch")  # and the fork can be made again
        assert store.parent("branch") == ("parent", 3)


@pytest.mark.requires_server
def test_a_single_server_store_on_a_cluster_says_how_to_use_it(
    redis_cluster_url: str, prefix: str
) -> None:
    with (
        RedisStore(redis_cluster_url, prefix=prefix) as store,
        pytest.raises(tl.StoreError, match=r"conversation 'c1'.*pass cluster=True"),
    ):
        store.append("c1", batch("a"))  # its keys are in several slots: CROSSSLOT


@pytest.mark.requires_server
def test_a_driver_error_on_a_cluster_names_the_conversation(
    redis_cluster_url: str, prefix: str
) -> None:
    with RedisStore(redis_cluster_url, prefix=prefix, cluster=True) as store:
        store._client.set(store._key("c1"), "not a list")  # a key of the wrong type
        with pytest.raises(tl.StoreError, match=r"append to conversation 'c1'.*WRONGTYPE"):
            store.append("c1", batch("a"))
        with pytest.raises(tl.StoreError, match=r"load conversation 'c1'.*WRONGTYPE"):
            store.load("c1")


def test_only_the_drivers_attribute_errors_become_store_errors() -> None:
    """redis-py 8.1's async cluster client, when a node drops under concurrent tasks, fails in
    its own code on a connection another task closed: that is a lost connection. An
    AttributeError from anywhere else is a bug and goes up as it is."""
    from threadline.stores._redis_client import failing

    async def closed_connection() -> None:
        connection = redis.asyncio.connection.Connection(port=1)  # never connected: no writer
        await connection._send_packed_command([b"PING"])

    with (
        pytest.raises(tl.StoreError, match=r"load conversation 'c1': connection lost") as caught,
        failing("S could not load conversation 'c1'", False),
    ):
        asyncio.run(closed_connection())
    assert isinstance(caught.value.__cause__, AttributeError)

    with (
        pytest.raises(AttributeError, match="no attribute 'nope'"),
        failing("S could not load conversation 'c1'", False),
    ):
        object().nope  # type: ignore[attr-defined]  # noqa: B018
