"""Helpers for tests that need something outside the project (an SDK, a server).

Locally such a test skips when the thing is missing; with ``THREADLINE_REQUIRE_ALL=1`` (which
``.ci/run`` sets) it fails instead, so CI can never pass by skipping.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import NoReturn, TypeVar

import pytest

REQUIRE_ALL = os.environ.get("THREADLINE_REQUIRE_ALL") == "1"


def unavailable(reason: str) -> NoReturn:
    """Skip the current test, or fail it when everything is required."""
    if REQUIRE_ALL:
        pytest.fail(f"THREADLINE_REQUIRE_ALL=1 but {reason}", pytrace=False)
    pytest.skip(reason)


def require_module(name: str, hint: str | None = None) -> ModuleType:
    """Import ``name`` or skip (fail under THREADLINE_REQUIRE_ALL=1)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        unavailable(f"{name} is not installed ({hint or 'pip install -e .[test]'})")


_P = TypeVar("_P")


def part_as(kind: type[_P], part: object) -> _P:
    """``part``, checked to be a ``kind``: narrows a part union for the type checker."""
    assert isinstance(part, kind), f"expected a {kind.__name__}, got {part!r}"
    return part
