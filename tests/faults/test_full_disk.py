"""A full disk under every persistent store: the caller gets ``StoreError``, nothing is lost.

The disk is real: a small tmpfs mounted by the test (CI runs as root), so every write SQLite,
the JSONL store, Redis or PostgreSQL makes (data, WAL, journal, temporary file) meets
``ENOSPC`` from the kernel. A Python-level patch of one write call would miss SQLite's own
writes. For SQLite, ``PRAGMA max_page_count`` gives the same ``SQLITE_FULL`` without a mount.

Each test fills the disk with appends until one fails, then checks that the failure reached the
caller as :class:`~threadline.StoreError` with the driver's error as ``__cause__``, that every
acknowledged batch loads back whole and in order (the failed one whole or not at all), and that
appends work again once space is freed.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import glob
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

import pytest

import threadline as tl
from tests.support import require_module
from tests.support import unavailable
from threadline.stores import FileBlobStore
from threadline.stores import JsonlStore
from threadline.stores import SQLiteStore
from threadline.stores import Store

DISK_SIZE = "1m"
HANG_GUARD = 120.0  # seconds: only against a hang, never a performance assertion
FILLER = 256 * 1024  # bytes freed at the end, so appends can resume
MAX_BATCHES = 2_000  # far more than 1 MiB holds: the loop ends by a full disk, not by count
SIZE = 2  # messages per batch
PADDING = 3_000  # characters per message: a batch is about 6 KB


def batch(number: int, *, with_files: bool = False) -> list[tl.Message]:
    """A batch of about 6 KB; ``with_files`` puts the bulk in a file part (distinct bytes per
    message, so every one is a new blob) instead of the text."""
    if with_files:
        return [
            tl.user_message(
                f"b{number} m{k}",
                tl.file_part(f"b{number} m{k} ".encode() * (PADDING // 8), "text/plain"),
                id=f"b{number}-m{k}",
            )
            for k in range(SIZE)
        ]
    return [
        tl.user_message(f"b{number} m{k} " + "x" * PADDING, id=f"b{number}-m{k}")
        for k in range(SIZE)
    ]


def batches(numbers: range, *, with_files: bool = False) -> list[tl.Message]:
    return [message for number in numbers for message in batch(number, with_files=with_files)]


@contextlib.contextmanager
def _mounted(mountpoint: Path, size: str, uid: int = 0, gid: int = 0) -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``mountpoint`` (owned by ``uid``), unmounted after."""
    if sys.platform != "linux" or os.geteuid() != 0:
        unavailable("mounting a size-limited tmpfs needs Linux and root (CI runs as root)")
    mountpoint.mkdir(exist_ok=True)
    options = f"size={size},mode=0700,uid={uid},gid={gid}"
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mountpoint)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if mounted.returncode != 0:
        unavailable(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mountpoint
    finally:
        subprocess.run(["umount", "-l", str(mountpoint)], timeout=60, check=False)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs mounted at a fresh directory, with a filler file to free later."""
    with _mounted(tmp_path / "disk", DISK_SIZE) as mountpoint:
        (mountpoint / "filler").write_bytes(b"\0" * FILLER)
        yield mountpoint


def fill(
    store: Store, cid: str, make: Callable[[int], list[tl.Message]] = batch
) -> tuple[int, tl.StoreError]:
    """Append batches until one fails; return how many were acknowledged, and the error."""
    for number in range(MAX_BATCHES):
        try:
            store.append(cid, make(number))
        except tl.StoreError as error:
            return number, error
    raise AssertionError(f"{MAX_BATCHES} batches fitted: the disk never filled up")


def check_resumes(store: Store, cid: str, acknowledged: int, free: Callable[[], None]) -> None:
    """Still full: another append fails and changes nothing. Freed: appends carry on."""
    with pytest.raises(tl.StoreError):
        store.append(cid, batch(acknowledged))
    assert store.load(cid) == batches(range(acknowledged))
    free()
    store.append(cid, batch(acknowledged))
    store.append(cid, batch(acknowledged + 1))
    assert store.load(cid) == batches(range(acknowledged + 2))


def test_jsonl_store_on_a_full_disk(small_disk: Path) -> None:
    store = JsonlStore(small_disk / "threads")
    store.append("old", batches(range(5)))
    acknowledged, error = fill(store, "c")
    assert acknowledged > 10, f"only {acknowledged} batches fitted: the filler is too big"
    assert isinstance(error.__cause__, OSError)
    assert error.__cause__.errno == errno.ENOSPC
    assert "could not append to conversation 'c'" in str(error)

    # Every acknowledged batch is there, whole and in order; the failed one left no torn tail
    # (a torn tail would raise StoreRecoveryWarning, an error under this test suite).
    assert JsonlStore(small_disk / "threads").load("c") == batches(range(acknowledged))
    assert (small_disk / "threads" / "c.jsonl").read_bytes().endswith(b"\n")

    # replace needs room for a whole new file: it fails, and the old history stays.
    with pytest.raises(tl.StoreError) as caught:
        store.replace("c", batches(range(acknowledged + 1)))
    assert isinstance(caught.value.__cause__, OSError)
    assert store.load("c") == batches(range(acknowledged))
    assert sorted(p.name for p in (small_disk / "threads").iterdir()) == ["c.jsonl", "old.jsonl"]

    # delete needs no room: deleting a conversation is how the store itself frees space.
    check_resumes(store, "c", acknowledged, functools.partial(store.delete, "old"))
    assert store.list_conversations() == ["c"]


def test_jsonl_store_with_blobs_on_a_full_disk(small_disk: Path) -> None:
    blobs = small_disk / "blobs"
    store = JsonlStore(small_disk / "threads", blobs=FileBlobStore(blobs), blob_threshold=1_000)
    acknowledged, error = fill(store, "c", functools.partial(batch, with_files=True))
    assert acknowledged > 10, f"only {acknowledged} batches fitted: the filler is too big"
    # The blob or the line ran out of room; either way the caller sees the kernel's ENOSPC.
    assert isinstance(error.__cause__, OSError)
    assert error.__cause__.errno == errno.ENOSPC
    assert store.load("c") == batches(range(acknowledged), with_files=True)
    assert not list(blobs.rglob(".tmp-*")), "a half-written blob was left behind"

    (small_disk / "filler").unlink()
    store.append("c", batch(acknowledged, with_files=True))
    loaded = JsonlStore(small_disk / "threads", blobs=FileBlobStore(blobs)).load("c")
    assert loaded == batches(range(acknowledged + 1), with_files=True)


def test_sqlite_store_on_a_full_disk(small_disk: Path) -> None:
    path = small_disk / "threads.db"
    with SQLiteStore(path) as store:
        acknowledged, error = fill(store, "c")
        assert acknowledged > 10, f"only {acknowledged} batches fitted: the filler is too big"
        assert is_sqlite_full(error.__cause__), repr(error.__cause__)
        assert "could not append to conversation 'c'" in str(error)

        # A fresh connection (what another process would open) sees every acknowledged batch.
        with SQLiteStore(path) as reader:
            assert reader.load("c") == batches(range(acknowledged))
            assert reader.list_conversations() == ["c"]
        assert _integrity(path) == "ok"

        # replace rewrites every row in one transaction: it fails whole, the old history stays.
        with pytest.raises(tl.StoreError) as caught:
            store.replace("c", batches(range(acknowledged + 1)))
        assert is_sqlite_full(caught.value.__cause__), repr(caught.value.__cause__)
        assert store.load("c") == batches(range(acknowledged))

        # Deleting writes to the WAL too, so it cannot free space here: free it elsewhere.
        with pytest.raises(tl.StoreError) as caught:
            store.delete("c")
        assert is_sqlite_full(caught.value.__cause__), repr(caught.value.__cause__)
        assert store.load("c") == batches(range(acknowledged))

        check_resumes(store, "c", acknowledged, (small_disk / "filler").unlink)
    assert _integrity(path) == "ok"


def test_sqlite_store_at_its_page_limit(tmp_path: Path) -> None:
    path = tmp_path / "threads.db"
    with SQLiteStore(path) as store:
        store.list_conversations()  # creates the tables
        # max_page_count belongs to a connection, so set it on the one this thread's calls use.
        connection = store._db.connection()
        (pages,) = connection.execute("PRAGMA page_count").fetchone()
        connection.execute(f"PRAGMA max_page_count = {pages + 30}")

        acknowledged, error = fill(store, "c")
        assert acknowledged > 1
        assert is_sqlite_full(error.__cause__), repr(error.__cause__)

        with SQLiteStore(path) as reader:
            assert reader.load("c") == batches(range(acknowledged))
        assert _integrity(path) == "ok"

        def raise_the_limit() -> None:
            connection.execute("PRAGMA max_page_count = 1073741823")

        check_resumes(store, "c", acknowledged, raise_the_limit)


def is_sqlite_full(error: BaseException | None) -> bool:
    """Whether ``error`` is SQLite's ``SQLITE_FULL`` (its code is exposed from Python 3.11)."""
    if not isinstance(error, sqlite3.Error):
        return False
    name = getattr(error, "sqlite_errorname", "SQLITE_FULL")
    return name == "SQLITE_FULL" and "database or disk is full" in str(error)


def test_a_history_bound_to_sqlite_on_a_full_disk(small_disk: Path) -> None:
    """A write-through that fails raises from the mutation and leaves memory as the store."""
    path = small_disk / "threads.db"
    with SQLiteStore(path) as store:
        history = tl.History().bind(store, "c")
        events: list[str] = []
        history.subscribe(lambda event: events.append(event.kind))
        acknowledged, error = 0, None
        for number in range(MAX_BATCHES):
            try:
                history.extend(batch(number))
            except tl.StoreError as failed:
                error = failed
                break
            acknowledged += 1
        assert error is not None, "the disk never filled up"
        assert is_sqlite_full(error.__cause__), repr(error.__cause__)
        assert acknowledged > 10
        assert list(history.snapshot()) == batches(range(acknowledged))  # not applied
        assert events == ["extend"] * acknowledged  # and nobody heard of it
        assert store.load("c") == batches(range(acknowledged))

        (small_disk / "filler").unlink()
        history.extend(batch(acknowledged))
        assert store.load("c") == list(history.snapshot()) == batches(range(acknowledged + 1))


@pytest.mark.requires_server
def test_redis_server_on_a_full_disk(small_disk: Path) -> None:
    """A private redis-server persisting to the small disk (append-only file, fsync always).

    Redis cannot honour ``appendfsync always`` once a write to its file fails, so it exits:
    the append in flight and every call while it is down raise ``StoreError``. Restarted with
    room, it loads its file back: every acknowledged batch, the failed one whole or not at all.
    """
    require_module("redis", 'pip install "threadline[redis]"')
    from tests.faults._servers import PrivateRedis
    from threadline.stores.redis import RedisStore

    executable = shutil.which("redis-server")
    if executable is None:
        unavailable("redis-server is not installed (apt-get install redis-server)")
        raise AssertionError("unreachable")
    server = PrivateRedis(executable, small_disk)
    server.start()
    try:
        with RedisStore(server.url) as store:
            acknowledged, error = fill(store, "c")
            assert acknowledged > 10, f"only {acknowledged} batches fitted"
            assert type(error.__cause__).__module__.startswith("redis"), repr(error.__cause__)
            assert server.process is not None
            assert server.process.wait(HANG_GUARD) != 0, "redis-server kept running"
            with pytest.raises(tl.StoreError):
                store.load("c")  # down, and says so

            (small_disk / "filler").unlink()
            server.start()
            loaded = store.load("c")
            assert loaded in (batches(range(acknowledged)), batches(range(acknowledged + 1)))
            store.append("c", batch(acknowledged + 1))
            assert store.load("c") == [*loaded, *batch(acknowledged + 1)]
    finally:
        if server.process is not None and server.process.poll() is None:
            server.kill()


@pytest.mark.requires_server
def test_postgres_server_on_a_full_disk() -> None:
    """A private PostgreSQL cluster on a 96 MiB tmpfs: writes fill it until the server fails.

    What fails first is PostgreSQL's own write (a table file, or a new WAL segment, which
    makes the server PANIC and restart): the append in flight raises ``StoreError`` and
    commits nothing. With room again and the server back, every acknowledged batch is there.
    """
    require_module("psycopg", 'pip install "threadline[postgres]"')
    import pwd

    from tests.faults._servers import PrivatePostgres
    from threadline.stores.postgres import PostgresStore

    bindir = _postgres_bindir()
    try:
        owner = pwd.getpwnam("postgres")
    except KeyError:
        unavailable("there is no postgres user to run a private cluster as")
        raise AssertionError("unreachable") from None
    # Not under tmp_path: the postgres user must be able to reach the mount point.
    place = Path(tempfile.mkdtemp(prefix="threadline-pgdisk-"))
    with contextlib.ExitStack() as cleanup:
        cleanup.callback(shutil.rmtree, place, ignore_errors=True)
        disk = cleanup.enter_context(_mounted(place, "96m", owner.pw_uid, owner.pw_gid))
        server = PrivatePostgres(bindir, disk, ["runuser", "-u", "postgres", "--"])
        server.init()
        # Freed before the restart: recovery needs room for a whole 16 MiB WAL segment.
        (disk / "filler").write_bytes(b"\0" * 32 * 1024 * 1024)
        try:
            server.start()
            with PostgresStore(server.dsn, timeout=HANG_GUARD) as store:
                acknowledged, error = fill(store, "c", _big_batch)
                assert type(error.__cause__).__module__.startswith("psycopg"), error.__cause__
                assert acknowledged > 10, f"only {acknowledged} batches fitted"

                (disk / "filler").unlink()
                with contextlib.suppress(AssertionError):  # it may have stopped by itself
                    server.stop("immediate")
                server.start()
                loaded = store.load("c")
                expected = [m for n in range(acknowledged) for m in _big_batch(n)]
                assert loaded in (expected, [*expected, *_big_batch(acknowledged)])
                store.append("c", _big_batch(acknowledged + 1))
                assert store.load("c") == [*loaded, *_big_batch(acknowledged + 1)]
        finally:
            with contextlib.suppress(AssertionError):
                server.stop("immediate")


def _big_batch(number: int) -> list[tl.Message]:
    """About 40 KB of text that barely compresses (PostgreSQL would shrink repeated bytes)."""
    return [
        tl.user_message(
            random.Random(f"{number}-{k}").randbytes(10_000).hex(), id=f"b{number}-m{k}"
        )
        for k in range(SIZE)
    ]


def _postgres_bindir() -> Path:
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(Path(path).parts[-3]) if Path(path).parts[-3].isdigit() else 0,
    )
    found = candidates[-1] if candidates else shutil.which("initdb")
    if found is None:
        unavailable("PostgreSQL's initdb is not installed (apt-get install postgresql)")
        raise AssertionError("unreachable")
    return Path(found).parent


def _integrity(path: Path) -> str:
    connection = sqlite3.connect(path)
    try:
        (result,) = connection.execute("PRAGMA integrity_check").fetchone()
    finally:
        connection.close()
    return str(result)
