"""Watching a conversation: the async iterator every store's ``watch`` returns.

A [`Watch`][threadline.stores.Watch] yields what is appended to one conversation after a
version, one ``list`` of messages per write, in order, exactly once. It is the same engine on
every store; a store gives it a *source*, which knows two things:

- **how to read what changed since the watcher's version**, consistently (one Lua script on
  Redis, one snapshot on PostgreSQL, a version read around a load elsewhere): the batches
  appended since, or, when the conversation was replaced or deleted since (or the source
  cannot tell), the whole conversation;
- **how to wait** until something may have changed: Redis blocks on the conversation's log of
  writes (``XREAD``), PostgreSQL on ``LISTEN``, and the other stores sleep ``poll_interval``
  seconds between cheap ``version`` reads.

Waiting is only a wake-up: what a watcher yields always comes from the read, which starts at the
watcher's own last version. So a notification lost with a dropped connection or a restarted
server costs nothing but time: on the next read (after reconnecting) the watcher catches up,
and never skips or repeats a message. Connection losses (the source's ``transient`` errors)
are waited out, retrying with a growing pause of at most a second; other errors end the watch.

A replace or delete by another writer is not an append: the watch raises
[`ConversationReplacedError`][threadline.ConversationReplacedError] with the whole conversation
as it is now and moves on to its version, so iterating again goes on from there.

`poll_source` is the source of any store with ``version`` and ``load`` (blocking or async),
for stores that have no way to push: memory, JSONL and SQLite use it.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
from collections import deque
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Protocol

from threadline.errors import ConversationReplacedError
from threadline.messages import Message
from threadline.stores._closing import AsyncClosing
from threadline.stores.base import check_version_argument
from threadline.stores.base import validate_conversation_id

__all__ = [
    "DEFAULT_POLL_INTERVAL",
    "UNLOGGED",
    "PollingWatch",
    "Since",
    "Source",
    "Watch",
    "check_after_version",
    "digest",
    "poll_source",
    "replaced",
]

DEFAULT_POLL_INTERVAL = 0.1
"""Seconds a polling watch waits between two reads of the conversation's version."""

_MAX_PAUSE = 1.0  # seconds: the longest wait before retrying after a lost connection


@dataclass
class Since:
    """What changed after the watcher's version: appends, or the whole conversation."""

    version: int
    """The conversation's version the read saw."""
    batches: list[tuple[int, list[Message]]] = field(default_factory=list)
    """The batches appended since, in order, each with the version after it (a batch is one
    write, or several when the source could not tell them apart)."""
    whole: list[Message] | None = None
    """Not ``None``: the conversation was replaced or deleted since (or the source cannot tell
    what changed: ``cause`` says why); this is all of it now."""
    cause: str | None = None
    """Why the source gives the whole conversation when it cannot tell that it was replaced or
    deleted (``None``: it was)."""


class Source(Protocol):
    """How a [`Watch`][threadline.stores.Watch] reads and waits, for one store and conversation."""

    transient: tuple[type[BaseException], ...]
    """Errors that mean a lost connection: the watch waits and reads again."""

    async def read(self, after: int | None) -> Since:
        """What changed since the last read, or, on the first read, since ``after`` (``None``:
        start at the current version and yield nothing yet)."""
        ...

    async def wait(self) -> None:
        """Return when something may have changed since the last read (or after a while)."""
        ...

    async def close(self) -> None:
        """Release what waiting holds (a connection); a later ``read`` opens it again."""
        ...


class Watch(AsyncClosing):
    """An async iterator of the batches appended to one conversation after a version.

    Made by a store's ``watch(conversation_id, after_version=None)``. Each item is the list of
    messages one write appended (when the watch had to catch up after missed notifications,
    or a polling store saw several writes at once, the writes made meanwhile come as one list),
    oldest first, each message exactly once. Writes from this process come too: a watch
    cannot tell writers apart.

    A replace or delete after the watch's version raises
    [`ConversationReplacedError`][threadline.ConversationReplacedError], carrying the whole
    conversation and its version; the watch is then at that version, and iterating it again
    goes on. Stop it by breaking out of the loop and calling [`aclose`][], by
    ``async with``, or by cancelling its task.
    """

    def __init__(self, source: Source, conversation_id: str, after_version: int | None) -> None:
        self._source = source
        self._conversation_id = conversation_id
        self._after = after_version
        self._version = after_version
        self._ready: deque[tuple[int, list[Message]]] = deque()
        self._started = False
        self._closed = False

    @property
    def version(self) -> int | None:
        """The version after the last batch yielded (or raised); ``None`` before the first
        read of a watch started without ``after_version``. Pass it as ``after_version`` to
        resume in another watch."""
        return self._version

    def __aiter__(self) -> Watch:
        return self

    async def __anext__(self) -> list[Message]:
        pause = 0.05
        lost = False  # a connection was lost: what changed meanwhile may never be notified
        while True:
            if self._ready:
                self._version, batch = self._ready.popleft()
                return batch
            if self._closed:
                raise StopAsyncIteration
            try:
                if self._started and not lost:
                    await self._source.wait()
                lost = False
                since = await self._source.read(self._after if not self._started else None)
            except self._source.transient:
                lost = True  # so read again first, once reconnected
                await self._source.close()
                await asyncio.sleep(pause)
                pause = min(pause * 2, _MAX_PAUSE)
                continue
            pause = 0.05
            self._started = True
            self._take(since)

    def _take(self, since: Since) -> None:
        if since.whole is not None:
            before = self._version
            self._version = since.version
            raise replaced(self._conversation_id, before, since.version, since.whole, since.cause)
        self._ready.extend((version, batch) for version, batch in since.batches if batch)
        if not self._ready:
            self._version = since.version

    async def aclose(self) -> None:
        """Stop the watch and release its connection; iterating it afterwards ends at once."""
        self._closed = True
        self._ready.clear()
        await self._source.close()


def replaced(
    conversation_id: str,
    before: int | None,
    version: int,
    messages: Sequence[Message],
    cause: str | None = None,
) -> ConversationReplacedError:
    """The error of a watch that found the conversation replaced, or (``cause`` says why)
    cannot tell what changed."""
    after = before if before is not None else "?"
    happened = (
        f"was replaced or deleted after version {after}"
        if cause is None
        else f"cannot be watched write by write from version {after}: {cause}"
    )
    return ConversationReplacedError(
        f"conversation {conversation_id!r} {happened} (it is at version {version} now, with "
        f"{len(messages)} messages): take error.messages as the whole conversation; the watch "
        "goes on from there",
        conversation_id=conversation_id,
        expected=before or 0,
        actual=version,
        messages=messages,
    )


def check_after_version(after_version: object, where: str) -> int | None:
    """``after_version`` checked by `check_version_argument`."""
    return check_version_argument(after_version, "after_version", where)


def digest(messages: Sequence[Message]) -> bytes:
    """A digest of ``messages``' JSON, to tell whether a conversation still starts with them."""
    hasher = hashlib.blake2b(digest_size=16)
    for message in messages:
        hasher.update(message.model_dump_json().encode())
        hasher.update(b"\n")
    return hasher.digest()


UNLOGGED = (
    "the store keeps no log of its writes, so what changed between that version and the "
    "first read is unknown"
)


class _Polling:
    """The source of a store with ``version`` and ``load``: poll the version, load on a change."""

    transient: tuple[type[BaseException], ...] = ()

    def __init__(
        self,
        version: Callable[[], Awaitable[int]],
        load: Callable[[], Awaitable[list[Message]]],
        interval: float,
    ) -> None:
        self._read_version = version
        self._load = load
        self._interval = interval
        self._known: tuple[int, int, bytes] | None = None  # version, length, digest

    def seed(self, messages: list[Message], version: int, after: int) -> None:
        """Start from ``messages`` at ``version``, read before the first ``read``, when that is
        the version the watch starts after."""
        if version == after:
            self._known = (version, len(messages), digest(messages))

    async def read(self, after: int | None) -> Since:
        known = self._known
        if known is not None and await self._read_version() == known[0]:
            return Since(known[0])
        messages, version = await self._consistent()
        if known is None:
            self._known = (version, len(messages), digest(messages))
            if after is None or after == version:
                return Since(version)
            return Since(version, whole=messages, cause=UNLOGGED)
        _, length, head = known
        self._known = (version, len(messages), digest(messages))
        if len(messages) >= length and digest(messages[:length]) == head:
            return Since(version, [(version, messages[length:])])
        return Since(version, whole=messages)

    async def _consistent(self) -> tuple[list[Message], int]:
        """The messages and the version they are at (a version that did not move around the
        load is theirs: versions never go back)."""
        version = await self._read_version()
        while True:
            messages = await self._load()
            after = await self._read_version()
            if after == version:
                return messages, version
            version = after

    async def wait(self) -> None:
        await asyncio.sleep(self._interval)

    async def close(self) -> None:
        return None


def poll_source(store: Any, conversation_id: str, poll_interval: float, where: str) -> _Polling:
    """The polling source of ``store`` (blocking calls run in a worker thread).

    Raises:
        threadline.ValidationError: the id is invalid.
        ValueError: ``poll_interval`` is not a positive number.
    """
    validate_conversation_id(conversation_id)
    if (
        isinstance(poll_interval, bool)
        or not isinstance(poll_interval, (int, float))
        or not poll_interval > 0
    ):
        raise ValueError(
            f"{where}: poll_interval must be a number of seconds > 0, not {poll_interval!r}"
        )
    read_version: Callable[[], Awaitable[int]]
    load: Callable[[], Awaitable[list[Message]]]
    if inspect.iscoroutinefunction(store.load):

        async def read_version() -> int:
            return int(await store.version(conversation_id))

        async def load() -> list[Message]:
            return list(await store.load(conversation_id))

    else:

        async def read_version() -> int:
            return int(await asyncio.to_thread(store.version, conversation_id))

        async def load() -> list[Message]:
            return list(await asyncio.to_thread(store.load, conversation_id))

    return _Polling(read_version, load, float(poll_interval))


class PollingWatch:
    """Mixed into a store with ``version`` and ``load`` (blocking or async): ``watch`` by
    polling."""

    def watch(
        self,
        conversation_id: str,
        after_version: int | None = None,
        *,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
    ) -> Watch:
        """An async iterator of the batches appended to the conversation after
        ``after_version`` (see [`Watch`][threadline.stores.Watch]), found by polling.

        The watch reads the conversation's ``version`` every ``poll_interval`` seconds (in a
        worker thread for a blocking store) and loads the conversation when it moved, so a
        batch may hold several writes made within one interval. Every process on the machine
        sees the same files, so a watch sees the writes of other processes too (a
        ``MemoryStore`` is one process's).

        Args:
            conversation_id: the conversation to watch.
            after_version: the version the caller has seen (``store.version`` read with its
                ``load``); ``None`` watches from the version at the first read. This store
                keeps no log of writes, so when the conversation is past ``after_version`` at
                the first read, the watch raises
                [`ConversationReplacedError`][threadline.ConversationReplacedError] with the
                whole conversation first.
            poll_interval: seconds between two reads of the version.

        Raises:
            threadline.ValidationError: the id or ``after_version`` is invalid.
            ValueError: ``poll_interval`` is not a number of seconds > 0.
        """
        where = f"{type(self).__name__}.watch"
        after = check_after_version(after_version, where)
        source = poll_source(self, conversation_id, poll_interval, where)
        if after is not None and not inspect.iscoroutinefunction(getattr(self, "load", None)):
            # A blocking store can tell now where the watch starts, so writes made before its
            # first read still come as batches.
            source.seed(*_consistent_blocking(self, conversation_id), after)
        return Watch(source, conversation_id, after)


def _consistent_blocking(store: Any, conversation_id: str) -> tuple[list[Message], int]:
    version = int(store.version(conversation_id))
    while True:
        messages = list(store.load(conversation_id))
        after = int(store.version(conversation_id))
        if after == version:
            return messages, version
        version = after
