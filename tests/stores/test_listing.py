"""Listing at scale (issue 40, item 4): ``list_conversations(limit, after)`` pages in code
point order on every store, on an index where the store has one, and ``conversation_info``.

The kits check the contract (``_store_kit_listing``); here: paging equals the sorted set of ids
for any ids and page size (a hypothesis property), the argument errors name the argument, the
database stores read a page off their primary key in the right collation (no sort), and the
times each store keeps."""

from __future__ import annotations

import asyncio
import tempfile
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import threadline as tl
from tests.stores._helpers import KINDS
from tests.stores._helpers import store_factory
from tests.strategies import extreme_conversation_ids
from tests.support import examples
from tests.support import new_postgres_prefix
from tests.support import require_module
from threadline.stores import AsyncMemoryStore
from threadline.stores import ConversationInfo
from threadline.stores import JsonlStore
from threadline.stores import MemoryStore
from threadline.stores import SQLiteStore
from threadline.stores import Store

_IDS = st.lists(
    st.one_of(
        extreme_conversation_ids(),
        st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,6}", fullmatch=True),
    ),
    max_size=25,
    unique=True,
).map(lambda ids: [cid for cid in ids if ".." not in cid])


def _message() -> list[tl.Message]:
    return [tl.user_message("hi", id="m1")]


def _pages(store: Store, limit: int) -> list[str]:
    ids: list[str] = []
    after = None
    while True:
        page = store.list_conversations(limit=limit, after=after)
        assert len(page) <= limit
        ids += page
        if len(page) < limit:
            return ids
        after = page[-1]


@pytest.mark.parametrize("kind", ["memory", "sqlite", "jsonl"])
@settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(ids=_IDS, limit=st.integers(1, 30), after=st.one_of(st.none(), extreme_conversation_ids()))
def test_pages_are_the_sorted_ids(
    kind: str, ids: list[str], limit: int, after: str | None, tmp_path: Path
) -> None:
    with tempfile.TemporaryDirectory(dir=tmp_path) as place:
        store = store_factory(kind, Path(place))()
        try:
            for cid in ids:
                store.append(cid, _message())
            assert store.list_conversations() == sorted(ids)
            assert _pages(store, limit) == sorted(ids)
            page = store.list_conversations(limit=limit, after=after)
            assert page == [cid for cid in sorted(ids) if after is None or cid > after][:limit]
        finally:
            close = getattr(store, "close", None)
            if close is not None:
                close()


@pytest.mark.parametrize("kind", KINDS)
def test_bad_arguments_name_the_argument_and_the_fix(kind: str, tmp_path: Path) -> None:
    store = store_factory(kind, tmp_path)()
    with pytest.raises(tl.ValidationError, match=r"invalid limit: .*an int >= 1, not 0") as caught:
        store.list_conversations(limit=0)
    assert caught.value.errors[0].path == "limit"
    with pytest.raises(tl.ValidationError, match=r"invalid limit: .*not True"):
        store.list_conversations(limit=True)
    with pytest.raises(
        tl.ValidationError, match=r"invalid after: .*a conversation id, not ''"
    ) as caught:
        store.list_conversations(after="")
    assert caught.value.errors[0].path == "after"
    with pytest.raises(tl.ValidationError, match=r"invalid after: .*not 7"):
        store.list_conversations(after=7)  # type: ignore[arg-type]
    with pytest.raises(tl.ValidationError, match="conversation id"):
        store.conversation_info("../x")


def test_memory_store_keeps_times_of_the_first_and_last_write() -> None:
    store = MemoryStore()
    store.append("c1", _message())
    first = store.conversation_info("c1")
    assert first is not None
    assert first.created_at is not None
    assert first.updated_at is not None
    assert first.created_at.tzinfo is not None
    store.append("c1", [tl.user_message("again", id="m2")])
    later = store.conversation_info("c1")
    assert later is not None
    assert later.created_at == first.created_at
    assert later.updated_at is not None
    assert later.updated_at >= first.updated_at
    assert (later.version, later.messages, later.parent) == (2, 2, None)
    store.delete("c1")
    store.append("c1", _message())
    again = store.conversation_info("c1")
    assert again is not None
    assert again.created_at is not None
    assert again.created_at >= later.updated_at  # a deleted conversation starts afresh


def test_jsonl_store_gives_the_file_time_and_sqlite_none(tmp_path: Path) -> None:
    files = JsonlStore(tmp_path / "files")
    files.append("c1", _message())
    info = files.conversation_info("c1")
    assert info is not None
    assert info.created_at is None
    assert isinstance(info.updated_at, datetime)
    assert info.updated_at.tzinfo is not None
    with SQLiteStore(tmp_path / "a.db") as db:
        db.append("c1", _message())
        assert db.conversation_info("c1") == ConversationInfo("c1", 1, 1)


def test_async_twin_answers_as_its_store() -> None:
    async def main() -> None:
        store = AsyncMemoryStore()
        for cid in ("b", "a", "C"):
            await store.append(cid, _message())
        assert await store.list_conversations(limit=2) == ["C", "a"]
        assert await store.list_conversations(limit=2, after="a") == ["b"]
        info = await store.conversation_info("a")
        assert info is not None
        assert (info.version, info.messages) == (1, 1)
        assert await store.conversation_info("z") is None

    asyncio.run(main())


def test_sqlite_reads_a_page_off_the_primary_key(tmp_path: Path) -> None:
    from threadline.stores import sqlite

    with SQLiteStore(tmp_path / "a.db") as store:
        store.append("c1", _message())
        connection = store._db.connection()
        plan = " ".join(
            str(row[-1])
            for row in connection.execute("EXPLAIN QUERY PLAN " + sqlite._PAGE, ("", 2))
        )
    assert "USING PRIMARY KEY" in plan, plan
    assert "TEMP B-TREE" not in plan, plan  # no sort: the index is in the page's order


@pytest.mark.requires_server
def test_postgres_reads_a_page_off_the_primary_key_in_c_order(postgres_dsn: str) -> None:
    require_module("psycopg", 'pip install "threadline[postgres]"')
    import psycopg

    from tests.support import drop_postgres_tables
    from threadline.stores.postgres import PostgresStore

    prefix = new_postgres_prefix()
    try:
        with PostgresStore(postgres_dsn, table_prefix=prefix) as store:
            for cid in ("b", "a", "C", "a-b", "a.b", "a_b", "aB"):
                store.append(cid, _message())
            assert store.list_conversations() == sorted(["b", "a", "C", "a-b", "a.b", "a_b", "aB"])
            assert store.list_conversations(limit=2, after="a-b") == ["a.b", "aB"]
            sql = store._sql.page
        with psycopg.connect(postgres_dsn, autocommit=True) as connection:
            connection.execute("SET enable_seqscan = off")
            rows = connection.execute("EXPLAIN " + sql, {"after": "a", "limit": 2}).fetchall()
        plan = "\n".join(row[0] for row in rows)
        # An index whose order is the query's: no sort node (a collation mismatch needs one).
        assert "Index" in plan, plan
        assert "Sort" not in plan, plan
    finally:
        drop_postgres_tables(postgres_dsn, [prefix])
