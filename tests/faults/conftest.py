"""Fixtures for the fault tests: stores on the shared servers, and private servers to kill.

The shared servers and a prefix of each test's own come from ``tests/conftest.py``
(``redis_url``, ``redis_prefix``, ``postgres_dsn``, ``postgres_prefix``), so the store and fault
suites reach them the same way; the private ``redis-server`` and PostgreSQL cluster, the ones to
crash, from ``tests/faults/_servers.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.faults._servers import private_postgres
from tests.faults._servers import private_redis

# Fixtures re-exported from _servers (named here so pytest finds them in this directory).
__all__ = ["async_store", "private_postgres", "private_redis", "server_store"]


def _fresh_store(request: pytest.FixtureRequest, kind: str, *, blocking: bool) -> Any:
    """A fresh store of ``kind`` ("redis" or "postgres") on its shared server, under a prefix of
    the test's own (closed by the test)."""
    make: Any
    if kind == "redis":
        from threadline.stores.redis import AsyncRedisStore
        from threadline.stores.redis import RedisStore

        make = RedisStore if blocking else AsyncRedisStore
        url = request.getfixturevalue("redis_url")
        return make(url, prefix=request.getfixturevalue("redis_prefix"))
    from threadline.stores.postgres import AsyncPostgresStore
    from threadline.stores.postgres import PostgresStore

    make = PostgresStore if blocking else AsyncPostgresStore
    dsn = request.getfixturevalue("postgres_dsn")
    prefix = request.getfixturevalue("postgres_prefix")
    return make(dsn, table_prefix=prefix, max_connections=3)


@pytest.fixture(params=["redis", "postgres", "sqlite", "jsonl"])
def async_store(request: pytest.FixtureRequest) -> Any:
    """A fresh async store on a shared server, or an async twin of a local store whose writes
    run in worker threads (closed by the test)."""
    if request.param in ("sqlite", "jsonl"):
        from threadline.stores import AsyncJsonlStore
        from threadline.stores import AsyncSQLiteStore

        place = request.getfixturevalue("tmp_path") / "store"
        if request.param == "sqlite":
            return AsyncSQLiteStore(f"{place}.db")
        return AsyncJsonlStore(place)
    return _fresh_store(request, request.param, blocking=False)


@pytest.fixture(params=["redis", "postgres"])
def server_store(request: pytest.FixtureRequest) -> Any:
    """A fresh blocking store on a shared server (closed by the test)."""
    return _fresh_store(request, request.param, blocking=True)
