"""Issue 39: without a window, a History measures no characters on load or append; ``size``
counts what arrived since its last read, and gives what measuring on arrival gave."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import threadline._log as log_module
from tests.strategies import conversations
from tests.support import examples
from threadline import History
from threadline import Message
from threadline import TextPart
from threadline import tokens
from threadline.stores.memory import MemoryStore
from threadline.tokens import content_chars


def user(text: str) -> Message:
    return Message(role="user", parts=(TextPart(text=text),))


MESSAGES = [user("hello"), user("a longer question"), user("")]


@pytest.fixture
def measured(monkeypatch: pytest.MonkeyPatch) -> list[Message]:
    """Every message the log measures (characters, or characters and tokens at once)."""
    seen: list[Message] = []

    def counting(original: Callable[[Message], Any]) -> Callable[[Message], Any]:
        def wrapper(message: Message) -> Any:
            seen.append(message)
            return original(message)

        return wrapper

    monkeypatch.setattr(log_module, "content_chars", counting(tokens.content_chars))
    monkeypatch.setattr(log_module, "measure", counting(tokens.measure))
    return seen


def test_loading_and_appending_measure_nothing_without_a_window(measured: list[Message]) -> None:
    store = MemoryStore()
    store.append("c", MESSAGES)
    built = History(MESSAGES)
    bound = History().bind(store, "c")
    bound.append(user("more"))
    bound.extend([user("and more")])
    built.restore(MESSAGES[:2])
    assert measured == []
    expected = sum(map(content_chars, bound))
    assert bound.size == expected
    assert len(measured) == len(bound)  # each message measured once, on this first read
    assert bound.size == expected
    assert len(measured) == len(bound)  # and not again
    bound.append(user("one more"))
    assert bound.size == expected + len("one more")
    assert len(measured) == len(bound)  # only the new message


def test_a_window_measures_on_arrival(measured: list[Message]) -> None:
    history = History(MESSAGES, max_messages=2)
    assert len(measured) == len(MESSAGES)  # the window needs each message's size to trim
    assert history.size == sum(map(content_chars, history))
    assert len(measured) == len(MESSAGES)


operations = st.lists(
    st.tuples(st.sampled_from(["append", "extend", "restore", "reset", "read"]), conversations()),
    max_size=6,
)


@settings(max_examples=examples(100))
@given(operations, st.sampled_from([None, 1, 3]))
def test_size_read_late_is_size_read_early(
    steps: list[tuple[str, list[Message]]], max_messages: int | None
) -> None:
    late = History(max_messages=max_messages)
    early = History(max_messages=max_messages)
    for kind, messages in steps:
        for history in (late, early):
            if kind == "append" and messages:
                history.append(messages[0])
            elif kind == "extend":
                history.extend(messages)
            elif kind == "restore":
                history.restore(messages)
            elif kind == "reset":
                history.reset()
            elif kind == "read":
                _ = history.size
        _ = early.size  # read after every step, as measuring on arrival did
        assert list(late) == list(early)
    assert late.size == early.size == sum(map(content_chars, late))
