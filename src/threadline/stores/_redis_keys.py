"""The keys of the Redis stores (private): one layout on a single server, a hash-tagged one on a
Redis Cluster.

On a single server (the layout every threadline release has written, unchanged)::

    <prefix><kind>:<name>                  e.g. threadline:conv:user%3A7

On a Redis Cluster, every key of one conversation, and the index entry that lists it, must
share a hash slot, since a write is one Lua script over all of them. A conversation belongs to
one of `BUCKETS` buckets (a hash of its id), and every key of a bucket carries the bucket's
hash tag, so it shares that bucket's slot::

    <prefix><kind>:{<tag>}<name>           e.g. threadline:conv:{417}user%3A7
    <prefix>index:{<tag>}conversations     the bucket's index (a ZSET of its ids)

The tags are chosen once (`bucket_tags`) so that the buckets' slots are spread evenly over the
16,384 slots: bucket ``b``'s slot lies in ``[64 b, 64 b + 64)``, so every shard of a cluster
with the usual contiguous slot ranges holds its share of buckets. Listing reads the
`BUCKETS` indexes (one ``ZRANGE`` each, pipelined by the client node by node) and merges them.

Both layouts are injective (no two stores, conversations or kinds share a key): the name is
percent-encoded (no ``:``, ``{`` or ``}``), the tag is decimal digits, the kind a fixed word,
and the prefix is empty or ends with ``:`` (and, on a cluster, holds no ``{`` or ``}``, which
would make Redis hash the prefix's braces instead of the bucket's tag).
"""

from __future__ import annotations

import binascii
import functools
import hashlib
from urllib.parse import quote

__all__ = ["BUCKETS", "SLOTS", "Layout", "bucket_of", "bucket_tags", "key_slot"]

SLOTS = 16384
"""The hash slots of a Redis Cluster."""

BUCKETS = 256
"""How many buckets a cluster store spreads its conversations over (fixed: it is part of the
layout). Every bucket is one hash slot; listing reads one index per bucket."""


def key_slot(tag: str) -> int:
    """The hash slot of a key whose hash tag (or whole key, when it has none) is ``tag``: the
    CRC16 (XMODEM) Redis Cluster uses, modulo `SLOTS`."""
    return binascii.crc_hqx(tag.encode(), 0) % SLOTS


@functools.cache
def bucket_tags() -> tuple[str, ...]:
    """The hash tag of each bucket: for bucket ``b``, the smallest decimal number whose slot
    lies in ``[b * SLOTS / BUCKETS, (b + 1) * SLOTS / BUCKETS)``."""
    width = SLOTS // BUCKETS
    tags: list[str | None] = [None] * BUCKETS
    missing = BUCKETS
    candidate = 0
    while missing:
        text = str(candidate)
        bucket = key_slot(text) // width
        if tags[bucket] is None:
            tags[bucket] = text
            missing -= 1
        candidate += 1
    return tuple(tag for tag in tags if tag is not None)


def bucket_of(conversation_id: str) -> int:
    """The bucket of a conversation: a hash of its id (stable across releases)."""
    digest = hashlib.blake2b(conversation_id.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % BUCKETS


class Layout:
    """Every key one store uses, on a single server (``clustered=False``) or a cluster."""

    def __init__(self, prefix: str, clustered: bool) -> None:
        self.prefix = prefix
        self.clustered = clustered

    def key(self, kind: str, conversation_id: str) -> str:
        """The key of ``kind`` (``conv``, ``ids``, ``ver``, ``parent``, ``log``) of a
        conversation."""
        name = quote(conversation_id, safe="")
        if not self.clustered:
            return f"{self.prefix}{kind}:{name}"
        tag = bucket_tags()[bucket_of(conversation_id)]
        return f"{self.prefix}{kind}:{{{tag}}}{name}"

    def index_for(self, conversation_id: str) -> str:
        """The index that lists the conversation (the one index on a single server; its
        bucket's on a cluster)."""
        if not self.clustered:
            return f"{self.prefix}index:conversations"
        return self._bucket_index(bucket_tags()[bucket_of(conversation_id)])

    def indexes(self) -> list[str]:
        """Every index listing reads: one on a single server, one per bucket on a cluster."""
        if not self.clustered:
            return [f"{self.prefix}index:conversations"]
        return [self._bucket_index(tag) for tag in bucket_tags()]

    def keys(self, conversation_id: str) -> list[str]:
        """The keys a script of the conversation takes, in the scripts' order: the list, the
        id hash, the index, the version, the parent record, the log."""
        return [
            self.key("conv", conversation_id),
            self.key("ids", conversation_id),
            self.index_for(conversation_id),
            self.key("ver", conversation_id),
            self.key("parent", conversation_id),
            self.key("log", conversation_id),
        ]

    def _bucket_index(self, tag: str) -> str:
        return f"{self.prefix}index:{{{tag}}}conversations"
