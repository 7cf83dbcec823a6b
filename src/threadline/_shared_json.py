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
        shared = dict.__new__(SharedDict)
        dict.update(shared, ((key, share(item)) for key, item in value.items()))
        return shared
    if isinstance(value, list):
        items = list.__new__(SharedList)
        list.extend(items, (share(item) for item in value))
        return items
    return value
