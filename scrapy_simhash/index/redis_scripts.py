"""The Lua scripts of the Redis index (see :mod:`scrapy_simhash.index.redis` for the keys).

Every script that writes first checks that ``{prefix}:meta`` still exists and returns
``{-1}`` when it does not: an index whose keys were evicted or deleted under a running
crawl then fails loudly instead of letting every page through as new.

A stored page has one member in ``{prefix}:order``: ``<seq, 16 digits>:f:<hex>`` for a
fingerprint, ``<seq>:x:<hex>`` for an exact entry, scored by the time it was stored.
"""

from __future__ import annotations

# Probe every table; return {1, hex fingerprint, its records, distance, seq} for the
# nearest stored page within max_distance (of equally near ones, the earliest stored:
# the smallest sequence number), or insert the fingerprint and return {0, seq}. Records
# stored before the cutoff (the ttl) are neither returned nor counted as near.
# LAYOUTS (filled in per block plan): for each table, the width of its rest (the bits
# outside the key) and where each block of the rest goes: {position in rest, width, shift
# in the fingerprint}.
# KEYS: the n set keys, the fingerprint hash, the counters hash, the order, the meta hash.
# ARGV: max_distance, then per table: member, the high and low 32 bits of the fingerprint
#       with the rest zeroed; then hex fingerprint, record tail ('"key","added_at"'),
#       added_at, cutoff ('' for none).
ADD_IF_NEW = """
local LAYOUTS = --LAYOUTS--
local tonumber, floor, bxor, band = tonumber, math.floor, bit.bxor, bit.band
local n = #LAYOUTS
if redis.call('EXISTS', KEYS[n + 4]) == 0 then return {-1} end
local k = tonumber(ARGV[1])
local cutoff = tonumber(ARGV[3 * n + 5])
local near = {}
for t = 1, n do
  local p = tonumber(ARGV[3 * t - 1])
  local scale = 2 ^ LAYOUTS[t][1]
  local p_rest = p % scale
  -- members with the same key bits as the probe: low <= m < low + scale
  local low = p - p_rest
  local high = low + scale
  local p_hi = floor(p_rest / 16777216)
  local p_lo = p_rest % 16777216
  local members = redis.call('SMEMBERS', KEYS[t])
  for i = 1, #members do
    local m = tonumber(members[i])
    if m >= low and m < high then
      local r = m - low
      local d = 0
      local x = bxor(floor(r / 16777216), p_hi)
      while x ~= 0 and d <= k do x = band(x, x - 1); d = d + 1 end
      x = bxor(r % 16777216, p_lo)
      while x ~= 0 and d <= k do x = band(x, x - 1); d = d + 1 end
      if d <= k then near[#near + 1] = {d, t, r} end
    end
  end
end
local function rebuild(t, r)
  local hi, lo = tonumber(ARGV[3 * t]), tonumber(ARGV[3 * t + 1])
  local layout = LAYOUTS[t]
  for j = 2, #layout do
    local pos, w, s = layout[j][1], layout[j][2], layout[j][3]
    local v = floor(r / 2 ^ pos) % 2 ^ w
    if s >= 32 then
      hi = hi + v * 2 ^ (s - 32)
    elseif s + w <= 32 then
      lo = lo + v * 2 ^ s
    else
      lo = lo + (v % 2 ^ (32 - s)) * 2 ^ s
      hi = hi + floor(v / 2 ^ (32 - s))
    end
  end
  return string.format('%08x%08x', hi, lo)
end
table.sort(near, function(a, b) return a[1] < b[1] end)
local best_d, best_hex, best_value, best_seq
local seen = {}
for i = 1, #near do
  local c = near[i]
  if best_d and c[1] > best_d then break end
  local hex = rebuild(c[2], c[3])
  if not seen[hex] then
    seen[hex] = true
    local value = redis.call('HGET', KEYS[n + 1], hex)
    if not value then return {-2, hex} end
    for _, r in ipairs(cjson.decode(value)) do
      if (not cutoff or tonumber(r[3]) >= cutoff) and (not best_seq or r[1] < best_seq) then
        best_d, best_hex, best_value, best_seq = c[1], hex, value, r[1]
      end
    end
  end
end
if best_d then return {1, best_hex, best_value, best_d, best_seq} end
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
redis.call('ZADD', KEYS[n + 3], ARGV[3 * n + 4], string.format('%016.0f:f:', seq) .. hex)
return {0, seq}
"""

# Store a fingerprint without checking distances (restoring an export); skip it when a
# page with the same key is stored under the same fingerprint. Returns 1 if stored.
# KEYS: the n set keys, the fingerprint hash, the counters hash, the order, the meta hash.
# ARGV: n, the n members, hex fingerprint, record tail, key, added_at.
STORE = """
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
redis.call('ZADD', KEYS[n + 3], ARGV[n + 5], string.format('%016.0f:f:', seq) .. hex)
return 1
"""

# Remove the records with the given sequence numbers stored under one fingerprint; remove
# the fingerprint from the tables when none is left. Returns how many were removed.
# KEYS: the n set keys, the fingerprint hash, the counters hash, the order.
# ARGV: n, the n members, hex fingerprint, then the sequence numbers.
REMOVE = """
local n = tonumber(ARGV[1])
local hex = ARGV[n + 2]
local doomed = {}
for i = n + 3, #ARGV do
  doomed[tonumber(ARGV[i])] = true
  redis.call('ZREM', KEYS[n + 3], string.format('%016.0f:f:', tonumber(ARGV[i])) .. hex)
end
local existing = redis.call('HGET', KEYS[n + 1], hex)
if not existing then return 0 end
local keep, removed = {}, 0
for _, r in ipairs(cjson.decode(existing)) do
  if doomed[r[1]] then removed = removed + 1 else keep[#keep + 1] = r end
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

# Exact entries. KEYS: the exact hash, the counters hash, the order, the meta hash.
# ARGV: hex digest, record tail, added_at, cutoff ('' for none).
# Returns the stored record, or nil after storing this one (replacing an expired one).
ADD_EXACT_IF_NEW = """
if redis.call('EXISTS', KEYS[4]) == 0 then return -1 end
local existing = redis.call('HGET', KEYS[1], ARGV[1])
local cutoff = tonumber(ARGV[4])
if existing then
  local old = cjson.decode(existing)
  if not cutoff or tonumber(old[3]) >= cutoff then return existing end
  redis.call('ZREM', KEYS[3], string.format('%016.0f:x:', old[1]) .. ARGV[1])
  redis.call('HINCRBY', KEYS[2], 'pages', -1)
end
local seq = redis.call('HINCRBY', KEYS[2], 'seq', 1)
redis.call('HINCRBY', KEYS[2], 'pages', 1)
redis.call('HSET', KEYS[1], ARGV[1], '[' .. seq .. ',' .. ARGV[2] .. ']')
redis.call('ZADD', KEYS[3], ARGV[3], string.format('%016.0f:x:', seq) .. ARGV[1])
return false
"""

# Remove an exact entry if it still has sequence number ARGV[2]. Returns 1 if removed.
# KEYS: the exact hash, the counters hash, the order.
REMOVE_EXACT = """
redis.call('ZREM', KEYS[3], string.format('%016.0f:x:', tonumber(ARGV[2])) .. ARGV[1])
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if not existing or cjson.decode(existing)[1] ~= tonumber(ARGV[2]) then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HINCRBY', KEYS[2], 'pages', -1)
return 1
"""

# Create the parameters unless another client just did; return them either way.
CREATE_META = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], unpack(ARGV))
end
return redis.call('HGETALL', KEYS[1])
"""
