"""A bound history and its store agree even when writes are sent twice.

Stores keep message ids unique within a conversation, so a write sent again after its reply
was lost (a cancelled ``flush``, a blocking append whose connection dropped after the commit)
stores nothing twice. A bound history keeps the same rule up front: a message whose id the
conversation already holds is refused before anything is written.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import threadline as tl
from tests.stores._helpers import AsyncLostReply
from tests.stores._helpers import LostReply
from tests.stores._helpers import ThreadedAsyncStore
from threadline.history import History
from threadline.stores import JsonlStore
from threadline.stores import MemoryStore
from threadline.stores import SQLiteStore


def make(n: int, prefix: str = "m") -> list[tl.Message]:
    return [tl.user_message(f"text {i}", id=f"{prefix}{i}") for i in range(n)]


@pytest.fixture(params=["memory", "sqlite", "jsonl"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "memory":
        yield MemoryStore()
    elif request.param == "sqlite":
        with SQLiteStore(tmp_path / "threadline.db") as sqlite:
            yield sqlite
    else:
        yield JsonlStore(tmp_path / "jsonl")


def test_a_cancelled_flush_sent_again_stores_each_message_once(store: Any) -> None:
    messages = make(30)

    async def main() -> History:
        flaky = AsyncLostReply(ThreadedAsyncStore(store))
        history = await History().abind(flaky, "c")
        for index, message in enumerate(messages):
            history.append(message)
            flaky.lose = index % 3 != 2  # two lost replies, then one that arrives
            with contextlib.suppress(asyncio.CancelledError):
                await history.flush()
        flaky.lose = False
        await history.flush()
        return history

    history = asyncio.run(main())
    assert history.pending_writes == 0
    assert store.load("c") == messages == list(history)


def test_a_blocking_append_sent_again_stores_it_once(store: Any) -> None:
    flaky = LostReply(store)
    history = History().bind(flaky, "c")
    history.append(make(1, "a")[0])
    flaky.lose = True
    with pytest.raises(tl.StoreError):
        history.extend(make(3))  # stored, but the caller is told it failed...
    assert [m.id for m in history] == ["a0"]  # ...so the history did not take it
    flaky.lose = False
    history.extend(make(3))  # the retry
    assert store.load("c") == [*make(1, "a"), *make(3)] == list(history)


def test_a_bound_history_refuses_an_id_its_conversation_holds(store: Any) -> None:
    history = History().bind(store, "c")
    history.extend(make(3))
    version = history.version
    attempt: Callable[[], object]
    for attempt in (
        lambda: history.append(tl.user_message("again", id="m1")),
        lambda: history.append(make(3)[1]),  # the same message again
        lambda: history.extend([tl.user_message("new", id="n1"), tl.user_message("x", id="m0")]),
        lambda: history.extend([tl.user_message("a", id="n1"), tl.user_message("b", id="n1")]),
        lambda: history.restore([tl.user_message("a", id="n1"), tl.user_message("b", id="n1")]),
    ):
        with pytest.raises(tl.ValidationError, match="already the id of a message") as caught:
            attempt()
        assert caught.value.errors[0].path.endswith(".id")
    assert history.version == version
    assert list(history) == make(3) == store.load("c")


def test_ids_free_again_after_a_reset_or_restore(store: Any) -> None:
    history = History().bind(store, "c")
    history.extend(make(3))
    history.restore(make(1))
    history.append(tl.user_message("m1 again", id="m1"))
    history.reset()
    history.extend(make(2))
    assert store.load("c") == make(2) == list(history)


def test_an_async_bound_history_refuses_a_taken_id_when_appending() -> None:
    async def main() -> History:
        history = await History().abind(ThreadedAsyncStore(MemoryStore()), "c")
        history.extend(make(2))
        with pytest.raises(tl.ValidationError, match="already the id"):
            history.append(tl.user_message("other", id="m0"))
        assert history.pending_writes == 1
        await history.flush()
        return history

    assert list(asyncio.run(main())) == make(2)


def test_the_window_does_not_free_an_id(store: Any) -> None:
    history = History(max_messages=2).bind(store, "c")
    history.extend(make(5))
    assert [m.id for m in history] == ["m3", "m4"]
    with pytest.raises(tl.ValidationError, match="already the id"):
        history.append(tl.user_message("trimmed, but stored", id="m0"))
    assert store.load("c") == make(5)


def test_binding_a_history_that_repeats_an_id_is_refused(store: Any) -> None:
    message = make(1)[0]
    history = History([message, message])
    with pytest.raises(tl.ValidationError, match="already the id"):
        history.bind(store, "c")
    history.append(tl.user_message("still unbound"))  # not bound: ids need not be unique
    assert store.load("c") == []


def test_an_unbound_history_still_takes_repeated_ids() -> None:
    message = make(1)[0]
    history = History([message])
    history.append(message)
    assert len(history) == 2
