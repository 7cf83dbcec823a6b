"""A write's batch as a store sends it, and the replay rule applied to it (private).

[`replayed`][threadline.stores.base.replayed] says which messages of a batch repeat one the
conversation (or the batch, earlier) already holds; `Batch.kept` runs it and gives the
positions left to write, so each store only fetches what it holds and writes the rest.
"""

from __future__ import annotations

from collections.abc import Mapping

from threadline.messages import Message
from threadline.stores.base import replayed

__all__ = ["Batch"]


class Batch:
    """The messages of one write as a store sends them: their ids and JSON texts.

    Args:
        conversation_id: the conversation written.
        items: the messages.
        texts: their JSON, as stored (``texts[i]`` for ``items[i]``).
        where: the method, for errors (``"RedisStore.append"``).
    """

    def __init__(
        self, conversation_id: str, items: list[Message], texts: list[str], where: str
    ) -> None:
        self.conversation_id = conversation_id
        self.ids = [message.id for message in items]
        self.texts = texts
        self.where = where

    def _keys(self) -> list[str]:
        """What tells the messages' contents apart, compared with ``stored`` in `kept`."""
        return self.texts

    def kept(self, stored: Mapping[str, str]) -> list[int]:
        """The positions of the messages that are not replays of ``stored`` (the keys of the
        conversation's messages the batch names, by id) or of one earlier in the batch.

        The usual case, every id new and none twice in the batch, compares nothing.

        Raises:
            threadline.ValidationError: an id names a different message; nothing may be
                written.
        """
        if not stored and len(set(self.ids)) == len(self.ids):
            return list(range(len(self.ids)))
        skip = replayed(self.conversation_id, self.ids, self._keys(), stored, self.where)
        return [index for index, skipped in enumerate(skip) if not skipped]

    def without_replays(self, stored: Mapping[str, str]) -> tuple[list[str], list[str]]:
        """The ids and texts at the positions `kept` gives (``ids`` and ``texts`` themselves
        when it keeps them all)."""
        kept = self.kept(stored)
        if len(kept) == len(self.ids):
            return self.ids, self.texts
        return [self.ids[i] for i in kept], [self.texts[i] for i in kept]
