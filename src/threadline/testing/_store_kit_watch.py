"""The watch kit: ``check_watch`` (blocking stores) and ``check_async_watch`` (async stores).

What every store's ``watch(conversation_id, after_version=None)`` promises: the writes another
store object makes to the conversation (another connection, as another process would) after
``after_version`` come out of the watch in order, each message exactly once, never a message of
another conversation; writes made while nobody iterates come at the next iteration, none lost
and none repeated; ``watch.version`` is the writer's version once the watch has yielded all;
and a watch started behind (``after_version`` older than the store's version), or resumed from
an earlier watch's ``version``, catches up.

A store that keeps no log of writes cannot tell what happened since an old version, so it may
answer a watch that starts behind (or whose first read comes after the conversation moved) with
[`ConversationReplacedError`][threadline.ConversationReplacedError] carrying the whole
conversation, as threadline's polling stores do; the kit accepts that, and checks the error's
messages and version. Once a watch has read, every append must come as a batch.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from typing import Any

from threadline.errors import ConformanceError
from threadline.errors import ConversationReplacedError
from threadline.messages import Message
from threadline.messages import user_message
from threadline.stores._watch import Watch
from threadline.stores.base import AsyncStore
from threadline.stores.base import Store
from threadline.testing._store_kit import _aclose

__all__ = ["check_async_watch", "check_watch"]

_TIMEOUT = 60.0  # seconds a watch may take to yield a write: only a guard against a hang


class _Ends:
    """The watched store and the writer, behind one async face (blocking calls in threads)."""

    def __init__(self, watched: Any, writer: Any) -> None:
        self.watched = watched
        self.writer = writer
        self.blocking = not inspect.iscoroutinefunction(getattr(writer, "append", None))

    def __repr__(self) -> str:
        return repr(self.watched)

    async def append(self, conversation_id: str, messages: Sequence[Message]) -> None:
        if self.blocking:
            await asyncio.to_thread(self.writer.append, conversation_id, list(messages))
        else:
            await self.writer.append(conversation_id, list(messages))

    async def version(self, conversation_id: str) -> int:
        if self.blocking:
            return int(await asyncio.to_thread(self.writer.version, conversation_id))
        return int(await self.writer.version(conversation_id))

    def watch(self, conversation_id: str, after_version: int | None) -> Watch:
        watch: Watch = self.watched.watch(conversation_id, after_version=after_version)
        return watch


def _batch(tag: str, count: int) -> list[Message]:
    return [user_message(f"{tag} #{i}", id=f"{tag}-{i}") for i in range(count)]


def _ids(messages: Sequence[Message]) -> list[str]:
    return [m.id for m in messages]


async def _next(watch: Watch, what: str) -> list[Message]:
    try:
        return await asyncio.wait_for(watch.__anext__(), _TIMEOUT)
    except asyncio.TimeoutError:
        raise AssertionError(f"{what}: the watch yielded nothing in {_TIMEOUT:.0f} s") from None
    except StopAsyncIteration:
        raise AssertionError(f"{what}: the watch ended") from None


async def _take(watch: Watch, expected: list[str], what: str) -> None:
    """Batches from ``watch`` until they hold ``len(expected)`` messages: exactly ``expected``."""
    got: list[str] = []
    while len(got) < len(expected):
        try:
            got += _ids(await _next(watch, what))
        except ConversationReplacedError as error:
            raise AssertionError(
                f"{what}: the watch raised ConversationReplacedError for appends made after it "
                f"had read (holding {_ids(error.messages)}); appends must come as batches"
            ) from None
    assert got == expected, f"{what}: the watch yielded {got}, expected {expected}"


async def _catch_up(
    ends: _Ends, watch: Watch, missed: list[str], whole: list[str], what: str
) -> None:
    """The first items of a watch that starts behind: the ``missed`` appends as batches, or
    (a store without a log of writes) one ``ConversationReplacedError`` holding ``whole``."""
    version = await ends.version("w")
    replaced: ConversationReplacedError | None = None
    try:
        await _take_first(watch, missed, what)
    except ConversationReplacedError as error:
        replaced = error
    if replaced is not None:
        assert _ids(replaced.messages) == whole, (
            f"{what}: ConversationReplacedError holds {_ids(replaced.messages)}, but the "
            f"conversation is {whole}"
        )
        assert replaced.actual == version, (
            f"{what}: ConversationReplacedError says version {replaced.actual}, the store {version}"
        )
    assert watch.version == version, (
        f"{what}: watch.version is {watch.version} after catching up; the store is at {version}"
    )


async def _take_first(watch: Watch, expected: list[str], what: str) -> None:
    """As `_take`, but the first item may be a ``ConversationReplacedError`` (raised on)."""
    got = _ids(await _next(watch, what))
    if len(got) < len(expected):
        await _take(watch, expected[len(got) :], what)
        return
    assert got == expected, f"{what}: the watch yielded {got}, expected {expected}"


async def _check_watch_sees_other_writes(ends: _Ends) -> None:
    await ends.append("w", _batch("before", 1))
    watch = ends.watch("w", await ends.version("w"))
    try:
        first = _batch("first", 2)
        await ends.append("w", first)
        await _catch_up(ends, watch, _ids(first), ["before-0", *_ids(first)], "the first write")
        for k in range(3):
            batch = _batch(f"b{k}", 2)
            await ends.append("other", _batch(f"other{k}", 1))  # another conversation
            await ends.append("w", batch)
            await _take(watch, _ids(batch), f"write {k + 2} of another store object")
        missed: list[str] = []
        for k in range(3):  # nobody iterates meanwhile
            batch = _batch(f"missed{k}", 2)
            await ends.append("w", batch)
            missed += _ids(batch)
        await _take(watch, missed, "three writes made while nobody iterated")
        version = await ends.version("w")
        assert watch.version == version, (
            f"watch.version is {watch.version} after every write; the store is at {version}"
        )
        last = _batch("last", 1)
        await ends.append("w", last)
        await _take(watch, _ids(last), "the write after all others (nothing repeated)")
    finally:
        await watch.aclose()


async def _check_watch_catches_up(ends: _Ends) -> None:
    for tag in ("a", "b", "c"):
        await ends.append("w", _batch(tag, 1))  # versions 1, 2, 3
    watch = ends.watch("w", 1)
    try:
        await _catch_up(ends, watch, ["b-0", "c-0"], ["a-0", "b-0", "c-0"], "after_version=1")
        await ends.append("w", _batch("d", 1))
        await _take(watch, ["d-0"], "the write after catching up")
        resume_at = watch.version
    finally:
        await watch.aclose()
    await ends.append("w", _batch("e", 1))  # no watch open
    again = ends.watch("w", resume_at)
    try:
        await _catch_up(
            ends, again, ["e-0"], ["a-0", "b-0", "c-0", "d-0", "e-0"], "a resumed watch"
        )
        await ends.append("w", _batch("f", 1))
        await _take(again, ["f-0"], "the write after resuming")
    finally:
        await again.aclose()


_CHECKS: tuple[Callable[[_Ends], Awaitable[None]], ...] = (
    _check_watch_sees_other_writes,
    _check_watch_catches_up,
)


def check_watch(
    store_factory: Callable[[], Store], reopen: Callable[[Store], Store] | None = None
) -> None:
    """Check that a blocking `Store`'s ``watch`` keeps the watch contract.

    Checks: the writes of another store object (``reopen``) after ``after_version`` come out
    of the watch in order, each message exactly once, none of another conversation; writes made
    while nobody iterates come at the next iteration; ``watch.version`` is the store's version
    once all came; a watch started behind, or resumed from an earlier watch's ``version``,
    catches up (as batches, or, for a store that keeps no log of writes, as one
    [`ConversationReplacedError`][threadline.ConversationReplacedError] holding the whole
    conversation), then goes on. The writes run in a worker thread while the watch is iterated
    on an event loop this function runs, so call it outside async code (from async code, use
    [`check_async_watch`][threadline.testing.check_async_watch] with an async store).

    Args:
        store_factory: returns a new, empty store each time it is called.
        reopen: given a store the factory made, returns another object on the same storage (the
            same file, directory, database or key prefix), as another process would open it;
            ``None`` writes through the watched store itself (a ``MemoryStore``, which no other
            object shares). The kit closes it after each check when it has ``close``.

    Raises:
        threadline.testing.ConformanceError: (an ``AssertionError``) the watch broke a
            promise; the message names the check, the store and what differed.
    """
    for check in _CHECKS:
        watched = store_factory()
        writer = reopen(watched) if reopen is not None else watched
        try:
            asyncio.run(_run(check, _Ends(watched, writer)))
        finally:
            for store in {id(watched): watched, id(writer): writer}.values():
                close = getattr(store, "close", None)
                if callable(close):
                    close()


async def check_async_watch(
    store_factory: Callable[[], AsyncStore | Awaitable[AsyncStore]],
    reopen: Callable[[AsyncStore], AsyncStore | Awaitable[AsyncStore]] | None = None,
) -> None:
    """Check that an `AsyncStore`'s ``watch`` keeps the watch contract.

    The same checks as [`check_watch`][threadline.testing.check_watch], with the writes awaited.

    Args:
        store_factory: returns a new, empty store (or an awaitable of one) each time.
        reopen: given a store the factory made, returns another object on the same storage
            (or an awaitable of one); ``None`` writes through the watched store itself. The
            kit closes it (``aclose`` or ``close``) after each check.

    Raises:
        threadline.testing.ConformanceError: (an ``AssertionError``) naming the check that
            failed, the store and what its watch yielded.
    """
    for check in _CHECKS:
        made = store_factory()
        watched: AsyncStore = await made if inspect.isawaitable(made) else made
        writer = watched
        try:
            if reopen is not None:
                other = reopen(watched)
                writer = await other if inspect.isawaitable(other) else other
            await _run(check, _Ends(watched, writer))
        finally:
            for store in {id(watched): watched, id(writer): writer}.values():
                await _aclose(store)


async def _run(check: Callable[[_Ends], Awaitable[None]], ends: _Ends) -> None:
    try:
        await check(ends)
    except Exception as error:  # any failure, a store error included, fails the check
        name = check.__name__.removeprefix("_check_")
        detail = (
            str(error) if isinstance(error, AssertionError) else f"{type(error).__name__}: {error}"
        )
        raise ConformanceError(
            f"watch contract check {name!r} failed for {ends!r}: {detail}"
        ) from error
