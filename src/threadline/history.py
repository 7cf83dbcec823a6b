"""The :class:`History` container: an observable, thread-safe conversation with O(1) snapshots.

Agent loops append to a history, UIs read it on every render, stores and plugins watch it.
Three ideas make that cheap and safe:

- **Append-only storage; snapshots are views.** Messages live in a list that is only ever
  appended to. A :class:`Snapshot` is a view of it (the list, a start, a stop, a version), so
  taking one costs the same at 100 messages as at 100,000, and the same object is returned
  until the next mutation (``snapshot is last_snapshot`` tells a UI nothing changed). An append
  only adds past the stop of every existing snapshot, and :meth:`History.reset` and
  :meth:`History.restore` install a *new* list, so a snapshot never changes once taken.
- **Events after the lock.** Every mutation bumps :attr:`History.version` and, when someone
  subscribed, queues a :class:`HistoryEvent`. Listeners run once the lock is released (they may
  read the history, or even mutate it), from a per-history queue, so every listener sees every
  event in mutation order even when several threads mutate at once.
- **Validation at the door.** ``append``, ``extend`` and ``restore`` take :class:`Message`
  objects or mappings of their fields. Mappings are validated first; invalid input raises
  :class:`~threadline.ValidationError` naming the path of the bad field and changes nothing.
  A ``Message`` is valid by construction (it is frozen), so appending one costs an
  ``isinstance`` check.

Windows (``max_messages``, ``max_tokens``), ``total_tokens`` and plugins come with
:mod:`threadline.context`; until then the constructor refuses them instead of ignoring them.
"""

from __future__ import annotations

import itertools
import json
import logging
import operator
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NoReturn, TypeAlias, TypeVar, overload

import pydantic
from typing_extensions import Self

from threadline._validation import translate_errors
from threadline.errors import ErrorDetail, ValidationError
from threadline.integrity import prepare_messages
from threadline.messages import Message, ReasoningPart, TextPart, ToolCallPart, ToolResultPart
from threadline.serialization import dump_json, load_json

__all__ = [
    "EventKind",
    "History",
    "HistoryEvent",
    "Listener",
    "ListenerErrorHandler",
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

    __slots__ = ("_head", "_items", "_start", "_stop", "_version")

    # A snapshot is ``_head + _items[_start:_stop]``. ``_head`` holds system messages pinned
    # ahead of a window; it is empty until windowing (threadline.context) trims.
    _head: tuple[Message, ...]
    _items: list[Message]
    _start: int
    _stop: int
    _version: int

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
        _init_snapshot(self, items, 0, len(items), (), operator.index(version))

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
) -> None:
    _set_slot(snapshot, "_items", items)
    _set_slot(snapshot, "_start", start)
    _set_slot(snapshot, "_stop", stop)
    _set_slot(snapshot, "_head", head)
    _set_slot(snapshot, "_version", version)


def _view(
    items: list[Message], start: int, stop: int, head: tuple[Message, ...], version: int
) -> Snapshot:
    """A snapshot over existing storage, without copying or validating."""
    snapshot: Snapshot = _new_object(Snapshot)
    _init_snapshot(snapshot, items, start, stop, head, version)
    return snapshot


def _rebuild_snapshot(messages: list[Message], version: int) -> Snapshot:
    return _view(messages, 0, len(messages), (), version)


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
            starting state, not a mutation: :attr:`version` starts at 0 and no event is sent.
        max_messages: keep at most this many messages (a window). Not available yet.
        max_tokens: keep at most this many estimated tokens (a window). Not available yet.
        token_counter: counts one message's tokens; stored for windows and ``total_tokens``.
        plugins: context plugins (masking, summaries). Not available yet.
        on_listener_error: called as ``handler(error, event, listener)`` when a listener
            raises; by default the error is logged to the ``"threadline"`` logger.
        on_plugin_error: called when a plugin raises; stored for plugins.

    Raises:
        threadline.ValidationError: an initial message is invalid.
        NotImplementedError: a window or plugins were asked for.
    """

    # Storage. ``_items`` is append-only: nothing in it is ever replaced or removed, so every
    # snapshot taken earlier stays valid; reset and restore install a new list instead. The live
    # history is ``_head + _items[_start:]``, where ``_head`` holds system messages pinned ahead
    # of a window and ``_start`` is where the window begins (``()`` and 0 until windowing).
    # Windowing (threadline.context) will trim by advancing ``_start`` (O(1)), moving system
    # messages it passes into ``_head``, and, once more than half of ``_items`` is dead,
    # installing the compacted copy ``_items[_start:]`` as new storage (old snapshots keep the
    # old list). ``total_tokens`` will be a token list aligned index for index with ``_items``
    # (sliced with it on compaction) plus a running total.
    __slots__ = (
        "__weakref__",
        "_delivering",
        "_head",
        "_items",
        "_lock",
        "_max_messages",
        "_max_tokens",
        "_on_listener_error",
        "_on_plugin_error",
        "_pending",
        "_plugins",
        "_results",
        "_size",
        "_snapshot",
        "_start",
        "_subscriptions",
        "_system",
        "_token_counter",
        "_version",
    )

    _items: list[Message]
    _start: int
    _head: tuple[Message, ...]
    _version: int
    _snapshot: Snapshot | None
    _size: int
    _results: dict[str, ToolResultPart]
    _system: tuple[Message, ...]
    _lock: threading.RLock
    _subscriptions: tuple[_Subscription, ...]
    _pending: deque[tuple[HistoryEvent, tuple[_Subscription, ...]]]
    _delivering: bool
    _max_messages: int | None
    _max_tokens: int | None
    _token_counter: Callable[[Message], int] | None
    _plugins: tuple[Any, ...]
    _on_listener_error: ListenerErrorHandler | None
    _on_plugin_error: Callable[..., object] | None

    def __init__(
        self,
        messages: Iterable[Message | Mapping[str, Any]] = (),
        *,
        max_messages: int | None = None,
        max_tokens: int | None = None,
        token_counter: Callable[[Message], int] | None = None,
        plugins: Iterable[Any] = (),
        on_listener_error: ListenerErrorHandler | None = None,
        on_plugin_error: Callable[..., object] | None = None,
    ) -> None:
        plugins = tuple(plugins)
        for name, value in (("max_messages", max_messages), ("max_tokens", max_tokens)):
            if value is not None:
                raise NotImplementedError(
                    f"History({name}=...) is not available in this version of threadline: "
                    "windows arrive with context management. Leave it unset for now."
                )
        if plugins:
            raise NotImplementedError(
                "History(plugins=...) is not available in this version of threadline: plugins "
                "arrive with context management. Leave it unset for now."
            )
        self._configure(
            max_messages=max_messages,
            max_tokens=max_tokens,
            token_counter=token_counter,
            plugins=plugins,
            on_listener_error=on_listener_error,
            on_plugin_error=on_plugin_error,
        )
        self._install(_validated_batch(messages, "History"), version=0)

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
        """The system messages, in order."""
        return self._system

    def without_system(self) -> list[Message]:
        """The messages that are not system messages, in order (a new list)."""
        return [message for message in self.snapshot() if message.role != "system"]

    def messages_for_model(self, mode: Literal["auto", "strict"] = "auto") -> list[Message]:
        """The history as a model should see it: :func:`~threadline.prepare_messages` of it.

        Internal messages and hook parts are dropped, dangling tool calls answered, misplaced
        results moved (``auto``), or :class:`~threadline.IntegrityError` raised (``strict``).
        The stored history is not changed.

        Raises:
            threadline.IntegrityError: a defect repair may not fix, or any defect in ``strict``.
        """
        return prepare_messages(self.snapshot(), mode)

    def get_tool_result(self, call_id: str) -> ToolResultPart | None:
        """The :class:`~threadline.ToolResultPart` answering the call ``call_id``, or ``None``.

        O(1): results are indexed as they are appended. When a history holds several results
        for one call (an integrity defect), the last appended wins.
        """
        return self._results.get(call_id)

    @property
    def size(self) -> int:
        """Characters of content over all messages (see :func:`content_chars`); O(1)."""
        return self._size

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

    def append(self, message: Message | Mapping[str, Any]) -> None:
        """Add one message at the end and notify listeners with an ``append`` event.

        Args:
            message: a :class:`Message`, or a mapping of its fields (validated).

        Raises:
            threadline.ValidationError: ``message`` is not a valid message; nothing changes.
        """
        if not isinstance(message, Message):
            message = _validated(message, "message", "History.append")
        with self._lock:
            self._items.append(message)
            self._version += 1
            self._track(message)
            self._publish("append", (message,))
        if self._pending:
            self._deliver()

    def extend(self, messages: Iterable[Message | Mapping[str, Any]]) -> None:
        """Add messages at the end as one mutation: one ``extend`` event, one version step.

        All of them are validated before any is added. An empty batch changes nothing: no
        event, no version step.

        Args:
            messages: messages, or mappings of their fields (validated).

        Raises:
            threadline.ValidationError: an item is not a valid message (every problem is
                listed with its path, such as ``messages[2].parts[0].arguments``); nothing
                changes.
        """
        items = _validated_batch(messages, "History.extend")
        if not items:
            return
        with self._lock:
            self._items.extend(items)
            self._version += 1
            for message in items:
                self._track(message)
            self._publish("extend", items)
        if self._pending:
            self._deliver()

    def reset(self) -> None:
        """Remove every message and notify listeners once with a ``reset`` event.

        Earlier snapshots keep their messages. Resetting an empty history is still a mutation
        (the version steps and listeners hear of it).
        """
        with self._lock:
            self._install([], self._version + 1)
            self._publish("reset", ())
        if self._pending:
            self._deliver()

    def restore(self, messages: Iterable[Message | Mapping[str, Any]]) -> None:
        """Replace every message with ``messages`` and notify listeners once (``restore``).

        Takes anything iterable, a :class:`Snapshot` included: ``history.restore(earlier)``
        undoes everything since ``earlier`` was taken.

        Args:
            messages: the new contents: messages, or mappings of their fields (validated).

        Raises:
            threadline.ValidationError: an item is not a valid message; nothing changes.
        """
        items = _validated_batch(messages, "History.restore")
        with self._lock:
            self._install(items, self._version + 1)
            self._publish("restore", items)
        if self._pending:
            self._deliver()

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

        Listeners are not copied (they subscribed to this history), nor is a store binding.
        """
        snapshot = self.snapshot()
        return _rebuild_history(type(self), list(snapshot), snapshot.version, self._config())

    def __copy__(self) -> Self:
        return self.copy()

    def __reduce__(self) -> tuple[Any, ...]:
        # Messages, version and configuration; the lock, listeners and queue are per-process.
        snapshot = self.snapshot()
        return (_rebuild_history, (type(self), list(snapshot), snapshot.version, self._config()))

    # -- internals -------------------------------------------------------------------------

    def _configure(
        self,
        *,
        max_messages: int | None,
        max_tokens: int | None,
        token_counter: Callable[[Message], int] | None,
        plugins: tuple[Any, ...],
        on_listener_error: ListenerErrorHandler | None,
        on_plugin_error: Callable[..., object] | None,
    ) -> None:
        self._max_messages = max_messages
        self._max_tokens = max_tokens
        self._token_counter = token_counter
        self._plugins = plugins
        self._on_listener_error = on_listener_error
        self._on_plugin_error = on_plugin_error
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

    def _install(self, items: list[Message], version: int) -> None:
        """Make ``items`` (a list nobody else holds) the storage; rebuild what derives from it."""
        self._items = items
        self._start = 0
        self._head = ()
        self._version = version
        self._snapshot = None
        self._size = 0
        self._results = {}
        self._system = ()
        for message in items:
            self._track(message)

    def _track(self, message: Message) -> None:
        """Account for a message that joined the storage: size, result index, system list."""
        self._size += content_chars(message)
        role = message.role
        if role == "tool":
            for part in message.parts:
                if type(part) is ToolResultPart:
                    self._results[part.call_id] = part
        elif role == "system":
            self._system = (*self._system, message)

    def _view(self) -> Snapshot:
        return _view(self._items, self._start, len(self._items), self._head, self._version)

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


_H = TypeVar("_H", bound=History)


def _rebuild_history(
    cls: type[_H], messages: list[Message], version: int, config: dict[str, Any]
) -> _H:
    history = cls.__new__(cls)
    history._configure(**config)
    history._install(messages, version)
    return history


# ---------------------------------------------------------------------------------------------
# Content size


def content_chars(message: Message) -> int:
    """Characters of content in ``message``: what :attr:`History.size` adds up.

    Counted: text parts' text; reasoning parts' readable text (not signatures, encrypted
    state or summaries); tool calls' arguments as compact JSON (``{"city":"Paris"}``, non-ASCII
    kept as is), or the raw text for a call whose arguments were not a JSON object; tool
    results' text (a string result, or the text parts of a multi-part one). Files, hook state,
    provider-run tool parts, ids, names and metadata count zero.
    """
    total = 0
    for part in message.parts:
        if isinstance(part, (TextPart, ReasoningPart, ToolResultPart)):
            total += len(part.text)
        elif isinstance(part, ToolCallPart):
            if part.raw_arguments is not None:
                total += len(part.raw_arguments)
            else:
                total += len(json.dumps(part.arguments, ensure_ascii=False, separators=(",", ":")))
    return total


# ---------------------------------------------------------------------------------------------
# Validation of input that is not already a Message


def _validated(item: object, path: str, where: str) -> Message:
    result = _from_input(item, path)
    if isinstance(result, Message):
        return result
    raise _invalid(where, result)


def _validated_batch(items: Iterable[object], where: str) -> list[Message]:
    """``items`` as a new list of messages, every mapping validated; raise listing all problems."""
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
        return Message.model_validate(item)
    except pydantic.ValidationError as error:
        return list(translate_errors(error, "", prefix=path).errors)


def _invalid(where: str, details: Sequence[ErrorDetail]) -> ValidationError:
    lines = "\n".join(f"  {detail}" for detail in details)
    noun = "problem" if len(details) == 1 else "problems"
    return ValidationError(
        f"invalid input to {where}, nothing was changed: {len(details)} {noun}\n{lines}", details
    )
