"""The Lua scripts of the Redis stores (private): every write and read of a conversation's
version, its messages and its log is one of these, so Redis runs it as one atomic step.

Only `threadline.stores.redis` and its helpers (``_redis_fork``, ``_redis_watch``,
``_redis_listing``) use them.
"""

from __future__ import annotations

__all__ = ["APPEND", "CURRENT", "LOG", "LOG_LENGTH", "PUSH_ALL", "REPLACE", "VERSION"]

# The version every script reads: the version key, or for a conversation written before
# versions existed, its length. KEYS[1] is the list, KEYS[4] the version key.
CURRENT = """
local function current()
    local stored = redis.call('GET', KEYS[4])
    if stored then
        return tonumber(stored)
    end
    return redis.call('LLEN', KEYS[1])
end
"""

VERSION = CURRENT + "return current()"

LOG_LENGTH = 1000
"""About how many of a conversation's latest writes its log keeps (``MAXLEN ~``): a watcher
that lost its connection for longer than that many writes reloads the whole conversation."""

# The entry of a write in the log (KEYS[6]), with the id <new version>-0. pcall: an entry that
# cannot be added (an id not above the last, after the keys were tampered with) must not fail
# the write; a watcher finds the gap and reloads.
LOG = f"""
local function log(kind, count)
    redis.pcall('XADD', KEYS[6], 'MAXLEN', '~', {LOG_LENGTH}, (version + 1) .. '-0',
        'k', kind, 'n', count)
end
"""

# What APPEND and REPLACE start with: the version read, the log entry's function, and the
# conflict answer {version} when ARGV[2] is an expected version ('' for none) it is not at.
_CHECKED = (
    CURRENT
    + """
local version = current()
"""
    + LOG
    + """
if ARGV[2] ~= '' and tonumber(ARGV[2]) ~= version then
    return {version}
end
"""
)

# Writes the n messages of ARGV (3 values, then n ids, n digests, n JSON texts): the texts
# pushed on the list KEYS[1], each id with its digest into the hash KEYS[2]. unpack() is
# bounded by the Lua stack, so long batches go in slices.
PUSH_ALL = """
local texts = 3 + 2 * n
for first = 1, n, 1000 do
    redis.call('RPUSH', KEYS[1], unpack(ARGV, texts + first, texts + math.min(first + 999, n)))
end
local fields = {}
for i = 1, n do
    fields[#fields + 1] = ARGV[3 + i]
    fields[#fields + 1] = ARGV[3 + n + i]
end
for first = 1, #fields, 2000 do
    redis.call('HSET', KEYS[2], unpack(fields, first, math.min(first + 1999, #fields)))
end
"""

# KEYS: the list, the id hash, the index, the version. ARGV: the conversation id, the expected
# version ('' for none), n, then n message ids, n digests of their JSON, n JSON texts. Returns
# the number of messages pushed, -i when message i (1-based) reuses a stored id with another
# digest, or {version} when the conversation is not at the expected version (nothing is
# written in either case).
APPEND = (
    _CHECKED
    + """
table.remove(ARGV, 2)
local n = tonumber(ARGV[2])
local seen = {}
local texts = {}
local fields = {}
for i = 1, n do
    local id, digest = ARGV[2 + i], ARGV[2 + n + i]
    local held = seen[id]
    if held == nil then
        held = redis.call('HGET', KEYS[2], id)
    end
    if held then
        if held ~= digest then
            return -i
        end
    else
        seen[id] = digest
        texts[#texts + 1] = ARGV[2 + 2 * n + i]
        fields[#fields + 1] = id
        fields[#fields + 1] = digest
    end
end
-- unpack() is bounded by the Lua stack, so long batches go in slices
for first = 1, #texts, 1000 do
    redis.call('RPUSH', KEYS[1], unpack(texts, first, math.min(first + 999, #texts)))
end
for first = 1, #fields, 2000 do
    redis.call('HSET', KEYS[2], unpack(fields, first, math.min(first + 1999, #fields)))
end
if #texts > 0 then
    redis.call('ZADD', KEYS[3], 0, ARGV[1])
    redis.call('SET', KEYS[4], version + 1)
    log('a', #texts)
end
return #texts
"""
)

# KEYS: as for APPEND. ARGV: the conversation id, the expected version ('' for none), n, then
# n message ids, n digests, n JSON texts (ids unique: the caller dropped replays). Returns n, or
# {version} on a conflict (nothing written). n = 0 deletes the conversation.
REPLACE = (
    _CHECKED
    + """
local n = tonumber(ARGV[3])
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('SET', KEYS[4], version + 1)
log('r', n)
if n == 0 then
    redis.call('ZREM', KEYS[3], ARGV[1])
    redis.call('DEL', KEYS[5])
    return 0
end
"""
    + PUSH_ALL
    + """
redis.call('ZADD', KEYS[3], 0, ARGV[1])
return n
"""
)
