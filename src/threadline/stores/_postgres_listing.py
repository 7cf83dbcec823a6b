"""``list_conversations`` and ``conversation_info`` of the PostgreSQL stores.

A page is one query on the primary key of ``<prefix>conversations`` (its column is
``COLLATE "C"``, so the index is in code point order): ``WHERE conversation_id > %s ORDER BY
conversation_id LIMIT %s``, an index range scan of the page's length. The info of a
conversation is one statement (one snapshot): its version, its message count (an index scan of
its rows) and its parent row.

Only `threadline.stores.postgres` imports this module, after checking that the driver is
installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any
from typing import ClassVar

from threadline.stores._listing import ConversationInfo
from threadline.stores._postgres_sql import Queries
from threadline.stores.base import check_list_page
from threadline.stores.base import validate_conversation_id

__all__ = ["AsyncPostgresListing", "PostgresListing"]


def _page(limit: int | None, after: str | None) -> dict[str, object]:
    return {"after": "" if after is None else after, "limit": limit}


def _info(conversation_id: str, row: Any) -> ConversationInfo | None:
    """The info in the ``info`` query's row; ``None`` for no message and no parent."""
    version, held, parent_id, at = row
    if not held and parent_id is None:
        return None
    parent = None if parent_id is None else (str(parent_id), int(at))
    return ConversationInfo(conversation_id, int(version), int(held), parent)


class PostgresListing:
    """``list_conversations`` and ``conversation_info`` of `PostgresStore`."""

    _NAME: ClassVar[str]
    _sql: Queries

    if TYPE_CHECKING:  # the store's own

        def _failing(self, doing: str) -> Any: ...
        def _connection(self) -> Any: ...

    def list_conversations(self, limit: int | None = None, after: str | None = None) -> list[str]:
        """The ids of the conversations that hold at least one message, in code point order.

        One query on the primary key (``WHERE conversation_id > %s ORDER BY conversation_id
        LIMIT %s``, in ``COLLATE "C"``): a page of k ids costs an index range scan of k rows,
        however many conversations the table holds.

        Args:
            limit: at most this many ids (``None``: all of them).
            after: only the ids after this one (the last id of the page before).

        Raises:
            threadline.ValidationError: ``limit`` is not ``None`` or an ``int`` >= 1, or
                ``after`` is not ``None`` or a conversation id.
            threadline.StoreError: the server cannot be reached or refused the query.
        """
        limit, after = check_list_page(limit, after, f"{self._NAME}.list_conversations")
        with self._failing("list conversations"), self._connection() as connection:
            rows = connection.execute(self._sql.page, _page(limit, after)).fetchall()
        return [row[0] for row in rows]

    def conversation_info(self, conversation_id: str) -> ConversationInfo | None:
        """The conversation's version, message count and parent, in one statement (one
        round trip, one snapshot); ``None`` when it holds no message and is no branch.

        The count scans the conversation's rows of the primary-key index. The store keeps no
        times: ``created_at`` and ``updated_at`` are ``None``.

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: the server cannot be reached or refused the query.
        """
        validate_conversation_id(conversation_id)
        doing = f"read the info of conversation {conversation_id!r}"
        with self._failing(doing), self._connection() as connection:
            row = connection.execute(self._sql.info, {"cid": conversation_id}).fetchone()
        return _info(conversation_id, row)


class AsyncPostgresListing:
    """``list_conversations`` and ``conversation_info`` of `AsyncPostgresStore`."""

    _NAME: ClassVar[str]
    _sql: Queries

    if TYPE_CHECKING:  # the store's own

        def _failing(self, doing: str) -> Any: ...
        def _connection(self) -> Any: ...

    async def list_conversations(
        self, limit: int | None = None, after: str | None = None
    ) -> list[str]:
        """The ids in code point order, a page at a time, as for
        [`PostgresStore.list_conversations`][].

        Raises:
            threadline.ValidationError: ``limit`` or ``after`` is invalid.
            threadline.StoreError: the server cannot be reached or refused the query.
        """
        limit, after = check_list_page(limit, after, f"{self._NAME}.list_conversations")
        with self._failing("list conversations"):
            async with self._connection() as connection:
                cursor = await connection.execute(self._sql.page, _page(limit, after))
                rows = await cursor.fetchall()
        return [row[0] for row in rows]

    async def conversation_info(self, conversation_id: str) -> ConversationInfo | None:
        """What [`PostgresStore.conversation_info`][] reads, in one round trip; ``None`` when it
        holds no message and is no branch.

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: the server cannot be reached or refused the query.
        """
        validate_conversation_id(conversation_id)
        with self._failing(f"read the info of conversation {conversation_id!r}"):
            async with self._connection() as connection:
                cursor = await connection.execute(self._sql.info, {"cid": conversation_id})
                row = await cursor.fetchone()
        return _info(conversation_id, row)
