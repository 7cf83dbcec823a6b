"""The helpers the stores share (issue 20): the fork prologue, the version-argument check, and
``with`` / ``async with`` from one mixin each."""

from __future__ import annotations

import asyncio

import pytest

import threadline as tl
from threadline.messages import Message
from threadline.stores._closing import AsyncClosing
from threadline.stores._closing import Closing
from threadline.stores._watch import check_after_version
from threadline.stores.base import check_expected_version
from threadline.stores.base import check_version_argument
from threadline.stores.forks import afork_source
from threadline.stores.forks import fork_source

PARENT = [tl.user_message("a", id="m1"), tl.assistant_message("b", id="m2")]


def _never_loads(conversation_id: str) -> list[Message]:
    raise AssertionError("fork arguments are checked before the parent is read")


def test_fork_source_checks_loads_once_and_cuts_the_branch() -> None:
    loaded: list[str] = []

    def load(conversation_id: str) -> list[Message]:
        loaded.append(conversation_id)
        return list(PARENT)

    assert fork_source(load, "p", "b", 1, "S.fork") == (PARENT[:1], 1)
    assert fork_source(load, "p", "b", None, "S.fork") == (PARENT, 2)
    assert loaded == ["p", "p"]
    with pytest.raises(tl.ValidationError, match=r"S\.fork: new_id is the conversation"):
        fork_source(_never_loads, "p", "p", None, "S.fork")
    with pytest.raises(tl.ValidationError, match="at=3 is past the end"):
        fork_source(load, "p", "b", 3, "S.fork")


def test_afork_source_awaits_the_load() -> None:
    async def load(conversation_id: str) -> list[Message]:
        return list(PARENT)

    assert asyncio.run(afork_source(load, "p", "b", 2, "A.fork")) == (PARENT, 2)

    async def empty(conversation_id: str) -> list[Message]:
        return []

    with pytest.raises(tl.ValidationError, match="holds no message"):
        asyncio.run(afork_source(empty, "p", "b", None, "A.fork"))


@pytest.mark.parametrize("value", [None, 0, 7])
def test_a_version_argument_is_none_or_a_count(value: int | None) -> None:
    assert check_version_argument(value, "expected_version", "S.append") == value
    assert check_expected_version(value, "S.append") == value
    assert check_after_version(value, "S.watch") == value


@pytest.mark.parametrize("value", [-1, True, 1.0, "1"])
def test_each_version_argument_says_what_it_takes(value: object) -> None:
    with pytest.raises(tl.ValidationError) as expected:
        check_expected_version(value, "S.append")
    assert expected.value.errors[0].path == "expected_version"
    assert str(expected.value) == (
        "invalid expected_version: S.append takes None or an int >= 0 (the version() the "
        f"caller last saw), not {value!r}"
    )
    with pytest.raises(tl.ValidationError) as after:
        check_after_version(value, "S.watch")
    assert after.value.errors[0].path == "after_version"
    assert str(after.value) == (
        "invalid after_version: S.watch takes None (from now) or an int >= 0 (a version() the "
        f"caller has seen), not {value!r}"
    )


def test_closing_mixins_close_at_the_end_of_the_block() -> None:
    events: list[str] = []

    class Sync(Closing):
        def close(self) -> None:
            events.append("close")

    class Async(AsyncClosing):
        async def aclose(self) -> None:
            events.append("aclose")

    store = Sync()
    with store as entered:
        assert entered is store

    async def use() -> None:
        store = Async()
        async with store as entered:
            assert entered is store

    asyncio.run(use())
    assert events == ["close", "aclose"]
