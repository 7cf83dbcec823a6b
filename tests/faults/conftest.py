"""Fixtures for the fault tests: the shared servers, and private ones to kill.

The shared servers' addresses come from the store tests (``tests/stores/test_redis.py``,
``tests/stores/test_postgres.py``), so both suites reach them the same way; the private
``redis-server`` and PostgreSQL cluster, the ones to crash, from ``tests/faults/_servers.py``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.faults._servers import private_postgres, private_redis
from tests.stores.test_postgres import postgres_dsn
from tests.stores.test_redis import redis_url

# Fixtures re-exported from the store tests (named here so pytest finds them in this directory).
__all__ = ["postgres_dsn", "private_postgres", "private_redis", "redis_url"]


@pytest.fixture
def redis_prefix(redis_url: str) -> Iterator[str]:
    """A key prefix of this test's own; every key under it is deleted afterwards."""
    import redis

    prefix = f"threadline-test:{uuid.uuid4().hex}:"
    yield prefix
    client = redis.Redis.from_url(redis_url)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


@pytest.fixture
def postgres_prefix(postgres_dsn: str) -> Iterator[str]:
    """A table prefix of this test's own; its tables are dropped afterwards."""
    import psycopg

    prefix = f"tlfault_{uuid.uuid4().hex[:16]}_"
    yield prefix
    with psycopg.connect(postgres_dsn, autocommit=True) as connection:
        connection.execute(
            f"DROP TABLE IF EXISTS {prefix}messages, {prefix}conversations, {prefix}versions"
        )
