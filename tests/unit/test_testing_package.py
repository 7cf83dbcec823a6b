"""``threadline.testing`` is a package over the errors and the stores, and nothing imports back.

The layering: ``threadline.errors`` imports no other threadline module; the stores import
``errors`` and never ``threadline.testing``; the kits in ``threadline.testing`` import both. The
import graph is read from the source (imports inside functions count, imports only for type
checking do not), so a lazy import that closes a cycle fails here too.
"""

from __future__ import annotations

import ast
import functools
import json
import subprocess
import sys
from pathlib import Path

import threadline
import threadline.testing
from threadline import errors

SRC = Path(threadline.__file__).parent
LAYERED = ("threadline.errors", "threadline.testing", "threadline.stores")
"""Modules (and packages, with everything in them) this file holds to the layering."""


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` outside ``if TYPE_CHECKING:`` blocks."""
    nodes: list[ast.AST] = []
    pending = [tree]
    while pending:
        node = pending.pop()
        nodes.append(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and ast.unparse(child.test) in (
                "TYPE_CHECKING",
                "typing.TYPE_CHECKING",
                "_typing.TYPE_CHECKING",
            ):
                pending.extend(child.orelse)
            else:
                pending.append(child)
    return nodes


def import_graph() -> dict[str, set[str]]:
    """Which threadline modules each threadline module imports when it runs."""
    return {name: set(imported) for name, imported in _read_import_graph().items()}


@functools.cache  # parsing every module is most of these tests' time; read the tree once
def _read_import_graph() -> dict[str, set[str]]:
    paths = {module_name(path): path for path in sorted(SRC.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        imported: set[str] = set()
        for node in runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{name}: use absolute imports"
                assert node.module is not None
                imported.add(node.module)
                imported.update(f"{node.module}.{alias.name}" for alias in node.names)
        graph[name] = {module for module in imported if module in paths and module != name}
    return graph


def in_layers(module: str) -> bool:
    return any(module == layer or module.startswith(f"{layer}.") for layer in LAYERED)


def reachable(graph: dict[str, set[str]], start: str) -> dict[str, list[str]]:
    """Each module ``start`` imports, directly or not, with one import path to it."""
    paths: dict[str, list[str]] = {}
    pending = [[start]]
    while pending:
        path = pending.pop()
        for module in sorted(graph[path[-1]]):
            if module not in paths:
                paths[module] = [*path, module]
                pending.append(paths[module])
    return paths


def test_the_graph_reader_sees_lazy_imports_and_skips_type_checking_ones() -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import a\nelse:\n    import b\n"
        "def f():\n    from c import d\n"
    )
    names = {
        alias.name
        for node in runtime_nodes(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {node.module for node in runtime_nodes(tree) if isinstance(node, ast.ImportFrom)}
    assert names == {"typing", "b", "c"}


def test_no_import_cycle_runs_through_errors_testing_or_stores() -> None:
    graph = import_graph()
    for module in sorted(filter(in_layers, graph)):
        cycle = reachable(graph, module).get(module)
        assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_errors_import_no_threadline_module() -> None:
    assert import_graph()["threadline.errors"] == set()


def test_stores_never_import_the_testing_kits() -> None:
    graph = import_graph()
    for module in sorted(name for name in graph if name.startswith("threadline.stores")):
        path = reachable(graph, module).get("threadline.testing")
        assert path is None, " -> ".join(path or [])


def test_testing_keeps_its_public_names() -> None:
    assert threadline.testing.__all__ == [
        "ConformanceError",
        "check_async_store",
        "check_async_watch",
        "check_codec",
        "check_store",
        "check_watch",
    ]
    assert threadline.testing.ConformanceError is errors.ConformanceError
    assert issubclass(errors.ConformanceError, AssertionError)
    assert not issubclass(errors.ConformanceError, errors.ThreadlineError)


def test_importing_threadline_or_its_stores_loads_no_kit() -> None:
    code = (
        "import sys, json, threadline, threadline.stores; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('threadline.testing'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(out.stdout) == []


def test_the_kits_conversations_hold_every_part_type() -> None:
    """A new part type in the ``Part`` union fails here until the kits' conversations hold it."""
    from threadline.messages import PART_BY_TAG
    from threadline.testing._conversations import sample_conversations

    seen = {
        part.type
        for history in sample_conversations(0, 50)
        for message in history
        for part in message.parts
    }
    assert seen == set(PART_BY_TAG)
