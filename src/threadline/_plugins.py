"""A history's context plugins: their hooks in registration order, and their errors.

`History` registers plugins here and calls their hooks through
`Plugins`; what each hook means is `threadline.context.base`'s. An error in a
``transform`` or an ``after_append`` is isolated and handed to ``on_plugin_error``
(`Plugins.failed`); one in a ``reduce`` reaches the caller as
`PluginError`.
"""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from threadline.errors import PluginError
from threadline.messages import Message

if TYPE_CHECKING:
    from threadline.history import History

__all__ = ["PluginErrorHandler", "Plugins"]

logger = logging.getLogger("threadline")

PluginErrorHandler: TypeAlias = Callable[[Exception, Any, str], object]
"""Called as ``handler(error, plugin, hook)`` when a plugin raises; ``hook`` is the name of the
method that raised (``"transform"``, ``"after_append"`` or ``"reduce"``)."""

_Hooks: TypeAlias = tuple[tuple[Any, Callable[..., Any]], ...]


class Plugins:
    """One history's plugins, and for each hook the plugins that implement it, in order."""

    __slots__ = ("after_append", "on_error", "reducers", "registered", "transforms")

    registered: tuple[Any, ...]
    transforms: _Hooks
    after_append: _Hooks
    reducers: _Hooks

    def __init__(self, on_error: PluginErrorHandler | None) -> None:
        self.on_error = on_error
        self.registered = ()
        self.transforms = ()
        self.after_append = ()
        self.reducers = ()

    def register(self, history: History, plugin: object, lock: threading.RLock) -> None:
        """Run ``plugin.on_registered(history)``, then add the plugin's hooks under ``lock``.

        A plugin with a hook that is not callable is refused before ``on_registered`` runs.

        Raises:
            threadline.PluginError: ``on_registered`` raised (the error is ``__cause__``).
            TypeError: a hook is not callable.
        """
        transform = _hook(plugin, "transform")
        after_append = _hook(plugin, "after_append")
        reduce = _hook(plugin, "reduce")
        on_registered = _hook(plugin, "on_registered")
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

    def transform(self, history: History, messages: list[Message]) -> list[Message]:
        """``messages`` through every ``transform``; one that raises is skipped."""
        for plugin, transform in self.transforms:
            try:
                messages = list(transform(history, messages))
            except Exception as error:
                self.failed(error, plugin, "transform")
        return messages

    def run_after_append(self, history: History, messages: tuple[Message, ...]) -> None:
        """Every ``after_append``; one that raises goes to `failed`."""
        for plugin, after_append in self.after_append:
            try:
                after_append(history, messages)
            except Exception as error:
                self.failed(error, plugin, "after_append")

    async def reduce(self, history: History, **options: int | datetime | timedelta | None) -> bool:
        """Every ``reduce`` in order, each called with ``options``; whether any changed the
        history (with no plugin that reduces: nothing to do, ``False``).

        Raises:
            threadline.PluginError: a plugin failed (its error is ``__cause__``).
        """
        changed = False
        for plugin, reduce in self.reducers:
            try:
                result = reduce(history, **options)
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

    def failed(self, error: Exception, plugin: object, hook: str) -> None:
        """Hand a plugin's error to ``on_plugin_error`` (by default: log it); never raises."""
        handler = self.on_error or _log_plugin_error
        try:
            handler(error, plugin, hook)
        except Exception:
            logger.exception(
                "on_plugin_error %r raised while handling an error from plugin %r", handler, plugin
            )


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
