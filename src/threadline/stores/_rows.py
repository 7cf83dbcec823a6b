"""Messages as the JSON rows a store keeps, for a blocking store and an async twin alike.

A row holds one message's JSON (``Message.model_dump_json()``), with file bytes longer than the
store's ``blob_threshold`` moved to its blob store: a row of SQLite or PostgreSQL, an element of
a Redis list, a line of a JSONL file. A load joins the rows into one JSON array, validated in one
call (`threadline.serialization.messages_from_json`), and puts the bytes back. An async
store runs the blob store's blocking ``put`` and ``get`` in a worker thread, and only when it
has one.
"""

from __future__ import annotations

import asyncio

from threadline.messages import Message
from threadline.serialization import messages_from_json
from threadline.stores.blobs import BlobStore
from threadline.stores.blobs import may_hold_references
from threadline.stores.blobs import offload_files
from threadline.stores.blobs import restore_files

__all__ = ["JsonRows"]


class JsonRows:
    """Mixed into a store that sets ``blobs`` and ``blob_threshold``."""

    blobs: BlobStore | None
    blob_threshold: int

    def _rows(self, messages: list[Message], conversation_id: str) -> list[str]:
        """The JSON of each message as it is stored: large file bytes moved to ``blobs``."""
        if self.blobs is not None:
            messages = offload_files(messages, self.blobs, self.blob_threshold, conversation_id)
        return [message.model_dump_json() for message in messages]

    async def _rows_async(self, messages: list[Message], conversation_id: str) -> list[str]:
        if self.blobs is None:
            return self._rows(messages, conversation_id)
        return await asyncio.to_thread(self._rows, messages, conversation_id)

    @staticmethod
    def _messages(payload: bytes | str | None) -> list[Message]:
        """The messages of the rows joined into one JSON array (``None``: no rows).

        Raises:
            pydantic.ValidationError: a row is not a valid message.
        """
        return [] if payload is None else messages_from_json(payload)

    def _restored(
        self, messages: list[Message], payload: bytes | str | None, conversation_id: str
    ) -> list[Message]:
        """``messages`` with the file bytes kept in ``blobs`` put back."""
        blobs = self._blobs_to_read(payload)
        if blobs is None:
            return messages
        return restore_files(messages, blobs, conversation_id, owner=self)

    async def _restored_async(
        self, messages: list[Message], payload: bytes | str | None, conversation_id: str
    ) -> list[Message]:
        blobs = self._blobs_to_read(payload)
        if blobs is None:
            return messages
        return await asyncio.to_thread(restore_files, messages, blobs, conversation_id, owner=self)

    def _blobs_to_read(self, payload: bytes | str | None) -> BlobStore | None:
        """``blobs``, when ``payload`` may refer to it (a cheap scan, to skip restoring)."""
        if self.blobs is None or payload is None:
            return None
        data = payload.encode() if isinstance(payload, str) else payload
        return self.blobs if may_hold_references(data) else None
