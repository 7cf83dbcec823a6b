"""Fixtures for the fault tests: the shared servers, and private ones to kill.

The private ``redis-server`` and PostgreSQL cluster come from the store tests
(``tests/stores/test_redis.py``, ``tests/stores/test_postgres.py``), so both suites restart
servers the same way and never touch the shared ones.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from tests.stores.test_postgres import private_postgres
from tests.stores.test_redis import private_redis
from tests.support import require_module, unavailable

# Fixtures re-exported from the store tests (named here so pytest finds them in this directory).
__all__ = ["private_postgres", "private_redis"]


@pytest.fixture
def redis_url() -> str:
    """The shared Redis server (``THREADLINE_REDIS_URL``), checked to answer."""
    redis = require_module("redis", 'pip install "threadline[redis]"')
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
    return str(url)


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
def postgres_dsn() -> str:
    """The shared PostgreSQL server (``THREADLINE_POSTGRES_DSN``), checked to answer."""
    psycopg = require_module("psycopg", 'pip install "threadline[postgres]"')
    dsn = os.environ.get("THREADLINE_POSTGRES_DSN")
    if not dsn:
        unavailable('THREADLINE_POSTGRES_DSN is not set (eval "$(bash .ci/services.sh)")')
    try:
        with psycopg.connect(dsn, connect_timeout=5) as connection:
            connection.execute("SELECT 1")
    except psycopg.Error as error:
        unavailable(f"no PostgreSQL server at {dsn}: {error}")
    return str(dsn)


@pytest.fixture
def postgres_prefix(postgres_dsn: str) -> Iterator[str]:
    """A table prefix of this test's own; its tables are dropped afterwards."""
    import psycopg

    prefix = f"tlfault_{uuid.uuid4().hex[:16]}_"
    yield prefix
    with psycopg.connect(postgres_dsn, autocommit=True) as connection:
        connection.execute(f"DROP TABLE IF EXISTS {prefix}messages, {prefix}conversations")
