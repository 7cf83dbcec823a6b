"""The ``load_after`` checks of the store kit (``check_store``, ``check_async_store``).

What every store promises about ``load_after(conversation_id, version)``: it returns an
`Appended` whose ``version`` is the conversation's version and whose messages agree with it —
applied to what the caller held at ``version`` (appended at its end, or, when ``replaced``, in
its place), they give exactly what ``load`` gives at that version. At the current version
nothing comes back; after version 0 everything comes back as appended; a replace or delete since
``version``, or a ``version`` newer than the store's, is ``replaced``; file bytes kept in a blob
store come back restored; and a reader catching up while a writer appends always sees a version
and messages that agree. A store that cannot tell appends apart may answer ``replaced`` with the
whole conversation; it never answers an append it cannot vouch for.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable
from collections.abc import Callable

from threadline.errors import ValidationError
from threadline.messages import Message
from threadline.messages import user_message
from threadline.stores._appended import Appended
from threadline.stores.base import AsyncStore
from threadline.stores.base import Store
from threadline.testing._threads import TIMEOUT
from threadline.testing._threads import run_threads

__all__ = ["async_after_checks", "sync_after_checks"]

_BAD_VERSIONS: tuple[object, ...] = (-1, True, "1", 1.5, None)
_APPENDS = 40  # a writer's appends of one message, while a reader catches up


def _messages(tag: str, count: int) -> list[Message]:
    return [user_message(f"{tag} #{i}", id=f"{tag}-{i}") for i in range(count)]


def _applied(held: list[Message], result: object, what: str) -> list[Message]:
    """``held`` with ``result`` (a ``load_after`` answer) applied, after checking its type."""
    assert isinstance(result, Appended), (
        f"{what}: load_after returned a {type(result).__name__}, not an Appended"
    )
    assert type(result.version) is int, f"{what}: Appended.version is {result.version!r}"
    assert isinstance(result.messages, list), f"{what}: Appended.messages is not a list"
    return list(result.messages) if result.replaced else [*held, *result.messages]


def _agrees(
    result: Appended, held: list[Message], loaded: list[Message], version: int, what: str
) -> None:
    """``result`` applied to ``held`` gives ``loaded``, at ``version``."""
    assert result.version == version, (
        f"{what}: load_after says version {result.version}; the conversation is at {version}"
    )
    got = _applied(held, result, what)
    assert [m.id for m in got] == [m.id for m in loaded], (
        f"{what}: applying load_after's answer (replaced={result.replaced}, "
        f"{len(result.messages)} messages) gives ids {[m.id for m in got]}, but load gives "
        f"{[m.id for m in loaded]}"
    )
    assert got == loaded, f"{what}: the messages load_after returned differ from load's"


def _refused(call: Callable[[], object], what: str) -> None:
    try:
        call()
    except ValidationError:
        return
    raise AssertionError(f"load_after with {what} was not refused with ValidationError")


async def _arefused(call: Callable[[], Awaitable[object]], what: str) -> None:
    try:
        await call()
    except ValidationError:
        return
    raise AssertionError(f"load_after with {what} was not refused with ValidationError")


class _Oracle:
    """What the conversation held at each version seen, and the version of its last replace
    or delete: what every ``load_after`` answer is checked against."""

    def __init__(self) -> None:
        self.seen: dict[int, list[Message]] = {0: []}
        self.reset = 0

    def check(
        self, answers: dict[int, Appended], loaded: list[Message], version: int, what: str
    ) -> None:
        current = answers.pop(version)
        assert current == Appended(version, [], False), (
            f"{what}: load_after at the current version {version}: {current!r}"
        )
        for start, result in answers.items():
            _agrees(result, self.seen[start], loaded, version, f"{what}: load_after from {start}")
            if start == 0:
                assert not result.replaced, f"{what}: load_after from version 0 said replaced"
            elif start < self.reset:
                assert result.replaced, (
                    f"{what}: load_after from {start}, before the replace or delete at "
                    f"version {self.reset}, is not replaced"
                )
        self.seen[version] = loaded


# ---------------------------------------------------------------------------------------------
# Blocking


def _check_load_after(store: Store) -> None:
    for bad in _BAD_VERSIONS:
        _refused(lambda bad=bad: store.load_after("c", bad), f"version={bad!r}")  # type: ignore[misc]
    _refused(lambda: store.load_after("../c", 0), "an invalid id")
    empty = store.load_after("c", 0)
    assert empty == Appended(0, [], False), f"a conversation never written: {empty!r}"
    oracle = _Oracle()

    def step(what: str, write: Callable[[], object], *, resets: bool = False) -> None:
        write()
        loaded, version = store.load("c"), store.version("c")
        if resets:
            oracle.reset = version
        starts = [*oracle.seen, version]
        oracle.check({s: store.load_after("c", s) for s in starts}, loaded, version, what)

    step("after an append", lambda: store.append("c", _messages("a", 2)))
    step("after an append", lambda: store.append("c", _messages("b", 1)))
    step("after an append", lambda: store.append("c", _messages("c", 3)))
    loaded, version = store.load("c"), store.version("c")
    future = store.load_after("c", version + 5)
    assert future.replaced, "load_after from a version the store never reached is not replaced"
    _agrees(future, [], loaded, version, "load_after from a future version")
    step("after a replace", lambda: store.replace("c", _messages("r", 2)), resets=True)
    step("after an append after a replace", lambda: store.append("c", _messages("d", 2)))
    step("after a delete", lambda: store.delete("c"), resets=True)
    step("after an append after a delete", lambda: store.append("c", _messages("e", 1)))


def _load_after_files(sample: Callable[[str], list[Message]]) -> Callable[[Store], None]:
    def _check_load_after_files(store: Store) -> None:
        messages = sample("f")
        store.append("f", messages[:3])
        held, version = store.load("f"), store.version("f")
        store.append("f", messages[3:])
        loaded, now = store.load("f"), store.version("f")
        _agrees(store.load_after("f", version), held, loaded, now, "file parts, appended")
        _agrees(store.load_after("f", 0), [], loaded, now, "file parts, from version 0")

    return _check_load_after_files


def _check_load_after_racing(store: Store) -> None:
    done = threading.Event()

    def write() -> None:
        try:
            for i in range(_APPENDS):
                store.append("w", [user_message(f"#{i}", id=f"w-{i}")])
        finally:
            done.set()

    def read() -> None:
        held: list[Message] = []
        version = 0
        while version < _APPENDS:
            result = store.load_after("w", version)
            held = _applied(held, result, "a reader catching up with a writer")
            assert [m.id for m in held] == [f"w-{i}" for i in range(result.version)], (
                f"a reader catching up with a writer holds {len(held)} messages at version "
                f"{result.version}: the version and the messages load_after read disagree"
            )
            version = result.version
            if done.is_set() and version < _APPENDS and store.version("w") == version:
                raise AssertionError(
                    f"the writer finished at version {_APPENDS}, but load_after says {version}"
                )

    run_threads(write, read, timeout=TIMEOUT)


def sync_after_checks(
    sample: Callable[[str], list[Message]],
) -> tuple[Callable[[Store], None], ...]:
    """The blocking checks, given the kit's sample conversation (every part type)."""
    return (_check_load_after, _load_after_files(sample), _check_load_after_racing)


# ---------------------------------------------------------------------------------------------
# Async


async def _acheck_load_after(store: AsyncStore) -> None:
    for bad in _BAD_VERSIONS:
        await _arefused(lambda bad=bad: store.load_after("c", bad), f"version={bad!r}")  # type: ignore[misc]
    await _arefused(lambda: store.load_after("../c", 0), "an invalid id")
    empty = await store.load_after("c", 0)
    assert empty == Appended(0, [], False), f"a conversation never written: {empty!r}"
    oracle = _Oracle()

    async def step(what: str, write: Awaitable[object], *, resets: bool = False) -> None:
        await write
        loaded, version = await store.load("c"), await store.version("c")
        if resets:
            oracle.reset = version
        answers = {s: await store.load_after("c", s) for s in [*oracle.seen, version]}
        oracle.check(answers, loaded, version, what)

    await step("after an append", store.append("c", _messages("a", 2)))
    await step("after an append", store.append("c", _messages("b", 1)))
    await step("after an append", store.append("c", _messages("c", 3)))
    loaded, version = await store.load("c"), await store.version("c")
    future = await store.load_after("c", version + 5)
    assert future.replaced, "load_after from a version the store never reached is not replaced"
    _agrees(future, [], loaded, version, "load_after from a future version")
    await step("after a replace", store.replace("c", _messages("r", 2)), resets=True)
    await step("after an append after a replace", store.append("c", _messages("d", 2)))
    await step("after a delete", store.delete("c"), resets=True)
    await step("after an append after a delete", store.append("c", _messages("e", 1)))


def _aload_after_files(
    sample: Callable[[str], list[Message]],
) -> Callable[[AsyncStore], Awaitable[None]]:
    async def _acheck_load_after_files(store: AsyncStore) -> None:
        messages = sample("f")
        await store.append("f", messages[:3])
        held, version = await store.load("f"), await store.version("f")
        await store.append("f", messages[3:])
        loaded, now = await store.load("f"), await store.version("f")
        _agrees(await store.load_after("f", version), held, loaded, now, "file parts, appended")
        _agrees(await store.load_after("f", 0), [], loaded, now, "file parts, from version 0")

    return _acheck_load_after_files


async def _acheck_load_after_racing(store: AsyncStore) -> None:
    async def write() -> None:
        for i in range(_APPENDS):
            await store.append("w", [user_message(f"#{i}", id=f"w-{i}")])
            await asyncio.sleep(0)

    async def read() -> None:
        held: list[Message] = []
        version = 0
        while version < _APPENDS:
            result = await store.load_after("w", version)
            held = _applied(held, result, "a task catching up with a writer")
            assert [m.id for m in held] == [f"w-{i}" for i in range(result.version)], (
                f"a task catching up with a writer holds {len(held)} messages at version "
                f"{result.version}: the version and the messages load_after read disagree"
            )
            version = result.version
            await asyncio.sleep(0)

    await asyncio.gather(write(), read())


def async_after_checks(
    sample: Callable[[str], list[Message]],
) -> tuple[Callable[[AsyncStore], Awaitable[None]], ...]:
    """The async checks, given the kit's sample conversation (every part type)."""
    return (_acheck_load_after, _aload_after_files(sample), _acheck_load_after_racing)
