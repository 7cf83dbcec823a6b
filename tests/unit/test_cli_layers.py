"""The command line's structure: a small front (``threadline.cli``) over ``threadline._cli``,
whose modules import only the layers below them, and none of them large."""

from __future__ import annotations

import ast
from pathlib import Path

import threadline
from threadline import cli

SOURCE = Path(threadline.__file__).parent

# Each part of the command line and the parts it may import; `cli` is the front.
LAYERS = {
    "output": set(),
    "reading": {"output"},
    "render": {"output"},
    "stores": {"output", "reading"},
    "commands": {"output", "reading", "render", "stores"},
}


def cli_imports(path: Path) -> set[str]:
    """The ``threadline._cli`` modules (and ``cli`` itself) ``path`` imports at run time."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            if name.startswith("threadline._cli.") and name.count(".") == 2:
                found.add(name.rsplit(".", 1)[1])
            elif name == "threadline.cli":
                found.add("cli")
    return found


def test_every_part_imports_only_the_layers_below_it() -> None:
    parts = {path.stem for path in (SOURCE / "_cli").glob("*.py")} - {"__init__"}
    assert parts == set(LAYERS)
    for part, allowed in LAYERS.items():
        imported = cli_imports(SOURCE / "_cli" / f"{part}.py")
        assert imported <= allowed, f"_cli/{part}.py imports {sorted(imported - allowed)}"


def test_no_module_of_the_command_line_is_large() -> None:
    for path in [SOURCE / "cli.py", *sorted((SOURCE / "_cli").glob("*.py"))]:
        lines = len(path.read_text(encoding="utf-8").splitlines())
        assert lines <= 800, f"{path.name} has {lines} lines"


def test_the_front_still_offers_what_callers_read_from_it() -> None:
    for name in (
        "main",
        "build_parser",
        "CliError",
        "EXIT_OK",
        "EXIT_ISSUES",
        "EXIT_UNREADABLE",
        "Loaded",
        "load_history",
        "history_stats",
        "jsonable",
        "printable",
        "render_transcript",
        "Style",
        "use_colour",
    ):
        assert hasattr(cli, name), name
