"""A history's store binding: where its writes go and, bound to an async store, the queue.

Bound with `History.bind`, every mutation is written through before it is applied, under the
history's lock. Bound with `History.abind`, writes are queued in order under the lock and
`Binding.flush` sends them. Either way the binding knows the conversation's message ids, so a bound
history refuses a message whose id is taken before anything is written.

A binding also knows the conversation's version (when the store has ``version``) and writes
with ``expected_version`` (an async one when it flushes), so two workers bound to one
conversation never drift apart: when another writer moved first, ``on_conflict="raise"``
raises `ConflictError` and changes nothing, and ``on_conflict="reload"`` takes the other
writer's messages into the history first (events for them, in order), then writes its own
again.
"""

from __future__ import annotations

import inspect
import threading
import weakref
from collections import deque
from collections.abc import Callable
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any
from typing import Literal

from threadline._following import apply_reloaded
from threadline._following import check_follow
from threadline._following import start_following
from threadline.errors import ConflictError
from threadline.errors import ErrorDetail
from threadline.errors import ValidationError
from threadline.messages import Message

if TYPE_CHECKING:
    import asyncio

__all__ = [
    "Binding",
    "OnConflict",
    "aload_versioned",
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
        self._write("append", messages)
        self.ids.update(message.id for message in messages)
        self.length += len(messages)

    def replaced(self, messages: Sequence[Message]) -> None:
        """Under the history's lock, before a reset or restore is applied: write or queue it.

        Raises:
            threadline.ValidationError: two of the messages share an id.
        """
        refuse_taken_ids(messages, set(), self.conversation_id)
        self._write("replace", messages)
        self.ids = {message.id for message in messages}
        self.length = len(messages)

    def _write(self, kind: Literal["append", "replace"], messages: Sequence[Message]) -> None:
        """Queue the write (an async store), send it, or send it with ``expected_version``
        (a store that takes versions)."""
        if self.asynchronous:
            self.queue.append((kind, list(messages)))
        elif self.version is None:
            write = self.store.append if kind == "append" else self.store.replace
            write(self.conversation_id, list(messages))
        else:
            self._write_versioned(kind, messages)

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
        raise self._gave_up()

    def _gave_up(self) -> ConflictError:
        return ConflictError(
            f"gave up writing to conversation {self.conversation_id!r} in {self.store!r}: "
            f"other writers changed it first {_ATTEMPTS} times in a row",
            conversation_id=self.conversation_id,
            expected=self.version or 0,
            actual=self.version or 0,
        )

    def _landed(
        self,
        messages: Sequence[Message],
        loaded: list[Message],
        version: int | None,
        stored: int | None = None,
    ) -> bool:
        """Whether the only write since ``version`` is the append of ``messages`` (sent
        before, its reply lost: a write that raised may still have been stored); ``stored``:
        how many messages the store held at ``self.version`` (``self.length`` when blocking)."""
        if self.version is None or version != self.version + 1:
            return False
        held = self.length if stored is None else stored
        return len(loaded) == held + len(messages) and loaded[held:] == list(messages)

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

    async def flush(self, lock: threading.RLock, deliver: Callable[[], None]) -> None:
        """Send the queued writes in order; the queue is read and popped under ``lock``.

        Consecutive appends go as one ``append`` batch; a ``replace`` makes the writes queued
        before it unnecessary, so they are skipped. A write is popped only once the store
        acknowledged it: one that fails (or is cancelled) stays queued, with everything after
        it, for the next flush. Each write expects the version last seen (when the store has
        versions); on a conflict, see `_conflicted` (``deliver`` sends a reload's events).

        Raises:
            threadline.StoreError: the store could not write (the writes stay queued).
            threadline.ConflictError: another writer moved first and ``on_conflict`` is
                ``"raise"``, or others kept moving first (the writes stay queued).
        """
        async with self.flushing:
            for _ in range(_ATTEMPTS):
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
                kind, batch = queue[0]
                sent = 1
                while kind == "append" and sent < len(queue) and queue[sent][0] == "append":
                    sent += 1
                if kind == "append":
                    batch = [message for _, part in queue[:sent] for message in part]
                expected = self.version
                write = self.store.append if kind == "append" else self.store.replace
                try:
                    if expected is None:
                        await write(self.conversation_id, batch)
                    else:
                        await write(self.conversation_id, batch, expected_version=expected)
                except ConflictError:
                    loaded, version = await aload_versioned(self.store, self.conversation_id)
                    with lock:
                        self._conflicted(kind, batch, loaded, version)
                    deliver()
                    continue
                with lock:
                    for _ in range(sent):
                        self.queue.popleft()
                    if expected is not None and self.version is not None:
                        # A follow task may have seen this write already.
                        self.version = max(self.version, expected + 1)
            raise self._gave_up()

    def _sent(self, count: int | None) -> None:
        """Pop the first ``count`` queued messages (``None``: the queued replace)."""
        if count is None:
            self.queue.popleft()
            return
        while count:
            kind, part = self.queue.popleft()
            if len(part) > count:
                self.queue.appendleft((kind, part[count:]))
                return
            count -= len(part)

    def _conflicted(
        self,
        kind: Literal["append", "replace"],
        batch: list[Message],
        loaded: list[Message],
        version: int | None,
    ) -> None:
        """Under the lock, after a queued write met a conflict: pop it when it is stored
        already (its reply was lost), raise (``"raise"``), or take the other writers' messages
        in before the unsent ones (``"reload"``) and leave the queue to be sent again.

        A reload puts the stored messages before the ones this history shows but has not sent,
        so it is a ``restore`` of ``loaded`` plus those; a queued ``replace`` wins over what
        others wrote, so it only takes the new version.

        Raises:
            threadline.ConflictError: ``on_conflict="raise"`` (nothing changed).
        """
        pending = [m for queued, part in self.queue if queued == "append" for m in part]
        stored = self.length - len(pending)
        if self.version is not None and version == self.version + 1:
            # One write since: this history's own, sent by an earlier flush whose reply was
            # lost, when it holds the batch's first messages (a queued append may have grown).
            whole = len(batch) if len(loaded) == len(batch) else 0
            count = len(loaded) - stored if kind == "append" else whole
            if 0 < count <= len(batch) and loaded[len(loaded) - count :] == batch[:count]:
                self._sent(count if kind == "append" else None)
                self.version = version
                return
        if self.on_conflict == "raise":
            raise ConflictError(
                f"conversation {self.conversation_id!r} in {self.store!r} moved from version "
                f"{self.version} to {version} before this history's queued writes were sent "
                '(on_conflict="raise"): nothing was written and they stay queued; bind a new '
                'History to take up the stored conversation, or bind with on_conflict="reload"',
                conversation_id=self.conversation_id,
                expected=self.version or 0,
                actual=version or 0,
            )
        self.version = version
        if any(queued == "replace" for queued, _ in self.queue):
            return  # a replace is queued (now, or since the read): it wins over what is stored
        taken = {message.id for message in loaded}
        rest = [message for message in pending if message.id not in taken]
        kept = [[m for m in part if m.id not in taken] for _, part in self.queue]
        self.queue.clear()  # what is stored already is not sent again
        self.queue.extend(("append", part) for part in kept if part)
        mine = [message.id for message in pending]
        known = len(loaded) >= stored and all(
            m.id in self.ids and m.id not in mine for m in loaded[:stored]
        )
        unchanged = known and [m.id for m in loaded[stored:] + rest] == mine
        if self.reloaded is not None and not unchanged:
            self.reloaded([*loaded, *rest], True)
        self.ids = taken | {message.id for message in rest}
        self.length = len(loaded) + len(rest)


def load_versioned(store: Any, conversation_id: str) -> tuple[list[Message], int | None]:
    """The conversation's messages and the version they are at (``None``: the store has no
    ``version``).

    A store with ``load_after`` reads both in one consistent read (``load_after(id, 0)``:
    everything, and its version). Otherwise: versions never go back, so a version read before
    and after the load that did not move is the version of what was loaded.

    Raises:
        threadline.ConflictError: other writers kept changing the conversation meanwhile.
    """
    if not takes_versions(store):
        return store.load(conversation_id), None
    if callable(getattr(store, "load_after", None)):
        appended = store.load_after(conversation_id, 0)
        return list(appended.messages), appended.version
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


async def aload_versioned(store: Any, conversation_id: str) -> tuple[list[Message], int | None]:
    """The async twin of `load_versioned`.

    Raises:
        threadline.ConflictError: other writers kept changing the conversation meanwhile.
    """
    if not takes_versions(store):
        return list(await store.load(conversation_id)), None
    if callable(getattr(store, "load_after", None)):
        appended = await store.load_after(conversation_id, 0)
        return list(appended.messages), appended.version
    for _ in range(_ATTEMPTS):
        before = await store.version(conversation_id)
        loaded: list[Message] = list(await store.load(conversation_id))
        if before == await store.version(conversation_id):
            return loaded, before
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
    return all(_takes_expected_version(getattr(store, name)) for name in ("append", "replace"))


_TAKES_EXPECTED: weakref.WeakKeyDictionary[Callable[..., Any], bool] = weakref.WeakKeyDictionary()
"""`_takes_expected_version` per method's function: reading a signature is most of what a
bind of a short conversation costs besides the store, and a class's methods keep theirs."""


def _takes_expected_version(method: object) -> bool:
    function = getattr(method, "__func__", None) if inspect.ismethod(method) else None
    if function is not None:
        known = _TAKES_EXPECTED.get(function)
        if known is not None:
            return known
    try:
        parameters = inspect.signature(method).parameters  # type: ignore[arg-type]
    except (TypeError, ValueError):
        takes = False
    else:
        kinds = {parameter.kind for parameter in parameters.values()}
        takes = "expected_version" in parameters or inspect.Parameter.VAR_KEYWORD in kinds
    if function is not None:
        _TAKES_EXPECTED[function] = takes
    return takes


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
            _install(history, store, conversation_id, start, version, policy, following, False)
        history._deliver()
        return


async def bind_async(
    history: Any, store: Any, conversation_id: str, on_conflict: object, follow: object
) -> None:
    """The work of `History.abind` (see there); raises as `bind_blocking` does."""
    policy = check_on_conflict(on_conflict)
    refuse_store_kind(store, asynchronous=True)
    refuse_rebinding(history._binding)
    following = check_follow(store, follow)
    loaded, version = await aload_versioned(store, conversation_id)
    while True:
        if loaded:
            measured = history._log.measure_all(loaded)
            with history._lock:
                refuse_rebinding(history._binding)
                history._replace_all(loaded, *measured, write=False)
                _install(history, store, conversation_id, loaded, version, policy, following, True)
            history._deliver()
            return
        # Write the current messages as the start; if another task mutated the history
        # while that write was awaited, write again, so that nothing escapes the store.
        current = history.snapshot()
        if current:
            refuse_taken_ids(current, set(), conversation_id)
            try:
                if version is None:
                    await store.replace(conversation_id, list(current))
                else:
                    await store.replace(conversation_id, list(current), expected_version=version)
                    version += 1
            except ConflictError:
                if policy == "raise":
                    raise
                loaded, version = await aload_versioned(store, conversation_id)
                continue  # another worker started it first: load theirs instead
        with history._lock:
            refuse_rebinding(history._binding)
            if history._log.version == current.version:
                _install(history, store, conversation_id, current, version, policy, following, True)
                return


def _install(
    history: Any,
    store: Any,
    conversation_id: str,
    messages: Sequence[Message],
    version: int | None,
    policy: OnConflict,
    following: bool,
    asynchronous: bool,
) -> None:
    """Under the history's lock: bind it, and start following when asked."""
    history._binding = Binding(
        store,
        conversation_id,
        asynchronous=asynchronous,
        messages=messages,
        version=version,
        on_conflict=policy,
        reloaded=lambda items, whole: apply_reloaded(history, items, whole),
    )
    if following:
        start_following(history)


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
