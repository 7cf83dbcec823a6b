"""Code that runs in child processes (spawned, so it must be importable and picklable)."""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

import threadline as tl

if TYPE_CHECKING:
    from threadline.stores import PostgresStore
    from threadline.stores import RedisStore


def open_store(kind: str, location: str, prefix: str) -> RedisStore | PostgresStore:
    """A blocking server store: ``location`` is a Redis URL or a PostgreSQL DSN."""
    if kind == "redis":
        from threadline.stores.redis import RedisStore

        return RedisStore(location, prefix=prefix)
    from threadline.stores.postgres import PostgresStore

    return PostgresStore(location, table_prefix=prefix)


def batch(writer: int, number: int, size: int, padding: int = 0) -> list[tl.Message]:
    """A writer's batch; ``padding`` makes each message longer (bigger writes to interrupt)."""
    return [
        tl.user_message(
            f"w{writer} b{number} m{k} " + "x" * padding, id=f"w{writer}-b{number}-m{k}"
        )
        for k in range(size)
    ]


def append_until_killed(
    kind: str, location: str, prefix: str, batches: int, size: int, padding: int
) -> None:
    """Append far more than the test waits for: the parent SIGKILLs this process mid-stream."""
    store = open_store(kind, location, prefix)
    for number in range(batches):
        store.append("victim", batch(0, number, size, padding))


def append_to_both(
    targets: list[tuple[str, str, str]], writer: int, batches: int, size: int, start: Any
) -> None:
    """A soak writer: after ``start``, alternate batches between every target's conversation."""
    stores = [open_store(*target) for target in targets]
    start.wait(120)
    for number in range(batches):
        for store in stores:
            store.append("shared", batch(writer, number, size))
    for store in stores:
        store.close()
