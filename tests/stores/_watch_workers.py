"""Child-process code for the watch tests (spawned, so importable and picklable)."""

from __future__ import annotations

import time
from typing import Any

import threadline as tl
from tests.stores._workers import open_any_store


def append_one_by_one(kind: str, location: str, count: int, start: Any) -> None:
    """Append ``count`` messages to ``"watched"``, one write each, a little apart."""
    store = open_any_store(kind, location)
    start.wait(120)
    for k in range(count):
        store.append("watched", [tl.user_message(f"m{k}", id=f"m{k}")])
        if k % 3 == 0:
            store.append("watched", [tl.user_message(f"m{k}b", id=f"m{k}b")])
        time.sleep(0.005)
    close = getattr(store, "close", None)
    if close is not None:
        close()
