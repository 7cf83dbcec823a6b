"""What every store's ``fork`` and ``parent`` share: the arguments, the branch's messages, the
errors, and how a parent record is written down. A store of your own can use them too.

``fork(conversation_id, new_id, at=None)`` copies the first ``at`` messages of a conversation
(all when ``None``) into a new conversation and records where it came from, for "edit and
regenerate". Every store does it in two steps:

1. It loads the parent once (one consistent read: whole batches, the old or the new history
   around a ``replace``) and takes its first ``at`` messages. The branch is a copy of the
   parent as that read saw it, so nothing written to the parent afterwards reaches it.
2. In one atomic step of the backend (a lock, a transaction, a Lua script), it checks that
   ``new_id`` is unused, writes the messages, steps the branch's version and records the
   parent. So two workers forking onto one id never both succeed, and no reader sees a branch
   without its parent record.

The messages are written as a new conversation's, so file bytes a store keeps in its blob store
are stored again under the branch (blobs are scoped to their conversation).

A refused fork raises [`ValidationError`][threadline.ValidationError] and writes nothing, as a
message reusing another's id does: the source holds no message, ``at`` is past its end, or
``new_id`` is taken (it holds messages or is a branch already; ``delete`` it first).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from collections.abc import Callable

from threadline.errors import ErrorDetail
from threadline.errors import ValidationError
from threadline.messages import Message
from threadline.stores.base import validate_conversation_id

__all__ = [
    "afork_source",
    "branch_of",
    "check_fork",
    "decode_parent",
    "encode_parent",
    "fork_source",
    "taken",
]


def check_fork(conversation_id: str, new_id: str, at: object, where: str) -> int | None:
    """Validate ``fork``'s arguments before anything is read.

    Returns:
        ``at``, checked (``None`` or an ``int`` of at least 0).

    Raises:
        threadline.ValidationError: an id is invalid, the two ids are the same, or ``at`` is
            not ``None`` or an ``int`` >= 0 (a ``bool`` included).
    """
    validate_conversation_id(conversation_id)
    validate_conversation_id(new_id)
    if new_id == conversation_id:
        raise _refused(
            "new_id",
            f"{where}: new_id is the conversation being forked ({new_id!r}); a branch needs "
            "an id of its own",
            "conversation_exists",
        )
    if at is None or (type(at) is int and at >= 0):
        return at
    raise _refused(
        "at",
        f"{where} takes at=None (every message) or an int >= 0 (how many messages of "
        f"the parent the branch starts with), not {at!r}",
        "type",
    )


def branch_of(
    messages: list[Message], conversation_id: str, at: int | None, where: str
) -> tuple[list[Message], int]:
    """The branch's messages and fork point: the first ``at`` of the parent's ``messages``.

    Raises:
        threadline.ValidationError: the parent holds no message, or ``at`` is past its end.
    """
    if not messages:
        raise _refused(
            "conversation_id",
            f"{where}: conversation {conversation_id!r} holds no message, so there is nothing "
            "to fork; nothing was written",
            "unknown_conversation",
        )
    if at is None:
        return messages, len(messages)
    if at > len(messages):
        raise _refused(
            "at",
            f"{where}: at={at} is past the end of conversation {conversation_id!r}, which "
            f"holds {len(messages)} messages; use 0 to {len(messages)} (or None for all); "
            "nothing was written",
            "too_large",
        )
    return messages[:at], at


def fork_source(
    load: Callable[[str], list[Message]],
    conversation_id: str,
    new_id: str,
    at: object,
    where: str,
) -> tuple[list[Message], int]:
    """Step 1 of a fork for a store that loads outside its atomic step: `check_fork`, one
    ``load`` of the parent, then `branch_of`. Returns the branch's messages and fork point.

    Raises:
        threadline.ValidationError: as `check_fork` and `branch_of` do.
    """
    checked = check_fork(conversation_id, new_id, at, where)
    return branch_of(load(conversation_id), conversation_id, checked, where)


async def afork_source(
    load: Callable[[str], Awaitable[list[Message]]],
    conversation_id: str,
    new_id: str,
    at: object,
    where: str,
) -> tuple[list[Message], int]:
    """`fork_source` for an async store (``load`` is awaited)."""
    checked = check_fork(conversation_id, new_id, at, where)
    return branch_of(await load(conversation_id), conversation_id, checked, where)


def taken(new_id: str, where: str) -> ValidationError:
    """The error of a fork onto an id that holds messages or is a branch already."""
    return _refused(
        "new_id",
        f"{where}: conversation {new_id!r} exists already (it holds messages or is a branch); "
        "fork onto a new id, or delete it first; nothing was written",
        "conversation_exists",
    )


def encode_parent(conversation_id: str, at: int) -> str:
    """A parent record as text (a Redis value, a JSONL side file)."""
    return json.dumps({"conversation_id": conversation_id, "at": at}, separators=(",", ":"))


def decode_parent(text: str | bytes | None) -> tuple[str, int] | None:
    """The ``(conversation_id, at)`` of an `encode_parent` text; ``None`` for none.

    Raises:
        ValueError: the text is not a parent record.
    """
    if text is None:
        return None
    value = json.loads(text)
    if not isinstance(value, dict) or not isinstance(value.get("conversation_id"), str):
        raise ValueError(f"not a parent record: {str(text)[:80]!r}")
    at = value.get("at")
    if type(at) is not int or at < 0:
        raise ValueError(f"not a parent record: {str(text)[:80]!r}")
    return value["conversation_id"], at


def _refused(path: str, message: str, kind: str) -> ValidationError:
    detail = ErrorDetail(path, message, kind)
    return ValidationError(f"invalid fork: {message}", [detail])
