"""Rolling summaries: replace the oldest turns of a history with a summary written by a model.

[`RollingSummary`][] is a [`Plugin`][threadline.Plugin] whose ``reduce`` hands the
oldest whole units of a history (see [`threadline.context.window`][] for what a unit is: a call
is never separated from its results) to a summarizer you supply, and puts the text it returns
in their place as one summary message. The next reduce passes that text back as
``previous_summary`` and replaces it, so a history holds at most one summary at any time:

- a ``user`` message whose ``metadata["threadline.summary"]`` is ``True``
  ([`is_summary`][]),
- placed right after the system messages that came before the summarized units (system
  messages are never summarized).

Reduce by hand with ``await history.reduce(...)``, or let the plugin do it after an append with
``auto_reduce_when``. The summarizer is any callable ``summarizer(messages, previous_summary)``
returning the summary text, or a coroutine function doing so (one that calls a model).

Nothing is lost from a store's point of view either: a bound history writes the reduced
history with ``replace``, so reloading gives the summary and the recent turns, not the old log.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from datetime import timedelta
from datetime import timezone
from typing import TYPE_CHECKING
from typing import Any
from typing import Final
from typing import TypeAlias

from threadline._log import system_positions
from threadline.context.base import Plugin
from threadline.context.window import check_budget
from threadline.context.window import plan_cut
from threadline.context.window import valid_cuts
from threadline.errors import ErrorDetail
from threadline.errors import PluginError
from threadline.errors import ValidationError
from threadline.messages import Message
from threadline.messages import user_message

if TYPE_CHECKING:
    from threadline.history import History

__all__ = ["SUMMARY_KEY", "RollingSummary", "Summarizer", "is_summary"]

SUMMARY_KEY: Final = "threadline.summary"
"""The message metadata key set to ``True`` on a summary message."""

Summarizer: TypeAlias = Callable[[list[Message], "str | None"], "str | Awaitable[str]"]
"""``summarizer(messages, previous_summary) -> str`` (or a coroutine returning it): summarize
``messages`` (oldest first, whole units), folding in ``previous_summary`` when it is not
``None``."""


def is_summary(message: Message) -> bool:
    """Whether ``message`` is a summary written by [`RollingSummary`][].

    Args:
        message: any message.
    """
    return message.role == "user" and message.metadata.get(SUMMARY_KEY) is True


@dataclass(frozen=True, slots=True)
class _Plan:
    """What one reduce replaces: ``old`` (the history's first messages) by ``pinned`` + summary."""

    old: tuple[Message, ...]
    pinned: list[Message]
    summarize: list[Message]
    previous: str | None
    stale: tuple[Message, ...]  # summary messages after ``old`` (only if placed there by hand)


class RollingSummary(Plugin):
    """Summarize the oldest turns of a history into one summary message.

    ``reduce`` picks the oldest whole units to summarize from its options (an option given to
    ``history.reduce(...)`` overrides the default given here):

    - ``max_tokens`` / ``max_messages``: the fewest oldest units such that what is kept verbatim
      (system messages included) fits; the summary comes on top of that budget, so ask your
      summarizer for a bounded length.
    - ``older_than`` (a ``datetime``, or a ``timedelta`` meaning that long before now): the
      units all of whose messages were created before it (a naive datetime counts as UTC).
      It reads ``created_at``, which threadline never sets unless asked: create the history
      with ``History(..., timestamps=True)``. Over a message without one (system messages
      and the summary aside) it raises [`ValidationError`][threadline.ValidationError] rather than
      silently summarizing nothing.
    - Several options: the most any of them asks for. None at all: everything but the newest
      unit.

    The newest unit is never summarized, and a reduce with nothing to summarize does not call
    the summarizer.

    Args:
        summarizer: ``summarizer(messages, previous_summary)`` returning the summary text, or a
            coroutine function doing so.
        auto_reduce_when: a predicate on the history, checked after every append and extend;
            when it returns true, the plugin reduces with its default options. With a
            coroutine summarizer, the reduce runs as a task on the running event loop (see
            [`drain`][]), or, when no loop is running in the appending thread, to completion
            with `asyncio.run` before ``append`` returns, like a sync summarizer. Errors
            go to the history's ``on_plugin_error``. While a reduce runs, appends (the
            summarizer's own included) do not start another.
        max_tokens: the default ``max_tokens`` for reduce.
        max_messages: the default ``max_messages`` for reduce.
        older_than: the default ``older_than`` for reduce.

    Raises:
        TypeError: ``summarizer`` or ``auto_reduce_when`` is not callable, or an option has the
            wrong type.
        ValueError: a budget is below 1.
    """

    def __init__(
        self,
        summarizer: Summarizer,
        *,
        auto_reduce_when: Callable[[History], bool] | None = None,
        max_tokens: int | None = None,
        max_messages: int | None = None,
        older_than: datetime | timedelta | None = None,
    ) -> None:
        if not callable(summarizer):
            raise TypeError(f"summarizer must be callable, not {type(summarizer).__name__}")
        if auto_reduce_when is not None and not callable(auto_reduce_when):
            raise TypeError(
                "auto_reduce_when must be a predicate on the history (History -> bool), not "
                f"{type(auto_reduce_when).__name__}"
            )
        _check_options(max_tokens, max_messages, older_than)
        self._summarizer = summarizer
        self._auto_reduce_when = auto_reduce_when
        self._defaults = (max_tokens, max_messages, older_than)
        self._guard = threading.Lock()
        self._running: set[int] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    def __repr__(self) -> str:
        return f"RollingSummary({self._summarizer!r})"

    # -- hooks ------------------------------------------------------------------------------

    async def reduce(
        self,
        history: History,
        *,
        max_tokens: int | None = None,
        max_messages: int | None = None,
        older_than: datetime | timedelta | None = None,
    ) -> bool:
        """Summarize the oldest units of ``history`` (see the class docstring for which).

        Called by ``await history.reduce(...)``; the options left ``None`` take this plugin's
        defaults.

        Returns:
            Whether the history changed (``False`` when there was nothing to summarize).

        Raises:
            threadline.ValidationError: ``older_than`` is set and a message has no
                ``created_at`` (nothing is summarized).
            threadline.PluginError: a reduce is already running on ``history``; the summarizer
                did not return a ``str``; or the history was reset, restored or trimmed while
                the summary was being written (nothing is replaced; reduce again).
            Exception: whatever the summarizer raised (``history.reduce`` wraps it in
                [`PluginError`][]).
        """
        options = self._options(max_tokens, max_messages, older_than)
        if not self._enter(history):
            raise PluginError(
                "a reduce is already running on this history; await it before starting another"
            )
        try:
            plan = _plan(history, *options)
            if plan is None:
                return False
            text = self._summarizer(list(plan.summarize), plan.previous)
            if inspect.isawaitable(text):
                text = await text
            _apply(history, plan, text)
            return True
        finally:
            self._leave(history)

    def after_append(self, history: History, messages: tuple[Message, ...]) -> None:
        """Reduce with the default options when ``auto_reduce_when(history)`` is true."""
        when = self._auto_reduce_when
        if when is None or not when(history) or not self._enter(history):
            return
        handed_off = False
        try:
            plan = _plan(history, *self._defaults)
            if plan is None:
                return
            text: object = self._summarizer(list(plan.summarize), plan.previous)
            if inspect.isawaitable(text):
                try:
                    loop = asyncio.get_running_loop()
                except RuntimeError:
                    text = asyncio.run(_awaited(text))
                else:
                    task = loop.create_task(self._finish(history, plan, text))
                    self._tasks.add(task)
                    task.add_done_callback(self._tasks.discard)
                    handed_off = True
                    return
            _apply(history, plan, text)
        finally:
            if not handed_off:
                self._leave(history)

    async def drain(self) -> None:
        """Wait until every reduce that ``auto_reduce_when`` started on this loop has finished.

        Their errors went to the history's ``on_plugin_error``; this never raises them.
        """
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    # -- internals --------------------------------------------------------------------------

    async def _finish(self, history: History, plan: _Plan, pending: Awaitable[object]) -> None:
        try:
            _apply(history, plan, await pending)
        except Exception as error:
            history.report_plugin_error(error, self, "reduce")
        finally:
            self._leave(history)

    def _options(
        self,
        max_tokens: int | None,
        max_messages: int | None,
        older_than: datetime | timedelta | None,
    ) -> tuple[int | None, int | None, datetime | timedelta | None]:
        _check_options(max_tokens, max_messages, older_than)
        default_tokens, default_messages, default_age = self._defaults
        return (
            default_tokens if max_tokens is None else max_tokens,
            default_messages if max_messages is None else max_messages,
            default_age if older_than is None else older_than,
        )

    def _enter(self, history: History) -> bool:
        """Mark a reduce as running on ``history``; ``False`` when one already is."""
        with self._guard:
            if id(history) in self._running:
                return False
            self._running.add(id(history))
            return True

    def _leave(self, history: History) -> None:
        with self._guard:
            self._running.discard(id(history))

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for runtime in ("_guard", "_running", "_tasks"):
            del state[runtime]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._guard = threading.Lock()
        self._running = set()
        self._tasks = set()


def _plan(
    history: History,
    max_tokens: int | None,
    max_messages: int | None,
    older_than: datetime | timedelta | None,
) -> _Plan | None:
    """Which leading messages of ``history`` to replace, or ``None`` when nothing would be."""
    items = list(history.snapshot())
    where = [index for index, message in enumerate(items) if not is_summary(message)]
    rest = [items[index] for index in where]
    cuts = valid_cuts(rest)
    if not cuts:
        return None
    newest = cuts[-1]
    targets: list[int] = []
    if max_tokens is not None or max_messages is not None:
        plan = plan_cut(
            rest,
            system_positions(rest),
            max_messages=max_messages,
            max_tokens=max_tokens,
            count=history.count_tokens if max_tokens is not None else None,
            prefer_user=False,
        )
        targets.append(0 if isinstance(plan, bool) else plan[0])
    if older_than is not None:
        _require_created_at(items, older_than)
        targets.append(_age_cut(rest, cuts, _cutoff(older_than)))
    cut = min(max(targets), newest) if targets else newest
    summarize = [message for message in rest[:cut] if message.role != "system"]
    if not summarize:
        return None
    end = where[cut]
    old = tuple(items[:end])
    previous = [message.text for message in items if is_summary(message)]
    return _Plan(
        old=old,
        pinned=[message for message in old if message.role == "system"],
        summarize=summarize,
        previous="\n\n".join(previous) if previous else None,
        stale=tuple(message for message in items[end:] if is_summary(message)),
    )


def _apply(history: History, plan: _Plan, text: object) -> None:
    if not isinstance(text, str):
        raise PluginError(
            f"the summarizer returned {type(text).__name__}; it must return the summary text (str)"
        )
    summary = user_message(text, metadata={SUMMARY_KEY: True})
    if not history.replace_prefix(plan.old, [*plan.pinned, summary], remove=plan.stale):
        raise PluginError(
            "the history was reset, restored or trimmed while the summary was being written, "
            "so the summary no longer matches it; nothing was replaced. Reduce again"
        )


def _age_cut(rest: Sequence[Message], cuts: list[int], cutoff: datetime) -> int:
    """The last cut before which every non-system message was created before ``cutoff``."""
    first_recent = len(rest)
    for index, message in enumerate(rest):
        if message.role != "system" and not _older(message, cutoff):
            first_recent = index
            break
    best = 0
    for cut in cuts:
        if cut > first_recent:
            break
        best = cut
    return best


def _require_created_at(items: Sequence[Message], older_than: datetime | timedelta) -> None:
    """Refuse ``older_than`` over messages it cannot date: it would summarize nothing.

    Raises:
        threadline.ValidationError: a message other than a system message or the summary has
            no ``created_at``.
    """
    undated = [
        index
        for index, message in enumerate(items)
        if message.created_at is None and message.role != "system" and not is_summary(message)
    ]
    if not undated:
        return
    first = undated[0]
    detail = ErrorDetail(
        f"messages[{first}].created_at",
        f"reduce(older_than={older_than!r}) needs every message's created_at, and "
        f"{len(undated)} of the {len(items)} messages have none (the first: messages[{first}], "
        f"id {items[first].id!r}), so none could count as old. Create the history with "
        "History(..., timestamps=True) to stamp messages as it stores them, or set created_at "
        "yourself; messages stored without one can be summarized by max_messages or max_tokens",
        "missing_created_at",
    )
    raise ValidationError(f"cannot reduce by age: {detail.message}", [detail])


def _older(message: Message, cutoff: datetime) -> bool:
    created = message.created_at
    if created is None:
        return False
    if created.tzinfo is None:
        created = created.replace(tzinfo=timezone.utc)
    return created < cutoff


def _cutoff(older_than: datetime | timedelta) -> datetime:
    if isinstance(older_than, timedelta):
        return datetime.now(timezone.utc) - older_than
    if older_than.tzinfo is None:
        return older_than.replace(tzinfo=timezone.utc)
    return older_than


def _check_options(max_tokens: object, max_messages: object, older_than: object) -> None:
    check_budget("max_tokens", max_tokens)
    check_budget("max_messages", max_messages)
    if older_than is not None and not isinstance(older_than, (datetime, timedelta)):
        raise TypeError(
            f"older_than must be a datetime or a timedelta, not {type(older_than).__name__}"
        )


async def _awaited(pending: Awaitable[object]) -> object:
    """``asyncio.run`` takes a coroutine; a summarizer may return any awaitable."""
    return await pending
