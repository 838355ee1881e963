"""The Lua scripts of a spread Redis index (the keys are in :mod:`~.spread_layout`).

Each script touches the keys of one hash tag: a group (the tables of one first block, or
the exact entries of a digest range) or a home (the entries under a key, the order of
pages, the commit records). The protocol that strings them together is in
:mod:`~.spread`.

Records in a group: ``[txn, key, "added_at", committed]`` (committed 1 once its attempt
is known committed, 0 while it may be pending).
"""

from __future__ import annotations

from ..rule import MAX_SIGHTINGS
from .script_functions import SCAN, SIGHT
from .scripts import CREATE_META

__all__ = ["CREATE_META"]

# Append a record to the JSON list of a hash field, adding the set members when the field
# is new. Returns false when a record of the attempt is there already.
_APPEND = """
local function append(hash, hex, record, txn, sets, members)
  local existing = redis.call('HGET', hash, hex)
  if existing then
    if string.find(existing, '["' .. txn .. '"', 1, true) then return false end
    redis.call('HSET', hash, hex, string.sub(existing, 1, -2) .. ',' .. record .. ']')
  else
    redis.call('HSET', hash, hex, '[' .. record .. ']')
    for t = 1, #sets do redis.call('SADD', sets[t], members[t]) end
  end
  return true
end
"""

# Phase 1 in a group: the near entries of every table of the group, and the page reserved
# as pending (whatever was found: whether a near entry makes it a duplicate is the
# client's verdict, rule.decide, on the entries of every group).
# KEYS: the n set keys of the group's tables, the fingerprint hash.
# ARGV: k, per table: member, high and low 32 bits of the probe with its rest zeroed;
#       then hex, txn, record tail ('"key","added_at"'), cutoff ('' for none), reserve.
# Returns {reserved (0/1), JSON [[distance, hex, txn, key, "added_at", committed], ...]}.
CHECK = (
    _APPEND
    + """
local LAYOUTS = --LAYOUTS--
local tonumber, floor, bxor, band = tonumber, math.floor, bit.bxor, bit.band
local n = #LAYOUTS
local k = tonumber(ARGV[1])
local hex, txn, tail = ARGV[3 * n + 2], ARGV[3 * n + 3], ARGV[3 * n + 4]
local cutoff = tonumber(ARGV[3 * n + 5])
"""
    + SCAN
    + """
local found, seen = {}, {}
for i = 1, #near do
  local c = near[i]
  local h = rebuild(c[2], c[3])
  if not seen[h] then
    seen[h] = true
    local value = redis.call('HGET', KEYS[n + 1], h)
    if value then
      for _, r in ipairs(cjson.decode(value)) do
        if r[1] ~= txn and (not cutoff or tonumber(r[3]) >= cutoff) then
          found[#found + 1] = {c[1], h, r[1], r[2], r[3], r[4]}
        end
      end
    end
  end
end
local reserved = 0
if ARGV[3 * n + 6] == '1' then
  local sets, members = {}, {}
  for t = 1, n do sets[t] = KEYS[t]; members[t] = ARGV[3 * t - 1] end
  append(KEYS[n + 1], hex, '["' .. txn .. '",' .. tail .. ',0]', txn, sets, members)
  reserved = 1
end
if #found == 0 then return {reserved, '[]'} end
return {reserved, cjson.encode(found)}
"""
)

# Phase 1 for an exact entry, in the group of its digest. Returns as CHECK.
# KEYS: the exact hash. ARGV: hex, txn, record tail, cutoff, reserve.
CHECK_EXACT = """
local hex, txn, tail = ARGV[1], ARGV[2], ARGV[3]
local cutoff = tonumber(ARGV[4])
local found, committed, mine = {}, false, false
local value = redis.call('HGET', KEYS[1], hex)
if value then
  for _, r in ipairs(cjson.decode(value)) do
    if r[1] == txn then mine = true
    elseif not cutoff or tonumber(r[3]) >= cutoff then
      found[#found + 1] = {0, hex, r[1], r[2], r[3], r[4]}
      if r[4] == 1 then committed = true end
    end
  end
end
local reserved = 0
if ARGV[5] == '1' and not committed then
  if not mine then
    local record = '["' .. txn .. '",' .. tail .. ',0]'
    if value then record = string.sub(value, 1, -2) .. ',' .. record .. ']'
    else record = '[' .. record .. ']' end
    redis.call('HSET', KEYS[1], hex, record)
  end
  reserved = 1
end
if #found == 0 then return {reserved, '[]'} end
return {reserved, cjson.encode(found)}
"""

# After the commit: mark the attempt's record committed. KEYS: the hash. ARGV: hex, txn.
FINALIZE = """
local value = redis.call('HGET', KEYS[1], ARGV[1])
if not value then return 0 end
local records, changed = cjson.decode(value), 0
for _, r in ipairs(records) do
  if r[1] == ARGV[2] and r[4] ~= 1 then r[4] = 1; changed = 1 end
end
if changed == 1 then redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(records)) end
return changed
"""

# Remove the records of the given attempts under one fingerprint (an aborted reservation,
# a replaced, forgotten or expired page); with none left, its table members go too.
# KEYS: the n set keys (none for an exact hash), the hash.
# ARGV: n, the n members, hex, then the attempts. Returns how many records were removed.
RELEASE = """
local n = tonumber(ARGV[1])
local hex = ARGV[n + 2]
local value = redis.call('HGET', KEYS[n + 1], hex)
if not value then return 0 end
local doomed = {}
for i = n + 3, #ARGV do doomed[ARGV[i]] = true end
local keep, removed = {}, 0
for _, r in ipairs(cjson.decode(value)) do
  if doomed[r[1]] then removed = removed + 1 else keep[#keep + 1] = r end
end
if removed == 0 then return 0 end
if #keep == 0 then
  redis.call('HDEL', KEYS[n + 1], hex)
  for t = 1, n do redis.call('SREM', KEYS[t], ARGV[1 + t]) end
else
  redis.call('HSET', KEYS[n + 1], hex, cjson.encode(keep))
end
return removed
"""

# Restore a committed entry as given (import, rebuild). KEYS: the n set keys, the hash.
# ARGV: n, the n members, hex, txn, record tail, only_if_absent (exact: a digest once).
# Returns 1 if stored.
STORE = (
    _APPEND
    + """
local n = tonumber(ARGV[1])
local hex, txn, tail = ARGV[n + 2], ARGV[n + 3], ARGV[n + 4]
if ARGV[n + 5] == '1' then
  local existing = redis.call('HGET', KEYS[n + 1], hex)
  if existing then
    if string.find(existing, '["' .. txn .. '"', 1, true) then return 1 end  -- sent again
    return 0
  end
end
local sets, members = {}, {}
for t = 1, n do sets[t] = KEYS[t]; members[t] = ARGV[1 + t] end
append(KEYS[n + 1], hex, '["' .. txn .. '",' .. tail .. ',1]', txn, sets, members)
return 1
"""
)

# The state of an attempt at the home of its key: 'c' committed (its entry is listed under
# the key), 'a' aborted, 'p' pending; with wound = 1 a pending attempt is aborted. An answer
# that another client's write decided touches the counters, so that WAIT after it also
# waits for that write to reach the replica.
# KEYS: the keys hash, the attempt's abort record, the counters.
# ARGV: key, txn, wound, abort ttl (s).
RESOLVE = """
local listed = redis.call('HGET', KEYS[1], ARGV[1])
if listed and string.find(listed, ':' .. ARGV[2] .. ':', 1, true) then
  redis.call('HSET', KEYS[3], 'seen', ARGV[2])
  return 'c'
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('HSET', KEYS[3], 'seen', ARGV[2])
  return 'a'
end
if ARGV[3] == '1' then
  redis.call('SET', KEYS[2], 'a', 'EX', tonumber(ARGV[4]))
  return 'a'
end
return 'p'
"""

# Keep how the page of member m was analysed, in the page records an, its how (stored
# once a home in hows, both ways: how -> id and '#' .. id -> how) and its text hash in hex.
_ADD_ANALYSED = """
local function add_analysed(an, hows, m, how, text_hash)
  if not how or how == '' then return end
  local id = redis.call('HGET', hows, how)
  if not id then
    id = redis.call('HINCRBY', hows, '#', 1)
    redis.call('HSET', hows, how, id, '#' .. id, how)
  end
  redis.call('HSET', an, m, id .. ':' .. text_hash)
end
"""

# Phase 2, the decisive write: unless aborted (or too old to be sure its abort record would
# still be there), list the attempt's entry as the key's only one, in the order, and count
# it; keep its anchors and its sketch (if any) in the page anchors and sketches. Returns
# {1, the entries listed before (JSON), their anchors (JSON, '' for none)} or {0} when
# aborted.
# KEYS: the keys hash, the order, the counters, the abort record, the page anchors, the
#       page sketches, the page records, the hows.
# ARGV: key, listed member, added_at, the attempt's time (us), max age (s), abort ttl (s),
#       the page's anchors ('[words, cover, [hashes]]', '' for none), its packed sketch
#       in hex ('' for none), how it was analysed ('' for no record), its text hash in hex.
COMMIT = (
    _ADD_ANALYSED
    + """
if redis.call('EXISTS', KEYS[4]) == 1 then return {0} end
local now = redis.call('TIME')
if tonumber(now[1]) * 1e6 + tonumber(now[2]) - tonumber(ARGV[4]) > tonumber(ARGV[5]) * 1e6 then
  redis.call('SET', KEYS[4], 'a', 'EX', tonumber(ARGV[6]))
  return {0}
end
local key, member = ARGV[1], ARGV[2]
local listed = redis.call('HGET', KEYS[1], key)
local old = listed and cjson.decode(listed) or {}
for _, m in ipairs(old) do if m == member then return {1, '[]', '[]'} end end
local anchors = {}
for i, m in ipairs(old) do
  redis.call('ZREM', KEYS[2], m .. ':' .. key)
  anchors[i] = redis.call('HGET', KEYS[5], m) or ''
  redis.call('HDEL', KEYS[5], m)
  redis.call('HDEL', KEYS[6], m)
  redis.call('HDEL', KEYS[7], m)
end
redis.call('HSET', KEYS[1], key, cjson.encode({member}))
redis.call('ZADD', KEYS[2], ARGV[3], member .. ':' .. key)
redis.call('HINCRBY', KEYS[3], 'pages', 1 - #old)
if ARGV[7] and ARGV[7] ~= '' then redis.call('HSET', KEYS[5], member, ARGV[7]) end
if ARGV[8] and ARGV[8] ~= '' then redis.call('HSET', KEYS[6], member, ARGV[8]) end
add_analysed(KEYS[7], KEYS[8], member, ARGV[9], ARGV[10])
if #old == 0 then return {1, '[]', '[]'} end
return {1, listed, cjson.encode(anchors)}
"""
)

# Restore an entry under its key (import): skipped when the key lists the same fingerprint
# (1 when this very entry is listed: the call was sent again).
# KEYS: the keys hash, the order, the counters, the page anchors, the page sketches, the
#       page records, the hows.
# ARGV: key, member, added_at, hex, the page's anchors ('' for none), its sketch ('' for
# none), how it was analysed ('' for no record), its text hash in hex. Returns 1 if listed.
STORE_HOME = (
    _ADD_ANALYSED
    + """
local key, member = ARGV[1], ARGV[2]
local listed = redis.call('HGET', KEYS[1], key)
local all = listed and cjson.decode(listed) or {}
for _, m in ipairs(all) do if m == member then return 1 end end  -- sent again
if string.sub(member, 1, 1) == 'f' then
  for _, m in ipairs(all) do
    if string.sub(m, 1, 2) == 'f:' and string.sub(m, -16) == ARGV[4] then return 0 end
  end
end
all[#all + 1] = member
redis.call('HSET', KEYS[1], key, cjson.encode(all))
redis.call('ZADD', KEYS[2], ARGV[3], member .. ':' .. key)
redis.call('HINCRBY', KEYS[3], 'pages', 1)
if ARGV[5] ~= '' then redis.call('HSET', KEYS[4], member, ARGV[5]) end
if ARGV[6] and ARGV[6] ~= '' then redis.call('HSET', KEYS[5], member, ARGV[6]) end
add_analysed(KEYS[6], KEYS[7], member, ARGV[7], ARGV[8])
return 1
"""
)

# Unlist entries of a key (forget, expire): ARGV: key, then the members ('*': all).
# KEYS: the keys hash, the order, the counters, the page anchors, the page sketches, the
#       page records. Returns the members removed, each followed by its anchors ('' for
#       none).
UNLIST = """
local key = ARGV[1]
local listed = redis.call('HGET', KEYS[1], key)
if not listed then return {} end
local doomed, all = {}, ARGV[2] == '*'
for i = 2, #ARGV do doomed[ARGV[i]] = true end
local keep, removed, count = {}, {}, 0
for _, m in ipairs(cjson.decode(listed)) do
  if all or doomed[m] then
    count = count + 1
    removed[#removed + 1] = m
    removed[#removed + 1] = redis.call('HGET', KEYS[4], m) or ''
    redis.call('HDEL', KEYS[4], m)
    if KEYS[5] then redis.call('HDEL', KEYS[5], m) end
    if KEYS[6] then redis.call('HDEL', KEYS[6], m) end
    redis.call('ZREM', KEYS[2], m .. ':' .. key)
  else
    keep[#keep + 1] = m
  end
end
if #keep == 0 then redis.call('HDEL', KEYS[1], key)
else redis.call('HSET', KEYS[1], key, cjson.encode(keep)) end
redis.call('HINCRBY', KEYS[3], 'pages', -count)
return removed
"""

# Paragraph anchors in an anchor slot: the field of an anchor holds the records of the
# pages holding it, [[txn, key, "added_at", committed, hex, words, cover, [hashes]], ...]
# (each record carries the page's whole list of anchors, so that a check that meets
# another in the slot of one shared anchor can tell containment on its own), or 'b' once
# its sightings are full (see scrapy_simhash.index.rule: boilerplate for every page, no
# evidence, for good). Its sightings, the pages seen holding it, are in the `seen` hash
# beside it (see SIGHT); records count nothing, pending or aborted ones included.
#
# Phase 1 in an anchor slot (and restoring an export, committed = 1): the records of the
# page's anchors there, as they were, and the page's own added (unless there already),
# its sighting with it.
# KEYS: the anchors hash, the seen hash. ARGV: txn, record tail, hex, words, cover, hashes
# (JSON), reserve, committed, the page's sighting, then the page's anchors in this slot.
# Returns JSON [[anchor, 'b' or its records without the page's own, its sightings], ...].
CHECK_ANCHORS = (
    SIGHT
    + """
local txn = ARGV[1]
local record = '["' .. txn .. '",' .. ARGV[2] .. ',' .. ARGV[8] .. ',"' .. ARGV[3] .. '",'
  .. ARGV[4] .. ',' .. ARGV[5] .. ',' .. ARGV[6] .. ']'
local page = nil
if ARGV[7] == '1' then page = ARGV[9] end
local found = {}
for i = 10, #ARGV do
  local h = ARGV[i]
  local value = redis.call('HGET', KEYS[1], h)
  if value == 'b' then
    found[#found + 1] = {h, 'b', ''}
  else
    local seen = sight(KEYS[2], h, page)
    local records, others, mine = value and cjson.decode(value) or {}, {}, false
    for _, r in ipairs(records) do
      if r[1] == txn then mine = true else others[#others + 1] = r end
    end
    found[#found + 1] = {h, others, seen}
    local _, count = string.gsub(seen, ',', ',')
    if count + 1 >= --MAX_SIGHTINGS-- then
      redis.call('HSET', KEYS[1], h, 'b')
      redis.call('HDEL', KEYS[2], h)
    elseif ARGV[7] == '1' and not mine then
      if value then
        redis.call('HSET', KEYS[1], h, string.sub(value, 1, -2) .. ',' .. record .. ']')
      else
        redis.call('HSET', KEYS[1], h, '[' .. record .. ']')
      end
    end
  end
end
return cjson.encode(found)
"""
)

# Mark (ARGV[2] = '1') or remove ('0') the records of attempt ARGV[1] under the anchors
# ARGV[3...]. KEYS: the anchors hash. Returns how many records changed.
SETTLE_ANCHORS = """
local txn, commit, changed = ARGV[1], ARGV[2] == '1', 0
for i = 3, #ARGV do
  local value = redis.call('HGET', KEYS[1], ARGV[i])
  if value and value ~= 'b' then
    local keep, here = {}, 0
    for _, r in ipairs(cjson.decode(value)) do
      if r[1] ~= txn then keep[#keep + 1] = r
      else
        if not commit or r[4] ~= 1 then here = here + 1 end
        if commit then r[4] = 1; keep[#keep + 1] = r end
      end
    end
    if #keep == 0 then redis.call('HDEL', KEYS[1], ARGV[i])
    elseif here > 0 then redis.call('HSET', KEYS[1], ARGV[i], cjson.encode(keep)) end
    changed = changed + here
  end
end
return changed
"""

CHECK_ANCHORS = CHECK_ANCHORS.replace("--MAX_SIGHTINGS--", str(MAX_SIGHTINGS))
