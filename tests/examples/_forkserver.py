"""Run scripts as fresh interpreters would, at the cost of a fork: a warm interpreter forks a
child per script.

A docs block run by ``python block.py`` spends about half a second starting Python and
importing threadline and pydantic, and seconds more when it imports a framework (the Agents
SDK alone takes about three); the docs have over a hundred blocks. The server here imports
each module a script imports at its top level once, in itself, then forks a child per script:
the child starts with those modules loaded and otherwise as a new interpreter would run the
script (``__main__``, ``sys.argv``, ``sys.path[0]``, its own working directory, stdin from
``/dev/null``, stdout and stderr to files, default warning filters; at the end, thread joins,
``atexit`` and flushed streams as at interpreter exit, without tearing down the modules). What
a script sees that ``python script.py`` would not: its imports are already in ``sys.modules``,
and threadline has built what it builds on first use. A module whose import starts a thread
would make forking unsafe: the server then runs each script in a new interpreter instead, as it
does where there is no ``os.fork``.

Protocol: one JSON line per request on the server's stdin (``script``, ``cwd``, ``stdout``,
``stderr``, ``timeout``), one JSON line per answer (``returncode``, ``forked``).
"""

from __future__ import annotations

import ast
import atexit
import importlib
import json
import os
import runpy
import signal
import subprocess
import sys
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from typing import Any


@dataclass(frozen=True)
class Result:
    """What the script did, as ``subprocess.run(..., capture_output=True, text=True)`` says."""

    returncode: int
    stdout: str
    stderr: str
    forked: bool


class ForkServer:
    """A client of one server process; not thread-safe (one request at a time)."""

    def __init__(self, env: dict[str, str]) -> None:
        self._process = subprocess.Popen(
            [sys.executable, __file__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            bufsize=1,
        )

    def run(self, script: Path, cwd: Path, outputs: Path, timeout: float) -> Result:
        stdout, stderr = outputs / "stdout.txt", outputs / "stderr.txt"
        request = {
            "script": str(script),
            "cwd": str(cwd),
            "stdout": str(stdout),
            "stderr": str(stderr),
            "timeout": timeout,
        }
        pipe_in, pipe_out = self._pipes()
        pipe_in.write(json.dumps(request) + "\n")
        pipe_in.flush()
        line = pipe_out.readline()
        if not line:
            raise RuntimeError(f"the fork server died (exit status {self._process.wait()})")
        answer = json.loads(line)
        return Result(
            answer["returncode"],
            stdout.read_text(encoding="utf-8", errors="replace"),
            stderr.read_text(encoding="utf-8", errors="replace"),
            answer["forked"],
        )

    def close(self) -> None:
        pipe_in, _ = self._pipes()
        pipe_in.close()
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()

    def _pipes(self) -> tuple[IO[str], IO[str]]:
        assert self._process.stdin is not None
        assert self._process.stdout is not None
        return self._process.stdin, self._process.stdout


# -- the server ---------------------------------------------------------------------------------


def _top_level_imports(source: str) -> list[str]:
    """The absolute modules a script imports outside functions and classes."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []  # the child reports it, as ``python`` would
    names: list[str] = []
    nodes: list[ast.stmt] = list(tree.body)
    while nodes:
        node = nodes.pop(0)
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
        elif isinstance(node, ast.If | ast.Try | ast.With):
            nodes.extend(
                child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt)
            )
    return names


def _warm(source: str) -> None:
    for name in _top_level_imports(source):
        if name in sys.modules:
            continue
        try:
            importlib.import_module(name)
        except BaseException:  # the child imports it again and reports the error
            continue
        if name.partition(".")[0] == "threadline":
            _warm_threadline()


def _warm_threadline() -> None:
    """Build what threadline builds on first use (validators, codec tables): tens of ms a
    script would pay again in every child."""
    import threadline as tl
    from threadline.codecs import codec_names

    messages = [
        tl.system_message("warm"),
        tl.user_message("warm"),
        tl.assistant_message(tl.tool_call_part("call_1", "f", {"a": 1})),
    ]
    ready = tl.History(messages).messages_for_model()
    tl.load_json(tl.dump_json(ready))
    for provider in codec_names():
        tl.encode(ready, provider=provider)


def _child(request: dict[str, Any]) -> None:
    """In the forked child: become ``python script`` and exit as it would."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, fd)
        os.close(target)
    os.chdir(request["cwd"])
    signal.alarm(max(1, int(request["timeout"])))  # a hung script dies as a timeout would
    script = request["script"]
    sys.argv = [script]
    code = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        if not isinstance(stop.code, int | None):
            print(stop.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
        code = 1
    # As the interpreter exits, less the teardown of every module, which costs a copy-on-write
    # of most of the server's memory (tenths of a second with the frameworks imported).
    threading._shutdown()  # type: ignore[attr-defined]  # joins non-daemon threads
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 120  # as Python does when it cannot flush stdout at exit
    os._exit(code)


def _fresh(request: dict[str, Any]) -> int:
    with open(request["stdout"], "wb") as out, open(request["stderr"], "wb") as err:
        try:
            return subprocess.run(
                [sys.executable, request["script"]],
                cwd=request["cwd"],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                timeout=request["timeout"],
                check=False,
            ).returncode
        except subprocess.TimeoutExpired:
            return -signal.SIGKILL


def serve() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        # As ``python script`` has it: the script's directory first (never this file's).
        sys.path[0] = os.path.dirname(request["script"])
        _warm(Path(request["script"]).read_text(encoding="utf-8"))
        forked = threading.active_count() == 1 and hasattr(os, "fork")
        if not forked:
            returncode = _fresh(request)
        else:
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _child(request)
            _, status = os.waitpid(pid, 0)
            returncode = os.waitstatus_to_exitcode(status)
        sys.stdout.write(json.dumps({"returncode": returncode, "forked": forked}) + "\n")
        sys.stdout.flush()
    sys.stdout.flush()
    os._exit(0)  # the client has closed the pipe: skip tearing down the imported modules


if __name__ == "__main__":
    serve()
