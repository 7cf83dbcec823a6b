"""Limits and the bounded reading of JSON: parsing text and walking values within limits.

The machinery behind `threadline.limits`, which is the public face (read its docstring
for how the checks run and why their cost is linear). This module knows no message type, so
`threadline.messages` can parse tool-argument text with it; the walk visits messages and
parts through the classes `walk_fields` registered (`threadline.limits` registers
``Message`` and every part type).
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import operator
import re
import types
import typing
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any

import pydantic_core

from threadline._json import FrozenJsonMap
from threadline._json import find_not_unicode_in_text
from threadline._json import lone_surrogate
from threadline._json import not_unicode
from threadline.errors import ErrorDetail
from threadline.errors import LimitExceededError
from threadline.errors import ValidationError

DEPTH_CEILING = 200
"""The deepest nesting any `Limits` may allow.

pydantic-core's JSON parser stops at about this depth, and recursive Python code (pydantic's
validators, `json.dumps`, `copy`) needs a few frames per level of a 1,000-frame
stack; so deeper JSON can neither be read nor safely processed.
"""

DEPTH_FLOOR = 8
"""The shallowest nesting any `Limits` may allow: threadline's own envelope nests 8
levels (envelope, messages, message, parts, a tool result, its content, a file in it, the
file's metadata), so anything less would refuse every history."""

_MIB = 1024 * 1024


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """How much one call may read. ``None`` turns a limit off (``max_depth`` has a ceiling).

    The defaults are generous but safe: any history an application writes fits, and no input
    can make a call run longer than linear time in the limits or overflow the stack. For
    input from a client, use `untrusted`; to change one limit, use
    ``dataclasses.replace(Limits.untrusted(), max_bytes=...)``.
    """

    max_bytes: int | None = 64 * _MIB
    """The size of the input: bytes of JSON text (UTF-8), or for a document given as Python
    values (a dict from a web framework, mappings for ``History.restore``) an estimate of its
    compact JSON text that never exceeds the real size. Default 64 MiB."""
    max_messages: int | None = 1_000_000
    """How many messages (for provider payloads: the messages a codec decoded). Default
    1,000,000."""
    max_parts: int | None = 4_000_000
    """How many parts all messages hold together, counted like ``max_messages``. Default
    4,000,000."""
    max_depth: int = 64
    """How deeply arrays and objects may nest, counting the outermost one as 1. A threadline
    envelope puts tool arguments and metadata at depth 6, so 64 leaves them 58 levels. At
    least `DEPTH_FLOOR` and at most `DEPTH_CEILING`. Default 64."""
    max_string: int | None = 32 * _MIB
    """The longest string (text, base64 file data, an object key), in characters. Default
    32 MiB: a file of about 24 MB as base64."""

    def __post_init__(self) -> None:
        for field in ("max_bytes", "max_messages", "max_parts", "max_string"):
            _check_limit(field, getattr(self, field), optional=True)
        _check_limit("max_depth", self.max_depth, optional=False)
        if self.max_depth > DEPTH_CEILING:
            raise ValueError(
                f"max_depth={self.max_depth} is above DEPTH_CEILING={DEPTH_CEILING}: deeper "
                "JSON can be neither parsed nor processed without exhausting the stack"
            )
        if self.max_depth < DEPTH_FLOOR:
            raise ValueError(
                f"max_depth={self.max_depth} is below DEPTH_FLOOR={DEPTH_FLOOR}: threadline's "
                "own JSON nests that deep (the metadata of a file in a tool result)"
            )

    @classmethod
    def untrusted(cls) -> Limits:
        """Limits for history a client sent: 8 MiB, 1,000 messages, 10,000 parts, depth 32,
        strings of 4 MiB (a file of about 3 MB as base64).

        Sized for one chat request to a web server: reading that much costs tens of
        milliseconds, not seconds.
        """
        return cls(
            max_bytes=8 * _MIB,
            max_messages=1_000,
            max_parts=10_000,
            max_depth=32,
            max_string=4 * _MIB,
        )

    @classmethod
    def none(cls) -> Limits:
        """No size or count limits, for trusted data only; nesting still stops at
        `DEPTH_CEILING`, beyond which nothing can read it safely."""
        return cls(
            max_bytes=None,
            max_messages=None,
            max_parts=None,
            max_depth=DEPTH_CEILING,
            max_string=None,
        )


def _check_limit(name: str, value: object, *, optional: bool) -> None:
    if value is None and optional:
        return
    if type(value) is not int or value < 1:
        allowed = "a positive int or None" if optional else "a positive int"
        raise ValueError(f"Limits.{name} must be {allowed}, not {value!r}")


_DEFAULT = Limits()


def resolve_limits(limits: Limits | None) -> Limits:
    """``limits``, or the default `Limits` for ``None``.

    Raises:
        TypeError: ``limits`` is not a `Limits`.
    """
    if limits is None:
        return _DEFAULT
    if not isinstance(limits, Limits):
        raise TypeError(
            f"limits must be a threadline.Limits or None, not {type(limits).__name__}; "
            "for example Limits(max_bytes=1_000_000) or Limits.untrusted()"
        )
    return limits


def check_size(data: str | bytes | bytearray, limits: Limits, *, what: str, path: str = "") -> None:
    """Check the size of JSON text against ``limits.max_bytes`` without copying it.

    Args:
        data: the JSON text; a ``str`` is measured as UTF-8.
        limits: the limits.
        what: the entry point, for the error message.
        path: the JSON path of the text (``""``: the whole input).

    Raises:
        threadline.LimitExceededError: the text is larger than ``max_bytes``.
    """
    maximum = limits.max_bytes
    if maximum is None:
        return
    if isinstance(data, str):
        # UTF-8 takes 1 to 4 bytes a character: most texts are decided without encoding.
        if len(data) <= maximum // 4:
            return
        size = len(data) if len(data) > maximum else len(data.encode("utf-8", "surrogatepass"))
    else:
        size = len(data)
    if size > maximum:
        raise exceeded(what, "max_bytes", maximum, size, path, f"the input is {size:,} bytes")


def parse_json(
    data: str | bytes | bytearray,
    limits: Limits,
    *,
    what: str,
    path: str = "",
    allow_inf_nan: bool = True,
) -> Any:
    """Parse JSON text after checking its size; nesting too deep to parse is a limit error.

    The parser reads ``NaN`` and ``Infinity`` unless ``allow_inf_nan`` is false: a reader that
    keeps values refuses them with their path.

    Args:
        data: the JSON text.
        limits: the limits.
        what: the entry point, for the error message.
        path: the JSON path of the text, for error paths (``""``: the whole input).

    Raises:
        threadline.LimitExceededError: the text is larger than ``max_bytes``, or nests deeper
            than `DEPTH_CEILING`.
        threadline.ValidationError: the text is not valid JSON.
    """
    check_size(data, limits, what=what, path=path)
    try:
        return pydantic_core.from_json(data, allow_inf_nan=allow_inf_nan)
    except TypeError:  # a str holding a lone surrogate, which the parser cannot read as UTF-8
        if not isinstance(data, str):
            raise
        raise _not_unicode_text(data, what) from None
    except ValueError as error:
        if "surrogate" in str(error) or "hex escape" in str(error):
            text = data if isinstance(data, str) else bytes(data).decode("utf-8", "replace")
            if find_not_unicode_in_text(text) is not None:
                raise _not_unicode_text(text, what) from None
        too_deep = parser_depth_error(str(error), limits, what=what, path=path)
        if too_deep is not None:
            raise too_deep from None
        problem = f"not valid JSON: {error}"
    where = f" at {path}" if path else ""
    detail = ErrorDetail(path, problem, "json_invalid")
    raise ValidationError(f"{what}{where}: {problem}", [detail]) from None


def parse_json_value(
    data: str | bytes | bytearray, limits: Limits | None, *, what: str, path: str, depth: int
) -> Any:
    """JSON text found inside a document (tool arguments a model emitted), parsed within
    ``limits`` as if the value it holds stood at ``depth`` in that document.

    The one parser for JSON text that becomes part of a message: its size, nesting and string
    lengths are checked as `enforce_limits` checks a document, and numbers JSON text
    cannot carry back (``NaN``, ``Infinity``, ``1e999``, which overflows to infinity) are
    refused, so that whatever it returns reloads under the same limits.

    Raises:
        threadline.LimitExceededError: a limit is exceeded; it names the limit and the path.
        threadline.ValidationError: the text is not JSON, or holds a number JSON cannot hold.
    """
    checked = resolve_limits(limits)
    value = parse_json(data, checked, what=what, path=path, allow_inf_nan=False)
    if type(value) is float and not math.isfinite(value):
        raise not_finite_error(what, value, path)
    strings = checked.max_string is not None and len(data) > checked.max_string
    if (
        type(data) is str
        and not strings
        and len(data) < _SHORT
        and depth + len(data) // 2 <= checked.max_depth
        and _EXPONENT.search(data) is None
    ):
        # Too short to nest past the limit (each level takes two brackets), and no number in
        # it can overflow to infinity: nothing for the walk to find.
        return value
    walk(
        value,
        checked,
        what,
        path,
        depth,
        estimate_size=False,
        check_strings=strings,
        finite_floats=True,
    )
    return value


_SHORT = 300
"""JSON text shorter than this cannot write a number past ``1.8e308`` without an exponent."""
_EXPONENT = re.compile(r"[0-9][eE]")

_ARGUMENTS_DEPTH = 6
"""Where tool arguments nest in the envelope ``dump_json`` writes (envelope, messages, message,
parts, part, arguments): their text is checked as if it stood there, so what is read
reloads."""

_OBJECT_START = re.compile(r"[ \t\n\r]*\{")


def parse_arguments(
    text: str,
    limits: Limits | None = None,
    *,
    what: str = "tool arguments",
    path: str = "arguments",
) -> dict[str, Any] | None:
    """Tool arguments a model emitted as JSON text: the object they hold, or ``None`` when the
    text holds no JSON object that threadline can keep (not JSON, an array, a number JSON
    cannot carry such as ``NaN`` or ``1e999``), which makes the call an invalid one.

    An object is parsed by `parse_json_value`, at the depth of tool arguments in a
    dumped history: one that exceeds ``limits`` is an error, not an invalid call, because
    the limits say what the caller is willing to read.

    Raises:
        threadline.LimitExceededError: the text holds an object that exceeds ``limits``
            (nests too deeply, even beyond what any parser reads), naming ``path``.
    """
    if _OBJECT_START.match(text) is None:
        return None  # cannot be an object: however deep, it is kept as text
    try:
        value = parse_json_value(text, limits, what=what, path=path, depth=_ARGUMENTS_DEPTH)
    except LimitExceededError:
        raise
    except ValidationError:
        return None
    return value if type(value) is dict else None


def _not_unicode_text(text: str, what: str) -> ValidationError:
    found = find_not_unicode_in_text(text)
    path, message = found if found is not None else ("", "the text is not valid Unicode")
    return ValidationError(f"{what}: {message}", [ErrorDetail(path, message, "string_unicode")])


def parser_depth_error(
    message: str, limits: Limits, *, what: str, path: str = ""
) -> LimitExceededError | None:
    """The limit error for a JSON parser error that says the text nests too deeply, else None.

    pydantic-core's parser (``from_json``, ``validate_json``) stops at its own depth ceiling
    with a "recursion limit exceeded" error: a ``max_depth`` problem, not bad JSON.
    """
    if "recursion limit exceeded" not in message:
        return None
    return exceeded(
        what,
        "max_depth",
        limits.max_depth,
        None,
        path,
        f"the JSON nests more than {DEPTH_CEILING} levels deep ({message})",
        hint="no Limits can read JSON nested this deeply",
    )


# ---------------------------------------------------------------------------------------------
# The walk


def walk(
    root: Any,
    limits: Limits,
    what: str,
    path: str,
    depth: int,
    *,
    estimate_size: bool,
    check_strings: bool,
    finite_floats: bool = False,
) -> None:
    """Visit every value under ``root`` once, deepest-first, with an explicit stack.

    ``root`` nests at ``depth``. Containers are JSON objects and arrays (any mapping, list or
    tuple) and ``Message`` and part objects, whose members are their fields that can hold
    JSON values. ``check_strings=False`` skips string lengths, for callers who know none can
    exceed ``max_string``; ``finite_floats`` refuses NaN and infinity (see `run_walk`).

    Depth is checked when a container is pushed, so empty containers need no push.
    Deepest-first matters beyond the stack: a self-referencing Python object hits
    ``max_depth`` after ``max_depth`` steps instead of being expanded breadth-first. The loop
    allocates next to nothing per value (two parallel stacks of containers and small ints; no
    paths): on a large history, allocations would set off the garbage collector's full
    collections, which cost more than the walk. A problem's path is searched for only once
    one is found.
    """
    if not is_container(root):
        _check_scalar(root, limits, what, path)
        return
    if depth > limits.max_depth:
        raise _depth_error(what, limits.max_depth, depth, path)
    run_walk(
        [root],
        [depth],
        limits,
        what,
        (root, path, depth),
        estimate_size=estimate_size,
        check_strings=check_strings,
        finite_floats=finite_floats,
    )


def run_walk(
    containers: list[Any],
    depths: list[int],
    limits: Limits,
    what: str,
    origin: tuple[Any, str, int],
    *,
    estimate_size: bool,
    check_strings: bool,
    finite_floats: bool = False,
) -> None:
    """The loop of `walk`, from the containers on the stack (each at its depth).

    ``origin`` is the ``(root, path, depth)`` a problem's path is searched from. With
    ``finite_floats``, NaN and infinity are refused: JSON has neither, but pydantic-core's
    parser reads them, so messages validated from JSON text can hold them in metadata,
    arguments or hook state, where they would not survive a round trip.
    """
    root, path, depth = origin
    max_depth = limits.max_depth
    strings = check_strings and limits.max_string is not None
    max_string = _UNLIMITED if limits.max_string is None or not strings else limits.max_string
    budget = limits.max_bytes if estimate_size else None
    # Python values (not read from JSON text, whose parser refuses them, nor built messages,
    # which validation checked) may hold strings that are not Unicode: refused here, before
    # anything is validated, with their path.
    check_text = estimate_size
    check_keys = strings or budget is not None or check_text
    size = 0
    while containers:
        value = containers.pop()
        inner = depths.pop() + 1
        size += 2
        kind = type(value)
        members: Iterable[tuple[Any, Any]]
        if kind is list or kind is tuple:
            members = enumerate(value)
        elif kind in FIELD_GETTERS:
            names, getter = FIELD_GETTERS[kind]
            members = zip(names, getter(value), strict=True)
            if strings:
                too_long = long_string(value, max_string)
                if too_long is not None:
                    where = locate(root, path, depth, value, None)
                    raise long_string_error(what, limits, where, too_long)
        elif kind is dict or kind is FrozenJsonMap or isinstance(value, Mapping):
            members = value.items()
            if check_keys:
                for key in value:
                    if type(key) is str:
                        if len(key) > max_string:
                            found = locate(root, path, depth, value, None)
                            raise _string_error(what, limits, key, found)
                        if check_text and not key.isascii():
                            _check_text(key, what, root, path, depth, value, None)
                        size += len(key) + 3
        else:
            members = enumerate(value)  # a list or tuple subclass
        for key, item in members:
            kind = type(item)
            if kind is str:
                if len(item) > max_string:
                    found = locate(root, path, depth, value, key)
                    raise _string_error(what, limits, item, found)
                if check_text and not item.isascii():
                    _check_text(item, what, root, path, depth, value, key)
                size += len(item) + 2
            elif kind in CONTAINERS:
                if inner > max_depth:  # an empty container nests too
                    found = locate(root, path, depth, value, key)
                    raise _depth_error(what, max_depth, inner, found)
                if item:
                    containers.append(item)
                    depths.append(inner)
                else:
                    size += 2
            elif kind in SCALARS:
                if finite_floats and kind is float and not math.isfinite(item):
                    raise not_finite_error(what, item, locate(root, path, depth, value, key))
                size += 1
            elif is_container(item):
                if inner > max_depth:
                    found = locate(root, path, depth, value, key)
                    raise _depth_error(what, max_depth, inner, found)
                containers.append(item)
                depths.append(inner)
            elif strings or budget is not None:
                size += _scalar_size(item, limits, what, root, path, depth, value, key)
        if budget is not None and size > budget:
            raise exceeded(
                what,
                "max_bytes",
                budget,
                size,
                locate(root, path, depth, value, None),
                f"the input is at least {size:,} bytes as JSON",
            )


_UNLIMITED = 1 << 62
SCALARS = frozenset({int, float, bool, type(None)})
CONTAINERS = frozenset({dict, list, tuple, FrozenJsonMap})
_SCALAR_ANNOTATIONS: frozenset[Any] = frozenset(
    {str, bytes, bool, int, float, type(None), datetime.datetime}
)


def _is_scalar_annotation(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return True
    if origin is typing.Annotated:
        return _is_scalar_annotation(typing.get_args(annotation)[0])
    if origin is typing.Union or origin is types.UnionType:
        return all(_is_scalar_annotation(arg) for arg in typing.get_args(annotation))
    return annotation in _SCALAR_ANNOTATIONS


def _json_fields(cls: type) -> tuple[str, ...]:
    """The fields of a message or part class that can hold containers (metadata, arguments,
    parts...), found from their annotations so that a new field is never missed."""
    fields: dict[str, Any] = cls.__pydantic_fields__  # type: ignore[attr-defined]
    return tuple(
        name
        for name, info in fields.items()
        if not _is_scalar_annotation(getattr(info, "annotation", Any))
    )


Getter = Callable[[Any], tuple[Any, ...]]


def _getter(names: tuple[str, ...]) -> Getter:
    if len(names) == 1:
        (name,) = names
        return lambda value: (getattr(value, name),)
    return operator.attrgetter(*names)


# Objects the walk visits through their fields, as registered by walk_fields: for each class,
# the names of its fields that can hold JSON values and a getter that returns them as a tuple;
# the same for the fields that hold strings, checked against max_string on built messages; and
# for gathering only (their lengths are measured together), a getter of the string fields in
# which a single field is read twice, which costs less than a Python function that wraps it in
# a tuple.
FIELD_GETTERS: dict[type, tuple[tuple[str, ...], Getter]] = {}
_STRINGS: dict[type, tuple[tuple[str, ...], Getter]] = {}
STRING_GETTERS: dict[type, Callable[[Any], Any]] = {}


def walk_fields(classes: Iterable[type]) -> None:
    """Make the walk visit objects of ``classes`` (pydantic models or dataclasses) through
    their fields, found from their annotations so that a new field is never missed: those that
    can hold containers (metadata, arguments, parts...) are walked, and those that hold text
    are checked against ``max_string``."""
    for cls in classes:
        names = _json_fields(cls)
        FIELD_GETTERS[cls] = (names, _getter(names))
        strings = _string_fields(cls)
        if strings:
            _STRINGS[cls] = (strings, _getter(strings))
            STRING_GETTERS[cls] = operator.attrgetter(
                *strings, *strings[:1] if len(strings) == 1 else ()
            )


def _string_fields(cls: type) -> tuple[str, ...]:
    """The fields of a message or part class that hold a string or bytes and nothing that
    nests (text, ids, names, signatures, file data)."""
    fields: dict[str, Any] = cls.__pydantic_fields__  # type: ignore[attr-defined]
    return tuple(
        name
        for name, info in fields.items()
        if _is_scalar_annotation(annotation := getattr(info, "annotation", Any))
        and _holds_text(annotation)
    )


def _holds_text(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _holds_text(typing.get_args(annotation)[0])
    if origin is typing.Union or origin is types.UnionType:
        return any(_holds_text(arg) for arg in typing.get_args(annotation))
    return annotation is str or annotation is bytes


def long_string(value: Any, maximum: int) -> tuple[str, int] | None:
    """The first string field of a built message or part longer than ``maximum``, and its
    length; file bytes count as the standard base64 text that JSON holds them as."""
    entry = _STRINGS.get(type(value))
    if entry is None:
        return None
    names, getter = entry
    for name, item in zip(names, getter(value), strict=True):
        kind = type(item)
        if kind is str:
            length = len(item)
        elif kind is bytes:
            length = (len(item) + 2) // 3 * 4
        else:
            continue
        if length > maximum:
            return name, length
    return None


def long_string_error(
    what: str, limits: Limits, path: str, found: tuple[str, int]
) -> LimitExceededError:
    name, length = found
    maximum = limits.max_string if limits.max_string is not None else 0
    return exceeded(
        what,
        "max_string",
        maximum,
        length,
        member_path(path, name),
        f"a string of {length:,} characters",
    )


def is_container(value: Any) -> bool:
    kind = type(value)
    return kind in CONTAINERS or kind in FIELD_GETTERS or isinstance(value, (Mapping, list, tuple))


def _scalar_size(
    item: Any, limits: Limits, what: str, root: Any, path: str, depth: int, parent: Any, key: Any
) -> int:
    """The size of a rare scalar: a ``str`` subclass, bytes (Bedrock keeps file bytes as
    bytes), or a value JSON has no type for (counted as the smallest JSON value)."""
    if isinstance(item, (str, bytes, bytearray)):
        if limits.max_string is not None and len(item) > limits.max_string:
            raise _string_error(what, limits, item, locate(root, path, depth, parent, key))
        return len(item) + 2
    return 1


def _check_scalar(value: Any, limits: Limits, what: str, path: str) -> None:
    if isinstance(value, (str, bytes, bytearray)):
        maximum = limits.max_string
        if maximum is not None and len(value) > maximum:
            raise _string_error(what, limits, value, path)


def _check_text(
    text: str, what: str, root: Any, path: str, depth: int, parent: Any, key: Any
) -> None:
    """Raise for ``text`` (a member of ``parent``, or with ``key=None`` one of its keys) if it
    holds a lone surrogate."""
    index = lone_surrogate(text)
    if index is None:
        return
    where = locate(root, path, depth, parent, key)
    if key is None:
        shown = ascii(text) if len(text) <= 40 else ascii(text[:40])[:-1] + "...'"
        subject = f"the key {shown} at {where or 'the top level'}"
    else:
        subject = f"the string at {where}"
    message = f"{what}: {not_unicode(subject, text, index)}"
    raise ValidationError(message, [ErrorDetail(where, message, "string_unicode")])


def _string_error(what: str, limits: Limits, value: Any, path: str) -> LimitExceededError:
    maximum = limits.max_string if limits.max_string is not None else 0
    length = len(value)
    return exceeded(what, "max_string", maximum, length, path, f"a string of {length:,} characters")


def not_finite_error(what: str, value: float, path: str) -> ValidationError:
    message = f"{what}: {value} at {path} is not a JSON value (JSON has no NaN or infinity)"
    return ValidationError(message, [ErrorDetail(path, message, "json_value")])


def _depth_error(what: str, maximum: int, depth: int, path: str) -> LimitExceededError:
    return exceeded(
        what,
        "max_depth",
        maximum,
        depth,
        path,
        f"the JSON nests {depth} levels deep here (or refers to itself)",
    )


def locate(root: Any, path: str, depth: int, container: Any, key: Any) -> str:
    """The JSON path of ``container`` (and of its member ``key``, if given) under ``root``.

    Runs only once a problem was found: a second walk that keeps the path of each container.
    """
    trails: list[tuple[Any, str, int]] = [(root, path, depth)]
    while trails:
        value, where, level = trails.pop()
        if value is container:
            return where if key is None else member_path(where, key)
        if level > DEPTH_CEILING + 1:
            continue  # a cycle: the container is found along a shorter path
        for member, item in _members(value):
            if is_container(item):
                trails.append((item, member_path(where, member), level + 1))
    return path


def _members(value: Any) -> Iterable[tuple[Any, Any]]:
    kind = type(value)
    if kind in FIELD_GETTERS:
        names, getter = FIELD_GETTERS[kind]
        return zip(names, getter(value), strict=True)
    if isinstance(value, Mapping):
        return value.items()
    return enumerate(value)


def member_path(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    text = str(key)
    if text.isidentifier():
        return f"{path}.{text}" if path else text
    shown = text if len(text) <= 40 else text[:40] + "..."
    return f"{path}[{shown!r}]"


def exceeded(
    what: str,
    limit: str,
    maximum: int,
    actual: int | None,
    path: str,
    detail: str,
    *,
    hint: str | None = None,
) -> LimitExceededError:
    where = f" at {path}" if path else ""
    if hint is None:
        hint = f"pass limits=Limits({limit}=...) with a larger value if this input is expected"
    return LimitExceededError(
        f"{what}: limit {limit}={maximum:,} exceeded{where}: {detail}; {hint}",
        limit=limit,
        maximum=maximum,
        actual=actual,
        path=path,
    )
