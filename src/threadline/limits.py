"""Limits on input size and shape, so hostile or broken input costs little and fails cleanly.

History crosses trust boundaries: a browser sends it back, a file arrives truncated, a proxy hands
over a provider payload. [`Limits`][] bounds what one call will read: the input's size, how many
messages and parts it holds, how deep its JSON nests and how long one string may be. Every entry
point that reads outside data (``load_json``, ``History.restore``, the codecs' ``decode`` and
``decode_response``, the stream assembler) takes ``limits=``; ``None`` means [`Limits`][]
``()``, whose defaults are generous but safe. A server reading what a client sent passes
[`Limits.untrusted`][].

How the checks run, and why their cost is linear:

1. the size of JSON text is checked before anything is parsed;
2. text is parsed by pydantic-core's parser, which stops at [`DEPTH_CEILING`][] levels of
   nesting with an error instead of exhausting the stack (``json.loads`` raises
   ``RecursionError`` on ``[[[[...`` a few thousand levels deep);
3. messages and parts are counted where the [`Layout`][] of the document says they are;
4. one iterative walk (an explicit stack, never recursion, so nesting cannot overflow the
   interpreter's stack) visits every value once to check nesting and string lengths, and,
   for a document not given as text, estimates its JSON size from its strings and values.

[`enforce_limits`][] does all four before validation, on any JSON document;
[`enforce_message_limits`][] does 3 and 4 on messages already validated, visiting only the
fields that can nest (metadata, tool arguments, hook state...) and, when the text was long
enough to hold a string over ``max_string``, the string fields, which is how ``load_json``
stays nearly as fast as validation alone. That walk also refuses NaN and infinity, which
JSON has not but pydantic-core's parser reads. ``load_json`` first tries a validator that
makes the same checks as it reads (``docs/performance.md``, "Loading") and needs only 3.
When validation fails, ``load_json`` walks the text to report an exceeded limit ahead of
the bad fields.

Exceeding a limit raises [`LimitExceededError`][threadline.limits.LimitExceededError], a
[`ValidationError`][] that names the limit, its value, what the input holds and the JSON path where
it was crossed.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from threadline._bounded_json import CONTAINERS
from threadline._bounded_json import DEPTH_CEILING
from threadline._bounded_json import DEPTH_FLOOR
from threadline._bounded_json import FIELD_GETTERS
from threadline._bounded_json import SCALARS
from threadline._bounded_json import STRING_GETTERS
from threadline._bounded_json import Limits
from threadline._bounded_json import check_size
from threadline._bounded_json import exceeded
from threadline._bounded_json import is_container
from threadline._bounded_json import locate
from threadline._bounded_json import long_string
from threadline._bounded_json import long_string_error
from threadline._bounded_json import member_path
from threadline._bounded_json import not_finite_error
from threadline._bounded_json import parse_arguments
from threadline._bounded_json import parse_json
from threadline._bounded_json import parse_json_value
from threadline._bounded_json import parser_depth_error
from threadline._bounded_json import resolve_limits
from threadline._bounded_json import run_walk
from threadline._bounded_json import walk
from threadline._bounded_json import walk_fields
from threadline.errors import LimitExceededError
from threadline.messages import PART_TYPES
from threadline.messages import Message

__all__ = [
    "DEPTH_CEILING",
    "DEPTH_FLOOR",
    "THREADLINE_LAYOUT",
    "Layout",
    "LimitExceededError",
    "Limits",
    "check_size",
    "enforce_counts",
    "enforce_limits",
    "enforce_message_limits",
    "parse_arguments",
    "parse_json",
    "parse_json_value",
    "parser_depth_error",
    "resolve_limits",
]

# Messages and parts are walked through their fields that can hold JSON values.
walk_fields((Message, *PART_TYPES))


@dataclasses.dataclass(frozen=True, slots=True)
class Layout:
    """Where a document keeps its messages and their parts, so that they can be counted
    before anything is validated."""

    messages: str
    """The key of the message array in a top-level object; a top-level array is itself the
    message array."""
    parts: tuple[str, ...]
    """The keys of a message that hold its parts: each item of an array counts as a part, and
    any other present value (a string ``content``, say) as one part."""


THREADLINE_LAYOUT = Layout("messages", ("parts",))
"""The layout of threadline's own JSON: ``{"messages": [{"parts": [...]}]}`` or a bare list."""


def enforce_limits(
    data: Any,
    limits: Limits | None,
    *,
    what: str,
    layout: Layout | None = None,
    path: str = "",
    depth: int = 1,
) -> Any:
    """Check ``data`` against ``limits`` before it is validated; return it as a JSON document.

    JSON text (``str``, ``bytes``, ``bytearray``) is measured, then parsed; any other value is
    taken as a parsed document (mappings, lists, strings, numbers; ``Message`` objects too) and
    its size estimated. Then messages and parts are counted where ``layout`` says they are, and
    every value is visited once, without recursion, to check nesting and string lengths.

    Args:
        data: JSON text or a parsed document.
        limits: the limits (``None``: the defaults).
        what: the entry point, for the error message (``"load_json"``).
        layout: where the messages and parts are; without it nothing is counted.
        path: the JSON path of ``data`` itself, for error paths (``"messages"`` when ``data`` is
            a bare list of messages).
        depth: the nesting level of ``data`` itself (2 for a bare list of threadline messages,
            which counts as if it were inside an envelope).

    Returns:
        The parsed document (``data`` itself when it was not text).

    Raises:
        threadline.LimitExceededError: a limit is exceeded; it names the limit and the path.
        threadline.ValidationError: ``data`` is text but not valid JSON.
    """
    checked = resolve_limits(limits)
    if isinstance(data, (str, bytes, bytearray)):
        document = parse_json(data, checked, what=what)
        estimate = False
        strings = checked.max_string is not None and len(data) > checked.max_string
    else:
        document = data
        estimate = True
        strings = True
    if layout is not None:
        _check_layout_counts(document, checked, what, layout, path)
    walk(document, checked, what, path, depth, estimate_size=estimate, check_strings=strings)
    return document


def enforce_message_limits(
    messages: Sequence[Any],
    limits: Limits | None,
    *,
    what: str,
    path: str = "messages",
    check_strings: bool = True,
    check_fields: bool = True,
) -> None:
    """Check messages already built: how many messages and parts, and how deeply the JSON
    values inside them (metadata, tool arguments, hook state) nest.

    Only the fields that can hold JSON values are visited, so this costs a fraction of
    validation. Nesting counts as in the envelope ``dump_json`` writes (a message at depth 3,
    tool arguments at depth 6). Strings are checked inside those JSON values only.

    Args:
        messages: ``Message`` objects (or mappings of their fields).
        limits: the limits (``None``: the defaults).
        what: the entry point, for the error message.
        path: the JSON path of the list, for error paths.
        check_strings: ``False`` when no string can be longer than ``max_string`` anyway
            (the messages were read from a shorter text).
        check_fields: ``False`` when the string fields of the messages and parts (not the
            JSON values inside them) were checked against ``max_string`` already.

    Raises:
        threadline.LimitExceededError: a limit is exceeded; it names the limit and the path.
    """
    checked = resolve_limits(limits)
    _check_counts(messages, checked, what, THREADLINE_LAYOUT, path)
    _walk_messages(
        messages, checked, what, path, check_strings=check_strings, check_fields=check_fields
    )


def enforce_counts(
    messages: Iterable[Any], limits: Limits | None, *, what: str, path: str = "messages"
) -> None:
    """Check how many messages and parts ``messages`` hold (``Message`` objects or mappings).

    Args:
        messages: the messages, for example what a codec decoded.
        limits: the limits (``None``: the defaults).
        what: the entry point, for the error message.
        path: the JSON path of the list, for error paths.

    Raises:
        threadline.LimitExceededError: ``max_messages`` or ``max_parts`` is exceeded.
    """
    checked = resolve_limits(limits)
    items = messages if isinstance(messages, Sequence) else list(messages)
    _check_counts(items, checked, what, THREADLINE_LAYOUT, path)


# ---------------------------------------------------------------------------------------------
# Counting


def _check_layout_counts(
    document: Any, limits: Limits, what: str, layout: Layout, path: str
) -> None:
    if isinstance(document, (list, tuple)):
        _check_counts(document, limits, what, layout, path)
    elif isinstance(document, Mapping):
        messages = document.get(layout.messages)
        if isinstance(messages, (list, tuple)):
            _check_counts(messages, limits, what, layout, member_path(path, layout.messages))


def _check_counts(
    messages: Sequence[Any], limits: Limits, what: str, layout: Layout, path: str
) -> None:
    maximum = limits.max_messages
    if maximum is not None and len(messages) > maximum:
        raise exceeded(
            what,
            "max_messages",
            maximum,
            len(messages),
            f"{path}[{maximum}]",
            f"the input holds {len(messages):,} messages",
        )
    maximum = limits.max_parts
    if maximum is None:
        return
    total = 0
    crossed = ""
    for index, message in enumerate(messages):
        if type(message) is Message:
            count = len(message.parts)
            if not crossed and total + count > maximum:
                crossed = f"{path}[{index}].parts[{maximum - total}]"
            total += count
            continue
        for key, count in _parts_of(message, layout):
            if not crossed and total + count > maximum:
                crossed = f"{path}[{index}].{key}[{maximum - total}]"
            total += count
    if crossed:
        raise exceeded(
            what, "max_parts", maximum, total, crossed, f"the messages hold {total:,} parts"
        )


def _parts_of(message: Any, layout: Layout) -> Iterable[tuple[str, int]]:
    if isinstance(message, Mapping):
        for key in layout.parts:
            value = message.get(key)
            if isinstance(value, (list, tuple)):
                yield key, len(value)
            elif value is not None:
                yield key, 1
    elif isinstance(message, Message):
        yield "parts", len(message.parts)


# ---------------------------------------------------------------------------------------------
# The walk


def _walk_messages(
    messages: Sequence[Any],
    limits: Limits,
    what: str,
    path: str,
    *,
    check_strings: bool,
    check_fields: bool = True,
) -> None:
    """`walk` for a list of messages at depth 2, faster: the walk starts right at the
    JSON values inside messages and parts (most are empty), instead of going through every
    message, parts tuple and part on the stack. The string fields of messages and parts are
    gathered in the same pass (one read of each message and part) and checked first."""
    containers: list[Any] = []
    depths: list[int] = []
    maximum = limits.max_string if check_strings and check_fields else None
    strings: list[Any] = []
    gather = strings.extend
    string_getters = STRING_GETTERS
    of_message = string_getters[Message]
    not_finite: tuple[Any, Any] | None = None
    # Last message first onto the stack, so that the first problem in the list is found.
    for message in reversed(messages):
        if type(message) is Message:
            if maximum is not None:
                gather(of_message(message))
            for part in reversed(message.parts):
                kind = type(part)
                if maximum is not None:
                    getter = string_getters.get(kind)
                    if getter is not None:
                        gather(getter(part))
                for item in FIELD_GETTERS[kind][1](part):
                    kind = type(item)
                    if kind in CONTAINERS:
                        if item:
                            containers.append(item)
                            depths.append(6)
                    elif kind is float:
                        if not math.isfinite(item):
                            not_finite = (part, item)
                    elif kind is not str and kind not in SCALARS and is_container(item):
                        containers.append(item)
                        depths.append(6)
            if message.metadata:
                containers.append(message.metadata)
                depths.append(4)
        else:
            containers.append(message)
            depths.append(3)
    if maximum is not None and max(map(len, filter(None, strings)), default=0) > maximum // 4 * 3:
        _find_long_string(messages, maximum, limits, what, path)
    if not_finite is not None:
        part, item = not_finite
        raise not_finite_error(what, item, locate(messages, path, 2, part, None))
    origin = (messages, path, 2)
    # Depths 4 and 6 never exceed max_depth, which is at least DEPTH_FLOOR.
    run_walk(
        containers,
        depths,
        limits,
        what,
        origin,
        estimate_size=False,
        check_strings=check_strings,
        finite_floats=True,
    )


def _find_long_string(
    messages: Sequence[Any], maximum: int, limits: Limits, what: str, path: str
) -> None:
    """Raise for the first string field of a message or part longer than ``maximum``, if any
    (file bytes count as base64, a third longer); a tool result's content is checked by the
    walk, which checks the string fields of any part it reaches."""
    for index, message in enumerate(messages):
        if type(message) is not Message:  # a mapping: the walk checks all of its strings
            continue
        found = long_string(message, maximum)
        if found is not None:
            raise long_string_error(what, limits, f"{path}[{index}]", found)
        for number, part in enumerate(message.parts):
            found = long_string(part, maximum)
            if found is not None:
                raise long_string_error(what, limits, f"{path}[{index}].parts[{number}]", found)
