"""SQLiteStore: the documented layout, WAL, persistence, errors, and thread connections."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

import threadline as tl
from threadline.stores import SQLiteStore


def msgs(tag: str, count: int) -> list[tl.Message]:
    return [tl.user_message(f"{tag} {i}", id=f"{tag}{i}") for i in range(count)]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "threads.db"


def rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as connection:
        return connection.execute(sql).fetchall()


def test_the_documented_layout(path: Path) -> None:
    with SQLiteStore(path) as store:
        store.append("c", msgs("a", 2))
        store.append("c", msgs("b", 1))
        store.append("d", msgs("x", 1))
    columns = rows(path, "SELECT name, type, pk FROM pragma_table_info('threadline_messages')")
    assert columns == [
        ("conversation_id", "TEXT", 1),
        ("seq", "INTEGER", 2),
        ("message", "TEXT", 0),
        ("message_id", "TEXT", 0),
    ]
    indexes = rows(path, "SELECT name FROM pragma_index_list('threadline_messages') ORDER BY 1")
    assert ("threadline_messages_by_id",) in indexes
    stored = rows(
        path,
        "SELECT conversation_id, seq, message, message_id FROM threadline_messages ORDER BY 1, 2",
    )
    expected = [
        ("c", i, m.model_dump_json(), m.id) for i, m in enumerate(msgs("a", 2) + msgs("b", 1))
    ]
    (x,) = msgs("x", 1)
    assert stored == [*expected, ("d", 0, x.model_dump_json(), x.id)]
    assert rows(path, "SELECT * FROM threadline_conversations") == [("c",), ("d",)]
    assert rows(path, "SELECT * FROM threadline_meta") == [("schema_version", "1")]
    assert rows(path, "PRAGMA journal_mode") == [("wal",)]


def test_rows_can_be_queried_as_json(path: Path) -> None:
    with SQLiteStore(path) as store:
        store.append("c", [tl.user_message("hello", id="m1")])
    assert rows(path, "SELECT json_extract(message, '$.parts[0].text') FROM threadline_messages")
    assert rows(path, "SELECT json_extract(message, '$.id') FROM threadline_messages") == [("m1",)]


def test_replace_renumbers_and_delete_removes_every_row(path: Path) -> None:
    with SQLiteStore(path) as store:
        store.append("c", msgs("a", 3))
        store.replace("c", msgs("r", 2))
        assert rows(path, "SELECT seq FROM threadline_messages") == [(0,), (1,)]
        store.append("c", msgs("b", 1))
        assert rows(path, "SELECT max(seq) FROM threadline_messages") == [(2,)]
        store.delete("c")
    assert rows(path, "SELECT count(*) FROM threadline_messages") == [(0,)]
    assert rows(path, "SELECT count(*) FROM threadline_conversations") == [(0,)]


def test_another_store_on_the_same_file_sees_everything(path: Path) -> None:
    with SQLiteStore(path) as first:
        first.append("c", msgs("a", 3))
        with SQLiteStore(path) as second:
            second.append("c", msgs("b", 1))
            assert first.load("c") == second.load("c") == msgs("a", 3) + msgs("b", 1)


def test_tables_can_share_an_application_database(path: Path) -> None:
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        connection.execute("INSERT INTO users (name) VALUES ('ada')")
    with SQLiteStore(path) as store:
        store.append("c", msgs("a", 1))
        assert store.load("c") == msgs("a", 1)
    assert rows(path, "SELECT name FROM users") == [("ada",)]


def test_each_thread_gets_its_own_connection(path: Path) -> None:
    store = SQLiteStore(path)
    seen: list[sqlite3.Connection] = []

    def work() -> None:
        store.append("c", msgs("t", 1))
        seen.append(store._db.connection())

    threads = [threading.Thread(target=work) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len({id(connection) for connection in seen}) == 3
    store.close()


def test_closed_store_raises(path: Path) -> None:
    store = SQLiteStore(path)
    store.append("c", msgs("a", 1))
    store.close()
    with pytest.raises(tl.StoreError, match="is closed"):
        store.load("c")


def test_memory_paths_are_refused() -> None:
    for bad in (":memory:", ""):
        with pytest.raises(ValueError, match="MemoryStore"):
            SQLiteStore(bad)


def test_driver_errors_become_store_errors_with_the_cause(path: Path) -> None:
    path.write_bytes(b"this is not an SQLite database, just text " * 100)
    store = SQLiteStore(path)
    with pytest.raises(tl.StoreError, match=r"could not append to conversation 'c'") as caught:
        store.append("c", msgs("a", 1))
    assert isinstance(caught.value.__cause__, sqlite3.DatabaseError)
    with pytest.raises(tl.StoreError, match="could not load") as caught:
        store.load("c")
    assert isinstance(caught.value.__cause__, sqlite3.DatabaseError)


def test_a_missing_directory_is_a_store_error(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "no" / "such" / "dir.db")
    with pytest.raises(tl.StoreError, match="could not list") as caught:
        store.list_conversations()
    assert isinstance(caught.value.__cause__, sqlite3.OperationalError)


def test_a_newer_schema_is_refused_not_misread(path: Path) -> None:
    SQLiteStore(path).list_conversations()
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE threadline_meta SET value = '2' WHERE key = 'schema_version'")
    store = SQLiteStore(path)
    for _ in range(2):  # and again: a refused file stays refused
        with pytest.raises(tl.StoreError, match=r"schema version is '2'.*upgrade threadline"):
            store.load("c")


def test_a_row_that_is_not_a_message_is_a_store_error(path: Path) -> None:
    with SQLiteStore(path) as store:
        store.append("c", msgs("a", 1))
    with sqlite3.connect(path) as connection:
        connection.execute(
            "INSERT INTO threadline_messages VALUES ('c', 1, '{\"role\": \"wizard\"}', 'w')"
        )
    with SQLiteStore(path) as store, pytest.raises(tl.StoreError, match="could not load") as e:
        store.load("c")
    assert isinstance(e.value.__cause__, ValueError)


def test_a_failed_transaction_appends_nothing(path: Path) -> None:
    with SQLiteStore(path) as store:
        store.append("c", msgs("a", 1))
        with sqlite3.connect(path) as connection:  # fail on the batch's second row
            connection.execute(
                "CREATE TRIGGER fail BEFORE INSERT ON threadline_messages"
                " WHEN NEW.message LIKE '%\"b1\"%' BEGIN SELECT RAISE(ABORT, 'disk full'); END"
            )
        with pytest.raises(tl.StoreError, match=r"could not append.*disk full") as caught:
            store.append("c", msgs("b", 3))
        assert isinstance(caught.value.__cause__, sqlite3.IntegrityError)
        assert store.load("c") == msgs("a", 1)
        with sqlite3.connect(path) as connection:
            connection.execute("DROP TRIGGER fail")
        store.append("c", msgs("b", 3))  # the failed batch left no lock and no rows behind
        assert store.load("c") == msgs("a", 1) + msgs("b", 3)


def test_a_file_an_older_threadline_wrote_gets_message_ids(path: Path) -> None:
    old = msgs("a", 3)
    with sqlite3.connect(path) as connection:  # the layout before message_id existed
        connection.executescript(
            "CREATE TABLE threadline_meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)"
            " WITHOUT ROWID;"
            "INSERT INTO threadline_meta VALUES ('schema_version', '1');"
            "CREATE TABLE threadline_messages (conversation_id TEXT NOT NULL,"
            " seq INTEGER NOT NULL, message TEXT NOT NULL, PRIMARY KEY (conversation_id, seq));"
            "CREATE TABLE threadline_conversations (conversation_id TEXT PRIMARY KEY NOT NULL)"
            " WITHOUT ROWID;"
            "INSERT INTO threadline_conversations VALUES ('c');"
        )
        connection.executemany(
            "INSERT INTO threadline_messages VALUES ('c', ?, ?)",
            [(i, m.model_dump_json()) for i, m in enumerate(old)],
        )
    with SQLiteStore(path) as store:
        store.append("c", [*old, *msgs("b", 1)])  # the old messages are recognised
        assert store.load("c") == [*old, *msgs("b", 1)]
        with pytest.raises(tl.ValidationError, match="a0"):
            store.append("c", [tl.user_message("not a0", id="a0")])
    assert rows(path, "SELECT message_id FROM threadline_messages ORDER BY seq") == [
        ("a0",),
        ("a1",),
        ("a2",),
        ("b0",),
    ]


def test_a_long_batch_sent_again_is_looked_up_in_chunks(path: Path) -> None:
    many = msgs("m", 1_203)
    with SQLiteStore(path) as store:
        store.append("c", many[:700])
        store.append("c", many)
        assert store.load("c") == many


def test_opening_an_existing_database_takes_no_write_lock(path: Path) -> None:
    # A process opening the store while another holds the write lock reads at once: the
    # schema is checked with one read, not created in a write transaction each time.
    with SQLiteStore(path) as first:
        first.append("c", [tl.user_message("hi")])
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        with SQLiteStore(path, timeout=1.0) as second:  # the writer holds its lock throughout
            assert [m.text for m in second.load("c")] == ["hi"]
            assert [m.text for m in tl.History().bind(second, "c")] == ["hi"]
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_a_database_missing_one_table_is_completed_not_trusted(path: Path) -> None:
    with SQLiteStore(path) as first:
        first.append("c", [tl.user_message("hi")])
    with sqlite3.connect(path) as connection:
        connection.execute("DROP TABLE threadline_parents")
    with SQLiteStore(path) as second:
        assert [m.text for m in second.load("c")] == ["hi"]
        assert second.parent("c") is None  # the table is back
