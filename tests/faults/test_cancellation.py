"""Async appends cancelled mid-flight (a request timeout, a task cancelled by its caller).

Cancelling ``await store.append(...)`` can stop it anywhere: before it is sent, while it is
being sent, or while it waits for the reply. The batch is then stored whole or not at all, the
connection it used must not leak a half-done command or transaction into the next call, and
the store keeps working. Several tasks share one store and one conversation, each appending
under ``asyncio.wait_for`` with a timeout of a few milliseconds: the timeouts only decide where
cancellations fall; nothing here asserts how long anything takes.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

import threadline as tl
from tests.faults._workers import batch

pytestmark = pytest.mark.requires_server

WRITERS, BATCHES, SIZE, PADDING = 4, 60, 3, 2_000
HANG_GUARD = 120.0  # seconds: only against a deadlock, never a performance assertion


def test_cancelled_appends_are_whole_or_absent(async_store: Any) -> None:
    acknowledged: list[list[int]] = [[] for _ in range(WRITERS)]
    cancelled: list[list[int]] = [[] for _ in range(WRITERS)]
    chance = random.Random(14)  # seeded: the same spread of timeouts on every run

    async def write(writer: int) -> None:
        for number in range(BATCHES):
            append = async_store.append("c", batch(writer, number, SIZE, PADDING))
            # Every fourth append runs to the end, so some are acknowledged however slow the
            # machine; the others get a timeout of up to 4 ms, so many are cancelled.
            timeout = None if number % 4 == 3 else chance.uniform(0.0, 0.004)
            try:
                await asyncio.wait_for(append, timeout)
                acknowledged[writer].append(number)
            except asyncio.TimeoutError:
                cancelled[writer].append(number)

    async def run() -> tuple[list[tl.Message], list[tl.Message]]:
        async with async_store:
            writers = asyncio.gather(*(write(w) for w in range(WRITERS)))
            await asyncio.wait_for(writers, HANG_GUARD)
            loaded = await async_store.load("c")
            await async_store.append("c", batch(9, 0, SIZE))  # the store still works
            return loaded, await async_store.load("c")

    loaded, after = asyncio.run(run())
    assert any(cancelled), "no append was cancelled: the fault never happened"
    assert len(loaded) % SIZE == 0, f"{len(loaded)} messages: a batch was cut"
    stored: list[list[int]] = [[] for _ in range(WRITERS)]
    for start in range(0, len(loaded), SIZE):
        writer, number, _ = (int(part[1:]) for part in loaded[start].id.split("-"))
        assert loaded[start : start + SIZE] == batch(writer, number, SIZE, PADDING), start
        stored[writer].append(number)
    for writer in range(WRITERS):
        numbers = stored[writer]
        assert len(numbers) == len(set(numbers)), f"writer {writer}: a batch stored twice"
        # A cancelled batch may still be on its way to the server when the writer's next append
        # goes out on another connection, so only acknowledged batches keep the writer's order.
        acked = [number for number in numbers if number in acknowledged[writer]]
        assert acked == sorted(acked), f"writer {writer} out of order: {acked}"
        assert set(acknowledged[writer]) <= set(numbers), f"writer {writer}: an ack was lost"
        assert set(numbers) <= set(acknowledged[writer]) | set(cancelled[writer])
    assert after == [*loaded, *batch(9, 0, SIZE)]
