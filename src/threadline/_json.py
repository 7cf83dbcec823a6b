"""JSON values inside messages: a read-only mapping type and the check that keeps them JSON.

Metadata, tool arguments and hook state must survive ``dump_json`` / ``load_json`` unchanged, so
only JSON values are accepted: ``None``, ``bool``, ``int``, finite ``float``, ``str``, lists and
``str``-keyed mappings of those. Tuples are accepted and stored as lists, because a tuple would
come back from JSON as a list and break round-trip equality.

Values read from JSON are JSON by construction, so the check runs only for Python input.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NoReturn, TypeAlias

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | Mapping[str, JsonValue] | None"
"""A value that JSON can hold."""

__all__ = [
    "EMPTY",
    "MAX_JSON_DEPTH",
    "FrozenJsonMap",
    "JsonValue",
    "check_json_value",
    "freeze_json_map",
]


def _readonly(self: FrozenJsonMap, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(
        f"{type(self).__name__} is read-only; use with_metadata(...) on the message or part "
        "to get a copy with changed keys"
    )


class FrozenJsonMap(dict[str, Any]):
    """A read-only ``str``-keyed mapping of JSON values.

    A ``dict`` subclass so that pydantic-core serializes it natively (no Python call per part) and
    ``json.dumps`` takes it as is; every mutating method raises ``TypeError``. Read-only is
    shallow: nested lists and mappings are plain JSON containers.
    """

    __slots__ = ()

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


EMPTY: FrozenJsonMap = FrozenJsonMap()
"""The one empty mapping every message and part without metadata shares."""


def freeze_json_map(value: Mapping[str, Any] | None) -> FrozenJsonMap:
    """Return ``value`` as a :class:`FrozenJsonMap` without checking it (callers have)."""
    if not value:
        return EMPTY
    if type(value) is FrozenJsonMap:
        return value
    return FrozenJsonMap(value)


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
"""The types of the copies :func:`_leaf` starts for containers (never of a scalar it returns)."""


def check_json_value(value: Any, path: str = "") -> Any:
    """Return ``value`` with tuples turned into lists; raise if it is not a JSON value.

    Containers are copied (so later changes to the caller's dicts and lists cannot reach a
    message). The walk uses an explicit stack, not recursion, so a hostile value nested
    100,000 levels deep fails validation instead of overflowing the interpreter's stack.

    Raises:
        pydantic_core.PydanticCustomError: naming the key path of the first non-JSON value, or of
            the first value nested deeper than :data:`MAX_JSON_DEPTH`.
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
        return str(value)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return _leaf(int(value), node, prefix)
    if isinstance(value, float):
        return _leaf(float(value), node, prefix)
    return _not_json(
        value, _path_text(prefix, node), "use None, bool, int, float, str, list or a str-keyed dict"
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
