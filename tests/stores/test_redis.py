"""``RedisStore`` and ``AsyncRedisStore`` against a real Redis server.

The shared server comes from ``THREADLINE_REDIS_URL`` (``eval "$(bash .ci/services.sh)"``);
every store here gets its own key prefix, and every key under it is deleted afterwards. The
restart tests start a private ``redis-server`` (append-only file, fsync on every write) so that
killing it disturbs nobody else. Locally a missing server skips; under
``THREADLINE_REQUIRE_ALL=1`` it fails.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pydantic
import pytest

import threadline as tl
from tests.stores._helpers import SMALL_THRESHOLD
from tests.support import require_module, unavailable
from threadline.stores import AsyncStore, FileBlobStore, Store
from threadline.testing._store_kit import _check_batches, check_async_store, check_store

try:
    import redis
    import redis.asyncio

    from threadline.stores.redis import AsyncRedisStore, RedisStore
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


def new_prefix() -> str:
    return f"threadline-test:{uuid.uuid4().hex}:"


def delete_prefix(url: str, prefix: str) -> None:
    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


@pytest.fixture(scope="module")
def redis_url() -> str:
    url = os.environ.get("THREADLINE_REDIS_URL")
    if not url:
        unavailable('THREADLINE_REDIS_URL is not set (eval "$(bash .ci/services.sh)")')
    client = redis.Redis.from_url(url, socket_connect_timeout=5)
    try:
        client.ping()
    except redis.RedisError as error:
        unavailable(f"no Redis server at {url}: {error}")
    finally:
        client.close()
    return url


@pytest.fixture
def prefixes(redis_url: str) -> Iterator[list[str]]:
    """Key prefixes a test used; every key under them is deleted when it ends."""
    used: list[str] = []
    yield used
    for prefix in used:
        delete_prefix(redis_url, prefix)


@pytest.fixture
def prefix(prefixes: list[str]) -> str:
    prefixes.append(new_prefix())
    return prefixes[-1]


def factory(
    url: str, used: list[str], make: Callable[..., Any], **options: Any
) -> Callable[[], Any]:
    def build() -> Any:
        used.append(new_prefix())
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
        ]
        assert client.type(f"{prefix}conv:b-2") == b"list"
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
    prefixes.extend([new_prefix(), new_prefix()])
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
# A server restarted under a connected client


class PrivateRedis:
    """A redis-server of this test's own on a free loopback port, persisting every write."""

    def __init__(self, executable: str, directory: Path) -> None:
        self.executable = executable
        self.directory = directory
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.executable,
                *("--bind", "127.0.0.1", "--port", str(self.port)),
                *("--dir", str(self.directory), "--logfile", "redis.log"),
                *("--appendonly", "yes", "--appendfsync", "always", "--save", ""),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis.from_url(self.url, socket_connect_timeout=1)
        deadline = time.monotonic() + HANG_GUARD
        try:
            while True:
                try:
                    if client.ping():  # LOADING until the append-only file is read back
                        return
                except redis.RedisError:
                    pass
                assert self.process.poll() is None, f"redis-server exited: {self.log()}"
                assert time.monotonic() < deadline, f"redis-server did not start: {self.log()}"
                time.sleep(0.05)
        finally:
            client.close()

    def kill(self) -> None:
        """SIGKILL: no shutdown, no final flush; clients see their connections drop."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(HANG_GUARD)

    def log(self) -> str:
        path = self.directory / "redis.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else "(no log)"


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    if sys.platform == "win32":
        pytest.skip("the restart tests SIGKILL a redis-server (POSIX)")
    executable = shutil.which("redis-server")
    if executable is None:
        unavailable("redis-server is not installed (apt-get install redis-server)")
        raise AssertionError("unreachable")
    server = PrivateRedis(executable, tmp_path)
    server.start()
    try:
        yield server
    finally:
        if server.process is not None and server.process.poll() is None:
            server.kill()


def test_a_restart_between_calls_costs_at_most_one_error(private_redis: PrivateRedis) -> None:
    with RedisStore(private_redis.url) as store:
        # Several pooled connections, all of which the restart will leave dead.
        threads = [
            threading.Thread(target=store.append, args=(f"c{i}", batch(i, 0, 2))) for i in range(4)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(HANG_GUARD)
        private_redis.kill()
        private_redis.start()

        acknowledged, failed = [0], []
        for number in range(1, 6):
            try:
                store.append("c0", batch(0, number, 2))
                acknowledged.append(number)
            except tl.StoreError:
                failed.append(number)
        assert len(failed) <= 1, f"{len(failed)} calls failed after the restart"
        _check_whole_batches(store.load("c0"), acknowledged, failed, 2)
        assert store.list_conversations() == ["c0", "c1", "c2", "c3"]
        assert store.load("c3") == batch(3, 0, 2)


def test_an_async_store_survives_a_restart_between_calls(private_redis: PrivateRedis) -> None:
    async def run() -> None:
        async with AsyncRedisStore(private_redis.url) as store:
            await asyncio.gather(*(store.append(f"c{i}", batch(i, 0, 1)) for i in range(3)))
            private_redis.kill()
            private_redis.start()
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


def test_a_restart_mid_stream_leaves_whole_batches(private_redis: PrivateRedis) -> None:
    size = 3
    acknowledged: list[int] = []
    failed: list[int] = []
    unexpected: list[BaseException] = []
    back, stop = threading.Event(), threading.Event()

    with RedisStore(private_redis.url) as store:

        def write() -> None:
            number = 0
            try:
                while not stop.is_set():
                    try:
                        store.append("stream", batch(0, number, size))
                        acknowledged.append(number)
                    except tl.StoreError:
                        failed.append(number)
                        back.wait(HANG_GUARD)  # the server is down: wait until it is back
                    number += 1
            except BaseException as error:
                unexpected.append(error)

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        try:
            _wait_for(lambda: len(acknowledged) >= 30, "the writer got going")
            private_redis.kill()
            private_redis.start()
            before = len(acknowledged)
            back.set()
            _wait_for(lambda: len(acknowledged) >= before + 30, "the writer carried on")
        finally:
            back.set()
            stop.set()
            writer.join(HANG_GUARD)
        assert not unexpected, unexpected
        assert len(failed) <= 1, f"{len(failed)} calls failed: {failed}"
        _check_whole_batches(store.load("stream"), acknowledged, failed, size)


def _wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + HANG_GUARD
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.01)


def _check_whole_batches(
    loaded: list[tl.Message], acknowledged: list[int], failed: list[int], size: int
) -> None:
    """Whole batches in order: every acknowledged one, and a failed one whole or not at all."""
    assert len(loaded) % size == 0, f"{len(loaded)} messages: a batch was cut"
    numbers = []
    for start in range(0, len(loaded), size):
        number = int(loaded[start].id.split("-")[1][1:])
        assert loaded[start : start + size] == batch(0, number, size), f"batch {number} torn"
        numbers.append(number)
    assert numbers == sorted(set(numbers)), f"batches out of order or repeated: {numbers}"
    assert set(acknowledged) <= set(numbers), "an acknowledged batch was lost"
    assert set(numbers) <= set(acknowledged) | set(failed), "a batch appeared from nowhere"


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
