"""``RedisStore`` and ``AsyncRedisStore``: conversations in Redis, shared by every worker.

Layout, for the default ``prefix="threadline:"``::

    threadline:conv:<conversation id>   LIST  one element per message, oldest first: its JSON
                                              (Message.model_dump_json())
    threadline:index:conversations      ZSET  the ids holding messages, all with score 0, so
                                              ZRANGE returns them sorted
    threadline:ids:<conversation id>    HASH  message id -> a digest of its JSON, for every
                                              message the list holds
    threadline:ver:<conversation id>    STRING the conversation's version (kept after a
                                              delete, so a version never goes back)
    threadline:parent:<conversation id> STRING a branch's parent record (fork()), JSON:
                                              {"conversation_id": ..., "at": ...}
    threadline:log:<conversation id>    STREAM one entry per write, with the id
                                              ``<version>-0``: ``k`` (``a`` append, ``r``
                                              replace or delete) and ``n`` (messages); the
                                              last ~1,000 are kept, for ``watch``

On a Redis Cluster (``cluster=True``, or a cluster client) every key above carries its
conversation's bucket's hash tag (``threadline:conv:{460}<id>``) and each of the 256 buckets
keeps its own index (``threadline:index:{460}conversations``), so every script's keys share one
slot; see `threadline.stores._redis_keys` and ``docs/stores.md``. Listing reads every bucket's
index. Everything below holds on a cluster too.

Why it holds up:

- **No two stores share a key.** Every key is ``<prefix><kind>:<name>``: the prefix is empty or ends
  with ``:``, the kind is a fixed word (``conv``, ``ids``, ``index``, ``ver``, ``parent``, ``log``)
  and the name is percent-encoded, so it never holds a ``:`` (``user:7`` is ``user%3A7``). Read from
  the right, a key has one reading: the name after the last ``:``, the kind before it, the prefix
  the rest. So stores with different prefixes never touch each other's keys, however the prefixes
  nest (``acme:`` and ``acme:conv:``), and no id reaches another id's key or the index.

- **A batch is atomic.** ``append`` is one Lua script and ``replace`` one ``MULTI`` /
  ``EXEC``: the list, the id hash and the index change together, Redis runs either as one step,
  so no reader sees part of a batch and no other writer gets between its messages, in any
  process on any machine.
- **A retried write stores nothing twice.** ``append`` runs as one Lua script: it looks the
  batch's message ids up in the conversation's id hash, skips the messages stored with the same
  JSON (a batch sent again after its reply was lost), refuses the batch when an id names a
  different message, and pushes the rest, all in one atomic step. (Conversations an older
  threadline wrote have no id hash for their earlier messages: a replay of those is not
  recognised.)
- **``replace`` and ``delete`` are atomic.** Each is one Lua script: ``DEL`` and ``RPUSH`` (or
  ``ZREM`` for ``[]``), the id hash with them.
- **Versions are checked and stepped inside the scripts.** Every write script reads the version
  key, compares it with ``expected_version`` and increments it in the same atomic step. A
  conversation written before versions existed (no version key) is at version ``LLEN`` (its
  message count) until its next write sets the key.
- **A fork is one Lua script.** ``fork`` loads the parent, then one script checks that the new
  id holds no list and no parent key, pushes the copied messages, fills the id hash, steps the
  version and sets the parent key; ``delete`` (and ``replace`` with ``[]``) removes that key.
- **Watching is pushed, and exact.** Every write script adds an entry to the conversation's
  log stream, in the same atomic step. ``watch`` (on both twins) blocks on that stream
  (``XREAD``), then one Lua script reads the version, the log entries after the watcher's
  version and the messages they appended: so after a dropped connection or a server restart
  the watcher catches up from its last version, write by write, as long as the log still
  holds the entries after it (otherwise it raises
  [`ConversationReplacedError`][threadline.ConversationReplacedError] with the whole
  conversation).
- **``load`` is one ``LRANGE``** (a consistent view); the JSON strings are joined into one JSON
  array and validated in a single pydantic call.
- **A write is never retried behind the caller's back.** When the connection drops after
  ``EXEC`` was sent, the batch may or may not have been applied; retrying could store it twice.
  So the client this store builds does not retry: the call raises
  [`StoreError`][] and the next call reconnects. (redis-py replaces a pooled
  connection the server has closed before using it, so a server restart between calls raises
  nothing at all.)
- **Durability is the server's.** A batch survives a Redis restart only as far as the server
  persists it (``appendonly yes``; ``appendfsync always`` makes every acknowledged batch
  durable). See ``docs/stores.md`` for deployment notes.

The driver (``redis``, the extra ``threadline[redis]``) is imported with this module, which
``threadline.stores`` loads only when ``RedisStore`` or ``AsyncRedisStore`` is first used.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any
from typing import ClassVar
from typing import cast

from threadline.messages import Message
from threadline.stores._appended import Appended
from threadline.stores._closing import AsyncClosing
from threadline.stores._closing import Closing
from threadline.stores._redis_fork import FORK_SCRIPT
from threadline.stores._redis_keys import Layout
from threadline.stores._redis_scripts import APPEND
from threadline.stores._redis_scripts import LOG_LENGTH as _LOG_LENGTH
from threadline.stores._redis_scripts import REPLACE
from threadline.stores._redis_scripts import VERSION
from threadline.stores._replays import Batch
from threadline.stores._rows import JsonRows
from threadline.stores._watch import Watch
from threadline.stores._watch import check_after_version
from threadline.stores.base import check_load_after
from threadline.stores.base import check_write
from threadline.stores.base import conflict
from threadline.stores.base import reused_id
from threadline.stores.base import validate_conversation_id
from threadline.stores.blobs import DEFAULT_BLOB_THRESHOLD
from threadline.stores.blobs import BlobStore
from threadline.stores.forks import afork_source
from threadline.stores.forks import decode_parent
from threadline.stores.forks import encode_parent
from threadline.stores.forks import fork_source
from threadline.stores.forks import taken

try:
    import redis
    import redis.asyncio
    import redis.asyncio.cluster
    import redis.cluster
except ImportError as error:  # pragma: no cover - exercised in a subprocess
    raise ImportError(
        'RedisStore and AsyncRedisStore need the redis package: pip install "threadline[redis]"',
        name="redis",
    ) from error

# After the check above: they import the driver too.
from threadline.stores._redis_client import ASYNC_CLIENT_OPTIONS
from threadline.stores._redis_client import CLIENT_OPTIONS
from threadline.stores._redis_client import check_arguments
from threadline.stores._redis_client import clustered
from threadline.stores._redis_client import describe
from threadline.stores._redis_client import failing
from threadline.stores._redis_listing import INFO
from threadline.stores._redis_listing import AsyncRedisListing
from threadline.stores._redis_listing import RedisListing
from threadline.stores._redis_watch import SINCE
from threadline.stores._redis_watch import RedisSource
from threadline.stores._redis_watch import joined

__all__ = ["DEFAULT_PREFIX", "LOG_LENGTH", "AsyncRedisStore", "RedisStore"]

DEFAULT_PREFIX = "threadline:"
"""The default start of every key a Redis store writes."""


class _RedisStoreBase(JsonRows):
    """What `RedisStore` and `AsyncRedisStore` share: the arguments, the keys, the
    batches, the commands a write queues and the errors. The twins only send and wait."""

    _NAME: ClassVar[str]
    _client: Any  # redis.Redis or redis.asyncio.Redis, as the twin builds it

    def __init__(
        self,
        url: str | None,
        prefix: str,
        client: object,
        blobs: BlobStore | None,
        blob_threshold: int,
        cluster: bool,
    ) -> None:
        check_arguments(self._NAME, url, client, prefix)
        self.prefix = prefix
        self.blobs = blobs
        self.blob_threshold = blob_threshold
        self._url = url
        self._owns_client = client is None
        self._clustered = clustered(self._NAME, client, cluster, prefix)
        self._layout = Layout(prefix, self._clustered)

    def __repr__(self) -> str:
        client = self._client if self._url is None else None
        return describe(self._NAME, self._url, client, self.prefix, self._clustered)

    def _checked(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        expected_version: object,
        method: str,
    ) -> tuple[list[Message], str]:
        """The arguments of ``method`` (``append`` or ``replace``), by `check_write`; the version as
        the scripts take it (``""`` for none)."""
        items, expected = check_write(
            conversation_id, messages, expected_version, f"{self._NAME}.{method}"
        )
        return items, "" if expected is None else str(expected)

    def _failing(self, doing: str, *errors: type[Exception]) -> AbstractContextManager[None]:
        """Raise the driver's errors (and ``errors``) as `StoreError` (on a cluster too: its
        client raises ``RedisClusterException``, which is no ``RedisError``)."""
        return failing(f"{self!r} could not {doing}", not self._clustered, *errors)

    def _batch(
        self, conversation_id: str, items: list[Message], texts: list[str], method: str
    ) -> _Batch:
        return _Batch(conversation_id, items, texts, f"{self._NAME}.{method}")

    def _register_scripts(self, client: Any) -> None:
        self._append = client.register_script(APPEND)
        self._replace = client.register_script(REPLACE)
        self._version = client.register_script(VERSION)
        self._fork = client.register_script(FORK_SCRIPT)
        self._since = client.register_script(SINCE)
        self._info_script = client.register_script(INFO)

    def _after(self, reply: list[Any], after: int) -> tuple[int, bytes | None, bool]:
        """The version, the rows (as one JSON array) and ``replaced`` of a ``SINCE`` reply."""
        version = int(reply[0])
        if len(reply) == 1:
            return version, None, False
        writes = int(reply[1])
        rows = reply[2:] if writes < 0 else reply[2 + writes :]
        return version, joined(rows), writes < 0 and after != 0

    def _fork_args(
        self, conversation_id: str, new_id: str, point: int, items: list[Message], texts: list[str]
    ) -> list[str | int]:
        """The fork script's ARGV."""
        rows = self._batch(new_id, items, texts, "fork").unique()
        return [
            new_id,
            encode_parent(conversation_id, point),
            len(rows),
            *(message_id for message_id, _, _ in rows),
            *(digest for _, digest, _ in rows),
            *(text for _, _, text in rows),
        ]

    def _forked(self, result: object, new_id: str) -> None:
        if isinstance(result, int) and result < 0:
            raise taken(new_id, f"{self._NAME}.fork")

    def _key(self, conversation_id: str) -> str:
        return self._layout.key("conv", conversation_id)

    def _ids_key(self, conversation_id: str) -> str:
        return self._layout.key("ids", conversation_id)

    def _keys(self, conversation_id: str) -> list[str]:
        """The keys a write touches, all in one hash slot on a cluster: the list, the id hash,
        the index, the version, the parent record, the log."""
        return self._layout.keys(conversation_id)

    def _log_key(self, conversation_id: str) -> str:
        """The conversation's log stream (``KEYS[6]`` of the scripts), which a watch reads."""
        return self._layout.key("log", conversation_id)

    def _parent_key(self, conversation_id: str) -> str:
        return self._layout.key("parent", conversation_id)

    @property
    def _index(self) -> str:
        """The index of a single server (a cluster keeps one per bucket: `Layout.indexes`)."""
        return self._layout.indexes()[0]


class RedisStore(RedisListing, _RedisStoreBase, Closing):
    """Conversations in Redis: one list per conversation, every write one Lua script.

    Safe to share between threads (redis-py's client holds a connection pool) and between
    processes on any number of machines: every guarantee is enforced by the server. After
    ``fork()`` the child opens its own connections.

    Args:
        url: the server, as ``redis://[[user]:password@]host[:port][/db]`` (``rediss://`` for
            TLS, ``unix://`` for a socket). Leave it out when passing ``client``.
        prefix: the start of every key this store writes (``<prefix>conv:<id>`` and
            ``<prefix>index:conversations``), so several applications or tenants can share a
            database: empty, or ending with ``:``. Stores with different prefixes never see
            each other's conversations, even when one prefix starts with another.
        client: a ``redis.Redis`` you configured yourself (timeouts, TLS, Sentinel...), or a
            ``redis.cluster.RedisCluster`` for a Redis Cluster, used instead of ``url``. The
            store never closes it, and it keeps its own retry policy: a client that retries a
            command after its connection dropped may apply a ``replace`` twice.
        blobs: where to keep file bytes longer than ``blob_threshold`` instead of in the
            message JSON; ``None`` keeps them inline.
        blob_threshold: file bytes longer than this go to ``blobs``.
        cluster: ``url`` names a node of a Redis Cluster (Valkey cluster, ElastiCache or
            MemoryStore in cluster mode): the store builds a ``RedisCluster`` client and keeps
            each conversation's keys in one hash slot (see ``docs/stores.md``). A cluster
            ``client`` implies it.

    Raises:
        ValueError: neither or both of ``url`` and ``client`` were given, the URL is not a
            Redis URL, ``prefix`` is not a string ending with ``:`` (or empty) or, on a
            cluster, holds ``{`` or ``}``, or ``cluster=True`` came with a single-server
            client.
        threadline.StoreError: ``cluster=True`` and no node at ``url`` answered (the cluster
            client learns the slots when it is built).
    """

    _NAME = "RedisStore"

    def __init__(
        self,
        url: str | None = None,
        *,
        prefix: str = DEFAULT_PREFIX,
        client: redis.Redis | redis.cluster.RedisCluster | None = None,
        blobs: BlobStore | None = None,
        blob_threshold: int = DEFAULT_BLOB_THRESHOLD,
        cluster: bool = False,
    ) -> None:
        super().__init__(url, prefix, client, blobs, blob_threshold, cluster)
        if client is None:
            if self._clustered:  # connects at once, to learn which node serves which slots
                with self._failing("reach the cluster"):
                    client = redis.cluster.RedisCluster.from_url(cast(str, url), **CLIENT_OPTIONS)
            else:
                client = redis.Redis.from_url(cast(str, url), **CLIENT_OPTIONS)
        self._client: redis.Redis | redis.cluster.RedisCluster = client
        self._register_scripts(client)

    def load(self, conversation_id: str) -> list[Message]:
        """The conversation's messages, oldest first; ``[]`` when it holds none.

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: the server cannot be reached or refused the command, a
                stored element is not a valid message, or a
                referenced blob is corrupt or unreadable (a missing one loads as a placeholder).
        """
        validate_conversation_id(conversation_id)
        with self._failing(f"load conversation {conversation_id!r}", ValueError):
            payload = joined(self._client.lrange(self._key(conversation_id), 0, -1))
            messages = self._messages(payload)
        return self._restored(messages, payload, conversation_id)

    def version(self, conversation_id: str) -> int:
        """The conversation's version: 0 when never written, one more after each write.

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: the server cannot be reached or refused the command.
        """
        validate_conversation_id(conversation_id)
        with self._failing(f"read the version of conversation {conversation_id!r}"):
            return int(self._version(keys=self._keys(conversation_id)))

    def load_after(self, conversation_id: str, version: int) -> Appended:
        """What was appended to the conversation after ``version``, read in one Lua script.

        Cost follows what changed: the script reads the conversation's log of writes after
        ``version`` and only the list's last elements those appends added.

        Args:
            conversation_id: the conversation.
            version: the version the caller holds it at.

        Returns:
            The messages appended since and the version now; or, ``replaced``, all of the
            conversation (replaced or deleted since, ``version`` newer than the store's, or
            older than the log's last ~``LOG_LENGTH`` writes).

        Raises:
            threadline.ValidationError: the id or ``version`` is invalid.
            threadline.StoreError: the server cannot be reached or refused the script, a
                stored element is not a valid message, or a referenced blob is corrupt.
        """
        after = check_load_after(conversation_id, version, f"{self._NAME}.load_after")
        with self._failing(f"load conversation {conversation_id!r} after a version", ValueError):
            reply = self._since(keys=self._keys(conversation_id), args=[after])
            current, payload, replaced = self._after(reply, after)
            messages = self._messages(payload)
        restored = self._restored(messages, payload, conversation_id)
        return Appended(current, restored, replaced)

    def append(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        """Add ``messages`` at the end of the conversation, in one Lua script.

        With ``expected_version``, the script writes only if the conversation is still at that
        version.

        Raises:
            threadline.ValidationError: the id is invalid or an item is not a ``Message``.
            threadline.ConflictError: the conversation is not at ``expected_version``
                (nothing was appended).
            threadline.StoreError: the server cannot be reached or refused the command. If
                the connection dropped after the script was sent, the batch may have been
                stored (whole); otherwise nothing was. Either way, sending it again is safe.
            threadline.ValidationError: (also) a message reuses the id of a different one;
                nothing was appended.
        """
        items, expected = self._checked(conversation_id, messages, expected_version, "append")
        if not items:
            return
        with self._failing(f"append to conversation {conversation_id!r}"):
            texts = self._rows(items, conversation_id)
            batch = self._batch(conversation_id, items, texts, "append")
            keys = self._keys(conversation_id)
            batch.check(self._append(keys=keys, args=batch.args(expected)))

    def replace(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        """Make ``messages`` the whole conversation in one Lua script; ``[]`` deletes it.

        Raises:
            threadline.ValidationError: the id is invalid or an item is not a ``Message``.
            threadline.ConflictError: the conversation is not at ``expected_version``
                (nothing changed).
            threadline.StoreError: the server cannot be reached or refused the command.
        """
        items, expected = self._checked(conversation_id, messages, expected_version, "replace")
        with self._failing(f"replace conversation {conversation_id!r}"):
            texts = self._rows(items, conversation_id)
            batch = self._batch(conversation_id, items, texts, "replace")
            keys = self._keys(conversation_id)
            batch.check(self._replace(keys=keys, args=batch.replace_args(expected)))

    def delete(self, conversation_id: str) -> None:
        """Remove the conversation, and step its version (even when it does not exist).

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: the server cannot be reached or refused the command.
        """
        validate_conversation_id(conversation_id)
        with self._failing(f"delete conversation {conversation_id!r}"):
            self._replace(keys=self._keys(conversation_id), args=[conversation_id, "", 0])

    def fork(self, conversation_id: str, new_id: str, at: int | None = None) -> None:
        """Copy the first ``at`` messages (all when ``None``) into the new conversation
        ``new_id`` and record its parent, in one Lua script.

        Raises:
            threadline.ValidationError: an id is invalid, the parent holds no message, ``at``
                is past its end, or ``new_id`` is in use (nothing was written).
            threadline.StoreError: the server cannot be reached or refused the command.
        """
        items, point = fork_source(self.load, conversation_id, new_id, at, "RedisStore.fork")
        with self._failing(f"fork conversation {conversation_id!r} into {new_id!r}"):
            args = self._fork_args(conversation_id, new_id, point, items, self._rows(items, new_id))
            self._forked(self._fork(keys=self._keys(new_id), args=args), new_id)

    def parent(self, conversation_id: str) -> tuple[str, int] | None:
        """``(parent id, at)`` of a conversation made by [`fork`][]; ``None`` otherwise.

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: the server cannot be reached, or the key is not a record.
        """
        validate_conversation_id(conversation_id)
        with self._failing(f"read the parent of conversation {conversation_id!r}", ValueError):
            return decode_parent(self._client.get(self._parent_key(conversation_id)))

    def watch(self, conversation_id: str, after_version: int | None = None) -> Watch:
        """An async iterator of the batches appended to the conversation after
        ``after_version``, one per write, as [`AsyncRedisStore.watch`][] yields them.

        It blocks on the conversation's log stream (``XREAD``) and runs its reads, on the
        store's client, in a worker thread each (an ``XREAD`` blocks at most a second, so a
        closed watch frees its thread soon). Iterate it in async code (``async for``).

        Raises:
            threadline.ValidationError: the id or ``after_version`` is invalid.
        """
        validate_conversation_id(conversation_id)
        after = check_after_version(after_version, f"{self._NAME}.watch")
        return Watch(RedisSource(self, conversation_id), conversation_id, after)

    def close(self) -> None:
        """Close the connections of the client this store made (never a ``client`` passed in)."""
        if self._owns_client:
            self._client.close()


class AsyncRedisStore(AsyncRedisListing, _RedisStoreBase, AsyncClosing):
    """The async twin of [`RedisStore`][] (``redis.asyncio``): same layout, same guarantees.

    A ``RedisStore`` and an ``AsyncRedisStore`` with the same prefix share conversations. Use
    one store per event loop: redis-py's async connections belong to the loop that opened
    them. Close it with ``await store.aclose()`` or ``async with``.

    Args:
        url: the server, as for [`RedisStore`][]. Leave it out when passing ``client``.
        prefix: the start of every key this store writes: empty, or ending with ``:``.
        client: a ``redis.asyncio.Redis`` you configured yourself, or a
            ``redis.asyncio.cluster.RedisCluster``, used instead of ``url``; the store never
            closes it.
        blobs: where to keep file bytes longer than ``blob_threshold``; its blocking
            ``put`` and ``get`` run in a worker thread.
        blob_threshold: file bytes longer than this go to ``blobs``.
        cluster: ``url`` names a node of a Redis Cluster, as for [`RedisStore`][] (the async
            cluster client connects at its first command).

    Raises:
        ValueError: as for [`RedisStore`][].
    """

    _NAME = "AsyncRedisStore"

    def __init__(
        self,
        url: str | None = None,
        *,
        prefix: str = DEFAULT_PREFIX,
        client: redis.asyncio.Redis | redis.asyncio.cluster.RedisCluster | None = None,
        blobs: BlobStore | None = None,
        blob_threshold: int = DEFAULT_BLOB_THRESHOLD,
        cluster: bool = False,
    ) -> None:
        super().__init__(url, prefix, client, blobs, blob_threshold, cluster)
        if client is None:
            url = cast(str, url)
            if self._clustered:
                client = redis.asyncio.cluster.RedisCluster.from_url(url, **ASYNC_CLIENT_OPTIONS)
            else:
                client = redis.asyncio.Redis.from_url(url, **ASYNC_CLIENT_OPTIONS)
        self._client: redis.asyncio.Redis | redis.asyncio.cluster.RedisCluster = client
        self._register_scripts(client)

    async def load(self, conversation_id: str) -> list[Message]:
        """The conversation's messages, oldest first; ``[]`` when it holds none.

        Raises:
            threadline.ValidationError: as for [`RedisStore.load`][].
            threadline.StoreError: as for [`RedisStore.load`][].
        """
        validate_conversation_id(conversation_id)
        with self._failing(f"load conversation {conversation_id!r}", ValueError):
            payload = joined(await self._client.lrange(self._key(conversation_id), 0, -1))
            messages = self._messages(payload)
        return await self._restored_async(messages, payload, conversation_id)

    async def version(self, conversation_id: str) -> int:
        """The conversation's version, as for [`RedisStore.version`][].

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: the server cannot be reached or refused the command.
        """
        validate_conversation_id(conversation_id)
        with self._failing(f"read the version of conversation {conversation_id!r}"):
            return int(await self._version(keys=self._keys(conversation_id)))

    async def load_after(self, conversation_id: str, version: int) -> Appended:
        """What was appended after ``version``, as for [`RedisStore.load_after`][].

        Raises:
            threadline.ValidationError: the id or ``version`` is invalid.
            threadline.StoreError: as for [`RedisStore.load_after`][].
        """
        after = check_load_after(conversation_id, version, f"{self._NAME}.load_after")
        with self._failing(f"load conversation {conversation_id!r} after a version", ValueError):
            reply = await self._since(keys=self._keys(conversation_id), args=[after])
            current, payload, replaced = self._after(reply, after)
            messages = self._messages(payload)
        restored = await self._restored_async(messages, payload, conversation_id)
        return Appended(current, restored, replaced)

    async def append(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        """Add ``messages`` at the end of the conversation, in one Lua script.

        Raises:
            threadline.ValidationError: as for [`RedisStore.append`][].
            threadline.ConflictError: as for [`RedisStore.append`][].
            threadline.StoreError: as for [`RedisStore.append`][].
        """
        items, expected = self._checked(conversation_id, messages, expected_version, "append")
        if not items:
            return
        with self._failing(f"append to conversation {conversation_id!r}"):
            texts = await self._rows_async(items, conversation_id)
            batch = self._batch(conversation_id, items, texts, "append")
            keys = self._keys(conversation_id)
            batch.check(await self._append(keys=keys, args=batch.args(expected)))

    async def replace(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        """Make ``messages`` the whole conversation in one Lua script; ``[]`` deletes it.

        Raises:
            threadline.ValidationError: as for [`RedisStore.replace`][].
            threadline.ConflictError: as for [`RedisStore.replace`][].
            threadline.StoreError: as for [`RedisStore.replace`][].
        """
        items, expected = self._checked(conversation_id, messages, expected_version, "replace")
        with self._failing(f"replace conversation {conversation_id!r}"):
            texts = await self._rows_async(items, conversation_id)
            batch = self._batch(conversation_id, items, texts, "replace")
            keys = self._keys(conversation_id)
            batch.check(await self._replace(keys=keys, args=batch.replace_args(expected)))

    async def delete(self, conversation_id: str) -> None:
        """Remove the conversation, and step its version (even when it does not exist).

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: the server cannot be reached or refused the command.
        """
        validate_conversation_id(conversation_id)
        with self._failing(f"delete conversation {conversation_id!r}"):
            await self._replace(keys=self._keys(conversation_id), args=[conversation_id, "", 0])

    async def fork(self, conversation_id: str, new_id: str, at: int | None = None) -> None:
        """Copy the first ``at`` messages into ``new_id``, as [`RedisStore.fork`][] does.

        Raises:
            threadline.ValidationError: as for [`RedisStore.fork`][].
            threadline.StoreError: as for [`RedisStore.fork`][].
        """
        items, point = await afork_source(
            self.load, conversation_id, new_id, at, "AsyncRedisStore.fork"
        )
        with self._failing(f"fork conversation {conversation_id!r} into {new_id!r}"):
            texts = await self._rows_async(items, new_id)
            args = self._fork_args(conversation_id, new_id, point, items, texts)
            self._forked(await self._fork(keys=self._keys(new_id), args=args), new_id)

    async def parent(self, conversation_id: str) -> tuple[str, int] | None:
        """``(parent id, at)`` of a branch, as for [`RedisStore.parent`][].

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: as for [`RedisStore.parent`][].
        """
        validate_conversation_id(conversation_id)
        with self._failing(f"read the parent of conversation {conversation_id!r}", ValueError):
            return decode_parent(await self._client.get(self._parent_key(conversation_id)))

    def watch(self, conversation_id: str, after_version: int | None = None) -> Watch:
        """An async iterator of the batches appended to the conversation after
        ``after_version``, one per write (see [`Watch`][threadline.stores.Watch]).

        Pushed: the watch blocks on the conversation's log stream (``XREAD``, on a connection
        of the store's client), which every write extends in its own atomic step, so it wakes
        as soon as any process on any machine writes. It reads from its last version each
        time, so a dropped connection or a server restart only delays it: it reconnects
        (waiting at most a second between tries) and catches up, write by write, without
        skipping or repeating a message.

        Args:
            conversation_id: the conversation to watch.
            after_version: the version the caller has seen (``await store.version(...)`` with
                its ``load``); ``None`` watches from the version at the first read. A watch
                that starts behind catches up exactly while the log holds the writes since
                (the last [`LOG_LENGTH`][threadline.stores.redis.LOG_LENGTH] or so).

        Raises:
            threadline.ValidationError: the id or ``after_version`` is invalid.
        """
        validate_conversation_id(conversation_id)
        after = check_after_version(after_version, f"{self._NAME}.watch")
        return Watch(RedisSource(self, conversation_id), conversation_id, after)

    async def aclose(self) -> None:
        """Close the connections of the client this store made (never a ``client`` passed in)."""
        if self._owns_client:
            await self._client.aclose()


LOG_LENGTH = _LOG_LENGTH
"""About how many of a conversation's latest writes its log keeps (``MAXLEN ~``): a watcher
that lost its connection for longer than that many writes reloads the whole conversation."""


class _Batch(Batch):
    """A batch's ids, JSON texts and their digests, as the append script takes them."""

    def __init__(
        self, conversation_id: str, items: list[Message], texts: list[str], where: str
    ) -> None:
        super().__init__(conversation_id, items, texts, where)
        self.digests = [hashlib.blake2b(t.encode(), digest_size=16).hexdigest() for t in texts]
        self.expected = ""  # the expected version sent with the script ("" for none)

    def args(self, expected: str) -> list[str | int]:
        """The append script's ARGV; raises first when two different messages in it share an
        id."""
        self.expected = expected
        self.kept({})  # raises when two different messages share an id
        ids, digests, texts = self.ids, self.digests, self.texts
        return [self.conversation_id, expected, len(ids), *ids, *digests, *texts]

    def replace_args(self, expected: str) -> list[str | int]:
        """The replace script's ARGV, without the replays of an earlier message."""
        self.expected = expected
        rows = self.unique()
        ids = [message_id for message_id, _, _ in rows]
        digests = [digest for _, digest, _ in rows]
        texts = [text for _, _, text in rows]
        return [self.conversation_id, expected, len(rows), *ids, *digests, *texts]

    def check(self, result: object) -> None:
        """Raise what the script found: a conflict, or an id stored with a different message."""
        if isinstance(result, list):
            actual = int(result[0])
            raise conflict(self.where, self.conversation_id, int(self.expected), actual)
        if isinstance(result, int) and result < 0:
            index = -result - 1
            raise reused_id(self.conversation_id, index, self.ids[index], self.where)

    def unique(self) -> list[tuple[str, str, str]]:
        """``(id, digest, JSON)`` of each message, without replays of one earlier in the batch."""
        rows = list(zip(self.ids, self.digests, self.texts, strict=True))
        kept = self.kept({})
        return rows if len(kept) == len(rows) else [rows[i] for i in kept]

    def _keys(self) -> list[str]:
        return self.digests
