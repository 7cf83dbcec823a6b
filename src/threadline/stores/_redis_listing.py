"""``list_conversations`` and ``conversation_info`` of the Redis stores.

The index of conversations is a sorted set whose members all have score 0, so Redis orders
them by the bytes of the member (``memcmp``): for ASCII ids, code point order. A page is one
``ZRANGE ... BYLEX`` (``ZRANGEBYLEX``) from ``(after`` with ``LIMIT 0 limit``: O(log n + page)
for n conversations. The info of a conversation is one Lua script over its keys (the version,
the list's length, the parent record), so it is read in one atomic step and one round trip.

On a Redis Cluster each of the 256 buckets keeps its own index (``_redis_keys``): a page is one
``ZRANGEBYLEX`` with the same arguments on every bucket's index (the client pipelines them
node by node), merged, sorted and cut to ``limit``. Each bucket's first ``limit`` ids after
``after`` hold the first ``limit`` of all of them, so the page is exact; it costs 256
commands, O(256 (log n + page)) on the servers.

Only `threadline.stores.redis` imports this module, after checking that the driver is
installed. Everything that reads the index goes through `page_arguments`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any
from typing import ClassVar

from threadline.stores._listing import ConversationInfo
from threadline.stores._redis_keys import Layout
from threadline.stores._redis_scripts import CURRENT
from threadline.stores.base import check_list_page
from threadline.stores.base import validate_conversation_id
from threadline.stores.forks import decode_parent

__all__ = ["INFO", "AsyncRedisListing", "RedisListing", "page_arguments"]

# KEYS: as for the write scripts (the list, the id hash, the index, the version, the parent
# record, the log). Returns {version, length, parent record or nil}.
INFO = (
    CURRENT
    + """
return {current(), redis.call('LLEN', KEYS[1]), redis.call('GET', KEYS[5])}
"""
)


def page_arguments(limit: int | None, after: str | None) -> dict[str, Any]:
    """The arguments of ``zrangebylex`` on the index for a page of at most ``limit`` ids after
    ``after`` (``None``: from the first; ``limit`` ``None``: to the last)."""
    arguments: dict[str, Any] = {"min": "-" if after is None else f"({after}", "max": "+"}
    if limit is not None:
        arguments.update(start=0, num=limit)
    return arguments


def _text(item: Any) -> str:
    return item.decode() if isinstance(item, bytes) else str(item)


def _info(conversation_id: str, reply: list[Any]) -> ConversationInfo | None:
    """The info in an ``INFO`` reply; ``None`` for a conversation of no message and no parent."""
    version, held, record = int(reply[0]), int(reply[1]), reply[2] if len(reply) > 2 else None
    parent = decode_parent(record)
    if not held and parent is None:
        return None
    return ConversationInfo(conversation_id, version, held, parent)


def _merged(replies: list[list[Any]], limit: int | None) -> list[str]:
    """The page of a cluster listing: every bucket's page, in code point order (the order of
    the ids' UTF-8 bytes, as one index lists them), cut to ``limit``."""
    found = sorted((_text(item) for reply in replies for item in reply), key=str.encode)
    return found if limit is None else found[:limit]


class RedisListing:
    """``list_conversations`` and ``conversation_info`` of `RedisStore`."""

    _NAME: ClassVar[str]
    _client: Any
    _info_script: Any
    _index: str
    _clustered: bool
    _layout: Layout

    if TYPE_CHECKING:  # the store's own

        def _failing(self, doing: str, *errors: type[Exception]) -> Any: ...
        def _keys(self, conversation_id: str) -> list[str]: ...

    def list_conversations(self, limit: int | None = None, after: str | None = None) -> list[str]:
        """The ids of the conversations that hold at least one message, in code point order.

        One ``ZRANGEBYLEX`` on the index: a page of k ids costs O(log n + k) on the server,
        for n conversations. On a cluster, one on each of the 256 buckets' indexes, merged.

        Args:
            limit: at most this many ids (``None``: all of them).
            after: only the ids after this one (the last id of the page before).

        Raises:
            threadline.ValidationError: ``limit`` is not ``None`` or an ``int`` >= 1, or
                ``after`` is not ``None`` or a conversation id.
            threadline.StoreError: the server cannot be reached or refused the command.
        """
        limit, after = check_list_page(limit, after, f"{self._NAME}.list_conversations")
        arguments = page_arguments(limit, after)
        with self._failing("list conversations"):
            if not self._clustered:
                found = self._client.zrangebylex(self._index, **arguments)
                return [_text(item) for item in found]
            pipeline = self._client.pipeline(transaction=False)
            for index in self._layout.indexes():
                pipeline.zrangebylex(index, **arguments)
            replies = pipeline.execute()
        return _merged(replies, limit)

    def conversation_info(self, conversation_id: str) -> ConversationInfo | None:
        """The conversation's version, message count and parent, in one Lua script (one
        round trip, one atomic step); ``None`` when it holds no message and is no branch.

        The store keeps no times: ``created_at`` and ``updated_at`` are ``None``.

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: the server cannot be reached or refused the command, or
                the parent record is damaged.
        """
        validate_conversation_id(conversation_id)
        with self._failing(f"read the info of conversation {conversation_id!r}", ValueError):
            return _info(conversation_id, self._info_script(keys=self._keys(conversation_id)))


class AsyncRedisListing:
    """``list_conversations`` and ``conversation_info`` of `AsyncRedisStore`."""

    _NAME: ClassVar[str]
    _client: Any
    _info_script: Any
    _index: str
    _clustered: bool
    _layout: Layout

    if TYPE_CHECKING:  # the store's own

        def _failing(self, doing: str, *errors: type[Exception]) -> Any: ...
        def _keys(self, conversation_id: str) -> list[str]: ...

    async def list_conversations(
        self, limit: int | None = None, after: str | None = None
    ) -> list[str]:
        """The ids in code point order, a page at a time, as for
        [`RedisStore.list_conversations`][].

        Raises:
            threadline.ValidationError: ``limit`` or ``after`` is invalid.
            threadline.StoreError: the server cannot be reached or refused the command.
        """
        limit, after = check_list_page(limit, after, f"{self._NAME}.list_conversations")
        arguments = page_arguments(limit, after)
        with self._failing("list conversations"):
            if not self._clustered:
                found = await self._client.zrangebylex(self._index, **arguments)
                return [_text(item) for item in found]
            pipeline = self._client.pipeline(transaction=False)
            for index in self._layout.indexes():
                pipeline.zrangebylex(index, **arguments)
            replies = await pipeline.execute()
        return _merged(replies, limit)

    async def conversation_info(self, conversation_id: str) -> ConversationInfo | None:
        """What [`RedisStore.conversation_info`][] reads, in one round trip; ``None`` when it
        holds no message and is no branch.

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: as for ``RedisStore.conversation_info``.
        """
        validate_conversation_id(conversation_id)
        with self._failing(f"read the info of conversation {conversation_id!r}", ValueError):
            reply = await self._info_script(keys=self._keys(conversation_id))
            return _info(conversation_id, reply)
