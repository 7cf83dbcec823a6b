"""The Postgres stores behind PgBouncer in transaction mode (``THREADLINE_PGBOUNCER_URL``, started
by ``.ci/services.sh`` in front of the test server): with ``pgbouncer=True`` every store
operation works (the store kit), ``watch`` listens on a direct ``listen_dsn``, and without one
it refuses at start, saying what to configure. Locally a missing PgBouncer skips; under
``THREADLINE_REQUIRE_ALL=1`` it fails.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from collections.abc import Iterator
from typing import Any

import pytest

import threadline as tl
from tests.support import drop_postgres_tables
from tests.support import new_postgres_prefix
from tests.support import pgbouncer_server_url
from tests.support import require_module
from threadline.testing._store_kit import check_async_store
from threadline.testing._store_kit import check_store

try:
    from threadline.stores.postgres import AsyncPostgresStore
    from threadline.stores.postgres import PostgresStore
except ImportError:  # each test reports it: skips, or fails under THREADLINE_REQUIRE_ALL=1
    pass

pytestmark = pytest.mark.requires_server

GUARD = 60.0  # seconds: against a hang only


@pytest.fixture(autouse=True)
def _driver() -> None:
    require_module("psycopg", 'pip install "threadline[postgres]"')


@pytest.fixture(scope="session")
def pgbouncer_url() -> str:
    return pgbouncer_server_url()


@pytest.fixture
def prefixes(postgres_dsn: str) -> Iterator[list[str]]:
    used: list[str] = []
    yield used
    drop_postgres_tables(postgres_dsn, used)


def factory(url: str, used: list[str], make: Callable[..., Any]) -> Callable[[], Any]:
    def build() -> Any:
        used.append(new_postgres_prefix())
        return make(url, table_prefix=used[-1], pgbouncer=True)

    return build


def test_postgres_store_keeps_the_contract_behind_pgbouncer(
    pgbouncer_url: str, prefixes: list[str]
) -> None:
    check_store(factory(pgbouncer_url, prefixes, PostgresStore))


def test_async_postgres_store_keeps_the_contract_behind_pgbouncer(
    pgbouncer_url: str, prefixes: list[str]
) -> None:
    asyncio.run(check_async_store(factory(pgbouncer_url, prefixes, AsyncPostgresStore)))


def test_many_repeated_statements_never_meet_a_missing_prepared_statement(
    pgbouncer_url: str, prefixes: list[str]
) -> None:
    # psycopg prepares a statement on its 5th run; through transaction pooling the next run
    # may land on a server connection that never saw it. Several stores, interleaved, over
    # more server connections than one client holds.
    stores = [factory(pgbouncer_url, prefixes, PostgresStore)() for _ in range(3)]
    try:
        for k in range(30):
            for store in stores:
                store.append("c", [tl.user_message(f"m{k}", id=f"m{k}")])
                assert store.version("c") == k + 1
        for store in stores:
            assert [m.text for m in store.load("c")] == [f"m{k}" for k in range(30)]
    finally:
        for store in stores:
            store.close()


def test_a_watch_without_a_direct_connection_says_what_to_configure(
    pgbouncer_url: str, prefixes: list[str]
) -> None:
    store = factory(pgbouncer_url, prefixes, AsyncPostgresStore)()
    with pytest.raises(tl.StoreError) as raised:
        store.watch("c")
    message = str(raised.value)
    assert "AsyncPostgresStore.watch" in message
    assert "PgBouncer in transaction mode" in message
    assert "listen_dsn=" in message
    asyncio.run(store.aclose())


def test_a_watch_listens_on_the_direct_listen_dsn(
    pgbouncer_url: str, postgres_dsn: str, prefixes: list[str]
) -> None:
    prefixes.append(new_postgres_prefix())

    async def main() -> list[list[str]]:
        async with AsyncPostgresStore(
            pgbouncer_url, table_prefix=prefixes[-1], pgbouncer=True, listen_dsn=postgres_dsn
        ) as store:
            await store.append("c", [tl.user_message("before", id="b")])
            seen: list[list[str]] = []
            async with store.watch("c", after_version=await store.version("c")) as watch:
                for k in range(3):
                    pending = asyncio.ensure_future(watch.__anext__())
                    while not watch._started:
                        assert not pending.done(), pending
                        await asyncio.sleep(0.01)
                    await store.append("c", [tl.user_message(f"m{k}", id=f"m{k}")])
                    batch = await asyncio.wait_for(pending, GUARD)
                    seen.append([m.text for m in batch])
            return seen

    assert asyncio.run(main()) == [["m0"], ["m1"], ["m2"]]
