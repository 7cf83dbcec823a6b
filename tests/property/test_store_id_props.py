"""Every valid conversation id supports every store operation on every store.

The id rule (``CONVERSATION_ID_PATTERN``) allows 200 characters, capitals and ``._:-``. A
JSONL file name grows with an id's capitals (the mask of their positions), and its temporary
files' names grew past 255 bytes: ``replace``, ``fork`` and ``delete`` of a 200-character id
holding many capitals failed, so the conversation could never be deleted. Here hypothesis
draws ids from the pattern's extremes (the longest, all capitals, every punctuation mark) and
runs append, load, version, list, replace, fork, parent and delete on each store: the local
ones in the quick tier, Redis and PostgreSQL in the full tier.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import example
from hypothesis import given
from hypothesis import settings

import threadline as tl
from tests.stores._helpers import store_factory
from tests.strategies import extreme_conversation_ids
from tests.support import examples
from tests.support import require_module
from threadline.stores import Store

_LONGEST = 200
_PUNCTUATION = "._:-"
_ALL_PUNCTUATION = "Z" + (_PUNCTUATION + "Q") * 39 + "A" * 4  # 200, every mark, mostly capitals


def _messages(tag: str, count: int) -> list[tl.Message]:
    return [tl.user_message(f"{tag} {i}", id=f"{tag}-{i}") for i in range(count)]


def _every_operation(store: Store, cid: str, other: str) -> None:
    for conversation in (cid, other):
        store.delete(conversation)  # from an earlier example on a shared server store
    start = store.version(cid)
    store.append(cid, _messages("a", 2))
    assert store.load(cid) == _messages("a", 2)
    assert store.version(cid) == start + 1
    store.append(cid, _messages("b", 1), expected_version=start + 1)
    assert cid in store.list_conversations()
    store.replace(cid, _messages("r", 3), expected_version=start + 2)
    assert store.load(cid) == _messages("r", 3)
    assert store.version(cid) == start + 3
    store.fork(cid, other, at=2)
    assert store.load(other) == _messages("r", 2)
    assert store.parent(other) == (cid, 2)
    store.replace(other, _messages("s", 1))
    assert store.parent(other) == (cid, 2)
    store.delete(other)
    assert store.load(other) == []
    assert store.parent(other) is None
    store.fork(cid, other, at=0)  # a branch of no message yet
    assert store.parent(other) == (cid, 0)
    store.delete(other)
    store.replace(cid, [])
    assert store.load(cid) == []
    store.append(cid, _messages("c", 1))
    store.delete(cid)
    assert store.load(cid) == []
    assert store.version(cid) > start + 4
    listed = store.list_conversations()
    assert cid not in listed
    assert other not in listed


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


KINDS = [
    "memory",
    "sqlite",
    "jsonl",
    "jsonl+blobs",
    pytest.param("redis", marks=pytest.mark.requires_server),
    pytest.param("postgres", marks=pytest.mark.requires_server),
]


@pytest.mark.parametrize("kind", KINDS)
def test_every_valid_id_supports_every_operation(kind: str, request: pytest.FixtureRequest) -> None:
    with _store(kind, request) as store:
        _examples(store)()


def _examples(store: Store) -> Callable[[], None]:
    """The property over ``store``, as a test hypothesis runs (it supplies the ids)."""

    @settings(
        max_examples=examples(40),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(extreme_conversation_ids(), extreme_conversation_ids())
    @example("A" * _LONGEST, "B" * _LONGEST)
    @example(_ALL_PUNCTUATION, _ALL_PUNCTUATION.lower())
    @example("a" * _LONGEST, "Z")
    def run(cid: str, other: str) -> None:
        if cid != other:
            _every_operation(store, cid, other)

    return run
