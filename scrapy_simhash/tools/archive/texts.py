"""The crawl's rule over a batch: which pairs of records are evidence, asked of
:func:`scrapy_simhash.index.rule.decide` (the share check, the anchors' test and the
tie-break are never written twice).

The crawl drops a page when an earlier **kept** page is a confirmed candidate: within
the distance, or sharing :data:`~scrapy_simhash.anchors.MIN_SHARED` long paragraphs
(anchors), and holding at least ``min_share`` of its text. Whether a pair is a confirmed
candidate depends on the two pages only, and on whether their anchors are boilerplate for
the later one: more than :data:`~scrapy_simhash.anchors.MAX_ANCHOR_PAGES` other pages
were seen holding them before it (see :mod:`scrapy_simhash.index.rule`). Pages seen, kept
or not: so that depends on the order of the records alone, never on what is kept, and
every pair is a fixed edge, decided in rounds like the pairs within the distance. An
anchor is evidence between its first ``MAX_ANCHOR_PAGES + 1`` holders (the index's pages
first: the pages an index stored count as seen; those it dropped are not known here).

A record holding a *hot* anchor (held by more) is a group of its own, never an exact copy
of an earlier record: the anchor may be evidence for the first of two identical texts and
boilerplate for the second.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from ...anchors import MAX_ANCHOR_PAGES, MIN_SHARED, Anchors
from ...index.rule import Candidate, Decision, Probe, anchor_candidates, decide
from ...sketch import Sketch
from .decide import CONTAINED, KEPT, NEAR

_MASK64 = (1 << 64) - 1


@dataclass(frozen=True)
class Text:
    """What the rule reads of a record besides its fingerprint: its anchors and sketch
    (the page being checked: the whole sketch; a page of an index: as stored)."""

    anchors: Anchors | None = None
    sketch: Sketch | None = None

    def identity(self) -> int:
        """Equal for records whose texts the rule cannot tell apart."""
        hashes = self.anchors.hashes if self.anchors else ()
        sketch = self.sketch
        return hash((hashes, sketch.level, sketch.values) if sketch else (hashes,)) & _MASK64


def text_of(analysis) -> Text | None:
    """The :class:`Text` of an :class:`~scrapy_simhash.dedup.Analysis`, ``None`` when it
    has neither anchors nor a sketch."""
    if analysis.anchors is None and analysis.sketch is None:
        return None
    return Text(analysis.anchors, analysis.sketch)


@dataclass
class Rule:
    """The rule's view of the records with text of a batch (the index's pages first):
    ``orders``, ``keys``, ``values`` and ``texts`` aligned, sorted by order."""

    orders: np.ndarray
    keys: np.ndarray
    values: np.ndarray
    texts: np.ndarray
    max_distance: int
    min_share: float

    def __post_init__(self) -> None:
        self._row = {o: r for r, o in enumerate(self.orders.tolist())}
        holders: defaultdict[int, list[int]] = defaultdict(list)
        for order, text in zip(self.orders.tolist(), self.texts.tolist(), strict=True):
            if text is not None and text.anchors:
                for anchor in text.anchors.hashes:
                    holders[anchor].append(order)
        #: anchor -> the orders of the records holding it, sorted
        self.holders = dict(holders)

    def text(self, order: int) -> Text | None:
        return self.texts[self._row[order]]

    def probe(self, order: int) -> Probe:
        text = self.text(order) or Text()
        return Probe(
            self.keys[self._row[order]], int(self.values[self._row[order]]), *_fields(text)
        )

    def candidate(self, order: int, probe: Probe) -> Candidate:
        row = self._row[order]
        text = self.text(order)
        value = int(self.values[row])
        stored = text.sketch.stored() if text and text.sketch else None
        return Candidate(
            order,
            self.keys[row],
            value,
            0.0,
            order,
            ((value ^ probe.fingerprint) & _MASK64).bit_count(),
            summary=text.anchors.summary if text and text.anchors else None,
            sketch=stored,
        )

    def decide(self, probe: Probe, candidates: list[Candidate]) -> Decision:
        return decide(probe, candidates, max_distance=self.max_distance, min_share=self.min_share)

    # -- fixed edges -------------------------------------------------------------------

    def hot_records(self) -> set[int]:
        """The records (order >= 0) holding a hot anchor: groups of their own."""
        hot = {a for a, orders in self.holders.items() if len(orders) > MAX_ANCHOR_PAGES + 1}
        return {
            order
            for order, text in zip(self.orders.tolist(), self.texts.tolist(), strict=True)
            if order >= 0 and text is not None and text.anchors and hot & set(text.anchors.hashes)
        }

    def anchor_pairs(self, among: set[int]) -> list[tuple[int, int, tuple]]:
        """``(earlier, later, shared anchors)`` of the records of *among* sharing at
        least ``MIN_SHARED`` anchors that are no boilerplate for the later one: each
        anchor between its first ``MAX_ANCHOR_PAGES + 1`` holders."""
        shared: defaultdict[tuple[int, int], list[int]] = defaultdict(list)
        for anchor, orders in self.holders.items():
            orders = [o for o in orders[: MAX_ANCHOR_PAGES + 1] if o in among]
            for i, earlier in enumerate(orders):
                for later in orders[i + 1 :]:
                    if later >= 0:
                        shared[earlier, later].append(anchor)
        return [(e, la, tuple(a)) for (e, la), a in shared.items() if len(a) >= MIN_SHARED]

    def confirmed(self, earlier: int, later: int, shared: tuple = ()) -> bool:
        """Whether *earlier*, kept, is a candidate :func:`decide` confirms for *later*
        (within the distance, or sharing the *shared* anchors)."""
        probe = self.probe(later)
        c = self.candidate(earlier, probe)
        if shared:
            c = anchor_candidates(probe, {earlier: list(shared)}, {earlier: c})
            if not c:
                return False
            c = c[0]
        return self.decide(probe, [c]).candidate is not None

    def match(self, order: int, earlier: list[tuple[int, tuple]]) -> Candidate | None:
        """The kept page the crawl reports for *order*, among *earlier* ``(order,
        shared anchors)`` (no anchors: found within the distance)."""
        probe = self.probe(order)
        found = []
        for other, shared in earlier:
            c = self.candidate(other, probe)
            if shared:
                found += anchor_candidates(probe, {other: list(shared)}, {other: c})
            else:
                found.append(c)
        return self.decide(probe, found).candidate


def _fields(text: Text) -> tuple[Anchors | None, Sketch | None]:
    return text.anchors or None, text.sketch or None


def rule_of(batch, max_distance: int, min_share: float) -> Rule | None:
    """The :class:`Rule` of *batch* (its records with text, the index's pages first),
    ``None`` when no record has anchors or a sketch (the rule is the distance)."""
    if not any(t is not None for t in batch.text.tolist()):
        return None
    sort = np.argsort(batch.order, kind="stable")
    return Rule(
        batch.order[sort],
        batch.key[sort],
        batch.value[sort],
        batch.text[sort],
        max_distance,
        min_share,
    )


@dataclass
class Evidence:
    """The pairs of a batch's records found by the rule: ``edges`` (confirmed, as
    ``(earlier, later, kind, distance)``, for the rounds), and every pair found, confirmed
    or not, with the anchors it shares (to name the match of an exact copy)."""

    edges: list[tuple[int, int, int, int]]
    pairs: dict[tuple[int, int], tuple]


def find_evidence(rule: Rule, near, firsts: set[int]) -> Evidence:
    """The pairs within the distance *near* (:class:`~.candidates.Pairs`) and the pairs
    of *firsts* sharing anchors (:meth:`Rule.anchor_pairs`), each asked of :func:`decide`."""
    edges = []
    pairs: dict[tuple[int, int], tuple] = {}
    for e, la, d in zip(
        near.earlier.tolist(), near.later.tolist(), near.distance.tolist(), strict=True
    ):
        pairs[e, la] = ()
        if la >= 0 and rule.confirmed(e, la):
            edges.append((e, la, NEAR, d))
    for e, la, shared in rule.anchor_pairs(firsts):
        if (e, la) in pairs:
            continue  # within the distance: the index finds it so, and prefers it
        pairs[e, la] = shared
        if rule.confirmed(e, la, shared):
            d = (int(rule.values[rule._row[e]]) ^ int(rule.values[rule._row[la]])) & _MASK64
            edges.append((e, la, CONTAINED, d.bit_count()))
    return Evidence(edges, pairs)


def rule_matches(outcomes, rule, found, order, first, edges, decisions) -> None:
    """The match of each dropped record, as :func:`~scrapy_simhash.index.rule.decide`
    names it among the kept records before it that the rule found."""
    is_kept = _kept_lookup(decisions, set(order[order != first].tolist()))
    earlier: dict[int, list[tuple[int, tuple]]] = {}
    for e, la in zip(edges.earlier.tolist(), edges.later.tolist(), strict=True):
        earlier.setdefault(la, []).append((e, found.pairs.get((e, la), ())))
    neighbours: dict[int, list[tuple[int, tuple]]] = {}
    for (a, b), shared in found.pairs.items():
        neighbours.setdefault(a, []).append((b, shared))
        neighbours.setdefault(b, []).append((a, shared))
    group = dict(zip(order.tolist(), first.tolist(), strict=True))
    for row in np.flatnonzero(~outcomes.kept).tolist():
        this = int(outcomes.order[row])
        lead = group[this]
        if lead != this and is_kept(lead):
            continue  # an exact copy of a kept record: matched to it (see _outcomes)
        if lead == this:
            c = rule.match(this, [(e, s) for e, s in earlier.get(this, []) if is_kept(e)])
        else:
            c = rule.match(
                this, [(o, s) for o, s in neighbours.get(lead, []) if o < this and is_kept(o)]
            )
        if c is None:
            continue
        outcomes.matched[row] = c.order
        outcomes.matched_key[row] = c.key
        outcomes.evidence[row] = CONTAINED if c.found == "contained" else NEAR
        outcomes.distance[row] = c.distance


def _kept_lookup(decisions, never: set[int]):
    orders, state = decisions.orders, decisions.state

    def is_kept(order: int) -> bool:
        if order in never:
            return False
        at = int(np.searchsorted(orders, order))
        return at == len(orders) or orders[at] != order or state[at] == KEPT

    return is_kept
