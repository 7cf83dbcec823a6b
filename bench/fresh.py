"""Child process: workloads whose targets compare sizes, timed in a fresh interpreter.

``python bench/fresh.py WORKLOAD SIZE SAMPLES MIN_TIME`` builds the conversation of ``SIZE``
messages (threadline's types only), times the workload's candidates with the loop of
``timing.py`` and prints one JSON object:
``{candidate: {"median": s, "min": s, "samples": [...], "calls": n}}``. Workloads:

- ``untrusted``: ``load_json``, ``History.restore`` and two codecs' ``decode`` with limits,
  beside ``orjson.loads`` and ``pydantic_core.from_json`` of the same bytes (issue 13: 10x
  the input costs at most 12x the time). Every call gets the default limits without
  ``max_bytes``, the same at every size: the 100,000-message conversation (its images
  included) is larger than the default 64 MiB.
- ``append``: ``History.append`` + ``snapshot()`` beside ``list.append`` + ``list()``, and an
  append to a full ``History(max_tokens=...)`` (issue 11: the cost at 100,000 messages is at
  most 1.5x the cost at 100).

Why a child, as pyperf runs every benchmark in fresh worker processes: these targets compare
one workload across sizes, and in the main process every size's conversation of every library
stays alive, several GB of heap by 100,000 messages. That heap, not the code measured, slows
the largest size: measured there, ``load_json`` grew 17.2x from 10,000 to 100,000 messages
(``orjson.loads`` 11.7x) and an append cost 3.17x its cost at 100; here, 10.6x (``orjson.loads``
10.7x) and 1.29x.
"""

from __future__ import annotations

import dataclasses
import gc
import itertools
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data
import floors
from timing import Sampler
from timing import measure
from timing import timed

import threadline as tl
from threadline.codecs import get_codec
from threadline.limits import Limits
from threadline.tokens import estimate_tokens


def untrusted(size: int, samples: int, min_time: float) -> dict[str, Sampler]:
    messages = data.to_threadline(data.conversation(size))
    blob = tl.dump_json(messages)
    limits = dataclasses.replace(Limits(), max_bytes=None)
    mappings = json.loads(blob)["messages"]
    openai = get_codec("openai_chat")
    anthropic = get_codec("anthropic")
    openai_payload = json.loads(json.dumps(openai.encode(messages)))
    anthropic_payload = json.loads(json.dumps(anthropic.encode(messages)))
    del messages
    history = tl.History()
    candidates = {
        "load_json": timed(lambda: tl.load_json(blob, limits=limits), min_time),
        "restore": timed(lambda: history.restore(mappings, limits=limits), min_time),
        "openai_chat.decode": timed(lambda: openai.decode(openai_payload, limits=limits), min_time),
        "anthropic.decode": timed(
            lambda: anthropic.decode(anthropic_payload, limits=limits), min_time
        ),
        "orjson.loads": timed(lambda: floors.load_orjson(blob), min_time),
        "pydantic_core.from_json": timed(lambda: floors.load_pydantic_core(blob), min_time),
    }
    return candidates


def append_pool() -> list[tl.Message]:
    """Whole turns of another conversation, to append (they start with a user message)."""
    spec = data.conversation(1200, seed=data.SEED + 7)[1:]
    end = max(i for i, m in enumerate(spec) if m["role"] == "user")
    return data.to_threadline(spec[:end])


def append(size: int, samples: int, min_time: float) -> dict[str, Sampler]:
    """Per operation: 1,000 operations a sample (in rounds of 20 on a fresh history below
    10,000 messages, so the history keeps its size)."""
    base = data.to_threadline(data.conversation(size))
    pool = append_pool()
    ops = 20 if size < 10_000 else 1000
    rounds = max(1, 1000 // ops)
    items = list(itertools.islice(itertools.cycle(pool), ops))
    dicts = [m.model_dump() for m in base]
    item_dicts = [m.model_dump() for m in items]
    budget = sum(map(estimate_tokens, base))
    window_items = list(itertools.islice(itertools.cycle(pool), 1000))

    def history_sample() -> float:
        elapsed = 0.0
        for _ in range(rounds):
            history = tl.History(base)
            history.snapshot()
            gc.disable()
            start = time.perf_counter()
            for message in items:
                history.append(message)
                history.snapshot()
            elapsed += time.perf_counter() - start
            gc.enable()
        return elapsed / (rounds * len(items))

    def list_sample() -> float:
        elapsed = 0.0
        for _ in range(rounds):
            stored = list(dicts)
            gc.disable()
            start = time.perf_counter()
            for item in item_dicts:
                stored.append(item)
                list(stored)
            elapsed += time.perf_counter() - start
            gc.enable()
        return elapsed / (rounds * len(item_dicts))

    def window_sample() -> float:
        history = tl.History(base, max_tokens=budget)
        gc.disable()
        start = time.perf_counter()
        for message in window_items:
            history.append(message)
        elapsed = time.perf_counter() - start
        gc.enable()
        return elapsed / len(window_items)

    return {
        "threadline": history_sample,
        "list.append + list()": list_sample,
        "window append": window_sample,
    }


WORKLOADS: dict[str, Callable[[int, int, float], dict[str, Sampler]]] = {
    "untrusted": untrusted,
    "append": append,
}


if __name__ == "__main__":
    workload, size, samples, min_time = (
        sys.argv[1],
        int(sys.argv[2]),
        int(sys.argv[3]),
        float(sys.argv[4]),
    )
    candidates = WORKLOADS[workload](size, samples, min_time)
    stats = measure(candidates, samples)
    print(json.dumps({name: asdict(stat) for name, stat in stats.items()}))
