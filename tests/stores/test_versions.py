"""Versions on every backend, with real servers: writer processes racing with expected-version
retry loops, conflict semantics of ``replace``, and two Histories bound to one conversation
(``on_conflict="reload"`` and ``"raise"``)."""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import threadline as tl
from tests.stores._workers import open_any_store
from tests.stores._workers import versioned_appends
from tests.support import unavailable
from threadline.stores import Store

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX flock")

KINDS = [
    "memory",
    "sqlite",
    "jsonl",
    pytest.param("redis", marks=pytest.mark.requires_server),
    pytest.param("postgres", marks=pytest.mark.requires_server),
]
PROCESS_KINDS = KINDS[1:]  # a MemoryStore is not shared between processes
HANG_GUARD = 120.0


@pytest.fixture
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Where the store of the test's ``kind`` lives; a server's keys or tables are removed."""
    kind = request.node.callspec.params["kind"]
    if kind == "sqlite":
        yield str(tmp_path / "versions.db")
    elif kind in ("jsonl", "memory"):
        yield str(tmp_path / "versions")
    elif kind == "redis":
        import redis

        url = os.environ.get("THREADLINE_REDIS_URL") or ""
        if not url:
            unavailable("THREADLINE_REDIS_URL is not set")
        prefix = f"tlversions:{uuid.uuid4().hex[:16]}:"
        yield f"{url} {prefix}"
        client = redis.Redis.from_url(url)
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
        client.close()
    else:
        import psycopg

        dsn = os.environ.get("THREADLINE_POSTGRES_DSN") or ""
        if not dsn:
            unavailable("THREADLINE_POSTGRES_DSN is not set")
        prefix = f"tlversions_{uuid.uuid4().hex[:16]}_"
        yield f"{dsn} {prefix}"
        with psycopg.connect(dsn, autocommit=True) as connection:
            connection.execute(
                f"DROP TABLE IF EXISTS {prefix}messages, {prefix}conversations, {prefix}versions"
            )


def open_kind(kind: str, location: str) -> Store:
    if kind == "memory":
        return _MEMORY.setdefault(location, tl.stores.MemoryStore())
    return open_any_store(kind, location)


_MEMORY: dict[str, Store] = {}


def ids(messages: list[tl.Message]) -> list[str]:
    return [m.id for m in messages]


@pytest.mark.parametrize("kind", PROCESS_KINDS)
def test_versioned_writer_processes_lose_nothing(kind: str, location: str, tmp_path: Path) -> None:
    """N processes x M appends, each with an expected-version retry loop: the exact count, no
    duplicate, each writer's order kept, and each append stored where its version said."""
    context = multiprocessing.get_context("spawn")
    open_kind(kind, location).list_conversations()  # tables, file or directory up front
    writers, count = 4, 12
    start = context.Event()
    outs = [str(tmp_path / f"landed-{w}.json") for w in range(writers)]
    processes = [
        context.Process(target=versioned_appends, args=(kind, location, w, count, start, outs[w]))
        for w in range(writers)
    ]
    for process in processes:
        process.start()
    start.set()
    for process in processes:
        process.join(HANG_GUARD)
    assert [p.exitcode for p in processes] == [0] * writers
    store = open_kind(kind, location)
    stored = ids(store.load("race"))
    assert len(stored) == writers * count
    assert len(set(stored)) == len(stored), "a message was stored twice"
    for w in range(writers):
        assert [i for i in stored if i.startswith(f"w{w}-")] == [f"w{w}-{k}" for k in range(count)]
    assert store.version("race") == writers * count
    for out in outs:
        with open(out, encoding="utf-8") as file:
            for message_id, version in json.load(file).items():
                assert stored.index(message_id) == version, message_id


@pytest.mark.parametrize("kind", KINDS)
def test_replace_with_a_stale_version_changes_nothing(kind: str, location: str) -> None:
    store = open_kind(kind, location)
    store.append("c", [tl.user_message("one", id="m1")])
    seen = store.version("c")
    store.append("c", [tl.user_message("two", id="m2")])  # another writer, meanwhile
    with pytest.raises(tl.ConflictError) as caught:
        store.replace("c", [tl.user_message("summary", id="s")], expected_version=seen)
    error = caught.value
    assert (error.conversation_id, error.expected, error.actual) == ("c", seen, seen + 1)
    assert "'c'" in str(error)
    assert "on_conflict" in str(error)
    assert isinstance(error, tl.StoreError)
    assert ids(store.load("c")) == ["m1", "m2"]
    assert store.version("c") == seen + 1
    store.replace("c", [tl.user_message("summary", id="s")], expected_version=seen + 1)
    assert ids(store.load("c")) == ["s"]
    with pytest.raises(tl.ConflictError):
        store.replace("c", [], expected_version=seen + 1)
    assert ids(store.load("c")) == ["s"]


@pytest.mark.parametrize("kind", KINDS)
def test_two_workers_bound_with_reload_both_end_with_every_message(
    kind: str, location: str
) -> None:
    """The issue's scenario: worker A and B bound to one conversation each append."""
    store = open_kind(kind, location)
    tl.History([tl.system_message("s", id="s")]).bind(store, "shared")
    worker_a = tl.History().bind(open_kind(kind, location), "shared", on_conflict="reload")
    worker_b = tl.History().bind(open_kind(kind, location), "shared", on_conflict="reload")
    events: list[tuple[str, list[str]]] = []
    worker_b.subscribe(lambda event: events.append((event.kind, ids(list(event.messages)))))

    worker_a.append(tl.user_message("from worker A", id="a1"))
    worker_b.append(tl.user_message("from worker B", id="b1"))
    assert ids(store.load("shared")) == ["s", "a1", "b1"]
    assert ids(list(worker_b.snapshot())) == ["s", "a1", "b1"]
    assert events == [("extend", ["a1"]), ("append", ["b1"])]  # theirs first, in order

    worker_a.append(tl.user_message("A again", id="a2"))  # A catches up on its next write
    assert ids(list(worker_a.snapshot())) == ["s", "a1", "b1", "a2"]
    assert ids(store.load("shared")) == ["s", "a1", "b1", "a2"]


@pytest.mark.parametrize("kind", KINDS)
def test_two_workers_bound_with_raise_refuse_and_change_nothing(kind: str, location: str) -> None:
    store = open_kind(kind, location)
    tl.History([tl.system_message("s", id="s")]).bind(store, "shared")
    worker_a = tl.History().bind(open_kind(kind, location), "shared")  # "raise" by default
    worker_b = tl.History().bind(open_kind(kind, location), "shared", on_conflict="raise")
    events: list[str] = []
    worker_b.subscribe(lambda event: events.append(event.kind))

    worker_a.append(tl.user_message("from worker A", id="a1"))
    before = worker_b.snapshot()
    with pytest.raises(tl.ConflictError, match="'shared'"):
        worker_b.append(tl.user_message("from worker B", id="b1"))
    assert ids(list(worker_b.snapshot())) == ["s"]
    assert worker_b.snapshot().version == before.version
    assert events == []
    assert ids(store.load("shared")) == ["s", "a1"]
    with pytest.raises(tl.ConflictError):
        worker_b.reset()  # a replace is refused too
    assert ids(store.load("shared")) == ["s", "a1"]


@pytest.mark.parametrize("kind", KINDS)
def test_reload_takes_a_replace_as_a_restore(kind: str, location: str) -> None:
    store = open_kind(kind, location)
    worker = tl.History([tl.user_message("one", id="m1")]).bind(store, "c", on_conflict="reload")
    other = open_kind(kind, location)
    other.replace("c", [tl.system_message("summary", id="sum")])
    events: list[tuple[str, list[str]]] = []
    worker.subscribe(lambda event: events.append((event.kind, ids(list(event.messages)))))
    worker.append(tl.user_message("two", id="m2"))
    assert events == [("restore", ["sum"]), ("append", ["m2"])]
    assert ids(store.load("c")) == ["sum", "m2"]
    assert ids(list(worker.snapshot())) == ["sum", "m2"]


@pytest.mark.parametrize("kind", KINDS)
def test_reload_refuses_an_id_the_other_writer_took(kind: str, location: str) -> None:
    store = open_kind(kind, location)
    worker = tl.History().bind(store, "c", on_conflict="reload")
    open_kind(kind, location).append("c", [tl.user_message("theirs", id="same")])
    with pytest.raises(tl.ValidationError, match="same"):
        worker.append(tl.user_message("mine", id="same"))
    assert ids(list(worker.snapshot())) == ["same"]  # theirs was taken; mine was not written
    assert [m.text for m in store.load("c")] == ["theirs"]
