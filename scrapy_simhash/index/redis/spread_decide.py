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
    from .spread_io import SpreadIO
    from .spread_layout import Keys


class SpreadDecide:
    """The decision half of :class:`~.spread.RedisSpreadIndex`."""

    if TYPE_CHECKING:
        keys: Keys
        _io: SpreadIO
        min_share: float
        _found_now: tuple[list[Candidate], list[Candidate]] | None

        def _decide(self, probe: Probe, *, near: bool = True) -> Decision: ...

    def _sketches(self, probe: Probe, found: list[Found]) -> dict[str, Sketch]:
        """``txn -> sketch`` of the committed pages *found*, read at their homes (only
        when the share is checked: *probe* has a sketch and ``min_share`` is above 0)."""
        if not probe.sketch or self.min_share <= 0 or not found:
            return {}
        unique = list({f.txn: f for f in found}.values())
        calls = [
            (
                self.keys.home_of(f.key),
                None,
                [],
                ["HGET", f"{self.keys.home_of(f.key)}:sk", member(False, f.txn, f.hex)],
            )
            for f in unique
        ]
        replies = self._io.batch(calls)
        sketches = {}
        for f, value in zip(unique, replies, strict=True):
            sketch = stored_sketch(value.decode() if isinstance(value, bytes) else value)
            if sketch is not None:
                sketches[f.txn] = sketch
        return sketches

    @staticmethod
    def _candidate(f: Found, sketches: dict[str, Sketch]) -> Candidate:
        """*f* as a candidate: its attempt id orders the pages as stored."""
        return Candidate(
            f.txn, f.key, int(f.hex, 16), f.added_at, txn_order(f.txn), f.distance,
            found="contained" if f.shared else "near", shared=f.shared,
            summary=f.summary, sketch=sketches.get(f.txn),
        )  # fmt: skip

    def _verdict(
        self, probe: Probe, near: list[Found], inside: list[Found], *, with_near: bool = True
    ) -> Decision:
        """:func:`~.rule.decide` on the committed entries *near* and *inside* (found by
        shared anchors)."""
        sketches = self._sketches(probe, near + inside)
        by_txn = {f.txn: self._candidate(f, sketches) for f in near}
        held = {f.txn: self._candidate(f, sketches) for f in inside}
        self._found_now = (list(by_txn.values()), list(held.values()))
        try:
            return self._decide(probe, near=with_near)
        finally:
            self._found_now = None

    def _near(self, fingerprint: int, max_distance: int) -> list[Candidate]:
        assert self._found_now is not None
        return [c for c in self._found_now[0] if c.distance <= max_distance]

    def _anchored(self, probe: Probe) -> list[Candidate]:
        assert self._found_now is not None
        return list(self._found_now[1])
