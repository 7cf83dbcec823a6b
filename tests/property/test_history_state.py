"""History against a plain list: hypothesis state machines over every mutation and reader.

The model is a list of messages, a version counter, and for each listener the events it should
have seen. After every step the history must hold what the list holds, return the same
snapshot object until the next mutation, leave every earlier snapshot as it was, keep
``total_tokens`` and ``size`` equal to the sums over its messages, and have told each listener
exactly one event per mutation, in order, with the right kind and version.

With a window the model is ``trim_messages`` applied after every mutation, and a mutation that
trims is followed by a ``trim`` event of its own.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import Bundle
from hypothesis.stateful import RuleBasedStateMachine
from hypothesis.stateful import consumes
from hypothesis.stateful import initialize
from hypothesis.stateful import invariant
from hypothesis.stateful import precondition
from hypothesis.stateful import rule

import threadline as tl
from tests.strategies import any_messages
from threadline.context import trim_messages
from threadline.history import History
from threadline.history import HistoryEvent
from threadline.history import Snapshot
from threadline.tokens import content_chars
from threadline.tokens import estimate_tokens

# A message and whether to hand it to History as a mapping of its fields instead.
inputs = st.tuples(
    any_messages().map(lambda m: m.model_copy(update={"replay": False})), st.booleans()
)
batches = st.lists(inputs, max_size=5)

Expected = tuple[str, tuple[tl.Message, ...], int, tuple[tl.Message, ...]]


def as_input(item: tuple[tl.Message, bool]) -> tl.Message | dict[str, Any]:
    message, as_mapping = item
    return message.model_dump(mode="json") if as_mapping else message


class Listener:
    """Records what it is told, and the history's contents at that moment."""

    def __init__(self, history: History) -> None:
        self.history = history
        self.seen: list[Expected] = []
        self.expected: list[Expected] = []
        self.active = True
        self.unsubscribe = history.subscribe(self)

    def __call__(self, event: HistoryEvent) -> None:
        assert event.snapshot.version == event.version
        self.seen.append((event.kind, event.messages, event.version, tuple(event.snapshot)))


class HistoryMachine(RuleBasedStateMachine):
    listeners = Bundle("listeners")

    def __init__(self) -> None:
        super().__init__()
        self.history = History()
        self.model: list[tl.Message] = []
        self.version = 0
        self.taken: list[tuple[Snapshot, list[tl.Message], int]] = []
        self.current: Snapshot | None = None  # the snapshot handed out since the last mutation
        self.all_listeners: list[Listener] = []

    def mutated(self, kind: str, messages: list[tl.Message]) -> None:
        self.version += 1
        self.current = None
        for listener in self.all_listeners:
            if listener.active:
                listener.expected.append((kind, tuple(messages), self.version, tuple(self.model)))

    @rule(item=inputs)
    def append(self, item: tuple[tl.Message, bool]) -> None:
        self.history.append(as_input(item))
        self.model.append(item[0])
        self.mutated("append", [item[0]])

    @rule(batch=batches)
    def extend(self, batch: list[tuple[tl.Message, bool]]) -> None:
        self.history.extend(as_input(item) for item in batch)
        if batch:
            self.model.extend(message for message, _ in batch)
            self.mutated("extend", [message for message, _ in batch])

    @rule()
    def reset(self) -> None:
        self.history.reset()
        self.model = []
        self.mutated("reset", [])

    @rule(batch=batches)
    def restore(self, batch: list[tuple[tl.Message, bool]]) -> None:
        self.history.restore([as_input(item) for item in batch])
        self.model = [message for message, _ in batch]
        self.mutated("restore", self.model)

    @precondition(lambda self: self.taken)
    @rule(data=st.data())
    def restore_a_snapshot(self, data: st.DataObject) -> None:
        snapshot, contents, _ = data.draw(st.sampled_from(self.taken))
        self.history.restore(snapshot)
        self.model = list(contents)
        self.mutated("restore", self.model)

    @rule()
    def append_invalid(self) -> None:
        with pytest.raises(tl.ValidationError):
            self.history.append({"role": "user", "parts": []})
        with pytest.raises(tl.ValidationError):
            self.history.extend([{"role": "user", "parts": [{"type": "text", "text": "ok"}]}, 1])  # type: ignore[list-item]

    @rule()
    def snapshot(self) -> None:
        snapshot = self.history.snapshot()
        if self.current is not None:
            assert snapshot is self.current
        self.current = snapshot
        self.taken.append((snapshot, list(self.model), self.version))

    @rule(target=listeners)
    def subscribe(self) -> Listener:
        listener = Listener(self.history)
        self.all_listeners.append(listener)
        return listener

    @rule(listener=consumes(listeners), twice=st.booleans())
    def unsubscribe(self, listener: Listener, twice: bool) -> None:
        listener.unsubscribe()
        if twice:
            listener.unsubscribe()
        listener.active = False

    @invariant()
    def contents_equal_the_model(self) -> None:
        assert list(self.history) == self.model
        assert len(self.history) == len(self.model)
        assert self.history.version == self.version
        assert self.history.last == (self.model[-1] if self.model else None)
        snapshot = self.history.snapshot()
        assert snapshot == self.model
        assert snapshot.version == self.version
        assert self.history.snapshot() is snapshot
        if self.current is not None:
            assert snapshot is self.current
        self.current = snapshot

    @invariant()
    def derived_state_matches_the_model(self) -> None:
        system = tuple(m for m in self.model if m.role == "system")
        assert self.history.system_messages == system
        assert self.history.without_system() == [m for m in self.model if m.role != "system"]
        results = {
            part.call_id: part
            for m in self.model
            for part in m.parts
            if isinstance(part, tl.ToolResultPart)
        }
        # "call_1" is the id every generated result uses: present or forgotten, never stale.
        for call_id in {"call_1", *results}:
            assert self.history.get_tool_result(call_id) == results.get(call_id)

    @invariant()
    def totals_are_the_sums_over_the_messages(self) -> None:
        assert self.history.total_tokens == sum(map(estimate_tokens, self.model))
        assert self.history.size == sum(map(content_chars, self.model))

    @invariant()
    def earlier_snapshots_are_unchanged(self) -> None:
        for snapshot, contents, version in self.taken:
            assert list(snapshot) == contents
            assert len(snapshot) == len(contents)
            assert snapshot.version == version

    @invariant()
    def listeners_saw_one_event_per_mutation_in_order(self) -> None:
        for listener in self.all_listeners:
            assert listener.seen == listener.expected


TestHistoryStateMachine = HistoryMachine.TestCase


class WindowedHistoryMachine(HistoryMachine):
    """The same rules and invariants with a window: the model is trimmed after every mutation."""

    @initialize(
        budget=st.fixed_dictionaries(
            {},
            optional={"max_messages": st.integers(1, 8), "max_tokens": st.integers(5, 400)},
        ).filter(bool)
    )
    def configure(self, budget: dict[str, Any]) -> None:
        self.budget = budget
        self.history = History(**budget)

    def mutated(self, kind: str, messages: list[tl.Message]) -> None:
        # The rules leave self.model untrimmed: the event of the mutation itself shows that
        # state, then a trim (if any) has its own event and version.
        super().mutated(kind, messages)
        trimmed = trim_messages(self.model, **self.budget)
        self.model = trimmed.messages
        if trimmed.dropped:
            super().mutated("trim", trimmed.dropped)


TestWindowedHistoryStateMachine = WindowedHistoryMachine.TestCase
