"""Writes whose reply was lost, then sent again: a retry never stores a message twice.

When a write reaches the server but its reply never comes back (the caller's task is cancelled
while it waits, the connection drops after ``EXEC`` / ``COMMIT``), the caller cannot tell
whether the batch was stored, so it sends it again: ``History.flush`` keeps the batch queued and
the next flush sends it (merged with what was appended since). Stores treat a message id the
conversation already holds, with the same content, as a replay and skip it, so every retry
stores each message exactly once, in the order the history holds them.

``AsyncLostReply`` (``tests/stores/_helpers.py``) wraps a real store: its ``append`` awaits the
real write, then raises ``CancelledError`` as if the task had been cancelled while waiting for
the reply. The stores come from the fixtures in ``tests/faults/conftest.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from typing import Any

import pytest

import threadline as tl
from tests.stores._helpers import AsyncLostReply
from tests.stores._helpers import LostReply

pytestmark = pytest.mark.requires_server

ROUNDS = 50
HANG_GUARD = 120.0  # seconds: only against a deadlock, never a performance assertion


def numbered(count: int) -> list[tl.Message]:
    return [tl.user_message(f"message {i}", id=f"m{i}") for i in range(count)]


def test_flushes_whose_reply_was_lost_store_each_message_once(async_store: Any) -> None:
    messages = numbered(ROUNDS)

    async def run() -> list[tl.Message]:
        async with async_store:
            flaky = AsyncLostReply(async_store, lose=True)
            history = await tl.History().abind(flaky, "c")
            for message in messages:
                history.append(message)
                with pytest.raises(asyncio.CancelledError):
                    await history.flush()
            flaky.lose = False
            await history.flush()
            assert history.pending_writes == 0
            return list(await async_store.load("c"))

    loaded = asyncio.run(asyncio.wait_for(run(), HANG_GUARD))
    assert [m.id for m in loaded] == [m.id for m in messages]
    assert loaded == messages


def test_flushes_cancelled_anywhere_store_each_message_once(async_store: Any) -> None:
    # Timeouts from 10 µs to 3 ms land before, during and after the write. Whether a timeout
    # cancels a flush depends on the driver and the moment (a flush that finished first, or a
    # driver that completes a command it was cancelled in, returns normally), so this test does
    # not require a cancellation: the lost-reply tests above make one happen every time. What
    # must hold whatever happened: each message stored once, in order.
    messages = numbered(ROUNDS)
    chance = random.Random(19)  # seeded: the same spread of timeouts on every run

    async def run() -> list[tl.Message]:
        async with async_store:
            history = await tl.History().abind(async_store, "c")
            for message in messages:
                history.append(message)
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(history.flush(), 10 ** chance.uniform(-5, -2.5))
            await history.flush()
            assert history.pending_writes == 0
            return list(await async_store.load("c"))

    loaded = asyncio.run(asyncio.wait_for(run(), HANG_GUARD))
    assert [m.id for m in loaded] == [m.id for m in messages]
    assert loaded == messages


def test_a_blocking_append_whose_reply_was_lost_can_be_retried(server_store: Any) -> None:
    messages = numbered(10)
    with server_store:
        flaky = LostReply(server_store, lose=True)
        history = tl.History().bind(flaky, "c")
        for message in messages:
            with pytest.raises(tl.StoreError):
                history.append(message)  # stored, but the caller is told it failed
            flaky.lose = False
            history.append(message)  # so it tries again
            flaky.lose = True
        assert list(history) == messages
        assert server_store.load("c") == messages
