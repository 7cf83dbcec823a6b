"""A history's events: what a mutation did, who listens, and delivery in mutation order.

Every mutation of a `History` queues one `HistoryEvent` (when someone
subscribed) under the history's lock; listeners run once the lock is released, from a
per-history queue drained by one thread at a time, so every listener sees every event in
mutation order even when several threads mutate at once, and a listener may read or mutate
the history. A listener that takes no argument is called without the event; one that is a
coroutine function is awaited (`threadline._background`); one that can take neither is
refused when it subscribes.
"""

from __future__ import annotations

import inspect
import logging
import threading
from collections import deque
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Literal
from typing import TypeAlias
from typing import cast

from threadline._background import Background
from threadline._background import hand_error
from threadline._log import Log
from threadline._log import Snapshot
from threadline.messages import Message

__all__ = ["EventKind", "Events", "HistoryEvent", "Listener", "ListenerErrorHandler"]

logger = logging.getLogger("threadline")

EventKind: TypeAlias = Literal["append", "extend", "reset", "restore", "trim"]
"""What a mutation did; the ``kind`` of a `HistoryEvent`."""


@dataclass(frozen=True, slots=True)
class HistoryEvent:
    """What one mutation of a `History` did, as a listener receives it."""

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
    `messages` and `version`."""


Listener: TypeAlias = "Callable[[HistoryEvent], object] | Callable[[], object]"
"""Called with every [`HistoryEvent`][threadline.HistoryEvent], or with no argument when it
takes none; what it returns is ignored, unless it is awaitable: then it is awaited."""

ListenerErrorHandler: TypeAlias = Callable[[Exception, HistoryEvent, Listener], object]
"""Called as ``handler(error, event, listener)`` when a listener raises."""


class _Subscription:
    __slots__ = ("active", "call", "listener")

    def __init__(self, listener: Listener) -> None:
        self.listener = listener
        self.call = _taking_the_event(listener)
        self.active = True


class Events:
    """One history's subscriptions and the queue of events not delivered yet.

    Shares the history's lock: `publish` is called under it, `deliver` after it
    was released.
    """

    __slots__ = ("background", "delivering", "lock", "on_error", "pending", "subscriptions")

    subscriptions: tuple[_Subscription, ...]
    pending: deque[tuple[HistoryEvent, tuple[_Subscription, ...]]]
    """Events queued and not delivered yet, each with the subscriptions it goes to."""
    delivering: bool

    def __init__(
        self,
        lock: threading.RLock,
        on_error: ListenerErrorHandler | None,
        background: Background,
    ) -> None:
        self.lock = lock
        self.on_error = on_error
        self.background = background
        self.subscriptions = ()
        self.pending = deque()
        self.delivering = False

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add ``listener`` after the others; return the function that removes it.

        Raises:
            TypeError: ``listener`` is not callable, or cannot be called with the event or
                with no argument.
        """
        if not callable(listener):
            raise TypeError(f"listener must be callable, got {type(listener).__name__}")
        subscription = _Subscription(listener)
        with self.lock:
            self.subscriptions = (*self.subscriptions, subscription)

        def unsubscribe() -> None:
            with self.lock:
                subscription.active = False
                self.subscriptions = tuple(
                    other for other in self.subscriptions if other is not subscription
                )

        return unsubscribe

    def publish(self, kind: EventKind, messages: Sequence[Message], log: Log) -> None:
        """Under the lock, right after a mutation of ``log``: queue its event, if anyone listens."""
        subscriptions = self.subscriptions
        if subscriptions:
            event = HistoryEvent(kind, tuple(messages), log.version, log.current())
            self.pending.append((event, subscriptions))

    def deliver(self) -> None:
        """Deliver queued events in order, unless this or another thread is delivering already.

        The thread that finds nobody delivering drains the queue, including events other
        threads queue meanwhile; the others return at once. So events reach listeners in
        mutation order, and a listener that mutates (which re-enters here) cannot recurse.
        """
        lock = self.lock
        with lock:
            if self.delivering:
                return
            self.delivering = True
        try:
            while True:
                with lock:
                    if not self.pending:
                        self.delivering = False
                        return
                    event, subscriptions = self.pending.popleft()
                for subscription in subscriptions:
                    if subscription.active:
                        self._call(subscription, event)
        except BaseException:  # KeyboardInterrupt in a listener: let a later mutation resume
            with lock:
                self.delivering = False
            raise

    def _call(self, subscription: _Subscription, event: HistoryEvent) -> None:
        listener = subscription.listener
        try:
            result = subscription.call(event)
        except Exception as error:
            self._failed(error, event, listener)
        else:
            if inspect.isawaitable(result):
                self.background.run(result, lambda error: self._failed(error, event, listener))

    def _failed(self, error: Exception, event: HistoryEvent, listener: Listener) -> None:
        handler = self.on_error or _log_listener_error
        hand_error(
            handler,
            (error, event, listener),
            option="on_listener_error",
            kind="listener",
            source=listener,
        )


def _taking_the_event(listener: Listener) -> Callable[[HistoryEvent], object]:
    """``listener`` when it can be called with the event; a function calling it with no
    argument when it takes none (``subscribe(rerender)``).

    Raises:
        TypeError: ``listener`` can be called neither way.
    """
    with_event = cast("Callable[[HistoryEvent], object]", listener)
    try:
        signature = inspect.signature(listener)
    except (TypeError, ValueError):  # no signature to read (some builtins): given the event
        return with_event
    try:
        signature.bind(None)
    except TypeError:
        pass
    else:
        return with_event
    try:
        signature.bind()
    except TypeError:
        raise TypeError(
            f"listener {listener!r} takes {signature}, so it cannot be called with one "
            "argument (the HistoryEvent) or with none: write it as `def listener(event): ...` "
            "(or with no parameters, to be told only that the history changed)"
        ) from None
    alone = cast("Callable[[], object]", listener)
    return lambda event: alone()


def _log_listener_error(error: Exception, event: HistoryEvent, listener: Listener) -> None:
    logger.error(
        "a History listener %r raised on the %r event (version %d); the mutation was applied "
        "and the other listeners ran",
        listener,
        event.kind,
        event.version,
        exc_info=error,
    )
