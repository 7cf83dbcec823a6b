"""What a history's coroutine hooks return: awaited on the caller's event loop, or at once.

A plugin's ``after_append`` and a listener may be coroutine functions. A history calls them
synchronously, right after a mutation, so what they return is handed to `Background`:
with an event loop running in the mutating thread it becomes a task on that loop, which the
history keeps until [`History.flush`][threadline.history.History.flush] awaits it; with no loop
running it runs to completion (``asyncio.run``) before the mutation returns, as a plain hook
would. Either way its error goes to the handler given (``on_plugin_error``,
``on_listener_error``): none is lost, and none is left "never awaited".
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio

__all__ = ["Background", "hand_error"]

logger = logging.getLogger("threadline")


class Background:
    """The tasks one history started for its coroutine hooks and not yet seen finish."""

    __slots__ = ("tasks",)

    def __init__(self) -> None:
        self.tasks: set[asyncio.Task[None]] = set()

    def run(self, pending: Awaitable[object], failed: Callable[[Exception], None]) -> None:
        """Await ``pending``: as a task on the running loop, or now when none runs.

        ``failed(error)`` gets what it raised; this never raises it.
        """
        # asyncio is imported here, not at `import threadline` (it costs ~25 ms at startup); a
        # program with a running loop has imported it already.
        import asyncio

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            try:
                asyncio.run(_awaited(pending))
            except Exception as error:
                failed(error)
            return
        task = loop.create_task(_guarded(pending, failed))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def drain(self) -> None:
        """Wait until every task started on the running loop has finished, including tasks
        that those started meanwhile. Their errors went to their handlers; none is raised."""
        import asyncio

        loop = asyncio.get_running_loop()
        while True:
            mine = [task for task in list(self.tasks) if task.get_loop() is loop]
            if not mine:
                return
            await asyncio.gather(*mine, return_exceptions=True)


async def _awaited(pending: Awaitable[object]) -> None:
    """``asyncio.run`` takes a coroutine; a hook may return any awaitable."""
    await pending


async def _guarded(pending: Awaitable[object], failed: Callable[[Exception], None]) -> None:
    try:
        await pending
    except Exception as error:
        failed(error)


def hand_error(
    handler: Callable[..., object],
    args: tuple[object, ...],
    *,
    option: str,
    kind: str,
    source: object,
) -> None:
    """Call ``handler``, the history's ``option`` (``on_plugin_error``, ``on_listener_error``),
    with ``args``. An error the handler raises is logged on the ``threadline`` logger, never
    raised: a failing handler must not fail the mutation that called the ``kind`` ``source``."""
    try:
        handler(*args)
    except Exception:
        logger.exception(
            "%s %r raised while handling an error from %s %r", option, handler, kind, source
        )
