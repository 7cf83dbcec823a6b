"""The fork checks of the store kit (``check_store``, ``check_async_store``).

What every store promises about ``fork(conversation_id, new_id, at=None)`` and
``parent(new_id)``: the branch holds the parent's first ``at`` messages (all for ``None``),
equal to them (file bytes included); ``parent`` says ``(conversation_id, at)`` for a branch
and ``None`` for any other conversation; the branch's version is one write; later writes to
either conversation leave the other as it is; a fork of a conversation that holds no message,
past its end, or onto an id in use (holding messages, or a branch) raises ``ValidationError``
and writes nothing; ``delete`` drops the parent record; and of two forks racing onto one id,
exactly one succeeds.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

from threadline.errors import ValidationError
from threadline.messages import Message
from threadline.messages import user_message
from threadline.stores.base import AsyncStore
from threadline.stores.base import Store
from threadline.testing._threads import TIMEOUT
from threadline.testing._threads import run_threads

__all__ = ["async_fork_checks", "sync_fork_checks"]

_RACERS = 4


def _messages(tag: str, count: int) -> list[Message]:
    return [user_message(f"{tag} #{i}", id=f"{tag}-{i}") for i in range(count)]


def _ids(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


def _refused(error: BaseException | None, what: str, path: str) -> None:
    assert error is not None, f"{what} was not refused"
    assert isinstance(error, ValidationError), (
        f"{what} raised {type(error).__name__}: {error}; it should raise ValidationError"
    )
    paths = [detail.path for detail in error.errors]
    assert path in paths, f"{what}: the ValidationError names {paths}, not {path!r}"


def _caught(call: Callable[[], object]) -> BaseException | None:
    try:
        call()
    except Exception as error:
        return error
    return None


async def _acaught(call: Callable[[], Awaitable[object]]) -> BaseException | None:
    try:
        await call()
    except Exception as error:
        return error
    return None


def _fork_of(sample: Callable[[str], list[Message]]) -> Callable[[Store], None]:
    def _check_fork_round_trip(store: Store) -> None:
        parent = sample("fork")
        store.append("p", parent[:3])
        store.append("p", parent[3:])
        expected = store.load("p")
        store.fork("p", "b")
        assert store.load("b") == expected, "the branch does not hold the parent's messages"
        assert store.parent("b") == ("p", len(expected)), f"parent('b') is {store.parent('b')}"

    return _check_fork_round_trip


def _check_fork(store: Store) -> None:
    store.append("p", _messages("a", 2))
    store.append("p", _messages("b", 1))
    store.fork("p", "all")
    store.fork("p", "one", at=1)
    store.fork("p", "none", at=0)
    assert _ids(store.load("all")) == ["a-0", "a-1", "b-0"], "fork(at=None) copies everything"
    assert _ids(store.load("one")) == ["a-0"], "fork(at=1) copies the first message"
    assert store.load("none") == [], "fork(at=0) copies nothing"
    for branch, at in (("all", 3), ("one", 1), ("none", 0)):
        assert store.parent(branch) == ("p", at), f"parent({branch!r}) is {store.parent(branch)}"
        assert store.version(branch) == 1, f"a fork is one write: version {store.version(branch)}"
    assert store.parent("p") is None, "a conversation that is no branch has a parent"
    assert store.parent("unknown") is None, "a conversation never written has a parent"
    assert store.list_conversations() == ["all", "one", "p"], store.list_conversations()
    store.append("p", _messages("later", 1))
    assert _ids(store.load("all")) == ["a-0", "a-1", "b-0"], "a parent's write reached a branch"
    store.append("one", _messages("edit", 1))
    assert _ids(store.load("p"))[1] == "a-1", "a write to a branch reached the parent"
    assert _ids(store.load("one")) == ["a-0", "edit-0"], "a branch took no append"
    store.fork("one", "deeper", at=2)
    assert store.parent("deeper") == ("one", 2), "a branch of a branch"


def _check_fork_refusals(store: Store) -> None:
    store.append("p", _messages("a", 2))
    store.append("taken", _messages("t", 1))
    store.fork("p", "empty", at=0)
    cases: list[tuple[str, Callable[[], object], str]] = [
        ("a fork of an unknown conversation", lambda: store.fork("no", "x"), "conversation_id"),
        ("a fork past the parent's end", lambda: store.fork("p", "x", at=3), "at"),
        ("a fork with at=-1", lambda: store.fork("p", "x", at=-1), "at"),
        ("a fork onto a conversation holding messages", lambda: store.fork("p", "taken"), "new_id"),
        ("a fork onto a branch (of no message)", lambda: store.fork("p", "empty"), "new_id"),
        ("a fork onto itself", lambda: store.fork("p", "p"), "new_id"),
    ]
    for what, call, path in cases:
        _refused(_caught(call), what, path)
    assert store.load("x") == [], "a refused fork wrote messages"
    assert store.parent("x") is None, "a refused fork recorded a parent"
    assert store.version("x") == 0, "a refused fork moved the version"
    assert _ids(store.load("taken")) == ["t-0"], "a refused fork changed the conversation"
    assert store.parent("taken") is None, "a refused fork recorded a parent"
    for bad in ("../b", ""):
        error = _caught(functools.partial(store.fork, "p", bad))
        assert isinstance(error, ValueError), f"fork onto id {bad!r} was not refused"
    store.delete("empty")
    assert store.parent("empty") is None, "delete kept the branch's parent record"
    store.fork("p", "empty", at=1)
    assert store.parent("empty") == ("p", 1), "a fork onto a deleted branch's id"


def _check_racing_forks(store: Store) -> None:
    store.append("p", _messages("a", 3))
    start = threading.Barrier(_RACERS)
    outcomes: list[BaseException | None] = []

    def fork(at: int) -> None:
        start.wait(TIMEOUT)
        outcomes.append(_caught(lambda: store.fork("p", "b", at=at)))

    run_threads(*(functools.partial(fork, at) for at in range(_RACERS)))
    _one_winner(outcomes, store.parent("b"), store.load("b"))


def _one_winner(outcomes: list[BaseException | None], parent: Any, loaded: list[Message]) -> None:
    won = [error for error in outcomes if error is None]
    assert len(won) == 1, f"{len(won)} of {_RACERS} forks onto one id succeeded"
    for error in outcomes:
        if error is not None:
            _refused(error, "a fork onto an id another fork took", "new_id")
    assert parent is not None, "the winning fork recorded no parent"
    assert parent[0] == "p", f"parent is {parent}"
    assert _ids(loaded) == [f"a-{i}" for i in range(parent[1])], "the winner's messages"


def sync_fork_checks(sample: Callable[[str], list[Message]]) -> tuple[Callable[[Store], None], ...]:
    """The blocking checks; ``sample`` makes a conversation with every part type."""
    return (_check_fork, _fork_of(sample), _check_fork_refusals, _check_racing_forks)


# ---------------------------------------------------------------------------------------------
# Async


def _afork_of(sample: Callable[[str], list[Message]]) -> Callable[[AsyncStore], Awaitable[None]]:
    async def _acheck_fork_round_trip(store: AsyncStore) -> None:
        parent = sample("fork")
        await store.append("p", parent[:3])
        await store.append("p", parent[3:])
        expected = await store.load("p")
        await store.fork("p", "b")
        assert await store.load("b") == expected, "the branch does not hold the parent's messages"
        assert await store.parent("b") == ("p", len(expected)), "parent('b')"

    return _acheck_fork_round_trip


async def _acheck_fork(store: AsyncStore) -> None:
    await store.append("p", _messages("a", 2))
    await store.append("p", _messages("b", 1))
    await store.fork("p", "all")
    await store.fork("p", "one", at=1)
    assert _ids(await store.load("one")) == ["a-0"], "fork(at=1) copies the first message"
    assert await store.parent("one") == ("p", 1), "parent('one')"
    assert await store.parent("p") is None, "a conversation that is no branch has a parent"
    assert await store.version("all") == 1, "a fork is one write"
    await store.append("p", _messages("later", 1))
    assert _ids(await store.load("all")) == ["a-0", "a-1", "b-0"], "a parent's write reached it"
    _refused(await _acaught(lambda: store.fork("no", "x")), "an unknown parent", "conversation_id")
    _refused(await _acaught(lambda: store.fork("p", "x", at=9)), "past the end", "at")
    _refused(await _acaught(lambda: store.fork("p", "all")), "onto a conversation", "new_id")
    assert await store.load("x") == [], "a refused fork wrote messages"
    assert await store.version("x") == 0, "a refused fork moved the version"
    await store.delete("all")
    assert await store.parent("all") is None, "delete kept the branch's parent record"


async def _acheck_racing_forks(store: AsyncStore) -> None:
    await store.append("p", _messages("a", 3))
    outcomes = await asyncio.gather(
        *(_acaught(functools.partial(store.fork, "p", "b", at)) for at in range(_RACERS))
    )
    _one_winner(list(outcomes), await store.parent("b"), await store.load("b"))


def async_fork_checks(
    sample: Callable[[str], list[Message]],
) -> tuple[Callable[[AsyncStore], Awaitable[None]], ...]:
    """The async checks; ``sample`` makes a conversation with every part type."""
    return (_acheck_fork, _afork_of(sample), _acheck_racing_forks)
