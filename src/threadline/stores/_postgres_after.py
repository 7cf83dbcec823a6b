"""``load_after`` of the Postgres stores: the version and, when it moved, the conversation, in
one snapshot.

The tables keep no record of each write (a version row and a message count per conversation),
so what was appended after a version cannot be told from what replaced it: when the version did
not move, ``load_after`` costs one indexed read; when it did, it returns the whole conversation
as ``replaced`` (as ``load`` would read it), except after version 0, which holds nothing.

Only `threadline.stores.postgres` imports this module, after checking that the driver is
installed.
"""

from __future__ import annotations

from typing import Any

from threadline.stores._appended import Appended
from threadline.stores._postgres_sql import json_array
from threadline.stores.base import check_load_after

__all__ = ["AsyncPostgresLoadAfter", "PostgresLoadAfter"]

_SNAPSHOT = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"


class PostgresLoadAfter:
    """Mixed into [`PostgresStore`][threadline.stores.PostgresStore]: ``load_after``."""

    def load_after(self, conversation_id: str, version: int) -> Appended:
        """What was appended to the conversation after ``version``, read in one snapshot.

        The tables record no write by write history, so this reads one version row when the
        conversation is still at ``version``, and otherwise the whole conversation, as
        ``replaced`` (unless ``version`` is 0).

        Args:
            conversation_id: the conversation.
            version: the version the caller holds it at.

        Returns:
            ``[]`` at the same version; otherwise all of the conversation and the version now.

        Raises:
            threadline.ValidationError: the id or ``version`` is invalid.
            threadline.StoreError: the server cannot be reached or refused the query, a row is
                not a valid message, or a referenced blob is corrupt or unreadable.
        """
        store: Any = self
        after = check_load_after(conversation_id, version, f"{store._NAME}.load_after")
        with store._failing(f"load conversation {conversation_id!r} after a version"):
            with store._connection() as connection, connection.transaction():
                connection.execute(_SNAPSHOT)
                row = connection.execute(store._sql.version, {"cid": conversation_id}).fetchone()
                current = int(row[0]) if row is not None else 0
                if current == after:
                    return Appended(current)
                payload = json_array(
                    connection.execute(store._sql.load, (conversation_id,)).fetchone()
                )
            messages = store._messages(payload)
        restored: list[Any] = store._restored(messages, payload, conversation_id)
        return Appended(current, restored, replaced=after != 0)


class AsyncPostgresLoadAfter:
    """Mixed into [`AsyncPostgresStore`][threadline.stores.AsyncPostgresStore]: ``load_after``."""

    async def load_after(self, conversation_id: str, version: int) -> Appended:
        """What was appended after ``version``, as for ``PostgresStore.load_after``.

        Raises:
            threadline.ValidationError: the id or ``version`` is invalid.
            threadline.StoreError: as for ``PostgresStore.load_after``.
        """
        store: Any = self
        after = check_load_after(conversation_id, version, f"{store._NAME}.load_after")
        with store._failing(f"load conversation {conversation_id!r} after a version"):
            async with store._connection() as connection, connection.transaction():
                await connection.execute(_SNAPSHOT)
                cursor = await connection.execute(store._sql.version, {"cid": conversation_id})
                row = await cursor.fetchone()
                current = int(row[0]) if row is not None else 0
                if current == after:
                    return Appended(current)
                cursor = await connection.execute(store._sql.load, (conversation_id,))
                payload = json_array(await cursor.fetchone())
            messages = store._messages(payload)
        restored: list[Any] = await store._restored_async(messages, payload, conversation_id)
        return Appended(current, restored, replaced=after != 0)
