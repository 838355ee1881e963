"""The Lua functions the scripts of :mod:`~.scripts` are built from, prepended to each
script that needs them (a script is one EVAL: it cannot call another).

``SIGHT`` and ``SCAN`` serve both layouts (:mod:`~.spread_scripts` too); ``PAGE_FUNCTIONS``
keep a page's entries in step in the single-slot layout (its order member, its entry in
the keys hash, its anchors, sketch and record of how it was analysed). Apart from the
scripts because they are the vocabulary the scripts share, not scripts of their own.
"""

from __future__ import annotations

__all__ = ["PAGE_FUNCTIONS", "SCAN", "SIGHT"]

# The sightings of anchor field f in the hash `seen` (see scrapy_simhash.index.rule):
# "<page>,<page>,...", with page (a decimal string) added unless listed or the list full;
# page nil reads only. Returns the list, as stored.
SIGHT = """
local function sight(seen, f, page)
  local v = redis.call('HGET', seen, f) or ''
  if page == nil then return v end
  local count = 0
  for listed in string.gmatch(v, '[^,]+') do
    if listed == page then return v end
    count = count + 1
  end
  if count >= --MAX_SIGHTINGS-- then return v end
  if v == '' then v = page else v = v .. ',' .. page end
  redis.call('HSET', seen, f, v)
  return v
end
"""

# The functions of the single-slot layout's pages. replace(): remove every entry listed
# under `key` in the keys hash. ARGV[base] = m, then per old fingerprint j: its hex and its
# n members; its n set keys are KEYS[sets + (j - 1) * n + t]. Returns the number of entries
# removed, or nil and the hex of a fingerprint whose sets were not given.
PAGE_FUNCTIONS = (
    SIGHT
    + """
local ANCHOR_TAG = string.match(KEYS[1], '^({.-}:)')
-- Remove the paragraph anchors of the page with sequence number seq (see redis_layout).
local function drop_anchors(seq)
  local pages, counts = ANCHOR_TAG .. 'pa', ANCHOR_TAG .. 'anchors'
  local s = string.format('%.0f', seq)
  local v = redis.call('HGET', pages, s)
  if not v then return end
  local p = cjson.decode(v)
  for i = 4, #p do
    local h = string.format('%.0f', p[i])
    local a = redis.call('HGET', counts, h)
    if a then
      local count, listed = string.match(a, '^(%d+)|(.*)$')
      count = tonumber(count) - 1
      if count <= 0 then
        redis.call('HDEL', counts, h)
      else
        local keep = {}
        for x in string.gmatch(listed, '%d+') do if x ~= s then keep[#keep + 1] = x end end
        redis.call('HSET', counts, h, count .. '|' .. table.concat(keep, ','))
      end
    end
  end
  redis.call('HDEL', pages, s)
end
-- Remove the record of how page seq was analysed (see redis_layout).
local function drop_analysed(seq)
  redis.call('HDEL', ANCHOR_TAG .. 'an', string.format('%.0f', seq))
end
-- Store how page seq was analysed: its how (stored once in {prefix}:how, both ways:
-- how -> id and '#' .. id -> how) and its text hash in hex ('' for no record).
local function add_analysed(seq, how, text_hash)
  if not how or how == '' then return end
  local hows = ANCHOR_TAG .. 'how'
  local id = redis.call('HGET', hows, how)
  if not id then
    id = redis.call('HINCRBY', hows, '#', 1)
    redis.call('HSET', hows, how, id, '#' .. id, how)
  end
  redis.call('HSET', ANCHOR_TAG .. 'an', string.format('%.0f', seq), id .. ':' .. text_hash)
end
-- Remove the sketch of page seq, its anchors and its record (see redis_layout).
local function drop_page(seq)
  redis.call('HDEL', ANCHOR_TAG .. 'sk', string.format('%.0f', seq))
  drop_anchors(seq)
  drop_analysed(seq)
end
-- Store the sketch (packed, in hex; '' for none) of page seq.
local function add_sketch(seq, sketch)
  if sketch and sketch ~= '' then
    redis.call('HSET', ANCHOR_TAG .. 'sk', string.format('%.0f', seq), sketch)
  end
end
-- Store the anchors (decoded from the JSON [words, cover, [hashes], ...]) of page seq.
local function add_anchors(seq, hex, a)
  local pages, counts = ANCHOR_TAG .. 'pa', ANCHOR_TAG .. 'anchors'
  local s = string.format('%.0f', seq)
  local stored = {hex, a[1], a[2]}
  for _, h in ipairs(a[3]) do
    stored[#stored + 1] = h
    local f = string.format('%.0f', h)
    if a[5] then sight(ANCHOR_TAG .. 'seen', f, string.format('%.0f', a[5])) end
    local v = redis.call('HGET', counts, f)
    if v then
      local count, listed = string.match(v, '^(%d+)|(.*)$')
      count = tonumber(count)
      if count <= --MAX_ANCHOR_PAGES-- then listed = listed .. ',' .. s end
      redis.call('HSET', counts, f, (count + 1) .. '|' .. listed)
    else
      redis.call('HSET', counts, f, '1|' .. s)
    end
  end
  redis.call('HSET', pages, s, cjson.encode(stored))
end
local function list(keys_hash, key, member)
  local v = redis.call('HGET', keys_hash, key)
  local all = v and cjson.decode(v) or {}
  all[#all + 1] = member
  redis.call('HSET', keys_hash, key, cjson.encode(all))
end
local function unlist(keys_hash, key, member)
  local v = redis.call('HGET', keys_hash, key)
  if not v then return end
  local keep = {}
  for _, m in ipairs(cjson.decode(v)) do if m ~= member then keep[#keep + 1] = m end end
  if #keep == 0 then redis.call('HDEL', keys_hash, key)
  else redis.call('HSET', keys_hash, key, cjson.encode(keep)) end
end
local function replace(keys_hash, fp_hash, exact_hash, counters, order, key, n, sets, base)
  local current = redis.call('HGET', keys_hash, key)
  if not current then return 0 end
  local given = {}
  for j = 1, tonumber(ARGV[base]) do given[ARGV[base + 1 + (j - 1) * (n + 1)]] = j end
  local removed = 0
  for _, member in ipairs(cjson.decode(current)) do
    local kind, seq, hex = string.match(member, '^(%a):(%d+):(%x+)$')
    seq = tonumber(seq)
    redis.call('ZREM', order, member)
    if kind == 'x' then
      local v = redis.call('HGET', exact_hash, hex)
      if v and cjson.decode(v)[1] == seq then
        redis.call('HDEL', exact_hash, hex)
        drop_analysed(seq)
        removed = removed + 1
      end
    else
      local v = redis.call('HGET', fp_hash, hex)
      if v then
        local keep, gone = {}, 0
        for _, r in ipairs(cjson.decode(v)) do
          if r[1] == seq then gone = gone + 1 else keep[#keep + 1] = r end
        end
        if gone > 0 then drop_page(seq) end
        if gone > 0 and #keep == 0 then
          local j = given[hex]
          if not j then return nil, hex end
          redis.call('HDEL', fp_hash, hex)
          local at = base + 1 + (j - 1) * (n + 1)
          for t = 1, n do redis.call('SREM', KEYS[sets + (j - 1) * n + t], ARGV[at + t]) end
        elseif gone > 0 then
          redis.call('HSET', fp_hash, hex, cjson.encode(keep))
        end
        removed = removed + gone
      end
    end
  end
  redis.call('HDEL', keys_hash, key)
  redis.call('HINCRBY', counters, 'pages', -removed)
  return removed
end
"""
)

# Shared by the check scripts of both layouts: with LAYOUTS, n, k, the probe's members in
# ARGV[3t - 1] and its bits in ARGV[3t], ARGV[3t + 1], collect in `near` the {distance,
# table, rest} of every member of the n sets KEYS[1..n] within k; rebuild(t, r) gives the
# hex of the fingerprint stored as rest r of table t.
SCAN = """
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
"""
