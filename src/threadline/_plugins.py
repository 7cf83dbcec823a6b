"""A history's context plugins: their hooks in registration order, and their errors.

`History` registers plugins here and calls their hooks through
`Plugins`; what each hook means is `threadline.context.base`'s. An error in a
``transform`` or an ``after_append`` is isolated and handed to ``on_plugin_error``
(`Plugins.failed`); one in a ``reduce`` reaches the caller as
`PluginError`. An ``after_append`` that is a coroutine function is awaited
(`threadline._background`); a plugin that could never run (no hook at all, or an async
hook where the history cannot await it) is refused when it is registered.
"""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import Callable
from collections.abc import Iterable
from datetime import datetime
from datetime import timedelta
from typing import TYPE_CHECKING
from typing import Any
from typing import TypeAlias
from typing import cast

from threadline._background import Background
from threadline._background import hand_error
from threadline.errors import PluginError
from threadline.errors import ValidationError
from threadline.messages import Message

if TYPE_CHECKING:
    from threadline.history import History

__all__ = ["PluginErrorHandler", "Plugins"]

logger = logging.getLogger("threadline")

PluginErrorHandler: TypeAlias = Callable[[Exception, Any, str], object]
"""Called as ``handler(error, plugin, hook)`` when a plugin raises; ``hook`` is the name of the
method that raised (``"transform"``, ``"after_append"`` or ``"reduce"``)."""

_Hooks: TypeAlias = tuple[tuple[Any, Callable[..., Any]], ...]

_HOOK_NAMES = ("transform", "after_append", "reduce", "on_registered")


class Plugins:
    """One history's plugins, and for each hook the plugins that implement it, in order."""

    __slots__ = ("after_append", "background", "on_error", "reducers", "registered", "transforms")

    registered: tuple[Any, ...]
    transforms: _Hooks
    after_append: _Hooks
    reducers: _Hooks

    def __init__(self, on_error: PluginErrorHandler | None, background: Background) -> None:
        self.on_error = on_error
        self.background = background
        self.registered = ()
        self.transforms = ()
        self.after_append = ()
        self.reducers = ()

    def register(self, history: History, plugin: object, lock: threading.RLock) -> None:
        """Run ``plugin.on_registered(history)``, then add the plugin's hooks under ``lock``.

        A plugin that could never run is refused before ``on_registered`` runs: one with a
        hook that is not callable, one with no hook at all (a bare function; a subclass of
        [`Plugin`][threadline.context.Plugin] has the no-op ones), and one whose
        ``transform`` or ``on_registered`` is a coroutine function (the history calls them
        where nothing can await them).

        Raises:
            threadline.PluginError: ``on_registered`` raised (the error is ``__cause__``).
            TypeError: the plugin could never run (the message says what to write instead).
        """
        transform = _hook(plugin, "transform")
        after_append = _hook(plugin, "after_append")
        reduce = _hook(plugin, "reduce")
        on_registered = _hook(plugin, "on_registered")
        if not any(hasattr(plugin, name) for name in _HOOK_NAMES):
            raise TypeError(_no_hooks(plugin))
        for name, hook in (("transform", transform), ("on_registered", on_registered)):
            if hook is not None and inspect.iscoroutinefunction(hook):
                raise TypeError(
                    f"plugin {plugin!r} has an async {name}, which the history calls where "
                    f"nothing can await it: make {name} a plain method (async work belongs in "
                    "an async after_append, which History.flush() awaits, or in reduce)"
                )
        if on_registered is not None:
            try:
                on_registered(history)
            except Exception as error:
                raise PluginError(
                    f"plugin {plugin!r} raised in on_registered, so it was not registered: {error}"
                ) from error
        with lock:
            self.registered = (*self.registered, plugin)
            if transform is not None:
                self.transforms = (*self.transforms, (plugin, transform))
            if after_append is not None:
                self.after_append = (*self.after_append, (plugin, after_append))
            if reduce is not None:
                self.reducers = (*self.reducers, (plugin, reduce))

    def register_all(self, history: History, plugins: Iterable[Any], lock: threading.RLock) -> None:
        """`register` each of ``plugins`` in order.

        Raises:
            TypeError: ``plugins`` is not iterable (one plugin given without a list), or as
                `register`.
            threadline.PluginError: as `register`.
        """
        if not isinstance(plugins, Iterable):
            raise TypeError(
                f"plugins= takes a list of plugins, not a {type(plugins).__name__}: "
                f"write plugins=[{type(plugins).__name__}(...)]"
            )
        for plugin in plugins:
            self.register(history, plugin, lock)

    def transform(self, history: History, messages: list[Message]) -> list[Message]:
        """``messages`` through every ``transform``; one that raises is skipped."""
        for plugin, transform in self.transforms:
            try:
                messages = list(transform(history, messages))
            except Exception as error:
                self.failed(error, plugin, "transform")
        return messages

    def run_after_append(self, history: History, messages: tuple[Message, ...]) -> None:
        """Every ``after_append``; one that raises goes to `failed`. What one returns
        that is awaitable (a coroutine function's call) is awaited, see `Background`."""
        for plugin, after_append in self.after_append:
            try:
                result = after_append(history, messages)
            except Exception as error:
                self.failed(error, plugin, "after_append")
            else:
                if inspect.isawaitable(result):
                    self.background.run(result, _reporter(self, plugin, "after_append"))

    async def reduce(self, history: History, **options: int | datetime | timedelta | None) -> bool:
        """Every ``reduce`` in order, each called with ``options``; whether any changed the
        history (with no plugin that reduces: nothing to do, ``False``).

        Raises:
            threadline.PluginError: a plugin failed (its error is ``__cause__``).
            threadline.ValidationError: a plugin refused the options for this history (such
                as ``older_than`` over messages without ``created_at``).
        """
        changed = False
        for plugin, reduce in self.reducers:
            try:
                result = reduce(history, **options)
                if inspect.isawaitable(result):
                    result = await result
            except (PluginError, ValidationError):  # options that cannot apply: the caller's
                raise
            except Exception as error:
                raise PluginError(f"plugin {plugin!r} failed to reduce the history: {error}") from (
                    error
                )
            changed = bool(result) or changed
        return changed

    def failed(self, error: Exception, plugin: object, hook: str) -> None:
        """Hand a plugin's error to ``on_plugin_error`` (by default: log it); never raises."""
        handler = self.on_error or _log_plugin_error
        hand_error(
            handler, (error, plugin, hook), option="on_plugin_error", kind="plugin", source=plugin
        )


def _hook(plugin: object, name: str) -> Callable[..., Any] | None:
    """``plugin``'s method ``name``, or ``None`` when it lacks one or inherits Plugin's no-op."""
    method = getattr(plugin, name, None)
    if method is None or getattr(method, "__threadline_default_hook__", False):
        return None
    if not callable(method):
        raise TypeError(f"plugin {plugin!r} has a {name} attribute that is not callable")
    return cast("Callable[..., Any]", method)


def _reporter(plugins: Plugins, plugin: object, hook: str) -> Callable[[Exception], None]:
    return lambda error: plugins.failed(error, plugin, hook)


def _no_hooks(plugin: object) -> str:
    message = (
        f"{plugin!r} has none of the plugin hooks (transform, after_append, reduce, "
        "on_registered), so the history would never call it. A plugin is an object with some "
        "of these methods: subclass threadline.context.Plugin and override the ones you need"
    )
    if callable(plugin):
        message += (
            ". To run a function after every append, make it a plugin's "
            "after_append(self, history, messages) method, or subscribe it as a listener with "
            "history.subscribe(function), which calls function(event) after every mutation"
        )
    return message


def _log_plugin_error(error: Exception, plugin: object, hook: str) -> None:
    logger.error(
        "a History plugin %r raised in %s; the history was left as it was and the other "
        "plugins ran",
        plugin,
        hook,
        exc_info=error,
    )
