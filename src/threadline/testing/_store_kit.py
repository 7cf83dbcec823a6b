"""The store kit: the store contract as code, ``check_store`` and ``check_async_store``.

Every store threadline ships runs this suite, and so can a third party's::

    from threadline.testing import check_store


    def test_my_store_keeps_the_contract(tmp_path):
        counter = iter(range(1000))
        check_store(lambda: MyStore(tmp_path / f"db{next(counter)}"))

Each check gets a fresh, empty store from the factory (and closes it afterwards when the store
has ``close``). A broken promise raises ``threadline.testing.ConformanceError`` (an
``AssertionError``) naming the check, the store and what differed. The suite needs no pytest:
plain checks and threads (or tasks), every wait bounded by a generous timeout so a deadlocked
store fails instead of hanging.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from datetime import datetime
from datetime import timezone
from typing import Any
from typing import TypeVar

from threadline.errors import ConformanceError
from threadline.messages import Message
from threadline.messages import ProviderToolCallPart
from threadline.messages import ProviderToolResultPart
from threadline.messages import assistant_message
from threadline.messages import file_part
from threadline.messages import hook_part
from threadline.messages import internal_message
from threadline.messages import reasoning_part
from threadline.messages import system_message
from threadline.messages import tool_call_part
from threadline.messages import tool_message
from threadline.messages import tool_result_part
from threadline.messages import user_message
from threadline.stores.base import AsyncStore
from threadline.stores.base import Store
from threadline.testing._store_kit_after import async_after_checks
from threadline.testing._store_kit_after import sync_after_checks
from threadline.testing._store_kit_forks import async_fork_checks
from threadline.testing._store_kit_forks import sync_fork_checks
from threadline.testing._store_kit_listing import ASYNC_LISTING_CHECKS
from threadline.testing._store_kit_listing import SYNC_LISTING_CHECKS
from threadline.testing._store_kit_versions import ASYNC_VERSION_CHECKS
from threadline.testing._store_kit_versions import SYNC_VERSION_CHECKS
from threadline.testing._threads import TIMEOUT
from threadline.testing._threads import run_threads

__all__ = ["check_async_store", "check_store"]

_S = TypeVar("_S")
_TIMEOUT = TIMEOUT  # read at each use, so a test can shorten it

VALID_IDS = (
    "a",
    "0",
    "Z",
    "user:42",
    "conv-1.2_3",
    "a.b.c",
    "x-",
    "9" * 200,
    "A" * 200,
    "Z" + "._:-Q" * 39 + "AAAA",
)
"""Ids every store must accept, for every operation (the longest, all capitals, every
punctuation mark among them)."""

INVALID_IDS = (
    "",
    ".",
    "..",
    "../escape",
    "a/../b",
    "a/b",
    "/absolute",
    "a\\b",
    ".hidden",
    "-dash-first",
    "_underscore-first",
    "a..b",
    "a b",
    "nul\x00byte",
    "new\nline",
    "tab\t",
    "trailing\n",
    "ünïcode",
    "a" * 201,
    "star*",
    "question?",
)
"""Ids every store must refuse with a ``ValueError`` (``threadline.ValidationError``)."""


def check_store(store_factory: Callable[[], Store]) -> None:
    """Check that a `Store` keeps the store contract.

    Checks: round trip of every part type (``replay`` comes back ``False``), ordering, empty
    batches, replace, delete, listing, id validation, a batch is atomic under concurrent reads,
    replace is atomic under concurrent reads, concurrent writers from threads lose no
    message and never interleave inside a batch, and writes are idempotent: a batch sent
    again (alone, merged with later messages, or by several threads at once) stores each
    message once, in order, while a message reusing the id of a different one is refused
    with a ``ValueError`` and nothing of its batch is written. Versions: 0 for a conversation
    never written, one more after each ``append`` that stores something and each ``replace``,
    never back (a ``delete`` moves it forward too); a stale ``expected_version`` raises
    `ConflictError` naming the conversation and both versions, with nothing
    written; threads racing with expected-version retry loops lose and duplicate nothing.
    Forks: ``fork`` copies the parent's first ``at`` messages (every part type, file bytes
    included) into a new conversation that ``parent`` names with its fork point, independent
    of later writes to either; a fork of an empty conversation, past its end or onto an id in
    use raises ``ValidationError`` and writes nothing; ``delete`` drops the parent record; of
    forks racing onto one id, exactly one succeeds. ``load_after`` answers agree with ``load``
    and ``version`` after appends, a replace and a delete (see `Appended`), file bytes
    included, and while a writer appends. Listing: every id once, in code point order, and the
    same ids page by page (``limit``, ``after`` a listed or missing id); ``conversation_info``
    agrees with ``version``, ``load`` and ``parent``, and is ``None`` for an id holding nothing.

    Args:
        store_factory: returns a new, empty store each time it is called (for example on a new
            file or a new key prefix).

    Raises:
        threadline.testing.ConformanceError: (an ``AssertionError``) the store broke a
            promise; the message names the check, the store and the difference.
    """
    for check in _SYNC_CHECKS:
        store = store_factory()
        try:
            check(store)
        except Exception as error:  # any failure, a store error included, fails the check
            raise _failure(check, store, error) from error
        finally:
            close = getattr(store, "close", None)
            if callable(close):
                close()


async def check_async_store(
    store_factory: Callable[[], AsyncStore | Awaitable[AsyncStore]],
) -> None:
    """Check that an `AsyncStore` keeps the store contract.

    The same checks as `check_store`, with concurrent tasks in place of threads.

    Args:
        store_factory: returns a new, empty store (or an awaitable of one) each time.

    Raises:
        threadline.testing.ConformanceError: (an ``AssertionError``) the store broke a
            promise; the message names the check, the store and the difference.
    """
    for check in _ASYNC_CHECKS:
        made = store_factory()
        store: AsyncStore = await made if inspect.isawaitable(made) else made
        try:
            await asyncio.wait_for(check(store), _TIMEOUT)
        except Exception as error:
            raise _failure(check, store, error) from error
        finally:
            await _aclose(store)


def _failure(check: Callable[..., object], store: object, error: Exception) -> ConformanceError:
    name = check.__name__.removeprefix("_check_").removeprefix("_acheck_")
    detail = str(error) if isinstance(error, AssertionError) else f"{type(error).__name__}: {error}"
    return ConformanceError(f"store contract check {name!r} failed for {store!r}: {detail}")


async def _aclose(store: object) -> None:
    for name in ("aclose", "close"):
        close = getattr(store, name, None)
        if callable(close):
            result = close()
            if inspect.isawaitable(result):
                await result
            return


# ---------------------------------------------------------------------------------------------
# Data


def sample_conversation(tag: str) -> list[Message]:
    """A conversation holding every role and part type, JSON escapes, bytes and a large file."""
    when = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=timezone.utc)
    done = assistant_message("Done. ✓", id=f"{tag}-7", metadata={"usage": {"out": 3}})
    return [
        system_message("Be brief. Ünïcødé ✓ 日本語", id=f"{tag}-0"),
        user_message(
            'Hi "quoted" \\ back\nslash \u2028 and \x00 nul',
            file_part(b"\x00\xff\xfb\xef binary", "image/png", filename="a.png"),
            file_part("https://example.com/cat.png", "image/png"),
            id=f"{tag}-1",
            metadata={"k": [1, 2.5, None, True, {"nested": "v"}], "": ""},
            created_at=when,
        ),
        assistant_message(
            reasoning_part("thinking…", signature="sig==", provider="anthropic", model="m-1"),
            "Let me look.",
            tool_call_part("call_1", "search", {"q": "cats", "n": [1, 2], "deep": {"x": None}}),
            tool_call_part("call_2", "broken", "not { json"),
            ProviderToolCallPart(
                id="srv_1", name="web_search", input={"q": 1}, provider="anthropic"
            ),
            ProviderToolResultPart(call_id="srv_1", content=[{"url": "u"}], provider="anthropic"),
            id=f"{tag}-2",
        ),
        tool_message(
            tool_result_part("call_1", "3 cats", name="search"),
            tool_result_part(
                "call_2",
                ["see file", file_part(bytes(range(256)) * 4, "application/pdf")],
                is_error=True,
            ),
            id=f"{tag}-3",
        ),
        internal_message(hook_part("approval", {"pending": True, "by": None}), id=f"{tag}-4"),
        user_message(
            "A big picture", file_part(bytes(range(251)) * 800, "image/webp"), id=f"{tag}-5"
        ),
        tool_message(
            tool_result_part("call_9", [file_part(b"\x01" * 70_000, "image/png")]), id=f"{tag}-6"
        ),
        done.model_copy(update={"replay": True}),
    ]


def _stored(messages: Sequence[Message]) -> list[Message]:
    """What a store gives back: ``replay`` is runtime-only and never persisted."""
    return [m.model_copy(update={"replay": False}) if m.replay else m for m in messages]


def _numbered(tag: str, count: int) -> list[Message]:
    return [user_message(f"{tag} #{i}", id=f"{tag}-{i}") for i in range(count)]


def _batch(writer: int, batch: int, size: int) -> list[Message]:
    return [
        user_message(f"w{writer} b{batch} m{k}", id=f"w{writer}-b{batch}-m{k}") for k in range(size)
    ]


def _same(actual: object, expected: list[Message], what: str) -> None:
    """Assert ``actual`` equals ``expected``, saying where they first differ."""
    assert isinstance(actual, list), f"{what}: load returned a {type(actual).__name__}, not a list"
    if actual == expected:
        return
    if len(actual) != len(expected):
        raise AssertionError(
            f"{what}: got {len(actual)} messages, expected {len(expected)}; got ids "
            f"{_ids(actual)}, expected {_ids(expected)}"
        )
    index = next(i for i, (a, e) in enumerate(zip(actual, expected, strict=True)) if a != e)
    raise AssertionError(
        f"{what}: message {index} differs:\n  got      {_short(actual[index])}\n"
        f"  expected {_short(expected[index])}"
    )


def _ids(messages: Sequence[object]) -> list[object]:
    ids = [getattr(m, "id", m) for m in messages]
    return ids if len(ids) <= 12 else [*ids[:6], "...", *ids[-5:]]


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 600 else text[:600] + "..."


def _check_batches(loaded: list[Message], writers: int, batches: int, size: int) -> None:
    """Every message present once, each writer's batches in order, each batch contiguous."""
    expected = writers * batches * size
    assert len(loaded) == expected, (
        f"{writers} writers appended {expected} messages but {len(loaded)} were stored"
    )
    ids = [m.id for m in loaded]
    assert len(set(ids)) == len(ids), "a message was stored twice"
    next_batch = [0] * writers
    for start in range(0, len(ids), size):
        writer, batch, _ = ids[start].split("-")
        w, b = int(writer[1:]), int(batch[1:])
        run = ids[start : start + size]
        whole = [f"w{w}-b{b}-m{k}" for k in range(size)]
        assert run == whole, f"batch {ids[start]!r} is not contiguous at {start}: {run}"
        assert b == next_batch[w], f"writer {w}'s batch {b} came before its batch {next_batch[w]}"
        next_batch[w] += 1


def _is_prefix_of_batches(seen: list[Message], final: list[Message], size: int) -> None:
    assert len(seen) % size == 0, (
        f"a reader saw {len(seen)} messages: part of a batch of {size} ({_ids(seen)})"
    )
    _same(seen, final[: len(seen)], "a concurrent reader's view is not a prefix")


# ---------------------------------------------------------------------------------------------
# Blocking checks


def _check_empty(store: Store) -> None:
    assert store.list_conversations() == [], "a new store lists conversations"
    _same(store.load("nothing-here"), [], "load of an unknown conversation")
    store.delete("nothing-here")  # deleting what does not exist does nothing
    assert store.list_conversations() == [], "delete of an unknown conversation created one"


def _check_round_trip(store: Store) -> None:
    messages = sample_conversation("rt")
    given = list(messages)
    store.append("rt", messages[:3])
    store.append("rt", tuple(messages[3:5]))
    for message in messages[5:]:
        store.append("rt", [message])
    assert messages == given, "append changed the caller's list"
    loaded = store.load("rt")
    _same(loaded, _stored(messages), "round trip")
    assert not any(m.replay for m in loaded), "replay is runtime-only but came back True"
    loaded.clear()
    _same(store.load("rt"), _stored(messages), "changing a loaded list changed the store")
    assert store.list_conversations() == ["rt"], f"listing is {store.list_conversations()}"


def _check_order(store: Store) -> None:
    messages = _numbered("o", 40)
    for message in messages:
        store.append("order", [message])
    _same(store.load("order"), messages, "messages appended one by one")
    more = _numbered("o2", 3)
    store.append("order", more)
    _same(store.load("order"), messages + more, "appending after 40 messages")


def _check_empty_batch(store: Store) -> None:
    store.append("empty", [])
    _same(store.load("empty"), [], "load after appending no messages")
    assert store.list_conversations() == [], "appending no messages created a conversation"
    store.append("kept", _numbered("k", 2))
    store.append("kept", [])
    _same(store.load("kept"), _numbered("k", 2), "appending no messages changed a conversation")


def _check_replace(store: Store) -> None:
    first, second = _numbered("r1", 5), _numbered("r2", 2)
    store.replace("rep", first)
    _same(store.load("rep"), first, "replace of a new conversation")
    store.replace("rep", second)
    _same(store.load("rep"), second, "replace with fewer messages")
    store.append("rep", first[:1])
    _same(store.load("rep"), [*second, first[0]], "append after replace")
    store.replace("rep", [])
    _same(store.load("rep"), [], "replace with no messages")
    assert "rep" not in store.list_conversations(), "replace with [] left the conversation listed"
    store.append("rep", first[:2])
    _same(store.load("rep"), first[:2], "append after replace with []")


def _check_delete(store: Store) -> None:
    store.append("gone", _numbered("g", 3))
    store.append("stays", _numbered("s", 2))
    store.delete("gone")
    _same(store.load("gone"), [], "load after delete")
    assert store.list_conversations() == ["stays"], f"after delete: {store.list_conversations()}"
    _same(store.load("stays"), _numbered("s", 2), "delete touched another conversation")
    store.delete("gone")
    store.append("gone", _numbered("g2", 1))
    _same(store.load("gone"), _numbered("g2", 1), "append after delete starts afresh")


def _check_listing(store: Store) -> None:
    ids = ["c1", "c10", "c1.x", "c1:y", "c1-z", "c1_w", "C1", "9" * 200]
    for index, cid in enumerate(ids):
        store.append(cid, _numbered(f"l{index}", index + 1))
    listed = store.list_conversations()
    assert sorted(listed) == sorted(ids), f"listed {listed}, expected {sorted(ids)}"
    assert len(listed) == len(set(listed)), f"listing repeats an id: {listed}"
    for index, cid in enumerate(ids):
        _same(store.load(cid), _numbered(f"l{index}", index + 1), f"conversation {cid!r}")


def _id_operations(store: Store | AsyncStore) -> list[tuple[str, Callable[[str], Any]]]:
    """The calls that take a conversation id, each to be tried with an invalid one."""
    return [
        ("load", store.load),
        ("append", lambda cid: store.append(cid, _numbered("bad", 1))),
        ("replace", lambda cid: store.replace(cid, _numbered("bad", 1))),
        ("delete", store.delete),
    ]


def _check_ids(store: Store) -> None:
    for cid in VALID_IDS:
        store.append(cid, _numbered("v", 1))
        _same(store.load(cid), _numbered("v", 1), f"valid id {cid!r}")
        store.replace(cid, _numbered("r", 2))
        _same(store.load(cid), _numbered("r", 2), f"replace of valid id {cid!r}")
        store.delete(cid)
        _same(store.load(cid), [], f"delete of valid id {cid!r}")
        store.append(cid, _numbered("v", 1))
    expected = sorted(VALID_IDS)
    for cid in INVALID_IDS:
        for name, operation in _id_operations(store):
            try:
                operation(cid)
            except ValueError:
                continue
            raise AssertionError(f"{name}({cid!r}) did not raise ValueError for an invalid id")
    listed = sorted(store.list_conversations())
    assert listed == expected, f"refused ids changed the listing: {listed}"


def _check_atomic_batches(store: Store) -> None:
    size, batches = 4, 15
    final = [m for b in range(batches) for m in _batch(0, b, size)]
    done = threading.Event()
    seen: list[int] = []

    def write() -> None:
        try:
            for b in range(batches):
                store.append("atomic", _batch(0, b, size))
        finally:
            done.set()

    def read() -> None:
        while not done.is_set():
            view = store.load("atomic")
            _is_prefix_of_batches(view, final, size)
            seen.append(len(view))

    run_threads(write, read, timeout=_TIMEOUT)
    _same(store.load("atomic"), final, "after the writer finished")
    assert seen == sorted(seen), f"a reader saw the conversation shrink: {seen}"


def _check_atomic_replace(store: Store) -> None:
    old, new = _numbered("old", 3), _numbered("new", 6)
    store.replace("swap", old)
    done = threading.Event()

    def write() -> None:
        try:
            for _ in range(12):
                store.replace("swap", new)
                store.replace("swap", old)
        finally:
            done.set()

    def read() -> None:
        while not done.is_set():
            view = store.load("swap")
            assert view in (old, new), f"a reader saw a mix of two histories: {_ids(view)}"

    run_threads(write, read, read, timeout=_TIMEOUT)
    _same(store.load("swap"), old, "after the replaces")


def _check_concurrent_writers(store: Store) -> None:
    writers, batches, size = 4, 8, 3
    start = threading.Barrier(writers)

    def writer(w: int) -> Callable[[], None]:
        def write() -> None:
            start.wait(_TIMEOUT)
            for b in range(batches):
                store.append("shared", _batch(w, b, size))

        return write

    run_threads(*(writer(w) for w in range(writers)), timeout=_TIMEOUT)
    _check_batches(store.load("shared"), writers, batches, size)


def _check_concurrent_conversations(store: Store) -> None:
    writers = 4

    def writer(w: int) -> Callable[[], None]:
        def write() -> None:
            for i in range(6):
                store.append(f"own-{w}", _numbered(f"own{w}-{i}", 2))

        return write

    run_threads(*(writer(w) for w in range(writers)), timeout=_TIMEOUT)
    assert sorted(store.list_conversations()) == [f"own-{w}" for w in range(writers)]
    for w in range(writers):
        expected = [m for i in range(6) for m in _numbered(f"own{w}-{i}", 2)]
        _same(store.load(f"own-{w}"), expected, f"conversation own-{w}")


def _refused(append: Callable[[], object], what: str) -> None:
    try:
        append()
    except ValueError:
        return
    raise AssertionError(f"{what} was not refused with a ValueError")


def _check_replays(store: Store) -> None:
    sample = sample_conversation("rp")
    store.append("sample", sample)
    store.append("sample", sample)  # sent again: the reply to the first was lost
    _same(store.load("sample"), _stored(sample), "the sample conversation sent twice")
    first, more = _numbered("p", 3), _numbered("q", 2)
    store.append("replay", first)
    store.append("replay", first)
    _same(store.load("replay"), first, "a batch sent again")
    store.append("replay", [*first, *more])  # sent again, merged with what came after it
    _same(store.load("replay"), [*first, *more], "a batch sent again with new messages")
    store.append("replay", [*more[1:], *first[:1]])
    _same(store.load("replay"), [*first, *more], "older messages sent again, out of order")
    twice = _numbered("t", 1)
    store.append("replay", [*twice, *twice])
    expected = [*first, *more, *twice]
    _same(store.load("replay"), expected, "one message twice in a batch")
    clash = [user_message("new", id="n-0"), user_message("not p-1", id="p-1")]
    _refused(lambda: store.append("replay", clash), "a message reusing a stored id")
    _same(store.load("replay"), expected, "a refused batch wrote something")
    inner = [user_message("a", id="z-0"), user_message("b", id="z-0")]
    _refused(lambda: store.append("replay", inner), "two messages sharing an id in a batch")
    _refused(lambda: store.replace("replay", inner), "a replace with two messages sharing an id")
    _same(store.load("replay"), expected, "a refused batch or replace wrote something")
    store.replace("replay", [*more, *more])
    _same(store.load("replay"), more, "replace with each message twice")
    reborn = user_message("p-0 again, after a replace dropped it", id="p-0")
    store.append("replay", [reborn])  # the id left the conversation with the replace
    _same(store.load("replay"), [*more, reborn], "an id reused after a replace dropped it")
    store.delete("replay")
    store.append("replay", [reborn, *first[1:]])
    _same(store.load("replay"), [reborn, *first[1:]], "ids reused after a delete")


def _check_concurrent_replays(store: Store) -> None:
    writers, batches, size = 4, 8, 3
    start = threading.Barrier(writers)
    expected = [m for b in range(batches) for m in _batch(0, b, size)]

    def write() -> None:
        start.wait(_TIMEOUT)
        for b in range(batches):
            store.append("same", _batch(0, b, size))  # every thread sends the same batches

    run_threads(*(write for _ in range(writers)), timeout=_TIMEOUT)
    _same(store.load("same"), expected, "threads sending the same batches")


_SYNC_CHECKS: tuple[Callable[[Store], None], ...] = (
    _check_empty,
    _check_round_trip,
    _check_order,
    _check_empty_batch,
    _check_replace,
    _check_delete,
    _check_listing,
    _check_ids,
    _check_atomic_batches,
    _check_atomic_replace,
    _check_concurrent_writers,
    _check_concurrent_conversations,
    _check_replays,
    _check_concurrent_replays,
    *SYNC_VERSION_CHECKS,
    *sync_fork_checks(sample_conversation),
    *sync_after_checks(sample_conversation),
    *SYNC_LISTING_CHECKS,
)


# ---------------------------------------------------------------------------------------------
# Async checks: the same promises, with tasks for threads


async def _gather(*coroutines: Awaitable[Any]) -> None:
    await asyncio.gather(*coroutines)


async def _acheck_empty(store: AsyncStore) -> None:
    assert await store.list_conversations() == [], "a new store lists conversations"
    _same(await store.load("nothing-here"), [], "load of an unknown conversation")
    await store.delete("nothing-here")
    assert await store.list_conversations() == [], "delete of an unknown conversation created one"


async def _acheck_round_trip(store: AsyncStore) -> None:
    messages = sample_conversation("rt")
    given = list(messages)
    await store.append("rt", messages[:3])
    await store.append("rt", tuple(messages[3:5]))
    for message in messages[5:]:
        await store.append("rt", [message])
    assert messages == given, "append changed the caller's list"
    loaded = await store.load("rt")
    _same(loaded, _stored(messages), "round trip")
    loaded.clear()
    _same(await store.load("rt"), _stored(messages), "changing a loaded list changed the store")
    assert await store.list_conversations() == ["rt"]


async def _acheck_order(store: AsyncStore) -> None:
    messages = _numbered("o", 40)
    for message in messages:
        await store.append("order", [message])
    _same(await store.load("order"), messages, "messages appended one by one")


async def _acheck_empty_batch(store: AsyncStore) -> None:
    await store.append("empty", [])
    _same(await store.load("empty"), [], "load after appending no messages")
    assert await store.list_conversations() == [], "appending no messages created a conversation"


async def _acheck_replace(store: AsyncStore) -> None:
    first, second = _numbered("r1", 5), _numbered("r2", 2)
    await store.replace("rep", first)
    _same(await store.load("rep"), first, "replace of a new conversation")
    await store.replace("rep", second)
    _same(await store.load("rep"), second, "replace with fewer messages")
    await store.append("rep", first[:1])
    _same(await store.load("rep"), [*second, first[0]], "append after replace")
    await store.replace("rep", [])
    _same(await store.load("rep"), [], "replace with no messages")
    assert "rep" not in await store.list_conversations(), "replace with [] left it listed"


async def _acheck_delete(store: AsyncStore) -> None:
    await store.append("gone", _numbered("g", 3))
    await store.append("stays", _numbered("s", 2))
    await store.delete("gone")
    _same(await store.load("gone"), [], "load after delete")
    assert await store.list_conversations() == ["stays"]
    _same(await store.load("stays"), _numbered("s", 2), "delete touched another conversation")
    await store.append("gone", _numbered("g2", 1))
    _same(await store.load("gone"), _numbered("g2", 1), "append after delete starts afresh")


async def _acheck_listing(store: AsyncStore) -> None:
    ids = ["c1", "c10", "c1.x", "c1:y", "c1-z", "c1_w", "C1", "9" * 200]
    for index, cid in enumerate(ids):
        await store.append(cid, _numbered(f"l{index}", index + 1))
    listed = await store.list_conversations()
    assert sorted(listed) == sorted(ids), f"listed {listed}, expected {sorted(ids)}"
    assert len(listed) == len(set(listed)), f"listing repeats an id: {listed}"


async def _acheck_ids(store: AsyncStore) -> None:
    for cid in VALID_IDS:
        await store.append(cid, _numbered("v", 1))
        _same(await store.load(cid), _numbered("v", 1), f"valid id {cid!r}")
        await store.replace(cid, _numbered("r", 2))
        _same(await store.load(cid), _numbered("r", 2), f"replace of valid id {cid!r}")
        await store.delete(cid)
        _same(await store.load(cid), [], f"delete of valid id {cid!r}")
        await store.append(cid, _numbered("v", 1))
    for cid in INVALID_IDS:
        for name, operation in _id_operations(store):
            try:
                await operation(cid)
            except ValueError:
                continue
            raise AssertionError(f"{name}({cid!r}) did not raise ValueError for an invalid id")
    listed = sorted(await store.list_conversations())
    assert listed == sorted(VALID_IDS), f"refused ids changed the listing: {listed}"


async def _acheck_atomic_batches(store: AsyncStore) -> None:
    size, batches = 4, 15
    final = [m for b in range(batches) for m in _batch(0, b, size)]
    done = asyncio.Event()

    async def write() -> None:
        try:
            for b in range(batches):
                await store.append("atomic", _batch(0, b, size))
        finally:
            done.set()

    async def read() -> None:
        while not done.is_set():
            _is_prefix_of_batches(await store.load("atomic"), final, size)
            await asyncio.sleep(0)

    await _gather(write(), read())
    _same(await store.load("atomic"), final, "after the writer finished")


async def _acheck_atomic_replace(store: AsyncStore) -> None:
    old, new = _numbered("old", 3), _numbered("new", 6)
    await store.replace("swap", old)
    done = asyncio.Event()

    async def write() -> None:
        try:
            for _ in range(12):
                await store.replace("swap", new)
                await store.replace("swap", old)
        finally:
            done.set()

    async def read() -> None:
        while not done.is_set():
            view = await store.load("swap")
            assert view in (old, new), f"a reader saw a mix of two histories: {_ids(view)}"
            await asyncio.sleep(0)

    await _gather(write(), read(), read())
    _same(await store.load("swap"), old, "after the replaces")


async def _acheck_concurrent_writers(store: AsyncStore) -> None:
    writers, batches, size = 4, 8, 3

    async def write(w: int) -> None:
        for b in range(batches):
            await store.append("shared", _batch(w, b, size))

    await _gather(*(write(w) for w in range(writers)))
    _check_batches(await store.load("shared"), writers, batches, size)


async def _arefused(append: Callable[[], Awaitable[object]], what: str) -> None:
    try:
        await append()
    except ValueError:
        return
    raise AssertionError(f"{what} was not refused with a ValueError")


async def _acheck_replays(store: AsyncStore) -> None:
    sample = sample_conversation("rp")
    await store.append("sample", sample)
    await store.append("sample", sample)
    _same(await store.load("sample"), _stored(sample), "the sample conversation sent twice")
    first, more = _numbered("p", 3), _numbered("q", 2)
    await store.append("replay", first)
    await store.append("replay", first)
    _same(await store.load("replay"), first, "a batch sent again")
    await store.append("replay", [*first, *more])
    _same(await store.load("replay"), [*first, *more], "a batch sent again with new messages")
    clash = [user_message("new", id="n-0"), user_message("not p-1", id="p-1")]
    await _arefused(lambda: store.append("replay", clash), "a message reusing a stored id")
    inner = [user_message("a", id="z-0"), user_message("b", id="z-0")]
    await _arefused(lambda: store.append("replay", inner), "two messages sharing an id")
    _same(await store.load("replay"), [*first, *more], "a refused batch wrote something")
    await store.replace("replay", [*more, *more])
    _same(await store.load("replay"), more, "replace with each message twice")


async def _acheck_concurrent_replays(store: AsyncStore) -> None:
    writers, batches, size = 4, 8, 3
    expected = [m for b in range(batches) for m in _batch(0, b, size)]

    async def write() -> None:
        for b in range(batches):
            await store.append("same", _batch(0, b, size))

    await _gather(*(write() for _ in range(writers)))
    _same(await store.load("same"), expected, "tasks sending the same batches")


_ASYNC_CHECKS: tuple[Callable[[AsyncStore], Awaitable[None]], ...] = (
    _acheck_empty,
    _acheck_round_trip,
    _acheck_order,
    _acheck_empty_batch,
    _acheck_replace,
    _acheck_delete,
    _acheck_listing,
    _acheck_ids,
    _acheck_atomic_batches,
    _acheck_atomic_replace,
    _acheck_concurrent_writers,
    _acheck_replays,
    _acheck_concurrent_replays,
    *ASYNC_VERSION_CHECKS,
    *async_fork_checks(sample_conversation),
    *async_after_checks(sample_conversation),
    *ASYNC_LISTING_CHECKS,
)
