"""``RedisStore`` and ``AsyncRedisStore`` against a real Redis server.

The shared server comes from ``THREADLINE_REDIS_URL`` (``eval "$(bash .ci/services.sh)"``);
every store here gets its own key prefix, and every key under it is deleted afterwards. A
server restarted or crashed under the stores is in ``tests/faults/test_restarts.py``. Locally a
missing server skips; under ``THREADLINE_REQUIRE_ALL=1`` it fails.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import subprocess
import sys
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pydantic
import pytest

import threadline as tl
from tests.stores._helpers import SMALL_THRESHOLD
from tests.stores._helpers import check_bad_batches
from tests.support import delete_redis_prefix
from tests.support import new_redis_prefix
from tests.support import require_module
from threadline.stores import AsyncStore
from threadline.stores import FileBlobStore
from threadline.stores import Store
from threadline.testing._store_kit import _check_batches
from threadline.testing._store_kit import check_async_store
from threadline.testing._store_kit import check_store

try:
    import redis
    import redis.asyncio

    from threadline.stores.redis import AsyncRedisStore
    from threadline.stores.redis import RedisStore
except ImportError:  # each test reports it: skips, or fails under THREADLINE_REQUIRE_ALL=1
    pass

pytestmark = pytest.mark.requires_server


@pytest.fixture(autouse=True)
def _driver() -> None:
    require_module("redis", 'pip install "threadline[redis]"')


HANG_GUARD = 120.0  # seconds: only against a deadlock, never a performance assertion
DEFAULT_URL = "redis://127.0.0.1:6379/0"


def batch(writer: int, number: int, size: int) -> list[tl.Message]:
    return [
        tl.user_message(f"w{writer} b{number} m{k}", id=f"w{writer}-b{number}-m{k}")
        for k in range(size)
    ]


@pytest.fixture
def prefixes(redis_url: str) -> Iterator[list[str]]:
    """Key prefixes a test used; every key under them is deleted when it ends."""
    used: list[str] = []
    yield used
    for prefix in used:
        delete_redis_prefix(redis_url, prefix)


@pytest.fixture
def prefix(prefixes: list[str]) -> str:
    prefixes.append(new_redis_prefix())
    return prefixes[-1]


def factory(
    url: str, used: list[str], make: Callable[..., Any], **options: Any
) -> Callable[[], Any]:
    def build() -> Any:
        used.append(new_redis_prefix())
        return make(url, prefix=used[-1], **options)

    return build


# ---------------------------------------------------------------------------------------------
# The contract


def test_redis_store_keeps_the_contract(redis_url: str, prefixes: list[str]) -> None:
    check_store(factory(redis_url, prefixes, RedisStore))


def test_async_redis_store_keeps_the_contract(redis_url: str, prefixes: list[str]) -> None:
    asyncio.run(check_async_store(factory(redis_url, prefixes, AsyncRedisStore)))


def test_redis_stores_keep_the_contract_with_blobs(
    redis_url: str, prefixes: list[str], tmp_path: Path
) -> None:
    blobs = FileBlobStore(tmp_path / "blobs")
    options = {"blobs": blobs, "blob_threshold": SMALL_THRESHOLD}
    check_store(factory(redis_url, prefixes, RedisStore, **options))
    asyncio.run(check_async_store(factory(redis_url, prefixes, AsyncRedisStore, **options)))
    assert any((tmp_path / "blobs").rglob("*")), "no file bytes went to the blob store"


def test_redis_stores_satisfy_the_protocols(redis_url: str) -> None:
    with RedisStore(redis_url) as store:
        assert isinstance(store, Store)
    assert isinstance(AsyncRedisStore(redis_url), AsyncStore)  # no connection opened yet


# ---------------------------------------------------------------------------------------------
# Layout and sharing


def test_keys_are_a_list_per_conversation_and_a_sorted_index(redis_url: str, prefix: str) -> None:
    with RedisStore(redis_url, prefix=prefix) as store:
        store.append("b-2", batch(0, 0, 2))
        store.append("a-1", batch(1, 0, 1))
    client = redis.Redis.from_url(redis_url)
    try:
        assert sorted(client.scan_iter(match=f"{prefix}*")) == [
            f"{prefix}conv:a-1".encode(),
            f"{prefix}conv:b-2".encode(),
            f"{prefix}ids:a-1".encode(),
            f"{prefix}ids:b-2".encode(),
            f"{prefix}index:conversations".encode(),
            f"{prefix}log:a-1".encode(),
            f"{prefix}log:b-2".encode(),
            f"{prefix}ver:a-1".encode(),
            f"{prefix}ver:b-2".encode(),
        ]
        assert client.type(f"{prefix}conv:b-2") == b"list"
        assert client.get(f"{prefix}ver:b-2") == b"1"
        assert client.xrange(f"{prefix}log:b-2") == [(b"1-0", {b"k": b"a", b"n": b"2"})]
        assert sorted(client.hkeys(f"{prefix}ids:b-2")) == sorted(
            m.id.encode() for m in batch(0, 0, 2)
        )
        stored = client.lrange(f"{prefix}conv:b-2", 0, -1)
        assert [tl.Message.model_validate_json(item) for item in stored] == batch(0, 0, 2)
        assert client.zrange(f"{prefix}index:conversations", 0, -1, withscores=True) == [
            (b"a-1", 0.0),
            (b"b-2", 0.0),
        ]
    finally:
        client.close()


def test_sync_and_async_stores_share_conversations(redis_url: str, prefix: str) -> None:
    with RedisStore(redis_url, prefix=prefix) as store:
        store.append("c", batch(0, 0, 2))

        async def from_async() -> list[tl.Message]:
            async with AsyncRedisStore(redis_url, prefix=prefix) as astore:
                await astore.append("c", batch(1, 0, 1))
                return await astore.load("c")

        assert asyncio.run(from_async()) == [*batch(0, 0, 2), *batch(1, 0, 1)]
        assert store.load("c") == [*batch(0, 0, 2), *batch(1, 0, 1)]


def test_prefixes_keep_stores_apart(redis_url: str, prefixes: list[str]) -> None:
    prefixes.extend([new_redis_prefix(), new_redis_prefix()])
    with (
        RedisStore(redis_url, prefix=prefixes[0]) as one,
        RedisStore(redis_url, prefix=prefixes[1]) as two,
    ):
        one.append("c", batch(0, 0, 1))
        assert two.load("c") == []
        assert two.list_conversations() == []
        two.delete("c")
        assert one.load("c") == batch(0, 0, 1)


def test_a_client_passed_in_is_used_and_left_open(redis_url: str, prefix: str) -> None:
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        with RedisStore(client=client, prefix=prefix) as store:
            store.append("c", batch(0, 0, 2))
            assert store.load("c") == batch(0, 0, 2)
            assert store.list_conversations() == ["c"]
            assert "client=" in repr(store)
        assert client.ping()  # closing the store left the caller's client open
    finally:
        client.close()


def test_an_async_client_passed_in_is_used_and_left_open(redis_url: str, prefix: str) -> None:
    async def run() -> None:
        client = redis.asyncio.Redis.from_url(redis_url, decode_responses=True)
        try:
            async with AsyncRedisStore(client=client, prefix=prefix) as store:
                await store.append("c", batch(0, 0, 2))
                assert await store.load("c") == batch(0, 0, 2)
                assert await store.list_conversations() == ["c"]
            assert await client.ping()
        finally:
            await client.aclose()

    asyncio.run(run())


# ---------------------------------------------------------------------------------------------
# Arguments and errors


@pytest.mark.parametrize("name", ["RedisStore", "AsyncRedisStore"])
def test_url_or_client_exactly_one(name: str) -> None:
    store_class = {"RedisStore": RedisStore, "AsyncRedisStore": AsyncRedisStore}[name]
    with pytest.raises(ValueError, match="takes a url or a client, not neither"):
        store_class()
    with pytest.raises(ValueError, match="not both"):
        store_class(DEFAULT_URL, client=object())
    with pytest.raises(ValueError, match="prefix must be a str"):
        store_class(DEFAULT_URL, prefix=b"x:")
    with pytest.raises(ValueError, match="scheme"):
        store_class("http://127.0.0.1:6379")


def test_repr_hides_the_password() -> None:
    store = RedisStore("redis://user:s3cret@127.0.0.1:6379/0", prefix="app:")
    assert repr(store) == "RedisStore('redis://user:***@127.0.0.1:6379/0', prefix='app:')"
    assert "s3cret" not in repr(AsyncRedisStore("redis://:s3cret@127.0.0.1:6379/0"))


def test_an_unreachable_server_raises_store_error_with_the_driver_error() -> None:
    # Port 1 on loopback: nothing listens there, so the connection is refused at once.
    with RedisStore("redis://:pw@127.0.0.1:1/0") as store:
        for operation in (
            lambda: store.load("c"),
            lambda: store.append("c", batch(0, 0, 1)),
            lambda: store.replace("c", batch(0, 0, 1)),
            lambda: store.delete("c"),
            store.list_conversations,
        ):
            with pytest.raises(tl.StoreError, match=r"RedisStore\('redis://:\*\*\*@") as caught:
                operation()
            assert isinstance(caught.value.__cause__, redis.ConnectionError)
            assert "pw" not in str(caught.value)


def test_async_unreachable_server_raises_store_error() -> None:
    async def run() -> None:
        async with AsyncRedisStore("redis://127.0.0.1:1/0") as store:
            with pytest.raises(tl.StoreError, match="could not append") as caught:
                await store.append("c", batch(0, 0, 1))
            assert isinstance(caught.value.__cause__, redis.ConnectionError)

    asyncio.run(run())


def test_a_server_error_raises_store_error(redis_url: str, prefix: str) -> None:
    client = redis.Redis.from_url(redis_url)
    try:
        client.set(f"{prefix}conv:c", "not a list")
        with RedisStore(redis_url, prefix=prefix) as store:
            with pytest.raises(tl.StoreError, match="could not load conversation 'c'") as caught:
                store.load("c")
            assert isinstance(caught.value.__cause__, redis.ResponseError)  # WRONGTYPE
    finally:
        client.close()


def test_a_corrupt_element_raises_store_error(redis_url: str, prefix: str) -> None:
    with RedisStore(redis_url, prefix=prefix) as store:
        store.append("c", batch(0, 0, 2))
        client = redis.Redis.from_url(redis_url)
        try:
            client.rpush(f"{prefix}conv:c", b'{"role": "user", "parts": [')
        finally:
            client.close()
        with pytest.raises(tl.StoreError, match="could not load conversation 'c'") as caught:
            store.load("c")
        assert isinstance(caught.value.__cause__, pydantic.ValidationError)


def test_a_missing_driver_gives_an_install_hint() -> None:
    code = (
        "import sys\n"
        "sys.modules['redis'] = None\n"
        "import threadline.stores\n"
        "try:\n"
        "    import threadline.stores.redis\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert 'pip install "threadline[redis]"' in result.stdout, result.stdout + result.stderr


# ---------------------------------------------------------------------------------------------
# Writers in several processes


def append_batches(url: str, prefix: str, writer: int, batches: int, size: int, start: Any) -> None:
    """A writer process: waits for the others, then appends its batches."""
    with RedisStore(url, prefix=prefix) as store:
        start.wait(HANG_GUARD)
        for number in range(batches):
            store.append("shared", batch(writer, number, size))


def test_writer_processes_lose_nothing_and_never_interleave(redis_url: str, prefix: str) -> None:
    context = multiprocessing.get_context("spawn")
    writers, batches, size = 4, 25, 3
    start = context.Event()
    processes = [
        context.Process(target=append_batches, args=(redis_url, prefix, w, batches, size, start))
        for w in range(writers)
    ]
    for process in processes:
        process.start()
    start.set()
    for process in processes:
        process.join(HANG_GUARD)
    assert [p.exitcode for p in processes] == [0] * writers
    with RedisStore(redis_url, prefix=prefix) as store:
        _check_batches(store.load("shared"), writers, batches, size)
        assert store.list_conversations() == ["shared"]


# ---------------------------------------------------------------------------------------------
# Message ids


def test_a_long_batch_sent_again_goes_through_the_script_in_slices(
    redis_url: str, prefix: str
) -> None:
    many = [tl.user_message(f"m{i}", id=f"m{i}") for i in range(2_503)]
    with RedisStore(redis_url, prefix=prefix) as store:
        store.append("c", many[:1_200])
        store.append("c", many)
        assert store.load("c") == many
        store.replace("c", [*many[:3], *many[:3]])
        assert store.load("c") == many[:3]
        with pytest.raises(tl.ValidationError, match="m2"):
            store.append("c", [tl.user_message("new"), tl.user_message("not m2", id="m2")])
        assert store.load("c") == many[:3]


# ---------------------------------------------------------------------------------------------
# Watch


def test_a_watch_behind_the_log_says_it_fell_behind_not_that_it_was_replaced(
    redis_url: str, prefix: str
) -> None:
    from threadline.stores.redis import LOG_LENGTH

    appends = LOG_LENGTH + 300  # enough for ``MAXLEN ~`` to drop the watcher's next entries
    with RedisStore(redis_url, prefix=prefix) as store:
        store.append("c", [tl.user_message("start")])
        start = store.version("c")
        for index in range(appends):
            store.append("c", [tl.user_message(f"m{index}")])
        wanted = store.load("c")
        now = store.version("c")

    async def watch() -> tl.ConversationReplacedError:
        async with (
            AsyncRedisStore(redis_url, prefix=prefix) as store,
            store.watch("c", after_version=start) as watching,
        ):
            with pytest.raises(tl.ConversationReplacedError) as raised:
                await asyncio.wait_for(watching.__anext__(), HANG_GUARD)
            assert watching.version == now
        return raised.value

    error = asyncio.run(watch())
    assert error.messages == wanted
    assert (error.expected, error.actual) == (start, now)
    text = str(error)
    assert "replaced or deleted" not in text, text
    assert f"fell behind: the conversation's log keeps only its last ~{LOG_LENGTH:,}" in text
    assert "take error.messages as the whole conversation" in text


def test_a_watch_still_says_replaced_after_a_replace(redis_url: str, prefix: str) -> None:
    with RedisStore(redis_url, prefix=prefix) as store:
        store.append("c", [tl.user_message("a")])
        start = store.version("c")
        store.replace("c", [tl.user_message("b")])

    async def watch() -> tl.ConversationReplacedError:
        async with (
            AsyncRedisStore(redis_url, prefix=prefix) as store,
            store.watch("c", after_version=start) as watching,
        ):
            with pytest.raises(tl.ConversationReplacedError) as raised:
                await asyncio.wait_for(watching.__anext__(), HANG_GUARD)
        return raised.value

    assert f"was replaced or deleted after version {start}" in str(asyncio.run(watch()))


# ---------------------------------------------------------------------------------------------
# Bad input


def test_bad_batches_are_reported_as_every_entry_point_reports_them(
    redis_url: str, prefix: str
) -> None:
    async def write_async(messages: Any) -> None:
        async with AsyncRedisStore(redis_url, prefix=prefix) as store:
            await store.append("c", messages)

    with RedisStore(redis_url, prefix=prefix) as store:
        check_bad_batches(store, write_async)
