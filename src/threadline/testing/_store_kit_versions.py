"""The version and conflict checks of the store kit (``check_store``, ``check_async_store``).

What every store promises about ``version`` and ``expected_version``: a conversation never
written is at version 0; each ``append`` that stores something and each ``replace`` adds
exactly 1 (a bound History relies on it), each ``delete`` moves it forward; a version never goes
back, even through a delete; an empty batch or a batch of replays leaves it as it is; a write
given a stale ``expected_version`` raises `ConflictError` (a
`StoreError`) naming the conversation and both versions, and writes nothing;
and writers racing with an expected-version retry loop lose and duplicate nothing.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Awaitable
from collections.abc import Callable

from threadline.errors import ConflictError
from threadline.errors import StoreError
from threadline.messages import Message
from threadline.messages import user_message
from threadline.stores.base import AsyncStore
from threadline.stores.base import Store
from threadline.testing._threads import TIMEOUT
from threadline.testing._threads import run_threads

__all__ = ["ASYNC_VERSION_CHECKS", "SYNC_VERSION_CHECKS"]

_WRITERS, _APPENDS = 4, 6
# Versions no conversation reaches, past a 64-bit integer: refused as any other version the
# conversation is not at, never passed on to a driver that cannot hold them.
_HUGE_VERSIONS = (2**63, 2**70)


def _messages(tag: str, count: int) -> list[Message]:
    return [user_message(f"{tag} #{i}", id=f"{tag}-{i}") for i in range(count)]


def _texts(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


def _conflicted(error: ConflictError, conversation_id: str, expected: int, actual: int) -> None:
    assert isinstance(error, StoreError), "ConflictError must be a StoreError"
    assert (error.conversation_id, error.expected, error.actual) == (
        conversation_id,
        expected,
        actual,
    ), (
        f"the ConflictError says conversation {error.conversation_id!r}, expected "
        f"{error.expected}, actual {error.actual}; it should say {conversation_id!r}, "
        f"{expected}, {actual}"
    )


def _stale(write: Callable[[], object], what: str) -> ConflictError:
    """The ``ConflictError`` of ``write``, a write given a stale ``expected_version``."""
    try:
        write()
    except ConflictError as error:
        return error
    raise AssertionError(f"{what} with a stale expected_version was not refused")


def _check_race(loaded: list[Message], version: int, landed: dict[str, int]) -> None:
    """Every writer's appends present once, in its order; the version counted each one; and
    each append that succeeded with ``expected_version=v`` (``landed[id] = v``) is message
    ``v``: only appends of one message were made, so version ``v`` held ``v`` messages."""
    ids = [m.id for m in loaded]
    assert len(ids) == _WRITERS * _APPENDS, (
        f"{_WRITERS} writers made {_WRITERS * _APPENDS} versioned appends but "
        f"{len(ids)} messages were stored"
    )
    assert len(set(ids)) == len(ids), "a versioned append was stored twice"
    for w in range(_WRITERS):
        own = [i for i in ids if i.startswith(f"w{w}-")]
        assert own == [f"w{w}-{k}" for k in range(_APPENDS)], f"writer {w}'s order: {own}"
    assert version == len(ids), f"{len(ids)} appends, but the version is {version}"
    for message_id, expected in landed.items():
        actual = ids.index(message_id)
        assert actual == expected, (
            f"{message_id!r} was appended with expected_version={expected} but stored at "
            f"position {actual}: another write got between the version check and the write"
        )


# ---------------------------------------------------------------------------------------------
# Blocking


def _check_versions(store: Store) -> None:
    assert store.version("v") == 0, "a conversation never written is not at version 0"
    store.append("v", [])
    assert store.version("v") == 0, "an empty batch moved the version"
    first = _messages("a", 2)
    store.append("v", first)
    assert store.version("v") == 1, "an append did not step the version by 1"
    store.append("v", first[:1])
    assert store.version("v") == 1, "a batch of replays (nothing stored) moved the version"
    store.append("v", _messages("b", 1))
    assert store.version("v") == 2, "an append did not step the version by 1"
    store.replace("v", _messages("c", 3))
    assert store.version("v") == 3, "a replace did not step the version by 1"
    store.delete("v")
    after_delete = store.version("v")
    assert after_delete > 3, f"a delete moved the version from 3 to {after_delete}"
    store.append("v", _messages("d", 1))
    assert store.version("v") == after_delete + 1, "an append after a delete"
    assert store.version("other") == 0, "a write to one conversation moved another's version"


def _check_expected_version(store: Store) -> None:
    store.append("e", _messages("a", 1), expected_version=0)
    store.append("e", _messages("b", 1), expected_version=1)
    stale = _stale(lambda: store.append("e", _messages("c", 1), expected_version=1), "an append")
    _conflicted(stale, "e", 1, 2)
    _stale(lambda: store.append("e", _messages("a", 1), expected_version=0), "a replay")
    stale = _stale(lambda: store.replace("e", _messages("r", 1), expected_version=0), "a replace")
    _conflicted(stale, "e", 0, 2)
    assert _texts(store.load("e")) == ["a-0", "b-0"], "a refused write wrote something"
    assert store.version("e") == 2, "a refused write moved the version"
    for huge in _HUGE_VERSIONS:  # no store holds them (a bigint column ends at 2**63 - 1)
        for what, write, batch in (
            ("an append", store.append, _messages("c", 1)),
            ("a replace", store.replace, _messages("r", 1)),
            ("replace([])", store.replace, []),
        ):
            call = functools.partial(write, "e", batch, expected_version=huge)
            _conflicted(_stale(call, f"{what} with expected_version={huge}"), "e", huge, 2)
    assert _texts(store.load("e")) == ["a-0", "b-0"], "a refused write wrote something"
    assert store.version("e") == 2, "a refused write moved the version"
    store.replace("e", _messages("r", 2), expected_version=2)
    assert _texts(store.load("e")) == ["r-0", "r-1"], "a replace with the right version"
    store.replace("e", [], expected_version=3)
    assert store.load("e") == [], "replace([]) with the right version kept messages"
    assert store.version("e") == 4, "replace([]) did not step the version by 1"


def _check_versioned_writers(store: Store) -> None:
    start = threading.Barrier(_WRITERS)
    landed: dict[str, int] = {}

    def writer(w: int) -> None:
        start.wait(TIMEOUT)
        for k in range(_APPENDS):
            while True:
                version = store.version("race")
                try:
                    message = user_message(f"w{w} {k}", id=f"w{w}-{k}")
                    store.append("race", [message], expected_version=version)
                except ConflictError:
                    continue  # another writer moved first: read the version again
                landed[message.id] = version
                break

    run_threads(*(functools.partial(writer, w) for w in range(_WRITERS)))
    _check_race(store.load("race"), store.version("race"), landed)


SYNC_VERSION_CHECKS: tuple[Callable[[Store], None], ...] = (
    _check_versions,
    _check_expected_version,
    _check_versioned_writers,
)


# ---------------------------------------------------------------------------------------------
# Async


async def _acheck_versions(store: AsyncStore) -> None:
    assert await store.version("v") == 0, "a conversation never written is not at version 0"
    await store.append("v", [])
    assert await store.version("v") == 0, "an empty batch moved the version"
    first = _messages("a", 2)
    await store.append("v", first)
    assert await store.version("v") == 1, "an append did not step the version by 1"
    await store.append("v", first[:1])
    assert await store.version("v") == 1, "a batch of replays moved the version"
    await store.replace("v", _messages("c", 3))
    assert await store.version("v") == 2, "a replace did not step the version by 1"
    await store.delete("v")
    after_delete = await store.version("v")
    assert after_delete > 2, f"a delete moved the version from 2 to {after_delete}"


async def _acheck_expected_version(store: AsyncStore) -> None:
    await store.append("e", _messages("a", 1), expected_version=0)
    for write in (store.append, store.replace):
        try:
            await write("e", _messages("c", 1), expected_version=0)
        except ConflictError as error:
            _conflicted(error, "e", 0, 1)
        else:
            raise AssertionError(f"{write.__name__} with a stale expected_version was allowed")
    for huge in _HUGE_VERSIONS:
        for write, batch in (
            (store.append, _messages("c", 1)),
            (store.replace, _messages("r", 1)),
            (store.replace, []),
        ):
            try:
                await write("e", batch, expected_version=huge)
            except ConflictError as error:
                _conflicted(error, "e", huge, 1)
            else:
                raise AssertionError(f"{write.__name__} with expected_version={huge} was allowed")
    assert _texts(await store.load("e")) == ["a-0"], "a refused write wrote something"
    assert await store.version("e") == 1, "a refused write moved the version"
    await store.replace("e", _messages("r", 1), expected_version=1)
    assert await store.version("e") == 2, "a replace with the right version"


async def _acheck_versioned_writers(store: AsyncStore) -> None:
    landed: dict[str, int] = {}

    async def writer(w: int) -> None:
        for k in range(_APPENDS):
            while True:
                version = await store.version("race")
                await asyncio.sleep(0)  # let the other tasks move in between
                try:
                    message = user_message(f"w{w} {k}", id=f"w{w}-{k}")
                    await store.append("race", [message], expected_version=version)
                except ConflictError:
                    continue
                landed[message.id] = version
                break

    await asyncio.gather(*(writer(w) for w in range(_WRITERS)))
    _check_race(await store.load("race"), await store.version("race"), landed)


ASYNC_VERSION_CHECKS: tuple[Callable[[AsyncStore], Awaitable[None]], ...] = (
    _acheck_versions,
    _acheck_expected_version,
    _acheck_versioned_writers,
)
