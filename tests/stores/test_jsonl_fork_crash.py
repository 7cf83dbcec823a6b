"""A ``JsonlStore.fork`` that crashes at any instant leaves no branch or the whole branch.

A fork killed mid-way (2 of 12 SIGKILLs) left an empty branch file and a parent record that
claimed 1,500 messages: the id read as a branch of nothing and could never be forked onto
again, and temporary files piled up. Here a crash is simulated at every file-system write a
fork makes (each later write fails too, so no cleanup runs, as after SIGKILL); then the real
thing, a forking process killed in a loop.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import shutil
import sys
import time
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import threadline as tl
from tests.stores._workers import fork_source_messages
from tests.stores._workers import fork_until_killed
from threadline.stores import JsonlStore

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and flock")

HANG_GUARD = 120.0  # seconds: only against a hang, never a performance assertion
_WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


class Crash(BaseException):
    """The process died here (a ``BaseException``: no ``except Exception`` handles it)."""


@contextmanager
def crash_at(step: int) -> Iterator[list[int]]:
    """Make the ``step``-th file-system write (0-based) and every write after it raise
    `Crash`: the disk keeps what was written before, and no cleanup reaches it. Yields a list
    holding the number of writes made."""
    made = [0]
    originals: dict[str, Callable[..., Any]] = {}

    def wrap(name: str) -> None:
        original = originals[name] = getattr(os, name)

        def write(*args: Any, **kwargs: Any) -> Any:
            if name == "open" and not (args[1] if len(args) > 1 else kwargs["flags"]) & _WRITING:
                return original(*args, **kwargs)  # a read changes nothing
            if made[0] >= step:
                raise Crash(f"crashed at write {step} ({name})")
            made[0] += 1
            return original(*args, **kwargs)

        setattr(os, name, write)

    for name in ("open", "write", "pwrite", "fsync", "replace", "rename", "unlink", "ftruncate"):
        wrap(name)
    try:
        yield made
    finally:
        for name, original in originals.items():
            setattr(os, name, original)


def check_fork_or_nothing(directory: Path, source: list[tl.Message], at: int | None) -> bool:
    """After a crash: ``"b"`` is no branch or the whole branch; a fork onto it then works (or,
    when it is whole, a delete and a fork), leaving no temporary file. True when it was whole."""
    store = JsonlStore(directory)  # a new process's view: nothing cached
    want = source if at is None else source[:at]
    point = len(source) if at is None else at
    loaded, parent = store.load("b"), store.parent("b")
    whole = parent is not None
    if whole:
        assert (loaded, parent) == (want, ("p", point)), (len(loaded), parent)
        assert "b" in store.list_conversations() or not want
        store.replace("b", [*want, tl.user_message("edited", id="edited")])
        assert store.parent("b") == ("p", point), "a replace lost the record of a whole fork"
        store.delete("b")
    else:
        assert loaded == []
        assert "b" not in store.list_conversations()
    assert store.load("p") == source  # the source is untouched
    store.fork("p", "b", at=at)
    assert store.load("b") == want
    assert store.parent("b") == ("p", point)
    assert store.version("b") > 0
    left = sorted(name for name in os.listdir(directory) if name.endswith(".tmp"))
    assert not left, left
    return whole


@pytest.mark.parametrize("at", [None, 3, 0])
def test_a_fork_crashed_at_any_write_leaves_no_branch_or_the_whole_branch(
    tmp_path: Path, at: int | None
) -> None:
    base = tmp_path / "base"
    source = fork_source_messages(40)
    JsonlStore(base).append("p", source)
    outcomes: list[bool] = []
    step = 0
    while True:
        directory = tmp_path / f"crash-{step}"
        shutil.copytree(base, directory)
        store = JsonlStore(directory)
        with crash_at(step) as made:
            try:
                store.fork("p", "b", at=at)
            except Crash:
                crashed = True
            else:
                crashed = False
        if crashed:
            outcomes.append(check_fork_or_nothing(directory, source, at))
        else:
            assert made[0] == step, "the fork finished without reaching the crash"
            break
        step += 1
    assert step >= 4, f"only {step} writes: the crash points are not being found"
    assert not outcomes[0], "a crash at the first write left a branch"


def test_a_stale_record_of_a_crashed_fork_never_names_a_later_file(tmp_path: Path) -> None:
    # The crashed fork's temporary file is reused by the next write; whatever inode it gets,
    # a replace of the id must not turn the dead fork's record into a parent.
    source = fork_source_messages(5)
    for step in range(1, 12):
        directory = tmp_path / f"crash-{step}"
        store = JsonlStore(directory)
        store.append("p", source)
        with crash_at(step), pytest.raises(Crash):
            store.fork("p", "b")
        after = JsonlStore(directory)
        if after.parent("b") is not None:
            continue  # the branch was whole
        after.replace("b", source[:1])
        after.replace("b", source[:2])
        assert after.parent("b") is None
        assert after.load("b") == source[:2]


@pytest.mark.slow
def test_a_forking_process_killed_in_a_loop_leaves_no_branch_or_whole_branches(
    tmp_path: Path,
) -> None:
    context = multiprocessing.get_context("spawn")
    directory = tmp_path / "threads"
    store = JsonlStore(directory)
    source = fork_source_messages(1_500)
    store.append("p", source)
    rounds, first = 12, 0
    rng = random.Random(35)
    for _ in range(rounds):
        process = context.Process(target=fork_until_killed, args=(str(directory), first))
        process.start()
        deadline = time.monotonic() + HANG_GUARD
        try:
            while store.parent(f"b{first}") is None:  # the forks are flowing
                assert process.is_alive(), f"the forker died early ({process.exitcode})"
                assert time.monotonic() < deadline, "the forker made no progress"
                time.sleep(0.005)
            time.sleep(rng.uniform(0, 0.2))  # land anywhere in a later fork
        finally:
            process.kill()  # SIGKILL: no cleanup, possibly mid-fork
            process.join(HANG_GUARD)
        assert process.exitcode == -9
        after = JsonlStore(directory)
        ids: list[str] = []
        while after.path(f"b{first + len(ids)}").exists():  # the lock file comes first
            ids.append(f"b{first + len(ids)}")
        for branch in ids:
            loaded, parent = after.load(branch), after.parent(branch)
            if parent is None:
                assert loaded == [], f"{branch}: {len(loaded)} messages and no parent record"
            else:
                assert parent == ("p", 1_500), (branch, parent)
                assert loaded == source, f"{branch}: {len(loaded)} of 1500 messages"
        # The last id, cut or not, takes a fork (after a delete if it is whole).
        last = ids[-1]
        if after.parent(last) is not None:
            after.delete(last)
        after.fork("p", last)
        assert after.load(last) == source
        first += len(ids)
    assert not [name for name in os.listdir(directory) if name.endswith(".tmp")]
