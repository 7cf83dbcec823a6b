"""A private 3-master Redis Cluster for the fault tests to crash a primary of.

Each node runs on a free loopback port (its cluster bus port, 10,000 above, free too) with its
data in a directory of its own, append-only persistence on (``appendfsync always``, as the
private single server of ``_servers.py``), so killing one disturbs no other test and never the
shared cluster (``THREADLINE_REDIS_CLUSTER_URL``). Locally a missing ``redis-server`` or
``redis-cli`` skips; under ``THREADLINE_REQUIRE_ALL=1`` it fails.
"""

from __future__ import annotations

import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.faults._servers import HANG_GUARD
from tests.support import require_module
from tests.support import unavailable

__all__ = ["PrivateRedisCluster", "private_redis_cluster"]

NODES = 3


def _free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _free_ports(count: int) -> list[int]:
    """``count`` ports that are free, with their cluster bus ports (10,000 above) free too."""
    ports: list[int] = []
    while len(ports) < count:
        port = random.randrange(20_000, 45_000)
        if port not in ports and _free(port) and _free(port + 10_000):
            ports.append(port)
    return ports


class PrivateRedisCluster:
    """Three redis-server primaries of this test's own, serving every slot between them."""

    def __init__(self, server: str, cli: str, directory: Path) -> None:
        self.server = server
        self.cli = cli
        self.directory = directory
        self.ports = _free_ports(NODES)
        self.url = f"redis://127.0.0.1:{self.ports[0]}/0"
        self.processes: list[subprocess.Popen[bytes] | None] = [None] * NODES

    def start(self) -> None:
        """Start every node and make them one cluster; wait until it serves every slot."""
        for node in range(NODES):
            self._launch(node)
        subprocess.run(
            [
                self.cli,
                "--cluster",
                "create",
                *(f"127.0.0.1:{port}" for port in self.ports),
                *("--cluster-replicas", "0", "--cluster-yes"),
            ],
            check=True,
            capture_output=True,
            timeout=HANG_GUARD,
        )
        self.wait_ok()

    def node_of(self, key: str) -> int:
        """Which node serves ``key``'s slot."""
        import redis

        with redis.Redis(port=self.ports[0]) as client:
            slot = int(client.cluster("keyslot", key))
            for start, end, primary, *_ in client.cluster("slots"):
                if start <= slot <= end:
                    return self.ports.index(int(primary[1]))
        raise AssertionError(f"no node serves slot {slot}")

    def kill(self, node: int) -> None:
        """SIGKILL one primary: no shutdown, no final flush; its slots go unserved."""
        process = self.processes[node]
        assert process is not None
        process.send_signal(signal.SIGKILL)
        process.wait(HANG_GUARD)

    def restart(self, node: int) -> None:
        """Start a killed primary again on its port and directory (its ``nodes.conf`` and its
        append-only file); wait until the cluster serves every slot again."""
        self._launch(node)
        self.wait_ok()

    def wait_ok(self) -> None:
        """Until every node says ``cluster_state:ok`` and sees no node failing."""
        import redis

        deadline = time.monotonic() + HANG_GUARD
        while True:
            if all(_healthy(redis, port) for port in self.ports):
                return
            assert time.monotonic() < deadline, f"the cluster did not heal: {self.logs()}"
            time.sleep(0.05)

    def stop(self) -> None:
        for node, process in enumerate(self.processes):
            if process is not None and process.poll() is None:
                self.kill(node)

    def logs(self) -> str:
        parts = []
        for port in self.ports:
            path = self.directory / str(port) / "redis.log"
            if path.exists():
                parts.append(f"--- {port}\n{path.read_text(errors='replace')[-1500:]}")
        return "\n".join(parts)

    def _launch(self, node: int) -> None:
        import redis

        port = self.ports[node]
        place = self.directory / str(port)
        place.mkdir(parents=True, exist_ok=True)
        self.processes[node] = process = subprocess.Popen(
            [
                self.server,
                *("--bind", "127.0.0.1", "--port", str(port), "--dir", str(place)),
                *("--logfile", "redis.log", "--cluster-enabled", "yes"),
                *("--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "1000"),
                *("--appendonly", "yes", "--appendfsync", "always", "--save", ""),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + HANG_GUARD
        with redis.Redis(port=port, socket_connect_timeout=1) as client:
            while True:
                try:
                    if client.ping():  # LOADING until the append-only file is read back
                        return
                except redis.RedisError:
                    pass
                assert process.poll() is None, f"redis-server exited: {self.logs()}"
                assert time.monotonic() < deadline, f"redis-server did not start: {self.logs()}"
                time.sleep(0.05)


def _healthy(redis: Any, port: int) -> bool:
    """The node at ``port`` serves every slot and sees no node failing."""
    try:
        with redis.Redis(port=port, socket_connect_timeout=1) as client:
            if client.cluster("info").get("cluster_state") != "ok":
                return False
            nodes = client.execute_command("CLUSTER NODES")
    except redis.RedisError:
        return False
    return all("fail" not in str(info.get("flags", "")) for info in nodes.values())


@pytest.fixture
def private_redis_cluster(tmp_path: Path) -> Iterator[PrivateRedisCluster]:
    require_module("redis", 'pip install "threadline[redis]"')
    if sys.platform == "win32":
        pytest.skip("the cluster fault tests SIGKILL a redis-server (POSIX)")
    server, cli = shutil.which("redis-server"), shutil.which("redis-cli")
    if server is None or cli is None:
        unavailable("redis-server or redis-cli is not installed (apt-get install redis-server)")
        raise AssertionError("unreachable")
    cluster = PrivateRedisCluster(server, cli, tmp_path)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
