"""Messages from callers' input: a `Message` passes as it is, a mapping is validated.

What `History` and `Snapshot` take at the door. Every
problem is reported with its path (``messages[2].parts[0].arguments``) in one
`ValidationError`, raised before anything changes. A history created with
``timestamps=True`` passes its clock as ``stamp``: messages without ``created_at`` get it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import TypeAlias

import pydantic

from threadline._blob_marks import blob_mark_errors
from threadline._message_fields import FROM_DATA
from threadline._validation import translate_errors
from threadline.errors import ErrorDetail, ValidationError
from threadline.limits import THREADLINE_LAYOUT, Limits, enforce_limits
from threadline.messages import Message

__all__ = ["Clock", "clock_for", "leading_messages", "validated", "validated_batch"]

Clock: TypeAlias = Callable[[], datetime]
"""Gives the time to stamp on messages, for a history created with ``timestamps=True``."""


def clock_for(timestamps: bool, clock: Clock | None) -> Clock | None:
    """The clock a history stamps messages with (``None``: it does not stamp).

    Raises:
        ValueError: ``clock`` is given without ``timestamps=True``.
        TypeError: ``clock`` is not callable.
    """
    if not timestamps:
        if clock is not None:
            raise ValueError("clock= sets the time of timestamps: pass timestamps=True with it")
        return None
    if clock is None:
        return _utc_now
    if not callable(clock):
        raise TypeError(f"clock must be callable (() -> datetime), not {type(clock).__name__}")
    return clock


def validated(item: object, path: str, where: str, *, stamp: Clock | None = None) -> Message:
    """``item`` as a message; raise naming ``where`` (the entry point) when it is not one.

    With ``stamp``, a message without ``created_at`` comes back as a copy carrying its time.
    """
    result = _from_input(item, path)
    if isinstance(result, Message):
        return _stamped([result], stamp)[0] if stamp is not None else result
    raise _invalid(where, result)


def validated_batch(
    items: Iterable[object],
    where: str,
    *,
    limits: Limits | None = None,
    stamp: Clock | None = None,
) -> list[Message]:
    """``items`` as a new list of messages, every mapping validated; raise listing all problems.

    With ``limits``, the items are checked against them first (sizes, counts, nesting). With
    ``stamp``, messages without ``created_at`` are copies carrying one time (read once).
    """
    if isinstance(items, (Message, Mapping, str, bytes, bytearray)) or not isinstance(
        items, Iterable
    ):
        hint = "; to add one message use append(message)" if isinstance(items, Message) else ""
        detail = ErrorDetail(
            "messages",
            f"expected an iterable of messages, got {type(items).__name__}{hint}",
            "messages_type",
        )
        raise _invalid(where, [detail])
    if limits is not None:
        items = items if isinstance(items, list) else list(items)
        enforce_limits(
            items, limits, what=where, layout=THREADLINE_LAYOUT, path="messages", depth=2
        )
    out: list[Message] = []
    details: list[ErrorDetail] = []
    for index, item in enumerate(items):
        if isinstance(item, Message):
            out.append(item)
            continue
        result = _from_input(item, f"messages[{index}]")
        if isinstance(result, Message):
            out.append(result)
        else:
            details.extend(result)
    if details:
        raise _invalid(where, details)
    return _stamped(out, stamp) if stamp is not None and out else out


def leading_messages(expected: object) -> tuple[Message, ...]:
    """``expected`` of `History.replace_prefix` as a
    tuple of messages.

    Raises:
        TypeError: ``expected`` is not a sequence of messages.
    """
    if isinstance(expected, Sequence) and all(isinstance(item, Message) for item in expected):
        return tuple(expected)
    raise TypeError(
        "expected must be the leading messages the history should still start with (a "
        f"snapshot, or a slice of one), not {type(expected).__name__}"
    )


def _stamped(messages: list[Message], clock: Clock) -> list[Message]:
    """``messages`` with ``created_at`` set to ``clock()`` where it was ``None``.

    Raises:
        TypeError: ``clock`` did not return a ``datetime``.
    """
    if all(message.created_at is not None for message in messages):
        return messages
    now = clock()
    if not isinstance(now, datetime):
        raise TypeError(f"clock must return a datetime, not {type(now).__name__}")
    update = {"created_at": now}
    return [
        message if message.created_at is not None else message.model_copy(update=update)
        for message in messages
    ]


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


def _from_input(item: object, path: str) -> Message | list[ErrorDetail]:
    """``item`` as a Message, or the problems that stop it from being one."""
    if isinstance(item, Message):
        return item
    if not isinstance(item, Mapping):
        return [
            ErrorDetail(
                path,
                f"not a message (got {type(item).__name__}); pass a Message (user_message(...), "
                "assistant_message(...) ...) or a mapping of its fields",
                "message_type",
            )
        ]
    try:
        message = Message.model_validate(item, context=FROM_DATA)
    except pydantic.ValidationError as error:
        return list(translate_errors(error, "", prefix=path).errors)
    return blob_mark_errors(message, path) or message


def _invalid(where: str, details: Sequence[ErrorDetail]) -> ValidationError:
    lines = "\n".join(f"  {detail}" for detail in details)
    noun = "problem" if len(details) == 1 else "problems"
    return ValidationError(
        f"invalid input to {where}, nothing was changed: {len(details)} {noun}\n{lines}", details
    )
