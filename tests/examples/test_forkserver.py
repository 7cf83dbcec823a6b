"""The fork server runs a script as ``python script.py`` would (``_forkserver``): the docs
blocks' verdicts depend on it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.examples._forkserver import ForkServer
from tests.examples._forkserver import Result


@pytest.fixture(scope="module")
def server() -> Iterator[ForkServer]:
    forks = ForkServer(dict(os.environ))
    yield forks
    forks.close()


def run(server: ForkServer, tmp_path: Path, code: str, timeout: float = 60) -> Result:
    script = tmp_path / "script.py"
    script.write_text(code, encoding="utf-8")
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    return server.run(script, cwd=tmp_path, outputs=outputs, timeout=timeout)


SCRIPT = """
import atexit, os, sys, threading, warnings
import threadline

def later():
    print("thread done")

atexit.register(print, "atexit ran")
threading.Thread(target=lambda: (__import__("time").sleep(0.2), later())).start()
print(__name__, sys.argv == [__file__], os.getcwd() == os.path.dirname(__file__))
print(sys.path[0] == os.path.dirname(__file__), repr(sys.stdin.read()))
print(sys.modules["__main__"].__file__ == __file__, end="")  # unflushed at exit
warnings.warn("shown, not raised")
print("to stderr", file=sys.stderr)
"""


def test_a_script_runs_as_python_would(server: ForkServer, tmp_path: Path) -> None:
    result = run(server, tmp_path, SCRIPT)
    expected = subprocess.run(
        [sys.executable, str(tmp_path / "script.py")],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.forked
    assert (result.returncode, result.stdout) == (expected.returncode, expected.stdout)
    assert result.stdout == "__main__ True True\nTrue ''\nTruethread done\natexit ran\n"
    assert "UserWarning: shown, not raised" in result.stderr
    assert result.stderr.endswith("to stderr\n")


@pytest.mark.parametrize(
    ("code", "status", "stderr"),
    [
        ("import sys; sys.exit(3)", 3, ""),
        ("raise SystemExit('bye')", 1, "bye\n"),
        ("raise ValueError('broken block')", 1, "ValueError: broken block\n"),
        ("import threadline; threadline.no_such_name", 1, "AttributeError"),
        ("def f(:\n    pass", 1, "SyntaxError"),
    ],
)
def test_failures_exit_as_python_would(
    server: ForkServer, tmp_path: Path, code: str, status: int, stderr: str
) -> None:
    result = run(server, tmp_path, code)
    assert result.returncode == status
    assert stderr in result.stderr


def test_a_hung_script_is_stopped(server: ForkServer, tmp_path: Path) -> None:
    result = run(server, tmp_path, "import time; time.sleep(60)", timeout=1)
    assert result.returncode != 0


def test_one_script_leaves_nothing_to_the_next(server: ForkServer, tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    assert run(server, first, "x = 1\nimport json\njson.marker = 1").returncode == 0
    result = run(server, second, "import json\nprint(hasattr(json, 'marker'), 'x' in globals())")
    assert result.stdout == "False False\n"
