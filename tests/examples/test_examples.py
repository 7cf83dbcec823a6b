"""Every example script and every ```python block in the docs runs.

Each example runs in a fresh interpreter from a temporary directory (so files it writes land
there). Each docs block runs as a standalone script: a block that is not meant to run on its own
must not be tagged ``python`` (use ``text`` or ``pycon``). The blocks run in children forked
from one warm interpreter per test process (``_forkserver``: a new interpreter but for the
modules already imported; a fresh interpreter each would cost a minute of the quick tier).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.examples._forkserver import ForkServer

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
DOCS = sorted([*ROOT.joinpath("docs").rglob("*.md"), ROOT / "README.md"])
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
SERVER = re.compile(r"THREADLINE_(REDIS_URL|REDIS_CLUSTER_URL|POSTGRES_DSN)")
"""An example or block that names a server's address needs that server (the full tier)."""


def _needing_servers(code: str) -> tuple[pytest.MarkDecorator, ...]:
    return (pytest.mark.requires_server,) if SERVER.search(code) else ()


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def run_python(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def fork_server() -> Iterator[ForkServer]:
    server = ForkServer(_env())
    yield server
    server.close()


def docs_blocks() -> list[tuple[str, str]]:
    blocks = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            blocks.append((f"{path.relative_to(ROOT)}:{line}", match.group(1)))
    return blocks


@pytest.mark.parametrize(
    "script",
    [
        pytest.param(path, id=path.name, marks=_needing_servers(path.read_text(encoding="utf-8")))
        for path in EXAMPLES
    ],
)
def test_example_runs(script: Path, tmp_path: Path) -> None:
    result = run_python([str(script)], cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip(), "an example should show what it did"


@pytest.mark.parametrize(
    ("where", "code"),
    [
        pytest.param(where, code, id=where, marks=_needing_servers(code))
        for where, code in docs_blocks()
    ],
)
def test_docs_block_runs(where: str, code: str, tmp_path: Path, fork_server: ForkServer) -> None:
    script = tmp_path / "block.py"
    script.write_text(code, encoding="utf-8")
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    result = fork_server.run(script, cwd=tmp_path, outputs=outputs, timeout=300)
    assert result.returncode == 0, f"{where}\n{result.stdout}{result.stderr}"


def test_there_are_examples_and_docs_blocks() -> None:
    assert any(p.name == "agent_loop.py" for p in EXAMPLES)
    assert docs_blocks()


def test_the_agent_loop_leaves_nothing_behind(tmp_path: Path) -> None:
    # The README's first command runs it from the repository root: it must not litter it.
    result = run_python([str(ROOT / "examples" / "agent_loop.py")], cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_quickstart_leaves_a_file_its_last_line_shows(tmp_path: Path) -> None:
    # The tour ends on a command for the reader to type: it must name a file that is there.
    result = run_python([str(ROOT / "examples" / "quickstart.py")], cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    program, *args = shlex.split(result.stdout.splitlines()[-1])
    assert program == "threadline"
    assert args[0] == "show"
    assert (tmp_path / args[-1]).is_file()
    # ``python -m threadline`` is the same command as the installed ``threadline`` script.
    shown = run_python(["-m", "threadline", *args], cwd=tmp_path)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "Weather in Paris?" in shown.stdout
