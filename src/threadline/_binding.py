"""A history's store binding: where its writes go and, bound to an async store, the queue.

Bound with `History.bind`, every mutation is written through before it is applied, under the
history's lock. Bound with `History.abind`, writes are queued in order under the lock and
`Binding.flush` sends them. Either way the binding knows the conversation's message ids, so a bound
history refuses a message whose id is taken before anything is written.

A blocking binding also knows the conversation's version (when the store has ``version``) and
writes with ``expected_version``, so two workers bound to one conversation never drift apart:
when another writer moved first, ``on_conflict="raise"`` raises
`ConflictError` and changes nothing, and ``on_conflict="reload"`` takes the
other writer's messages into the history first (events for them, in order), then writes its
own again.
"""

from __future__ import annotations

import inspect
import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from threadline._following import apply_reloaded, check_follow, start_following
from threadline.errors import ConflictError, ErrorDetail, ValidationError
from threadline.messages import Message

if TYPE_CHECKING:
    import asyncio

__all__ = [
    "Binding",
    "OnConflict",
    "bind_async",
    "bind_blocking",
    "check_on_conflict",
    "is_async_store",
    "load_versioned",
    "refuse_rebinding",
    "refuse_store_kind",
    "refuse_taken_ids",
    "takes_versions",
]

OnConflict = Literal["raise", "reload"]

_ATTEMPTS = 1000  # reloads before a binding gives up on a conversation others keep changing

Reloaded = Callable[[list[Message], bool], None]
"""Applies what another writer stored, under the history's lock: ``(messages, whole)``, where
``whole`` means the messages replace the history (a ``restore``) rather than extend it."""


class Binding:
    """A history's store binding: where writes go, and (async) the writes not sent yet.

    It also knows the conversation's message ids: stores keep them unique (so that a write
    sent again is recognised as a replay), and a bound history refuses a message whose id is
    taken before anything is written, so memory and store never disagree.
    """

    __slots__ = (
        "asynchronous",
        "conversation_id",
        "flushing",
        "following",
        "ids",
        "length",
        "on_conflict",
        "queue",
        "reloaded",
        "store",
        "version",
    )

    def __init__(
        self,
        store: Any,
        conversation_id: str,
        *,
        asynchronous: bool,
        messages: Sequence[Message] = (),
        version: int | None = None,
        on_conflict: OnConflict = "raise",
        reloaded: Reloaded | None = None,
    ) -> None:
        self.store = store
        self.conversation_id = conversation_id
        self.asynchronous = asynchronous
        self.ids = {message.id for message in messages}
        self.length = len(messages)  # how many messages the store held at ``version``
        self.version = version  # the store's version last seen; None: write unversioned
        self.on_conflict = on_conflict
        self.reloaded = reloaded
        self.queue: deque[tuple[Literal["append", "replace"], list[Message]]] = deque()
        self.following: asyncio.Task[None] | None = None  # follow=True: the task applying watch
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
        elif self.version is None:
            self.store.append(self.conversation_id, list(messages))
        else:
            self._write_versioned("append", messages)
        self.ids.update(message.id for message in messages)
        self.length += len(messages)

    def replaced(self, messages: Sequence[Message]) -> None:
        """Under the history's lock, before a reset or restore is applied: write or queue it.

        Raises:
            threadline.ValidationError: two of the messages share an id.
        """
        refuse_taken_ids(messages, set(), self.conversation_id)
        if self.asynchronous:
            self.queue.append(("replace", list(messages)))
        elif self.version is None:
            self.store.replace(self.conversation_id, list(messages))
        else:
            self._write_versioned("replace", messages)
        self.ids = {message.id for message in messages}
        self.length = len(messages)

    def _write_versioned(
        self, kind: Literal["append", "replace"], messages: Sequence[Message]
    ) -> None:
        """Write with ``expected_version``; on a conflict raise, or reload and write again.

        Raises:
            threadline.ConflictError: another writer moved first and ``on_conflict`` is
                ``"raise"`` (nothing changed), or others kept moving first for
                ``_ATTEMPTS`` reloads.
            threadline.ValidationError: (reload) a message of the other writer took the id of
                one of ``messages``; the other writer's messages were taken, nothing written.
        """
        write = self.store.append if kind == "append" else self.store.replace
        for _ in range(_ATTEMPTS):
            try:
                write(self.conversation_id, list(messages), expected_version=self.version)
            except ConflictError:
                loaded, version = load_versioned(self.store, self.conversation_id)
                if kind == "append" and self._landed(messages, loaded, version):
                    # Our own earlier try, whose reply was lost: it is stored, once.
                    self.version = version
                    return
                if self.on_conflict == "raise":
                    raise
                self._reload(loaded, version)
                if kind == "append":
                    # Integrity of ids, again: the other writer may have used one of ours.
                    refuse_taken_ids(messages, self.ids, self.conversation_id)
                continue
            assert self.version is not None
            self.version += 1
            return
        raise ConflictError(
            f"gave up writing to conversation {self.conversation_id!r} in {self.store!r}: "
            f"other writers changed it first {_ATTEMPTS} times in a row",
            conversation_id=self.conversation_id,
            expected=self.version or 0,
            actual=self.version or 0,
        )

    def _landed(
        self, messages: Sequence[Message], loaded: list[Message], version: int | None
    ) -> bool:
        """Whether the only write since ``version`` is the append of ``messages`` (sent
        before, its reply lost: a write that raised may still have been stored)."""
        if self.version is None or version != self.version + 1:
            return False
        tail = loaded[self.length :]
        return len(loaded) == self.length + len(messages) and tail == list(messages)

    def _reload(self, loaded: list[Message], version: int | None) -> None:
        """Take what other writers stored since ``version`` into the history (its lock held).

        When the store still starts with the messages this binding knows (others appended),
        the rest is applied as one ``extend``; otherwise (others replaced or deleted) the
        stored messages replace the history (a ``restore``).
        """
        known = loaded[: self.length]
        appended = len(loaded) >= self.length and all(m.id in self.ids for m in known)
        if self.reloaded is not None:
            if appended:
                if len(loaded) > self.length:
                    self.reloaded(loaded[self.length :], False)
            else:
                self.reloaded(loaded, True)
        self.ids = {message.id for message in loaded}
        self.length = len(loaded)
        self.version = version

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


def load_versioned(store: Any, conversation_id: str) -> tuple[list[Message], int | None]:
    """The conversation's messages and the version they are at (``None``: the store has no
    ``version``).

    Versions never go back, so a version read before and after the load that did not move
    is the version of what was loaded.

    Raises:
        threadline.ConflictError: other writers kept changing the conversation meanwhile.
    """
    if not takes_versions(store):
        return store.load(conversation_id), None
    for _ in range(_ATTEMPTS):
        before = store.version(conversation_id)
        loaded: list[Message] = store.load(conversation_id)
        after = store.version(conversation_id)
        if before == after:
            return loaded, after
    raise ConflictError(
        f"could not load conversation {conversation_id!r} from {store!r} at one version: "
        f"other writers changed it during each of {_ATTEMPTS} loads",
        conversation_id=conversation_id,
    )


def takes_versions(store: object) -> bool:
    """Whether ``store`` has ``version`` and its ``append`` and ``replace`` take
    ``expected_version`` (a store written before versions, or a subclass overriding them
    without it, is bound unversioned)."""
    if not callable(getattr(store, "version", None)):
        return False
    for name in ("append", "replace"):
        try:
            parameters = inspect.signature(getattr(store, name)).parameters
        except (TypeError, ValueError):
            return False
        kinds = {parameter.kind for parameter in parameters.values()}
        if "expected_version" not in parameters and inspect.Parameter.VAR_KEYWORD not in kinds:
            return False
    return True


def check_on_conflict(on_conflict: object) -> OnConflict:
    """``on_conflict`` when it is ``"raise"`` or ``"reload"``.

    Raises:
        ValueError: it is something else.
    """
    if on_conflict == "raise" or on_conflict == "reload":
        return on_conflict
    raise ValueError(
        f'on_conflict must be "raise" (refuse a write when another writer moved first) or '
        f'"reload" (take their messages, then write), not {on_conflict!r}'
    )


def bind_blocking(
    history: Any, store: Any, conversation_id: str, on_conflict: object, follow: object = False
) -> None:
    """The work of `History.bind` (see there).

    Raises:
        threadline.ConflictError: ``on_conflict="raise"`` and another writer stored the
            conversation between the load and the write of this history's messages as its
            start (the history is not bound).
    """
    policy = check_on_conflict(on_conflict)
    refuse_store_kind(store, asynchronous=False)
    refuse_rebinding(history._binding)
    following = check_follow(store, follow)
    while True:
        loaded, version = load_versioned(store, conversation_id)
        measured = history._log.measure_all(loaded) if loaded else None
        with history._lock:
            refuse_rebinding(history._binding)
            start = loaded if measured is not None else list(history._log.view())
            if measured is not None:
                history._replace_all(loaded, *measured, write=False)
            elif start:
                refuse_taken_ids(start, set(), conversation_id)
                try:
                    if version is None:
                        store.replace(conversation_id, start)
                    else:
                        store.replace(conversation_id, start, expected_version=version)
                        version += 1
                except ConflictError:
                    if policy == "raise":
                        raise
                    continue  # another worker started it first: load theirs instead
            history._binding = Binding(
                store,
                conversation_id,
                asynchronous=False,
                messages=start,
                version=version,
                on_conflict=policy,
                reloaded=lambda items, whole: apply_reloaded(history, items, whole),
            )
            if following:
                start_following(history)
        history._deliver()
        return


async def bind_async(history: Any, store: Any, conversation_id: str, follow: object) -> None:
    """The work of `History.abind` (see there)."""
    refuse_store_kind(store, asynchronous=True)
    refuse_rebinding(history._binding)
    following = check_follow(store, follow)
    loaded = await store.load(conversation_id)
    if loaded:
        measured = history._log.measure_all(loaded)
        with history._lock:
            refuse_rebinding(history._binding)
            history._replace_all(loaded, *measured, write=False)
            history._binding = Binding(store, conversation_id, asynchronous=True, messages=loaded)
            if following:
                start_following(history)
        history._deliver()
        return
    while True:
        # Write the current messages as the start; if another task mutated the history
        # while that write was awaited, write again, so that nothing escapes the store.
        current = history.snapshot()
        if current:
            refuse_taken_ids(current, set(), conversation_id)
            await store.replace(conversation_id, list(current))
        with history._lock:
            refuse_rebinding(history._binding)
            if history._log.version == current.version:
                history._binding = Binding(
                    store, conversation_id, asynchronous=True, messages=current
                )
                if following:
                    start_following(history)
                return


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
