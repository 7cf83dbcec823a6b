"""Windows: keep a history within a message or token budget without ever breaking it.

[`trim_messages`][] drops the oldest messages until what is left fits ``max_messages`` and
``max_tokens`` (both count system messages too). ``History(max_messages=..., max_tokens=...)``
applies exactly the same rule after every append, incrementally.

Where a window may start
------------------------
A window only ever starts at a *cut*: a message that is neither a tool result nor a system
message (so a user, assistant or internal message) such that no tool result at or after it
answers a tool call before it. So the messages between two cuts form a *unit* that is kept or
dropped whole: an assistant message with its tool calls, their tool results and anything
between them (an approval, say); any other message on its own -- a user message, an assistant
message without calls, an internal message. Internal messages are units of their own: a run of
UI or resume state is trimmed like any other run of messages, not kept whole with the user
message before it (unless that is the question, below). A call is never separated from its
results, a window never starts with a tool result, and a history that was valid under strict
integrity stays valid once trimmed, unless it ends in a call still waiting for its results.
Pairing is matched by id: a result answers the latest call with its id before it.

The rule
--------
The *question* is the latest user message that is not a summary (one whose
``metadata["threadline.summary"]`` is ``True``, as [`RollingSummary`][] writes it: a summary
stands for older turns, it asks nothing). A window never starts after it.

1. If everything fits, nothing is dropped.
2. Otherwise the window starts at the earliest cut, no later than the question, whose suffix
   fits, and then, when a user message at a later cut (still no later than the question)
   exists, at the first such user message: a model should see a turn begin, not the middle of
   one.
3. When no such cut fits, the window starts at the newest cut no later than the question: the
   question and everything after it are kept whole (with the call a result after the question
   answers, if any). Without a question, that is the newest unit (one huge message, or a call
   with more results than the budget). [`Trimmed.over_budget`][] says the window exceeds a
   budget: it never drops the question, and never silently returns nothing. This, and system
   messages that take the whole budget, are the only ways a window exceeds a budget, and
   ``over_budget`` is set exactly when the kept messages exceed one.

So a conversation never loses its question: an agent's tool loop after one question is kept
whole, over budget, until the next question arrives (or a summary replaces it); what comes
before the question is dropped as the budget needs.

System messages are never dropped: the ones before the cut move ahead of the window, in order
(they are *pinned*); the ones inside it stay where they are.

If a history has no cut up to the question (a result after it whose call is nowhere before it —
a broken history), rule 3 falls back to starting at the question (without a question, at the
newest message that is not a tool result).
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable
from collections.abc import Sequence
from typing import NoReturn

from threadline._log import Snapshot
from threadline._log import check_budget
from threadline._log import is_question
from threadline._log import snapshot_storage
from threadline._log import system_positions
from threadline._sequences import read_messages
from threadline.messages import Message
from threadline.messages import ToolCallPart
from threadline.messages import ToolResultPart
from threadline.tokens import TokenCounter
from threadline.tokens import checked_counter

_ROLE = operator.attrgetter("role")

__all__ = ["Trimmed", "check_budget", "trim_messages"]


class Trimmed:
    """The result of [`trim_messages`][]: ``Trimmed(messages, dropped, over_budget)``.

    Immutable; equal to another with the same three values.
    """

    __slots__ = ("_dropped", "_plan", "messages", "over_budget")

    messages: list[Message]
    """What is kept: the pinned system messages, then the window (a new list)."""
    over_budget: bool
    """``messages`` exceeds a budget: what must be kept does not fit (the question and
    everything after it, or without a question the newest unit), or the system messages alone
    exceed it. Set exactly when ``messages`` exceeds ``max_messages`` or ``max_tokens``."""
    _dropped: list[Message]
    _plan: tuple[list[Message], list[int], int, int] | None

    def __init__(self, messages: list[Message], dropped: list[Message], over_budget: bool) -> None:
        _set = object.__setattr__
        _set(self, "messages", messages)
        _set(self, "_dropped", dropped)
        _set(self, "_plan", None)
        _set(self, "over_budget", over_budget)

    @classmethod
    def _cut(
        cls,
        messages: list[Message],
        items: list[Message],
        systems: list[int],
        start: int,
        cut: int,
        over_budget: bool,
    ) -> Trimmed:
        """A result whose ``dropped`` list (``items[start:cut]`` but the system messages at
        ``systems``) is built on first use: most callers only send ``messages``, and copying
        the dropped part of a long history costs a pass over it. ``items`` is never changed
        below ``cut`` (a private copy, or a history's append-only storage)."""
        trimmed = cls(messages, [], over_budget)
        object.__setattr__(trimmed, "_plan", (items, systems, start, cut))
        return trimmed

    @property
    def dropped(self) -> list[Message]:
        """What was dropped, oldest first (never a system message)."""
        plan = self._plan
        if plan is not None:
            object.__setattr__(self, "_dropped", _without(*plan))
            object.__setattr__(self, "_plan", None)
        return self._dropped

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"Trimmed is immutable; cannot set {name!r}")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"Trimmed is immutable; cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Trimmed):
            return NotImplemented
        return (self.messages, self.dropped, self.over_budget) == (
            other.messages,
            other.dropped,
            other.over_budget,
        )

    __hash__ = None  # type: ignore[assignment]  # it holds lists

    def __repr__(self) -> str:
        return (
            f"Trimmed(messages={self.messages!r}, dropped={self.dropped!r}, "
            f"over_budget={self.over_budget!r})"
        )


def trim_messages(
    messages: Sequence[Message],
    *,
    max_messages: int | None = None,
    max_tokens: int | None = None,
    counter: TokenCounter | None = None,
) -> Trimmed:
    """Drop the oldest whole units of ``messages`` until the rest fits the budgets, never the
    latest user message (unless a summary) or anything after it.

    The same rule ``History(max_messages=..., max_tokens=...)`` applies after every append; the
    module docstring spells it out. Only the newest messages that fit are measured (and, when
    those do not reach the latest user message, the kept ones back to it), so trimming a long
    history to a small budget costs little. The input is never changed.

    Args:
        messages: the history, oldest first: [`Message`][] objects (or mappings
            of their fields, validated), such as a ``History`` snapshot.
        max_messages: keep at most this many messages, system messages included; ``None`` for
            no limit.
        max_tokens: keep at most this many tokens, system messages included; ``None`` for no
            limit.
        counter: counts one message's tokens; [`estimate_tokens`][] when
            ``None``. Used only with ``max_tokens``.

    Returns:
        [`Trimmed`][]: the kept messages, the dropped ones, and whether the kept ones exceed
        a budget. With neither budget, everything is kept.

    Raises:
        TypeError: a budget is not an ``int``, or ``counter`` returned something else.
        ValueError: a budget is below 1, or ``counter`` returned a negative number.
        threadline.ValidationError: ``messages`` is not a sequence of messages.
    """
    check_budget("max_messages", max_messages)
    check_budget("max_tokens", max_tokens)
    head: tuple[Message, ...] = ()
    if type(messages) is Snapshot:
        # A history's snapshot knows where its system messages are and reads its storage
        # directly: trimming it costs the window, not the history. The storage is append-only
        # below ``stop``, so ``dropped`` can still be built from it later.
        items, start, stop, head, systems = snapshot_storage(messages)
    else:
        items = read_messages(messages, "trim_messages", sequence=True)
        start, stop = 0, len(items)
        systems = None
    if max_messages is None and max_tokens is None:
        return Trimmed([*head, *items[start:stop]], [], over_budget=False)
    count = checked_counter(counter) if max_tokens is not None else None
    if systems is None:
        # Only the system messages are found in the whole input (at C speed); the roles of
        # the newest messages, the ones the scan measures, are read as it goes.
        systems = system_positions(items)
    plan = plan_cut(
        items,
        systems,
        max_messages=max_messages,
        max_tokens=max_tokens,
        count=count,
        prefer_user=True,
        start=start,
        stop=stop,
        head=head,
        question=latest_question(items, start, stop),
    )
    if isinstance(plan, bool):
        return Trimmed([*head, *items[start:stop]], [], over_budget=plan)
    cut, over_budget = plan
    pinned = [*head, *(items[index] for index in systems if index < cut)]
    return Trimmed._cut([*pinned, *items[cut:stop]], items, systems, start, cut, over_budget)


def plan_cut(
    items: Sequence[Message],
    systems: Sequence[int],
    *,
    max_messages: int | None,
    max_tokens: int | None,
    count: Callable[[Message], int] | None,
    prefer_user: bool,
    start: int = 0,
    stop: int | None = None,
    head: Sequence[Message] = (),
    question: int = -1,
) -> tuple[int, bool] | bool:
    """Where a window over ``head + items[start:stop]`` starts: ``(cut, over_budget)``, or a
    bool when all fits.

    ``head`` holds system messages already pinned ahead of ``items`` (a trimmed history's);
    ``systems`` are the indexes of the system messages in ``items[start:stop]``; other roles
    are read only for the messages the scan reaches. Both count against the budgets.
    A bool result means nothing needs dropping; it says whether the system messages alone are
    over budget (the only way a history with nothing to drop can be). Otherwise ``cut`` is the
    index of the first message of the window (the system messages before it are pinned).

    ``question`` is the index of the latest question (`is_question`),
    or -1: the window never starts after it.

    Scans from the newest message back, measuring only what fits plus one message, and keeps
    the set of tool-result ids seen whose call has not been seen yet: an index is a cut when
    that set is empty and the message there is not a tool result. Past the budget, the scan
    goes on to the question without measuring (what is after the question is kept anyway).
    """
    if stop is None:
        stop = len(items)
    limit_messages: float = math.inf
    limit_tokens: float = math.inf
    if max_messages is not None:
        limit_messages = max_messages - len(head) - len(systems)
    if max_tokens is not None and count is not None:
        limit_tokens = max_tokens - sum(map(count, head))
        limit_tokens -= sum(count(items[index]) for index in systems)
    kept = 0
    tokens = 0
    pending: set[str] = set()  # results seen whose call is further back
    best = -1
    best_user = -1
    over_at = -1  # the newest index a window starting at or before exceeds a budget
    if question < 0:
        question = stop
    index = stop - 1
    role = ""
    while index >= start:
        message = items[index]
        role = message.role
        if role == "system":
            index -= 1
            continue
        if over_at < 0:
            kept += 1
            if count is not None:
                tokens += count(message)
            if kept > limit_messages or tokens > limit_tokens:
                over_at = index
        _fold(message, role, pending)
        if index <= question:
            if over_at >= 0:
                break
            if not pending and role != "tool":
                best = index
                if role == "user":
                    best_user = index
        index -= 1
    else:
        return limit_messages < 0 or limit_tokens < 0
    if best >= 0:
        return (best_user if prefer_user and best_user >= 0 else best), False
    # Not even the question and what follows it, or the newest unit, fit: keep them anyway
    # (from the newest cut at or before the question). ``items[index]`` is folded already.
    while True:
        if not pending and role != "tool":
            return index, True
        index -= 1
        while index >= start and items[index].role == "system":
            index -= 1
        if index < start:
            cut = _fallback_cut(items, start, min(question + 1, stop))
            return cut, cut <= over_at
        role = items[index].role
        _fold(items[index], role, pending)


def latest_question(items: Sequence[Message], start: int, stop: int) -> int:
    """The index of the latest question in ``items[start:stop]`` (a user message that is not
    a summary: `is_question`), else -1.

    User messages are found from the end at C speed, as `system_positions` finds system
    messages: only the ones found are read further.
    """
    roles = map(_ROLE, itertools.islice(reversed(items), len(items) - stop, len(items) - start))
    back = stop - 1
    try:
        while True:
            back -= operator.indexOf(roles, "user")
            if is_question(items[back]):
                return back
            back -= 1
    except ValueError:
        return -1


def valid_cuts(items: Sequence[Message]) -> list[int]:
    """Every index of ``items`` where a window may start (see the module docstring), ascending."""
    pending: set[str] = set()
    cuts: list[int] = []
    for index in range(len(items) - 1, -1, -1):
        message = items[index]
        role = message.role
        if role == "system":
            continue
        _fold(message, role, pending)
        if not pending and role != "tool":
            cuts.append(index)
    cuts.reverse()
    return cuts


def _fold(message: Message, role: str, pending: set[str]) -> None:
    """Account for ``message`` while scanning back: its results open ids, its calls close them."""
    if role == "tool":
        for part in message.parts:
            if type(part) is ToolResultPart:
                pending.add(part.call_id)
    elif role == "assistant" and pending:
        for part in message.parts:
            if type(part) is ToolCallPart:
                pending.discard(part.id)


def _fallback_cut(items: Sequence[Message], start: int, stop: int) -> int:
    """The newest message of ``items[start:stop]`` that is neither a tool result nor a system
    message, else ``start``."""
    for index in range(stop - 1, start - 1, -1):
        if items[index].role not in ("tool", "system"):
            return index
    return start


def _without(items: list[Message], positions: Sequence[int], start: int, end: int) -> list[Message]:
    """``items[start:end]`` without the messages at ``positions``, by slices."""
    out: list[Message] = []
    for position in positions:
        if position >= end:
            break
        if position < start:
            continue
        out += items[start:position]
        start = position + 1
    out += items[start:end]
    return out
