"""Code that runs in child processes (spawned, so it must be importable and picklable)."""

from __future__ import annotations

from typing import Any

import threadline as tl
from threadline.stores import JsonlStore, SQLiteStore, Store


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
