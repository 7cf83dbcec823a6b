"""``load_after``: what each store reads, beyond the contract kit's checks.

The law, over random writes on every store (Redis and PostgreSQL in the full tier): for every
version a caller saw, applying ``load_after(cid, version)`` to what it held then gives what
``load`` gives now, and a replace or delete since makes the answer ``replaced``; nothing else
does, except on PostgreSQL, which keeps no record of each write and may answer any change as
``replaced``. Then the stores' own limits: SQLite's record of writes (pruned after 1,000,
absent for rows an older threadline wrote), JSONL's side file, and the arguments.
"""

from __future__ import annotations

import itertools
import sqlite3
import tempfile
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import threadline as tl
from tests.stores._helpers import KINDS
from tests.stores._helpers import store_factory
from tests.support import examples
from tests.support import require_module
from threadline.stores import Appended
from threadline.stores import JsonlStore
from threadline.stores import MemoryStore
from threadline.stores import SQLiteStore
from threadline.stores import Store

_WRITES = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(0, 3)),
        st.tuples(st.just("replace"), st.integers(0, 3)),
        st.tuples(st.just("delete"), st.just(0)),
    ),
    max_size=12,
)


def _messages(tag: str, count: int) -> list[tl.Message]:
    return [tl.user_message(f"{tag} {i}", id=f"{tag}-{i}") for i in range(count)]


def _write(store: Store, cid: str, kind: str, count: int, tag: str) -> bool:
    """Make the write; whether it replaced or deleted (an append of nothing changes nothing)."""
    if kind == "append":
        store.append(cid, _messages(tag, count))
        return False
    if kind == "replace":
        store.replace(cid, _messages(tag, count))
    else:
        store.delete(cid)
    return True


@contextmanager
def _store(kind: str, request: pytest.FixtureRequest) -> Iterator[Store]:
    """One store of ``kind`` for every example of a test (server stores under the test's own
    prefix, which the fixtures clear afterwards)."""
    if kind == "redis":
        require_module("redis", 'pip install "threadline[redis]"')
        from threadline.stores.redis import RedisStore

        url = request.getfixturevalue("redis_url")
        with RedisStore(url, prefix=request.getfixturevalue("redis_prefix")) as store:
            yield store
    elif kind == "postgres":
        require_module("psycopg", 'pip install "threadline[postgres]"')
        from threadline.stores.postgres import PostgresStore

        dsn = request.getfixturevalue("postgres_dsn")
        prefix = request.getfixturevalue("postgres_prefix")
        with PostgresStore(dsn, table_prefix=prefix) as store:
            yield store
    else:
        with tempfile.TemporaryDirectory() as root:
            yield store_factory(kind, Path(root))()


_SERVERS = [
    pytest.param("redis", marks=pytest.mark.requires_server),
    pytest.param("postgres", marks=pytest.mark.requires_server),
]
_CANNOT_TELL = {"postgres"}  # keeps no record of each write: any change comes back whole


@pytest.mark.parametrize("kind", [*KINDS, *_SERVERS])
def test_load_after_from_every_version_gives_what_load_gives(
    kind: str, request: pytest.FixtureRequest
) -> None:
    with _store(kind, request) as store:
        _law(store, exact=kind not in _CANNOT_TELL)()


def _law(store: Store, *, exact: bool) -> Callable[[], None]:
    """The law over ``store``, one new conversation per example."""
    conversations = itertools.count()

    @settings(max_examples=examples(60), deadline=None)
    @given(writes=_WRITES)
    def run(writes: list[tuple[str, int]]) -> None:
        cid = f"law-{next(conversations)}"
        seen: dict[int, list[tl.Message]] = {0: []}
        reset = 0
        for number, (write, count) in enumerate(writes):
            if _write(store, cid, write, count, f"w{number}"):
                reset = store.version(cid)
            loaded, version = store.load(cid), store.version(cid)
            for start, held in seen.items():
                result = store.load_after(cid, start)
                assert result.version == version
                applied = result.messages if result.replaced else [*held, *result.messages]
                assert applied == loaded
                must = 0 < start < reset
                may = must or (not exact and 0 < start < version)
                assert must <= result.replaced <= may, (start, reset, result)
            seen[version] = loaded

    return run


@pytest.mark.parametrize("bad", [-1, True, False, 1.0, "2", None])
@pytest.mark.parametrize("kind", ["memory", "sqlite", "jsonl"])
def test_a_bad_version_is_refused_naming_the_argument(
    kind: str, bad: object, tmp_path: Path
) -> None:
    store = store_factory(kind, tmp_path)()
    with pytest.raises(tl.ValidationError, match=r"version.*int >= 0") as raised:
        store.load_after("c", bad)  # type: ignore[arg-type]
    assert raised.value.errors[0].path == "version"


def test_appended_is_a_frozen_public_type() -> None:
    result = Appended(3, [], False)
    assert tl.Appended is Appended
    with pytest.raises(AttributeError):
        result.version = 4  # type: ignore[misc]
    assert result == Appended(3)


def _writes(path: Path) -> list[tuple[str, int, int]]:
    with sqlite3.connect(path) as connection:
        return connection.execute(
            "SELECT conversation_id, version, seq FROM threadline_writes ORDER BY version"
        ).fetchall()


def test_sqlite_records_each_writes_last_seq_and_drops_what_a_replace_makes_old(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.db"
    with SQLiteStore(path) as store:
        store.append("c", _messages("a", 2))
        store.append("c", _messages("b", 3))
        assert _writes(path) == [("c", 1, 1), ("c", 2, 4)]
        store.replace("c", _messages("r", 1))
        assert _writes(path) == [("c", 3, 0)]
        store.delete("c")
        assert _writes(path) == [("c", 4, -1)]
        store.append("c", _messages("d", 1))
        assert store.load_after("c", 4) == Appended(5, _messages("d", 1))


def test_sqlite_keeps_the_last_1000_writes(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db") as store:
        for i in range(1003):
            store.append("c", [tl.user_message(str(i), id=f"m{i}")])
        assert store.load_after("c", 3).replaced, "a write no longer recorded"
        recent = store.load_after("c", 4)
        assert not recent.replaced
        assert [m.id for m in recent.messages][:1] == ["m4"]
        assert len(recent.messages) == 999


def test_sqlite_rows_an_older_threadline_wrote_come_back_whole(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SQLiteStore(path) as store:
        store.append("c", _messages("a", 2))
        store.append("c", _messages("b", 1))
    with sqlite3.connect(path) as connection:  # as a writer that kept no record left it
        connection.execute("DELETE FROM threadline_writes")
    with SQLiteStore(path) as store:
        result = store.load_after("c", 1)
        assert result.replaced
        assert result.messages == store.load("c")
        assert store.load_after("c", 0) == Appended(2, store.load("c"))


def test_jsonl_reads_only_the_lines_after_the_version(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path)
    store.append("c", _messages("a", 2))
    store.append("c", _messages("b", 1))
    store.replace("c", _messages("r", 2))  # the side file now counts from here
    store.append("c", _messages("d", 2))  # indexes the file (once per process)
    path = store.path("c")
    lines = path.read_bytes().split(b"\n")
    lines[0] = b"#" * len(lines[0])  # damage before the version asked for is never read
    path.write_bytes(b"\n".join(lines))
    assert store.load_after("c", 3) == Appended(4, _messages("d", 2))
    with pytest.raises(tl.StoreError):
        store.load_after("c", 2)


def test_memory_answers_from_its_own_record() -> None:
    store = MemoryStore()
    store.append("c", _messages("a", 1))
    store.fork("c", "f")
    store.append("f", _messages("b", 1))
    assert store.load_after("f", 1) == Appended(2, _messages("b", 1))
    assert store.load_after("f", 0) == Appended(2, [*_messages("a", 1), *_messages("b", 1)])
