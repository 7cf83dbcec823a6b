"""``HistoryCache`` and ``AsyncHistoryCache``: bound histories kept per process, for a server
that handles one request per agent step.

A server that loads the conversation on each request pays for its whole length every step. A
cache keeps each conversation's bound [`History`][threadline.History] between requests and, on
each ``get``, refreshes it ([`History.refresh`][threadline.history.History.refresh]): one read
of the version and only the rows other processes appended since. Memory stays bounded: beyond
``max_histories`` histories, or ``max_messages`` messages held in all of them, the least
recently used are dropped (a dropped conversation is loaded whole on its next ``get``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic
from typing import TypeVar

from threadline._binding import OnConflict
from threadline._binding import check_on_conflict
from threadline._binding import refuse_store_kind
from threadline._history_encoding import keep_turns
from threadline.history import History
from threadline.stores.base import AsyncStore
from threadline.stores.base import Store

__all__ = ["AsyncHistoryCache", "HistoryCache"]

DEFAULT_MAX_HISTORIES = 1_000
DEFAULT_MAX_MESSAGES = 1_000_000

_S = TypeVar("_S", Store, AsyncStore)


class _Cache(Generic[_S]):
    """The LRU and its bounds, shared by both caches."""

    _asynchronous = False

    def __init__(
        self,
        store: _S,
        *,
        max_histories: int = DEFAULT_MAX_HISTORIES,
        max_messages: int = DEFAULT_MAX_MESSAGES,
        on_conflict: OnConflict = "raise",
        factory: Callable[[], History] = History,
    ) -> None:
        refuse_store_kind(store, asynchronous=self._asynchronous)
        self.store: _S = store
        self.max_histories = _check_bound("max_histories", max_histories)
        self.max_messages = _check_bound("max_messages", max_messages)
        self.on_conflict = check_on_conflict(on_conflict)
        if not callable(factory):
            raise TypeError(f"factory must make a new History when called, not {factory!r}")
        self._factory = factory
        self._histories: OrderedDict[str, History] = OrderedDict()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.store!r}, <{len(self)} histories>, "
            f"max_histories={self.max_histories}, max_messages={self.max_messages})"
        )

    def __len__(self) -> int:
        with self._lock:
            return len(self._histories)

    def __contains__(self, conversation_id: object) -> bool:
        with self._lock:
            return conversation_id in self._histories

    def discard(self, conversation_id: str) -> None:
        """Drop the conversation's history from the cache (nothing happens when it is not
        held); the next ``get`` loads it again. The history itself stays bound and usable."""
        with self._lock:
            self._histories.pop(conversation_id, None)

    def _cached(self, conversation_id: str) -> History | None:
        with self._lock:
            history = self._histories.get(conversation_id)
            if history is not None:
                self._histories.move_to_end(conversation_id)
            return history

    def _new(self) -> History:
        history = self._factory()
        if not isinstance(history, History) or history._binding is not None:
            raise TypeError(
                f"{type(self).__name__}'s factory must return a new, unbound History, not "
                f"{history!r}"
            )
        return history

    def _keep(self, conversation_id: str, made: History) -> History:
        """Hold ``made`` (unless another caller bound one first: that one), then evict. A held
        history is encoded again: its first ``History.encode`` keeps the turns."""
        keep_turns(made)
        with self._lock:
            history = self._histories.setdefault(conversation_id, made)
            self._histories.move_to_end(conversation_id)
        self._evict(conversation_id)
        return history

    def _evict(self, keep: str) -> None:
        """Drop the least recently used histories beyond the bounds; never ``keep`` (the one
        just asked for), nor a history whose queued writes are not sent yet."""
        with self._lock:
            histories = self._histories
            total = sum(len(history) for history in histories.values())
            for conversation_id in list(histories):
                if len(histories) <= self.max_histories and total <= self.max_messages:
                    return
                history = histories[conversation_id]
                if conversation_id == keep or history.pending_writes:
                    continue
                del histories[conversation_id]
                total -= len(history)


class HistoryCache(_Cache[Store]):
    """Bound histories of a blocking store, one per conversation, kept between requests.

    ``get(conversation_id)`` returns the conversation's [`History`][threadline.History], bound
    to ``store`` (loaded on first use), after refreshing it with what other processes appended
    since ([`History.refresh`][threadline.history.History.refresh]). It is the same object on
    each ``get`` while it stays cached. Thread safe: a history is safe to share between threads,
    and several threads may ``get`` at once.

    Args:
        store: a blocking [`Store`][threadline.Store] (use [`AsyncHistoryCache`][] for an
            async one).
        max_histories: keep at most this many histories; the least recently used go first.
        max_messages: keep at most this many messages in all the histories together (as
            ``len(history)`` counts them), dropping the least recently used histories; the
            history just asked for is kept even when it alone holds more.
        on_conflict: the histories' ``bind(..., on_conflict=)``.
        factory: makes each new (unbound) History, for a window, plugins or a token counter;
            ``History`` by default.

    Raises:
        TypeError: ``store`` is an async store, a bound is not an ``int``, or ``factory`` is
            not callable.
        ValueError: a bound is below 1, or ``on_conflict`` is neither ``"raise"`` nor
            ``"reload"``.
    """

    def get(self, conversation_id: str) -> History:
        """The conversation's bound history, refreshed with what the store holds now.

        Raises:
            threadline.ValidationError: the store refuses ``conversation_id``.
            threadline.StoreError: the store could not be read (a cached history stays cached,
                unchanged).
            threadline.ConflictError: as for ``History.bind`` with ``on_conflict``.
            TypeError: ``factory`` did not return a new, unbound History.
        """
        history = self._cached(conversation_id)
        if history is not None:
            history.refresh()
            self._evict(conversation_id)
            return history
        made = self._new().bind(self.store, conversation_id, on_conflict=self.on_conflict)
        return self._keep(conversation_id, made)


class AsyncHistoryCache(_Cache[AsyncStore]):
    """The async twin of [`HistoryCache`][], for an [`AsyncStore`][threadline.AsyncStore]:
    ``await cache.get(conversation_id)`` binds with ``abind`` and refreshes with
    ``arefresh``.

    Use it from one event loop. Call ``await history.flush()`` after each step, as for any
    history bound with ``abind``: a history whose queued writes are not sent yet is never
    dropped from the cache.

    Args:
        store: an [`AsyncStore`][threadline.AsyncStore].
        max_histories: as for [`HistoryCache`][].
        max_messages: as for [`HistoryCache`][].
        on_conflict: the histories' ``abind(..., on_conflict=)``.
        factory: as for [`HistoryCache`][].

    Raises:
        TypeError: ``store`` is a blocking store, or as for [`HistoryCache`][].
        ValueError: as for [`HistoryCache`][].
    """

    _asynchronous = True

    async def get(self, conversation_id: str) -> History:
        """The conversation's bound history, refreshed with what the store holds now.

        Raises:
            threadline.ValidationError: the store refuses ``conversation_id``.
            threadline.StoreError: the store could not be read.
            threadline.ConflictError: as for ``History.abind`` with ``on_conflict``.
            TypeError: ``factory`` did not return a new, unbound History.
        """
        history = self._cached(conversation_id)
        if history is not None:
            await history.arefresh()
            self._evict(conversation_id)
            return history
        made = await self._new().abind(self.store, conversation_id, on_conflict=self.on_conflict)
        return self._keep(conversation_id, made)


def _check_bound(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int >= 1, not {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, not {value}")
    return value
