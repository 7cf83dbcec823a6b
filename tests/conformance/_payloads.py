"""Editing payloads for judge tests: a valid payload with one value changed must be refused."""

from __future__ import annotations

import copy
from typing import Any
from typing import TypeVar

__all__ = ["changed"]

_Payload = TypeVar("_Payload")


def changed(payload: _Payload, path: tuple[Any, ...], value: Any) -> _Payload:
    """A deep copy of ``payload`` with the value at ``path`` replaced (``...`` deletes it)."""
    out = copy.deepcopy(payload)
    target: Any = out
    for key in path[:-1]:
        target = target[key]
    if value is ...:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return out
