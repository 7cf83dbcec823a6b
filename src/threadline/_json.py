"""JSON values inside messages: a read-only mapping type and the check that keeps them JSON.

Metadata, tool arguments and hook state must survive ``dump_json`` / ``load_json`` unchanged, so
only JSON values are accepted: ``None``, ``bool``, ``int``, finite ``float``, ``str``, lists and
``str``-keyed mappings of those. Tuples are accepted and stored as lists, because a tuple would
come back from JSON as a list and break round-trip equality.

Values read from JSON are JSON by construction, so the check runs only for Python input.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, NoReturn, TypeAlias

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | Mapping[str, JsonValue] | None"
"""A value that JSON can hold."""

__all__ = ["EMPTY", "FrozenJsonMap", "JsonValue", "check_json_value", "freeze_json_map"]


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
        return core_schema.with_info_after_validator_function(
            _validated_map,
            core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema()),
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


def _validated_map(value: dict[str, Any], info: core_schema.ValidationInfo) -> FrozenJsonMap:
    if not value:
        return EMPTY
    if info.mode == "json":
        return FrozenJsonMap(value)
    return FrozenJsonMap(_check_object(value, ""))


def check_json_value(value: Any, path: str = "") -> Any:
    """Return ``value`` with tuples turned into lists; raise if it is not a JSON value.

    Raises:
        pydantic_core.PydanticCustomError: naming the key path of the first non-JSON value.
    """
    if value is None or value is True or value is False:
        return value
    kind = type(value)
    if kind is str or kind is int:
        return value
    if kind is float:
        if math.isfinite(value):
            return value
        _not_json(value, path, "JSON has no NaN or infinity")
    if isinstance(value, Mapping):
        return _check_object(value, path)
    if kind is list or kind is tuple:
        return _check_array(value, path)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return check_json_value(float(value), path)
    return _not_json(value, path, "use None, bool, int, float, str, list or a str-keyed dict")


def _check_object(value: Mapping[Any, Any], path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise PydanticCustomError(
                "json_key",
                "key {key!r} at {where} is not a string; JSON object keys are strings",
                {"key": repr(key), "where": path or "the top level"},
            )
        out[key] = check_json_value(item, f"{path}[{key!r}]")
    return out


def _check_array(value: Iterable[Any], path: str) -> list[Any]:
    return [check_json_value(item, f"{path}[{index}]") for index, item in enumerate(value)]


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


def _validated_any(value: Any, info: core_schema.ValidationInfo) -> Any:
    if info.mode == "json":
        return value
    return check_json_value(value)


class _JsonDataMarker:
    """Annotate a field ``Annotated[JsonValue, JSON_DATA]`` to accept any JSON value."""

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.with_info_after_validator_function(
            _validated_any, core_schema.any_schema()
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {}


JSON_DATA = _JsonDataMarker()
