"""The one way in for "a sequence of messages": every entry point that takes one reads it here.

`History` and `Snapshot`, the integrity functions,
sealing, ``trim_messages``, the codecs' ``encode``, the stores' ``append`` and ``replace`` and
the CLI all call `read_messages`, with the options in which they really differ: whether
any iterable will do or only a sequence, whether mappings are validated into messages or
refused, the `Limits` to check first, and whether the reserved blob mark is
refused. What they share is the error: one `ValidationError`, raised before
anything is used, listing every problem as an `ErrorDetail` whose
``path`` reads ``messages`` (the whole input), ``messages[3]`` (an item) or
``messages[3].parts[0].text`` (a field of a mapping), and whose ``type`` is ``messages_type``,
``message_type`` or pydantic's kind of the field's problem.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from datetime import datetime
from datetime import timezone
from typing import TypeAlias

import pydantic

from threadline._blob_marks import blob_mark_errors
from threadline._message_fields import FROM_DATA
from threadline._validation import invalid
from threadline._validation import translate_errors
from threadline.errors import ErrorDetail
from threadline.errors import ValidationError
from threadline.limits import THREADLINE_LAYOUT
from threadline.limits import Limits
from threadline.limits import enforce_limits
from threadline.messages import Message

__all__ = [
    "Clock",
    "clock_for",
    "history_input",
    "leading_messages",
    "read_message",
    "read_messages",
]

Clock: TypeAlias = Callable[[], datetime]
"""Gives the time to stamp on messages, for a history created with ``timestamps=True``."""

# Things that iterate but are never a batch of messages: text, bytes, one message (a pydantic
# model iterates over its fields) and one mapping (over its keys).
_NOT_A_BATCH = (str, bytes, bytearray, memoryview, Mapping, Message)
_SEQUENCE = "a sequence of messages (a list, tuple or snapshot)"


def read_messages(
    messages: object,
    where: str,
    *,
    sequence: bool = False,
    mappings: bool = True,
    limits: Limits | None = None,
    mapping_limits: Limits | None = None,
    refuse_blob_marks: bool = False,
) -> list[Message]:
    """``messages`` as a new list of `Message`; raise listing every problem.

    Args:
        messages: what the caller passed.
        where: the entry point, for the message (``"History.extend"``, ``"verify"``).
        sequence: take only a sequence (a list, tuple or snapshot), not any iterable: for
            functions whose results name positions in the caller's list.
        mappings: validate mappings into messages; ``False`` refuses them (stores take
            ``Message`` objects only).
        limits: check the input against these first, before anything is validated.
        mapping_limits: without ``limits``, the limits to check when an item is not a
            ``Message`` (mappings from a client or a server's JSON, bounded before pydantic
            reads them).
        refuse_blob_marks: refuse a mapping carrying the ``threadline.blob`` metadata key,
            which only a store's blob references may hold.

    Raises:
        threadline.ValidationError: ``messages`` is not a batch of messages, or an item is
            not a valid message; nothing was used.
        threadline.LimitExceededError: the input exceeds the limits.
    """
    wanted = Sequence if sequence else Iterable
    if isinstance(messages, _NOT_A_BATCH) or not isinstance(messages, wanted):
        kind = _SEQUENCE if sequence else "an iterable of messages"
        got = _a(type(messages).__name__)
        detail = ErrorDetail(
            "messages",
            f"{where} takes {kind}, not {got}; {_batch_hint(messages)}",
            "messages_type",
        )
        raise ValidationError(detail.message, [detail])
    items = list(messages)
    exact = set(map(type, items)) <= {Message}  # the common case, checked at C speed
    if limits is None and not exact:
        limits = mapping_limits
    if limits is not None:
        enforce_limits(
            items, limits, what=where, layout=THREADLINE_LAYOUT, path="messages", depth=2
        )
    if exact:
        return items
    details: list[ErrorDetail] = []
    for index, item in enumerate(items):
        if not isinstance(item, Message):
            result = _read(item, f"messages[{index}]", where, mappings, refuse_blob_marks)
            if isinstance(result, Message):
                items[index] = result
            else:
                details.extend(result)
    if details:
        raise _invalid(where, details)
    return items


def history_input(
    messages: object, where: str, stamp: Clock | None, *, limits: Limits | None = None
) -> list[Message]:
    """What `History` and `Snapshot` take at the door:
    any iterable, mappings validated but never carrying the reserved blob mark; with
    ``stamp``, messages without ``created_at`` come back as copies carrying one time."""
    items = read_messages(messages, where, limits=limits, refuse_blob_marks=True)
    return _stamped(items, stamp) if stamp is not None and items else items


def read_message(item: object, path: str, where: str, *, stamp: Clock | None = None) -> Message:
    """One message given on its own (``History.append``), read as `history_input`
    reads each item; ``path`` names it in errors (``"message"``)."""
    result = _read(item, path, where, True, True)
    if isinstance(result, Message):
        return _stamped([result], stamp)[0] if stamp is not None else result
    raise _invalid(where, result)


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


def _read(
    item: object, path: str, where: str, mappings: bool, refuse_blob_marks: bool
) -> Message | list[ErrorDetail]:
    """``item`` as a Message, or the problems that stop it from being one."""
    if isinstance(item, Message):
        return item
    if not mappings or not isinstance(item, Mapping):
        fix = (
            "pass a Message (user_message(...), assistant_message(...) ...) or a mapping of its "
            "fields"
            if mappings
            else f"{where} takes Message objects: build them with user_message(...) etc., or "
            "read a mapping with Message.model_validate(...)"
        )
        got = _a(type(item).__name__)
        return [ErrorDetail(path, f"not a message (got {got}); {fix}", "message_type")]
    try:
        message = Message.model_validate(item, context=FROM_DATA)
    except pydantic.ValidationError as error:
        return list(translate_errors(error, "", prefix=path).errors)
    if refuse_blob_marks:
        return blob_mark_errors(message, path) or message
    return message


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


def _batch_hint(value: object) -> str:
    if isinstance(value, (Message, Mapping)):
        return "wrap a single message in a list"
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        return "use load_json for JSON text"
    if hasattr(value, "snapshot"):
        return "pass history.snapshot(), or call history.messages_for_model()"
    return "pass a list of messages"


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1] in "aeiouAEIOU" else f"a {noun}"


def _invalid(where: str, details: Sequence[ErrorDetail]) -> ValidationError:
    return invalid(f"{where}: invalid messages, nothing was changed", details)
