"""Code that runs in child processes (spawned, so it must be importable and picklable)."""

from __future__ import annotations

from typing import Any

import threadline as tl
from threadline.stores import JsonlStore
from threadline.stores import SQLiteStore
from threadline.stores import Store


def open_store(kind: str, location: str) -> Store:
    return SQLiteStore(location) if kind == "sqlite" else JsonlStore(location)


def batch(writer: int, number: int, size: int, padding: int = 0) -> list[tl.Message]:
    """A writer's batch; ``padding`` makes each message longer (bigger writes to interrupt)."""
    return [
        tl.user_message(
            f"w{writer} b{number} m{k} " + "x" * padding, id=f"w{writer}-b{number}-m{k}"
        )
        for k in range(size)
    ]


def append_batches(
    kind: str, location: str, writer: int, batches: int, size: int, start: Any
) -> None:
    store = open_store(kind, location)
    start.wait(120)
    for number in range(batches):
        store.append("shared", batch(writer, number, size))


def append_until_killed(kind: str, location: str, batches: int, size: int, padding: int) -> None:
    store = open_store(kind, location)
    for number in range(batches):
        store.append("victim", batch(0, number, size, padding))


def fork_source_messages(count: int) -> list[tl.Message]:
    """The conversation the fork crash tests fork (``count`` messages of about 300 bytes)."""
    return [tl.user_message(f"m{k} " + "x" * 300, id=f"m{k}") for k in range(count)]


def fork_until_killed(location: str, first: int) -> None:
    """Fork the JSONL conversation ``"p"`` onto ``b<first>``, ``b<first + 1>``... until
    killed."""
    store = JsonlStore(location)
    number = first
    while True:
        store.fork("p", f"b{number}")
        number += 1


def open_any_store(kind: str, location: str) -> Store:
    """A store of any kind: ``location`` is a path, or ``"<url> <prefix>"`` for a server."""
    if kind == "redis":
        from threadline.stores import RedisStore

        url, prefix = location.split(" ")
        return RedisStore(url, prefix=prefix)
    if kind == "postgres":
        from threadline.stores import PostgresStore

        dsn, prefix = location.split(" ")
        return PostgresStore(dsn, table_prefix=prefix)
    return open_store(kind, location)


def versioned_appends(
    kind: str, location: str, writer: int, count: int, start: Any, out: str
) -> None:
    """Append ``count`` messages, one at a time, each with an expected-version retry loop;
    write ``{message id: the version it was appended at}`` to ``out`` as JSON."""
    import json

    store = open_any_store(kind, location)
    landed: dict[str, int] = {}
    start.wait(120)
    for k in range(count):
        message = tl.user_message(f"w{writer} {k}", id=f"w{writer}-{k}")
        while True:
            version = store.version("race")
            try:
                store.append("race", [message], expected_version=version)
            except tl.ConflictError:
                continue
            landed[message.id] = version
            break
    with open(out, "w", encoding="utf-8") as file:
        json.dump(landed, file)
    close = getattr(store, "close", None)
    if close is not None:
        close()
