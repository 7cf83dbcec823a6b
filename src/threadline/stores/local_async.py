"""``AsyncMemoryStore``, ``AsyncJsonlStore`` and ``AsyncSQLiteStore``: the async twins of the
stores that need no server, beside [`AsyncRedisStore`][threadline.stores.AsyncRedisStore] and
[`AsyncPostgresStore`][threadline.stores.AsyncPostgresStore].

Each wraps its blocking store and keeps its layout and guarantees, so a blocking store and its
twin on the same file or directory share conversations.

- **SQLite and file I/O block, so they run in the store's own worker threads**, never on the
  event loop: a small pool (``max_threads``, 4 by default) that the store owns. SQLite keeps
  one connection per thread, so the store opens at most ``max_threads`` connections and each
  is used by one thread; the blocking store's locking (SQLite's write lock, ``flock``) orders
  the writers of every thread and process alike.
- **A cancelled call leaves no half write.** A write runs in its thread from start to end: when
  the task awaiting it is cancelled (a timeout, a caller giving up), a write still waiting for
  a thread never starts, and one already running completes (one transaction, one locked
  ``pwrite``), so the batch is stored whole or not at all, as after a lost reply; sending it
  again is safe (message ids make writes idempotent).
- **Closing waits for the writes in flight.** ``await store.aclose()`` (or ``async with``)
  lets the threads finish what they started, then closes the connections; later calls raise
  [`StoreError`][threadline.StoreError].
- **``watch`` polls**, as the blocking stores' does: every ``poll_interval`` seconds it reads
  the conversation's version through the twin, and loads it when it moved, so it sees the
  writes of other processes on the same file or directory.
- ``AsyncMemoryStore`` needs no thread: every call holds the store's lock for a moment and
  never waits, so it runs on the loop and a cancellation can only fall before or after it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import os
import weakref
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from typing import ClassVar
from typing import Generic
from typing import TypeVar

from threadline.errors import StoreError
from threadline.messages import Message
from threadline.stores._appended import Appended
from threadline.stores._closing import AsyncClosing
from threadline.stores._listing import ConversationInfo
from threadline.stores._watch import PollingWatch
from threadline.stores.blobs import DEFAULT_BLOB_THRESHOLD
from threadline.stores.blobs import BlobStore
from threadline.stores.jsonl import JsonlStore
from threadline.stores.memory import MemoryStore
from threadline.stores.sqlite import SQLiteStore

__all__ = ["AsyncJsonlStore", "AsyncMemoryStore", "AsyncSQLiteStore"]

_S = TypeVar("_S", MemoryStore, JsonlStore, SQLiteStore)
_T = TypeVar("_T")


class _AsyncTwin(PollingWatch, AsyncClosing, Generic[_S]):
    """The async methods of a twin: each calls the blocking store's method (``_call``);
    ``watch`` polls the twin's own ``version`` and ``load``."""

    _store: _S

    async def _call(self, method: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}{repr(self._store).removeprefix(type(self._store).__name__)}"

    async def load(self, conversation_id: str) -> list[Message]:
        """The conversation's messages, oldest first; ``[]`` when it holds none.

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: as the blocking store's ``load``.
        """
        return await self._call(self._store.load, conversation_id)

    async def version(self, conversation_id: str) -> int:
        """The conversation's version: 0 when never written, one more after each write.

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: as the blocking store's ``version``.
        """
        return await self._call(self._store.version, conversation_id)

    async def load_after(self, conversation_id: str, version: int) -> Appended:
        """What was appended to the conversation after ``version`` (or, ``replaced``, all of
        it), as the blocking store's ``load_after`` reads it.

        Raises:
            threadline.ValidationError: the id or ``version`` is invalid.
            threadline.StoreError: as the blocking store's ``load_after``.
        """
        return await self._call(self._store.load_after, conversation_id, version)

    async def append(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        """Add ``messages`` at the end of the conversation, atomically (all or none).

        Raises:
            threadline.ValidationError: the id is invalid, an item is not a ``Message``, or a
                message reuses the id of a different one (nothing was appended).
            threadline.ConflictError: the conversation is not at ``expected_version``
                (nothing was appended).
            threadline.StoreError: as the blocking store's ``append``.
        """
        await self._write(self._store.append, conversation_id, messages, expected_version)

    async def replace(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        expected_version: int | None = None,
    ) -> None:
        """Make ``messages`` the whole conversation, atomically; ``[]`` deletes it.

        Raises:
            threadline.ValidationError: as for [`append`][].
            threadline.ConflictError: the conversation is not at ``expected_version``
                (nothing changed).
            threadline.StoreError: as the blocking store's ``replace``.
        """
        await self._write(self._store.replace, conversation_id, messages, expected_version)

    def _write(
        self,
        write: Callable[..., None],
        conversation_id: str,
        messages: Sequence[Message],
        expected_version: int | None,
    ) -> Awaitable[None]:
        """The call of the blocking store's ``append`` or ``replace`` (``write``), to await
        (a plain function, so a write costs no extra coroutine)."""
        # The list is taken now: a caller changing its list while the thread runs changes nothing.
        batch = list(messages) if isinstance(messages, list) else messages
        return self._call(write, conversation_id, batch, expected_version=expected_version)

    async def delete(self, conversation_id: str) -> None:
        """Remove the conversation, and step its version (even when it does not exist).

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: as the blocking store's ``delete``.
        """
        await self._call(self._store.delete, conversation_id)

    async def list_conversations(
        self, limit: int | None = None, after: str | None = None
    ) -> list[str]:
        """The ids of the conversations that hold at least one message, in code point order:
        all of them, or a page of at most ``limit`` after the id ``after``, at the blocking
        store's cost.

        Raises:
            threadline.ValidationError: ``limit`` is not ``None`` or an ``int`` >= 1, or
                ``after`` is not ``None`` or a conversation id.
            threadline.StoreError: as the blocking store's ``list_conversations``.
        """
        return await self._call(self._store.list_conversations, limit, after)

    async def conversation_info(self, conversation_id: str) -> ConversationInfo | None:
        """The conversation's version, message count, parent and times, as the blocking
        store's ``conversation_info`` reads them; ``None`` when it holds no message and is no
        branch.

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: as the blocking store's ``conversation_info``.
        """
        return await self._call(self._store.conversation_info, conversation_id)

    async def fork(self, conversation_id: str, new_id: str, at: int | None = None) -> None:
        """Copy the first ``at`` messages (all when ``None``) into the new conversation
        ``new_id`` and record its parent, atomically.

        Raises:
            threadline.ValidationError: an id is invalid, the parent holds no message, ``at``
                is past its end, or ``new_id`` is in use (nothing was written).
            threadline.StoreError: as the blocking store's ``fork``.
        """
        await self._call(self._store.fork, conversation_id, new_id, at)

    async def parent(self, conversation_id: str) -> tuple[str, int] | None:
        """``(parent id, at)`` of a conversation made by [`fork`][]; ``None`` otherwise.

        Raises:
            threadline.ValidationError: the id is invalid.
            threadline.StoreError: as the blocking store's ``parent``.
        """
        return await self._call(self._store.parent, conversation_id)


class _ThreadedTwin(_AsyncTwin[_S]):
    """A twin whose calls run in a pool of worker threads it owns."""

    _NAME: ClassVar[str]

    def __init__(self, store: _S, max_threads: int) -> None:
        if type(max_threads) is not int or max_threads < 1:
            _close(store)
            raise ValueError(f"{self._NAME}: max_threads must be an int >= 1, not {max_threads!r}")
        self._store = store
        self._executor = ThreadPoolExecutor(max_threads, thread_name_prefix=self._NAME)
        self._closed = False
        # A store dropped without aclose() lets its idle threads (and their connections) go.
        weakref.finalize(self, self._executor.shutdown, wait=False)

    async def _call(self, method: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
        if self._closed:
            raise StoreError(f"{self!r} is closed")
        # Cancelling the await cancels a call still waiting for a thread (it never runs); a
        # running one is left to finish, and the cancellation is raised once it has: a write is
        # whole or absent, never cut, and settled when the caller hears it was cancelled.
        future = self._executor.submit(functools.partial(method, *args, **kwargs))
        try:
            return await asyncio.shield(asyncio.wrap_future(future))
        except asyncio.CancelledError:
            if not future.cancel():
                await _settled(future)
            raise

    async def aclose(self) -> None:
        """Let the writes in flight finish, then close the connections; later calls raise
        [`StoreError`][threadline.StoreError]. Closing twice does nothing."""
        if self._closed:
            return
        self._closed = True
        await asyncio.get_running_loop().run_in_executor(None, self._shut_down)

    def _shut_down(self) -> None:
        self._executor.shutdown(wait=True)
        _close(self._store)


async def _settled(future: concurrent.futures.Future[Any]) -> None:
    """Wait until a call already running in a worker thread is done, however often the waiting
    task is cancelled meanwhile (its outcome is the caller's no more: it was cancelled)."""
    waiter = asyncio.wrap_future(future)
    while not waiter.done():
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait([waiter])  # never raises the call's error, never cancels it
    if not waiter.cancelled():
        waiter.exception()  # retrieved, so asyncio does not log it as never retrieved


def _close(store: object) -> None:
    close = getattr(store, "close", None)  # JsonlStore holds nothing open between calls
    if close is not None:
        close()


class AsyncMemoryStore(_AsyncTwin[MemoryStore]):
    """The async twin of [`MemoryStore`][threadline.MemoryStore]: conversations in this
    process's memory, for tests and prototypes of async code.

    Every call runs on the event loop (the store's lock is held for a moment, never across an
    await). ``aclose()`` and ``async with`` are there for symmetry and close nothing.
    """

    def __init__(self) -> None:
        self._store = MemoryStore()

    async def _call(self, method: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
        return method(*args, **kwargs)

    async def aclose(self) -> None:
        """Nothing to close: the conversations stay until the store is dropped."""


class AsyncSQLiteStore(_ThreadedTwin[SQLiteStore]):
    """The async twin of [`SQLiteStore`][threadline.SQLiteStore]: the same file layout and
    guarantees, each call run in one of the store's worker threads.

    Args:
        path: the database file, as for ``SQLiteStore``.
        blobs: where to keep file bytes longer than ``blob_threshold``.
        blob_threshold: file bytes longer than this go to ``blobs``.
        timeout: seconds a writer waits for another writer before failing.
        max_threads: worker threads (and so SQLite connections) at most.

    Raises:
        ValueError: ``path`` is ``":memory:"`` or empty, or ``max_threads`` is less than 1.
    """

    _NAME = "AsyncSQLiteStore"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        blobs: BlobStore | None = None,
        blob_threshold: int = DEFAULT_BLOB_THRESHOLD,
        timeout: float = 30.0,
        max_threads: int = 4,
    ) -> None:
        store = SQLiteStore(path, blobs=blobs, blob_threshold=blob_threshold, timeout=timeout)
        super().__init__(store, max_threads)
        self.path = store.path


class AsyncJsonlStore(_ThreadedTwin[JsonlStore]):
    """The async twin of [`JsonlStore`][threadline.JsonlStore]: the same files and guarantees,
    each call run in one of the store's worker threads.

    Args:
        directory: where the files live; created when missing.
        blobs: where to keep file bytes longer than ``blob_threshold``.
        blob_threshold: file bytes longer than this go to ``blobs``.
        max_threads: worker threads at most.

    Raises:
        ValueError: ``max_threads`` is less than 1.
        threadline.StoreError: as for ``JsonlStore``.
    """

    _NAME = "AsyncJsonlStore"

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        blobs: BlobStore | None = None,
        blob_threshold: int = DEFAULT_BLOB_THRESHOLD,
        max_threads: int = 4,
    ) -> None:
        store = JsonlStore(directory, blobs=blobs, blob_threshold=blob_threshold)
        super().__init__(store, max_threads)
        self.directory = store.directory
