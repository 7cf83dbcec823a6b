"""``MemoryStore``: conversations in a dict, for tests, prototypes and single-process caches."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime
from datetime import timezone

from threadline.messages import Message
from threadline.stores._appended import Appended
from threadline.stores._listing import ConversationInfo
from threadline.stores._listing import page_of
from threadline.stores._watch import PollingWatch
from threadline.stores.base import check_list_page
from threadline.stores.base import check_load_after
from threadline.stores.base import check_write
from threadline.stores.base import conflict
from threadline.stores.base import replayed
from threadline.stores.base import validate_conversation_id
from threadline.stores.forks import branch_of
from threadline.stores.forks import check_fork
from threadline.stores.forks import taken

__all__ = ["MemoryStore"]


class MemoryStore(PollingWatch):
    """Conversations held in this process's memory, under one lock; nothing survives exit.

    It keeps the same contract as the persistent stores, so code tested against it behaves the same
    on [`SQLiteStore`][threadline.SQLiteStore]: lists are copied in and out (a caller changing its
    list changes nothing stored), ``replay`` comes back ``False``, ids are validated, and a message
    whose id the conversation already holds is skipped when equal and refused when not.
    """

    def __init__(self) -> None:
        self._conversations: dict[str, list[Message]] = {}
        self._by_id: dict[str, dict[str, Message]] = {}
        # Kept after a delete, so a version never goes back (a writer that saw version 3
        # before a delete must not succeed after three new writes).
        self._versions: dict[str, int] = {}
        self._parents: dict[str, tuple[str, int]] = {}
        # For load_after: the version of the conversation's last replace, delete or fork, and
        # its length after that write and after each append since (index: version - base).
        self._lengths: dict[str, tuple[int, list[int]]] = {}
        # The first and the last write of each conversation that holds something (UTC).
        self._times: dict[str, tuple[datetime, datetime]] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"MemoryStore(<{len(self._conversations)} conversations>)"

    def load(self, conversation_id: str) -> list[Message]:
        """The conversation's messages, oldest first (a new list); ``[]`` when it holds none.

        Raises:
            threadline.ValidationError: the id is invalid.
        """
        validate_conversation_id(conversation_id)
        with self._lock:
            return list(self._conversations.get(conversation_id, ()))

    def version(self, conversation_id: str) -> int:
        """The conversation's version: 0 when never written, one more after each write.

        Raises:
            threadline.ValidationError: the id is invalid.
        """
        validate_conversation_id(conversation_id)
        with self._lock:
            return self._versions.get(conversation_id, 0)

    def load_after(self, conversation_id: str, version: int) -> Appended:
        """What was appended to the conversation after ``version``, read under the lock.

        Cost follows what changed: the store keeps each write's length since the last
        ``replace`` or ``delete``.

        Args:
            conversation_id: the conversation.
            version: the version the caller holds it at.

        Returns:
            The messages appended since and the version now; or, ``replaced``, all of the
            conversation (it was replaced or deleted since, or ``version`` is newer).

        Raises:
            threadline.ValidationError: the id or ``version`` is invalid.
        """
        after = check_load_after(conversation_id, version, "MemoryStore.load_after")
        with self._lock:
            current = self._versions.get(conversation_id, 0)
            messages = self._conversations.get(conversation_id, [])
            if after == current:
                return Appended(current)
            base, lengths = self._lengths.get(conversation_id, (0, [0]))
            if after == 0:  # version 0 holds nothing: all of it was written since
                return Appended(current, list(messages))
            if base <= after < current:
                return Appended(current, messages[lengths[after - base] :])
            return Appended(current, list(messages), replaced=True)

    def append(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        """Add ``messages`` at the end of the conversation, atomically.

        A message whose id the conversation already holds is a replay: skipped when equal.

        Args:
            conversation_id: the conversation.
            messages: the batch.
            expected_version: write only if the conversation is at this version.

        Raises:
            threadline.ValidationError: the id is invalid, an item is not a ``Message``, or a
                message reuses the id of a different one (nothing is appended).
            threadline.ConflictError: the conversation is not at ``expected_version``
                (nothing is appended).
        """
        batch, expected = check_write(
            conversation_id, messages, expected_version, "MemoryStore.append"
        )
        items = _stored(batch)
        if not items:
            return
        with self._lock:
            self._check(conversation_id, expected, "MemoryStore.append")
            by_id = self._by_id.get(conversation_id, {})
            fresh = _fresh(conversation_id, items, by_id, "MemoryStore.append")
            if not fresh:
                return
            self._conversations.setdefault(conversation_id, []).extend(fresh)
            self._by_id.setdefault(conversation_id, by_id).update((m.id, m) for m in fresh)
            self._bump(conversation_id)
            self._lengths.setdefault(conversation_id, (0, [0]))[1].append(
                len(self._conversations[conversation_id])
            )

    def replace(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        """Make ``messages`` the whole conversation, atomically; ``[]`` deletes it.

        A message repeating an earlier one's id is skipped when equal to it.

        Args:
            conversation_id: the conversation.
            messages: the new contents.
            expected_version: write only if the conversation is at this version.

        Raises:
            threadline.ValidationError: the id is invalid, an item is not a ``Message``, or
                two different messages share an id (nothing changes).
            threadline.ConflictError: the conversation is not at ``expected_version``
                (nothing changes).
        """
        batch, expected = check_write(
            conversation_id, messages, expected_version, "MemoryStore.replace"
        )
        items = _fresh(conversation_id, _stored(batch), {}, "MemoryStore.replace")
        with self._lock:
            self._check(conversation_id, expected, "MemoryStore.replace")
            self._bump(conversation_id)
            if items:
                self._conversations[conversation_id] = items
                self._by_id[conversation_id] = {m.id: m for m in items}
            else:
                self._drop(conversation_id)
            self._reset(conversation_id)

    def delete(self, conversation_id: str) -> None:
        """Remove the conversation, and step its version (even when it does not exist).

        Raises:
            threadline.ValidationError: the id is invalid.
        """
        validate_conversation_id(conversation_id)
        with self._lock:
            self._bump(conversation_id)
            self._drop(conversation_id)
            self._reset(conversation_id)

    def list_conversations(self, limit: int | None = None, after: str | None = None) -> list[str]:
        """The ids of the conversations that hold at least one message, in code point order.

        Sorts every id on each call (O(n log n) for n conversations): a page costs as much as
        the whole list, which suits the store's use (tests, prototypes).

        Args:
            limit: at most this many ids (``None``: all of them).
            after: only the ids after this one (the last id of the page before).

        Raises:
            threadline.ValidationError: ``limit`` is not ``None`` or an ``int`` >= 1, or
                ``after`` is not ``None`` or a conversation id.
        """
        limit, after = check_list_page(limit, after, "MemoryStore.list_conversations")
        with self._lock:
            ids = sorted(self._conversations)
        return page_of(ids, limit, after)

    def conversation_info(self, conversation_id: str) -> ConversationInfo | None:
        """The conversation's version, message count, parent and the times of its first and
        last write, read under the lock; ``None`` when it holds no message and is no branch.

        Raises:
            threadline.ValidationError: the id is invalid.
        """
        validate_conversation_id(conversation_id)
        with self._lock:
            held = len(self._conversations.get(conversation_id, ()))
            parent = self._parents.get(conversation_id)
            if not held and parent is None:
                return None
            created, updated = self._times.get(conversation_id, (None, None))
            version = self._versions.get(conversation_id, 0)
        return ConversationInfo(conversation_id, version, held, parent, created, updated)

    def fork(self, conversation_id: str, new_id: str, at: int | None = None) -> None:
        """Copy the first ``at`` messages (all when ``None``) into the new conversation
        ``new_id`` and record its parent, in one step under the lock.

        Raises:
            threadline.ValidationError: an id is invalid, the parent holds no message, ``at``
                is past its end, or ``new_id`` is in use (nothing was written).
        """
        checked = check_fork(conversation_id, new_id, at, "MemoryStore.fork")
        with self._lock:
            source = self._conversations.get(conversation_id, [])
            items, point = branch_of(source, conversation_id, checked, "MemoryStore.fork")
            if new_id in self._conversations or new_id in self._parents:
                raise taken(new_id, "MemoryStore.fork")
            self._bump(new_id)
            if items:
                self._conversations[new_id] = list(items)
                self._by_id[new_id] = {m.id: m for m in items}
            self._parents[new_id] = (conversation_id, point)
            self._reset(new_id)

    def parent(self, conversation_id: str) -> tuple[str, int] | None:
        """``(parent id, at)`` of a conversation made by [`fork`][]; ``None`` otherwise.

        Raises:
            threadline.ValidationError: the id is invalid.
        """
        validate_conversation_id(conversation_id)
        with self._lock:
            return self._parents.get(conversation_id)

    def _reset(self, conversation_id: str) -> None:
        """Under the lock, after a replace, delete or fork (version bumped): what
        ``load_after`` can tell starts here."""
        held = len(self._conversations.get(conversation_id, ()))
        self._lengths[conversation_id] = (self._versions[conversation_id], [held])

    def _drop(self, conversation_id: str) -> None:
        """Under the lock: forget the conversation's messages and parent."""
        self._conversations.pop(conversation_id, None)
        self._by_id.pop(conversation_id, None)
        self._parents.pop(conversation_id, None)
        self._times.pop(conversation_id, None)

    def _check(self, conversation_id: str, expected: int | None, where: str) -> None:
        """Under the lock: raise when the conversation is not at ``expected``."""
        if expected is not None:
            actual = self._versions.get(conversation_id, 0)
            if actual != expected:
                raise conflict(where, conversation_id, expected, actual)

    def _bump(self, conversation_id: str) -> None:
        """Under the lock: one more write (its time noted; a delete's is dropped after)."""
        self._versions[conversation_id] = self._versions.get(conversation_id, 0) + 1
        now = datetime.now(timezone.utc)
        created = self._times.get(conversation_id, (now, now))[0]
        self._times[conversation_id] = (created, now)


def _stored(messages: list[Message]) -> list[Message]:
    # replay is runtime-only: a persistent store never writes it, so this one must not keep it.
    return [m.model_copy(update={"replay": False}) if m.replay else m for m in messages]


def _fresh(
    conversation_id: str, items: list[Message], by_id: dict[str, Message], where: str
) -> list[Message]:
    """``items`` without the replays of messages in ``by_id`` or earlier in ``items``."""
    ids = [m.id for m in items]
    if len(set(ids)) == len(ids) and not any(i in by_id for i in ids):
        return items  # the usual case: nothing to compare
    held = {i: by_id[i] for i in ids if i in by_id}
    skip = replayed(conversation_id, ids, items, held, where)
    return [m for m, skipped in zip(items, skip, strict=True) if not skipped]
