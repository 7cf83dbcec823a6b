"""Helpers for tests that need something outside the project (an SDK, a server).

Locally such a test skips when the thing is missing; with ``THREADLINE_REQUIRE_ALL=1`` (which
``.ci/run`` sets) it fails instead, so CI can never pass by skipping.
"""

from __future__ import annotations

import importlib
import os
import uuid
from collections.abc import Iterable
from types import ModuleType
from typing import NoReturn
from typing import TypeVar

import pytest
from hypothesis import settings

REQUIRE_ALL = os.environ.get("THREADLINE_REQUIRE_ALL") == "1"


def unavailable(reason: str) -> NoReturn:
    """Skip the current test, or fail it when everything is required."""
    if REQUIRE_ALL:
        pytest.fail(f"THREADLINE_REQUIRE_ALL=1 but {reason}", pytrace=False)
    pytest.skip(reason)


def require_module(name: str, hint: str | None = None) -> ModuleType:
    """Import ``name`` or skip (fail under THREADLINE_REQUIRE_ALL=1)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        unavailable(f"{name} is not installed ({hint or 'pip install -e .[test]'})")


def examples(full: int) -> int:
    """``full`` examples under the full tier's profile (``ci``); in the quick tier, at most its
    profile's count, so a test that asks for more examples than most keeps the quick tier quick.

    For ``@settings(max_examples=examples(40))``: the count is read when the test module is
    imported, after ``tests/conftest.py`` has loaded the profile.
    """
    default = settings.default
    assert default is not None  # a profile is always loaded (tests/conftest.py)
    if default.max_examples >= FULL_EXAMPLES:
        return full
    return min(full, default.max_examples)


FULL_EXAMPLES = 200
"""The ``ci`` profile's count (``tests/conftest.py``): from it up, counts are the full tier's."""


_P = TypeVar("_P")


def part_as(kind: type[_P], part: object) -> _P:
    """``part``, checked to be a ``kind``: narrows a part union for the type checker."""
    assert isinstance(part, kind), f"expected a {kind.__name__}, got {part!r}"
    return part


# ---------------------------------------------------------------------------------------------
# The shared Redis and PostgreSQL servers (``eval "$(bash .ci/services.sh)"``); the fixtures
# over them are in ``tests/conftest.py``.


def redis_server_url() -> str:
    """``THREADLINE_REDIS_URL``, checked to answer a ping; unavailable when unset or down."""
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
    return url


def new_redis_prefix() -> str:
    """A key prefix no other test uses."""
    return f"threadline-test:{uuid.uuid4().hex}:"


def delete_redis_prefix(url: str, prefix: str) -> None:
    """Delete every key under ``prefix`` (and nothing else: never ``FLUSHDB`` a shared server)."""
    redis = require_module("redis", 'pip install "threadline[redis]"')
    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


def redis_cluster_server_url() -> str:
    """``THREADLINE_REDIS_CLUSTER_URL`` (a node of the shared Redis Cluster), checked to answer
    with every slot served; unavailable when unset, down or not ``cluster_state:ok``."""
    redis = require_module("redis", 'pip install "threadline[redis]"')
    url = os.environ.get("THREADLINE_REDIS_CLUSTER_URL")
    if not url:
        unavailable('THREADLINE_REDIS_CLUSTER_URL is not set (eval "$(bash .ci/services.sh)")')
    client = redis.Redis.from_url(url, socket_connect_timeout=5)
    try:
        state = client.cluster("info").get("cluster_state")
    except redis.RedisError as error:
        unavailable(f"no Redis Cluster node at {url}: {error}")
    finally:
        client.close()
    if state != "ok":
        unavailable(f"the Redis Cluster at {url} is not serving every slot: {state}")
    return url


def delete_redis_cluster_prefix(url: str, prefix: str) -> None:
    """Delete every key under ``prefix`` on every primary of the cluster at ``url``."""
    redis = require_module("redis", 'pip install "threadline[redis]"')
    cluster = require_module("redis.cluster", 'pip install "threadline[redis]"')
    client = cluster.RedisCluster.from_url(url)
    try:
        for node in client.get_primaries():
            # A client of the node's own: the cluster client's scan with target_nodes leaves a
            # connection unclosed (a ResourceWarning).
            with redis.Redis(host=node.host, port=node.port) as direct:
                keys = list(direct.scan_iter(match=f"{prefix}*", count=1000))
            for start in range(0, len(keys), 1000):
                client.delete(*keys[start : start + 1000])  # the client splits it by slot
    finally:
        client.close()


def postgres_server_dsn() -> str:
    """``THREADLINE_POSTGRES_DSN``, checked to answer a query; unavailable when unset or down."""
    psycopg = require_module("psycopg", 'pip install "threadline[postgres]"')
    dsn = os.environ.get("THREADLINE_POSTGRES_DSN")
    if not dsn:
        unavailable('THREADLINE_POSTGRES_DSN is not set (eval "$(bash .ci/services.sh)")')
    try:
        with psycopg.connect(dsn, connect_timeout=5) as connection:
            connection.execute("SELECT 1")
    except psycopg.Error as error:
        unavailable(f"no PostgreSQL server at {dsn}: {error}")
    return dsn


def pgbouncer_server_url() -> str:
    """``THREADLINE_PGBOUNCER_URL`` (PgBouncer in transaction mode in front of the test
    PostgreSQL), checked to answer a query; unavailable when unset or down."""
    psycopg = require_module("psycopg", 'pip install "threadline[postgres]"')
    url = os.environ.get("THREADLINE_PGBOUNCER_URL")
    if not url:
        unavailable('THREADLINE_PGBOUNCER_URL is not set (eval "$(bash .ci/services.sh)")')
    try:
        with psycopg.connect(url, connect_timeout=5, prepare_threshold=None) as connection:
            connection.execute("SELECT 1")
    except psycopg.Error as error:
        unavailable(f"no PgBouncer at {url}: {error}")
    return url


def new_postgres_prefix() -> str:
    """A table prefix no other test uses."""
    return f"tltest_{uuid.uuid4().hex[:16]}_"


def drop_postgres_tables(dsn: str, prefixes: Iterable[str]) -> None:
    """Drop the store tables under each of ``prefixes`` (and no others)."""
    psycopg = require_module("psycopg", 'pip install "threadline[postgres]"')
    with psycopg.connect(dsn, autocommit=True) as connection:
        for prefix in prefixes:
            connection.execute(
                f"DROP TABLE IF EXISTS {prefix}messages, {prefix}conversations, {prefix}versions,"
                f" {prefix}parents"
            )
