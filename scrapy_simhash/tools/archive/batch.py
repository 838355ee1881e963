"""A batch of fingerprinted records, and its decisions on one machine.

:class:`Batch` holds records as columns (order, kind, fingerprint, key). :func:`decide_batch`
runs the steps of the job in memory: exact duplicates first, near pairs by sorting
(:mod:`.candidates`), decisions in rounds (:mod:`.decide`). The distributed job runs the
same functions per partition.

Keys: the crawl-time index holds one entry per key, and a page stored again under its key
replaces its old fingerprint (``changed``) or is ``unchanged``. When every key is unique
(the usual archive: one record per URL, or records named by their position) that never
happens and the rounds decide. When a key repeats (in the input, or in the index), the
fingerprints are replayed in order through the package's own in-memory index instead
(:func:`replay`): the same decisions, one record at a time.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from ...index.base import StoredPage
from ...index.blocks import BlockPlan
from ...index.memory import MemoryIndex
from ...sketch import DEFAULT_MIN_SHARE
from .candidates import near_pairs
from .decide import CONTAINED, DROPPED, EXACT, KEPT, NEAR, Edges, Evidence, best_matches, decide
from .texts import Text, find_evidence, rule_matches, rule_of

#: Record kinds, as :class:`~scrapy_simhash.dedup.Analysis` names them.
EMPTY, SIMHASH, SHORT = 0, 1, 2
KIND_CODES = {"empty": EMPTY, "simhash": SIMHASH, "short": SHORT}
#: Statuses, as the index's :data:`~scrapy_simhash.index.base.Status` names them.
STATUSES = ("new", "changed", "unchanged", "duplicate")
NEW, CHANGED, UNCHANGED, DUPLICATE = range(4)
#: ``matched`` of a record that matched nothing.
NO_MATCH = np.iinfo(np.int64).min


@dataclass
class Batch:
    """Records as columns: ``order`` (int64, see :func:`.records.record_order`; pages of
    an index have negative orders, in the order stored), ``kind`` (int8), ``value``
    (uint64: the SimHash or the short text's digest), ``key`` (object: str) and ``text``
    (object: the :class:`~.texts.Text` the rule reads, or ``None``)."""

    order: np.ndarray
    kind: np.ndarray
    value: np.ndarray
    key: np.ndarray
    text: np.ndarray

    @classmethod
    def of(cls, order, kind, value, key=None, text=None) -> Batch:
        order = np.asarray(order, dtype=np.int64)
        if key is None:
            # Unnamed records: each is its own key (never repeated).
            key = np.full(len(order), None, dtype=object)
        texts = np.full(len(order), None, dtype=object)
        if text is not None:
            texts[:] = list(text)
        return cls(
            order,
            np.asarray(kind, dtype=np.int8),
            np.asarray(value, dtype=np.uint64),
            np.asarray(key, dtype=object),
            texts,
        )

    @classmethod
    def concat(cls, parts: list[Batch]) -> Batch:
        parts = [p for p in parts if len(p)] or [cls.of([], [], [], [])]
        return cls(*(np.concatenate([getattr(p, f) for p in parts]) for f in _FIELDS))

    @classmethod
    def of_pages(cls, pages: list[StoredPage]) -> Batch:
        """Pages of an index, in the order stored, as records before every input."""
        n = len(pages)
        return cls.of(
            np.arange(-n, 0),
            [SHORT if p.exact else SIMHASH for p in pages],
            [p.fingerprint for p in pages],
            [p.key for p in pages],
            [Text(p.anchors, p.sketch) if p.anchors or p.sketch else None for p in pages],
        )

    def __len__(self) -> int:
        return len(self.order)

    def take(self, where: np.ndarray) -> Batch:
        return Batch(*(getattr(self, f)[where] for f in _FIELDS))


_FIELDS = ("order", "kind", "value", "key", "text")


@dataclass
class Outcomes:
    """The decision on each record of a batch, aligned with ``order`` (sorted)."""

    order: np.ndarray
    kind: np.ndarray
    value: np.ndarray
    key: np.ndarray
    kept: np.ndarray
    status: np.ndarray
    matched: np.ndarray
    matched_key: np.ndarray
    evidence: np.ndarray
    distance: np.ndarray
    #: How the decisions were made, for the job's report.
    how: str = ""
    #: What the rule read of each record (see :class:`~.texts.Text`), or ``None``.
    text: np.ndarray | None = None


def repeated_keys(records: Batch, stored: Batch) -> int:
    """How many records share a key with another record or a stored page (texts without
    text are never stored and do not count)."""
    keys = np.concatenate([stored.key, records.key[records.kind != EMPTY]])
    keys = keys[np.not_equal(keys, None)]
    if not len(keys):
        return 0
    counts = Counter(keys.tolist())
    if len(counts) == len(keys):
        return 0
    return sum(n for n in counts.values() if n > 1)


def exact_groups(batch: Batch, alone: set[int] = frozenset()) -> tuple[np.ndarray, np.ndarray]:
    """For each record of *batch* (non-empty kinds), the order of the first record with
    the same kind, value and text (as the rule reads it): ``(order, first)``, sorted by
    order. The records of *alone* are groups of their own."""
    ident = np.array(
        [0 if t is None else t.identity() for t in batch.text.tolist()], dtype=np.uint64
    )
    own = np.isin(batch.order, np.fromiter(alone, np.int64, len(alone)))
    ident[own] = batch.order[own].astype(np.uint64)
    sort = np.lexsort((batch.order, ident, own, batch.value, batch.kind))
    kind, value, order = batch.kind[sort], batch.value[sort], batch.order[sort]
    ident, own = ident[sort], own[sort]
    start = np.ones(len(order), dtype=bool)
    start[1:] = (
        (kind[1:] != kind[:-1])
        | (value[1:] != value[:-1])
        | (ident[1:] != ident[:-1])
        | (own[1:] != own[:-1])
    )
    first = order[start][np.cumsum(start) - 1]
    by_order = np.argsort(order, kind="stable")
    return order[by_order], first[by_order]


def decide_batch(
    records: Batch,
    stored: Batch,
    plan: BlockPlan,
    max_distance: int,
    evidence: tuple[Evidence, ...] = (),
    min_share: float = DEFAULT_MIN_SHARE,
) -> Outcomes:
    """Decide every record of *records* against *stored* (the pages of an index) and the
    records before it, as the crawl-time filter does: with texts (anchors, sketches),
    by the rule of :mod:`.texts`; without, by the distance."""
    if repeated_keys(records, stored):
        return replay(records, stored, plan, max_distance, min_share)
    everything = Batch.concat([stored, records.take(records.kind != EMPTY)])
    rule = rule_of(everything, max_distance, min_share)
    order, first = exact_groups(everything, rule.hot_records() if rule else set())
    is_first = order == first
    firsts = everything.take(np.isin(everything.order, order[is_first]))
    simhash = firsts.kind == SIMHASH
    pairs = near_pairs(plan, max_distance, firsts.order[simhash], firsts.value[simhash])
    found = None
    if rule is None:
        edges = [Edges.of(pairs.earlier, pairs.later, NEAR, pairs.distance)]
    else:
        found = find_evidence(rule, pairs, set(firsts.order.tolist()))
        columns = np.array(found.edges, dtype=np.int64).reshape(-1, 4).T
        edges = [Edges(*(c.astype(t) for c, t in zip(columns, _EDGE_TYPES, strict=True)))]
    edges += [test.edges(firsts) for test in evidence]
    edges = Edges.concat(edges)
    edges = _without_stored_pairs(edges)
    decisions = decide(edges, kept=stored.order)
    outcomes = _outcomes(records, stored, order, first, edges, decisions)
    if rule is not None:
        rule_matches(outcomes, rule, found, order, first, edges, decisions)
    return outcomes


_EDGE_TYPES = (np.int64, np.int64, np.int8, np.int8)


def _without_stored_pairs(edges: Edges) -> Edges:
    keep = edges.later >= 0
    return Edges(*(getattr(edges, f)[keep] for f in Edges._fields()))


def _outcomes(records, stored, order, first, edges, decisions) -> Outcomes:
    n = len(records)
    sort = np.argsort(records.order, kind="stable")
    rec = records.take(sort)
    kept = np.ones(n, dtype=bool)
    status = np.full(n, NEW, dtype=np.int8)
    matched = np.full(n, NO_MATCH, dtype=np.int64)
    evidence = np.zeros(n, dtype=np.int8)
    distance = np.zeros(n, dtype=np.int8)
    at = np.searchsorted(rec.order, decisions.orders)
    mine = decisions.orders >= 0
    kept[at[mine]] = decisions.state[mine] == KEPT
    dropped, match, ev, dist = best_matches(edges, decisions)
    where = np.searchsorted(rec.order, dropped)
    matched[where], evidence[where], distance[where] = match, ev, dist
    # Exact duplicates: dropped; the match is the first of their group when it was kept,
    # else the nearest kept neighbour of the group's fingerprint stored before them.
    follower = (order != first) & (order >= 0)
    f_order, f_first = order[follower], first[follower]
    where = np.searchsorted(rec.order, f_order)
    kept[where] = False
    first_kept = _kept(f_first, decisions)
    matched[where[first_kept]] = f_first[first_kept]
    evidence[where[first_kept]] = np.where(rec.kind[where[first_kept]] == SHORT, EXACT, NEAR)
    distance[where[first_kept]] = 0
    late = ~first_kept
    found = _nearest_kept_before(edges, decisions, f_first[late], f_order[late])
    matched[where[late]], evidence[where[late]], distance[where[late]] = found
    status[~kept] = DUPLICATE
    return Outcomes(
        rec.order,
        rec.kind,
        rec.value,
        rec.key,
        kept,
        status,
        matched,
        _keys_of(matched, rec, stored),
        evidence,
        distance,
        f"in rounds ({decisions.rounds} rounds, {decisions.finished_in_order} records "
        "finished in order)",
        rec.text,
    )


def _kept(orders: np.ndarray, decisions) -> np.ndarray:
    """Kept: stored pages, records with no earlier neighbour, and records decided kept."""
    at = np.searchsorted(decisions.orders, orders).clip(0, max(len(decisions.orders) - 1, 0))
    if not len(decisions.orders):
        return np.ones(len(orders), dtype=bool)
    found = decisions.orders[at] == orders
    return ~found | (decisions.state[at] == KEPT) | (orders < 0)


def _nearest_kept_before(edges: Edges, decisions, firsts: np.ndarray, before: np.ndarray):
    """For each exact duplicate whose group's first record was dropped (*firsts*, and its
    own order *before*): the match the index reports, among the kept neighbours of the
    group's fingerprint stored before it: the smallest (evidence, distance, order)."""
    if not len(firsts):
        return np.empty(0, np.int64), np.empty(0, np.int8), np.empty(0, np.int8)
    wanted = np.unique(firsts)
    ends = (edges.earlier, edges.later)
    group, other, ev, dist = [], [], [], []
    for this, that in (ends, ends[::-1]):
        pick = np.isin(this, wanted)
        group.append(this[pick])
        other.append(that[pick])
        ev.append(edges.evidence[pick])
        dist.append(edges.distance[pick])
    group, other, ev, dist = (np.concatenate(a) for a in (group, other, ev, dist))
    keep = _kept(other, decisions)
    group, other, ev, dist = group[keep], other[keep], ev[keep], dist[keep]
    sort = np.lexsort((other, group))
    group, other, ev, dist = group[sort], other[sort], ev[sort], dist[sort]
    out = (np.empty(len(firsts), np.int64), np.empty(len(firsts), np.int8))
    out = (*out, np.empty(len(firsts), np.int8))
    starts = np.searchsorted(group, firsts)
    ends_at = np.searchsorted(group, firsts, side="right")
    by_first = np.argsort(firsts, kind="stable")
    # One pass per group: a running best over its kept neighbours sorted by order, read
    # at the last neighbour before each duplicate.
    bounds = np.flatnonzero(np.r_[True, firsts[by_first][1:] != firsts[by_first][:-1]])
    for lo, hi in zip(bounds, np.r_[bounds[1:], len(by_first)], strict=True):
        rows = by_first[lo:hi]
        a, b = starts[rows[0]], ends_at[rows[0]]
        score = ev[a:b].astype(np.int64) * 256 + dist[a:b]
        best = np.zeros(b - a, dtype=np.int64)
        for k in range(1, b - a):
            best[k] = k if score[k] < score[best[k - 1]] else best[k - 1]
        at = np.searchsorted(other[a:b], before[rows]) - 1
        pick = a + best[at]
        out[0][rows], out[1][rows], out[2][rows] = other[pick], ev[pick], dist[pick]
    return out


def _keys_of(matched: np.ndarray, records: Batch, stored: Batch) -> np.ndarray:
    every = Batch.concat([stored, records])
    sort = np.argsort(every.order)
    orders, keys = every.order[sort], every.key[sort]
    found = matched != NO_MATCH
    out = np.full(len(matched), None, dtype=object)
    out[found] = keys[np.searchsorted(orders, matched[found])]
    return out


def replay(
    records: Batch,
    stored: Batch,
    plan: BlockPlan,
    max_distance: int,
    min_share: float = DEFAULT_MIN_SHARE,
) -> Outcomes:
    """The decisions of the package's own index, one record at a time in order: exact
    whatever the keys (a repeated key replaces or matches its own entry)."""
    index = MemoryIndex(max_distance=max_distance, blocks=plan.blocks)
    index.min_share = min_share
    index.add_pages(
        StoredPage(
            k,
            int(v),
            0.0,
            exact=bool(kd == SHORT),
            anchors=t.anchors if t else None,
            sketch=t.sketch if t else None,
        )
        for k, v, kd, t in zip(stored.key, stored.value, stored.kind, stored.text, strict=True)
    )
    # The order of the newest entry under each key, to name a match by its record.
    newest = dict(zip(stored.key.tolist(), stored.order.tolist(), strict=True))
    rec = records.take(np.argsort(records.order, kind="stable"))
    kept, status, matched, matched_key, evidence, distance = _replayed(rec, index, newest)
    return Outcomes(
        rec.order,
        rec.kind,
        rec.value,
        rec.key,
        kept,
        status,
        matched,
        matched_key,
        evidence,
        distance,
        "in order through the index (keys repeat)",
        rec.text,
    )


def _replayed(rec: Batch, index: MemoryIndex, newest: dict) -> tuple[np.ndarray, ...]:
    """The columns of :func:`replay`'s outcomes (kept, status, matched, matched key,
    evidence, distance): the records of *rec*, sorted, checked into *index* one at a
    time; *newest* (key -> order of the newest record under it) follows them."""
    n = len(rec)
    kept = np.ones(n, dtype=bool)
    status = np.full(n, NEW, dtype=np.int8)
    matched = np.full(n, NO_MATCH, dtype=np.int64)
    evidence = np.zeros(n, dtype=np.int8)
    distance = np.zeros(n, dtype=np.int8)
    matched_key = np.full(n, None, dtype=object)
    for row, (order, kind, value, key, text) in enumerate(
        zip(
            rec.order.tolist(),
            rec.kind.tolist(),
            rec.value.tolist(),
            rec.key.tolist(),
            rec.text.tolist(),
            strict=True,
        )
    ):
        if kind == EMPTY:
            continue
        if kind == SIMHASH:
            text = text or Text()
            outcome = index.check_and_add(value, key, text.anchors, text.sketch)
        else:
            outcome = index.check_and_add_exact(value, key)
        status[row] = STATUSES.index(outcome.status)
        if outcome.match is None:
            newest[key] = order
            continue
        kept[row] = False
        matched[row] = newest[outcome.match.key]
        matched_key[row] = outcome.match.key
        evidence[row] = EXACT if kind == SHORT else CONTAINED if outcome.match.shared else NEAR
        distance[row] = outcome.match.distance
    return kept, status, matched, matched_key, evidence, distance


__all__ = ["DROPPED", "Batch", "Outcomes", "decide_batch", "replay"]
