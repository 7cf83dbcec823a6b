"""How integrity is laid out: ``threadline.integrity`` is the contract, the machinery sits below it.

The scan and the passes (``_repair``) and the helpers of ``sanitize_untrusted`` (``_sanitize``)
never import the contract at run time, so the three modules form no import cycle; the public
classes and functions are defined in ``threadline.integrity`` itself.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import threadline
from threadline import integrity

PACKAGE = Path(threadline.__file__).parent
MACHINERY = ("_repair.py", "_sanitize.py")


def runtime_imports(path: Path) -> set[str]:
    """The modules ``path`` imports, leaving out imports under ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            node.body = []
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("name", MACHINERY)
def test_machinery_never_imports_the_contract(name: str) -> None:
    imported = runtime_imports(PACKAGE / name)
    assert "threadline.integrity" not in imported
    assert not any(module.startswith("threadline.integrity.") for module in imported)


def test_contract_imports_the_machinery() -> None:
    imported = runtime_imports(PACKAGE / "integrity.py")
    assert {"threadline._repair", "threadline._sanitize"} <= imported


def test_public_classes_and_functions_are_defined_in_the_contract() -> None:
    defined = [
        getattr(integrity, name)
        for name in integrity.__all__
        if inspect.isclass(getattr(integrity, name)) or inspect.isfunction(getattr(integrity, name))
    ]
    assert len(defined) == 8  # three report types, five functions
    for item in defined:
        assert item.__module__ == "threadline.integrity", item
