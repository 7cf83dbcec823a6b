"""JSON values inside messages: a read-only mapping type and the check that keeps them JSON.

Metadata, tool arguments and hook state must survive ``dump_json`` / ``load_json`` unchanged, so
only JSON values are accepted: ``None``, ``bool``, ``int``, finite ``float``, ``str``, lists and
``str``-keyed mappings of those. Tuples are accepted and stored as lists, because a tuple would
come back from JSON as a list and break round-trip equality.

Values read from JSON are JSON by construction, so the check runs only for Python input.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any
from typing import NoReturn
from typing import TypeAlias

from pydantic import GetCoreSchemaHandler
from pydantic import GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError
from pydantic_core import core_schema
from pydantic_core import from_json

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | Mapping[str, JsonValue] | None"
"""A value that JSON can hold."""

__all__ = [
    "EMPTY",
    "MAX_JSON_DEPTH",
    "FrozenJsonMap",
    "JsonValue",
    "check_json_value",
    "compact_text",
    "find_in_value",
    "find_not_unicode_in_text",
    "freeze_json_map",
    "is_json_data_schema",
    "is_json_map_schema",
    "json_map_schema",
    "json_value_schema",
    "lone_surrogate",
    "not_unicode",
]


_SURROGATE = re.compile("[\ud800-\udfff]")

NOT_UNICODE_HINT = (
    "which UTF-8 cannot encode, so it could be neither stored nor sealed; fix the text "
    "encoding of the client that sent it (a character outside the BMP is one code point, "
    "not two surrogates)"
)
"""The end of every error about a lone surrogate: why it is refused and what to fix."""


def lone_surrogate(text: str) -> int | None:
    """The index of the first surrogate code point (U+D800 to U+DFFF) in ``text``, or ``None``.

    In a Python ``str`` every surrogate is lone: JSON text's escaped pair (``"\\ud83e\\uddf5"``)
    is read as the one character it stands for, so only a broken escape or a lenient reader
    (``json.loads``, ``bytes.decode(..., "surrogateescape")``) leaves one. Such a string is not
    Unicode text: UTF-8 cannot encode it.
    """
    if text.isascii():
        return None
    found = _SURROGATE.search(text)
    return None if found is None else found.start()


def not_unicode(what: str, text: str, index: int) -> str:
    """The error message for ``text`` (described by ``what``) with a surrogate at ``index``."""
    return (
        f"{what} is not valid Unicode text: it holds a lone surrogate "
        f"({ascii(text[index])[1:-1]}) at index {index}, {NOT_UNICODE_HINT}"
    )


_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)", re.DOTALL)
_MARKERS = ("\ue000\uf8ff\ue000", "\uf8ff\ue000\uf8ff\ue001", "\ue001\uf8fe\ue001\uf8fe\ue002")


def find_not_unicode_in_text(text: str) -> tuple[str, str] | None:
    """Where JSON ``text`` holds a string that is not Unicode: ``(path, message)``, else None.

    Finds a lone surrogate written raw (a ``str`` can hold one) or as an escape without its
    pair (``"\\ud800"``), and names the string or key holding it by its JSON path from the
    top of the document (``["messages"][0]...`` as ``messages[0].parts[0].text``). For error
    paths only: it parses the text again.
    """
    raw = lone_surrogate(text)
    lone = _lone_escapes(text) if "\\ud" in text or "\\uD" in text else []
    if raw is None and not lone:
        return None
    marker = next((marker for marker in _MARKERS if marker not in text), None)
    found = None
    if marker is not None:
        cleaned = text
        for start, end in reversed(lone):
            cleaned = cleaned[:start] + marker + cleaned[end:]
        cleaned = _SURROGATE.sub(marker, cleaned)
        try:
            found = find_in_value(from_json(cleaned), marker)
        except ValueError:  # broken elsewhere too, or nested too deep to parse
            found = None
    what = "a string"
    if found is not None:
        path, is_key = found
        what = f"the key at {path}" if is_key else f"the string at {path}"
    else:
        path = ""
    escape = text[lone[0][0] : lone[0][1]] if lone else ascii(text[raw or 0])[1:-1]
    return path, (
        f"{what} is not valid Unicode text: it holds a lone surrogate ({escape}), "
        f"{NOT_UNICODE_HINT}"
    )


def _dotted(node: _PathNode) -> str:
    """A path as ``messages[0].parts[1].text``; a key that is not an identifier in brackets."""
    keys: list[str | int] = []
    while node is not None:
        node, key = node
        keys.append(key)
    path = ""
    for key in reversed(keys):
        if isinstance(key, int):
            path += f"[{key}]"
        elif key.isidentifier():
            path = f"{path}.{key}" if path else key
        else:
            shown = ascii(key) if len(key) <= 40 else ascii(key[:40])[:-1] + "...'"
            path += f"[{shown}]"
    return path


def _lone_escapes(text: str) -> list[tuple[int, int]]:
    """The spans of ``\\uXXXX`` escapes of a surrogate without its pair, in order."""
    spans: list[tuple[int, int]] = []
    high: tuple[int, int] | None = None
    for match in _ESCAPE.finditer(text):
        code = match.group(1)
        value = -1 if code is None else int(code, 16)
        if high is not None:
            paired = 0xDC00 <= value <= 0xDFFF and match.start() == high[1]
            if not paired:
                spans.append(high)
            high = None
            if paired:
                continue
        if 0xD800 <= value <= 0xDBFF:
            high = match.span()
        elif 0xDC00 <= value <= 0xDFFF:
            spans.append(match.span())
    if high is not None:
        spans.append(high)
    return spans


def find_in_value(value: Any, needle: str | None = None) -> tuple[str, bool] | None:
    """The JSON path of the first string or key in ``value`` that holds ``needle`` (or, for
    ``None``, a surrogate), and whether it is a key; ``None`` if there is none.

    Iterative, in document order; visits mappings, lists and tuples (a model dumped in
    Python mode), and stops at `MAX_JSON_DEPTH` levels.
    """

    def holds(text: str) -> bool:
        return needle in text if needle is not None else lone_surrogate(text) is not None

    stack: list[tuple[Any, _PathNode, int]] = [(value, None, 0)]
    while stack:
        item, node, depth = stack.pop()
        if isinstance(item, str):
            if holds(item):
                return _dotted(node), False
        elif depth < MAX_JSON_DEPTH and isinstance(item, Mapping):
            for key in item:
                if isinstance(key, str) and holds(key):
                    return _dotted(node), True
            stack.extend(
                (member, (node, key), depth + 1) for key, member in reversed(list(item.items()))
            )
        elif depth < MAX_JSON_DEPTH and isinstance(item, (list, tuple)):
            stack.extend(
                (member, (node, index), depth + 1)
                for index, member in reversed(list(enumerate(item)))
            )
    return None


def _readonly(self: FrozenJsonMap, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(
        f"{type(self).__name__} is read-only; use with_metadata(...) on the message or part "
        "to get a copy with changed keys"
    )


class FrozenJsonMap(dict[str, Any]):
    """A read-only ``str``-keyed mapping of JSON values.

    A ``dict`` subclass so that pydantic-core serializes it natively (no Python call per part) and
    ``json.dumps`` takes it as is; every mutating method raises ``TypeError``. Read-only is
    shallow: nested lists and mappings are plain JSON containers (copies nobody else holds
    when the map was validated), read-only by contract, which is what lets `compact_text`
    keep the map's JSON text in its one slot.
    """

    __slots__ = ("_compact",)

    _compact: str

    __setitem__ = _readonly
    __delitem__ = _readonly
    __ior__ = _readonly
    clear = _readonly
    pop = _readonly
    popitem = _readonly
    setdefault = _readonly
    update = _readonly

    def __repr__(self) -> str:
        return f"FrozenJsonMap({dict.__repr__(self)})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (freeze_json_map, (dict(self),))

    def __copy__(self) -> FrozenJsonMap:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenJsonMap:
        import copy

        return FrozenJsonMap(copy.deepcopy(dict(self), memo))

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items(), key=lambda kv: kv[0])))

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        mapping = core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema())
        # Two branches, so that reading JSON (where values are JSON by construction) costs one
        # plain call per mapping, without a ValidationInfo object or a mode check.
        return core_schema.json_or_python_schema(
            json_schema=core_schema.no_info_after_validator_function(_frozen, mapping),
            python_schema=core_schema.no_info_after_validator_function(_checked_map, mapping),
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {"type": "object", "additionalProperties": True}


_compact_json: Callable[[Any], str] = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":")
).encode


def compact_text(value: Mapping[str, Any], *, keep: bool = True) -> str:
    """``value`` as compact JSON text (no spaces, non-ASCII as is), as OpenAI-style APIs send
    tool-call arguments and the token estimate counts them.

    A `FrozenJsonMap` keeps its text once computed (``keep``): a tool call's arguments are
    written once per process, not once per ``encode``. ``keep=False`` (a measurement, done
    once per message anyway) uses a kept text but keeps none, so a history that is never
    encoded for such an API holds no second copy of its arguments. Any other mapping is
    written anew.
    """
    if type(value) is not FrozenJsonMap:
        return _compact_json(value)
    try:
        return value._compact
    except AttributeError:
        text = _compact_json(value)
        if keep:
            value._compact = text
        return text


EMPTY: FrozenJsonMap = FrozenJsonMap()
"""The one empty mapping every message and part without metadata shares."""


def freeze_json_map(value: Mapping[str, Any] | None) -> FrozenJsonMap:
    """Return ``value`` as a `FrozenJsonMap` without checking it (callers have)."""
    if not value:
        return EMPTY
    if type(value) is FrozenJsonMap:
        return value
    return FrozenJsonMap(value)


def json_value_schema(depth: int, max_depth: int, refs: dict[str, Any]) -> core_schema.CoreSchema:
    """A core schema (JSON input only) for a JSON value whose containers nest at ``depth``,
    that refuses what a JSON value inside a message may not hold: NaN and infinity (which
    pydantic-core's parser reads, as it reads ``1e999``) and containers nested deeper than
    ``max_depth``, all in pydantic-core, without a Python call.

    One definition per level, each level's containers holding the next, down to the level
    past ``max_depth``, which holds scalars only (an empty container nests too). ``refs``
    collects the definitions (by ref), to go into a ``definitions`` schema around the one
    that refers to them.
    """
    level = min(depth, max_depth + 1)
    ref = f"threadline-json-{level}"
    if ref not in refs:
        refs[ref] = {}  # claimed before the levels below are built
        # Tried in this order: a choice that fails costs an error (and a copy of the input
        # value), so the common string first, then the containers a failure would copy.
        choices: list[Any] = [core_schema.str_schema(strict=True)]
        if level <= max_depth:
            inner = json_value_schema(level + 1, max_depth, refs)
            choices.append(core_schema.dict_schema(core_schema.str_schema(), inner, strict=True))
            choices.append(core_schema.list_schema(inner, strict=True))
        choices.append(core_schema.int_schema(strict=True))
        choices.append(core_schema.float_schema(strict=True, allow_inf_nan=False))
        choices.append(core_schema.bool_schema(strict=True))
        # A custom error spares the union collecting its choices' errors: nobody reads them
        # (``load_json`` then takes its full path, which says what and where).
        union = core_schema.union_schema(
            choices,
            mode="left_to_right",
            custom_error_type="json_value",
            custom_error_message="not a JSON value a message may hold",
        )
        refs[ref] = core_schema.nullable_schema(union, ref=ref)
    return core_schema.definition_reference_schema(ref)


def json_map_schema(
    depth: int,
    max_depth: int,
    refs: dict[str, Any],
    freeze: Callable[[dict[str, Any]], FrozenJsonMap] | None = None,
) -> Any:
    """A core schema (JSON input only) for a read-only JSON map at ``depth``: what a
    ``FrozenJsonMap`` field reads from JSON, its values checked by `json_value_schema`.
    ``freeze`` turns the dict read into the map (it may refuse it); by default the empty
    map is the shared ``EMPTY``."""
    values = json_value_schema(depth + 1, max_depth, refs)
    mapping = core_schema.dict_schema(core_schema.str_schema(), values)
    return core_schema.no_info_after_validator_function(freeze or _frozen, mapping)


def is_json_map_schema(schema: Any) -> bool:
    """Whether a core schema is the one ``FrozenJsonMap`` builds (reading JSON)."""
    function = schema.get("json_schema", {}).get("function", {})
    return schema.get("type") == "json-or-python" and function.get("function") is _frozen


def is_json_data_schema(schema: Any) -> bool:
    """Whether a core schema is the one ``JSON_DATA`` builds (any JSON value)."""
    function = schema.get("python_schema", {}).get("function", {})
    return schema.get("type") == "json-or-python" and function.get("function") is check_json_value


def _frozen(value: dict[str, Any]) -> FrozenJsonMap:
    return FrozenJsonMap(value) if value else EMPTY


def _checked_map(value: dict[str, Any]) -> FrozenJsonMap:
    return FrozenJsonMap(check_json_value(value)) if value else EMPTY


MAX_JSON_DEPTH = 190
"""How deeply a JSON value inside a message (metadata, tool arguments, hook state) may nest.

Deeper values could not be read back: pydantic-core's JSON parser stops at 200 levels, and a
tool argument already sits 6 levels down in the envelope ``dump_json`` writes. Checking the
bound also keeps a self-referencing dict from looping."""

_COPIES = (dict, list)
"""The types of the copies `_leaf` starts for containers (never of a scalar it returns)."""


def check_json_value(value: Any, path: str = "") -> Any:
    """Return ``value`` with tuples turned into lists; raise if it is not a JSON value.

    Containers are copied (so later changes to the caller's dicts and lists cannot reach a
    message). The walk uses an explicit stack, not recursion, so a hostile value nested
    100,000 levels deep fails validation instead of overflowing the interpreter's stack.

    Raises:
        pydantic_core.PydanticCustomError: naming the key path of the first non-JSON value, or of
            the first value nested deeper than `MAX_JSON_DEPTH`.
    """
    root = _leaf(value, None, path)
    if type(root) not in _COPIES:
        return root
    # Each entry: (source container, its copy, its path node, its depth). A path node is
    # ``(parent node, key)``, turned into text only when there is an error to report.
    stack: list[tuple[Any, Any, _PathNode, int]] = [(value, root, None, 1)]
    while stack:
        source, target, node, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise PydanticCustomError(
                "json_depth",
                "value at {where} nests deeper than {limit} levels; JSON values inside messages "
                "may nest at most {limit} levels",
                {"where": _path_text(path, node) or "the top level", "limit": MAX_JSON_DEPTH},
            )
        if type(target) is dict:
            for key, item in source.items():
                if type(key) is not str:
                    if not isinstance(key, str):
                        raise PydanticCustomError(
                            "json_key",
                            "key {key} at {where} is not a string; JSON object keys are strings",
                            {"key": repr(key), "where": _path_text(path, node) or "the top level"},
                        )
                    key = str(key)
                if not key.isascii():
                    _check_text(key, node, path, key=True)
                converted = _leaf(item, (node, key), path)
                if type(converted) in _COPIES:
                    stack.append((item, converted, (node, key), depth + 1))
                target[key] = converted
        else:
            for index, item in enumerate(source):
                converted = _leaf(item, (node, index), path)
                if type(converted) in _COPIES:
                    stack.append((item, converted, (node, index), depth + 1))
                target.append(converted)
    return root


_PathNode: TypeAlias = "tuple[_PathNode, str | int] | None"


def _path_text(prefix: str, node: _PathNode) -> str:
    keys: list[str | int] = []
    while node is not None:
        node, key = node
        keys.append(key)
    steps = [f"[{key!r}]" for key in reversed(keys)]
    if len(steps) > 12:
        # A path through a hostile value can be hundreds of steps long.
        steps = [*steps[:6], f"[...{len(steps) - 10} more...]", *steps[-4:]]
    return prefix + "".join(steps)


_TOO_LONG = 10**4300
"""JSON parsers (pydantic-core's and, by default, Python's) read integers of at most 4,300
digits: a longer one would be written but never read back."""
_TOO_LONG_HINT = "an int of more than 4,300 digits, which JSON readers refuse to read back"


def _leaf(value: Any, node: _PathNode, prefix: str) -> Any:
    """``value`` as a JSON scalar, or for a mapping, list or tuple the empty ``dict`` or
    ``list`` its copy is walked into."""
    if value is None or value is True or value is False:
        return value
    kind = type(value)
    if kind is str:
        if not value.isascii():
            _check_text(value, node, prefix)
        return value
    if kind is int:
        if -_TOO_LONG < value < _TOO_LONG:
            return value
        _not_json(value, _path_text(prefix, node), _TOO_LONG_HINT)
    if kind is float:
        if math.isfinite(value):
            return value
        _not_json(value, _path_text(prefix, node), "JSON has no NaN or infinity")
    if kind is list or kind is tuple:
        return []
    if kind is dict or kind is FrozenJsonMap or isinstance(value, Mapping):
        return {}
    if isinstance(value, str):
        return _leaf(str(value), node, prefix)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return _leaf(int(value), node, prefix)
    if isinstance(value, float):
        return _leaf(float(value), node, prefix)
    return _not_json(
        value, _path_text(prefix, node), "use None, bool, int, float, str, list or a str-keyed dict"
    )


def _check_text(text: str, node: _PathNode, prefix: str, *, key: bool = False) -> None:
    index = lone_surrogate(text)
    if index is None:
        return
    where = _path_text(prefix, node)
    if key:
        shown = ascii(text) if len(text) <= 40 else ascii(text[:40])[:-1] + "...'"
        what = f"the key {shown} at {where or 'the top level'}"
    else:
        what = f"the string at {where}" if where else "the string"
    # Through the context: a key's braces must not be read as a placeholder.
    raise PydanticCustomError(
        "string_unicode", "{message}", {"message": not_unicode(what, text, index)}
    )


def _not_json(value: object, path: str, hint: str) -> NoReturn:
    raise PydanticCustomError(
        "json_value",
        "{where} is a {kind}, which is not a JSON value ({hint})",
        {
            "where": f"value at {path}" if path else "value",
            "kind": type(value).__name__,
            "hint": hint,
        },
    )


class _JsonDataMarker:
    """Annotate a field ``Annotated[JsonValue, JSON_DATA]`` to accept any JSON value."""

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.json_or_python_schema(
            json_schema=core_schema.any_schema(),
            python_schema=core_schema.no_info_after_validator_function(
                check_json_value, core_schema.any_schema()
            ),
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {}


JSON_DATA = _JsonDataMarker()
