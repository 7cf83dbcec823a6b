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

Every store has an async twin ([`AsyncMemoryStore`][threadline.stores.AsyncMemoryStore],
[`AsyncJsonlStore`][threadline.stores.AsyncJsonlStore],
[`AsyncSQLiteStore`][threadline.stores.AsyncSQLiteStore], loaded on first use too), for
[`History.abind`][threadline.history.History.abind].
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from threadline._lazy import lazy_attributes as _lazy_attributes
from threadline.stores._appended import Appended
from threadline.stores._listing import ConversationInfo
from threadline.stores._watch import Watch
from threadline.stores.base import CONVERSATION_ID_PATTERN
from threadline.stores.base import AsyncStore
from threadline.stores.base import Store
from threadline.stores.base import validate_conversation_id
from threadline.stores.blobs import BlobStore
from threadline.stores.blobs import FileBlobStore
from threadline.stores.blobs import SQLiteBlobStore
from threadline.stores.jsonl import JsonlStore
from threadline.stores.memory import MemoryStore
from threadline.stores.sqlite import SQLiteStore

if TYPE_CHECKING:
    from threadline.stores.local_async import AsyncJsonlStore
    from threadline.stores.local_async import AsyncMemoryStore
    from threadline.stores.local_async import AsyncSQLiteStore
    from threadline.stores.postgres import AsyncPostgresStore
    from threadline.stores.postgres import PostgresStore
    from threadline.stores.redis import AsyncRedisStore
    from threadline.stores.redis import RedisStore

__all__ = [
    "CONVERSATION_ID_PATTERN",
    "Appended",
    "AsyncJsonlStore",
    "AsyncMemoryStore",
    "AsyncPostgresStore",
    "AsyncRedisStore",
    "AsyncSQLiteStore",
    "AsyncStore",
    "BlobStore",
    "ConversationInfo",
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

# Stores loaded on first access: name -> module. The Redis and Postgres stores (and their async
# twins) import an optional dependency; the async twins of the local stores, asyncio's executor.
_LAZY: dict[str, str] = {
    "AsyncJsonlStore": "threadline.stores.local_async",
    "AsyncMemoryStore": "threadline.stores.local_async",
    "AsyncSQLiteStore": "threadline.stores.local_async",
    "AsyncPostgresStore": "threadline.stores.postgres",
    "AsyncRedisStore": "threadline.stores.redis",
    "PostgresStore": "threadline.stores.postgres",
    "RedisStore": "threadline.stores.redis",
}


__getattr__, __dir__ = _lazy_attributes("threadline.stores", _LAZY, globals())
