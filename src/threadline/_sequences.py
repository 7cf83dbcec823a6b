"""The one way in for "a sequence of messages": every entry point that takes one reads it here.

:class:`~threadline.History` and :class:`~threadline.Snapshot`, the integrity functions,
sealing, ``trim_messages``, the codecs' ``encode``, the stores' ``append`` and ``replace`` and
the CLI all call :func:`read_messages`, with the options in which they really differ: whether
any iterable will do or only a sequence, whether mappings are validated into messages or
refused, the :class:`~threadline.Limits` to check first, and whether the reserved blob mark is
refused. What they share is the error: one :class:`~threadline.ValidationError`, raised before
anything is used, listing every problem as an :class:`~threadline.errors.ErrorDetail` whose
``path`` reads ``messages`` (the whole input), ``messages[3]`` (an item) or
``messages[3].parts[0].text`` (a field of a mapping), and whose ``type`` is ``messages_type``,
``message_type`` or pydantic's kind of the field's problem.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pydantic

from threadline._blob_marks import blob_mark_errors
from threadline._validation import translate_errors
from threadline.errors import ErrorDetail, ValidationError
from threadline.limits import THREADLINE_LAYOUT, Limits, enforce_limits
from threadline.messages import Message

__all__ = ["leading_messages", "read_message", "read_messages"]

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
    """``messages`` as a new list of :class:`Message`; raise listing every problem.

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


def read_message(item: object, path: str, where: str) -> Message:
    """One message given on its own (``History.append``): a mapping is validated, and may not
    carry the reserved blob mark; ``path`` names it in errors (``"message"``)."""
    result = _read(item, path, where, True, True)
    if isinstance(result, Message):
        return result
    raise _invalid(where, result)


def leading_messages(expected: object) -> tuple[Message, ...]:
    """``expected`` of :meth:`History.replace_prefix <threadline.History.replace_prefix>` as a
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
        message = Message.model_validate(item)
    except pydantic.ValidationError as error:
        return list(translate_errors(error, "", prefix=path).errors)
    if refuse_blob_marks:
        return blob_mark_errors(message, path) or message
    return message


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
    lines = "\n".join(f"  {detail}" for detail in details)
    noun = "problem" if len(details) == 1 else "problems"
    return ValidationError(
        f"{where}: invalid messages, nothing was changed: {len(details)} {noun}\n{lines}", details
    )
