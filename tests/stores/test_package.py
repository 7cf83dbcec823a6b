"""``threadline.stores``: its public names, and that importing it loads no optional dependency."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import types
from pathlib import Path

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


def test_stores_and_the_cli_import_no_private_name_of_a_public_module() -> None:
    # They are built on what a third-party store can use too (serialization.messages_from_json,
    # stores.jsonl.read_batch_lines...); private modules (threadline._x) are theirs to share.
    source = Path(stores.__file__).parent
    offenders = []
    for path in [*source.glob("*.py"), source.parent / "cli.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                private_module = any(p.startswith("_") for p in node.module.split("."))
                for alias in node.names:
                    private = alias.name.startswith("_") and not alias.name.startswith("__")
                    if private and not private_module:
                        offenders.append(f"{path.name}: from {node.module} import {alias.name}")
    assert offenders == []
