"""A history's store binding: where its writes go and, bound to an async store, the queue.

Bound with :meth:`History.bind <threadline.History.bind>`, every mutation is written through
before it is applied, under the history's lock. Bound with :meth:`History.abind
<threadline.History.abind>`, writes are queued in order under the lock and
:meth:`Binding.flush` sends them. Either way the binding knows the conversation's message ids,
so a bound history refuses a message whose id is taken before anything is written.
"""

from __future__ import annotations

import inspect
import threading
from collections import deque
from collections.abc import Sequence
from typing import Any, Literal

from threadline.errors import ErrorDetail, ValidationError
from threadline.messages import Message

__all__ = ["Binding", "is_async_store", "refuse_rebinding", "refuse_store_kind", "refuse_taken_ids"]


class Binding:
    """A history's store binding: where writes go, and (async) the writes not sent yet.

    It also knows the conversation's message ids: stores keep them unique (so that a write
    sent again is recognised as a replay), and a bound history refuses a message whose id is
    taken before anything is written, so memory and store never disagree.
    """

    __slots__ = ("asynchronous", "conversation_id", "flushing", "ids", "queue", "store")

    def __init__(
        self,
        store: Any,
        conversation_id: str,
        *,
        asynchronous: bool,
        messages: Sequence[Message] = (),
    ) -> None:
        self.store = store
        self.conversation_id = conversation_id
        self.asynchronous = asynchronous
        self.ids = {message.id for message in messages}
        self.queue: deque[tuple[Literal["append", "replace"], list[Message]]] = deque()
        import asyncio  # only async bindings need it; importing it costs ~15 ms at startup

        self.flushing = asyncio.Lock()  # serializes flushes (binds to a loop on first use)

    def appended(self, messages: Sequence[Message]) -> None:
        """Under the history's lock, before the append is applied: write or queue it.

        Raises:
            threadline.ValidationError: a message's id is in the conversation already.
        """
        refuse_taken_ids(messages, self.ids, self.conversation_id)
        if self.asynchronous:
            self.queue.append(("append", list(messages)))
        else:
            self.store.append(self.conversation_id, list(messages))
        self.ids.update(message.id for message in messages)

    def replaced(self, messages: Sequence[Message]) -> None:
        """Under the history's lock, before a reset or restore is applied: write or queue it.

        Raises:
            threadline.ValidationError: two of the messages share an id.
        """
        refuse_taken_ids(messages, set(), self.conversation_id)
        if self.asynchronous:
            self.queue.append(("replace", list(messages)))
        else:
            self.store.replace(self.conversation_id, list(messages))
        self.ids = {message.id for message in messages}

    async def flush(self, lock: threading.RLock) -> None:
        """Send the queued writes in order; the queue is read and popped under ``lock``.

        Consecutive appends go as one ``append`` batch; a ``replace`` makes the writes queued
        before it unnecessary, so they are skipped. A write is popped only once the store
        acknowledged it: one that fails (or is cancelled) stays queued, with everything after
        it, for the next flush.

        Raises:
            threadline.StoreError: the store could not write (the writes stay queued).
        """
        async with self.flushing:
            while True:
                with lock:
                    queue = list(self.queue)
                if not queue:
                    return
                last_replace = max(
                    (index for index, (kind, _) in enumerate(queue) if kind == "replace"),
                    default=0,
                )
                if last_replace:
                    with lock:
                        for _ in range(last_replace):
                            self.queue.popleft()
                    continue
                kind, messages = queue[0]
                if kind == "replace":
                    await self.store.replace(self.conversation_id, messages)
                    sent = 1
                else:
                    sent = 1
                    while sent < len(queue) and queue[sent][0] == "append":
                        sent += 1
                    batch = [message for _, part in queue[:sent] for message in part]
                    await self.store.append(self.conversation_id, batch)
                with lock:
                    for _ in range(sent):
                        self.queue.popleft()


def refuse_rebinding(binding: Binding | None) -> None:
    """Raise when a history is bound already (``binding`` is its binding).

    Raises:
        RuntimeError: ``binding`` is not ``None``.
    """
    if binding is not None:
        raise RuntimeError(
            f"this history is bound already, to conversation {binding.conversation_id!r} in "
            f"{binding.store!r}, and a binding is for the history's life (there is no unbind). "
            "To persist its messages elsewhere too, bind a copy, made with `history.copy()` "
            "(a copy is unbound and holds the same messages and plugins), or a new History"
        )


def refuse_taken_ids(messages: Sequence[Message], taken: set[str], conversation_id: str) -> None:
    """Raise when a message's id is in ``taken`` or earlier in ``messages``.

    Raises:
        threadline.ValidationError: naming the first message whose id is taken.
    """
    seen: set[str] = set()
    for index, message in enumerate(messages):
        if message.id in taken or message.id in seen:
            detail = ErrorDetail(
                f"messages[{index}].id",
                f"{message.id!r} is already the id of a message in conversation "
                f"{conversation_id!r}; a bound history keeps message ids unique, as its store "
                "does (a store skips a message it holds already, as a replay). Give the "
                "message its own id (leave id out to get a new one); nothing changed",
                "duplicate_id",
            )
            raise ValidationError(f"invalid messages: {detail}", [detail])
        seen.add(message.id)


def is_async_store(store: object) -> bool:
    """Whether ``store`` is an async store (its ``append`` is a coroutine function)."""
    return inspect.iscoroutinefunction(getattr(store, "append", None))


def refuse_store_kind(store: object, *, asynchronous: bool) -> None:
    """Refuse a blocking store given to ``abind`` (``asynchronous``) or an async one to ``bind``.

    Raises:
        TypeError: ``store`` is the other kind, with the call to use instead.
    """
    if is_async_store(store) == asynchronous:
        return
    if asynchronous:
        raise TypeError(
            f"{type(store).__name__} is a blocking store: bind it with "
            "`history.bind(store, conversation_id)`"
        )
    raise TypeError(
        f"{type(store).__name__} is an async store: bind it with "
        "`await history.abind(store, conversation_id)`"
    )
