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
from typing import cast

from threadline.errors import ErrorDetail
from threadline.errors import ValidationError
from threadline.stores.base import validate_conversation_id

__all__ = ["ConversationInfo", "check_page", "page_of"]


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


def check_page(limit: object, after: object, where: str) -> tuple[int | None, str | None]:
    """``(limit, after)``, the arguments of a ``list_conversations`` (``where``, as
    ``"MyStore.list_conversations"``), after checking them.

    Args:
        limit: ``None`` (every id) or the most ids to return, an ``int`` of at least 1.
        after: ``None`` (from the first id) or the last id of the page before: the page holds
            the ids after it in code point order. It must be a valid conversation id, but need
            not name a stored conversation.

    Raises:
        threadline.ValidationError: ``limit`` is not ``None`` or an ``int`` >= 1 (a ``bool``
            included), or ``after`` is not ``None`` or a valid conversation id; the message
            names the argument.
    """
    if limit is not None and not (type(limit) is int and limit >= 1):
        detail = ErrorDetail(
            "limit",
            f"{where} takes None (every id) or the most ids to return, an int >= 1, not {limit!r}",
            "type",
        )
        raise ValidationError(f"invalid limit: {detail.message}", [detail])
    if after is not None:
        try:
            validate_conversation_id(after)
        except ValidationError:
            shown = after if not isinstance(after, str) or len(after) <= 60 else after[:57] + "..."
            detail = ErrorDetail(
                "after",
                f"{where} takes None (from the first id) or the last id of the page before, "
                f"a conversation id, not {shown!r}",
                "type",
            )
            raise ValidationError(f"invalid after: {detail.message}", [detail]) from None
    return limit, cast("str | None", after)


def page_of(ids: Sequence[str], limit: int | None, after: str | None) -> list[str]:
    """The page of ``ids`` (sorted, no repeats) after ``after``, at most ``limit`` long."""
    start = 0 if after is None else bisect_right(ids, after)
    end = len(ids) if limit is None else min(len(ids), start + limit)
    return list(ids[start:end])
