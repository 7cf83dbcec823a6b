"""The [`History`][] container: an observable, thread-safe conversation with O(1) snapshots.

Agent loops append to a history, UIs read it on every render, stores and plugins watch it:

- **Append-only storage; snapshots are views.** A [`Snapshot`][] is a view of storage that
  is only ever appended to, so taking one costs the same at 100 messages as at 100,000, the
  same object is returned until the next mutation (``snapshot is last_snapshot`` tells a UI
  nothing changed), and a snapshot never changes once taken.
- **Windows advance a start.** With ``max_messages`` or ``max_tokens`` every mutation drops the
  oldest whole units that no longer fit (the rule of [`threadline.context.trim_messages`][], applied
  incrementally), in O(1) amortized time; token counts are kept as messages come and go.
- **Events after the lock.** Every mutation bumps [`History.version`][] and, when someone
  subscribed, queues a [`HistoryEvent`][]. Listeners run once the lock is released (they may
  read the history, or even mutate it), from a per-history queue, so every listener sees every
  event in mutation order even when several threads mutate at once.
- **Validation at the door.** ``append``, ``extend`` and ``restore`` take [`Message`][]
  objects or mappings of their fields. Mappings are validated first; invalid input raises
  [`ValidationError`][] naming the path of the bad field and changes nothing.
  A ``Message`` is valid by construction (it is frozen): appending one is an ``isinstance``.

Plugins ([`threadline.context`][]) hook in at read time (``transform``), after appends
(``after_append``) and on demand (``reduce``); their errors go to ``on_plugin_error``. A bound
history ([`History.bind`][], [`History.abind`][]) writes each mutation to its store before
applying it (or queues it, for [`History.flush`][]), so memory and store agree.

This module is the contract. [`History`][] takes its lock and delegates to private parts
that know nothing of each other's insides: storage, snapshots and the window; the event queue;
the plugin hooks; the store binding; validation and timestamps (``docs/architecture.md`` names
the modules).
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from datetime import datetime
from datetime import timedelta
from typing import TYPE_CHECKING
from typing import Any
from typing import Literal
from typing import overload

from typing_extensions import Self

from threadline._background import Background
from threadline._binding import Binding
from threadline._binding import OnConflict
from threadline._binding import bind_async
from threadline._binding import bind_blocking
from threadline._events import EventKind
from threadline._events import Events
from threadline._events import HistoryEvent
from threadline._events import Listener
from threadline._events import ListenerErrorHandler
from threadline._following import stop_following
from threadline._forking import Branching
from threadline._forking import rebuild_history
from threadline._history_encoding import Encoding
from threadline._log import Log
from threadline._log import Snapshot
from threadline._log import rebuild_snapshot
from threadline._log import snapshot_storage
from threadline._plugins import PluginErrorHandler
from threadline._plugins import Plugins
from threadline._refreshing import Refreshing
from threadline._sequences import Clock
from threadline._sequences import clock_for
from threadline._sequences import history_input
from threadline._sequences import leading_messages
from threadline._sequences import read_message
from threadline._usage_readers import total_usage
from threadline._view._notebook import HtmlRepr
from threadline.integrity import Pending
from threadline.integrity import pending_calls
from threadline.integrity import prepare_messages
from threadline.limits import Limits
from threadline.limits import enforce_counts
from threadline.limits import enforce_limits
from threadline.limits import resolve_limits
from threadline.messages import Message
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart
from threadline.tokens import TokenCounter
from threadline.tokens import content_chars
from threadline.usage import Usage

if TYPE_CHECKING:
    from threadline.context.base import Plugin
    from threadline.stores.base import AsyncStore
    from threadline.stores.base import Store

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


_rebuild_snapshot = rebuild_snapshot  # where pickles of a Snapshot from before _log.py look
_rebuild_history = rebuild_history  # where pickles of a History from before _forking.py look


class History(Branching, Refreshing, Encoding, HtmlRepr):
    """A conversation: an ordered, observable, thread-safe container of [`Message`][].

    ``len(history)``, iteration, ``history[i]`` and ``history[a:b]`` read the current
    [`snapshot`][], so each is consistent even while other threads append.

    Args:
        messages: the initial messages, or mappings of their fields (validated). They are the
            starting state, not a mutation: [`version`][] starts at 0 and no event is sent
            (a window trims them silently).
        max_messages: keep at most this many messages, system messages included: after every
            mutation the oldest whole units are dropped (see [`threadline.context.window`][]).
        max_tokens: keep at most this many tokens (as ``token_counter`` counts them), system
            messages included, the same way.
        token_counter: counts one message's tokens, for ``max_tokens`` and
            [`total_tokens`][]; [`estimate_tokens`][] when ``None``.
        plugins: context plugins ([`ToolResultMasking`][],
            [`RollingSummary`][]...), registered in order as by
            [`use`][].
        on_listener_error: called as ``handler(error, event, listener)`` when a listener
            raises; by default the error is logged to the ``"threadline"`` logger.
        on_plugin_error: called as ``handler(error, plugin, hook)`` when a plugin's
            ``transform`` or ``after_append`` (or a background reduce) raises; by default the
            error is logged to the ``"threadline"`` logger.
        timestamps: stamp ``created_at = clock()`` on each message without one as this
            history first stores it (initial, appended, restored; the stored message is a
            copy), for ``reduce(older_than=...)``. Off by default: replays stay deterministic.
        clock: the time for ``timestamps`` (UTC now by default; a fixed clock in tests).

    Raises:
        threadline.ValidationError: an initial message is invalid.
        TypeError: a budget is not an ``int``; ``token_counter`` or ``clock`` is not
            callable; a plugin could never run (a bare function, say).
        ValueError: a budget is below 1, or ``clock`` is given without ``timestamps``.
        threadline.PluginError: a plugin's ``on_registered`` raised.
    """

    # One lock guards every part. A mutation validates and measures outside it; under it, it
    # writes through the binding, changes the log and queues its events; then it delivers the
    # events and runs the plugins' after_append.
    __slots__ = ("__weakref__", "_binding", "_clock", "_events", "_lock", "_log", "_plugins")

    _lock: threading.RLock
    _log: Log
    _events: Events
    _plugins: Plugins
    _binding: Binding | None
    _clock: Clock | None

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
        timestamps: bool = False,
        clock: Clock | None = None,
    ) -> None:
        self._configure(
            max_messages=max_messages,
            max_tokens=max_tokens,
            token_counter=token_counter,
            on_listener_error=on_listener_error,
            on_plugin_error=on_plugin_error,
            timestamps=timestamps,
            clock=clock,
        )
        self._start(history_input(messages, "History", self._clock), 0, plugins)

    # -- reading ---------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """The messages as they are now, as an immutable [`Snapshot`][].

        O(1) at any length, and the same object until the next mutation, so ``is`` tells a UI
        whether anything changed. A snapshot never changes once taken.
        """
        snapshot = self._log.snapshot
        if snapshot is None:
            with self._lock:
                snapshot = self._log.current()
        return snapshot

    @property
    def version(self) -> int:
        """A counter that increases with every mutation (append, extend, reset, restore, trim).

        Compare it before and after awaiting a model to learn whether someone else changed the
        history meanwhile. Starts at 0; copies and pickles keep it.
        """
        return self._log.version

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

    def messages_for_model(
        self, mode: Literal["auto", "strict"] = "auto", *, pending: Pending = "answer"
    ) -> list[Message]:
        """The history as a model should see it: plugins' transforms, then ``prepare_messages``.

        Each plugin's ``transform`` (such as tool-result masking) runs in registration order on the
        output of the one before; then [`prepare_messages`][] drops internal messages and hook
        parts, answers dangling tool calls and moves misplaced results (``auto``), or raises
        [`IntegrityError`][] (``strict``). The stored history is not changed. A transform that
        raises is skipped (its input passes through) and the error goes to ``on_plugin_error``.
        ``pending`` is [`prepare_messages`][]'s: ``"answer"`` (the default, right for a model
        request) answers [`pending_calls`][] as interrupted; ``"keep"`` leaves calls in flight.
        ``encode(history.messages_for_model(), provider=...)`` runs the integrity pass once:
        ``encode`` trusts the list returned while it is unchanged (see [`prepare_messages`][]).

        Raises:
            threadline.IntegrityError: a defect repair may not fix, or any defect in ``strict``.
        """
        messages = self._plugins.transform(self, list(self.snapshot()))
        return prepare_messages(messages, mode, pending=pending)

    def pending_calls(self) -> list[ToolCallPart]:
        """The tool calls in flight or crashed at the end of the history ([`pending_calls`][])."""
        return pending_calls(self.snapshot())

    def get_tool_result(self, call_id: str) -> ToolResultPart | None:
        """The [`ToolResultPart`][] answering the call ``call_id``, or ``None``.

        Always the result as stored, never a masked copy. O(1): results are indexed as they
        are appended (and forgotten when a window drops them). When a history holds several
        results for one call (an integrity defect), the last appended wins.
        """
        return self._log.results.get(call_id)

    @property
    def size(self) -> int:
        """Characters of content over all messages (see
        [`content_chars`][threadline.history.content_chars]).

        Kept incrementally, as ``total_tokens`` is: without a
        window, nothing is measured when messages are loaded or appended, and this read counts
        the messages appended since the last one; with a window, messages are measured as they
        arrive (the window needs it) and this read is O(1).
        """
        log = self._log
        if log.window is None and log.sized < len(log.items):
            with self._lock:
                log.count_size()
        return log.size

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
        log = self._log
        if len(log.tokens) < len(log.items):
            with self._lock:
                log.count_pending()
        return log.token_total

    def usage(self) -> Usage:
        """The sum of [`Message.usage`][threadline.messages.Message.usage] over the messages
        held (not those a window dropped): the tokens the calls behind this history used."""
        return total_usage(message.usage for message in self.snapshot())

    @property
    def plugins(self) -> tuple[Plugin, ...]:
        """The registered plugins, in registration order."""
        return self._plugins.registered

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
            message: a [`Message`][], or a mapping of its fields (validated; a mapping
                may not carry the ``threadline.blob`` metadata key, which only a store's
                blob references hold).
            limits: check ``message`` against these [`Limits`][] first, for a mapping that came from
                outside (``Limits.untrusted()`` for a client's). ``None`` checks nothing beyond
                validation, which already refuses JSON values nested deeper than 190 levels.

        Raises:
            threadline.ValidationError: ``message`` is not a valid message, or (bound to a
                store) its id is the id of a message in the conversation; nothing changes.
            threadline.LimitExceededError: ``message`` exceeds ``limits``; nothing changes.
            threadline.StoreError: the bound store ([`bind`][]) could not write it; nothing
                changes.
        """
        if limits is not None:
            enforce_limits(message, limits, what="History.append", path="message", depth=3)
            enforce_counts([message], limits, what="History.append")
        if self._clock is not None or not isinstance(message, Message):
            message = read_message(message, "message", "History.append", stamp=self._clock)
        log = self._log
        events = self._events
        window = log.window
        if window is None:
            with self._lock:
                if self._binding is not None:
                    self._binding.appended((message,))
                log.add(message)
                events.publish("append", (message,), log)
        else:
            chars, tokens = log.measure(message)
            with self._lock:
                if self._binding is not None:
                    self._binding.appended((message,))
                log.add_counted(window, message, chars, tokens)
                events.publish("append", (message,), log)
                dropped = log.trim(window, mutation=True)
                if dropped:
                    events.publish("trim", dropped, log)
        if events.pending:
            events.deliver()
        if self._plugins.after_append:
            self._plugins.run_after_append(self, (message,))

    def extend(
        self, messages: Iterable[Message | Mapping[str, Any]], *, limits: Limits | None = None
    ) -> None:
        """Add messages at the end as one mutation: one ``extend`` event, one version step.

        All of them are validated before any is added. An empty batch changes nothing: no
        event, no version step. With a window, trimming happens once, after the whole batch.

        Args:
            messages: messages, or mappings of their fields (validated; as in
                [`append`][], a mapping may not carry ``threadline.blob`` metadata).
            limits: check the batch against these [`Limits`][] first, for
                mappings that came from outside (``Limits.untrusted()`` for a client's).
                ``None`` checks nothing beyond validation.

        Raises:
            threadline.ValidationError: an item is not a valid message (every problem is
                listed with its path, such as ``messages[2].parts[0].arguments``), or (bound
                to a store) a message's id is taken; nothing changes.
            threadline.LimitExceededError: the batch exceeds ``limits``; nothing changes.
            threadline.StoreError: the bound store ([`bind`][]) could not write the batch;
                nothing changes.
        """
        items = history_input(messages, "History.extend", self._clock, limits=limits)
        if not items:
            return
        log = self._log
        sizes, counts = log.measure_all(items)
        with self._lock:
            if self._binding is not None:
                self._binding.appended(items)
            log.add_all(items, sizes, counts)
            self._events.publish("extend", items, log)
            self._trim()
        self._deliver()
        if self._plugins.after_append:
            self._plugins.run_after_append(self, tuple(items))

    def reset(self) -> None:
        """Remove every message and notify listeners once with a ``reset`` event.

        Earlier snapshots keep their messages. Resetting an empty history is still a mutation
        (the version steps and listeners hear of it). A bound store's conversation is replaced
        with nothing.

        Raises:
            threadline.StoreError: the bound store ([`bind`][]) could not write; nothing changes.
        """
        with self._lock:
            if self._binding is not None:
                self._binding.replaced([])
            log = self._log
            log.install([], log.version + 1, [], [])
            self._events.publish("reset", (), log)
        self._deliver()

    def restore(
        self, messages: Iterable[Message | Mapping[str, Any]], *, limits: Limits | None = None
    ) -> None:
        """Replace every message with ``messages`` and notify listeners once (``restore``).

        Takes anything iterable, a [`Snapshot`][] included: ``history.restore(earlier)``
        undoes everything since ``earlier`` was taken. With a window, what does not fit is
        then dropped, with a ``trim`` event after the ``restore`` event.

        Args:
            messages: the new contents: messages, or mappings of their fields (validated;
                as in [`append`][], a mapping may not carry ``threadline.blob`` metadata).
            limits: how much to take ([`Limits`][]); ``None`` means the defaults. Checked before any
                mapping is validated; pass ``Limits.untrusted()`` for mappings a client sent.

        Raises:
            threadline.LimitExceededError: ``messages`` exceed ``limits``; nothing changes.
            threadline.ValidationError: an item is not a valid message, or (bound to a
                store) two items share an id; nothing changes.
            threadline.StoreError: the bound store ([`bind`][]) could not write; nothing changes.
        """
        limits = resolve_limits(limits)
        items = history_input(messages, "History.restore", self._clock, limits=limits)
        sizes, counts = self._log.measure_all(items)
        with self._lock:
            self._replace_all(items, sizes, counts)
        self._deliver()

    # -- plugins ---------------------------------------------------------------------------

    def use(self, plugin: Plugin) -> Self:
        """Register a context plugin after the ones already registered; returns the history.

        Chainable: ``History().use(ToolResultMasking()).use(RollingSummary(summarize))``.
        The plugin's ``on_registered(history)`` runs first; if it raises, the plugin is not
        registered.

        Args:
            plugin: an object with any of ``transform``, ``reduce``, ``after_append`` and
                ``on_registered`` (see [`Plugin`][threadline.Plugin]).

        Raises:
            threadline.PluginError: ``on_registered`` raised (the error is ``__cause__``).
        """
        self._plugins.register(self, plugin, self._lock)
        return self

    async def reduce(
        self,
        *,
        max_tokens: int | None = None,
        max_messages: int | None = None,
        older_than: datetime | timedelta | None = None,
    ) -> bool:
        """Ask every plugin with a ``reduce`` (such as a rolling summary) to shrink the history.

        Plugins run in registration order; each sees what the one before left. The options are
        passed on; what they mean is the plugin's (see [`RollingSummary`][]).

        Args:
            max_tokens: reduce until the history fits this many tokens.
            max_messages: reduce until the history fits this many messages.
            older_than: reduce what is older than this (a datetime, or an age).

        Returns:
            Whether any plugin changed the history: ``False`` when none reduces (nothing to
            do), so calling it every turn is safe whether or not a reducer is registered.

        Raises:
            threadline.PluginError: a plugin failed (its error is ``__cause__``); what earlier
                plugins did stays done.
        """
        return await self._plugins.reduce(
            self, max_tokens=max_tokens, max_messages=max_messages, older_than=older_than
        )

    def replace_prefix(
        self,
        expected: Sequence[Message],
        replacement: Iterable[Message | Mapping[str, Any]],
        *,
        remove: Iterable[Message] = (),
    ) -> bool:
        """Replace the first messages with ``replacement``, if they are still ``expected``.

        A compare-and-swap for a plugin that rewrites the start of a history after awaiting
        something (a summarizer): take a [`snapshot`][], plan, await, then swap. It swaps
        only if the history still starts with the very objects of ``expected``, whatever was
        appended meanwhile (that stays, after ``replacement``); after a reset, restore or trim
        past them it changes nothing and returns ``False``: plan again from a new snapshot.
        A swap is one ``restore`` (a bound store gets a ``replace``), then a ``trim`` if needed.

        Args:
            expected: the leading messages as read before: a snapshot, or a slice of one.
            replacement: what takes their place: messages, or mappings of their fields
                (validated, as in [`restore`][]).
            remove: messages after ``expected`` to drop in the same swap, compared by
                identity (an earlier summary placed by hand, say).

        Returns:
            Whether the history changed.

        Raises:
            TypeError: ``expected`` is not a sequence of messages.
            threadline.ValidationError: an item of ``replacement`` is not a valid message, or
                (bound to a store) two messages of the result share an id; nothing changes.
            threadline.StoreError: the bound store ([`bind`][]) could not write; nothing changes.
        """
        old = leading_messages(expected)
        new = history_input(replacement, "History.replace_prefix", self._clock)
        gone = {id(message) for message in remove}
        with self._lock:
            log = self._log
            current = log.view()
            if len(current) < len(old) or not all(map(operator.is_, current, old)):
                return False
            rest = current[len(old) :]
            if gone:
                rest = tuple(message for message in rest if id(message) not in gone)
            items = [*new, *rest]
            self._replace_all(items, *log.measure_all(items))
        self._deliver()
        return True

    def count_tokens(self, message: Message) -> int:
        """The tokens of ``message`` as this history counts them: with its ``token_counter``
        (checked), or [`estimate_tokens`][] when it has none.

        For plugins that plan against the history's own budgets, such as a summary choosing
        how much to summarize for ``max_tokens``.

        Raises:
            TypeError: ``token_counter`` returned something other than an ``int``.
            ValueError: ``token_counter`` returned a negative number.
        """
        return self._log.counter(message)

    def report_plugin_error(self, error: Exception, plugin: object, hook: str) -> None:
        """Hand a plugin's error to ``on_plugin_error`` (by default it is logged); never raises.

        The history does this itself for errors in ``transform`` and ``after_append``; a
        plugin calls it for work that no caller awaits, such as a reduce it started on a task,
        so that the application hears of that error the same way.

        Args:
            error: what the plugin raised.
            plugin: the plugin.
            hook: the hook the work belongs to (``"transform"``, ``"after_append"``, ``"reduce"``).
        """
        self._plugins.failed(error, plugin, hook)

    # -- observing -------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(event)`` after every mutation, until the returned function is called.

        Listeners run after the history's lock is released, so they may read the history (or
        mutate it: that event is delivered once the current one has reached every listener).
        They run in subscription order and see events in mutation order, one event per
        mutation. When several threads mutate, one thread delivers the queued events while the
        others return at once, so a listener may run on another thread than the mutation's.
        An exception from a listener goes to ``on_listener_error`` and breaks nothing. An
        async listener is awaited (see [`flush`][threadline.history.History.flush]).

        Args:
            listener: a callable taking a [`HistoryEvent`][threadline.HistoryEvent], or none.

        Returns:
            A function that unsubscribes ``listener``; calling it again does nothing. After it
            returns, the listener gets no further events (including ones already queued).

        Raises:
            TypeError: ``listener`` is not callable, or takes neither one argument nor none.
        """
        return self._events.subscribe(listener)

    # -- persistence and copies ------------------------------------------------------------

    # -- persistence: a bound store --------------------------------------------------------

    def bind(
        self,
        store: Store,
        conversation_id: str,
        *,
        on_conflict: OnConflict = "raise",
        follow: bool = False,
    ) -> Self:
        """Persist this history in ``store`` as it changes, under ``conversation_id``.

        First the conversation is loaded: if the store holds it, it replaces this history's
        messages (one ``restore`` event; a window applies to it); if not, this history's
        current messages are written as its start. From then on every mutation is written
        through before it is applied, under the history's lock, so the store sees mutations in
        the order the history does: ``append`` and ``extend`` as one ``store.append`` batch
        each, ``reset`` and ``restore`` (and a plugin's reduce) as ``store.replace``. Window
        trims are not written (the store keeps the full log). A write that fails raises from
        the mutation, which is then not applied, so memory and store always agree.

        Several workers may bind one conversation: the history writes with the store's
        ``version`` it last saw as ``expected_version``. When another writer moved first,
        ``on_conflict="raise"`` (the default: nothing is merged behind your back) raises
        [`ConflictError`][] and changes nothing (bind a new History to catch
        up); ``"reload"`` first takes the other writer's messages (an ``extend`` event, or a
        ``restore`` if they replaced it), then writes its own. Message ids stay unique: a
        message whose id the conversation holds is refused ([`ValidationError`][]).
        ``follow=True`` also applies what other writers store, as they store it (see
        [`unfollow`][]); it starts a task on the running event loop, so call ``bind`` from
        async code then. Returns the history. Copies and pickles of a bound history are not
        bound.

        Args:
            store: a blocking [`Store`][threadline.Store] (use [`abind`][] for an
                [`AsyncStore`][threadline.AsyncStore]).
            conversation_id: the conversation's id in the store.
            on_conflict: ``"raise"`` or ``"reload"``, as above.
            follow: follow the store's ``watch``: other writers' appends come in as ``extend``
                events, a replace as a ``restore``.

        Raises:
            RuntimeError: the history is bound already, or ``follow`` without a running loop.
            TypeError: ``store`` is an async store.
            ValueError: ``on_conflict`` is neither ``"raise"`` nor ``"reload"``.
            threadline.ValidationError: the store refuses ``conversation_id``, or the history
                (written as the conversation's start) holds two messages with one id.
            threadline.ConflictError: (``"raise"``) another worker wrote the conversation's
                start first; the history is not bound.
            threadline.StoreError: the store could not load or write; the history is not bound.
        """
        bind_blocking(self, store, conversation_id, on_conflict, follow)
        return self

    async def abind(
        self,
        store: AsyncStore,
        conversation_id: str,
        *,
        on_conflict: OnConflict = "raise",
        follow: bool = False,
    ) -> Self:
        """The async twin of [`bind`][]: persist this history in an async ``store``.

        Loads (or writes the current messages as the start) like [`bind`][], awaiting the store.
        Then mutations apply in memory at once and their writes are queued, in order, for
        [`flush`][] (call it after each step of your loop), which writes with the version last
        seen. When another writer moved first, ``on_conflict="raise"`` makes ``flush`` raise
        [`ConflictError`][], writing nothing (the writes stay queued); ``"reload"`` takes the
        stored messages in before the unsent ones (a ``restore`` event), then sends them. Trims
        are not written. A message whose id is taken is refused when appended (as by [`bind`][]).

        Args:
            store: an [`AsyncStore`][threadline.AsyncStore].
            conversation_id: the conversation's id in the store.
            on_conflict: ``"raise"`` or ``"reload"``, as above.
            follow: apply what other writers store, as for [`bind`][].

        Raises:
            RuntimeError, ValueError, threadline.ValidationError: as for [`bind`][].
            TypeError: ``store`` is a blocking store (use [`bind`][]).
            threadline.ConflictError: (``"raise"``) another worker wrote the start first.
            threadline.StoreError: the store could not load or write; the history is not bound.
        """
        await bind_async(self, store, conversation_id, on_conflict, follow)
        return self

    async def flush(self) -> None:
        """Await the async listeners and ``after_append`` hooks started on this loop (their
        errors went to their handlers), then send the writes queued since ``abind``.

        Consecutive appends go as one ``append`` batch; a ``replace`` makes the writes queued before
        it unnecessary. A write that fails raises here and stays queued, with everything after it,
        for the next ``flush``: nothing is lost from memory or reaches the store out of order, even
        when a flush is cancelled after the store applied the write (the next flush finds it
        stored, or the store skips the messages it holds by id). Nothing is queued unless bound
        with [`abind`][].

        Raises:
            threadline.StoreError: the store could not write (the writes stay queued).
            threadline.ConflictError: another writer moved first (see [`abind`][]).
        """
        await self._plugins.background.drain()
        binding = self._binding
        if binding is None or not binding.asynchronous:
            return
        await binding.flush(self._lock, self._deliver)

    async def unfollow(self) -> None:
        """Stop applying the store's changes (``follow=True``); the binding stays. Raises the
        error that stopped following earlier, if one did; does nothing when not following."""
        await stop_following(self)

    @property
    def pending_writes(self) -> int:
        """How many writes [`flush`][] has yet to send (0 unless bound with [`abind`][])."""
        binding = self._binding
        return len(binding.queue) if binding is not None else 0

    # -- internals -------------------------------------------------------------------------

    def _configure(
        self,
        *,
        max_messages: int | None,
        max_tokens: int | None,
        token_counter: TokenCounter | None,
        on_listener_error: ListenerErrorHandler | None,
        on_plugin_error: PluginErrorHandler | None,
        timestamps: bool,
        clock: Clock | None,
    ) -> None:
        self._lock = lock = threading.RLock()
        self._log = Log(max_messages, max_tokens, token_counter)
        self._clock = clock_for(timestamps, clock)
        background = Background()  # the tasks of async listeners and after_append hooks
        self._events = Events(lock, on_listener_error, background)
        self._plugins = Plugins(on_plugin_error, background)
        self._binding = None

    def _start(self, items: list[Message], version: int, plugins: Iterable[Plugin]) -> None:
        """Make ``items`` the starting state (no event; a window trims it silently), then
        register ``plugins``."""
        log = self._log
        log.install(items, version, *log.measure_all(items))
        if log.window is not None:
            log.trim(log.window, mutation=False)
        self._plugins.register_all(self, plugins, self._lock)

    def _config(self) -> dict[str, Any]:
        log = self._log
        return {
            "max_messages": log.max_messages,
            "max_tokens": log.max_tokens,
            "token_counter": log.token_counter,
            "plugins": self._plugins.registered,
            "on_listener_error": self._events.on_error,
            "on_plugin_error": self._plugins.on_error,
            "timestamps": self._clock is not None,
            "clock": self._clock,
        }

    def _replace_all(
        self, items: list[Message], sizes: list[int], counts: list[int], *, write: bool = True
    ) -> None:
        """Under the lock: make ``items`` the contents as one ``restore`` (then trim).

        A bound store is told first (``replace``), unless ``write`` is false (a load).
        """
        if write and self._binding is not None:
            self._binding.replaced(items)
        log = self._log
        log.install(items, log.version + 1, sizes, counts)
        self._events.publish("restore", items, log)
        self._trim()

    def _trim(self) -> None:
        """Under the lock, after a mutation: apply the window, as a ``trim`` of its own."""
        log = self._log
        window = log.window
        if window is not None:
            dropped = log.trim(window, mutation=True)
            if dropped:
                self._events.publish("trim", dropped, log)

    def _deliver(self) -> None:
        """After the lock is released: deliver the queued events, if any."""
        events = self._events
        if events.pending:
            events.deliver()
