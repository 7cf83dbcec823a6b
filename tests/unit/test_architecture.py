"""Structural promises: the import graph of ``src/threadline`` has no cycle, modules stay small.

The graph is read from the source (every module parsed with :mod:`ast`), so it holds whatever
runs: imports at the top of a module and imports inside functions alike. Only imports under
``if TYPE_CHECKING:`` are left out, since they never run. An import names the module it loads:
``from threadline.context import window`` is an edge to ``threadline.context.window``,
``from threadline.context import Plugin`` one to the package ``threadline.context``.

Cycles and long modules that predate these promises are listed below as known; those lists may
only shrink. A new cycle, a known one that grew, or a new module over the limit fails the test.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[2] / "src"
PACKAGE = "threadline"
MAX_LINES = 800

KNOWN_CYCLES: frozenset[frozenset[str]] = frozenset()
"""Import cycles that predate the test; each may lose modules or vanish, never grow (none are
left: the graph has no cycle)."""

KNOWN_LONG: frozenset[str] = frozenset()
"""Modules over ``MAX_LINES`` lines that predate the test (format codecs are exempt); none are
left."""

FORMAT_CODECS = frozenset(
    {"anthropic", "bedrock", "gemini", "mistral", "openai_chat", "openai_responses"}
)


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    found: dict[str, Path] = {}
    for path in sorted((SOURCE / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(SOURCE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements under ``node`` that can run: all but ``if TYPE_CHECKING:`` bodies
    (their ``else`` branch runs, so it is kept)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for branch in child.orelse:
                yield from _runtime_imports_of(branch)
            continue
        yield from _runtime_imports_of(child)


def _runtime_imports_of(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
    else:
        yield from _runtime_imports(node)


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports when it runs."""
    return {name: set(imported) for name, imported in _read_import_graph().items()}


@functools.cache  # parsing every module is most of these tests' time; read the tree once
def _read_import_graph() -> dict[str, set[str]]:
    known = modules()
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for statement in _runtime_imports(tree):
            if isinstance(statement, ast.Import):
                targets = [alias.name for alias in statement.names]
            else:
                base = statement.module or ""
                if statement.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - statement.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                    for alias in statement.names
                ]
            graph[name].update(target for target in targets if target in known)
        graph[name].discard(name)
    return graph


def cycles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: set[str] = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.add(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_sees_runtime_imports_only() -> None:
    graph = import_graph()
    assert "threadline.messages" in graph["threadline.history"]
    # ``threadline.__init__`` imports the package's front modules at its top.
    assert "threadline.history" in graph["threadline"]
    # Imports made only for the type checker are not edges.
    assert "threadline.history" not in graph["threadline.context.base"]


def test_a_cycle_is_found_even_through_a_function_level_import() -> None:
    tree = ast.parse("def later():\n    from threadline import history\n")
    assert [type(node).__name__ for node in _runtime_imports(tree)] == ["ImportFrom"]
    tree = ast.parse("if TYPE_CHECKING:\n    import threadline.history\nelse:\n    import json\n")
    assert [alias.name for node in _runtime_imports(tree) for alias in node.names] == ["json"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == {frozenset("abc")}


def test_history_and_context_do_not_import_each_other() -> None:
    graph = import_graph()
    context = {name for name in graph if name.startswith("threadline.context")}
    for name in context:
        assert "threadline.history" not in graph[name], name
    assert not graph["threadline.history"] & context


def test_the_import_graph_has_no_new_cycle() -> None:
    found = cycles(import_graph())
    new = {cycle for cycle in found if not any(cycle <= known for known in KNOWN_CYCLES)}
    assert not new, "import cycles: " + "; ".join(" <-> ".join(sorted(c)) for c in new)


def test_known_cycles_are_still_there() -> None:
    # When a known cycle is fixed, remove it from KNOWN_CYCLES so that it cannot come back.
    found = cycles(import_graph())
    gone = {known for known in KNOWN_CYCLES if not any(cycle <= known for cycle in found)}
    assert not gone, f"fixed, remove from KNOWN_CYCLES: {sorted(map(sorted, gone))}"


@pytest.mark.parametrize("name", sorted(modules()))
def test_modules_stay_short(name: str) -> None:
    parts = name.split(".")
    if parts[:2] == [PACKAGE, "codecs"] and parts[-1] in FORMAT_CODECS:
        return
    lines = len(modules()[name].read_text(encoding="utf-8").splitlines())
    if name in KNOWN_LONG:
        return
    assert lines <= MAX_LINES, f"{name} has {lines} lines (at most {MAX_LINES})"


def test_known_long_modules_are_still_long() -> None:
    known = modules()
    short = {
        name
        for name in KNOWN_LONG
        if len(known[name].read_text(encoding="utf-8").splitlines()) <= MAX_LINES
    }
    assert not short, f"now short, remove from KNOWN_LONG: {sorted(short)}"
