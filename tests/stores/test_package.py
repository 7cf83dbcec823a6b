"""``threadline.stores``: its public names, and that importing it loads no optional dependency."""

from __future__ import annotations

import json
import subprocess
import sys
import types

import pytest

import threadline.stores as stores


def test_all_is_exactly_the_public_names() -> None:  # ruff (RUF022) keeps it sorted
    public = {
        name
        for name in dir(stores)
        if not name.startswith("_") and not isinstance(getattr(stores, name), types.ModuleType)
    } - {"annotations", "importlib", "Any", "TYPE_CHECKING"}
    assert len(stores.__all__) == len(set(stores.__all__))
    assert set(stores.__all__) == public


def test_importing_stores_imports_no_server_driver() -> None:
    code = (
        "import sys, json, threadline.stores; "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('redis', 'psycopg', 'psycopg2', 'asyncpg'))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(result.stdout) == []


def test_lazy_names_load_on_first_access(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(stores._LAZY, "SQLiteDatabase", "threadline.stores._sqlite")
    try:
        assert "SQLiteDatabase" in dir(stores)
        from threadline.stores._sqlite import SQLiteDatabase

        assert stores.SQLiteDatabase is SQLiteDatabase
    finally:
        vars(stores).pop("SQLiteDatabase", None)


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchStore'"):
        stores.NoSuchStore  # noqa: B018
