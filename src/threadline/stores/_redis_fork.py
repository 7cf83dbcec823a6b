"""The Lua script of the Redis stores' ``fork``: the branch written in one atomic step.

Only `threadline.stores.redis` uses it; it reads the version as that module's scripts do (the
version key, or for a conversation written before versions existed, its length).
"""

from __future__ import annotations

from threadline.stores._redis_scripts import CURRENT
from threadline.stores._redis_scripts import PUSH_ALL

__all__ = ["FORK_SCRIPT"]


# KEYS: the new conversation's list, id hash, the index, its version, its parent key. ARGV: the
# new id, the parent record, n, then n message ids, n digests, n JSON texts. Returns n, or -1
# when the new id holds messages or is a branch already (nothing written).
FORK_SCRIPT = (
    CURRENT
    + """
if redis.call('LLEN', KEYS[1]) > 0 or redis.call('EXISTS', KEYS[5]) == 1 then
    return -1
end
local version = current()
local n = tonumber(ARGV[3])
redis.call('DEL', KEYS[2])
"""
    + PUSH_ALL
    + """
if n > 0 then
    redis.call('ZADD', KEYS[3], 0, ARGV[1])
end
redis.call('SET', KEYS[4], version + 1)
redis.call('SET', KEYS[5], ARGV[2])
return n
"""
)
