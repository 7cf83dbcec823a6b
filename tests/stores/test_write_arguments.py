"""Every store checks an ``append`` or ``replace`` in one order (``stores.base.check_write``):
the conversation id, then ``expected_version``, then the batch. So a call with several bad
arguments gets the same error from every backend, blocking or async, and nothing is written.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import threadline as tl
from tests.support import unavailable
from threadline.stores import AsyncJsonlStore
from threadline.stores import AsyncMemoryStore
from threadline.stores import AsyncSQLiteStore

_LOCAL = ["memory", "jsonl", "sqlite"]
KINDS = [
    *_LOCAL,
    pytest.param("redis", marks=pytest.mark.requires_server),
    pytest.param("postgres", marks=pytest.mark.requires_server),
]
_PREFIX = f"tlwriteargs{uuid.uuid4().hex[:12]}"


@pytest.fixture
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A store of the test's ``kind``, blocking or async (``twin``), closed after; nothing is
    written (every call is refused), but a server's tables are dropped anyway."""
    kind: str = request.node.callspec.params["kind"]
    twin: bool = request.node.callspec.params["twin"]
    dsn = ""
    if kind in _LOCAL:
        opened = _local(kind, twin, tmp_path)
    elif kind == "redis":
        url = os.environ.get("THREADLINE_REDIS_URL") or ""
        if not url:
            unavailable("THREADLINE_REDIS_URL is not set")
        redis_store = tl.stores.AsyncRedisStore if twin else tl.stores.RedisStore
        opened = redis_store(url, prefix=f"{_PREFIX}:")
    else:
        dsn = os.environ.get("THREADLINE_POSTGRES_DSN") or ""
        if not dsn:
            unavailable("THREADLINE_POSTGRES_DSN is not set")
        postgres_store = tl.stores.AsyncPostgresStore if twin else tl.stores.PostgresStore
        opened = postgres_store(dsn, table_prefix=f"{_PREFIX}_")
    yield opened
    if hasattr(opened, "aclose"):
        asyncio.run(opened.aclose())
    elif hasattr(opened, "close"):
        opened.close()
    if dsn:
        _drop_tables(dsn)


def _local(kind: str, twin: bool, root: Path) -> Any:
    if kind == "memory":
        return AsyncMemoryStore() if twin else tl.stores.MemoryStore()
    if kind == "jsonl":
        return AsyncJsonlStore(root / "c") if twin else tl.stores.JsonlStore(root / "c")
    return AsyncSQLiteStore(root / "c.db") if twin else tl.stores.SQLiteStore(root / "c.db")


def _drop_tables(dsn: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as connection:
        rows = connection.execute(
            "SELECT tablename FROM pg_tables WHERE tablename LIKE %s", (f"{_PREFIX}%",)
        ).fetchall()
        for (table,) in rows:
            connection.execute(f'DROP TABLE IF EXISTS "{table}"')


def _first_path(store: Any, method: str, *args: Any, **kwargs: Any) -> str:
    """The path of the first problem the write reports."""
    with pytest.raises(tl.ValidationError) as caught:
        _run(getattr(store, method), *args, **kwargs)
    return caught.value.errors[0].path


def _run(write: Any, *args: Any, **kwargs: Any) -> None:
    result = write(*args, **kwargs)
    if asyncio.iscoroutine(result):
        asyncio.run(result)


@pytest.mark.parametrize("twin", [False, True])
@pytest.mark.parametrize("method", ["append", "replace"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_write_checks_the_id_then_the_version_then_the_batch(
    store: Any, kind: str, method: str, twin: bool
) -> None:
    batch: list[Any] = ["not a message"]
    assert _first_path(store, method, "../c", batch, expected_version=-1) == "conversation_id"
    assert _first_path(store, method, "c", batch, expected_version=-1) == "expected_version"
    assert _first_path(store, method, "c", batch).startswith("messages[0]")
