"""The append-only log behind a `History`: storage, snapshots, the window.

Three ideas make a history cheap to read and to trim:

- **Append-only storage; snapshots are views.** Messages live in a list that is only ever
  appended to. A `Snapshot` is a view of it (the list, a start, a stop, a version), so
  taking one costs the same at 100 messages as at 100,000, and the same object is returned
  until the next mutation. An append only adds past the stop of every existing snapshot, and a
  reset, a restore or a compaction installs a *new* list, so a snapshot never changes once
  taken.
- **Windows advance a start.** With ``max_messages`` or ``max_tokens`` every mutation drops the
  oldest whole units that no longer fit (the rule of `threadline.context.trim_messages`,
  applied incrementally) by advancing the start of the live slice of storage: O(1) amortized,
  with the storage compacted into a new list once more than half of it is dead.
- **Counts kept alongside.** Characters, token counts, the tool-result index and the positions
  of system messages are updated as messages arrive and leave, never recomputed.

`Log` does no locking and sends no events: `History` calls its
mutating methods under its lock and publishes what they report. `threadline.context`
reads snapshots through `snapshot_storage` and `system_positions`, and checks
budgets with `check_budget`; it never needs a history's internals.
"""

from __future__ import annotations

import itertools
import operator
import sys
from array import array
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any
from typing import Final
from typing import NoReturn
from typing import overload

from threadline._sequences import read_messages
from threadline.messages import Message
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart
from threadline.tokens import TokenCounter
from threadline.tokens import checked_counter
from threadline.tokens import content_chars
from threadline.tokens import measure
from threadline.tokens import tokens_from_measure

__all__ = [
    "Log",
    "Snapshot",
    "Window",
    "check_budget",
    "is_question",
    "rebuild_snapshot",
    "snapshot_storage",
    "system_positions",
]


def check_budget(name: str, value: object) -> None:
    """Refuse a budget that is not ``None`` or an ``int`` of at least 1, naming it.

    Raises:
        TypeError: ``value`` is not an ``int`` (``bool`` included).
        ValueError: ``value`` is below 1.
    """
    if value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int or None, not {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}; use None for no limit")


def is_question(message: Message) -> bool:
    """Whether a window must keep ``message`` and all after it: a user message that is not a
    summary (``metadata["threadline.summary"] is True``, as `threadline.context.is_summary`
    reads it). A summary stands for older turns; it asks nothing."""
    return message.role == "user" and message.metadata.get("threadline.summary") is not True


# ---------------------------------------------------------------------------------------------
# Snapshot

_new_object = object.__new__
_set_slot = object.__setattr__


class Snapshot(Sequence[Message]):
    """An immutable view of a history's messages at one `version`.

    A real `Sequence`: indexing (negative too), slicing (which returns
    a ``tuple``), iteration, ``len``, ``in``, ``reversed``, ``index`` and ``count``. It compares
    equal to any sequence of equal messages (a ``list``, a ``tuple``, another snapshot) and, like
    a ``list``, is not hashable: key caches on `version` instead. It pickles as the
    messages and the version.

    `History.snapshot` makes one in O(1): it is a view of
    the history's append-only storage, not a copy. ``Snapshot(messages, version=n)`` builds a
    standalone one (a copy), which is handy in tests and fakes.
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
        items = read_messages(messages, "Snapshot", refuse_blob_marks=True)
        _init_snapshot(
            self, items, 0, len(items), (), operator.index(version), system_positions(items), 0
        )

    @property
    def version(self) -> int:
        """The history's `version` when this snapshot was taken."""
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
        return (rebuild_snapshot, (list(self), self.version))

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


def rebuild_snapshot(messages: list[Message], version: int) -> Snapshot:
    """What unpickling a `Snapshot` calls (pickles made before this module existed
    name it ``threadline.history._rebuild_snapshot``, which is kept)."""
    return _view(messages, 0, len(messages), (), version, tuple(system_positions(messages)), 0)


def snapshot_storage(
    snapshot: Snapshot,
) -> tuple[list[Message], int, int, tuple[Message, ...], list[int]]:
    """``(items, start, stop, head, systems)``: a snapshot is ``head + items[start:stop]``, and
    ``systems`` are the indexes in ``items`` of the system messages in ``items[start:stop]``.

    For `threadline.context`: trimming reads the storage directly. ``items`` may hold
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
# The log


class Window:
    """A log's window: its budgets and the bookkeeping that makes trimming O(1) amortized.

    Positions are absolute (``Log.offset`` + index), so compaction never rewrites them.
    """

    __slots__ = (
        "call_at",
        "hint",
        "max_messages",
        "max_tokens",
        "orphan_reach",
        "question",
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
        self.question = -1
        """Position of the latest user message that is not a summary (`is_question`), or -1:
        it and everything after it are never dropped."""


class Log:
    """One history's messages: the append-only storage, what derives from it, and the window.

    Not thread-safe: its owner calls every method but `measure` and `measure_all`
    under one lock. Every mutating method bumps `version` (a silent trim of a starting
    state excepted) and drops the cached snapshot; publishing events is the owner's job.
    """

    # Storage. ``items`` is append-only: nothing in it is ever replaced or removed, so every
    # snapshot taken earlier stays valid; install and compaction put in a new list. The live
    # history is ``head + items[start:]``: a window trims by advancing ``start`` (O(1)), moving
    # the system messages it passes into ``head`` (they are never dropped), and once more than
    # half of ``items`` is dead installs ``items[start:]`` as new storage. ``offset`` is the
    # absolute position of ``items[0]`` (compaction adds to it), so the window's bookkeeping
    # (`Window`) uses positions that never shift.
    #
    # Tokens. ``tokens`` is aligned index for index with ``items`` and ``token_total`` sums the
    # live messages. With a window every message is counted as it arrives (by the owner, outside
    # its lock, so a slow tokenizer never blocks other threads) and ``sizes`` (aligned too)
    # keeps its characters so a trim subtracts them without measuring again; without a window,
    # counting is deferred to `count_pending`, which counts only what arrived since
    # (appends stay lean).
    #
    # Characters. With a window, ``size`` is kept as messages arrive and leave (``sizes``).
    # Without one nothing ever leaves, and ``size`` counts only ``items[:sized]``: nothing is
    # measured on a load or an append, and `count_size` adds what arrived since, on the first
    # read of ``History.size``.
    __slots__ = (
        "counter",
        "head",
        "items",
        "max_messages",
        "max_tokens",
        "offset",
        "results",
        "size",
        "sized",
        "sizes",
        "snapshot",
        "start",
        "system_at",
        "token_counter",
        "token_total",
        "tokens",
        "version",
        "window",
    )

    items: list[Message]
    start: int
    head: tuple[Message, ...]
    offset: int
    version: int
    snapshot: Snapshot | None
    """The snapshot of the current state once one was asked for (`current`)."""
    size: int
    """Characters of content over the live messages (without a window, over ``items[:sized]``:
    call `count_size` first)."""
    sized: int
    """Without a window, how many of ``items`` ``size`` counts."""
    sizes: array[int]
    results: dict[str, ToolResultPart]
    """Tool call id -> the last live result for it."""
    system_at: tuple[int, ...]
    """Absolute positions of the system messages in ``items[start:]`` (not pinned)."""
    tokens: array[int]
    token_total: int
    counter: Callable[[Message], int]
    """The token counter, checked (`checked_counter`)."""
    token_counter: TokenCounter | None
    """The token counter as configured (``None`` for the estimate)."""
    max_messages: int | None
    max_tokens: int | None
    window: Window | None

    def __init__(
        self, max_messages: int | None, max_tokens: int | None, token_counter: TokenCounter | None
    ) -> None:
        """An empty log with these budgets and this counter.

        Raises:
            TypeError: a budget is not an ``int``, or ``token_counter`` is not callable.
            ValueError: a budget is below 1.
        """
        check_budget("max_messages", max_messages)
        check_budget("max_tokens", max_tokens)
        if token_counter is not None and not callable(token_counter):
            raise TypeError(
                f"token_counter must be callable (Message -> int), not "
                f"{type(token_counter).__name__}"
            )
        self.max_messages = max_messages
        self.max_tokens = max_tokens
        self.token_counter = token_counter
        self.counter = checked_counter(token_counter)
        self.window = (
            None
            if max_messages is None and max_tokens is None
            else Window(max_messages, max_tokens)
        )
        self.install([], 0, [], [])

    # -- reading ---------------------------------------------------------------------------

    def view(self) -> Snapshot:
        """A new snapshot of the current state (O(1))."""
        items = self.items
        return _view(
            items, self.start, len(items), self.head, self.version, self.system_at, self.offset
        )

    def current(self) -> Snapshot:
        """The snapshot of the current state, the same object until the next mutation."""
        snapshot = self.snapshot
        if snapshot is None:
            items = self.items
            snapshot = self.snapshot = _view(
                items, self.start, len(items), self.head, self.version, self.system_at, self.offset
            )
        return snapshot

    # -- measuring (no lock needed) --------------------------------------------------------

    def measure(self, message: Message) -> tuple[int, int]:
        """``(characters, tokens)`` of ``message``; one pass for both with the default counter."""
        if self.token_counter is None:
            chars, files = measure(message)
            return chars, tokens_from_measure(chars, files)
        return content_chars(message), self.counter(message)

    def measure_all(self, items: Sequence[Message]) -> tuple[list[int], list[int]]:
        """With a window, the characters and token counts of each of ``items``; without one
        ``([], [])``: both are counted when first read (`count_size`, `count_pending`).

        Done before taking the lock, so a slow token counter never blocks other threads.
        """
        if self.window is None:
            return [], []
        measured = list(map(self.measure, items))
        return [chars for chars, _ in measured], [tokens for _, tokens in measured]

    # -- mutating --------------------------------------------------------------------------

    def install(
        self, items: list[Message], version: int, sizes: list[int], counts: list[int]
    ) -> None:
        """Make ``items`` (a list nobody else holds) the storage; rebuild what derives from it.

        ``sizes`` and ``counts`` come from ``measure_all(items)``. Does not trim.
        """
        self.items = items
        self.start = 0
        self.head = ()
        self.offset = 0
        self.version = version
        self.snapshot = None
        self.size = sum(sizes)
        self.sized = 0
        self.results = {}
        self.system_at = ()
        for position, message in enumerate(items):
            self._track(message, position)
        window = self.window
        self.sizes = array("q", sizes)
        self.tokens = array("q", counts)
        self.token_total = sum(counts)
        if window is not None:
            window.clear()
            for position, message in enumerate(items):
                self._note(window, message, position)

    def add(self, message: Message) -> None:
        """Append ``message`` as one mutation; without a window only."""
        items = self.items
        items.append(message)
        self.version += 1
        self.snapshot = None
        # _track, inlined: this is the hot path, and a call costs ~5% of an append.
        role = message.role
        if role == "tool":
            for part in message.parts:
                if type(part) is ToolResultPart:
                    self.results[part.call_id] = part
        elif role == "system":
            self.system_at = (*self.system_at, self.offset + len(items) - 1)

    def add_counted(self, window: Window, message: Message, chars: int, tokens: int) -> None:
        """Append ``message`` as one mutation under ``window`` (this log's): `add` plus
        its token count and the window's bookkeeping. Call `trim` next."""
        items = self.items
        items.append(message)
        self.version += 1
        self.snapshot = None
        position = self.offset + len(items) - 1
        self._track(message, position)
        self.size += chars
        self.sizes.append(chars)
        self.tokens.append(tokens)
        self.token_total += tokens
        self._note(window, message, position)

    def add_all(self, items: Sequence[Message], sizes: list[int], counts: list[int]) -> None:
        """Append ``items`` as one mutation; ``sizes`` and ``counts`` from `measure_all`.
        With a window, call `trim` next."""
        position = self.offset + len(self.items)
        self.items.extend(items)
        self.version += 1
        self.snapshot = None
        for index, message in enumerate(items):
            self._track(message, position + index)
        window = self.window
        if window is not None:
            self.size += sum(sizes)
            self.sizes.extend(sizes)
            self.tokens.extend(counts)
            self.token_total += sum(counts)
            for index, message in enumerate(items):
                self._note(window, message, position + index)

    def count_size(self) -> None:
        """Add the characters of the messages ``size`` does not count yet (only without a
        window)."""
        items = self.items
        self.size += sum(map(content_chars, items[self.sized :]))
        self.sized = len(items)

    def count_pending(self) -> None:
        """Count the tokens of the messages not counted yet (only without a window)."""
        items = self.items
        tokens = self.tokens
        count = self.counter
        for position in range(len(tokens), len(items)):
            value = count(items[position])
            tokens.append(value)
            self.token_total += value

    # -- the window ------------------------------------------------------------------------

    def trim(self, window: Window, *, mutation: bool) -> list[Message]:
        """Drop the oldest units that do not fit ``window`` (this log's), as ``trim_messages``
        would; return the dropped messages (oldest first, never a system message).

        A trim that drops something is a mutation of its own (the version steps) when
        ``mutation`` is true; false trims a starting state silently.

        Walks from the window's start to the first cut where the rest fits (every message it
        passes is dropped, so this is O(1) amortized), then, if that cut is not a user message,
        on to the first user message at a cut (see ``_first_user``). Neither walk goes past
        the question (``window.question``): the window never starts after it. When no cut up
        to it fits, the window starts at the newest cut up to it, which is the question itself
        unless a call before it is answered after it, so a long run after one question walks
        nothing.
        """
        items = self.items
        end = len(items)
        kept = len(self.head) + end - self.start
        total = self.token_total
        max_messages = window.max_messages
        max_tokens = window.max_tokens
        if kept <= max_messages and total <= max_tokens:
            return []
        tokens = self.tokens
        offset = self.offset
        reach_of = window.reach
        reach = window.orphan_reach
        best = newest_cut = newest_other = -1
        position = self.start
        last = end - 1 if window.question < 0 else window.question - offset
        while position <= last:
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
            cut = (
                best
                if items[best].role == "user"
                else self._first_user(window, best, reach, last + 1)
            )
        elif newest_cut >= 0:
            cut = newest_cut
        elif newest_other >= 0:
            cut = newest_other
        else:
            return []
        if cut <= self.start:
            return []
        dropped = self._drop(window, cut)
        if dropped and mutation:
            self.version += 1
        return dropped

    def _first_user(self, window: Window, cut: int, reach: int, end: int) -> int:
        """The first user message at a cut in ``items[cut:end]``, else ``cut``.

        ``reach`` is the last result answering a call before ``cut``. A fruitless search is
        remembered in ``window.hint`` (where it ended and the reach there), so the next one
        resumes from there: a long run with no user message is scanned once, not per append.
        """
        items = self.items
        offset = self.offset
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

    def _drop(self, window: Window, cut: int) -> list[Message]:
        """Drop ``items[start:cut]`` (pinning its system messages); return what was dropped."""
        items = self.items
        tokens = self.tokens
        sizes = self.sizes
        offset = self.offset
        pinned: list[Message] = []
        dropped: list[Message] = []
        for position in range(self.start, cut):
            message = items[position]
            if message.role == "system":
                pinned.append(message)
                continue
            dropped.append(message)
            self.token_total -= tokens[position]
            self.size -= sizes[position]
            self._forget(window, message, offset + position, offset + cut)
        if pinned:
            self.head = (*self.head, *pinned)
            self.system_at = self.system_at[len(pinned) :]
        self.start = cut
        if cut > len(items) >> 1:
            # More than half of the storage is dead: copy the live part (less than what died
            # since the last compaction, so O(1) amortized). Old snapshots keep the old list.
            self.items = items[cut:]
            self.tokens = tokens[cut:]
            self.sizes = sizes[cut:]
            self.offset = offset + cut
            self.start = 0
        self.snapshot = None
        return dropped

    # -- bookkeeping -----------------------------------------------------------------------

    def _track(self, message: Message, position: int) -> None:
        """Account for a message that joined the storage at absolute ``position``: result
        index, system positions (the system messages not pinned ahead of a window)."""
        role = message.role
        if role == "tool":
            for part in message.parts:
                if type(part) is ToolResultPart:
                    self.results[part.call_id] = part
        elif role == "system":
            self.system_at = (*self.system_at, position)

    def _note(self, window: Window, message: Message, position: int) -> None:
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
            first = self.offset + self.start
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
        elif is_question(message):
            window.question = position

    def _forget(self, window: Window, message: Message, position: int, first: int) -> None:
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
                    del self.results[part.call_id]
        elif role == "assistant":
            reach = window.reach.pop(position, None)
            if reach is not None and reach >= first and reach > window.orphan_reach:
                window.orphan_reach = reach
            call_at = window.call_at
            for part in message.parts:
                if type(part) is ToolCallPart and call_at.get(part.id) == position:
                    del call_at[part.id]
