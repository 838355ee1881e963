"""Near-duplicate pairs of a batch of fingerprints, by sorting instead of probing.

The block plan (:mod:`scrapy_simhash.blocks`) guarantees that two fingerprints within the
distance share the key of at least one table. So every fingerprint is exploded into one
``(table, key)`` row per table, the rows are grouped (a sort here; a shuffle on a
cluster), buckets of one member are dropped, and the members of each bucket are compared
by popcount. A pair that shares the keys of several tables is reported by the first of
them only (:func:`first_shared_table`), so that buckets can be compared anywhere, in any
order, and still report each pair once.

Everything works on numpy arrays of ``uint64`` fingerprints; the same functions serve the
local mode (one sort per table) and each partition of a distributed job.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np

from ...index.blocks import BlockPlan

#: Above this many records, a plan with one more block than the index's default keeps
#: the number of candidate pairs close to linear (see :func:`choose_plan`).
MANY_RECORDS = 100_000_000


#: Set bits of every byte value: the popcount of NumPy 1, which has no ``bitwise_count``.
_BYTE_BITS = np.array([bin(b).count("1") for b in range(256)], dtype=np.int8)


def popcount(values: np.ndarray) -> np.ndarray:
    """Number of set bits of each ``uint64`` in *values*."""
    values = values.astype(np.uint64, copy=False)
    if hasattr(np, "bitwise_count"):  # NumPy 2
        return np.bitwise_count(values).astype(np.int8)
    return popcount_by_bytes(values)


def popcount_by_bytes(values: np.ndarray) -> np.ndarray:
    """:func:`popcount` by a table of the bits of each byte (NumPy 1.24 to 1.26)."""
    values = np.ascontiguousarray(values, dtype=np.uint64)
    by_byte = values.view(np.uint8).reshape(len(values), 8)
    return _BYTE_BITS[by_byte].sum(axis=1, dtype=np.int8)


def table_keys(plan: BlockPlan, fingerprints: np.ndarray, table: int) -> np.ndarray:
    """The key of each fingerprint in *table*: the bits of the table's blocks, packed as
    :meth:`BlockPlan.keys` packs them."""
    fingerprints = fingerprints.astype(np.uint64, copy=False)
    key = np.zeros(len(fingerprints), dtype=np.uint64)
    for block in plan.tables[table]:
        shift, width = plan.spans[block]
        part = (fingerprints >> np.uint64(shift)) & np.uint64((1 << width) - 1)
        key = (key << np.uint64(width)) | part
    return key


def first_shared_table(plan: BlockPlan, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For each pair ``(a[i], b[i])``, the first table whose key both share (``-1`` for
    none): the one table that reports the pair."""
    diff = a.astype(np.uint64) ^ b.astype(np.uint64)
    agree = [
        (diff >> np.uint64(shift)) & np.uint64((1 << width) - 1) == 0 for shift, width in plan.spans
    ]
    first = np.full(len(diff), -1, dtype=np.int16)
    for table in reversed(range(plan.table_count)):
        shared = np.logical_and.reduce([agree[block] for block in plan.tables[table]])
        first[shared] = table
    return first


@dataclass(frozen=True)
class Pairs:
    """Pairs of records within the distance: ``earlier[i]`` and ``later[i]`` are record
    orders (``earlier < later``), ``distance[i]`` their Hamming distance."""

    earlier: np.ndarray
    later: np.ndarray
    distance: np.ndarray

    @classmethod
    def empty(cls) -> Pairs:
        return cls(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int8))

    @classmethod
    def concat(cls, parts: list[Pairs]) -> Pairs:
        parts = [p for p in parts if len(p)] or [cls.empty()]
        return cls(
            np.concatenate([p.earlier for p in parts]),
            np.concatenate([p.later for p in parts]),
            np.concatenate([p.distance for p in parts]),
        )

    def __len__(self) -> int:
        return len(self.earlier)


def bucket_pairs(
    plan: BlockPlan,
    max_distance: int,
    table: int,
    keys: np.ndarray,
    orders: np.ndarray,
    fingerprints: np.ndarray,
) -> Pairs:
    """The pairs within *max_distance* among rows of one *table* (``keys``, ``orders``,
    ``fingerprints`` aligned, in any order), reported here only when *table* is the first
    table they share."""
    if len(keys) < 2:
        return Pairs.empty()
    sort = np.argsort(keys, kind="stable")
    keys, orders, fingerprints = keys[sort], orders[sort], fingerprints[sort]
    same_as_next = keys[1:] == keys[:-1]
    # Only members of buckets of two or more: a row whose neighbours have other keys.
    member = np.zeros(len(keys), dtype=bool)
    member[:-1] |= same_as_next
    member[1:] |= same_as_next
    keys, orders, fingerprints = keys[member], orders[member], fingerprints[member]
    found = []
    rows = np.arange(len(keys) - 1)
    offset = 1
    while len(rows):
        # Every pair (row, row + offset) of one bucket; a row with no partner at this
        # offset has none further on either (the bucket is sorted together).
        rows = rows[rows + offset < len(keys)]
        rows = rows[keys[rows] == keys[rows + offset]]
        if not len(rows):
            break
        a, b = rows, rows + offset
        distance = popcount(fingerprints[a] ^ fingerprints[b])
        near = distance <= max_distance
        a, b, distance = a[near], b[near], distance[near]
        once = first_shared_table(plan, fingerprints[a], fingerprints[b]) == table
        a, b, distance = a[once], b[once], distance[once]
        first, second = orders[a], orders[b]
        found.append(
            Pairs(np.minimum(first, second), np.maximum(first, second), distance.astype(np.int8))
        )
        offset += 1
    return Pairs.concat(found)


def near_pairs(
    plan: BlockPlan, max_distance: int, orders: np.ndarray, fingerprints: np.ndarray
) -> Pairs:
    """Every pair within *max_distance* among *fingerprints* (distinct values: exact
    duplicates are set apart before), one sort per table."""
    fingerprints = fingerprints.astype(np.uint64, copy=False)
    return Pairs.concat(
        [
            bucket_pairs(
                plan, max_distance, t, table_keys(plan, fingerprints, t), orders, fingerprints
            )
            for t in range(plan.table_count)
        ]
    )


def expected_candidates(plan: BlockPlan, records: int) -> float:
    """Candidate pairs compared for *records* random fingerprints: ``n**2 / 2`` over
    ``2**key_bits`` per table."""
    return sum(records * records / 2 / 2 ** plan.key_bits(t) for t in range(plan.table_count))


def choose_plan(max_distance: int, blocks: int | None, records: int) -> tuple[BlockPlan, str]:
    """The block plan for a job on *records* records, and why. Any plan finds every pair
    within the distance, so the choice changes the work, never the decisions: *blocks*
    if given; else the plan of ``k + 1`` to ``k + 3`` blocks that costs least, counting
    one row per table and record plus the expected random candidate pairs."""
    if blocks is not None:
        plan = BlockPlan(max_distance=max_distance, blocks=blocks)
        return plan, f"{blocks} blocks, {plan.table_count} tables (as asked)"
    costs = {}
    for b in range(max_distance + 1, max_distance + 4):
        if comb(b, max_distance) > 64:
            continue
        plan = BlockPlan(max_distance=max_distance, blocks=b)
        costs[b] = records * plan.table_count + expected_candidates(plan, records)
    best = min(costs, key=lambda b: (costs[b], b))
    plan = BlockPlan(max_distance=max_distance, blocks=best)
    return plan, (
        f"{best} blocks, {plan.table_count} tables: about "
        f"{expected_candidates(plan, records):,.0f} random candidate pairs for "
        f"{records:,} records"
    )
