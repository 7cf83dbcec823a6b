"""``AsyncRedisStore.watch`` and ``RedisStore.watch``: block on the conversation's log stream,
read what changed in one Lua script (a blocking store's calls run in a worker thread).

Only `threadline.stores.redis` imports this module, after checking that the driver is
installed.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import redis
import redis.exceptions

from threadline.messages import Message
from threadline.stores._redis_client import raised_by_driver
from threadline.stores._redis_scripts import CURRENT
from threadline.stores._redis_scripts import LOG_LENGTH
from threadline.stores._watch import Since

__all__ = ["BLOCKING_BLOCK_MS", "BLOCK_MS", "SINCE", "RedisSource", "joined"]

BLOCK_MS = 5_000
"""How long one ``XREAD`` blocks before the watcher reads the version again anyway."""

BLOCKING_BLOCK_MS = 1_000
"""The same for a blocking store, whose ``XREAD`` holds a worker thread: a watch closed or
cancelled meanwhile frees it within this time."""

# KEYS: as for the write scripts (the list, the id hash, the index, the version, the parent
# record, the log).
# ARGV: the watcher's version. Returns {version} when nothing changed; {version, n, c1..cn,
# texts...} when the n writes since were appends of c1..cn messages (the texts are theirs, in
# order); {version, -1, texts...} (the whole conversation) when one was a replace or delete;
# {version, -2, texts...} when the log does not hold every write since (the watcher fell more
# than the log's ~LOG_LENGTH writes behind, or an entry could not be added): what those writes
# were is unknown.
SINCE = (
    CURRENT
    + """
local version = current()
local after = tonumber(ARGV[1])
if version == after then
    return {version}
end
local counts = {}
local total = 0
local exact = version > after
local gap = false
if exact then
    local entries = redis.call('XRANGE', KEYS[6], (after + 1) .. '-0', '+')
    local expected = after + 1
    for _, entry in ipairs(entries) do
        local id, fields = entry[1], entry[2]
        local kind, count = nil, nil
        for i = 1, #fields, 2 do
            if fields[i] == 'k' then kind = fields[i + 1] end
            if fields[i] == 'n' then count = tonumber(fields[i + 1]) end
        end
        if tonumber(string.match(id, '^(%d+)-')) ~= expected then
            exact = false
            gap = true
            break
        end
        if kind ~= 'a' or not count then
            exact = false
            break
        end
        counts[#counts + 1] = count
        total = total + count
        expected = expected + 1
    end
    if exact and expected ~= version + 1 then
        exact = false
        gap = true
    end
end
local reply = {version}
if exact then
    reply[2] = #counts
    for _, count in ipairs(counts) do
        reply[#reply + 1] = count
    end
    if total > 0 then
        for _, text in ipairs(redis.call('LRANGE', KEYS[1], -total, -1)) do
            reply[#reply + 1] = text
        end
    end
    return reply
end
reply[2] = gap and -2 or -1
for _, text in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
    reply[#reply + 1] = text
end
return reply
"""
)


class RedisSource:
    """A watch's reads and waits on Redis (see `threadline.stores._watch.Source`)."""

    # A lost connection, or on a cluster a node down or its slots moving: wait and read again.
    transient: tuple[type[BaseException], ...] = (
        redis.ConnectionError,
        redis.TimeoutError,
        redis.exceptions.ClusterDownError,
        redis.exceptions.TryAgainError,
    )

    def __init__(self, store: Any, conversation_id: str) -> None:
        self._store = store
        self._conversation_id = conversation_id
        self._keys: list[str] = store._keys(conversation_id)
        self._log = store._log_key(conversation_id)
        self._version: int | None = None
        self._blocking = not inspect.iscoroutinefunction(store.load)

    async def _run(self, script: Any, **arguments: Any) -> Any:
        """Run a registered script (or command), in a worker thread for a blocking store."""
        if self._blocking:
            return await asyncio.to_thread(script, **arguments)
        return await script(**arguments)

    async def read(self, after: int | None) -> Since:
        with _dropped():
            return await self._read(after)

    async def _read(self, after: int | None) -> Since:
        store = self._store
        known = self._version if self._version is not None else after
        if known is None:
            self._version = int(await self._run(store._version, keys=self._keys))
            return Since(self._version)
        reply = await self._run(store._since, keys=self._keys, args=[known])
        version = int(reply[0])
        self._version = version
        if len(reply) == 1:
            return Since(version)
        writes = int(reply[1])
        if writes < 0:
            whole = await self._messages(reply[2:])
            if writes == -2:
                return Since(version, whole=whole, cause=_behind(known, LOG_LENGTH))
            return Since(version, whole=whole)
        counts = [int(count) for count in reply[2 : 2 + writes]]
        messages = await self._messages(reply[2 + writes :])
        batches: list[tuple[int, list[Message]]] = []
        start = 0
        for index, count in enumerate(counts):
            batches.append((known + index + 1, messages[start : start + count]))
            start += count
        return Since(version, batches)

    async def _messages(self, texts: list[Any]) -> list[Message]:
        store = self._store
        with store._failing(f"watch conversation {self._conversation_id!r}", ValueError):
            payload = joined(texts)
            messages: list[Message] = store._messages(payload)
        restored: list[Message] = await store._restored_async(
            messages, payload, self._conversation_id
        )
        return restored

    async def wait(self) -> None:
        streams = {self._log: f"{self._version or 0}-0"}
        block = BLOCKING_BLOCK_MS if self._blocking else BLOCK_MS
        with _dropped():
            await self._run(self._store._client.xread, streams=streams, count=1, block=block)

    async def close(self) -> None:
        return None


@contextmanager
def _dropped() -> Iterator[None]:
    """The ``AttributeError`` redis-py's async cluster client raises from its own code on a
    connection another task closed (a node dropped) as the lost connection it is."""
    try:
        yield
    except AttributeError as error:
        if not raised_by_driver(error):
            raise
        raise redis.ConnectionError(f"connection lost: {error}") from error


def _behind(known: int, kept: int) -> str:
    return (
        f"the watch fell behind: the conversation's log keeps only its last ~{kept:,} writes "
        f"and no longer holds every write after version {known}, so what they were (appends, "
        "or a replace or delete) is unknown"
    )


def joined(raw: list[Any]) -> bytes | None:
    """The stored JSON strings as one JSON array (``None`` for none), to validate in one call."""
    if not raw:
        return None
    if isinstance(raw[0], str):  # a client made with decode_responses=True
        return ("[" + ",".join(raw) + "]").encode()
    return b"[" + b",".join(raw) + b"]"
