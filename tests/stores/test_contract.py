"""Every store keeps the store contract, and the contract suite catches stores that do not."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.stores._helpers import KINDS
from tests.stores._helpers import ThreadedAsyncStore
from tests.stores._helpers import store_factory
from threadline import Message
from threadline.stores import AsyncStore
from threadline.stores import MemoryStore
from threadline.stores import Store
from threadline.stores import validate_conversation_id
from threadline.testing import ConformanceError
from threadline.testing import check_async_store
from threadline.testing import check_store


@pytest.mark.parametrize("kind", KINDS)
def test_store_keeps_the_contract(kind: str, tmp_path: Path) -> None:
    check_store(store_factory(kind, tmp_path))


@pytest.mark.parametrize("kind", KINDS)
def test_async_contract_over_a_threaded_adapter(kind: str, tmp_path: Path) -> None:
    make = store_factory(kind, tmp_path)
    asyncio.run(check_async_store(lambda: ThreadedAsyncStore(make())))


def test_async_factory_may_be_a_coroutine(tmp_path: Path) -> None:
    async def make() -> AsyncStore:
        await asyncio.sleep(0)
        return ThreadedAsyncStore(MemoryStore())

    asyncio.run(check_async_store(make))


def test_stores_satisfy_the_protocols(tmp_path: Path) -> None:
    for kind in KINDS:
        assert isinstance(store_factory(kind, tmp_path)(), Store), kind
    assert isinstance(ThreadedAsyncStore(MemoryStore()), AsyncStore)


# Broken stores: each breaks one promise, and the suite must say which.


class _Broken(MemoryStore):
    """A MemoryStore with one promise broken by a subclass."""


class CopylessStore(_Broken):
    def load(self, conversation_id: str) -> list[Message]:
        super().load(conversation_id)
        return self._conversations.setdefault(conversation_id, [])


class LaxIdStore(_Broken):
    def load(self, conversation_id: str) -> list[Message]:
        try:
            return super().load(conversation_id)
        except ValueError:
            return []


class InterleavingStore(_Broken):
    """Appends a batch one message at a time, letting other threads in between."""

    def append(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        for message in messages:
            super().append(conversation_id, [message])
            time.sleep(0.0005)


class LossyStore(_Broken):
    """Read-modify-write without holding the lock throughout: concurrent appends get lost."""

    def append(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        current = self.load(conversation_id)
        time.sleep(0.001)
        self.replace(conversation_id, [*current, *messages])


class TornReplaceStore(_Broken):
    """Replaces by deleting, then appending message by message."""

    def replace(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        self.delete(conversation_id)
        for message in messages:
            time.sleep(0.0005)
            self.append(conversation_id, [message])


class ReplayKeepingStore(_Broken):
    def append(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        with self._lock:
            self._conversations.setdefault(conversation_id, []).extend(messages)


class DuplicatingStore(_Broken):
    """Stores a batch sent again a second time (no id check)."""

    def append(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        validate_conversation_id(conversation_id)
        if messages:
            with self._lock:
                self._conversations.setdefault(conversation_id, []).extend(
                    m.model_copy(update={"replay": False}) for m in messages
                )


class OverwritingStore(_Broken):
    """Skips every message whose id is stored, even when it is a different message."""

    def append(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        held = {m.id for m in self.load(conversation_id)}
        super().append(conversation_id, [m for m in messages if m.id not in held])


class UncheckedVersionStore(_Broken):
    """Takes expected_version and ignores it."""

    def append(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        super().append(conversation_id, messages)


class ForgetfulVersionStore(_Broken):
    """Starts a deleted conversation's version again from 0."""

    def delete(self, conversation_id: str) -> None:
        super().delete(conversation_id)
        with self._lock:
            self._versions.pop(conversation_id, None)


class RacyVersionStore(_Broken):
    """Checks the version, then writes without holding the lock in between."""

    def append(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        if expected_version is not None and self.version(conversation_id) != expected_version:
            super().append(conversation_id, messages, expected_version=expected_version)
            return  # (raised)
        time.sleep(0.001)
        super().append(conversation_id, messages)


class ParentlessForkStore(_Broken):
    """Copies a branch but records no parent."""

    def parent(self, conversation_id: str) -> tuple[str, int] | None:
        return None


class AliasingForkStore(_Broken):
    """Shares the parent's list with the branch: a later write reaches both."""

    def fork(self, conversation_id: str, new_id: str, at: int | None = None) -> None:
        super().fork(conversation_id, new_id, at)
        with self._lock:
            if at is None:
                self._conversations[new_id] = self._conversations[conversation_id]


class OverwritingForkStore(_Broken):
    """Forks onto an id in use by replacing what it holds."""

    def fork(self, conversation_id: str, new_id: str, at: int | None = None) -> None:
        self.delete(new_id)
        super().fork(conversation_id, new_id, at)


class ListsEmptyStore(_Broken):
    def list_conversations(self, limit: int | None = None, after: str | None = None) -> list[str]:
        return [*super().list_conversations(limit, after), "ghost"]


class HangingStore(_Broken):
    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def append(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        if conversation_id == "shared":
            self.release.wait(10)  # a guard so the thread ends soon after the test
        super().append(conversation_id, messages, expected_version=expected_version)


@pytest.mark.parametrize(
    ("store_class", "check"),
    [
        (CopylessStore, "round_trip"),
        (LaxIdStore, "ids"),
        (InterleavingStore, "atomic_batches"),
        (LossyStore, "concurrent_writers"),
        (TornReplaceStore, "atomic_replace"),
        (ReplayKeepingStore, "round_trip"),
        (ListsEmptyStore, "empty"),
        (DuplicatingStore, "replays"),
        (OverwritingStore, "replays"),
        (UncheckedVersionStore, "expected_version"),
        (ForgetfulVersionStore, "versions"),
        (RacyVersionStore, "versioned_writers"),
        (ParentlessForkStore, "fork"),
        (AliasingForkStore, "fork"),
        (OverwritingForkStore, "fork"),
    ],
)
def test_check_store_names_the_broken_promise(store_class: type[Store], check: str) -> None:
    with pytest.raises(ConformanceError, match=f"check '{check}' failed for"):
        check_store(store_class)


@pytest.mark.parametrize(
    ("store_class", "check"),
    [
        (CopylessStore, "round_trip"),
        (LaxIdStore, "ids"),
        (LossyStore, "concurrent_writers"),
        (ListsEmptyStore, "empty"),
        (DuplicatingStore, "replays"),
        (OverwritingStore, "replays"),
        (UncheckedVersionStore, "expected_version"),
        (ForgetfulVersionStore, "versions"),
        (RacyVersionStore, "versioned_writers"),
        (ParentlessForkStore, "fork"),
        (AliasingForkStore, "fork"),
        (OverwritingForkStore, "fork"),
    ],
)
def test_check_async_store_names_the_broken_promise(store_class: type[Store], check: str) -> None:
    with pytest.raises(ConformanceError, match=f"check '{check}' failed for"):
        asyncio.run(check_async_store(lambda: ThreadedAsyncStore(store_class())))


def test_a_failing_store_operation_fails_the_check_with_its_error() -> None:
    class Failing(_Broken):
        def list_conversations(
            self, limit: int | None = None, after: str | None = None
        ) -> list[str]:
            raise OSError("disk on fire")

    with pytest.raises(ConformanceError, match="OSError: disk on fire") as caught:
        check_store(Failing)
    assert isinstance(caught.value.__cause__, OSError)


def test_a_hanging_store_fails_instead_of_hanging(monkeypatch: pytest.MonkeyPatch) -> None:
    from threadline.testing import _store_kit

    monkeypatch.setattr(_store_kit, "_TIMEOUT", 0.5)
    store = HangingStore()
    try:
        with pytest.raises(AssertionError, match="still running"):
            _store_kit._check_concurrent_writers(store)
    finally:
        store.release.set()
