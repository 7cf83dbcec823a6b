"""Private servers for the fault tests to crash: a ``redis-server`` and a PostgreSQL cluster.

Each runs on a free loopback port with its data in a directory of its own, so killing it
disturbs no other test and never the shared servers (``THREADLINE_REDIS_URL``,
``THREADLINE_POSTGRES_DSN``). Locally a missing server program skips; under
``THREADLINE_REQUIRE_ALL=1`` it fails.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import require_module
from tests.support import unavailable

__all__ = ["HANG_GUARD", "PrivatePostgres", "PrivateRedis", "private_postgres", "private_redis"]

HANG_GUARD = 120.0  # seconds: only against a deadlock, never a performance assertion


class PrivateRedis:
    """A redis-server of this test's own on a free loopback port, persisting every write."""

    def __init__(self, executable: str, directory: Path) -> None:
        self.executable = executable
        self.directory = directory
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        import redis

        self.process = subprocess.Popen(
            [
                self.executable,
                *("--bind", "127.0.0.1", "--port", str(self.port)),
                *("--dir", str(self.directory), "--logfile", "redis.log"),
                *("--appendonly", "yes", "--appendfsync", "always", "--save", ""),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis.from_url(self.url, socket_connect_timeout=1)
        deadline = time.monotonic() + HANG_GUARD
        try:
            while True:
                try:
                    if client.ping():  # LOADING until the append-only file is read back
                        return
                except redis.RedisError:
                    pass
                assert self.process.poll() is None, f"redis-server exited: {self.log()}"
                assert time.monotonic() < deadline, f"redis-server did not start: {self.log()}"
                time.sleep(0.05)
        finally:
            client.close()

    def kill(self) -> None:
        """SIGKILL: no shutdown, no final flush; clients see their connections drop."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(HANG_GUARD)

    def log(self) -> str:
        path = self.directory / "redis.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else "(no log)"


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    require_module("redis", 'pip install "threadline[redis]"')
    if sys.platform == "win32":
        pytest.skip("the restart tests SIGKILL a redis-server (POSIX)")
    executable = shutil.which("redis-server")
    if executable is None:
        unavailable("redis-server is not installed (apt-get install redis-server)")
        raise AssertionError("unreachable")
    server = PrivateRedis(executable, tmp_path)
    server.start()
    try:
        yield server
    finally:
        if server.process is not None and server.process.poll() is None:
            server.kill()


class PrivatePostgres:
    """A PostgreSQL cluster of this test's own, on a free loopback port, with trust auth."""

    def __init__(self, bindir: Path, directory: Path, as_owner: list[str]) -> None:
        self.bindir = bindir
        self.directory = directory
        self.as_owner = as_owner
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.dsn = f"postgresql://threadline@127.0.0.1:{self.port}/postgres"

    def run(self, program: str, *args: str) -> None:
        result = subprocess.run(
            [*self.as_owner, str(self.bindir / program), *args],
            capture_output=True,
            text=True,
            timeout=HANG_GUARD,
        )
        assert result.returncode == 0, f"{program} failed:\n{result.stdout}{result.stderr}"

    def init(self) -> None:
        data = str(self.directory / "data")
        self.run(
            "initdb", "-D", data, "-U", "threadline", "--auth=trust", "--no-sync", "-E", "UTF8"
        )

    def start(self) -> None:
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.directory} -c fsync=off"
        self.run(
            "pg_ctl", "-D", str(self.directory / "data"), "-l", str(self.directory / "log"),
            "-w", "-t", "60", "-o", options, "start",
        )  # fmt: skip

    def stop(self, mode: str) -> None:
        """``immediate`` is a crash: no checkpoint, clients cut off, WAL replayed on start."""
        self.run("pg_ctl", "-D", str(self.directory / "data"), "-m", mode, "-w", "stop")


@pytest.fixture
def private_postgres() -> Iterator[PrivatePostgres]:
    require_module("psycopg", 'pip install "threadline[postgres]"')
    if sys.platform == "win32":
        pytest.skip("the restart tests run a private cluster with POSIX tools")
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(Path(path).parts[-3]) if Path(path).parts[-3].isdigit() else 0,
    )
    found = candidates[-1] if candidates else shutil.which("initdb")
    if found is None:
        unavailable("PostgreSQL's initdb is not installed (apt-get install postgresql)")
        raise AssertionError("unreachable")
    as_owner: list[str] = []
    directory = Path(tempfile.mkdtemp(prefix="threadline-pg-"))
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root: run it as the postgres user
        import pwd

        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            unavailable("running as root and there is no postgres user to run a cluster as")
        os.chown(directory, owner.pw_uid, owner.pw_gid)
        as_owner = ["runuser", "-u", "postgres", "--"]
    server = PrivatePostgres(Path(found).parent, directory, as_owner)
    try:
        server.init()
        server.start()
        yield server
    finally:
        with contextlib.suppress(AssertionError):
            server.stop("immediate")
        shutil.rmtree(directory, ignore_errors=True)
