"""The command line on the server stores: Redis (one server and a cluster) and PostgreSQL.

Each test keeps to its own key or table prefix on the shared servers (``eval "$(bash
.ci/services.sh)"``); without them it skips, and fails under ``THREADLINE_REQUIRE_ALL=1``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit
from urllib.parse import urlunsplit

import pytest

import threadline as tl
from tests.support import delete_redis_cluster_prefix
from tests.support import new_redis_prefix
from tests.support import require_module
from tests.unit.test_cli import defective_history
from tests.unit.test_cli import good_history
from tests.unit.test_cli import one_error_line
from tests.unit.test_cli import run

pytestmark = pytest.mark.requires_server


def with_query(url: str, query: str) -> str:
    parts = urlsplit(url)
    joined = f"{parts.query}&{query}" if parts.query else query
    return urlunsplit(parts._replace(query=joined))


@pytest.fixture
def redis_store(redis_url: str, redis_prefix: str) -> Iterator[tuple[str, Any]]:
    require_module("redis", 'pip install "threadline[redis]"')
    from threadline.stores.redis import RedisStore

    with RedisStore(redis_url, prefix=redis_prefix) as store:
        yield with_query(redis_url, f"prefix={redis_prefix}"), store


@pytest.fixture
def cluster_store(redis_cluster_url: str) -> Iterator[tuple[str, Any]]:
    require_module("redis", 'pip install "threadline[redis]"')
    from threadline.stores.redis import RedisStore

    prefix = new_redis_prefix()
    try:
        with RedisStore(redis_cluster_url, prefix=prefix, cluster=True) as store:
            yield with_query(redis_cluster_url, f"prefix={prefix}&cluster=true"), store
    finally:
        delete_redis_cluster_prefix(redis_cluster_url, prefix)


@pytest.fixture
def postgres_store(postgres_dsn: str, postgres_prefix: str) -> Iterator[tuple[str, Any]]:
    require_module("psycopg", 'pip install "threadline[postgres]"')
    from threadline.stores.postgres import PostgresStore

    with PostgresStore(postgres_dsn, table_prefix=postgres_prefix) as store:
        yield with_query(postgres_dsn, f"table_prefix={postgres_prefix}"), store


@pytest.fixture(params=["redis", "cluster", "postgres"])
def server_store(request: pytest.FixtureRequest) -> tuple[str, Any]:
    result: tuple[str, Any] = request.getfixturevalue(f"{request.param}_store")
    return result


def test_every_command_reads_and_repair_writes_back(
    capsys: pytest.CaptureFixture[str], server_store: tuple[str, Any]
) -> None:
    url, store = server_store
    store.append("c-1", defective_history())
    store.append("c-2", good_history())
    where = ["--store", url, "--conversation", "c-1"]

    code, out, _ = run(capsys, "check", *where)
    assert code == 1
    assert "--write-back" in out
    code, out, _ = run(capsys, "show", "--color", "never", *where)
    assert (code, "Weather in Paris?" in out) == (0, True)
    code, out, _ = run(capsys, "stats", "--json", *where)
    assert (code, json.loads(out)["messages"]) == (0, 3)

    code, out, err = run(capsys, "repair", *where, "--write-back")
    assert (code, err) == (0, "")
    assert tl.check_messages(store.load("c-1")).ok
    assert run(capsys, "check", *where)[0] == 0

    code, out, _ = run(capsys, "list", "--store", url, "--json", "--limit", "1")
    page = json.loads(out)
    assert [row["id"] for row in page["conversations"]] == ["c-1"]
    assert page["conversations"][0]["messages"] == 3
    assert page["next_after"] == "c-1"
    code, out, _ = run(capsys, "list", "--store", url, "--json", "--after", "c-1")
    page = json.loads(out)
    assert ([row["id"] for row in page["conversations"]], page["next_after"]) == (["c-2"], None)


def test_a_conversation_the_store_does_not_hold(
    capsys: pytest.CaptureFixture[str], server_store: tuple[str, Any]
) -> None:
    url, store = server_store
    store.append("c-1", good_history())
    code, out, err = run(capsys, "show", "--store", url, "--conversation", "nope")
    assert (code, out) == (2, "")
    assert "no conversation nope in" in one_error_line(err)


def test_postgres_tables_that_do_not_exist_are_reported_not_created(
    capsys: pytest.CaptureFixture[str], postgres_dsn: str
) -> None:
    psycopg = require_module("psycopg", 'pip install "threadline[postgres]"')
    url = with_query(postgres_dsn, "table_prefix=tl_cli_never_")
    code, out, err = run(capsys, "list", "--store", url)
    assert (code, out) == (2, "")
    assert "tables do not exist" in one_error_line(err)
    with psycopg.connect(postgres_dsn) as connection:
        found = connection.execute(
            "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'tl\\_cli\\_never\\_%'"
        ).fetchone()
    assert found == (0,)


def test_a_wrong_password_is_not_printed(
    capsys: pytest.CaptureFixture[str], postgres_dsn: str
) -> None:
    parts = urlsplit(postgres_dsn)
    host = parts.netloc.rsplit("@", 1)[-1]
    url = urlunsplit(parts._replace(netloc=f"{parts.username}:Wr0ng-Pa55word@{host}"))
    code, out, err = run(capsys, "list", "--store", url)
    assert (code, out) == (2, "")
    assert "Wr0ng-Pa55word" not in err
    assert "***" in one_error_line(err)
