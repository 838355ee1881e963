"""The Lua scripts of the Redis index (the keys are in :mod:`~.layout`, the Lua
functions they share in :mod:`~.script_functions`).

Every script that writes first checks that ``{prefix}:meta`` still exists and returns
``{-1}`` when it does not: an index whose keys were evicted or deleted under a running
crawl then fails loudly instead of letting every page through as new.

A stored page has one member in ``{prefix}:order`` (``f:<seq, 16 digits>:<hex>`` for a
fingerprint, ``x:<seq>:<hex>`` for an exact entry, scored by the time it was stored) and
is listed under its key in ``{prefix}:keys``; every script keeps the three in step.

A check replaces what its key stored: the script gets the table sets and members of the
fingerprints stored under the key from the caller, with the ``{prefix}:keys`` value they
were computed from (``expected``). When that value changed meanwhile, the script writes
nothing and returns ``{-3, value}``: the caller computes again and retries. So a check is
one round trip, two when its key stored another fingerprint.
"""

from __future__ import annotations

from ...anchors import MAX_ANCHOR_PAGES
from ..rule import MAX_SIGHTINGS
from .script_functions import PAGE_FUNCTIONS, SCAN

__all__ = [
    "ADD_EXACT_IF_NEW",
    "CHECK",
    "CREATE_META",
    "REMOVE",
    "REMOVE_EXACT",
    "STORE",
]

# The check: read the candidates of a page, and store it when the caller, having decided
# on what an earlier call read (scrapy_simhash.index.rule.decide), says so. Nothing here
# decides which stored page a page repeats: the script reads, and writes only when what it
# reads is what the caller's decision was made on.
#
# It reads the records within max_distance (not stored before the cutoff, the ttl) and,
# with anchors given, the anchors' entries that are not boilerplate and the pages they
# list: its *state*, whose SHA-1 is its token. With no token given and nothing read (no
# candidate at all: every verdict stores the page), or with the token given equal to the
# state's, it replaces what the key stored and inserts: {0, seq, replaced}. Else it
# writes nothing and returns what it read: {3, token, state (JSON [near, hits, pages,
# sights]),
# sketches (JSON [seq, packed sketch in hex, ...])}, where near = [[distance, hex,
# [[seq, key, "added_at"], ...]], ...] by hex, hits = [[anchor, "seq,seq,..."], ...],
# pages = [[seq, its anchors' value in {prefix}:pa, its fingerprint's records], ...],
# sights = [[anchor, "page,page,..."], ...]: the anchors' sightings in {prefix}:seen, the
# page's own added first (by every run, before it reads: see script_functions.SIGHT).
# A token of '-' never writes (a query). The state changes whenever a page is stored
# near, or sharing an anchor, so that a decision is never stored on a stale read.
# LAYOUTS (filled in per block plan): for each table, the width of its rest (the bits
# outside the key) and where each block of the rest goes: {position in rest, width, shift
# in the fingerprint}.
# KEYS: the n set keys, the fingerprint hash, the counters hash, the order, the meta hash,
#       the keys hash, the exact hash, then the n set keys of each old fingerprint.
# ARGV: max_distance, then per table: member, the high and low 32 bits of the fingerprint
#       with the rest zeroed; then hex fingerprint, record tail ('"key","added_at"'),
#       added_at, cutoff ('' for none), key, expected, the page's anchors (JSON
#       [words, cover, [hashes], [sizes], sighting], or ''), its packed sketch in hex (or
#       ''), token, how the page was analysed ('' for no record) and its text hash in hex,
#       then the old fingerprints (m, and per fingerprint its hex and n members).
#
# The check's parts, in the order they run (one script, one EVAL: atomic as a whole).
# After SCAN: the records of the fingerprints within k, not expired, in `found` (by hex),
# and their sequence numbers in `seqs`.
_READ_NEAR = """local found, seen, seqs = {}, {}, {}
for i = 1, #near do
  local c = near[i]
  local hex = rebuild(c[2], c[3])
  if not seen[hex] then
    seen[hex] = true
    local value = redis.call('HGET', KEYS[n + 1], hex)
    if not value then return {-2, hex} end
    local keep = {}
    for _, r in ipairs(cjson.decode(value)) do
      if not cutoff or tonumber(r[3]) >= cutoff then
        keep[#keep + 1] = r
        seqs[#seqs + 1] = string.format('%.0f', r[1])
      end
    end
    if #keep > 0 then found[#found + 1] = {c[1], hex, keep} end
  end
end
table.sort(found, function(a, b) return a[2] < b[2] end)
"""

# The anchors' entries that are not boilerplate (`hits`), the pages they list (`pages`)
# and the anchors' sightings (`sights`), the page's own added first unless a query.
_READ_ANCHORED = """local hits, pages, sights = {}, {}, {}
local token = ARGV[3 * n + 10]
local anchors = ARGV[3 * n + 8] ~= '' and cjson.decode(ARGV[3 * n + 8]) or nil
if anchors then
  local counts, held = ANCHOR_TAG .. 'anchors', ANCHOR_TAG .. 'pa'
  local listed, order = {}, {}
  local page = nil
  if token ~= '-' then page = string.format('%.0f', anchors[5]) end
  for _, h in ipairs(anchors[3]) do
    local f = string.format('%.0f', h)
    local seen = sight(ANCHOR_TAG .. 'seen', f, page)
    if seen ~= '' then sights[#sights + 1] = {f, seen} end
    local v = redis.call('HGET', counts, f)
    if v then
      local count, on = string.match(v, '^(%d+)|(.*)$')
      if tonumber(count) <= --MAX_ANCHOR_PAGES-- then
        hits[#hits + 1] = {f, on}
        for s in string.gmatch(on, '%d+') do
          if not listed[s] then listed[s] = true; order[#order + 1] = tonumber(s) end
        end
      end
    end
  end
  table.sort(order)
  for _, seq in ipairs(order) do
    local s = string.format('%.0f', seq)
    local p = redis.call('HGET', held, s)
    if p then
      pages[#pages + 1] = {s, p, redis.call('HGET', KEYS[n + 1], cjson.decode(p)[1]) or ''}
      seqs[#seqs + 1] = s
    end
  end
end
"""

# What was read, returned unless it is what the caller's decision was made on (`token`).
_READ_STATE = """if token ~= '' or #found > 0 or #hits > 0 then
  local state = cjson.encode({found, hits, pages, sights})
  local mine = redis.sha1hex(state)
  if token ~= mine then
    local sketches = {}
    if #seqs > 0 then
      local values = redis.call('HMGET', ANCHOR_TAG .. 'sk', unpack(seqs))
      for i, s in ipairs(seqs) do
        if values[i] then sketches[#sketches + 1] = s; sketches[#sketches + 1] = values[i] end
      end
    end
    return {3, mine, state, cjson.encode(sketches)}
  end
end
"""

# The page stored: what its key stored replaced, its record, members, anchors, sketch and
# record of how it was analysed added.
_STORE_CHECKED = """local current = redis.call('HGET', KEYS[n + 5], key) or ''
if current ~= ARGV[3 * n + 7] then return {-3, current} end
local replaced, missing = replace(KEYS[n + 5], KEYS[n + 1], KEYS[n + 6], KEYS[n + 2],
  KEYS[n + 3], key, n, n + 6, 3 * n + 13)
if not replaced then return {-2, missing} end
local hex, tail = ARGV[3 * n + 2], ARGV[3 * n + 3]
local seq = redis.call('HINCRBY', KEYS[n + 2], 'seq', 1)
redis.call('HINCRBY', KEYS[n + 2], 'pages', 1)
local record = '[' .. seq .. ',' .. tail .. ']'
local existing = redis.call('HGET', KEYS[n + 1], hex)
if existing then
  -- expired records under the same fingerprint stay until the sweep removes them
  redis.call('HSET', KEYS[n + 1], hex, string.sub(existing, 1, -2) .. ',' .. record .. ']')
else
  redis.call('HSET', KEYS[n + 1], hex, '[' .. record .. ']')
  for t = 1, n do redis.call('SADD', KEYS[t], ARGV[3 * t - 1]) end
end
local member = string.format('f:%016.0f:', seq) .. hex
redis.call('ZADD', KEYS[n + 3], ARGV[3 * n + 4], member)
list(KEYS[n + 5], key, member)
if anchors then add_anchors(seq, hex, anchors) end
add_sketch(seq, ARGV[3 * n + 9])
add_analysed(seq, ARGV[3 * n + 11], ARGV[3 * n + 12])
return {0, seq, replaced}
"""

CHECK = (
    PAGE_FUNCTIONS
    + """
local LAYOUTS = --LAYOUTS--
local tonumber, floor, bxor, band = tonumber, math.floor, bit.bxor, bit.band
local n = #LAYOUTS
if redis.call('EXISTS', KEYS[n + 4]) == 0 then return {-1} end
local k = tonumber(ARGV[1])
local cutoff = tonumber(ARGV[3 * n + 5])
local key = ARGV[3 * n + 6]
"""
    + SCAN
    + _READ_NEAR
    + _READ_ANCHORED
    + _READ_STATE
    + _STORE_CHECKED
)


# Store a fingerprint without checking distances (restoring an export); skip it when a
# page with the same key is stored under the same fingerprint. Returns 1 if stored.
# KEYS: the n set keys, the fingerprint hash, the counters hash, the order, the meta hash,
#       the keys hash.
# ARGV: n, the n members, hex fingerprint, record tail, key, added_at, anchors (JSON
#       [words, cover, [hashes], [], sighting], or ''), the packed sketch in hex (or ''),
#       how the page was analysed ('' for no record) and its text hash in hex.
STORE = (
    PAGE_FUNCTIONS
    + """
local n = tonumber(ARGV[1])
if redis.call('EXISTS', KEYS[n + 4]) == 0 then return -1 end
local hex, tail, key = ARGV[n + 2], ARGV[n + 3], ARGV[n + 4]
local existing = redis.call('HGET', KEYS[n + 1], hex)
if existing then
  for _, r in ipairs(cjson.decode(existing)) do
    if r[2] == key then return 0 end
  end
end
local seq = redis.call('HINCRBY', KEYS[n + 2], 'seq', 1)
redis.call('HINCRBY', KEYS[n + 2], 'pages', 1)
local record = '[' .. seq .. ',' .. tail .. ']'
if existing then
  redis.call('HSET', KEYS[n + 1], hex, string.sub(existing, 1, -2) .. ',' .. record .. ']')
else
  redis.call('HSET', KEYS[n + 1], hex, '[' .. record .. ']')
  for t = 1, n do redis.call('SADD', KEYS[t], ARGV[1 + t]) end
end
local member = string.format('f:%016.0f:', seq) .. hex
redis.call('ZADD', KEYS[n + 3], ARGV[n + 5], member)
list(KEYS[n + 5], key, member)
if ARGV[n + 6] and ARGV[n + 6] ~= '' then add_anchors(seq, hex, cjson.decode(ARGV[n + 6])) end
add_sketch(seq, ARGV[n + 7])
add_analysed(seq, ARGV[n + 8], ARGV[n + 9])
return 1
"""
)

# Remove the records with the given sequence numbers stored under one fingerprint; remove
# the fingerprint from the tables when none is left. Returns how many were removed.
# KEYS: the n set keys, the fingerprint hash, the counters hash, the order, the keys hash.
# ARGV: n, the n members, hex fingerprint, then the sequence numbers.
REMOVE = (
    PAGE_FUNCTIONS
    + """
local n = tonumber(ARGV[1])
local hex = ARGV[n + 2]
local doomed = {}
for i = n + 3, #ARGV do
  doomed[tonumber(ARGV[i])] = true
  redis.call('ZREM', KEYS[n + 3], string.format('f:%016.0f:', tonumber(ARGV[i])) .. hex)
end
local existing = redis.call('HGET', KEYS[n + 1], hex)
if not existing then return 0 end
local keep, removed = {}, 0
for _, r in ipairs(cjson.decode(existing)) do
  if doomed[r[1]] then
    removed = removed + 1
    drop_page(r[1])
    unlist(KEYS[n + 4], r[2], string.format('f:%016.0f:', r[1]) .. hex)
  else
    keep[#keep + 1] = r
  end
end
if removed == 0 then return 0 end
if #keep == 0 then
  redis.call('HDEL', KEYS[n + 1], hex)
  for t = 1, n do redis.call('SREM', KEYS[t], ARGV[1 + t]) end
else
  redis.call('HSET', KEYS[n + 1], hex, cjson.encode(keep))
end
redis.call('HINCRBY', KEYS[n + 2], 'pages', -removed)
return removed
"""
)

# Exact entries. Returns {1, the stored record} when the digest is stored (and not
# expired); else replaces what the key stored (as CHECK) and stores this one:
# {0, replaced}. With expected '*' (restoring an export) nothing under the key is
# replaced. A stored record past the cutoff is replaced.
# KEYS: the exact hash, the counters hash, the order, the meta hash, the keys hash, the
#       fingerprint hash, then the n set keys of each old fingerprint.
# ARGV: hex digest, record tail, added_at, cutoff ('' for none), key, expected, n, how the
#       page was analysed ('' for no record), its text hash in hex, then the old
#       fingerprints (m, and per fingerprint its hex and n members).
ADD_EXACT_IF_NEW = (
    PAGE_FUNCTIONS
    + """
if redis.call('EXISTS', KEYS[4]) == 0 then return {-1} end
local key = ARGV[5]
local existing = redis.call('HGET', KEYS[1], ARGV[1])
local cutoff = tonumber(ARGV[4])
if existing then
  local old = cjson.decode(existing)
  if not cutoff or tonumber(old[3]) >= cutoff then return {1, existing} end
  local member = string.format('x:%016.0f:', old[1]) .. ARGV[1]
  redis.call('ZREM', KEYS[3], member)
  unlist(KEYS[5], old[2], member)
  redis.call('HDEL', KEYS[1], ARGV[1])
  drop_analysed(old[1])
  redis.call('HINCRBY', KEYS[2], 'pages', -1)
end
local replaced = 0
if ARGV[6] ~= '*' then
  local current = redis.call('HGET', KEYS[5], key) or ''
  if current ~= ARGV[6] then return {-3, current} end
  local n, missing = tonumber(ARGV[7])
  replaced, missing = replace(KEYS[5], KEYS[6], KEYS[1], KEYS[2], KEYS[3], key, n, 6, 10)
  if not replaced then return {-2, missing} end
end
local seq = redis.call('HINCRBY', KEYS[2], 'seq', 1)
redis.call('HINCRBY', KEYS[2], 'pages', 1)
redis.call('HSET', KEYS[1], ARGV[1], '[' .. seq .. ',' .. ARGV[2] .. ']')
local member = string.format('x:%016.0f:', seq) .. ARGV[1]
redis.call('ZADD', KEYS[3], ARGV[3], member)
list(KEYS[5], key, member)
add_analysed(seq, ARGV[8], ARGV[9])
return {0, replaced}
"""
)

# Remove an exact entry if it still has sequence number ARGV[2]. Returns 1 if removed.
# KEYS: the exact hash, the counters hash, the order, the keys hash.
REMOVE_EXACT = (
    PAGE_FUNCTIONS
    + """
local member = string.format('x:%016.0f:', tonumber(ARGV[2])) .. ARGV[1]
redis.call('ZREM', KEYS[3], member)
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if not existing then return 0 end
local record = cjson.decode(existing)
if record[1] ~= tonumber(ARGV[2]) then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
drop_analysed(record[1])
unlist(KEYS[4], record[2], member)
redis.call('HINCRBY', KEYS[2], 'pages', -1)
return 1
"""
)

# Create the parameters unless another client just did; return them either way.
CREATE_META = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], unpack(ARGV))
end
return redis.call('HGETALL', KEYS[1])
"""


def _constants(script: str) -> str:
    """*script* with the anchors' constants written in."""
    for name, value in {
        "MAX_ANCHOR_PAGES": MAX_ANCHOR_PAGES,
        "MAX_SIGHTINGS": MAX_SIGHTINGS,
    }.items():
        script = script.replace(f"--{name}--", repr(value))
    return script


CHECK, STORE, REMOVE, ADD_EXACT_IF_NEW, REMOVE_EXACT = map(
    _constants, (CHECK, STORE, REMOVE, ADD_EXACT_IF_NEW, REMOVE_EXACT)
)
