"""Package attributes imported on first access (PEP 562), so that importing a package does not
import its optional dependencies or heavy modules (private)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(
    package: str, lazy: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's module ``__getattr__`` and ``__dir__`` for the names in ``lazy`` (name ->
    the module defining it): the first access imports the module and keeps the value in the
    package's ``namespace`` (its ``globals()``), so later accesses do not come back here."""

    def __getattr__(name: str) -> Any:
        module = lazy.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *lazy})

    return __getattr__, __dir__
