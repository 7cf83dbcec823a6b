"""Workload ``redis_cluster``: the Redis stores on a 3-master Redis Cluster against one node
(issue 40, item 6).

Starts its own servers on free loopback ports in a temporary directory (so nothing else's
traffic lands in the numbers): one ``redis-server`` and a 3-master cluster, both with
``appendonly yes`` (``appendfsync everysec``, Redis' default), and measures:

- **per operation**: wall time, client CPU and server CPU (the ``used_cpu_*`` of every node,
  summed) per call, and commands the servers ran per call, for ``append`` (one message),
  ``load`` (20 messages), ``version``, ``load_after``, ``fork`` (20 messages) and
  ``list_conversations`` (200 conversations), each ``RedisStore`` (``cluster=True`` on the
  cluster);
- **keys per shard** for 10,000 conversations of one message each (five keys each, and one
  index per bucket);
- **8 writer processes** on one conversation (each append with ``expected_version``, retried on
  a conflict) and on 8 conversations, and afterwards the stored messages counted against the
  acknowledged appends: nothing lost, nothing twice.

Run alone with ``python bench/redis_cluster.py [--quick]`` (markdown to stdout), or as the
``redis_cluster`` workload of ``bench/run.py``. Needs ``redis-server`` and ``redis-cli``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

__all__ = ["bench_redis_cluster", "main"]


def _free_port() -> int:
    while True:
        port = random.randrange(20_000, 45_000)
        ok = True
        for candidate in (port, port + 10_000):
            with socket.socket() as probe:
                try:
                    probe.bind(("127.0.0.1", candidate))
                except OSError:
                    ok = False
        if ok:
            return port


class Servers:
    """A private single node and a private 3-master cluster."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.processes: list[subprocess.Popen[bytes]] = []
        self.single = _free_port()
        self.cluster = [_free_port() for _ in range(3)]

    def start(self) -> None:
        import redis

        self._launch(self.single, cluster=False)
        for port in self.cluster:
            self._launch(port, cluster=True)
        for port in [self.single, *self.cluster]:
            with redis.Redis(port=port) as client:
                for _ in range(200):
                    try:
                        client.ping()
                        break
                    except redis.RedisError:
                        time.sleep(0.05)
        subprocess.run(
            [
                *("redis-cli", "--cluster", "create"),
                *(f"127.0.0.1:{p}" for p in self.cluster),
                *("--cluster-replicas", "0", "--cluster-yes"),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
        for _ in range(400):
            with redis.Redis(port=self.cluster[0]) as client:
                if client.cluster("info").get("cluster_state") == "ok":
                    return
            time.sleep(0.05)
        raise RuntimeError("the bench cluster did not reach cluster_state:ok")

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            process.wait(30)

    def url(self, clustered: bool) -> str:
        return f"redis://127.0.0.1:{self.cluster[0] if clustered else self.single}/0"

    def ports(self, clustered: bool) -> list[int]:
        return self.cluster if clustered else [self.single]

    def _launch(self, port: int, cluster: bool) -> None:
        place = self.root / str(port)
        place.mkdir()
        options = ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
        self.processes.append(
            subprocess.Popen(
                ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--dir", str(place)]
                + ["--appendonly", "yes", "--save", "", "--logfile", "redis.log"]
                + (options if cluster else []),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )


def _server_counters(ports: list[int]) -> tuple[float, int]:
    """Server CPU seconds and commands processed, summed over ``ports``."""
    import redis

    cpu, commands = 0.0, 0
    for port in ports:
        with redis.Redis(port=port) as client:
            info = client.info("cpu")
            cpu += float(info["used_cpu_user"]) + float(info["used_cpu_sys"])
            commands += int(client.info("stats")["total_commands_processed"])
    return cpu, commands


def _store(servers: Servers, clustered: bool, prefix: str) -> Any:
    from threadline.stores import RedisStore

    return RedisStore(servers.url(clustered), prefix=prefix, cluster=clustered)


def _operations(servers: Servers, clustered: bool, calls: int) -> dict[str, tuple[float, ...]]:
    """Per operation: (wall, client CPU, server CPU, server commands) per call."""
    import threadline as tl

    store = _store(servers, clustered, f"tlbench:{uuid.uuid4().hex[:12]}:")
    twenty = [tl.user_message(f"m{k}", id=f"base-{k}") for k in range(20)]
    store.append("base", twenty)
    for n in range(200):
        store.append(f"listed-{n}", [tl.user_message("x", id="x")])
    counter = iter(range(10**9))
    operations = {
        "append (1 message)": lambda: store.append(
            "appended", [tl.user_message("a", id=f"a{next(counter)}")]
        ),
        "load (20 messages)": lambda: store.load("base"),
        "version": lambda: store.version("base"),
        "load_after (nothing new)": lambda: store.load_after("base", 1),
        "fork (20 messages)": lambda: store.fork("base", f"fork-{next(counter)}"),
        "list_conversations (201)": store.list_conversations,
    }
    results: dict[str, tuple[float, ...]] = {}
    ports = servers.ports(clustered)
    for name, call in operations.items():
        count = max(20, calls // 10) if name.startswith("list") else calls
        call()
        cpu0, commands0 = _server_counters(ports)
        wall0, client0 = time.perf_counter(), time.process_time()
        for _ in range(count):
            call()
        wall, client = time.perf_counter() - wall0, time.process_time() - client0
        cpu1, commands1 = _server_counters(ports)
        # The counters' own INFO calls: 2 per node, not the operation's.
        commands = commands1 - commands0 - 2 * len(ports)
        results[name] = (wall / count, client / count, (cpu1 - cpu0) / count, commands / count)
    store.close()
    return results


def _keys_per_shard(servers: Servers, conversations: int) -> list[int]:
    import redis

    import threadline as tl

    prefix = f"tlbench:{uuid.uuid4().hex[:12]}:"
    store = _store(servers, True, prefix)
    for n in range(conversations):
        store.append(f"user-{n}", [tl.user_message("hi", id="m")])
    counts = []
    for port in servers.cluster:
        with redis.Redis(port=port) as client:
            counts.append(sum(1 for _ in client.scan_iter(match=f"{prefix}*", count=1000)))
    assert len(store.list_conversations()) == conversations
    store.close()
    return counts


def _writer(
    url: str, clustered: bool, prefix: str, conversation: str, seconds: float, start: Any, out: Any
) -> None:
    import threadline as tl
    from threadline.stores import RedisStore

    store = RedisStore(url, prefix=prefix, cluster=clustered)
    store.version(conversation)
    start.wait()
    deadline = time.perf_counter() + seconds
    done = conflicts = 0
    tag = uuid.uuid4().hex[:8]
    while time.perf_counter() < deadline:
        version = store.version(conversation)
        message = tl.user_message(f"{tag} {done}", id=f"{tag}-{done}")
        try:
            store.append(conversation, [message], expected_version=version)
        except tl.ConflictError:
            conflicts += 1
            continue
        done += 1
    store.close()
    out.put((done, conflicts))


def _writers(servers: Servers, clustered: bool, shared: bool, seconds: float) -> tuple[int, ...]:
    """(acknowledged, conflicts, stored) for 8 writer processes."""
    context = multiprocessing.get_context("spawn")
    start, out = context.Event(), context.Queue()
    prefix = f"tlbench:{uuid.uuid4().hex[:12]}:"
    url = servers.url(clustered)
    names = ["shared" if shared else f"own-{w}" for w in range(8)]
    workers = [
        context.Process(target=_writer, args=(url, clustered, prefix, n, seconds, start, out))
        for n in names
    ]
    for worker in workers:
        worker.start()
    time.sleep(1.5)  # every process imports and connects
    start.set()
    results = [out.get(timeout=seconds + 120) for _ in workers]
    for worker in workers:
        worker.join(60)
    store = _store(servers, clustered, prefix)
    stored = sum(len(store.load(name)) for name in set(names))
    store.close()
    return sum(r[0] for r in results), sum(r[1] for r in results), stored


def measure(quick: bool) -> dict[str, Any]:
    """Every measurement, on private servers started and stopped here."""
    if not (shutil.which("redis-server") and shutil.which("redis-cli")):
        raise RuntimeError("redis-server and redis-cli are needed (apt-get install redis-server)")
    calls, seconds = (300, 2.0) if quick else (2000, 3.0)
    with tempfile.TemporaryDirectory() as root:
        servers = Servers(Path(root))
        try:
            servers.start()
            return {
                "operations": {
                    "one node": _operations(servers, False, calls),
                    "cluster": _operations(servers, True, calls),
                },
                "shards": _keys_per_shard(servers, 10_000),
                "writers": {
                    (where, shared): _writers(servers, where == "cluster", shared, seconds)
                    for where in ("one node", "cluster")
                    for shared in (True, False)
                },
                "seconds": seconds,
            }
        finally:
            servers.stop()


def markdown(results: dict[str, Any]) -> str:
    lines = [
        "| operation | one node: wall / client CPU / server CPU (µs), commands "
        "| cluster: wall / client CPU / server CPU (µs), commands | client CPU ratio |",
        "|---|---|---|---|",
    ]
    single, cluster = results["operations"]["one node"], results["operations"]["cluster"]
    for name in single:
        a, b = single[name], cluster[name]

        def cell(v: tuple[float, ...]) -> str:
            return f"{v[0] * 1e6:,.0f} / {v[1] * 1e6:,.0f} / {v[2] * 1e6:,.0f}, {v[3]:.1f}"

        lines.append(f"| `{name}` | {cell(a)} | {cell(b)} | {b[1] / a[1]:.2f} |")
    shards = results["shards"]
    lines += [
        "",
        f"Keys per shard, 10,000 conversations: {', '.join(f'{c:,}' for c in shards)} "
        f"(max/min {max(shards) / min(shards):.3f}).",
        "",
        "| 8 writer processes | appends/s | conflicts retried | acknowledged | stored |",
        "|---|---|---|---|---|",
    ]
    for (where, shared), (done, conflicts, stored) in results["writers"].items():
        layout = "1 conversation" if shared else "8 conversations"
        rate = done / results["seconds"]
        lines.append(f"| {where}, {layout} | {rate:,.0f} | {conflicts:,} | {done:,} | {stored:,} |")
    return "\n".join(lines)


def bench_redis_cluster(report: Any, row: Any, quick: bool) -> None:
    """The rows of the ``redis_cluster`` workload; ``row`` is ``run.Row``."""
    from timing import Stat

    try:
        results = measure(quick)
    except (RuntimeError, subprocess.SubprocessError, OSError) as error:
        report.notes.append(f"redis_cluster: skipped ({error})")
        return
    for where, operations in results["operations"].items():
        for name, (wall, client, server, commands) in operations.items():
            stat = Stat(client, client, [client], 1, "cpu", [wall])
            note = f"server CPU {server * 1e6:,.0f} µs, {commands:.1f} commands per call"
            label = f"RedisStore {name}, {where}"
            report.rows.append(row(label, 1, "threadline", {"threadline": stat}, note=note))
    for (where, shared), (done, conflicts, stored) in results["writers"].items():
        per_second = done / results["seconds"]
        stat = Stat(1 / per_second if per_second else float("inf"), 0.0, [], done)
        stat.min = stat.median
        layout = "1 conversation" if shared else "8 conversations"
        note = (
            f"{per_second:,.0f} appends/s, {conflicts:,} conflicts, {done:,} acknowledged, "
            f"{stored:,} stored"
        )
        name = f"RedisStore appends, 8 processes, {layout}, {where}"
        report.rows.append(row(name, 8, "threadline", {"threadline": stat}, note=note))
    shards = results["shards"]
    report.notes.append(f"redis_cluster: keys per shard for 10,000 conversations: {shards}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls, 1 s of writers")
    args = parser.parse_args(argv)
    print(markdown(measure(args.quick)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
