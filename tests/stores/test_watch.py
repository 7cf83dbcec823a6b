"""``watch`` on the stores that poll (memory, JSONL, SQLite): every append after the watcher's
version exactly once, in order; a replace or delete raises ``ConversationReplacedError`` with
the whole conversation, and the watch goes on from there."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import threadline as tl
from tests.stores._helpers import store_factory
from threadline.stores import Watch

KINDS = ("memory", "sqlite", "jsonl", "jsonl+blobs")
GUARD = 30.0  # seconds: against a hang only


@pytest.fixture(params=KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    return store_factory(request.param, tmp_path)()


def texts(batch: list[tl.Message]) -> list[str]:
    return [message.text for message in batch]


async def take(watch: Watch, count: int) -> list[list[str]]:
    """Batches from ``watch`` until they hold ``count`` messages."""
    batches: list[list[str]] = []
    while sum(map(len, batches)) < count:
        batches.append(texts(await asyncio.wait_for(watch.__anext__(), GUARD)))
    return batches


def test_a_watch_yields_each_later_append_once_in_order(store: Any) -> None:
    store.append("c", [tl.user_message("before")])

    async def main() -> list[list[str]]:
        watch = store.watch("c", after_version=store.version("c"), poll_interval=0.01)
        seen: list[list[str]] = []
        for index in range(5):
            store.append("c", [tl.user_message(f"m{index}a"), tl.user_message(f"m{index}b")])
            seen.extend(await take(watch, 2))
        assert watch.version == store.version("c")
        await watch.aclose()
        return seen

    seen = asyncio.run(main())
    assert [m for batch in seen for m in batch] == [
        text for index in range(5) for text in (f"m{index}a", f"m{index}b")
    ]


def test_writes_between_polls_come_once(store: Any) -> None:
    async def main() -> list[str]:
        watch = store.watch("c", poll_interval=0.05)
        first = asyncio.ensure_future(watch.__anext__())
        await asyncio.sleep(0.1)  # the watch has read its start
        for index in range(20):
            store.append("c", [tl.user_message(f"m{index}")])
        got = texts(await first)
        while len(got) < 20:
            got += texts(await watch.__anext__())
        await watch.aclose()
        return got

    assert asyncio.run(main()) == [f"m{index}" for index in range(20)]


def test_a_replace_raises_with_the_whole_conversation_then_goes_on(store: Any) -> None:
    store.append("c", [tl.user_message("a")])

    async def main() -> None:
        watch = store.watch("c", after_version=store.version("c"), poll_interval=0.01)
        store.replace("c", [tl.user_message("x"), tl.user_message("y")])
        with pytest.raises(tl.ConversationReplacedError) as raised:
            await watch.__anext__()
        assert texts(raised.value.messages) == ["x", "y"]
        assert raised.value.actual == store.version("c") == watch.version
        assert isinstance(raised.value, tl.ConflictError)
        store.append("c", [tl.user_message("z")])
        assert texts(await watch.__anext__()) == ["z"]
        store.delete("c")
        with pytest.raises(tl.ConversationReplacedError) as raised:
            await watch.__anext__()
        assert raised.value.messages == []
        await watch.aclose()
        with pytest.raises(StopAsyncIteration):
            await watch.__anext__()

    asyncio.run(main())


def test_a_watch_started_behind_says_so(store: Any) -> None:
    store.append("c", [tl.user_message("a")])
    store.append("c", [tl.user_message("b")])

    async def main() -> None:
        watch = store.watch("c", after_version=1, poll_interval=0.01)
        with pytest.raises(tl.ConversationReplacedError) as raised:
            await watch.__anext__()
        assert texts(raised.value.messages) == ["a", "b"]
        assert watch.version == 2
        # Nothing was replaced: the error says what it cannot tell, and why.
        assert "replaced or deleted" not in str(raised.value)
        assert "keeps no log of its writes" in str(raised.value)
        await watch.aclose()

    asyncio.run(main())


def test_bad_arguments_are_refused(store: Any) -> None:
    with pytest.raises(tl.ValidationError, match="after_version"):
        store.watch("c", after_version=-1)
    with pytest.raises(tl.ValidationError, match="conversation id"):
        store.watch("../x")
    with pytest.raises(ValueError, match="poll_interval"):
        store.watch("c", poll_interval=0)
