"""Pick a threshold by looking at real pairs: nearest-neighbour distances of stored pages.

An index keeps one page of every near-duplicate group, so the kept pages show how close
*distinct* pages of the user's own crawl come to each other (their nearest stored
neighbour, found by brute force over every stored fingerprint), and the audit log shows
the distances at which pages were dropped. Both on one histogram, with example pairs at
each distance, tell whether the threshold sits in the gap between them.

The index stores fingerprints and keys, not texts: example pairs are shown by key (URL).
How the result is shown (the terminal's histogram, the advice, the HTML page) is
:mod:`.calibration_views`.
"""

from __future__ import annotations

import random
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from ..index.base import NearDuplicateIndex, StoredPage

__all__ = ["Calibration", "FingerprintTable", "Pair", "calibrate"]

_M1, _M2, _M4, _H01 = (
    np.uint64(m)
    for m in (
        0x5555_5555_5555_5555,
        0x3333_3333_3333_3333,
        0x0F0F_0F0F_0F0F_0F0F,
        0x0101_0101_0101_0101,
    )
)


def popcount_swar(values: np.ndarray) -> np.ndarray:
    """Set bits of each value of a uint64 array, with shifts and masks: what
    ``np.bitwise_count`` does in NumPy 2, for NumPy 1.24 to 1.26."""
    x = values.astype(np.uint64, copy=True)
    x -= (x >> np.uint64(1)) & _M1
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return ((x * _H01) >> np.uint64(56)).astype(np.uint8)


#: Set bits of each value of a uint64 array.
popcount = getattr(np, "bitwise_count", popcount_swar)


@dataclass(frozen=True)
class Pair:
    """Two pages at *distance*: a dropped page and the page it matched, or a stored page and
    its nearest stored neighbour."""

    key: str
    other: str
    distance: int
    dropped: bool  #: True: from the audit log; False: two kept pages


@dataclass
class Calibration:
    max_distance: int  #: the index's threshold
    stored: int  #: pages with a fingerprint in the index (exact-text entries excluded)
    sampled: int
    nearest: Counter[int] = field(default_factory=Counter)  #: distance -> sampled pages
    dropped: Counter[int] = field(default_factory=Counter)  #: distance -> drops (audit log)
    examples: dict[int, list[Pair]] = field(default_factory=dict)
    #: Audit-log entries of unchanged re-visits (a page and its own stored entry), left
    #: out of the histogram: they say nothing about the threshold.
    revisits: int = 0
    #: Drops by containment (audit log): decided by shared paragraphs, not by distance,
    #: so not on the histogram.
    contained: int = 0

    def pairs(self, distance: int, dropped: bool) -> list[Pair]:
        """The example pairs at *distance*, dropped ones or kept ones."""
        return [p for p in self.examples.get(distance, ()) if p.dropped == dropped]

    @property
    def nearest_kept(self) -> int | None:
        """The smallest distance between a sampled kept page and its nearest kept page."""
        return min(self.nearest) if self.nearest else None

    @property
    def distances(self) -> range:
        top = max([*self.nearest, *self.dropped, self.max_distance + 1])
        return range(top + 1)

    def as_dict(self) -> dict:
        return {
            "max_distance": self.max_distance,
            "stored": self.stored,
            "sampled": self.sampled,
            "nearest": {str(d): n for d, n in sorted(self.nearest.items())},
            "dropped": {str(d): n for d, n in sorted(self.dropped.items())},
            "dropped_contained": self.contained,
            "examples": {
                str(d): [vars(p) for p in pairs] for d, pairs in sorted(self.examples.items())
            },
            "unchanged_revisits": self.revisits,
        }


class FingerprintTable:
    """The fingerprints of stored pages (exact-text entries left out) in one numpy array,
    for brute-force distances; 8 bytes per page plus its key."""

    def __init__(self, pages: Iterable[StoredPage]) -> None:
        # In the order of their keys, not of the index: pages at the same distance are
        # listed, and sampled, the same way whatever order a concurrent crawl stored them in.
        stored = sorted((p.key, p.fingerprint) for p in pages if not p.exact)
        self.keys: list[str] = [key for key, _ in stored]
        self.fingerprints = np.frombuffer(
            array("Q", (fingerprint for _, fingerprint in stored)), dtype=np.uint64
        )

    def __len__(self) -> int:
        return len(self.keys)

    def distances(self, fingerprint: int) -> np.ndarray:
        return popcount(self.fingerprints ^ np.uint64(fingerprint)).astype(np.int16)

    def nearest(self, fingerprint: int, limit: int, max_distance: int = 64) -> list[tuple]:
        """``(distance, key, fingerprint)`` of the *limit* nearest pages within
        *max_distance*, nearest first."""
        if not len(self):
            return []
        distances = self.distances(fingerprint)
        order = np.argsort(distances, kind="stable")[:limit]
        return [
            (int(distances[i]), self.keys[i], int(self.fingerprints[i]))
            for i in order
            if distances[i] <= max_distance
        ]


def calibrate(
    index: NearDuplicateIndex, *, sample: int = 1000, pairs: int = 3, seed: int = 0
) -> Calibration:
    """Nearest-neighbour distances of up to *sample* stored pages (chosen at random with
    *seed*), the distances of every drop in the audit log, and up to *pairs* examples at
    each distance."""
    table = FingerprintTable(index.pages())
    result = Calibration(index.plan.max_distance, len(table), min(sample, len(table)))
    examples: defaultdict[int, list[Pair]] = defaultdict(list)
    shown: set[frozenset[str]] = set()  # each pair once, whichever way round
    # In the order of their URLs, not of the log: the same pages give the same report,
    # whatever order a concurrent crawl dropped them in.
    for drop in sorted(index.drops(), key=lambda d: (d.key, d.kept_key)):
        if drop.is_revisit:
            result.revisits += 1
        elif drop.shared:
            result.contained += 1
        elif not drop.exact:
            result.dropped[drop.distance] += 1
            pair = frozenset((drop.key, drop.kept_key))
            if len(examples[drop.distance]) < pairs and pair not in shown:
                shown.add(pair)
                examples[drop.distance].append(Pair(drop.key, drop.kept_key, drop.distance, True))
    if len(table) > 1:
        chosen = random.Random(seed).sample(range(len(table)), result.sampled)
        for i in chosen:
            distances = table.distances(int(table.fingerprints[i]))
            distances[i] = 99
            j = int(np.argmin(distances))
            d = int(distances[j])
            result.nearest[d] += 1
            pair = frozenset((table.keys[i], table.keys[j]))
            if sum(not p.dropped for p in examples[d]) < pairs and pair not in shown:
                shown.add(pair)
                examples[d].append(Pair(table.keys[i], table.keys[j], d, False))
    else:
        result.sampled = 0
    result.examples = dict(sorted(examples.items()))
    return result
