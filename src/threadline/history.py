"""The :class:`History` container: an observable, thread-safe conversation with O(1) snapshots.

Agent loops append to a history, UIs read it on every render, stores and plugins watch it.
Four ideas make that cheap and safe:

- **Append-only storage; snapshots are views.** Messages live in a list that is only ever
  appended to. A :class:`Snapshot` is a view of it (the list, a start, a stop, a version), so
  taking one costs the same at 100 messages as at 100,000, and the same object is returned
  until the next mutation (``snapshot is last_snapshot`` tells a UI nothing changed). An append
  only adds past the stop of every existing snapshot, and :meth:`History.reset` and
  :meth:`History.restore` install a *new* list, so a snapshot never changes once taken.
- **Windows advance a start.** With ``max_messages`` or ``max_tokens`` every mutation drops the
  oldest whole units that no longer fit (the rule of :func:`threadline.context.trim_messages`,
  applied incrementally) by advancing the start of the live slice of storage: O(1) amortized,
  with the storage compacted into a new list once more than half of it is dead. Token counts
  live in an array aligned with the storage, plus a running total.
- **Events after the lock.** Every mutation bumps :attr:`History.version` and, when someone
  subscribed, queues a :class:`HistoryEvent`. Listeners run once the lock is released (they may
  read the history, or even mutate it), from a per-history queue, so every listener sees every
  event in mutation order even when several threads mutate at once.
- **Validation at the door.** ``append``, ``extend`` and ``restore`` take :class:`Message`
  objects or mappings of their fields. Mappings are validated first; invalid input raises
  :class:`~threadline.ValidationError` naming the path of the bad field and changes nothing.
  A ``Message`` is valid by construction (it is frozen), so appending one costs an
  ``isinstance`` check.

Plugins (:mod:`threadline.context`) hook in at read time (``transform``, through
:meth:`History.messages_for_model`), after appends (``after_append``) and on demand
(``reduce``); their errors are isolated and go to ``on_plugin_error``. A history bound to a
store (:meth:`History.bind`, :meth:`History.abind`) writes each mutation to it before applying
it (or queues it, for :meth:`History.flush`), so memory and store agree.
"""

from __future__ import annotations

import inspect
import itertools
import logging
import operator
import sys
import threading
from array import array
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import (
    TYPE_CHECKING,
    Any,
    Final,
    Literal,
    NoReturn,
    TypeAlias,
    TypeVar,
    cast,
    overload,
)

import pydantic
from typing_extensions import Self

from threadline._blob_marks import blob_mark_errors
from threadline._validation import translate_errors
from threadline.errors import ErrorDetail, PluginError, ValidationError
from threadline.integrity import prepare_messages
from threadline.limits import (
    THREADLINE_LAYOUT,
    Limits,
    enforce_counts,
    enforce_limits,
    resolve_limits,
)
from threadline.messages import Message, ToolCallPart, ToolResultPart
from threadline.serialization import dump_json, load_json
from threadline.tokens import (
    TokenCounter,
    checked_counter,
    content_chars,
    measure,
    tokens_from_measure,
)

if TYPE_CHECKING:
    from threadline.context.base import Plugin
    from threadline.stores.base import AsyncStore, Store

__all__ = [
    "EventKind",
    "History",
    "HistoryEvent",
    "Listener",
    "ListenerErrorHandler",
    "PluginErrorHandler",
    "Snapshot",
    "content_chars",
]

logger = logging.getLogger("threadline")

EventKind: TypeAlias = Literal["append", "extend", "reset", "restore", "trim"]
"""What a mutation did; the ``kind`` of a :class:`HistoryEvent`."""


# ---------------------------------------------------------------------------------------------
# Snapshot

_new_object = object.__new__
_set_slot = object.__setattr__


class Snapshot(Sequence[Message]):
    """An immutable view of a history's messages at one :attr:`version`.

    A real :class:`~collections.abc.Sequence`: indexing (negative too), slicing (which returns
    a ``tuple``), iteration, ``len``, ``in``, ``reversed``, ``index`` and ``count``. It compares
    equal to any sequence of equal messages (a ``list``, a ``tuple``, another snapshot) and, like
    a ``list``, is not hashable: key caches on :attr:`version` instead. It pickles as the
    messages and the version.

    :meth:`History.snapshot` makes one in O(1): it is a view of the history's append-only
    storage, not a copy. ``Snapshot(messages, version=n)`` builds a standalone one (a copy),
    which is handy in tests and fakes.
    """

    __slots__ = ("_head", "_items", "_offset", "_start", "_stop", "_system_at", "_version")

    # A snapshot is ``_head + _items[_start:_stop]``. ``_head`` holds system messages pinned
    # ahead of a window; it is empty until windowing (threadline.context) trims.
    # ``_system_at`` holds the positions of the system messages in ``_items[_start:_stop]``,
    # counted from ``_offset`` (``_items[i]`` is at position ``_offset + i``), so trimming a
    # snapshot finds them without reading every message's role.
    _head: tuple[Message, ...]
    _items: list[Message]
    _start: int
    _stop: int
    _version: int
    _system_at: tuple[int, ...]
    _offset: int

    __hash__ = None  # type: ignore[assignment]  # equal to lists, so unhashable like them

    def __init__(
        self, messages: Iterable[Message | Mapping[str, Any]] = (), *, version: int = 0
    ) -> None:
        """Build a standalone snapshot holding ``messages``.

        Args:
            messages: messages or mappings of their fields (validated).
            version: the version it reports.

        Raises:
            threadline.ValidationError: an item is not a valid message.
        """
        items = _validated_batch(messages, "Snapshot")
        _init_snapshot(
            self, items, 0, len(items), (), operator.index(version), system_positions(items), 0
        )

    @property
    def version(self) -> int:
        """The history's :attr:`History.version` when this snapshot was taken."""
        return self._version

    def __len__(self) -> int:
        return len(self._head) + self._stop - self._start

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Message, ...]: ...

    def __getitem__(self, index: int | slice) -> Message | tuple[Message, ...]:
        if isinstance(index, slice):
            if not self._head and (index.step is None or index.step == 1):
                first, last, _ = index.indices(self._stop - self._start)
                return tuple(self._items[self._start + first : self._start + last])
            return tuple(self)[index]
        position = operator.index(index)
        length = len(self)
        if position < 0:
            position += length
        if not 0 <= position < length:
            raise IndexError(f"snapshot index {index} out of range for {length} messages")
        pinned = len(self._head)
        if position < pinned:
            return self._head[position]
        return self._items[self._start + position - pinned]

    def __iter__(self) -> Iterator[Message]:
        window = itertools.islice(self._items, self._start, self._stop)
        return itertools.chain(self._head, window) if self._head else window

    def __reversed__(self) -> Iterator[Message]:
        items = self._items
        for position in range(self._stop - 1, self._start - 1, -1):
            yield items[position]
        yield from reversed(self._head)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if isinstance(other, Snapshot):
            if (
                other._items is self._items
                and other._start == self._start
                and other._stop == self._stop
                and other._head == self._head
            ):
                return True
        elif not isinstance(other, Sequence) or isinstance(other, (str, bytes, bytearray)):
            return NotImplemented
        return len(self) == len(other) and all(map(operator.eq, self, other))

    if not TYPE_CHECKING:  # at runtime only, so that type checkers still flag unknown names

        def __setattr__(self, name: str, value: object) -> NoReturn:
            raise AttributeError(f"Snapshot is immutable; cannot set {name!r}")

        def __delattr__(self, name: str) -> NoReturn:
            raise AttributeError(f"Snapshot is immutable; cannot delete {name!r}")

    def __copy__(self) -> Snapshot:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_snapshot, (list(self), self.version))

    def __repr__(self) -> str:
        messages = list(self) if len(self) <= 6 else [*self[:3], None, *self[-2:]]
        shown = ", ".join("..." if m is None else f"{m.role} {m.id}" for m in messages)
        return f"<Snapshot version={self.version} len={len(self)} [{shown}]>"


def _init_snapshot(
    snapshot: Snapshot,
    items: list[Message],
    start: int,
    stop: int,
    head: tuple[Message, ...],
    version: int,
    system_at: Sequence[int],
    offset: int,
) -> None:
    _set_slot(snapshot, "_items", items)
    _set_slot(snapshot, "_start", start)
    _set_slot(snapshot, "_stop", stop)
    _set_slot(snapshot, "_head", head)
    _set_slot(snapshot, "_version", version)
    _set_slot(snapshot, "_system_at", tuple(system_at))
    _set_slot(snapshot, "_offset", offset)


def _view(
    items: list[Message],
    start: int,
    stop: int,
    head: tuple[Message, ...],
    version: int,
    system_at: tuple[int, ...],
    offset: int,
) -> Snapshot:
    """A snapshot over existing storage, without copying or validating."""
    snapshot: Snapshot = _new_object(Snapshot)
    _init_snapshot(snapshot, items, start, stop, head, version, system_at, offset)
    return snapshot


def _rebuild_snapshot(messages: list[Message], version: int) -> Snapshot:
    return _view(messages, 0, len(messages), (), version, tuple(system_positions(messages)), 0)


def snapshot_storage(
    snapshot: Snapshot,
) -> tuple[list[Message], int, int, tuple[Message, ...], list[int]]:
    """``(items, start, stop, head, systems)``: a snapshot is ``head + items[start:stop]``, and
    ``systems`` are the indexes in ``items`` of the system messages in ``items[start:stop]``.

    For :mod:`threadline.context`: trimming reads the storage directly. ``items`` may hold
    more messages past ``stop`` (a history appends to it); it is never changed below ``stop``.
    """
    offset = snapshot._offset
    systems = [position - offset for position in snapshot._system_at]
    return snapshot._items, snapshot._start, snapshot._stop, snapshot._head, systems


_ROLE: Final = operator.attrgetter("role")


def system_positions(items: Sequence[Message]) -> list[int]:
    """The index of every system message in ``items``, found at C speed: ``indexOf`` walks the
    roles without a list of them being built (most histories hold one system message or none)."""
    found: list[int] = []
    roles = map(_ROLE, items)
    position = 0
    try:
        while True:
            position += operator.indexOf(roles, "system")
            found.append(position)
            position += 1
    except ValueError:
        return found


# ---------------------------------------------------------------------------------------------
# Events and listeners


@dataclass(frozen=True, slots=True)
class HistoryEvent:
    """What one mutation of a :class:`History` did, as a listener receives it."""

    kind: EventKind
    """``append`` (one message), ``extend`` (a batch), ``reset`` (cleared), ``restore``
    (replaced everything) or ``trim`` (a window dropped messages)."""
    messages: tuple[Message, ...]
    """The messages the mutation added (``append``, ``extend``), the new contents
    (``restore``), nothing (``reset``) or the messages it dropped (``trim``)."""
    version: int
    """The history's version right after the mutation."""
    snapshot: Snapshot = field(repr=False, compare=False)
    """The history as this mutation left it. Listeners run after the lock is released, so the
    history may have moved on by the time one runs; render this to stay consistent with
    :attr:`messages` and :attr:`version`."""


Listener: TypeAlias = Callable[[HistoryEvent], object]
"""A function called with every :class:`HistoryEvent`; what it returns is ignored."""

ListenerErrorHandler: TypeAlias = Callable[[Exception, HistoryEvent, Listener], object]
"""Called as ``handler(error, event, listener)`` when a listener raises."""

PluginErrorHandler: TypeAlias = Callable[[Exception, Any, str], object]
"""Called as ``handler(error, plugin, hook)`` when a plugin raises; ``hook`` is the name of the
method that raised (``"transform"``, ``"after_append"`` or ``"reduce"``)."""


class _Subscription:
    __slots__ = ("active", "listener")

    def __init__(self, listener: Listener) -> None:
        self.listener = listener
        self.active = True


def _log_listener_error(error: Exception, event: HistoryEvent, listener: Listener) -> None:
    logger.error(
        "a History listener %r raised on the %r event (version %d); the mutation was applied "
        "and the other listeners ran",
        listener,
        event.kind,
        event.version,
        exc_info=error,
    )


# ---------------------------------------------------------------------------------------------
# History


class History:
    """A conversation: an ordered, observable, thread-safe container of :class:`Message`.

    ``len(history)``, iteration, ``history[i]`` and ``history[a:b]`` read the current
    :meth:`snapshot`, so each is consistent even while other threads append.

    Args:
        messages: the initial messages, or mappings of their fields (validated). They are the
            starting state, not a mutation: :attr:`version` starts at 0 and no event is sent
            (a window trims them silently).
        max_messages: keep at most this many messages, system messages included: after every
            mutation the oldest whole units are dropped (see :mod:`threadline.context.window`).
        max_tokens: keep at most this many tokens (as ``token_counter`` counts them), system
            messages included, the same way.
        token_counter: counts one message's tokens, for ``max_tokens`` and
            :attr:`total_tokens`; :func:`~threadline.estimate_tokens` when ``None``.
        plugins: context plugins (:class:`~threadline.context.ToolResultMasking`,
            :class:`~threadline.context.RollingSummary`...), registered in order as by
            :meth:`use`.
        on_listener_error: called as ``handler(error, event, listener)`` when a listener
            raises; by default the error is logged to the ``"threadline"`` logger.
        on_plugin_error: called as ``handler(error, plugin, hook)`` when a plugin's
            ``transform`` or ``after_append`` (or a background reduce) raises; by default the
            error is logged to the ``"threadline"`` logger.

    Raises:
        threadline.ValidationError: an initial message is invalid.
        TypeError: a budget is not an ``int``, or ``token_counter`` is not callable.
        ValueError: a budget is below 1.
        threadline.PluginError: a plugin's ``on_registered`` raised.
    """

    # Storage. ``_items`` is append-only: nothing in it is ever replaced or removed, so every
    # snapshot taken earlier stays valid; reset, restore and compaction install a new list. The
    # live history is ``_head + _items[_start:]``: a window trims by advancing ``_start``
    # (O(1)), moving the system messages it passes into ``_head`` (they are never dropped), and
    # once more than half of ``_items`` is dead installs ``_items[_start:]`` as new storage.
    # ``_offset`` is the absolute position of ``_items[0]`` (compaction adds to it), so the
    # window's bookkeeping (``_Window``) can use positions that never shift.
    #
    # Tokens. ``_tokens`` is aligned index for index with ``_items`` and ``_token_total`` sums
    # the live messages. With a window every message is counted as it arrives (outside the lock,
    # so a slow tokenizer never blocks other threads) and ``_sizes`` (aligned too) keeps its
    # characters so a trim subtracts them without measuring again; without a window, counting
    # is deferred to the first read of ``total_tokens``, which counts only what arrived since
    # (appends stay lean).
    __slots__ = (
        "__weakref__",
        "_after_append",
        "_binding",
        "_counter",
        "_delivering",
        "_head",
        "_items",
        "_lock",
        "_max_messages",
        "_max_tokens",
        "_offset",
        "_on_listener_error",
        "_on_plugin_error",
        "_pending",
        "_plugins",
        "_reducers",
        "_results",
        "_size",
        "_sizes",
        "_snapshot",
        "_start",
        "_subscriptions",
        "_system_at",
        "_token_counter",
        "_token_total",
        "_tokens",
        "_transforms",
        "_version",
        "_window",
    )

    _items: list[Message]
    _start: int
    _head: tuple[Message, ...]
    _offset: int
    _version: int
    _snapshot: Snapshot | None
    _size: int
    _sizes: array[int]
    _results: dict[str, ToolResultPart]
    _system_at: tuple[int, ...]
    _tokens: array[int]
    _token_total: int
    _counter: Callable[[Message], int]
    _window: _Window | None
    _lock: threading.RLock
    _subscriptions: tuple[_Subscription, ...]
    _pending: deque[tuple[HistoryEvent, tuple[_Subscription, ...]]]
    _delivering: bool
    _max_messages: int | None
    _max_tokens: int | None
    _token_counter: TokenCounter | None
    _plugins: tuple[Any, ...]
    _transforms: tuple[tuple[Any, Callable[..., Any]], ...]
    _after_append: tuple[tuple[Any, Callable[..., Any]], ...]
    _reducers: tuple[tuple[Any, Callable[..., Any]], ...]
    _on_listener_error: ListenerErrorHandler | None
    _on_plugin_error: PluginErrorHandler | None
    _binding: _Binding | None

    def __init__(
        self,
        messages: Iterable[Message | Mapping[str, Any]] = (),
        *,
        max_messages: int | None = None,
        max_tokens: int | None = None,
        token_counter: TokenCounter | None = None,
        plugins: Iterable[Plugin] = (),
        on_listener_error: ListenerErrorHandler | None = None,
        on_plugin_error: PluginErrorHandler | None = None,
    ) -> None:
        if max_messages is not None or max_tokens is not None:
            from threadline.context.window import check_budget

            check_budget("max_messages", max_messages)
            check_budget("max_tokens", max_tokens)
        if token_counter is not None and not callable(token_counter):
            raise TypeError(
                f"token_counter must be callable (Message -> int), not "
                f"{type(token_counter).__name__}"
            )
        self._configure(
            max_messages=max_messages,
            max_tokens=max_tokens,
            token_counter=token_counter,
            on_listener_error=on_listener_error,
            on_plugin_error=on_plugin_error,
        )
        items = _validated_batch(messages, "History")
        self._install(items, 0, *self._measure_all(items))
        if self._window is not None:
            self._trim(self._window, publish=False)
        for plugin in plugins:
            self._register(plugin)

    # -- reading ---------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """The messages as they are now, as an immutable :class:`Snapshot`.

        O(1) at any length, and the same object until the next mutation, so ``is`` tells a UI
        whether anything changed. A snapshot never changes once taken.
        """
        snapshot = self._snapshot
        if snapshot is None:
            with self._lock:
                snapshot = self._snapshot
                if snapshot is None:
                    snapshot = self._snapshot = self._view()
        return snapshot

    @property
    def version(self) -> int:
        """A counter that increases with every mutation (append, extend, reset, restore, trim).

        Compare it before and after awaiting a model to learn whether someone else changed the
        history meanwhile. Starts at 0; copies and pickles keep it.
        """
        return self._version

    @property
    def last(self) -> Message | None:
        """The last message, or ``None`` when the history is empty."""
        snapshot = self.snapshot()
        return snapshot[-1] if snapshot else None

    @property
    def system_messages(self) -> tuple[Message, ...]:
        """The system messages, in order (a window never drops them)."""
        items, _, _, head, systems = snapshot_storage(self.snapshot())
        return (*head, *(items[index] for index in systems))

    def without_system(self) -> list[Message]:
        """The messages that are not system messages, in order (a new list)."""
        return [message for message in self.snapshot() if message.role != "system"]

    def messages_for_model(self, mode: Literal["auto", "strict"] = "auto") -> list[Message]:
        """The history as a model should see it: plugins' transforms, then ``prepare_messages``.

        Each plugin's ``transform`` (such as tool-result masking) runs in registration order on
        the output of the one before; then :func:`~threadline.prepare_messages` drops internal
        messages and hook parts, answers dangling tool calls and moves misplaced results
        (``auto``), or raises :class:`~threadline.IntegrityError` (``strict``). The stored
        history is not changed. A transform that raises is skipped (its input passes through)
        and the error goes to ``on_plugin_error``.

        Raises:
            threadline.IntegrityError: a defect repair may not fix, or any defect in ``strict``.
        """
        messages: list[Message] = list(self.snapshot())
        for plugin, transform in self._transforms:
            try:
                messages = list(transform(self, messages))
            except Exception as error:
                self._plugin_failed(error, plugin, "transform")
        return prepare_messages(messages, mode)

    def get_tool_result(self, call_id: str) -> ToolResultPart | None:
        """The :class:`~threadline.ToolResultPart` answering the call ``call_id``, or ``None``.

        Always the result as stored, never a masked copy. O(1): results are indexed as they
        are appended (and forgotten when a window drops them). When a history holds several
        results for one call (an integrity defect), the last appended wins.
        """
        return self._results.get(call_id)

    @property
    def size(self) -> int:
        """Characters of content over all messages (see :func:`content_chars`); O(1)."""
        return self._size

    @property
    def total_tokens(self) -> int:
        """Estimated tokens of all messages, as ``token_counter`` counts them.

        Kept incrementally: every message is counted once, and a window subtracts what it
        drops. Without a window, messages appended since the last read are counted on this
        read (so appends stay lean); with one, they are counted as they arrive.

        Raises:
            TypeError: ``token_counter`` returned something other than an ``int``.
            ValueError: ``token_counter`` returned a negative number.
        """
        if len(self._tokens) < len(self._items):
            with self._lock:
                self._count_pending()
        return self._token_total

    @property
    def plugins(self) -> tuple[Plugin, ...]:
        """The registered plugins, in registration order."""
        return self._plugins

    def __len__(self) -> int:
        return len(self.snapshot())

    def __iter__(self) -> Iterator[Message]:
        return iter(self.snapshot())

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Message, ...]: ...

    def __getitem__(self, index: int | slice) -> Message | tuple[Message, ...]:
        return self.snapshot()[index]

    def __repr__(self) -> str:
        snapshot = self.snapshot()
        return f"{type(self).__name__}({len(snapshot)} messages, version={snapshot.version})"

    # -- mutating --------------------------------------------------------------------------

    def append(self, message: Message | Mapping[str, Any], *, limits: Limits | None = None) -> None:
        """Add one message at the end and notify listeners with an ``append`` event.

        With a window, the oldest whole units that no longer fit are then dropped, with a
        ``trim`` event of its own (and its own version step) after the ``append`` event.
        Plugins' ``after_append`` run last, after the listeners.

        Args:
            message: a :class:`Message`, or a mapping of its fields (validated; a mapping
                may not carry the ``threadline.blob`` metadata key, which only a store's
                blob references hold).
            limits: check ``message`` against these :class:`~threadline.Limits` first, for a
                mapping that came from outside (``Limits.untrusted()`` for a client's). ``None``
                checks nothing beyond validation, which already refuses JSON values nested
                deeper than 190 levels.

        Raises:
            threadline.ValidationError: ``message`` is not a valid message, or (bound to a
                store) its id is the id of a message in the conversation; nothing changes.
            threadline.LimitExceededError: ``message`` exceeds ``limits``; nothing changes.
            threadline.StoreError: the bound store (:meth:`bind`) could not write it; nothing
                changes.
        """
        if limits is not None:
            enforce_limits(message, limits, what="History.append", path="message", depth=3)
            enforce_counts([message], limits, what="History.append")
        if not isinstance(message, Message):
            message = _validated(message, "message", "History.append")
        window = self._window
        if window is None:
            chars = content_chars(message)
            with self._lock:
                if self._binding is not None:
                    self._binding.appended((message,))
                self._items.append(message)
                self._version += 1
                self._track(message, chars, self._offset + len(self._items) - 1)
                self._publish("append", (message,))
        else:
            chars, tokens = self._measure(message)
            with self._lock:
                if self._binding is not None:
                    self._binding.appended((message,))
                self._items.append(message)
                self._version += 1
                self._track(message, chars, self._offset + len(self._items) - 1)
                self._sizes.append(chars)
                self._tokens.append(tokens)
                self._token_total += tokens
                self._note(window, message, self._offset + len(self._items) - 1)
                self._publish("append", (message,))
                self._trim(window, publish=True)
        if self._pending:
            self._deliver()
        if self._after_append:
            self._run_after_append((message,))

    def extend(
        self, messages: Iterable[Message | Mapping[str, Any]], *, limits: Limits | None = None
    ) -> None:
        """Add messages at the end as one mutation: one ``extend`` event, one version step.

        All of them are validated before any is added. An empty batch changes nothing: no
        event, no version step. With a window, trimming happens once, after the whole batch.

        Args:
            messages: messages, or mappings of their fields (validated; as in
                :meth:`append`, a mapping may not carry ``threadline.blob`` metadata).
            limits: check the batch against these :class:`~threadline.Limits` first, for
                mappings that came from outside (``Limits.untrusted()`` for a client's).
                ``None`` checks nothing beyond validation.

        Raises:
            threadline.ValidationError: an item is not a valid message (every problem is
                listed with its path, such as ``messages[2].parts[0].arguments``), or (bound
                to a store) a message's id is taken; nothing changes.
            threadline.LimitExceededError: the batch exceeds ``limits``; nothing changes.
            threadline.StoreError: the bound store (:meth:`bind`) could not write the batch;
                nothing changes.
        """
        items = _validated_batch(messages, "History.extend", limits=limits)
        if not items:
            return
        window = self._window
        sizes, counts = self._measure_all(items)
        with self._lock:
            if self._binding is not None:
                self._binding.appended(items)
            position = self._offset + len(self._items)
            self._items.extend(items)
            self._version += 1
            for index, (message, chars) in enumerate(zip(items, sizes, strict=True)):
                self._track(message, chars, position + index)
            if window is not None:
                self._sizes.extend(sizes)
                self._tokens.extend(counts)
                self._token_total += sum(counts)
                for index, message in enumerate(items):
                    self._note(window, message, position + index)
            self._publish("extend", items)
            if window is not None:
                self._trim(window, publish=True)
        if self._pending:
            self._deliver()
        if self._after_append:
            self._run_after_append(tuple(items))

    def reset(self) -> None:
        """Remove every message and notify listeners once with a ``reset`` event.

        Earlier snapshots keep their messages. Resetting an empty history is still a mutation
        (the version steps and listeners hear of it). A bound store's conversation is replaced
        with nothing.

        Raises:
            threadline.StoreError: the bound store (:meth:`bind`) could not write; nothing
                changes.
        """
        with self._lock:
            if self._binding is not None:
                self._binding.replaced([])
            self._install([], self._version + 1, [], [])
            self._publish("reset", ())
        if self._pending:
            self._deliver()

    def restore(
        self, messages: Iterable[Message | Mapping[str, Any]], *, limits: Limits | None = None
    ) -> None:
        """Replace every message with ``messages`` and notify listeners once (``restore``).

        Takes anything iterable, a :class:`Snapshot` included: ``history.restore(earlier)``
        undoes everything since ``earlier`` was taken. With a window, what does not fit is
        then dropped, with a ``trim`` event after the ``restore`` event.

        Args:
            messages: the new contents: messages, or mappings of their fields (validated;
                as in :meth:`append`, a mapping may not carry ``threadline.blob`` metadata).
            limits: how much to take (:class:`~threadline.Limits`); ``None`` means the
                defaults. Checked before any mapping is validated; pass
                ``Limits.untrusted()`` for mappings a client sent.

        Raises:
            threadline.LimitExceededError: ``messages`` exceed ``limits``; nothing changes.
            threadline.ValidationError: an item is not a valid message, or (bound to a
                store) two items share an id; nothing changes.
            threadline.StoreError: the bound store (:meth:`bind`) could not write; nothing
                changes.
        """
        items = _validated_batch(messages, "History.restore", limits=resolve_limits(limits))
        sizes, counts = self._measure_all(items)
        with self._lock:
            self._replace_all(items, sizes, counts)
        if self._pending:
            self._deliver()

    # -- plugins ---------------------------------------------------------------------------

    def use(self, plugin: Plugin) -> Self:
        """Register a context plugin after the ones already registered; returns the history.

        Chainable: ``History().use(ToolResultMasking()).use(RollingSummary(summarize))``.
        The plugin's ``on_registered(history)`` runs first; if it raises, the plugin is not
        registered.

        Args:
            plugin: an object with any of ``transform``, ``reduce``, ``after_append`` and
                ``on_registered`` (see :class:`~threadline.context.Plugin`).

        Raises:
            threadline.PluginError: ``on_registered`` raised (the error is ``__cause__``).
        """
        self._register(plugin)
        return self

    async def reduce(
        self,
        *,
        max_tokens: int | None = None,
        max_messages: int | None = None,
        older_than: datetime | timedelta | None = None,
    ) -> bool:
        """Ask every plugin with a ``reduce`` (such as a rolling summary) to shrink the history.

        Plugins run in registration order; each sees what the one before left. The options
        are passed on; what they mean is the plugin's (see
        :class:`~threadline.context.RollingSummary`).

        Args:
            max_tokens: reduce until the history fits this many tokens.
            max_messages: reduce until the history fits this many messages.
            older_than: reduce what is older than this (a datetime, or an age).

        Returns:
            Whether any plugin changed the history.

        Raises:
            threadline.PluginError: no registered plugin can reduce, or one failed (its error
                is ``__cause__``); what earlier plugins did stays done.
        """
        if not self._reducers:
            raise PluginError(
                "History.reduce() needs a plugin that reduces, such as "
                "history.use(RollingSummary(summarizer)); none is registered"
            )
        changed = False
        for plugin, reduce in self._reducers:
            try:
                result = reduce(
                    self, max_tokens=max_tokens, max_messages=max_messages, older_than=older_than
                )
                if inspect.isawaitable(result):
                    result = await result
            except PluginError:
                raise
            except Exception as error:
                raise PluginError(f"plugin {plugin!r} failed to reduce the history: {error}") from (
                    error
                )
            changed = bool(result) or changed
        return changed

    # -- observing -------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(event)`` after every mutation, until the returned function is called.

        Listeners run after the history's lock is released, so they may read the history (or
        mutate it: that event is delivered once the current one has reached every listener).
        They run in subscription order and see events in mutation order, one event per
        mutation. When several threads mutate, one thread delivers the queued events while the
        others return at once, so a listener may run on another thread than the mutation's.
        An exception from a listener goes to ``on_listener_error`` and breaks nothing.

        Args:
            listener: a callable taking a :class:`HistoryEvent`.

        Returns:
            A function that unsubscribes ``listener``; calling it again does nothing. After it
            returns, the listener gets no further events (including ones already queued).

        Raises:
            TypeError: ``listener`` is not callable.
        """
        if not callable(listener):
            raise TypeError(f"listener must be callable, got {type(listener).__name__}")
        subscription = _Subscription(listener)
        with self._lock:
            self._subscriptions = (*self._subscriptions, subscription)

        def unsubscribe() -> None:
            with self._lock:
                subscription.active = False
                self._subscriptions = tuple(
                    other for other in self._subscriptions if other is not subscription
                )

        return unsubscribe

    # -- persistence and copies ------------------------------------------------------------

    def to_json(self, *, indent: int | None = None) -> bytes:
        """The messages in threadline's versioned JSON envelope (see :func:`~threadline.dump_json`).

        Only messages are written: configuration and listeners are the application's.

        Args:
            indent: pretty-print with this many spaces (compact when ``None``).
        """
        return dump_json(self.snapshot(), indent=indent)

    @classmethod
    def from_json(cls, data: bytes | bytearray | str) -> Self:
        """A history holding the messages of :meth:`to_json` output (or any ``load_json`` input).

        For a window or a listener error handler, use
        ``History(load_json(data), max_messages=...)``.

        Raises:
            threadline.ValidationError: ``data`` is not valid threadline JSON.
            threadline.UnsupportedVersionError: ``data`` was written by a newer threadline.
        """
        return cls(load_json(data))

    def copy(self) -> Self:
        """An independent history with the same messages, version and configuration.

        The window, token counter, error handlers and plugins come along (each plugin's
        ``on_registered`` runs for the copy); listeners do not (they subscribed to this
        history), nor does a store binding.
        """
        snapshot = self.snapshot()
        return _rebuild_history(type(self), list(snapshot), snapshot.version, self._config())

    def __copy__(self) -> Self:
        return self.copy()

    def __reduce__(self) -> tuple[Any, ...]:
        # Messages, version and configuration; the lock, listeners, queue and binding are not.
        snapshot = self.snapshot()
        return (_rebuild_history, (type(self), list(snapshot), snapshot.version, self._config()))

    # -- persistence: a bound store --------------------------------------------------------

    def bind(self, store: Store, conversation_id: str) -> Self:
        """Persist this history in ``store`` as it changes, under ``conversation_id``.

        First the conversation is loaded: if the store holds it, it replaces this history's
        messages (one ``restore`` event; a window applies to it); if not, this history's
        current messages are written as its start. From then on every mutation is written
        through before it is applied, under the history's lock, so the store sees mutations in
        the order the history does: ``append`` and ``extend`` as one ``store.append`` batch
        each, ``reset`` and ``restore`` (and a plugin's reduce) as ``store.replace``. Window
        trims are not written: the store keeps the full log, and the window applies again
        when it is loaded. A write that fails raises from the mutation, which is then not
        applied, so memory and store always agree.

        Message ids are unique within a stored conversation (that is how a store recognises
        a write sent again after a lost reply, and skips it). So a bound history refuses, with
        :class:`~threadline.ValidationError` and before anything is written, a message whose
        id the conversation already holds; after a write that raised, appending the same
        message again is always safe.

        Returns the history, so ``history = History(max_tokens=...).bind(store, "c1")`` works.
        Copies and pickles of a bound history are not bound.

        Args:
            store: a blocking :class:`~threadline.stores.Store` (use :meth:`abind` for an
                :class:`~threadline.stores.AsyncStore`).
            conversation_id: the conversation's id in the store.

        Raises:
            RuntimeError: the history is bound already.
            TypeError: ``store`` is an async store.
            threadline.ValidationError: the store refuses ``conversation_id``, or the history
                (written as the conversation's start) holds two messages with one id.
            threadline.StoreError: the store could not load or write; the history is not bound.
        """
        if _is_async_store(store):
            raise TypeError(
                f"{type(store).__name__} is an async store: bind it with "
                "`await history.abind(store, conversation_id)`"
            )
        self._check_unbound()
        loaded = store.load(conversation_id)
        measured = self._measure_all(loaded) if loaded else None
        with self._lock:
            self._check_unbound()
            start = loaded if measured is not None else list(self._view())
            if measured is not None:
                self._replace_all(loaded, *measured, write=False)
            elif start:
                _refuse_taken_ids(start, set(), conversation_id)
                store.replace(conversation_id, start)
            self._binding = _Binding(store, conversation_id, asynchronous=False, messages=start)
        if self._pending:
            self._deliver()
        return self

    async def abind(self, store: AsyncStore, conversation_id: str) -> Self:
        """The async twin of :meth:`bind`: persist this history in an async ``store``.

        Loads (or writes the current messages as the conversation's start) like :meth:`bind`,
        awaiting the store. From then on mutations are applied in memory at once and their
        writes are queued, in order; :meth:`flush` sends them. Call ``await history.flush()``
        after each step of your loop (or before answering a request). Trims are not written.
        Message ids are kept unique as with :meth:`bind`: a message whose id is taken is
        refused when it is appended, not when it is flushed.

        Args:
            store: an :class:`~threadline.stores.AsyncStore`.
            conversation_id: the conversation's id in the store.

        Raises:
            RuntimeError: the history is bound already.
            TypeError: ``store`` is a blocking store (use :meth:`bind`).
            threadline.ValidationError: the store refuses ``conversation_id``, or the history
                (written as the conversation's start) holds two messages with one id.
            threadline.StoreError: the store could not load or write; the history is not bound.
        """
        if not _is_async_store(store):
            raise TypeError(
                f"{type(store).__name__} is a blocking store: bind it with "
                "`history.bind(store, conversation_id)`"
            )
        self._check_unbound()
        loaded = await store.load(conversation_id)
        if loaded:
            measured = self._measure_all(loaded)
            with self._lock:
                self._check_unbound()
                self._replace_all(loaded, *measured, write=False)
                self._binding = _Binding(store, conversation_id, asynchronous=True, messages=loaded)
            if self._pending:
                self._deliver()
            return self
        while True:
            # Write the current messages as the start; if another task mutated the history
            # while that write was awaited, write again, so that nothing escapes the store.
            current = self.snapshot()
            if current:
                _refuse_taken_ids(current, set(), conversation_id)
                await store.replace(conversation_id, list(current))
            with self._lock:
                self._check_unbound()
                if self._version == current.version:
                    self._binding = _Binding(
                        store, conversation_id, asynchronous=True, messages=current
                    )
                    return self

    async def flush(self) -> None:
        """Send the writes queued since :meth:`abind` to the store, in order.

        Consecutive appends go as one ``append`` batch; a ``replace`` makes the writes queued
        before it unnecessary, so they are skipped. If a write fails, its error is raised here
        and it stays queued, with everything after it, for the next ``flush``: nothing is
        lost from memory, and nothing reaches the store out of order. This holds when a flush
        is cancelled, or fails, after the store applied the write but before it replied: the
        next flush sends the write again, and the store skips the messages it holds already
        (their ids are taken, by the same messages), so each is stored once, in order. Does
        nothing for an unbound history or one bound with :meth:`bind` (its writes are never
        queued).

        Raises:
            threadline.StoreError: the store could not write (the writes stay queued).
        """
        binding = self._binding
        if binding is None or not binding.asynchronous:
            return
        async with binding.flushing:
            while True:
                with self._lock:
                    queue = list(binding.queue)
                if not queue:
                    return
                last_replace = max(
                    (index for index, (kind, _) in enumerate(queue) if kind == "replace"),
                    default=0,
                )
                if last_replace:
                    with self._lock:
                        for _ in range(last_replace):
                            binding.queue.popleft()
                    continue
                kind, messages = queue[0]
                if kind == "replace":
                    await binding.store.replace(binding.conversation_id, messages)
                    sent = 1
                else:
                    sent = 1
                    while sent < len(queue) and queue[sent][0] == "append":
                        sent += 1
                    batch = [message for _, part in queue[:sent] for message in part]
                    await binding.store.append(binding.conversation_id, batch)
                with self._lock:
                    for _ in range(sent):
                        binding.queue.popleft()

    @property
    def pending_writes(self) -> int:
        """How many writes :meth:`flush` has yet to send (0 unless bound with :meth:`abind`)."""
        binding = self._binding
        return len(binding.queue) if binding is not None else 0

    def _check_unbound(self) -> None:
        binding = self._binding
        if binding is not None:
            raise RuntimeError(
                f"this history is bound already (to conversation {binding.conversation_id!r} "
                f"in {binding.store!r}); bind a new History, or a copy (copies are unbound)"
            )

    # -- internals: configuration ----------------------------------------------------------

    def _configure(
        self,
        *,
        max_messages: int | None,
        max_tokens: int | None,
        token_counter: TokenCounter | None,
        on_listener_error: ListenerErrorHandler | None,
        on_plugin_error: PluginErrorHandler | None,
    ) -> None:
        self._max_messages = max_messages
        self._max_tokens = max_tokens
        self._token_counter = token_counter
        self._counter = checked_counter(token_counter)
        self._window = (
            None
            if max_messages is None and max_tokens is None
            else _Window(max_messages, max_tokens)
        )
        self._on_listener_error = on_listener_error
        self._on_plugin_error = on_plugin_error
        self._plugins = ()
        self._transforms = ()
        self._after_append = ()
        self._reducers = ()
        self._binding = None
        self._lock = threading.RLock()
        self._subscriptions = ()
        self._pending = deque()
        self._delivering = False

    def _config(self) -> dict[str, Any]:
        return {
            "max_messages": self._max_messages,
            "max_tokens": self._max_tokens,
            "token_counter": self._token_counter,
            "plugins": self._plugins,
            "on_listener_error": self._on_listener_error,
            "on_plugin_error": self._on_plugin_error,
        }

    def _register(self, plugin: Plugin) -> None:
        on_registered = _hook(plugin, "on_registered")
        if on_registered is not None:
            try:
                on_registered(self)
            except Exception as error:
                raise PluginError(
                    f"plugin {plugin!r} raised in on_registered, so it was not registered: {error}"
                ) from error
        with self._lock:
            self._plugins = (*self._plugins, plugin)
            for name, hooks in (
                ("transform", "_transforms"),
                ("after_append", "_after_append"),
                ("reduce", "_reducers"),
            ):
                hook = _hook(plugin, name)
                if hook is not None:
                    setattr(self, hooks, (*getattr(self, hooks), (plugin, hook)))

    def _run_after_append(self, messages: tuple[Message, ...]) -> None:
        for plugin, after_append in self._after_append:
            try:
                after_append(self, messages)
            except Exception as error:
                self._plugin_failed(error, plugin, "after_append")

    def _plugin_failed(self, error: Exception, plugin: object, hook: str) -> None:
        """Hand a plugin's error to ``on_plugin_error`` (by default: log it); never raises."""
        handler = self._on_plugin_error or _log_plugin_error
        try:
            handler(error, plugin, hook)
        except Exception:
            logger.exception(
                "on_plugin_error %r raised while handling an error from plugin %r", handler, plugin
            )

    # -- internals: storage ----------------------------------------------------------------

    def _measure(self, message: Message) -> tuple[int, int]:
        """``(characters, tokens)`` of ``message``; one pass for both with the default counter."""
        if self._token_counter is None:
            chars, files = measure(message)
            return chars, tokens_from_measure(chars, files)
        return content_chars(message), self._counter(message)

    def _measure_all(self, items: Sequence[Message]) -> tuple[list[int], list[int]]:
        """Characters of each of ``items``, and with a window their token counts (else ``[]``).

        Done before taking the lock, so a slow token counter never blocks other threads.
        """
        if self._window is None:
            return list(map(content_chars, items)), []
        measured = list(map(self._measure, items))
        return [chars for chars, _ in measured], [tokens for _, tokens in measured]

    def _install(
        self, items: list[Message], version: int, sizes: list[int], counts: list[int]
    ) -> None:
        """Make ``items`` (a list nobody else holds) the storage; rebuild what derives from it.

        ``sizes`` and ``counts`` come from ``_measure_all(items)``.
        """
        self._items = items
        self._start = 0
        self._head = ()
        self._offset = 0
        self._version = version
        self._snapshot = None
        self._size = 0
        self._results = {}
        self._system_at = ()
        for position, (message, chars) in enumerate(zip(items, sizes, strict=True)):
            self._track(message, chars, position)
        window = self._window
        self._sizes = array("q", sizes if window is not None else ())
        self._tokens = array("q", counts)
        self._token_total = sum(counts)
        if window is not None:
            window.clear()
            for position, message in enumerate(items):
                self._note(window, message, position)

    def _replace_all(
        self, items: list[Message], sizes: list[int], counts: list[int], *, write: bool = True
    ) -> None:
        """Under the lock: make ``items`` the contents as one ``restore`` (then trim).

        A bound store is told first (``replace``), unless ``write`` is false (a load).
        """
        if write and self._binding is not None:
            self._binding.replaced(items)
        self._install(items, self._version + 1, sizes, counts)
        self._publish("restore", items)
        if self._window is not None:
            self._trim(self._window, publish=True)

    def _replace_prefix(
        self, old: Sequence[Message], new: Sequence[Message], *, remove: Sequence[Message] = ()
    ) -> bool:
        """Replace the leading messages ``old`` with ``new`` as one ``restore``, if still there.

        For plugins that rewrite the start of a history after awaiting something (a summary):
        the replacement happens only when the history still starts with exactly the messages
        ``old`` (the same objects), whatever was appended after them meanwhile. Messages in
        ``remove`` (by identity) are dropped from the rest.

        Returns:
            Whether the history was changed.
        """
        with self._lock:
            current = self._view()
            if len(current) < len(old) or not all(map(operator.is_, current, old)):
                return False
            rest = current[len(old) :]
            if remove:
                gone = set(map(id, remove))
                rest = tuple(message for message in rest if id(message) not in gone)
            items = [*new, *rest]
            self._replace_all(items, *self._measure_all(items))
        if self._pending:
            self._deliver()
        return True

    def _track(self, message: Message, chars: int, position: int) -> None:
        """Account for a message that joined the storage at absolute ``position``: size, result
        index, system positions (the system messages not pinned ahead of a window)."""
        self._size += chars
        role = message.role
        if role == "tool":
            for part in message.parts:
                if type(part) is ToolResultPart:
                    self._results[part.call_id] = part
        elif role == "system":
            self._system_at = (*self._system_at, position)

    def _count_pending(self) -> None:
        """Under the lock: count the messages not counted yet (only without a window)."""
        items = self._items
        tokens = self._tokens
        count = self._counter
        for position in range(len(tokens), len(items)):
            value = count(items[position])
            tokens.append(value)
            self._token_total += value

    def _view(self) -> Snapshot:
        return _view(
            self._items,
            self._start,
            len(self._items),
            self._head,
            self._version,
            self._system_at,
            self._offset,
        )

    # -- internals: windows ----------------------------------------------------------------

    def _note(self, window: _Window, message: Message, position: int) -> None:
        """Record where ``message``'s tool calls are and which calls its results answer.

        ``position`` is absolute (it survives compaction). A result answers the latest call
        with its id; one whose call is not in the window is an orphan, and no window may start
        at or before it. ``window.reach[p]`` is the last result answering a call made at ``p``:
        a window starting after ``p`` must start after that too.
        """
        role = message.role
        if role == "assistant":
            for part in message.parts:
                if type(part) is ToolCallPart:
                    window.call_at[part.id] = position
        elif role == "tool":
            first = self._offset + self._start
            hint = window.hint
            for part in message.parts:
                if type(part) is not ToolResultPart:
                    continue
                window.result_at[part.call_id] = position
                call = window.call_at.get(part.call_id)
                if call is None or call < first:
                    window.orphan_reach = position
                elif window.reach.get(call, -1) < position:
                    window.reach[call] = position
                if hint is not None and (call is None or call < hint[1]):
                    hint[2] = position

    def _trim(self, window: _Window, *, publish: bool) -> None:
        """Under the lock: drop the oldest units that do not fit, as ``trim_messages`` would.

        Walks from the window's start to the first cut where the rest fits (every message it
        passes is dropped, so this is O(1) amortized), then, if that cut is not a user message,
        on to the first user message at a cut (see ``_first_user``).
        """
        items = self._items
        end = len(items)
        kept = len(self._head) + end - self._start
        total = self._token_total
        max_messages = window.max_messages
        max_tokens = window.max_tokens
        if kept <= max_messages and total <= max_tokens:
            return
        tokens = self._tokens
        offset = self._offset
        reach_of = window.reach
        reach = window.orphan_reach
        best = newest_cut = newest_other = -1
        position = self._start
        while position < end:
            message = items[position]
            role = message.role
            if role != "system":
                if role != "tool":
                    newest_other = position
                    if offset + position > reach:
                        if kept <= max_messages and total <= max_tokens:
                            best = position
                            break
                        newest_cut = position
                kept -= 1
                total -= tokens[position]
                passed = reach_of.get(offset + position)
                if passed is not None and passed > reach:
                    reach = passed
            position += 1
        if best >= 0:
            cut = best if items[best].role == "user" else self._first_user(window, best, reach)
        elif newest_cut >= 0:
            cut = newest_cut
        elif newest_other >= 0:
            cut = newest_other
        else:
            return
        if cut > self._start:
            self._drop(window, cut, publish=publish)

    def _first_user(self, window: _Window, cut: int, reach: int) -> int:
        """The first user message at a cut from ``cut`` on, else ``cut``.

        ``reach`` is the last result answering a call before ``cut``. A fruitless search is
        remembered in ``window.hint`` (where it ended and the reach there), so the next one
        resumes from there: a long run with no user message is scanned once, not per append.
        """
        items = self._items
        end = len(items)
        offset = self._offset
        position = cut
        hint = window.hint
        if hint is not None and hint[0] <= offset + cut <= hint[1]:
            position = hint[1] - offset
            reach = max(reach, hint[2])
        reach_of = window.reach
        while position < end:
            if items[position].role == "user" and offset + position > reach:
                window.hint = None
                return position
            passed = reach_of.get(offset + position)
            if passed is not None and passed > reach:
                reach = passed
            position += 1
        window.hint = [offset + cut, offset + end, reach]
        return cut

    def _drop(self, window: _Window, cut: int, *, publish: bool) -> None:
        """Under the lock: drop ``_items[_start:cut]`` (pinning its system messages)."""
        items = self._items
        tokens = self._tokens
        sizes = self._sizes
        offset = self._offset
        pinned: list[Message] = []
        dropped: list[Message] = []
        for position in range(self._start, cut):
            message = items[position]
            if message.role == "system":
                pinned.append(message)
                continue
            dropped.append(message)
            self._token_total -= tokens[position]
            self._size -= sizes[position]
            self._forget(window, message, offset + position, offset + cut)
        if pinned:
            self._head = (*self._head, *pinned)
            self._system_at = self._system_at[len(pinned) :]
        self._start = cut
        if cut > len(items) >> 1:
            # More than half of the storage is dead: copy the live part (less than what died
            # since the last compaction, so O(1) amortized). Old snapshots keep the old list.
            self._items = items[cut:]
            self._tokens = tokens[cut:]
            self._sizes = sizes[cut:]
            self._offset = offset + cut
            self._start = 0
        self._snapshot = None
        if dropped and publish:
            self._version += 1
            self._publish("trim", dropped)

    def _forget(self, window: _Window, message: Message, position: int, first: int) -> None:
        """Account for a message a window dropped: result index and call bookkeeping.

        ``first`` is the (absolute) position the window now starts at. Only a fallback cut
        (when no unit boundary exists) drops a call whose results stay; they become orphans.
        """
        role = message.role
        if role == "tool":
            result_at = window.result_at
            for part in message.parts:
                # Only if no later message holds a result for the same call (the index keeps
                # the last one appended).
                if type(part) is ToolResultPart and result_at.get(part.call_id) == position:
                    del result_at[part.call_id]
                    del self._results[part.call_id]
        elif role == "assistant":
            reach = window.reach.pop(position, None)
            if reach is not None and reach >= first and reach > window.orphan_reach:
                window.orphan_reach = reach
            call_at = window.call_at
            for part in message.parts:
                if type(part) is ToolCallPart and call_at.get(part.id) == position:
                    del call_at[part.id]

    # -- internals: events -----------------------------------------------------------------

    def _publish(self, kind: EventKind, messages: Sequence[Message]) -> None:
        """Under the lock, after a mutation: drop the cached snapshot and queue the event."""
        subscriptions = self._subscriptions
        if not subscriptions:
            self._snapshot = None
            return
        snapshot = self._snapshot = self._view()
        event = HistoryEvent(kind, tuple(messages), self._version, snapshot)
        self._pending.append((event, subscriptions))

    def _deliver(self) -> None:
        """Deliver queued events in order, unless this or another thread is delivering already.

        The thread that finds nobody delivering drains the queue, including events other
        threads queue meanwhile; the others return at once. So events reach listeners in
        mutation order, and a listener that mutates (which re-enters here) cannot recurse.
        """
        lock = self._lock
        with lock:
            if self._delivering:
                return
            self._delivering = True
        try:
            while True:
                with lock:
                    if not self._pending:
                        self._delivering = False
                        return
                    event, subscriptions = self._pending.popleft()
                for subscription in subscriptions:
                    if subscription.active:
                        self._call(subscription.listener, event)
        except BaseException:  # KeyboardInterrupt in a listener: let a later mutation resume
            with lock:
                self._delivering = False
            raise

    def _call(self, listener: Listener, event: HistoryEvent) -> None:
        try:
            listener(event)
        except Exception as error:
            handler = self._on_listener_error or _log_listener_error
            try:
                handler(error, event, listener)
            except Exception:
                logger.exception(
                    "on_listener_error %r raised while handling an error from listener %r",
                    handler,
                    listener,
                )


class _Binding:
    """A history's store binding: where writes go, and (async) the writes not sent yet.

    It also knows the conversation's message ids: stores keep them unique (so that a write
    sent again is recognised as a replay), and a bound history refuses a message whose id is
    taken before anything is written, so memory and store never disagree.
    """

    __slots__ = ("asynchronous", "conversation_id", "flushing", "ids", "queue", "store")

    def __init__(
        self,
        store: Any,
        conversation_id: str,
        *,
        asynchronous: bool,
        messages: Sequence[Message] = (),
    ) -> None:
        self.store = store
        self.conversation_id = conversation_id
        self.asynchronous = asynchronous
        self.ids = {message.id for message in messages}
        self.queue: deque[tuple[Literal["append", "replace"], list[Message]]] = deque()
        import asyncio  # only async bindings need it; importing it costs ~15 ms at startup

        self.flushing = asyncio.Lock()  # serializes flushes (binds to a loop on first use)

    def appended(self, messages: Sequence[Message]) -> None:
        """Under the history's lock, before the append is applied: write or queue it.

        Raises:
            threadline.ValidationError: a message's id is in the conversation already.
        """
        _refuse_taken_ids(messages, self.ids, self.conversation_id)
        if self.asynchronous:
            self.queue.append(("append", list(messages)))
        else:
            self.store.append(self.conversation_id, list(messages))
        self.ids.update(message.id for message in messages)

    def replaced(self, messages: Sequence[Message]) -> None:
        """Under the history's lock, before a reset or restore is applied: write or queue it.

        Raises:
            threadline.ValidationError: two of the messages share an id.
        """
        _refuse_taken_ids(messages, set(), self.conversation_id)
        if self.asynchronous:
            self.queue.append(("replace", list(messages)))
        else:
            self.store.replace(self.conversation_id, list(messages))
        self.ids = {message.id for message in messages}


def _refuse_taken_ids(messages: Sequence[Message], taken: set[str], conversation_id: str) -> None:
    """Raise when a message's id is in ``taken`` or earlier in ``messages``."""
    seen: set[str] = set()
    for index, message in enumerate(messages):
        if message.id in taken or message.id in seen:
            detail = ErrorDetail(
                f"messages[{index}].id",
                f"{message.id!r} is already the id of a message in conversation "
                f"{conversation_id!r}; a bound history keeps message ids unique, as its store "
                "does (a store skips a message it holds already, as a replay). Give the "
                "message its own id (leave id out to get a new one); nothing changed",
                "duplicate_id",
            )
            raise ValidationError(f"invalid messages: {detail}", [detail])
        seen.add(message.id)


def _is_async_store(store: object) -> bool:
    return inspect.iscoroutinefunction(getattr(store, "append", None))


class _Window:
    """A history's window: its budgets and the bookkeeping that makes trimming O(1) amortized.

    Positions are absolute (``History._offset`` + index), so compaction never rewrites them.
    """

    __slots__ = (
        "call_at",
        "hint",
        "max_messages",
        "max_tokens",
        "orphan_reach",
        "reach",
        "result_at",
    )

    def __init__(self, max_messages: int | None, max_tokens: int | None) -> None:
        self.max_messages = sys.maxsize if max_messages is None else max_messages
        self.max_tokens = sys.maxsize if max_tokens is None else max_tokens
        self.clear()

    def clear(self) -> None:
        self.call_at: dict[str, int] = {}
        """Tool call id -> position of the latest message making that call."""
        self.reach: dict[int, int] = {}
        """Position of a message with calls -> position of the last result answering one."""
        self.result_at: dict[str, int] = {}
        """Tool call id -> position of the last message holding a result for it."""
        self.orphan_reach = -1
        """Position of the last result whose call is not in the window."""
        self.hint: list[int] | None = None
        """[from, to, reach]: no user message at a cut in [from, to); reach as of ``to``."""


_H = TypeVar("_H", bound=History)


def _rebuild_history(
    cls: type[_H], messages: list[Message], version: int, config: dict[str, Any]
) -> _H:
    history = cls.__new__(cls)
    plugins = config.pop("plugins", ())
    history._configure(**config)
    history._install(messages, version, *history._measure_all(messages))
    if history._window is not None:
        history._trim(history._window, publish=False)
    for plugin in plugins:
        history._register(plugin)
    return history


def _hook(plugin: object, name: str) -> Callable[..., Any] | None:
    """``plugin``'s method ``name``, or ``None`` when it lacks one or inherits Plugin's no-op."""
    method = getattr(plugin, name, None)
    if method is None or getattr(method, "__threadline_default_hook__", False):
        return None
    if not callable(method):
        raise TypeError(f"plugin {plugin!r} has a {name} attribute that is not callable")
    return cast("Callable[..., Any]", method)


def _log_plugin_error(error: Exception, plugin: object, hook: str) -> None:
    logger.error(
        "a History plugin %r raised in %s; the history was left as it was and the other "
        "plugins ran",
        plugin,
        hook,
        exc_info=error,
    )


# ---------------------------------------------------------------------------------------------
# Validation of input that is not already a Message


def _validated(item: object, path: str, where: str) -> Message:
    result = _from_input(item, path)
    if isinstance(result, Message):
        return result
    raise _invalid(where, result)


def _validated_batch(
    items: Iterable[object], where: str, *, limits: Limits | None = None
) -> list[Message]:
    """``items`` as a new list of messages, every mapping validated; raise listing all problems.

    With ``limits``, the items are checked against them first (sizes, counts, nesting).
    """
    if isinstance(items, (Message, Mapping, str, bytes, bytearray)) or not isinstance(
        items, Iterable
    ):
        hint = "; to add one message use append(message)" if isinstance(items, Message) else ""
        detail = ErrorDetail(
            "messages",
            f"expected an iterable of messages, got {type(items).__name__}{hint}",
            "messages_type",
        )
        raise _invalid(where, [detail])
    if limits is not None:
        items = items if isinstance(items, list) else list(items)
        enforce_limits(
            items, limits, what=where, layout=THREADLINE_LAYOUT, path="messages", depth=2
        )
    out: list[Message] = []
    details: list[ErrorDetail] = []
    for index, item in enumerate(items):
        if isinstance(item, Message):
            out.append(item)
            continue
        result = _from_input(item, f"messages[{index}]")
        if isinstance(result, Message):
            out.append(result)
        else:
            details.extend(result)
    if details:
        raise _invalid(where, details)
    return out


def _from_input(item: object, path: str) -> Message | list[ErrorDetail]:
    """``item`` as a Message, or the problems that stop it from being one."""
    if isinstance(item, Message):
        return item
    if not isinstance(item, Mapping):
        return [
            ErrorDetail(
                path,
                f"not a message (got {type(item).__name__}); pass a Message (user_message(...), "
                "assistant_message(...) ...) or a mapping of its fields",
                "message_type",
            )
        ]
    try:
        message = Message.model_validate(item)
    except pydantic.ValidationError as error:
        return list(translate_errors(error, "", prefix=path).errors)
    return blob_mark_errors(message, path) or message


def _invalid(where: str, details: Sequence[ErrorDetail]) -> ValidationError:
    lines = "\n".join(f"  {detail}" for detail in details)
    noun = "problem" if len(details) == 1 else "problems"
    return ValidationError(
        f"invalid input to {where}, nothing was changed: {len(details)} {noun}\n{lines}", details
    )
