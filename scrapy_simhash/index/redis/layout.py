"""The key layout of a Redis index, and how fingerprints and records map onto it.

Every key of an index starts with ``{prefix}:`` (default prefix ``simhash``)::

    {simhash}:meta              hash    format, version, max_distance, blocks, features,
                                        bucket_bits, created_at: checked on every open
    {simhash}:n                 hash    pages (the count), seq (the last sequence number)
    {simhash}:t:<table>:<bucket> set    one per table and bucket: the fingerprints whose
                                        table key starts with <bucket>, as integers
    {simhash}:fp                hash    fingerprint (16 hex digits) -> [[seq, key, "added_at"]]
    {simhash}:exact             hash    text digest (16 hex digits) -> [seq, key, "added_at"]
    {simhash}:order             zset    one member per stored page, "f:<seq>:<hex>" (or
                                        "x:..." for exact entries), scored by the time stored:
                                        pages() in order, expiry by time, both in batches
    {simhash}:keys              hash    key -> the order members of its entries (JSON list):
                                        a check replaces what its key stored, find/forget
                                        read one field
    {simhash}:drops             stream  the audit log (key, kept, distance, exact, at, and
                                        unchanged=1 for a page unchanged since stored,
                                        shared=<n> for a page dropped as contained,
                                        share=<f> the share of its text the kept one holds)
    {simhash}:anchors           hash    paragraph anchor (decimal) -> "<count>|<seq>,<seq>":
                                        how many stored pages hold it, and the sequence
                                        numbers of the first MAX_ANCHOR_PAGES + 1 of them
                                        (an anchor on more pages is boilerplate)
    {simhash}:seen              hash    paragraph anchor (decimal) -> "<page>,<page>,...":
                                        its sightings, the pages seen holding it, kept
                                        or dropped (see scrapy_simhash.index.rule)
    {simhash}:pa                hash    seq -> [hex, words, cover, anchor, ...]: a page's
                                        anchors (see scrapy_simhash.anchors), removed with it
    {simhash}:sk                hash    seq -> the page's sketch (scrapy_simhash.sketch,
                                        Sketch.pack in hex), removed with it
    {simhash}:an                hash    seq -> "<how id>:<text hash in hex>": how the page
                                        was analysed (scrapy_simhash.index.analysed),
                                        removed with it; absent for pages stored without
    {simhash}:how               hash    how -> id and "#<id>" -> how, each distinct how
                                        once; "#" -> the last id given

**Tables and buckets.** For each table of the block plan a fingerprint's bits are
rearranged so that the table's key comes first (see :mod:`scrapy_simhash.index.blocks`). The
first ``bucket_bits`` bits (default 16) name the set; the remaining ``64 - bucket_bits``
bits (at most 52) are the member, so a member is an exact Lua number and the sets stay
compact intsets (8 bytes a member) until they hold 512 members. A probe reads one set per
table and keeps the members whose remaining key bits are equal; the other bits are
compared in two 24-bit halves (Lua's ``bit`` library is 32-bit).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ...exceptions import ConfigurationError
from ..base import IndexParameters
from ..blocks import BlockPlan

#: The value of ``format`` in ``{prefix}:meta``: marks our keys.
FORMAT = "scrapy-simhash"
#: Bumped with every change of the key layout above (2: the order of pages; 3: the keys
#: hash, and order members that start with their kind; 4: paragraph anchors, and the
#: anchors' format in the meta hash; 5: text sketches, and their format in the meta hash;
#: 6: the anchors' sightings).
LAYOUT_VERSION = 6
#: The layout before the anchors: upgraded by ``scrapy-simhash upgrade`` only.
PRE_ANCHORS_VERSION = 3
#: The layout before the sketches: upgraded by ``scrapy-simhash upgrade`` only.
PRE_SKETCH_VERSION = 4
#: The layout before sightings: upgraded by ``scrapy-simhash upgrade`` only.
PRE_SEEN_VERSION = 5
DEFAULT_PREFIX = "simhash"
DEFAULT_BUCKET_BITS = 16
#: Members must be exact Lua numbers (doubles): at most 52 bits.
MAX_MEMBER_BITS = 52


@dataclass(frozen=True)
class TableLayout:
    """How one table's key and the remaining bits of a fingerprint map to a set and a member."""

    key_blocks: tuple[tuple[int, int], ...]  #: (shift, width) of the key's blocks, first = top
    rest_blocks: tuple[tuple[int, int], ...]  #: the other blocks, first = top
    key_bits: int
    rest_bits: int
    bucket_bits: int

    @property
    def rest_mask(self) -> int:
        """The bits of a fingerprint outside this table's key."""
        return sum(((1 << width) - 1) << shift for shift, width in self.rest_blocks)

    def lua(self) -> str:
        """``{rest_bits, {position in rest, width, shift}, ...}`` for the add script."""
        parts, position = [], self.rest_bits
        for shift, width in self.rest_blocks:
            position -= width
            parts.append(f"{{{position}, {width}, {shift}}}")
        return "{" + ", ".join([str(self.rest_bits), *parts]) + "}"

    def split(self, fingerprint: int) -> tuple[int, int]:
        """(bucket, member) of *fingerprint* in this table."""
        key = rest = 0
        for shift, width in self.key_blocks:
            key = (key << width) | ((fingerprint >> shift) & ((1 << width) - 1))
        for shift, width in self.rest_blocks:
            rest = (rest << width) | ((fingerprint >> shift) & ((1 << width) - 1))
        low_bits = self.key_bits - self.bucket_bits
        bucket = key >> low_bits
        member = ((key & ((1 << low_bits) - 1)) << self.rest_bits) | rest
        return bucket, member

    def join(self, bucket: int, member: int) -> int:
        """The fingerprint stored as *member* of the set *bucket*."""
        low_bits = self.key_bits - self.bucket_bits
        key = (bucket << low_bits) | (member >> self.rest_bits)
        rest = member & ((1 << self.rest_bits) - 1)
        fingerprint = 0
        for blocks, value in ((self.key_blocks, key), (self.rest_blocks, rest)):
            for shift, width in reversed(blocks):
                fingerprint |= (value & ((1 << width) - 1)) << shift
                value >>= width
        return fingerprint


def table_layouts(parameters: IndexParameters, bucket_bits: int) -> list[TableLayout]:
    plan = parameters.plan
    layouts = []
    for table in plan.tables:
        key_blocks = tuple(plan.spans[i] for i in table)
        rest_blocks = tuple(plan.spans[i] for i in range(plan.blocks) if i not in table)
        key_bits = sum(width for _, width in key_blocks)
        bits = min(bucket_bits, key_bits)
        if plan.bits - bits > MAX_MEMBER_BITS:
            raise ConfigurationError(
                f"The Redis index needs table keys of at least {plan.bits - MAX_MEMBER_BITS} "
                f"bits, but max_distance={plan.max_distance} with blocks={plan.blocks} makes "
                f"{key_bits}-bit keys; {blocks_advice(plan.max_distance)}"
            )
        layouts.append(TableLayout(key_blocks, rest_blocks, key_bits, plan.bits - key_bits, bits))
    return layouts


def with_layouts(script: str, layouts: list[TableLayout]) -> str:
    """*script* with its ``--LAYOUTS--`` written as the Lua table of *layouts*."""
    return script.replace("--LAYOUTS--", "{" + ", ".join(t.lua() for t in layouts) + "}")


def blocks_advice(max_distance: int) -> str:
    """Which numbers of blocks give keys long enough for Redis members (at most 52 bits)."""
    usable = []
    for blocks in range(max_distance + 1, 65):
        try:
            plan = BlockPlan(max_distance=max_distance, blocks=blocks)
        except ConfigurationError:
            continue
        if min(plan.key_bits(t) for t in range(plan.table_count)) >= 64 - MAX_MEMBER_BITS:
            usable.append(blocks)
    if not usable:
        return (
            f"no block plan for max_distance={max_distance} fits; "
            "use SQLite, or a smaller max_distance"
        )
    return f"use blocks={usable[0]}" + (f" to {usable[-1]}" if len(usable) > 1 else "")


def hex64(value: int) -> str:
    return f"{value:016x}"


def record_tail(key: str, added_at: float) -> str:
    """The end of a stored record: ``"key","added_at"`` (the time as a string keeps every
    digit through Lua's cjson)."""
    return json.dumps(key, ensure_ascii=False) + "," + json.dumps(repr(float(added_at)))


def records(value: str) -> list[tuple[int, str, float]]:
    """The ``(seq, key, added_at)`` records of one stored fingerprint."""
    return [(int(seq), key, float(at)) for seq, key, at in json.loads(value)]


def order_member(exact: bool, seq: int, hex_value: str) -> str:
    """The member of ``{prefix}:order`` for an entry: at the same time, fingerprints sort
    before exact entries, each in the order stored (the sequence number)."""
    return f"{'x' if exact else 'f'}:{seq:016d}:{hex_value}"


def parse_member(member: str) -> tuple[bool, int, str]:
    """(exact, seq, hex) of an order member."""
    kind, seq, hex_value = member.split(":")
    return kind == "x", int(seq), hex_value
