"""``History.refresh`` and ``History.arefresh``: catch a bound history up with its store.

A bound history knows the store's version it last saw. ``refresh`` asks the store for what was
appended after that version (``load_after``: one consistent read of the version and the new
rows, whose cost follows what changed) and applies it under the history's lock, as a follow
does: the new messages as one ``extend`` event, or, when the store says the conversation was
replaced (or cannot tell), a ``restore`` of it — only the rest as an ``extend`` when it still
starts with what the history knew.

Writes an async history has queued and not yet sent are kept: they stay queued, after the
stored messages in memory as they will be in the store once ``flush`` sends them (what
``on_conflict="reload"`` does), and one that the store holds already is not sent again. A
queued ``replace`` wins over what others stored, so a history with one queued takes nothing in
(its ``flush`` meets the new version as a conflict, handled by ``on_conflict``).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING
from typing import Any

from threadline._binding import aload_versioned
from threadline._binding import load_versioned
from threadline._following import apply_reloaded
from threadline.errors import ConflictError
from threadline.messages import Message

if TYPE_CHECKING:
    from threadline._binding import Binding
    from threadline.stores._appended import Appended

__all__ = ["Refreshing"]

_ATTEMPTS = 1000  # reads before giving up on a history whose own writes keep moving the version


class Refreshing:
    """``refresh`` and ``arefresh``, for a class with History's internals."""

    __slots__ = ()

    _binding: Binding | None
    _lock: threading.RLock

    def _deliver(self) -> None:
        raise NotImplementedError

    def refresh(self) -> Appended:
        """Take in what other writers stored since this history last saw its store: one
        ``load_after`` read (the version and only the rows appended since).

        New messages come in as one ``extend`` event; when the store says the conversation was
        replaced or deleted, it becomes this history's messages as a ``restore`` (or only the
        rest as an ``extend``, when it still starts with what the history held). The next write
        expects the version read. A store without ``load_after`` (or without versions) is
        loaded whole, and the result says ``replaced``.

        Returns:
            What the store reported: the version now, and the messages appended since (or,
            ``replaced``, all of them). ``result.messages == []`` and not ``replaced``: nothing
            changed.

        Raises:
            RuntimeError: the history is not bound (see [`bind`][threadline.history.History.bind]).
            TypeError: it is bound to an async store (``await history.arefresh()``).
            threadline.StoreError: the store could not be read; the history is unchanged.
            threadline.ConflictError: the version kept moving under the read.
        """
        binding = _bound(self, asynchronous=False)
        for _ in range(_ATTEMPTS):
            after = binding.version
            if after is None or not callable(getattr(binding.store, "load_after", None)):
                loaded, version = load_versioned(binding.store, binding.conversation_id)
                result = _whole(loaded, version)
            else:
                result = binding.store.load_after(binding.conversation_id, after)
                version = result.version
            with self._lock:
                if binding.version != after:
                    continue  # a write through this history moved it meanwhile: read again
                _take(self, binding, result, version)
            self._deliver()
            return result
        raise _gave_up(binding)

    async def arefresh(self) -> Appended:
        """The async twin of [`refresh`][], for a history bound with
        [`abind`][threadline.history.History.abind].

        Writes queued and not yet sent stay queued and stay after the stored messages; it
        waits for a [`flush`][threadline.history.History.flush] in progress first.

        Returns:
            What the store reported, as for [`refresh`][].

        Raises:
            RuntimeError: the history is not bound.
            TypeError: it is bound to a blocking store (``history.refresh()``).
            threadline.StoreError: the store could not be read; the history is unchanged.
            threadline.ConflictError: the version kept moving under the read.
        """
        binding = _bound(self, asynchronous=True)
        async with binding.flushing:
            for _ in range(_ATTEMPTS):
                after = binding.version
                if after is None or not callable(getattr(binding.store, "load_after", None)):
                    loaded, version = await aload_versioned(binding.store, binding.conversation_id)
                    result = _whole(loaded, version)
                else:
                    result = await binding.store.load_after(binding.conversation_id, after)
                    version = result.version
                with self._lock:
                    if binding.version != after:
                        continue  # a follow task moved it meanwhile: read again
                    _take(self, binding, result, version)
                self._deliver()
                return result
        raise _gave_up(binding)


def _bound(history: Any, *, asynchronous: bool) -> Binding:
    binding: Binding | None = history._binding
    if binding is None:
        raise RuntimeError(
            "this history is not bound to a store, so there is nothing to refresh from: bind it "
            "first (history.bind(store, conversation_id), or await history.abind(...))"
        )
    if binding.asynchronous != asynchronous:
        use = "await history.arefresh()" if binding.asynchronous else "history.refresh()"
        kind = "an async" if binding.asynchronous else "a blocking"
        raise TypeError(f"this history is bound to {kind} store ({binding.store!r}): use {use}")
    return binding


def _whole(loaded: list[Message], version: int | None) -> Appended:
    from threadline.stores._appended import Appended

    return Appended(version or 0, loaded, replaced=True)


def _take(history: Any, binding: Binding, result: Appended, version: int | None) -> None:
    """Under the history's lock: apply ``result``, read at the binding's version."""
    queue = binding.queue
    if any(kind == "replace" for kind, _ in queue):
        return  # a queued replace wins over what is stored: leave it to the flush
    pending = [m for _, part in queue for m in part]
    stored = binding.length - len(pending)
    messages = result.messages
    if result.replaced:
        known = messages[:stored]
        if len(messages) >= stored and all(m.id in binding.ids for m in known):
            messages = messages[stored:]  # it still starts with what this history knew
        else:
            taken = {m.id for m in messages}
            rest = _unsent(binding, taken)
            apply_reloaded(history, [*messages, *rest], True)
            binding.ids = taken | {m.id for m in rest}
            binding.length = len(messages) + len(rest)
            binding.version = version
            return
    fresh = [m for m in messages if m.id not in binding.ids or m.id in _ids(pending)]
    if fresh:
        rest = _unsent(binding, {m.id for m in fresh})
        if pending:
            # Stored before the unsent ones, as they will be once sent: one restore.
            mine = _ids(pending)
            view = list(history._log.view())
            before = [m for m in view if m.id not in mine]
            after = [m for m in view if m.id in mine and m.id in _ids(rest)]
            apply_reloaded(history, [*before, *fresh, *after], True)
        else:
            apply_reloaded(history, fresh, False)
        binding.ids.update(m.id for m in fresh)
        binding.length = stored + len(fresh) + len(rest)
    binding.version = version


def _ids(messages: list[Message]) -> set[str]:
    return {m.id for m in messages}


def _unsent(binding: Binding, stored: set[str]) -> list[Message]:
    """Drop from the queue the messages whose id the store holds now; the rest, in order."""
    kept = [[m for m in part if m.id not in stored] for _, part in binding.queue]
    binding.queue.clear()
    binding.queue.extend(("append", part) for part in kept if part)
    return [m for part in kept for m in part]


def _gave_up(binding: Binding) -> ConflictError:
    return ConflictError(
        f"gave up refreshing conversation {binding.conversation_id!r} from {binding.store!r}: "
        f"this history's own writes moved its version during each of {_ATTEMPTS} reads",
        conversation_id=binding.conversation_id,
        expected=binding.version or 0,
        actual=binding.version or 0,
    )
