"""Child process: the memory one library's loaded history retains, measured in a fresh interpreter.

``python bench/memory.py LIBRARY FILE MODE`` loads ``FILE`` (JSON written by that library) the
way the library's users do, drops the JSON bytes, collects garbage and prints one JSON object:
``{"retained": bytes}``. ``MODE`` is ``tracemalloc`` (Python allocations still alive, traced
from before the file is read) or ``rss`` (growth of the resident set, from ``/proc``).

Each library is imported and its loader warmed up on a tiny document first, so schemas and
caches built on first use are not counted as part of the history.
"""

from __future__ import annotations

import gc
import json
import sys
import tracemalloc
from collections.abc import Callable
from typing import Any


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        resident_pages = int(statm.read().split()[1])
    import os

    return resident_pages * os.sysconf("SC_PAGE_SIZE")


def _threadline_load_json(data: bytes) -> Any:
    """``load_json``; a file over the default ``max_bytes`` is trusted: ``Limits.none()``."""
    import threadline

    try:
        from threadline.limits import Limits
    except ImportError:  # a threadline without limits
        return threadline.load_json(data)
    maximum = Limits().max_bytes
    if maximum is None or len(data) <= maximum:
        return threadline.load_json(data)
    return threadline.load_json(data, limits=Limits.none())


def _loader(library: str) -> Callable[[bytes], Any]:
    if library == "threadline":
        import threadline

        # History.from_json(data), with the limits load_json needs for a large file.
        return lambda data: threadline.History(_threadline_load_json(data))
    if library == "threadline-list":
        return _threadline_load_json
    if library == "pydantic-ai":
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        return ModelMessagesTypeAdapter.validate_json
    if library == "langchain-core":
        from langchain_core.messages import messages_from_dict

        return lambda data: messages_from_dict(json.loads(data))
    raise SystemExit(f"unknown library {library!r}")


def _warm_up(library: str, load: Callable[[bytes], Any], path: str) -> None:
    with open(path, "rb") as file:
        data = file.read()
    if library.startswith("threadline"):
        document = json.loads(data)
        document["messages"] = document["messages"][:3]
    else:
        document = json.loads(data)[:3]
    load(json.dumps(document).encode())


def main() -> None:
    library, path, mode = sys.argv[1:4]
    load = _loader(library)
    _warm_up(library, load, path)
    gc.collect()
    if mode == "tracemalloc":
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
    else:
        before = _rss()
    with open(path, "rb") as file:
        data = file.read()
    history = load(data)
    del data
    gc.collect()
    after = tracemalloc.get_traced_memory()[0] if mode == "tracemalloc" else _rss()
    print(json.dumps({"retained": after - before, "kept": len(history)}))


if __name__ == "__main__":
    main()
