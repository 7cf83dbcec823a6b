"""``History.fork`` / ``afork``: a bound history branches in its store, for "edit and
regenerate"."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import threadline as tl
from threadline.stores import AsyncMemoryStore
from threadline.stores import AsyncSQLiteStore
from threadline.stores import MemoryStore
from threadline.stores import SQLiteStore


def texts(history: tl.History) -> list[str]:
    return [m.text for m in history]


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_fork_returns_a_history_bound_to_the_branch(kind: str, tmp_path: Path) -> None:
    store = MemoryStore() if kind == "memory" else SQLiteStore(tmp_path / "a.db")
    history = tl.History(max_messages=10).bind(store, "main")
    history.extend([tl.user_message("q"), tl.assistant_message("first answer")])
    branch = history.fork("retry", at=1)  # keep the question, regenerate the answer
    assert texts(branch) == ["q"]
    assert store.parent("retry") == ("main", 1)
    branch.append(tl.assistant_message("second answer"))
    history.append(tl.user_message("later, on main"))
    assert [m.text for m in store.load("retry")] == ["q", "second answer"]
    assert [m.text for m in store.load("main")] == ["q", "first answer", "later, on main"]
    assert branch._log.max_messages == 10  # the configuration comes along
    with pytest.raises(RuntimeError, match="bound already"):
        branch.bind(store, "other")


def test_fork_refusals_change_nothing() -> None:
    store = MemoryStore()
    history = tl.History().bind(store, "main")
    history.append(tl.user_message("q"))
    history.fork("b")
    with pytest.raises(tl.ValidationError, match="exists already"):
        history.fork("b")
    with pytest.raises(tl.ValidationError, match="past the end"):
        history.fork("c", at=5)
    assert store.list_conversations() == ["b", "main"]
    with pytest.raises(RuntimeError, match="not bound"):
        tl.History().fork("x")


def test_fork_needs_a_store_with_fork() -> None:
    class NoFork(MemoryStore):
        fork = None  # type: ignore[assignment]

    store: Any = NoFork()  # binding works without fork (a store typed without it too)
    history = tl.History().bind(store, "main")
    history.append(tl.user_message("q"))
    with pytest.raises(TypeError, match="has no fork"):
        history.fork("b")


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_afork_flushes_then_branches(kind: str, tmp_path: Path) -> None:
    async def run() -> None:
        store = AsyncMemoryStore() if kind == "memory" else AsyncSQLiteStore(tmp_path / "a.db")
        async with store:
            history = await tl.History().abind(store, "main")
            history.extend([tl.user_message("q"), tl.assistant_message("a")])  # queued
            branch = await history.afork("b")
            assert texts(branch) == ["q", "a"]
            assert await store.parent("b") == ("main", 2)
            branch.append(tl.user_message("more"))
            await branch.flush()
            assert [m.text for m in await store.load("main")] == ["q", "a"]
            with pytest.raises(RuntimeError, match=r"use history\.afork"):
                history.fork("c")

    asyncio.run(run())
