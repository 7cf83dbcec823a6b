"""The [`Plugin`][] protocol: how context management hooks into a [`History`][].

A plugin changes what a model sees, or what a history holds, without the agent loop knowing.
It may implement any of four hooks; each is optional:

- ``on_registered(history)`` — once, when ``history.use(plugin)`` (or ``History(plugins=...)``,
  or a copy of such a history) registers it. If it raises, the plugin is not registered and the
  caller gets [`PluginError`][].
- ``transform(history, messages) -> messages`` — at read time, in
  [`History.messages_for_model`][]: returns what the
  model should see instead (tool-result masking). Stored messages never change.
- ``after_append(history, messages)`` — after every ``append`` and ``extend``, once the
  listeners have run, outside the history's lock (so it may read or mutate the history). May
  be a coroutine function: it runs as a task on the running event loop, which
  [`History.flush`][threadline.history.History.flush] awaits (with no loop running, it runs to
  completion before ``append`` returns).
- ``reduce(history, *, max_tokens, max_messages, older_than) -> bool`` — on
  ``await history.reduce(...)``: shrink the stored history (rolling summary); may be a
  coroutine function. Returns whether it changed anything.

Plugins run in registration order. An error in ``transform`` or ``after_append`` is isolated:
the history carries on as if that plugin had done nothing, and the error goes to the history's
``on_plugin_error(error, plugin, hook)`` (by default it is logged). An error in a ``reduce``
called by hand reaches the caller as [`PluginError`][].

Subclass [`Plugin`][] and override what you need (the others are no-ops the history skips),
or pass any object with some of these methods. A plugin that could never run is refused when
it is registered, with a `TypeError` saying what to write: an object with none of these
methods (a bare function: subscribe it as a listener instead), or an async ``transform`` or
``on_registered`` (both are called where nothing can await them).

A plugin uses the history through its public API only. A ``reduce`` that awaits something (a
summarizer) plans on a [`snapshot`][threadline.history.History.snapshot] and then swaps with
[`replace_prefix`][threadline.history.History.replace_prefix], a compare-and-swap that changes
nothing (and returns ``False``) when the history was reset, restored or trimmed meanwhile;
[`count_tokens`][threadline.history.History.count_tokens] counts a message as the history does, and
[`report_plugin_error`][threadline.history.History.report_plugin_error] hands an error from work
nobody awaits (a reduce started on a task) to ``on_plugin_error``.
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from datetime import datetime
from datetime import timedelta
from typing import TYPE_CHECKING
from typing import Any
from typing import Protocol
from typing import TypeVar

from threadline.messages import Message
from threadline.tools import ToolDefinition

if TYPE_CHECKING:
    from threadline.history import History

__all__ = ["Plugin", "ToolDefinition"]

_F = TypeVar("_F", bound=Callable[..., Any])


def _default_hook(function: _F) -> _F:
    """Mark a `Plugin` method as the no-op default, which a history does not call."""
    function.__threadline_default_hook__ = True  # type: ignore[attr-defined]
    return function


class Plugin(Protocol):
    """A context plugin. Every hook is optional: subclass this and override what you need.

    See the module docstring for when each hook runs and what happens when it raises.
    """

    @_default_hook
    def on_registered(self, history: History) -> None:
        """Called once when ``history`` registers this plugin; raise to refuse it."""
        return  # a body, so that type checkers do not take the hook for abstract

    @_default_hook
    def transform(self, history: History, messages: list[Message]) -> Sequence[Message]:
        """Return the messages a model should see instead of ``messages`` (a new sequence).

        ``messages`` is a fresh list holding the history's messages as the plugins before this
        one left them; the stored history never changes.
        """
        return messages

    @_default_hook
    def after_append(
        self, history: History, messages: tuple[Message, ...]
    ) -> Awaitable[None] | None:
        """Called after ``messages`` were appended (one for ``append``, a batch for ``extend``).

        May be a coroutine function: it is then awaited as a task on the running event loop,
        which ``await history.flush()`` waits for (or, when no loop runs, before ``append``
        returns); its error goes to ``on_plugin_error`` all the same.
        """
        return None  # a body, so that type checkers do not take the hook for abstract

    @_default_hook
    def reduce(
        self,
        history: History,
        *,
        max_tokens: int | None,
        max_messages: int | None,
        older_than: datetime | timedelta | None,
    ) -> bool | Awaitable[bool]:
        """Shrink the stored history toward the given targets; return whether it changed."""
        return False
