"""Forks on data an older threadline wrote (the parent record's home is created on first use),
and a History branching on the server stores."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import threadline as tl
from tests.support import require_module
from threadline.stores import SQLiteStore


def test_sqlite_forks_in_a_file_without_the_parents_table(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with SQLiteStore(path) as store:
        store.append("p", [tl.user_message("a"), tl.user_message("b")])
    with sqlite3.connect(path) as connection:
        connection.execute("DROP TABLE threadline_parents")  # as an older threadline left it
    connection.close()
    with SQLiteStore(path) as store:
        assert store.parent("p") is None
        store.fork("p", "b", at=1)
        assert store.parent("b") == ("p", 1)
        assert [m.text for m in store.load("b")] == ["a"]


@pytest.mark.requires_server
def test_postgres_forks_on_tables_without_the_parents_table(
    postgres_dsn: str, postgres_prefix: str
) -> None:
    psycopg = require_module("psycopg", 'pip install "threadline[postgres]"')
    from threadline.stores import PostgresStore

    with PostgresStore(postgres_dsn, table_prefix=postgres_prefix) as store:
        store.append("p", [tl.user_message("a")])
    with psycopg.connect(postgres_dsn, autocommit=True) as connection:
        connection.execute(f"DROP TABLE {postgres_prefix}parents")
    with PostgresStore(postgres_dsn, table_prefix=postgres_prefix) as store:
        store.fork("p", "b")
        assert store.parent("b") == ("p", 1)


@pytest.mark.requires_server
@pytest.mark.parametrize("kind", ["redis", "postgres"])
def test_a_history_branches_on_a_server_store(kind: str, request: pytest.FixtureRequest) -> None:
    from threadline.stores import AsyncPostgresStore
    from threadline.stores import AsyncRedisStore
    from threadline.stores import PostgresStore
    from threadline.stores import RedisStore

    store: Any
    astore: Any
    if kind == "redis":
        url, prefix = request.getfixturevalue("redis_url"), request.getfixturevalue("redis_prefix")
        store, astore = RedisStore(url, prefix=prefix), AsyncRedisStore(url, prefix=prefix)
    else:
        dsn = request.getfixturevalue("postgres_dsn")
        prefix = request.getfixturevalue("postgres_prefix")
        store = PostgresStore(dsn, table_prefix=prefix)
        astore = AsyncPostgresStore(dsn, table_prefix=prefix)
    with store:
        history = tl.History().bind(store, "main")
        history.extend([tl.user_message("q"), tl.assistant_message("a1")])
        branch = history.fork("retry", at=1)
        branch.append(tl.assistant_message("a2"))
        history.append(tl.user_message("more"))
        assert [m.text for m in store.load("retry")] == ["q", "a2"]
        assert store.parent("retry") == ("main", 1)

    async def run() -> None:
        async with astore:
            again = await tl.History().abind(astore, "retry")
            deeper = await again.afork("deeper")
            assert [m.text for m in deeper] == ["q", "a2"]
            assert await astore.parent("deeper") == ("retry", 2)

    asyncio.run(run())
