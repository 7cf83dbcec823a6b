"""Two threadline source trees on the same workloads: is the second slower than the first?

    python bench/ab.py BEFORE/src AFTER/src [--size 3000] [--rounds 8] [--repeats 7]

For a refactoring's "no workload slower by more than 5%" (issue 20): each round runs one fresh
interpreter per tree, alternating which goes first, and each interpreter times every workload
``--repeats`` times in CPU time (``time.process_time``, so another job on a shared machine
costs less than in wall time); a timing loops the call enough times to last about 20 ms, so a
small ``--size`` is not timed against the clock's granularity. The table gives, per workload,
the fastest time of each tree over all rounds and their ratio. Both trees read the same
conversation, ``data.py``'s ``conversation(size)``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = """
import gc, json, sys, time
sys.path.insert(0, {here!r})
import data
import threadline as tl

size, repeats = {size}, {repeats}
messages = data.to_threadline(data.conversation(size))
defects = data.to_threadline(data.with_defects(data.conversation(size)))
text = tl.dump_json(messages)

def best(fn):
    # A sample loops the call enough times to last about 20 ms of CPU time, so a short
    # workload (a small --size) is not timed by one call against the clock's granularity.
    fn()  # warm-up: the first call may import a codec
    start = time.process_time()
    fn()
    loops = max(1, int(0.02 / max(time.process_time() - start, 1e-6)))
    fastest = float("inf")
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        start = time.process_time()
        for _ in range(loops):
            fn()
        fastest = min(fastest, (time.process_time() - start) / loops)
        gc.enable()
    return fastest

def append():
    history = tl.History()
    for message in messages:
        history.append(message)
        history.snapshot()

out = {{
    "dump_json": best(lambda: tl.dump_json(messages)),
    "load_json": best(lambda: tl.load_json(text)),
    "prepare_messages": best(lambda: tl.prepare_messages(messages)),
    "prepare_messages (defects)": best(lambda: tl.prepare_messages(defects)),
    "append + snapshot": best(append),
}}
for provider in (
    "openai_chat", "openai_responses", "anthropic", "gemini", "mistral", "bedrock", "ollama"
):
    out["encode " + provider] = best(lambda: tl.encode(messages, provider=provider))
for provider in ("anthropic", "bedrock"):  # the formats that take prompt-cache breakpoints
    out["encode " + provider + " cache=auto"] = best(
        lambda: tl.encode(messages, provider=provider, cache="auto")
    )
print(json.dumps(out))
"""


def run(tree: str, size: int, repeats: int) -> dict[str, float]:
    code = CHILD.format(here=str(HERE), size=size, repeats=repeats)
    env = {**os.environ, "PYTHONPATH": str(Path(tree).resolve())}
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    times: dict[str, float] = json.loads(done.stdout)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", help="the first tree's source directory (holds threadline/)")
    parser.add_argument("after", help="the second tree's source directory")
    parser.add_argument("--size", type=int, default=3000, help="messages in the conversation")
    parser.add_argument("--rounds", type=int, default=8, help="fresh interpreters per tree")
    parser.add_argument("--repeats", type=int, default=7, help="timings per workload")
    args = parser.parse_args(argv)
    fastest: dict[str, dict[str, float]] = {"before": {}, "after": {}}
    for round_ in range(args.rounds):
        order = ("before", "after") if round_ % 2 == 0 else ("after", "before")
        for which in order:
            times = run(getattr(args, which), args.size, args.repeats)
            for name, seconds in times.items():
                kept = fastest[which].get(name, float("inf"))
                fastest[which][name] = min(kept, seconds)
        print(f"round {round_ + 1} of {args.rounds}", file=sys.stderr)
    print(f"| workload ({args.size:,} messages) | before | after | after ÷ before |")
    print("|---|---:|---:|---:|")
    for name, before in fastest["before"].items():
        after = fastest["after"][name]
        print(f"| {name} | {before * 1e3:.2f} ms | {after * 1e3:.2f} ms | {after / before:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
