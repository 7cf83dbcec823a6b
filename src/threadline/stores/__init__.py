"""Where conversations persist: the store protocols and every store threadline ships.

Pick one (``docs/stores.md`` compares them):

- [`SQLiteStore`][threadline.SQLiteStore] — the embedded default: one file, WAL, safe across threads
  and processes.
- [`JsonlStore`][threadline.JsonlStore] — one append-only JSON Lines file per conversation;
  greppable.
- [`MemoryStore`][threadline.MemoryStore] — a dict, for tests and prototypes.

Large file bytes can live in a content-addressed blob store
([`FileBlobStore`][threadline.FileBlobStore], [`SQLiteBlobStore`][threadline.SQLiteBlobStore])
instead of the message JSON. Stores that need a server and an optional dependency load on first use,
so importing this package imports neither driver:

- [`RedisStore`][threadline.stores.RedisStore] /
  [`AsyncRedisStore`][threadline.stores.AsyncRedisStore] (``threadline[redis]``) and
  [`PostgresStore`][threadline.stores.PostgresStore] /
  [`AsyncPostgresStore`][threadline.stores.AsyncPostgresStore] (``threadline[postgres]``) — shared
  by many worker processes.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from threadline.stores._watch import Watch
from threadline.stores.base import (
    CONVERSATION_ID_PATTERN,
    AsyncStore,
    Store,
    validate_conversation_id,
)
from threadline.stores.blobs import BlobStore, FileBlobStore, SQLiteBlobStore
from threadline.stores.jsonl import JsonlStore
from threadline.stores.memory import MemoryStore
from threadline.stores.sqlite import SQLiteStore

if TYPE_CHECKING:
    from threadline.stores.postgres import AsyncPostgresStore, PostgresStore
    from threadline.stores.redis import AsyncRedisStore, RedisStore

__all__ = [
    "CONVERSATION_ID_PATTERN",
    "AsyncPostgresStore",
    "AsyncRedisStore",
    "AsyncStore",
    "BlobStore",
    "FileBlobStore",
    "JsonlStore",
    "MemoryStore",
    "PostgresStore",
    "RedisStore",
    "SQLiteBlobStore",
    "SQLiteStore",
    "Store",
    "Watch",
    "validate_conversation_id",
]

# Stores whose module imports an optional dependency: name -> module, imported on first access.
# (Redis and Postgres stores, and their async twins, register here.)
_LAZY: dict[str, str] = {
    "AsyncPostgresStore": "threadline.stores.postgres",
    "AsyncRedisStore": "threadline.stores.redis",
    "PostgresStore": "threadline.stores.postgres",
    "RedisStore": "threadline.stores.redis",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'threadline.stores' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
