"""The stores and the kits stay in modules a reader can hold in their head.

Issue 20 set the bound at ~800 lines for any module but a codec's format module; this file
holds ``threadline.stores`` and ``threadline.testing`` to it. The Postgres stores keep their
machinery in private modules (``_postgres_pool``, ``_postgres_sql``) that never import the
public one, so the driver check in ``threadline.stores.postgres`` runs before either.
"""

from __future__ import annotations

import ast
from pathlib import Path

import threadline

SRC = Path(threadline.__file__).parent
MOST_LINES = 800


def test_every_store_and_kit_module_is_at_most_800_lines() -> None:
    paths = sorted([*(SRC / "stores").glob("*.py"), *(SRC / "testing").glob("*.py")])
    assert paths
    lengths = {
        path.relative_to(SRC).as_posix(): len(path.read_text("utf-8").splitlines())
        for path in paths
    }
    over = {name: lines for name, lines in lengths.items() if lines > MOST_LINES}
    assert not over, f"split these modules (lines): {over}"


def test_the_postgres_machinery_never_imports_the_public_module() -> None:
    for name in ("_postgres_pool.py", "_postgres_sql.py"):
        tree = ast.parse((SRC / "stores" / name).read_text("utf-8"))
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)} | {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        }
        assert "threadline.stores.postgres" not in imported, name
        assert "threadline.stores" not in imported, name  # whose __getattr__ loads it
