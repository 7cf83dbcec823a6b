"""``PostgresStore`` and ``AsyncPostgresStore`` against a real PostgreSQL server.

The shared server comes from ``THREADLINE_POSTGRES_DSN`` (``eval "$(bash .ci/services.sh)"``);
every store here gets its own table prefix, and its tables are dropped afterwards. A server
restarted or crashed under the stores is in ``tests/faults/test_restarts.py``. Locally a missing
server skips; under ``THREADLINE_REQUIRE_ALL=1`` it fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import multiprocessing
import subprocess
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pydantic
import pytest

import threadline as tl
from tests.stores._helpers import SMALL_THRESHOLD
from tests.stores._helpers import check_bad_batches
from tests.support import drop_postgres_tables
from tests.support import new_postgres_prefix
from tests.support import require_module
from threadline.stores import AsyncStore
from threadline.stores import FileBlobStore
from threadline.stores import Store
from threadline.testing._store_kit import _check_batches
from threadline.testing._store_kit import check_async_store
from threadline.testing._store_kit import check_store

try:
    import psycopg

    from threadline.stores.postgres import SCHEMA_SQL
    from threadline.stores.postgres import AsyncPostgresStore
    from threadline.stores.postgres import PostgresStore
    from threadline.stores.postgres import schema_sql
except ImportError:  # each test reports it: skips, or fails under THREADLINE_REQUIRE_ALL=1
    pass

pytestmark = pytest.mark.requires_server

HANG_GUARD = 120.0  # seconds: only against a deadlock, never a performance assertion


@pytest.fixture(autouse=True)
def _driver() -> None:
    require_module("psycopg", 'pip install "threadline[postgres]"')


def batch(writer: int, number: int, size: int) -> list[tl.Message]:
    return [
        tl.user_message(f"w{writer} b{number} m{k}", id=f"w{writer}-b{number}-m{k}")
        for k in range(size)
    ]


@pytest.fixture
def prefixes(postgres_dsn: str) -> Iterator[list[str]]:
    """Table prefixes a test used; their tables are dropped when it ends."""
    used: list[str] = []
    yield used
    drop_postgres_tables(postgres_dsn, used)


@pytest.fixture
def prefix(prefixes: list[str]) -> str:
    prefixes.append(new_postgres_prefix())
    return prefixes[-1]


def factory(
    dsn: str, used: list[str], make: Callable[..., Any], **options: Any
) -> Callable[[], Any]:
    def build() -> Any:
        used.append(new_postgres_prefix())
        return make(dsn, table_prefix=used[-1], **options)

    return build


def sessions(dsn: str, application_name: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as connection:
        row = connection.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s",
            (application_name,),
        ).fetchone()
    assert row is not None
    return int(row[0])


# ---------------------------------------------------------------------------------------------
# The contract


def test_postgres_store_keeps_the_contract(postgres_dsn: str, prefixes: list[str]) -> None:
    check_store(factory(postgres_dsn, prefixes, PostgresStore))


def test_async_postgres_store_keeps_the_contract(postgres_dsn: str, prefixes: list[str]) -> None:
    asyncio.run(check_async_store(factory(postgres_dsn, prefixes, AsyncPostgresStore)))


def test_postgres_stores_keep_the_contract_with_blobs(
    postgres_dsn: str, prefixes: list[str], tmp_path: Path
) -> None:
    blobs = FileBlobStore(tmp_path / "blobs")
    options = {"blobs": blobs, "blob_threshold": SMALL_THRESHOLD}
    check_store(factory(postgres_dsn, prefixes, PostgresStore, **options))
    asyncio.run(check_async_store(factory(postgres_dsn, prefixes, AsyncPostgresStore, **options)))
    assert any((tmp_path / "blobs").rglob("*")), "no file bytes went to the blob store"


def test_postgres_stores_satisfy_the_protocols(postgres_dsn: str) -> None:
    with PostgresStore(postgres_dsn) as store:  # no connection opened: nothing created
        assert isinstance(store, Store)
    assert isinstance(AsyncPostgresStore(postgres_dsn), AsyncStore)


# ---------------------------------------------------------------------------------------------
# Layout, schema and sharing


def test_rows_are_one_message_each_keyed_by_conversation_and_seq(
    postgres_dsn: str, prefix: str
) -> None:
    with PostgresStore(postgres_dsn, table_prefix=prefix) as store:
        store.append("c", batch(0, 0, 2))
        store.append("c", batch(0, 1, 1))
        store.append("d", batch(1, 0, 1))
    with psycopg.connect(postgres_dsn) as connection:
        rows = connection.execute(
            f"SELECT conversation_id, seq, message::jsonb ->> 'id' FROM {prefix}messages"
            " ORDER BY conversation_id, seq"
        ).fetchall()
        index = connection.execute(
            f"SELECT conversation_id, next_seq FROM {prefix}conversations ORDER BY 1"
        ).fetchall()
    assert rows == [
        ("c", 0, "w0-b0-m0"),
        ("c", 1, "w0-b0-m1"),
        ("c", 2, "w0-b1-m0"),
        ("d", 0, "w1-b0-m0"),
    ]
    assert index == [("c", 3), ("d", 1)]


def test_the_documented_ddl_is_what_the_store_creates(postgres_dsn: str, prefix: str) -> None:
    with PostgresStore(postgres_dsn, table_prefix=prefix) as store:
        store.create_schema()
    created = _columns(postgres_dsn, prefix)
    drop_postgres_tables(postgres_dsn, [prefix])
    with psycopg.connect(postgres_dsn, autocommit=True) as connection:
        connection.execute(schema_sql(prefix))
        connection.execute(schema_sql(prefix))  # IF NOT EXISTS: applying it twice is harmless
    assert _columns(postgres_dsn, prefix) == created
    assert created == {
        f"{prefix}conversations": [("conversation_id", "text", "C"), ("next_seq", "bigint", None)],
        f"{prefix}messages": [
            ("conversation_id", "text", "C"),
            ("seq", "bigint", None),
            ("message", "text", None),
            ("message_id", "text", None),
        ],
        f"{prefix}versions": [("conversation_id", "text", "C"), ("version", "bigint", None)],
        f"{prefix}parents": [
            ("conversation_id", "text", "C"),
            ("parent_id", "text", "C"),
            ("at", "bigint", None),
        ],
    }
    assert schema_sql() == SCHEMA_SQL
    assert "CREATE TABLE IF NOT EXISTS threadline_messages (" in SCHEMA_SQL


def _columns(dsn: str, prefix: str) -> dict[str, list[tuple[str, str, str | None]]]:
    with psycopg.connect(dsn) as connection:
        rows = connection.execute(
            "SELECT table_name, column_name, data_type, collation_name"
            " FROM information_schema.columns WHERE table_name LIKE %s"
            " ORDER BY table_name, ordinal_position",
            (f"{prefix}%",),
        ).fetchall()
    tables: dict[str, list[tuple[str, str, str | None]]] = {}
    for table, column, data_type, collation in rows:
        tables.setdefault(table, []).append((column, data_type, collation))
    return tables


def test_without_auto_create_missing_tables_say_how_to_create_them(
    postgres_dsn: str, prefix: str
) -> None:
    with PostgresStore(postgres_dsn, table_prefix=prefix, auto_create_schema=False) as store:
        with pytest.raises(tl.StoreError, match=r"call create_schema\(\)") as caught:
            store.append("c", batch(0, 0, 1))
        assert isinstance(caught.value.__cause__, psycopg.errors.UndefinedTable)
        store.create_schema()
        store.append("c", batch(0, 0, 1))
        assert store.load("c") == batch(0, 0, 1)


def test_tables_applied_by_hand_serve_a_store_that_creates_nothing(
    postgres_dsn: str, prefix: str
) -> None:
    with psycopg.connect(postgres_dsn, autocommit=True) as connection:
        connection.execute(schema_sql(prefix))

    async def run() -> list[tl.Message]:
        async with AsyncPostgresStore(
            postgres_dsn, table_prefix=prefix, auto_create_schema=False
        ) as store:
            await store.append("c", batch(0, 0, 2))
            return await store.load("c")

    assert asyncio.run(run()) == batch(0, 0, 2)


def test_stores_starting_together_create_the_tables_once(postgres_dsn: str, prefix: str) -> None:
    stores = [PostgresStore(postgres_dsn, table_prefix=prefix) for _ in range(8)]
    start = threading.Barrier(len(stores))
    errors: list[BaseException] = []

    def first_use(store: PostgresStore, writer: int) -> None:
        try:
            start.wait(HANG_GUARD)
            store.append("c", batch(writer, 0, 1))
        except BaseException as error:
            errors.append(error)

    threads = [
        threading.Thread(target=first_use, args=(store, w)) for w, store in enumerate(stores)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(HANG_GUARD)
    for store in stores:
        store.close()
    assert not errors, errors
    with PostgresStore(postgres_dsn, table_prefix=prefix) as store:
        assert len(store.load("c")) == len(stores)


def test_sync_and_async_stores_share_conversations(postgres_dsn: str, prefix: str) -> None:
    with PostgresStore(postgres_dsn, table_prefix=prefix) as store:
        store.append("c", batch(0, 0, 2))

        async def from_async() -> list[tl.Message]:
            async with AsyncPostgresStore(postgres_dsn, table_prefix=prefix) as astore:
                await astore.append("c", batch(1, 0, 1))
                return await astore.load("c")

        assert asyncio.run(from_async()) == [*batch(0, 0, 2), *batch(1, 0, 1)]
        assert store.load("c") == [*batch(0, 0, 2), *batch(1, 0, 1)]


def test_table_prefixes_keep_stores_apart(postgres_dsn: str, prefixes: list[str]) -> None:
    prefixes.extend([new_postgres_prefix(), new_postgres_prefix()])
    with (
        PostgresStore(postgres_dsn, table_prefix=prefixes[0]) as one,
        PostgresStore(postgres_dsn, table_prefix=prefixes[1]) as two,
    ):
        one.append("c", batch(0, 0, 1))
        assert two.load("c") == []
        assert two.list_conversations() == []
        assert one.list_conversations() == ["c"]


# ---------------------------------------------------------------------------------------------
# Connections


def test_connections_are_reused_and_bounded(postgres_dsn: str, prefix: str) -> None:
    name = f"threadline-test-{uuid.uuid4().hex[:8]}"
    options = {"application_name": name}
    with PostgresStore(
        postgres_dsn, table_prefix=prefix, max_connections=2, connect_kwargs=options
    ) as store:
        for number in range(10):
            store.append("c", batch(0, number, 1))
        assert sessions(postgres_dsn, name) == 1

        def write(writer: int) -> None:
            for number in range(10):
                store.append("c", batch(writer, number, 1))

        threads = [threading.Thread(target=write, args=(w,)) for w in range(1, 7)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(HANG_GUARD)
        assert 1 <= sessions(postgres_dsn, name) <= 2
        assert len(store.load("c")) == 70
    assert sessions(postgres_dsn, name) == 0  # close() closed them


def test_all_connections_busy_raises_after_the_timeout(postgres_dsn: str, prefix: str) -> None:
    with PostgresStore(postgres_dsn, table_prefix=prefix, max_connections=1, timeout=0.2) as store:
        store.list_conversations()
        with (
            store._pool.connection(),  # the only connection, held elsewhere
            pytest.raises(tl.StoreError, match="all 1 connections stayed busy"),
        ):
            store.list_conversations()
        assert store.list_conversations() == []


def test_a_closed_store_refuses_calls(postgres_dsn: str, prefix: str) -> None:
    store = PostgresStore(postgres_dsn, table_prefix=prefix)
    store.append("c", batch(0, 0, 1))
    store.close()
    with pytest.raises(tl.StoreError, match="is closed"):
        store.load("c")

    async def run() -> None:
        astore = AsyncPostgresStore(postgres_dsn, table_prefix=prefix)
        await astore.aclose()
        with pytest.raises(tl.StoreError, match="is closed"):
            await astore.load("c")

    asyncio.run(run())


def test_a_dropped_store_closes_its_connections_quietly(postgres_dsn: str, prefix: str) -> None:
    name = f"threadline-test-{uuid.uuid4().hex[:8]}"
    store = PostgresStore(
        postgres_dsn, table_prefix=prefix, connect_kwargs={"application_name": name}
    )
    store.append("c", batch(0, 0, 1))
    assert sessions(postgres_dsn, name) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an unclosed-connection ResourceWarning would fail here
        del store
        gc.collect()
    deadline = time.monotonic() + HANG_GUARD
    while sessions(postgres_dsn, name) != 0:
        assert time.monotonic() < deadline, "the dropped store's connection stayed open"
        time.sleep(0.05)


@pytest.mark.parametrize("where", ["connect_kwargs", "dsn"])
def test_a_watch_connection_is_named_after_the_store(
    postgres_dsn: str, prefix: str, where: str
) -> None:
    name = f"threadline-test-{uuid.uuid4().hex[:8]}"
    dsn = postgres_dsn + ("&" if "?" in postgres_dsn else "?") + f"application_name={name}"
    options: dict[str, Any] = {"application_name": name} if where == "connect_kwargs" else {}

    async def run() -> tuple[int, int]:
        async with AsyncPostgresStore(
            dsn if where == "dsn" else postgres_dsn, table_prefix=prefix, connect_kwargs=options
        ) as store:
            await store.append("c", batch(0, 0, 1))
            watch = store.watch("c")
            waiting = asyncio.ensure_future(anext(aiter(watch)))
            deadline = time.monotonic() + HANG_GUARD
            while not sessions(postgres_dsn, f"{name} watch"):  # listening by now
                assert time.monotonic() < deadline, "the watch never connected"
                await asyncio.sleep(0.02)
            counts = (sessions(postgres_dsn, name), sessions(postgres_dsn, f"{name} watch"))
            # Nothing more to wait for (an append now could land before the watch's first
            # read, which would then wait for the next one).
            waiting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await waiting
            await watch.aclose()
            return counts

    assert asyncio.run(run()) == (1, 1)


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="needs the fork start method"
)
def test_a_forked_child_opens_its_own_connections(postgres_dsn: str, prefix: str) -> None:
    store = PostgresStore(postgres_dsn, table_prefix=prefix)
    try:
        store.append("c", batch(0, 0, 2))  # the parent now holds a pooled connection
        context = multiprocessing.get_context("fork")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: fork with threads alive
            child = context.Process(target=store.append, args=("c", batch(1, 0, 2)))
            child.start()
        child.join(HANG_GUARD)
        assert child.exitcode == 0
        store.append("c", batch(0, 1, 2))  # the parent's connection still works
        assert store.load("c") == [*batch(0, 0, 2), *batch(1, 0, 2), *batch(0, 1, 2)]
    finally:
        store.close()


# ---------------------------------------------------------------------------------------------
# Arguments and errors


def test_bad_arguments_raise_value_error() -> None:
    dsn = "postgresql://u@127.0.0.1:1/db"
    for make in (PostgresStore, AsyncPostgresStore):
        with pytest.raises(ValueError, match="table_prefix 'My-Table' is not usable"):
            make(dsn, table_prefix="My-Table")
        with pytest.raises(ValueError, match="dsn is not a PostgreSQL connection string"):
            make("host=127.0.0.1 nonsense")
        with pytest.raises(ValueError, match="dsn must be a str"):
            make(b"postgresql://")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="max_connections must be an int of at least 1"):
            make(dsn, max_connections=0)
    with pytest.raises(ValueError, match="table_prefix"):
        schema_sql("x; DROP TABLE users; --")


def test_repr_hides_the_password() -> None:
    store = PostgresStore("postgresql://ada:s3cret@127.0.0.1:5432/app", table_prefix="t_")
    assert repr(store) == "PostgresStore('postgresql://ada@127.0.0.1:5432/app', table_prefix='t_')"
    assert "s3cret" not in repr(AsyncPostgresStore("host=127.0.0.1 password=s3cret dbname=app"))


def test_an_unreachable_server_raises_store_error_with_the_driver_error() -> None:
    # Port 1 on loopback: nothing listens there, so the connection is refused at once.
    with PostgresStore("postgresql://ada:pw@127.0.0.1:1/app") as store:
        for operation in (
            lambda: store.load("c"),
            lambda: store.append("c", batch(0, 0, 1)),
            lambda: store.replace("c", batch(0, 0, 1)),
            lambda: store.delete("c"),
            store.list_conversations,
            store.create_schema,
        ):
            with pytest.raises(tl.StoreError, match="PostgresStore") as caught:
                operation()
            assert isinstance(caught.value.__cause__, psycopg.OperationalError)
            assert "pw" not in str(caught.value).replace("could not", "")

    async def run() -> None:
        async with AsyncPostgresStore("postgresql://127.0.0.1:1/app") as store:
            with pytest.raises(tl.StoreError, match="could not append") as caught:
                await store.append("c", batch(0, 0, 1))
            assert isinstance(caught.value.__cause__, psycopg.OperationalError)

    asyncio.run(run())


def test_a_corrupt_row_raises_store_error(postgres_dsn: str, prefix: str) -> None:
    with PostgresStore(postgres_dsn, table_prefix=prefix) as store:
        store.append("c", batch(0, 0, 2))
        with psycopg.connect(postgres_dsn, autocommit=True) as connection:
            connection.execute(
                f'UPDATE {prefix}messages SET message = \'{{"role": "us\' WHERE seq = 1'
            )
        with pytest.raises(tl.StoreError, match="could not load conversation 'c'") as caught:
            store.load("c")
        assert isinstance(caught.value.__cause__, pydantic.ValidationError)


def test_a_missing_driver_gives_an_install_hint() -> None:
    code = (
        "import sys\n"
        "sys.modules['psycopg'] = None\n"
        "import threadline.stores\n"
        "try:\n"
        "    import threadline.stores.postgres\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert 'pip install "threadline[postgres]"' in result.stdout, result.stdout + result.stderr


def test_a_watch_started_behind_says_what_it_cannot_tell(postgres_dsn: str, prefix: str) -> None:
    with PostgresStore(postgres_dsn, table_prefix=prefix) as store:
        for text in ("a", "b"):
            store.append("c", [tl.user_message(text)])

    async def watch() -> tl.ConversationReplacedError:
        async with (
            AsyncPostgresStore(postgres_dsn, table_prefix=prefix) as store,
            store.watch("c", after_version=1) as watching,
        ):
            with pytest.raises(tl.ConversationReplacedError) as raised:
                await asyncio.wait_for(watching.__anext__(), 60)
        return raised.value

    error = asyncio.run(watch())
    assert [m.text for m in error.messages] == ["a", "b"]
    assert "replaced or deleted" not in str(error)
    assert "keeps no log of its writes" in str(error)


# ---------------------------------------------------------------------------------------------
# Writers in several processes


def append_batches(dsn: str, prefix: str, writer: int, batches: int, size: int, start: Any) -> None:
    """A writer process: waits for the others, then appends its batches (creating the tables
    if it is first: the writers race for that too)."""
    with PostgresStore(dsn, table_prefix=prefix) as store:
        start.wait(HANG_GUARD)
        for number in range(batches):
            store.append("shared", batch(writer, number, size))


def test_writer_processes_lose_nothing_and_never_interleave(postgres_dsn: str, prefix: str) -> None:
    context = multiprocessing.get_context("spawn")
    writers, batches, size = 4, 25, 3
    start = context.Event()
    processes = [
        context.Process(target=append_batches, args=(postgres_dsn, prefix, w, batches, size, start))
        for w in range(writers)
    ]
    for process in processes:
        process.start()
    start.set()
    for process in processes:
        process.join(HANG_GUARD)
    assert [p.exitcode for p in processes] == [0] * writers
    with PostgresStore(postgres_dsn, table_prefix=prefix) as store:
        _check_batches(store.load("shared"), writers, batches, size)
        assert store.list_conversations() == ["shared"]


# ---------------------------------------------------------------------------------------------
# Message ids


def test_tables_an_older_threadline_created_get_message_ids(postgres_dsn: str, prefix: str) -> None:
    old = [tl.user_message(f"old {i}", id=f"old{i}") for i in range(2)]
    with psycopg.connect(postgres_dsn, autocommit=True) as connection:  # the earlier layout
        connection.execute(
            f'CREATE TABLE {prefix}conversations (conversation_id text COLLATE "C" PRIMARY KEY,'
            " next_seq bigint NOT NULL)"
        )
        connection.execute(
            f'CREATE TABLE {prefix}messages (conversation_id text COLLATE "C" NOT NULL,'
            " seq bigint NOT NULL, message text NOT NULL, PRIMARY KEY (conversation_id, seq))"
        )
        connection.execute(f"INSERT INTO {prefix}conversations VALUES ('c', 2)")
        for seq, message in enumerate(old):
            connection.execute(
                f"INSERT INTO {prefix}messages VALUES ('c', %s, %s)",
                (seq, message.model_dump_json()),
            )
    new = [tl.user_message(f"new {i}", id=f"new{i}") for i in range(2)]
    with PostgresStore(postgres_dsn, table_prefix=prefix) as store:
        store.append("c", new)
        store.append("c", new)  # sent again
        assert store.load("c") == [*old, *new]
        with pytest.raises(tl.ValidationError, match="new1"):
            store.append("c", [tl.user_message("other", id="new1")])
        assert store.load("c") == [*old, *new]


def test_concurrent_replays_from_threads_store_once(postgres_dsn: str, prefix: str) -> None:
    batches = [[tl.user_message(f"{b}.{k}", id=f"b{b}-{k}") for k in range(3)] for b in range(6)]
    with PostgresStore(postgres_dsn, table_prefix=prefix, max_connections=4) as store:

        def send() -> None:
            for batch in batches:
                store.append("c", batch)

        threads = [threading.Thread(target=send) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert store.load("c") == [m for batch in batches for m in batch]


# ---------------------------------------------------------------------------------------------
# Bad input


def test_bad_batches_are_reported_as_every_entry_point_reports_them(
    postgres_dsn: str, prefix: str
) -> None:
    async def write_async(messages: Any) -> None:
        async with AsyncPostgresStore(postgres_dsn, table_prefix=prefix) as store:
            await store.append("c", messages)

    with PostgresStore(postgres_dsn, table_prefix=prefix) as store:
        check_bad_batches(store, write_async)
