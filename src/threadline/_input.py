"""Messages from callers' input: a `Message` passes as it is, a mapping is validated.

What `History` and `Snapshot` take at the door. Every
problem is reported with its path (``messages[2].parts[0].arguments``) in one
`ValidationError`, raised before anything changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pydantic

from threadline._blob_marks import blob_mark_errors
from threadline._validation import translate_errors
from threadline.errors import ErrorDetail, ValidationError
from threadline.limits import THREADLINE_LAYOUT, Limits, enforce_limits
from threadline.messages import Message

__all__ = ["leading_messages", "validated", "validated_batch"]


def validated(item: object, path: str, where: str) -> Message:
    """``item`` as a message; raise naming ``where`` (the entry point) when it is not one."""
    result = _from_input(item, path)
    if isinstance(result, Message):
        return result
    raise _invalid(where, result)


def validated_batch(
    items: Iterable[object], where: str, *, limits: Limits | None = None
) -> list[Message]:
    """``items`` as a new list of messages, every mapping validated; raise listing all problems.

    With ``limits``, the items are checked against them first (sizes, counts, nesting).
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
    return out


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
        message = Message.model_validate(item)
    except pydantic.ValidationError as error:
        return list(translate_errors(error, "", prefix=path).errors)
    return blob_mark_errors(message, path) or message


def _invalid(where: str, details: Sequence[ErrorDetail]) -> ValidationError:
    lines = "\n".join(f"  {detail}" for detail in details)
    noun = "problem" if len(details) == 1 else "problems"
    return ValidationError(
        f"invalid input to {where}, nothing was changed: {len(details)} {noun}\n{lines}", details
    )
