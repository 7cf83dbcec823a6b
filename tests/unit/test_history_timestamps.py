"""Opt-in timestamps, and ``older_than`` that never silently does nothing (issue 21, item 6)."""

from __future__ import annotations

import asyncio
from datetime import datetime
from datetime import timedelta
from datetime import timezone

import pytest

import threadline as tl
from threadline.context import RollingSummary
from threadline.history import History

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


def _summarize(messages: list[tl.Message], previous: str | None) -> str:
    return f"{len(messages)} messages"


class TestStamping:
    def test_off_by_default(self) -> None:
        history = History([tl.user_message("a")])
        history.append(tl.assistant_message("b"))
        assert [message.created_at for message in history] == [None, None]

    def test_stamps_what_it_first_stores_and_keeps_given_times(self) -> None:
        clock = Clock()
        given = tl.user_message("given").model_copy(update={"created_at": T0 - timedelta(days=9)})
        history = History([tl.user_message("initial"), given], timestamps=True, clock=clock)
        clock.now = T0 + timedelta(minutes=1)
        history.append(tl.assistant_message("appended"))
        history.append({"role": "user", "parts": [{"type": "text", "text": "mapping"}]})
        clock.now = T0 + timedelta(minutes=2)
        history.extend([tl.assistant_message("extended")])
        assert [(m.text, m.created_at) for m in history] == [
            ("initial", T0),
            ("given", T0 - timedelta(days=9)),
            ("appended", T0 + timedelta(minutes=1)),
            ("mapping", T0 + timedelta(minutes=1)),
            ("extended", T0 + timedelta(minutes=2)),
        ]
        clock.now = T0 + timedelta(minutes=3)
        history.restore([tl.user_message("restored")])
        assert history[0].created_at == T0 + timedelta(minutes=3)

    def test_the_default_clock_is_utc_now(self) -> None:
        history = History(timestamps=True)
        before = datetime.now(timezone.utc)
        history.append(tl.user_message("a"))
        stamp = history[0].created_at
        assert stamp is not None
        assert stamp.tzinfo is not None
        assert before <= stamp <= datetime.now(timezone.utc)

    def test_a_bound_store_gets_the_stamped_message_and_copies_keep_stamping(self) -> None:
        from threadline.stores import MemoryStore

        store, clock = MemoryStore(), Clock()
        history = History(timestamps=True, clock=clock).bind(store, "c1")
        history.append(tl.user_message("a"))
        assert [m.created_at for m in store.load("c1")] == [T0]
        copy = history.copy()
        copy.append(tl.user_message("b"))
        assert copy[-1].created_at == T0

    def test_a_clock_without_timestamps_or_a_bad_clock_is_refused(self) -> None:
        with pytest.raises(ValueError, match="timestamps=True"):
            History(clock=Clock())
        history = History(timestamps=True, clock=lambda: "now")  # type: ignore[arg-type,return-value,unused-ignore]
        with pytest.raises(TypeError, match="clock"):
            history.append(tl.user_message("a"))
        assert len(history) == 0


class TestOlderThan:
    def test_works_over_stamped_messages(self) -> None:
        clock = Clock()
        history = History(timestamps=True, clock=clock, plugins=[RollingSummary(_summarize)])
        history.extend([tl.user_message("old"), tl.assistant_message("old reply")])
        clock.now = T0 + timedelta(hours=2)
        history.extend([tl.user_message("new"), tl.assistant_message("new reply")])
        changed = asyncio.run(history.reduce(older_than=T0 + timedelta(hours=1)))
        assert changed
        assert [m.text for m in history] == ["2 messages", "new", "new reply"]

    def test_over_messages_without_created_at_is_a_clear_error(self) -> None:
        history = History(
            [tl.user_message("a"), tl.assistant_message("b"), tl.user_message("c")],
            plugins=[RollingSummary(_summarize)],
        )
        with pytest.raises(tl.ValidationError) as caught:
            asyncio.run(history.reduce(older_than=timedelta(minutes=5)))
        text = str(caught.value)
        assert "created_at" in text
        assert "timestamps=True" in text
        assert len(history) == 3
