"""The listing checks of the store kit (``check_store``, ``check_async_store``).

What every store promises about ``list_conversations(limit=None, after=None)`` and
``conversation_info(cid)``: without arguments the listing holds every id that holds a message,
once, in code point order (``sorted``); paging through it with any ``limit``, each page after
the last id of the one before, gives the same ids; ``after`` need not name a stored
conversation; a bad ``limit`` or ``after`` raises ``ValidationError``. ``conversation_info``
agrees with ``version``, ``load`` and ``parent``, is ``None`` for a conversation that holds
nothing and is no branch (never written, deleted, replaced with ``[]``), and its times, where the
store keeps them, are aware datetimes, the first no later than the last.
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from datetime import datetime
from functools import partial
from typing import Any

from threadline.errors import ValidationError
from threadline.messages import Message
from threadline.messages import user_message
from threadline.stores._listing import ConversationInfo
from threadline.stores.base import AsyncStore
from threadline.stores.base import Store

__all__ = ["ASYNC_LISTING_CHECKS", "SYNC_LISTING_CHECKS"]

# Ids whose code point order differs from case-insensitive and locale orders: upper case
# before lower case, '-' < '.' < digits < ':' < upper case < '_' < lower case.
_IDS = ("c1", "c10", "c1.x", "c1:y", "c1-z", "c1_w", "C1", "a-b", "a.b", "aB", "ab", "9" * 200)
_MISSING_AFTER = ("0", "a", "aC", "c1-", "c1_", "zzz")  # stored nowhere, between or around
_BAD_LIMITS: tuple[object, ...] = (0, -1, True, 1.5, "2")
_BAD_AFTERS: tuple[object, ...] = (1, b"c1", "", "../x", "ünï")


def _messages(tag: str, count: int) -> list[Message]:
    return [user_message(f"{tag} #{i}", id=f"{tag}-{i}") for i in range(count)]


def _pages_of(listed: list[str], limit: int, pages: list[list[str]], what: str) -> list[str]:
    """The ids of ``pages`` (of at most ``limit`` each, the last one shorter or empty)."""
    joined: list[str] = []
    for number, page in enumerate(pages):
        assert isinstance(page, list), f"{what}: page {number} is a {type(page).__name__}"
        assert len(page) <= limit, f"{what}: page {number} holds {len(page)} ids, over {limit}"
        joined += page
    assert joined == listed, f"{what}: the pages give {joined}, the whole listing {listed}"
    return joined


def _check_full(listed: list[str]) -> None:
    expected = sorted(_IDS)
    assert listed == expected, (
        f"list_conversations() gave {listed}; expected every id in code point order {expected}"
    )


def _check_info(
    info: object, conversation_id: str, version: int, held: int, parent: object, what: str
) -> None:
    assert isinstance(info, ConversationInfo), (
        f"{what}: conversation_info returned {info!r}, not a ConversationInfo"
    )
    got = (info.id, info.version, info.messages, info.parent)
    expected = (conversation_id, version, held, parent)
    assert got == expected, (
        f"{what}: conversation_info says (id, version, messages, parent) = {got}; the store "
        f"says {expected}"
    )
    times = (info.created_at, info.updated_at)
    for name, value in zip(("created_at", "updated_at"), times, strict=True):
        assert value is None or (isinstance(value, datetime) and value.tzinfo is not None), (
            f"{what}: {name} is {value!r}, not None or an aware datetime"
        )
    if info.created_at is not None and info.updated_at is not None:
        assert info.created_at <= info.updated_at, f"{what}: created_at is after updated_at"


def _refused(call: Callable[[], object], what: str) -> None:
    try:
        call()
    except ValidationError:
        return
    raise AssertionError(f"list_conversations with {what} was not refused with ValidationError")


async def _arefused(call: Callable[[], Awaitable[object]], what: str) -> None:
    try:
        await call()
    except ValidationError:
        return
    raise AssertionError(f"list_conversations with {what} was not refused with ValidationError")


def _check_paged_listing(store: Store) -> None:
    assert store.list_conversations(limit=1) == [], "an empty store listed a page of ids"
    for index, cid in enumerate(_IDS):
        store.append(cid, _messages(f"p{index}", 1))
    listed = store.list_conversations()
    _check_full(listed)
    assert store.list_conversations(None, None) == listed, "(None, None) differs from ()"
    for limit in (1, 2, 5, len(_IDS), len(_IDS) + 1):
        pages = [store.list_conversations(limit=limit)]
        while len(pages[-1]) == limit:
            pages.append(store.list_conversations(limit=limit, after=pages[-1][-1]))
        _pages_of(listed, limit, pages, f"paging with limit={limit}")
    for after in [*_MISSING_AFTER, *listed]:
        expected = [cid for cid in listed if cid > after]
        got = store.list_conversations(after=after)
        assert got == expected, f"list_conversations(after={after!r}) gave {got}, not {expected}"
        first = store.list_conversations(limit=1, after=after)
        assert first == expected[:1], f"limit=1 after {after!r} gave {first}, not {expected[:1]}"
    store.delete("c1")
    assert "c1" not in store.list_conversations(), "a deleted conversation is still listed"
    assert store.list_conversations(after="c1", limit=1) == ["c1-z"], "paging after a deleted id"
    bad: Any
    for bad in _BAD_LIMITS:
        _refused(partial(store.list_conversations, limit=bad), f"limit={bad!r}")
    for bad in _BAD_AFTERS:
        _refused(partial(store.list_conversations, after=bad), f"after={bad!r}")


def _check_conversation_info(store: Store) -> None:
    assert store.conversation_info("never") is None, "info of a conversation never written"
    store.append("i", _messages("a", 2))
    store.append("i", _messages("b", 3))
    _check_info(store.conversation_info("i"), "i", store.version("i"), 5, None, "after appends")
    store.fork("i", "branch", 2)
    info = store.conversation_info("branch")
    _check_info(info, "branch", store.version("branch"), 2, ("i", 2), "a branch")
    store.fork("i", "empty-branch", 0)
    info = store.conversation_info("empty-branch")
    version = store.version("empty-branch")
    _check_info(info, "empty-branch", version, 0, ("i", 0), "a branch of no message")
    store.replace("i", _messages("r", 1))
    _check_info(store.conversation_info("i"), "i", store.version("i"), 1, None, "a replace")
    store.delete("i")
    assert store.conversation_info("i") is None, "info of a deleted conversation is not None"
    store.append("gone", _messages("g", 1))
    store.replace("gone", [])
    assert store.conversation_info("gone") is None, "info of a conversation replaced with []"
    _refused_info(lambda: store.conversation_info("../escape"))


def _refused_info(call: Callable[[], object]) -> None:
    try:
        call()
    except ValidationError:
        return
    raise AssertionError("conversation_info('../escape') was not refused with ValidationError")


SYNC_LISTING_CHECKS: tuple[Callable[[Store], None], ...] = (
    _check_paged_listing,
    _check_conversation_info,
)


# ---------------------------------------------------------------------------------------------
# Async


async def _acheck_paged_listing(store: AsyncStore) -> None:
    assert await store.list_conversations(limit=1) == [], "an empty store listed a page of ids"
    for index, cid in enumerate(_IDS):
        await store.append(cid, _messages(f"p{index}", 1))
    listed = await store.list_conversations()
    _check_full(listed)
    for limit in (1, 2, 5, len(_IDS), len(_IDS) + 1):
        pages = [await store.list_conversations(limit=limit)]
        while len(pages[-1]) == limit:
            pages.append(await store.list_conversations(limit=limit, after=pages[-1][-1]))
        _pages_of(listed, limit, pages, f"paging with limit={limit}")
    for after in [*_MISSING_AFTER, *listed]:
        expected = [cid for cid in listed if cid > after]
        got = await store.list_conversations(after=after)
        assert got == expected, f"list_conversations(after={after!r}) gave {got}, not {expected}"
        first = await store.list_conversations(limit=1, after=after)
        assert first == expected[:1], f"limit=1 after {after!r} gave {first}, not {expected[:1]}"
    bad: Any
    for bad in _BAD_LIMITS:
        await _arefused(partial(store.list_conversations, limit=bad), f"limit={bad!r}")
    for bad in _BAD_AFTERS:
        await _arefused(partial(store.list_conversations, after=bad), f"after={bad!r}")


async def _acheck_conversation_info(store: AsyncStore) -> None:
    assert await store.conversation_info("never") is None, "info of a conversation never written"
    await store.append("i", _messages("a", 2))
    await store.append("i", _messages("b", 3))
    info = await store.conversation_info("i")
    _check_info(info, "i", await store.version("i"), 5, None, "after appends")
    await store.fork("i", "branch", 2)
    info = await store.conversation_info("branch")
    _check_info(info, "branch", await store.version("branch"), 2, ("i", 2), "a branch")
    await store.fork("i", "empty-branch", 0)
    info = await store.conversation_info("empty-branch")
    version = await store.version("empty-branch")
    _check_info(info, "empty-branch", version, 0, ("i", 0), "a branch of no message")
    await store.delete("i")
    assert await store.conversation_info("i") is None, "info of a deleted conversation"
    try:
        await store.conversation_info("../escape")
    except ValidationError:
        return
    raise AssertionError("conversation_info('../escape') was not refused with ValidationError")


ASYNC_LISTING_CHECKS: tuple[Callable[[AsyncStore], Awaitable[None]], ...] = (
    _acheck_paged_listing,
    _acheck_conversation_info,
)
