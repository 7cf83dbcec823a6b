"""``follow=True``: a bound history that applies what other writers store, as they store it.

`History.bind` and `History.abind` with ``follow=True`` start a task on the running event loop
(so both must be called from async code) that iterates the store's ``watch`` and applies each
batch to the history under its lock: the messages whose ids the history does not hold yet go
in as one ``extend`` (the history's own writes come back through the watch too, and are
skipped by id); a replace or delete by another writer
([`ConversationReplacedError`][threadline.ConversationReplacedError]) becomes a ``restore``
of the stored conversation, unless the store still starts with what the history knows, in
which case only the rest is appended. Subscribers see these events as for any mutation.

A blocking history keeps the version the watch reports, so its next write expects it. An async
history's writes still queued by ``abind`` are kept across a ``restore`` (they are sent by the
next ``flush``).

The task ends when `History.unfollow` is awaited, when it is cancelled (an ending
``asyncio.run`` cancels it), or once the history has been garbage-collected (at the next
change it would apply). An error other than a lost connection (which the watch waits out)
ends it too; ``unfollow`` raises it.
"""

from __future__ import annotations

import weakref
from typing import Any

from threadline.errors import ConversationReplacedError
from threadline.messages import Message

__all__ = ["apply_reloaded", "check_follow", "start_following", "stop_following"]


def check_follow(store: object, follow: object) -> bool:
    """Whether to follow; refuse ``follow=True`` where it cannot run, before anything is bound.

    Raises:
        TypeError: ``follow`` is not a bool, or ``store`` has no ``watch``.
        RuntimeError: no event loop is running.
    """
    if not isinstance(follow, bool):
        raise TypeError(f"follow must be True or False, not {follow!r}")
    if not follow:
        return False
    if not callable(getattr(store, "watch", None)):
        raise TypeError(
            f"{type(store).__name__} has no watch(), so a history bound to it cannot follow it: "
            "use a store that has one (every store and async twin threadline ships has it)"
        )
    import asyncio  # not at `import threadline`: it costs ~25 ms at startup

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        raise RuntimeError(
            "follow=True runs a task on the running event loop, and none is running: call "
            "bind(..., follow=True) or await abind(..., follow=True) from async code (inside "
            "asyncio.run); the history is not bound"
        ) from None
    return True


def start_following(history: Any) -> None:
    """Start the task that applies the bound store's watch to ``history`` (bound just now)."""
    binding: Any = history._binding
    after = binding.version if binding.version is not None else 0
    watch = binding.store.watch(binding.conversation_id, after_version=after)
    import asyncio

    binding.following = asyncio.get_running_loop().create_task(
        _follow(weakref.ref(history), watch),
        name=f"threadline follow {binding.conversation_id!r}",
    )


async def stop_following(history: Any) -> None:
    """Cancel the follow task of ``history``, if any, and raise the error that ended it."""
    binding: Any = history._binding
    task = binding.following if binding is not None else None
    if task is None:
        return
    binding.following = None
    import asyncio

    # Cancel until the task has ended: a store driver that turns a cancellation into its own
    # error (which the watch retries as a lost connection) must not keep it running, nor
    # keep this waiting forever. A cancelled caller is cancelled in the wait, as it should be.
    while not task.done():
        task.cancel()
        await asyncio.wait([task], timeout=1.0)
    error = None if task.cancelled() else task.exception()
    if error is not None:
        raise error


async def _follow(history_ref: weakref.ref[Any], watch: Any) -> None:
    try:
        while True:
            try:
                async for batch in watch:
                    history = history_ref()
                    if history is None:
                        return
                    _apply(history, batch, watch.version, whole=False)
                    del history
                return
            except ConversationReplacedError as replaced:
                history = history_ref()
                if history is None:
                    return
                _apply(history, replaced.messages, replaced.actual, whole=True)
                del history
    finally:
        await watch.aclose()


def _apply(history: Any, messages: list[Message], version: int | None, *, whole: bool) -> None:
    """Apply a batch (or, ``whole``, the conversation after a replace) under the lock."""
    with history._lock:
        binding: Any = history._binding
        if binding is None:
            return
        pending = [m for kind, part in binding.queue if kind == "append" for m in part]
        if whole:
            stored = binding.length - len(pending)
            known = messages[:stored]
            if len(messages) >= stored and all(m.id in binding.ids for m in known):
                messages = messages[stored:]
            else:
                apply_reloaded(history, [*messages, *pending], True)
                binding.ids = {m.id for m in messages} | {m.id for m in pending}
                binding.length = len(messages) + len(pending)
                messages = []
        fresh = [m for m in messages if m.id not in binding.ids]
        if fresh:
            apply_reloaded(history, fresh, False)
            binding.ids.update(m.id for m in fresh)
            binding.length += len(fresh)
        if binding.version is not None and version is not None:
            binding.version = max(binding.version, version)
    history._deliver()


def apply_reloaded(history: Any, items: list[Message], whole: bool) -> None:
    """Under the history's lock: apply what another writer stored (``whole``: a ``restore``)."""
    log = history._log
    sizes, counts = log.measure_all(items)
    if whole:
        history._replace_all(items, sizes, counts, write=False)
        return
    log.add_all(items, sizes, counts)
    history._events.publish("extend", items, log)
    history._trim()
