"""History against a plain list: a hypothesis state machine over every mutation and reader.

The model is a list of messages, a version counter, and for each listener the events it should
have seen. After every step the history must hold what the list holds, return the same
snapshot object until the next mutation, leave every earlier snapshot as it was, and have told
each listener exactly one event per mutation, in order, with the right kind and version.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    invariant,
    precondition,
    rule,
)

import threadline as tl
from tests.strategies import any_messages
from threadline.history import History, HistoryEvent, Snapshot

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
        for call_id, part in results.items():
            assert self.history.get_tool_result(call_id) == part

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
