"""``MemoryStore``: conversations in a dict, for tests, prototypes and single-process caches."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from threadline.messages import Message
from threadline.stores.base import as_message_list, validate_conversation_id

__all__ = ["MemoryStore"]


class MemoryStore:
    """Conversations held in this process's memory, under one lock; nothing survives exit.

    It keeps the same contract as the persistent stores, so code tested against it behaves the
    same on :class:`SQLiteStore`: lists are copied in and out (a caller changing its list changes
    nothing stored), ``replay`` comes back ``False``, and ids are validated.
    """

    def __init__(self) -> None:
        self._conversations: dict[str, list[Message]] = {}
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

    def append(self, conversation_id: str, messages: Sequence[Message]) -> None:
        """Add ``messages`` at the end of the conversation, atomically.

        Raises:
            threadline.ValidationError: the id is invalid or an item is not a ``Message``.
        """
        validate_conversation_id(conversation_id)
        items = _stored(as_message_list(messages, "MemoryStore.append"))
        if not items:
            return
        with self._lock:
            self._conversations.setdefault(conversation_id, []).extend(items)

    def replace(self, conversation_id: str, messages: Sequence[Message]) -> None:
        """Make ``messages`` the whole conversation, atomically; ``[]`` deletes it.

        Raises:
            threadline.ValidationError: the id is invalid or an item is not a ``Message``.
        """
        validate_conversation_id(conversation_id)
        items = _stored(as_message_list(messages, "MemoryStore.replace"))
        with self._lock:
            if items:
                self._conversations[conversation_id] = items
            else:
                self._conversations.pop(conversation_id, None)

    def delete(self, conversation_id: str) -> None:
        """Remove the conversation; deleting one that does not exist does nothing.

        Raises:
            threadline.ValidationError: the id is invalid.
        """
        validate_conversation_id(conversation_id)
        with self._lock:
            self._conversations.pop(conversation_id, None)

    def list_conversations(self) -> list[str]:
        """The ids of the conversations that hold at least one message, sorted."""
        with self._lock:
            return sorted(self._conversations)


def _stored(messages: list[Message]) -> list[Message]:
    # replay is runtime-only: a persistent store never writes it, so this one must not keep it.
    return [m.model_copy(update={"replay": False}) if m.replay else m for m in messages]
