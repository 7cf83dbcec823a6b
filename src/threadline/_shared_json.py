"""JSON shared between results, read-only all the way down (private).

``encode`` builds each tool's adapted JSON Schema once and puts that one object into every
body it returns (an agent loop sends the same tools every turn). So that no caller changes
the next body, the schema and every dict and list inside it are `SharedDict` / `SharedList`:
``dict`` / ``list`` subclasses (``isinstance``, ``==``, ``json.dumps`` and pydantic-core's
serializer take them as they are) whose every mutating method raises ``TypeError`` naming
the fix. A copy is the way to change one: ``copy.copy``, ``copy.deepcopy`` and ``pickle``
give plain ``dict`` s and ``list`` s (a shallow copy still holds the shared values inside).

Unlike `threadline._json.FrozenJsonMap` (metadata: read-only at the top only, and copied as
itself), this is read-only at every depth and copies to plain, mutable data.
"""

from __future__ import annotations

import copy
import threading
from typing import Any
from typing import NoReturn

__all__ = ["SharedDict", "SharedList", "share"]

_HINT = (
    "tool schemas and the turns History.encode keeps are shared by every request and "
    "read-only; copy it first: copy.deepcopy(...) gives plain dicts and lists you may change"
)


def _refuse(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(f"cannot change a {type(self).__name__}: {_HINT}")


_BUILDING = threading.local()
"""The ids of the shared objects ``__new__`` just built, whose ``__init__`` comes next."""


def _built(value: object) -> object:
    building: set[int] = getattr(_BUILDING, "ids", None) or set()
    _BUILDING.ids = building
    building.add(id(value))
    return value


def _init(self: object, *args: object, **kwargs: object) -> None:
    """``__init__``: nothing right after ``__new__`` built the object (a new, read-only one:
    pydantic rebuilds a validated ``Sequence`` as ``type(value)(items)``); a change otherwise."""
    building: set[int] = getattr(_BUILDING, "ids", None) or set()
    if id(self) not in building:
        _refuse(self)
    building.discard(id(self))


class SharedDict(dict[str, Any]):
    """A read-only ``dict`` shared between results; copies are plain ``dict`` s.
    ``SharedDict(mapping)`` builds a new one."""

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> SharedDict:
        value = dict.__new__(cls)
        dict.__init__(value, *args, **kwargs)
        return _built(value)  # type: ignore[return-value]

    def __repr__(self) -> str:
        return dict.__repr__(self)

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return {key: copy.deepcopy(value, memo) for key, value in self.items()}

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self),))


class SharedList(list[Any]):
    """A read-only ``list`` shared between results; copies are plain ``list`` s.
    ``SharedList(iterable)`` builds a new one (as pydantic does to rebuild a ``Sequence``)."""

    __slots__ = ()

    def __new__(cls, *args: Any) -> SharedList:
        value = list.__new__(cls)
        list.__init__(value, *args)
        return _built(value)  # type: ignore[return-value]

    def __repr__(self) -> str:
        return list.__repr__(self)

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(value, memo) for value in self]

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))


for _name in (
    "__setitem__",
    "__delitem__",
    "__ior__",
    "clear",
    "pop",
    "popitem",
    "setdefault",
    "update",
):
    setattr(SharedDict, _name, _refuse)
for _name in (
    "__setitem__",
    "__delitem__",
    "__iadd__",
    "__imul__",
    "append",
    "clear",
    "extend",
    "insert",
    "pop",
    "remove",
    "reverse",
    "sort",
):
    setattr(SharedList, _name, _refuse)
del _name
SharedDict.__init__ = _init  # type: ignore[method-assign,assignment]
SharedList.__init__ = _init  # type: ignore[method-assign]


def share(value: Any) -> Any:
    """``value`` (JSON data: dicts, lists, scalars) with every dict and list, at any depth,
    made a `SharedDict` / `SharedList`; scalars as they are."""
    if isinstance(value, dict):
        return _share_dict(value)
    if isinstance(value, list):
        return _share_list(value)
    return value


_CONTAINERS = (dict, list)
_SCALARS = frozenset({str, int, float, bool, type(None)})
_new_dict = dict.__new__
_fill_dict = dict.update
_set_item = dict.__setitem__
_new_list = list.__new__
_fill_list = list.extend


def _share_dict(value: dict[Any, Any]) -> SharedDict:
    # a C copy of the dict, then only the values that are containers replaced: a body is
    # mostly strings, and a Python call per scalar was most of the walk's cost
    shared: SharedDict = _new_dict(SharedDict)
    _fill_dict(shared, value if type(value) is dict else value.items())
    for key, item in value.items():
        if type(item) in _SCALARS:
            continue
        if isinstance(item, dict):
            _set_item(shared, key, _share_dict(item))
        elif isinstance(item, list):
            _set_item(shared, key, _share_list(item))
    return shared


def _share_list(value: list[Any]) -> SharedList:
    items: SharedList = _new_list(SharedList)
    _fill_list(
        items,
        [
            item
            if not isinstance(item, _CONTAINERS)
            else _share_dict(item)
            if isinstance(item, dict)
            else _share_list(item)
            for item in value
        ],
    )
    return items
