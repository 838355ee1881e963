"""The verdict of a check on a spread Redis index: the entries its reserving round found
(near, and sharing paragraph anchors), once resolved committed, are the candidates of
:func:`~scrapy_simhash.index.rule.decide`, with the sketches their homes keep. The
protocol (:mod:`~.spread`) makes sure that every page that may be committed near the
page, or sharing its anchors, is among them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...sketch import Sketch
from ..rule import Candidate, Probe
from .page_values import stored_sketch
from .spread_layout import Found, member, txn_order

if TYPE_CHECKING:
    from ..rule import Decision
    from ..store import Decide
    from .cluster import Cluster


class SpreadDecide:
    """The candidates a check on *cluster* hands the policy: a part of
    :class:`~.spread.SpreadStore`."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster

    def _sketches(self, shares: bool, found: list[Found]) -> dict[str, Sketch]:
        """``txn -> sketch`` of the committed pages *found*, read at their homes (only
        when the verdict measures *shares*, see :class:`~..store.Page`)."""
        if not shares or not found:
            return {}
        unique = list({f.txn: f for f in found}.values())
        calls = [
            (
                self.cluster.keys.home_of(f.key),
                None,
                [],
                ["HGET", f"{self.cluster.keys.home_of(f.key)}:sk", member(False, f.txn, f.hex)],
            )
            for f in unique
        ]
        replies = self.cluster.io.batch(calls)
        sketches = {}
        for f, value in zip(unique, replies, strict=True):
            sketch = stored_sketch(value.decode() if isinstance(value, bytes) else value)
            if sketch is not None:
                sketches[f.txn] = sketch
        return sketches

    def verdict(
        self, shares: bool, near: list[Found], inside: list[Found], decide: Decide
    ) -> Decision:
        """The policy's verdict (*decide*) on the committed entries *near* and *inside*
        (found by shared anchors), with their sketches when it measures *shares*."""
        sketches = self._sketches(shares, near + inside)
        by_txn = {f.txn: candidate(f, sketches) for f in near}
        held = {f.txn: candidate(f, sketches) for f in inside}
        return decide(_Found(list(by_txn.values()), list(held.values())))


def candidate(f: Found, sketches: dict[str, Sketch]) -> Candidate:
    """*f* as a candidate: its attempt id orders the pages as stored."""
    return Candidate(
        f.txn, f.key, int(f.hex, 16), f.added_at, txn_order(f.txn), f.distance,
        found="contained" if f.shared else "near", shared=f.shared,
        summary=f.summary, sketch=sketches.get(f.txn),
    )  # fmt: skip


class _Found:
    """The committed entries a round found, as a :class:`~..store.Reading`."""

    def __init__(self, near: list[Candidate], held: list[Candidate]) -> None:
        self._near, self._held = near, held

    def near(self, fingerprint: int, max_distance: int) -> list[Candidate]:
        return [c for c in self._near if c.distance <= max_distance]

    def anchored(self, probe: Probe) -> list[Candidate]:
        return list(self._held)


def exact_match(committed: list[Found], key: str) -> tuple[str, float]:
    """The ``(key, added_at)`` an exact digest matches among the *committed* entries of
    it: the entry under *key*, else the earliest."""
    own = [f for f in committed if f.key == key]
    best = min(own or committed, key=lambda f: (f.distance, f.txn))
    return best.key, best.added_at
