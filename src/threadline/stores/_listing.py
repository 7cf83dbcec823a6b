"""Listing at scale: ``list_conversations(limit=None, after=None)`` pages and
``conversation_info(cid)``, the same on every store.

Conversation ids are ASCII (see `threadline.stores.base.CONVERSATION_ID_PATTERN`), so code
point order, the byte order of their UTF-8 and Python's ``sorted`` all agree: every
store lists in that order (SQLite's ``BINARY`` collation, PostgreSQL's ``COLLATE "C"``, Redis's
lexicographic sorted-set ranges), and the next page starts after the last id of the one before.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

__all__ = ["ConversationInfo", "page_of"]


@dataclass(frozen=True)
class ConversationInfo:
    """What a store's ``conversation_info(conversation_id)`` says about one conversation, read
    in one consistent step (one query, script or lock) without loading its messages.

    A store answers ``None`` instead for a conversation that holds no message and is no branch
    (never written, deleted, or replaced with ``[]``).
    """

    id: str
    """The conversation id."""
    version: int
    """Its version, as ``version(id)`` returns it."""
    messages: int
    """How many messages it holds."""
    parent: tuple[str, int] | None = None
    """``(parent id, at)`` of a branch made by ``fork``, as ``parent(id)`` returns it."""
    created_at: datetime | None = None
    """When its first message was written (UTC); ``None`` where the store keeps no times."""
    updated_at: datetime | None = None
    """When it was last written (UTC); ``None`` where the store keeps no times."""


def page_of(ids: Sequence[str], limit: int | None, after: str | None) -> list[str]:
    """The page of ``ids`` (sorted, no repeats) after ``after``, at most ``limit`` long."""
    start = 0 if after is None else bisect_right(ids, after)
    end = len(ids) if limit is None else min(len(ids), start + limit)
    return list(ids[start:end])
