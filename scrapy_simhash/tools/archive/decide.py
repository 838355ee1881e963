"""Which records are kept: the crawl-time filter's rule, decided in rounds.

The crawl-time filter sees records one at a time and drops a record when an **earlier
kept** record is evidence against it (within the distance). Over a batch that is the
lexicographically first maximal independent set of the evidence graph in input order,
not its connected components: on a chain v0..v20 of one-bit steps at distance 3 the
filter keeps v0, v4, ..., v20, where components would keep v0 alone.

The rule needs no global order of work, only each record's earlier neighbours: a record
whose earlier neighbours are all dropped is kept, one with an earlier kept neighbour is
dropped. Each round applies that to every undecided record at once (numpy here, one
partition at a time on a cluster); the first undecided record always decides, so rounds
end, and a small undecided remainder is finished in one pass in order
(:func:`finish_in_order`).

Evidence is an edge ``(earlier, later, evidence, distance)``. Near-duplicates
(:data:`NEAR`) are one kind; another test (say, containment) adds edges of its own kind
with :class:`Evidence` and the same rounds decide on all of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

UNDECIDED, KEPT, DROPPED = 0, 1, 2
#: Evidence kinds. ``NEAR``: within the distance; ``EXACT``: the same short text;
#: ``CONTAINED``: sharing long paragraphs (see :mod:`.texts`).
NEAR, EXACT, CONTAINED = 0, 1, 2
EVIDENCE_NAMES = {NEAR: "near", EXACT: "exact", CONTAINED: "contained"}


@dataclass(frozen=True)
class Edges:
    """Evidence against ``later[i]`` if ``earlier[i]`` is kept (record orders), of kind
    ``evidence[i]``; ``distance[i]`` ranks matches of one kind (smaller is nearer)."""

    earlier: np.ndarray
    later: np.ndarray
    evidence: np.ndarray
    distance: np.ndarray

    @classmethod
    def of(cls, earlier, later, evidence: int, distance) -> Edges:
        earlier = np.asarray(earlier, dtype=np.int64)
        return cls(
            earlier,
            np.asarray(later, dtype=np.int64),
            np.full(len(earlier), evidence, dtype=np.int8),
            np.asarray(distance, dtype=np.int8),
        )

    @classmethod
    def concat(cls, parts: list[Edges]) -> Edges:
        parts = [p for p in parts if len(p.earlier)] or [cls.of([], [], NEAR, [])]
        return cls(*(np.concatenate([getattr(p, f) for p in parts]) for f in cls._fields()))

    @staticmethod
    def _fields() -> tuple[str, ...]:
        return ("earlier", "later", "evidence", "distance")

    def __len__(self) -> int:
        return len(self.earlier)


class Evidence(Protocol):
    """A second test that finds edges between the records of a batch (a page contained
    in an earlier one, say). ``kind`` is its code in :attr:`Edges.evidence` (register
    its name in :data:`EVIDENCE_NAMES` for the decisions table); a smaller kind is
    preferred as the reported match of a drop. *records* is a
    :class:`~.batch.Batch` of the first record of each group of exact duplicates."""

    kind: int
    name: str

    def edges(self, records) -> Edges: ...


@dataclass
class Decisions:
    """The state of every record that has an earlier neighbour (*orders*, sorted), and
    how many rounds it took."""

    orders: np.ndarray
    state: np.ndarray
    rounds: int
    finished_in_order: int

    def kept(self) -> np.ndarray:
        return self.orders[self.state == KEPT]


def decide(
    edges: Edges,
    *,
    kept: np.ndarray | None = None,
    max_rounds: int = 50,
    remainder: int = 10_000,
    held: np.ndarray | None = None,
    in_order=None,
) -> Decisions:
    """Decide every record that appears in *edges*. *kept*: orders fixed as kept (pages
    already in an index). Rounds run until at most *remainder* records are undecided (or
    *max_rounds*), and the rest is finished in order. *held*: records the rounds never
    keep (their evidence is not all in *edges*): they are finished in order, by
    ``in_order(order, is_kept)`` (see :func:`finish_in_order`)."""
    held = np.empty(0, np.int64) if held is None else np.asarray(held, dtype=np.int64)
    orders = np.unique(np.concatenate([edges.earlier, edges.later, held]))
    state = np.zeros(len(orders), dtype=np.int8)
    if kept is not None and len(kept):
        state[np.isin(orders, kept)] = KEPT
    hold = np.isin(orders, held)
    i = np.searchsorted(orders, edges.earlier)
    j = np.searchsorted(orders, edges.later)
    rounds = 0
    while rounds < max_rounds:
        state, i, j, left = decide_round(state, i, j, hold)
        rounds += 1
        if left <= remainder:
            break
    finished = finish_in_order(state, i, j, hold, orders, in_order)
    return Decisions(orders, state, rounds, finished)


def decide_round(
    state: np.ndarray, i: np.ndarray, j: np.ndarray, hold: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """One round over edges ``i -> j`` (indexes into *state*): drop every undecided
    record with a kept earlier neighbour, keep every one whose earlier neighbours are all
    dropped (unless *hold*). Returns the new state, the edges still needed and how many
    are undecided."""
    state = state.copy()
    n = len(state)
    earlier_state = state[i]
    kept_before = np.bincount(j, weights=earlier_state == KEPT, minlength=n) > 0
    open_before = np.bincount(j, weights=earlier_state == UNDECIDED, minlength=n) > 0
    if hold is not None:
        open_before |= hold
    undecided = state == UNDECIDED
    state[undecided & kept_before] = DROPPED
    state[undecided & ~kept_before & ~open_before] = KEPT
    still = state[j] == UNDECIDED
    return state, i[still], j[still], int((state == UNDECIDED).sum())


def finish_in_order(
    state: np.ndarray,
    i: np.ndarray,
    j: np.ndarray,
    hold: np.ndarray | None = None,
    orders: np.ndarray | None = None,
    in_order=None,
) -> int:
    """Decide the undecided records one by one in order, as the crawl-time filter would;
    return how many. A record of *hold* (indexes as *state*) with no kept earlier
    neighbour is dropped when ``in_order(its order, is_kept)`` finds a match (*is_kept*:
    whether an order, of a record decided by then, is kept)."""
    undecided = np.flatnonzero(state == UNDECIDED)
    if not len(undecided):
        return 0
    sort = np.argsort(j, kind="stable")
    i, j = i[sort], j[sort]
    starts = np.searchsorted(j, undecided)
    ends = np.searchsorted(j, undecided, side="right")

    def is_kept(order: int) -> bool:
        at = int(np.searchsorted(orders, order))
        return at == len(orders) or orders[at] != order or state[at] == KEPT

    for record, start, end in zip(undecided.tolist(), starts.tolist(), ends.tolist(), strict=True):
        dropped = (state[i[start:end]] == KEPT).any()
        if not dropped and hold is not None and hold[record] and in_order is not None:
            dropped = in_order(int(orders[record]), is_kept)
        state[record] = DROPPED if dropped else KEPT
    return len(undecided)


def best_matches(edges: Edges, decisions: Decisions) -> tuple[np.ndarray, ...]:
    """For each dropped record, the kept record reported as its match: as the index does,
    the nearest, then the earliest stored (and the smaller evidence kind first). Returns
    ``(dropped, matched, evidence, distance)`` sorted by dropped."""
    state_of = _state_lookup(decisions)
    useful = (state_of(edges.earlier) == KEPT) & (state_of(edges.later) == DROPPED)
    e, la, ev, d = (
        edges.earlier[useful],
        edges.later[useful],
        edges.evidence[useful],
        edges.distance[useful],
    )
    # Sharing paragraphs: the earliest, whatever the distance (as the index decides).
    sort = np.lexsort((e, np.where(ev == CONTAINED, 0, d), ev, la))
    e, la, ev, d = e[sort], la[sort], ev[sort], d[sort]
    first = np.ones(len(la), dtype=bool)
    first[1:] = la[1:] != la[:-1]
    return la[first], e[first], ev[first], d[first]


def _state_lookup(decisions: Decisions):
    orders, state = decisions.orders, decisions.state

    def lookup(values: np.ndarray) -> np.ndarray:
        at = np.searchsorted(orders, values).clip(0, max(len(orders) - 1, 0))
        found = orders[at] == values if len(orders) else np.zeros(len(values), bool)
        return np.where(found, state[at] if len(orders) else 0, UNDECIDED)

    return lookup
