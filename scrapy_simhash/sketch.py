"""Text sketches as plain values: how much of one page's text another holds (the text side,
which makes them, is :mod:`scrapy_simhash.analysis.sketch`).

A SimHash distance and shared paragraphs say that two pages *look* alike; neither says
whether dropping one loses text that exists nowhere else. The sketch answers that: the
*share* of a page's text that another page holds, estimated as Broder's containment of
their word shingles (runs of :data:`SHINGLE_WORDS` words, case-folded, punctuation
dropped, every number one token) from a sample of their hashes.

The sample is taken *by value*: the shingles whose 64-bit hash is below ``2**(64 - level)``
(Manber's and Broder's "mod" sampling). Two texts sampled at one level keep the same
shingles wherever they share them, whatever else they hold, so the share of one text's
sampled shingles found in the other's estimates the share of its whole text the other
holds. An index stores at most :data:`SAMPLES` samples a page, 16 bits each (the level
rises with the text's length); the page being checked keeps up to :data:`PROBE_SAMPLES`
whole hashes, so that it can be compared at any stored page's level.
"""

from __future__ import annotations

import math
import struct
from bisect import bisect_left
from dataclasses import dataclass, field

#: Words in a shingle: a changed word changes this many shingles.
SHINGLE_WORDS = 3
#: Samples an index stores a page (2 bytes each).
SAMPLES = 64
#: Whole hashes the page being checked keeps: 16 times a stored page's, so that it is
#: sampled at a stored page's level or below unless it is 16 times longer, when the stored
#: page holds a sixteenth of it at most (and the share is counted at the page's level).
PROBE_SAMPLES = 1024
#: A share estimated from fewer samples is unknown (a teaser a twentieth of the page it
#: is compared with): the page is kept. At level 0 the samples are all the shingles, and
#: the share is exact however few they are.
MIN_SAMPLES = 8
#: The share of a page's text that the kept page must hold for the page to be dropped
#: (the default of ``SIMHASH_MIN_SHARE``).
DEFAULT_MIN_SHARE = 0.8
#: Bits of a stored sample.
_BITS = 16
_MASK = (1 << _BITS) - 1
#: The sketches' format, stored in every index: pages sketched otherwise never mix.
SKETCH_FORMAT = f"shingles-{SHINGLE_WORDS}w/casefold-nopunct/{SAMPLES}x{_BITS}/v2"


@dataclass(frozen=True)
class Sketch:
    """A sample of a text's shingle hashes: those below ``2**(64 - level)``. ``shingles``
    is the text's count of shingles (a repeated one counted each time). ``values`` are
    sorted; they are whole 64-bit hashes when ``whole`` (the page being checked), else
    the :data:`_BITS` bits that follow the level's zero bits (a stored page, at most
    :data:`SAMPLES` of them)."""

    level: int = 0
    shingles: int = 0
    values: tuple[int, ...] = field(default=(), repr=False)
    whole: bool = False
    #: The sketch of the page's own text, without the blocks its site repeats (see
    #: :mod:`scrapy_simhash.template`): what a candidate must hold of the page being
    #: checked, when its site's template is known. Never stored.
    own: Sketch | None = field(default=None, compare=False, repr=False)

    def __bool__(self) -> bool:
        return bool(self.values)

    def stored(self) -> Sketch:
        """This sketch as an index stores it: at the lowest level with at most
        :data:`SAMPLES` samples, each cut to its :data:`_BITS` bits."""
        if not self.whole:
            return self
        level = self.level
        while bisect_left(self.values, 1 << (64 - level)) > SAMPLES:
            level += 1
        kept = self.values[: bisect_left(self.values, 1 << (64 - level))]
        values = sorted({(h >> (64 - _BITS - level)) & _MASK for h in kept})
        return Sketch(level, self.shingles, tuple(values))

    def _at(self, level: int) -> tuple[set[int], int]:
        """``(samples, bits)``: the samples this sketch has at *level* (not below its own),
        as the :data:`_BITS` bits after the level's zero bits, of which the top *bits*
        are known."""
        if self.whole:
            kept = self.values[: bisect_left(self.values, 1 << (64 - level))]
            return {(h >> (64 - _BITS - level)) & _MASK for h in kept}, _BITS
        shift = level - self.level
        if shift >= _BITS:
            return set(), 0
        return {(v << shift) & _MASK for v in self.values if v >> (_BITS - shift) == 0}, (
            _BITS - shift
        )

    def pack(self) -> bytes:
        """The stored sketch as bytes: level, shingles, then the samples (2 bytes each)."""
        stored = self.stored()
        return struct.pack(
            f"<BI{len(stored.values)}H", stored.level, stored.shingles, *stored.values
        )

    @classmethod
    def unpack(cls, data: bytes | None) -> Sketch | None:
        """The sketch :meth:`pack` made, ``None`` for no data."""
        if not data:
            return None
        level, shingles = struct.unpack_from("<BI", data)
        count = (len(data) - 5) // 2
        return cls(level, shingles, struct.unpack_from(f"<{count}H", data, 5))


def measure(page: Sketch | None, other: Sketch | None) -> tuple[float, int, bool] | None:
    """``(share, samples, exact)``: the share of *page*'s text that *other* holds, from
    their samples at the higher of their levels, how many samples of *page* it was
    estimated from, and whether they were all its shingles (level 0: the share is exact).
    ``None`` (unknown) when either has no sketch or *page* has fewer than
    :data:`MIN_SAMPLES` samples at a sampled level."""
    if not page or not other:
        return None
    level = max(page.level, other.level)
    mine, my_bits = page._at(level)
    theirs, their_bits = other._at(level)
    bits = min(my_bits, their_bits)
    if bits < 8:
        return None
    mask = _MASK ^ ((1 << (_BITS - bits)) - 1)
    mine = {v & mask for v in mine}
    if not mine or (level and len(mine) < MIN_SAMPLES):
        return None  # at level 0 the samples are every shingle: the share is exact
    theirs = {v & mask for v in theirs}
    return len(mine & theirs) / len(mine), len(mine), level == 0


def share(page: Sketch | None, other: Sketch | None) -> float | None:
    """The share of *page*'s text that *other* holds (see :func:`measure`), ``None`` where
    unknown."""
    found = measure(page, other)
    return None if found is None else found[0]


def holds(page: Sketch | None, other: Sketch | None, min_share: float) -> bool:
    """Whether *other* holds at least *min_share* of *page*'s text (see :func:`clears`)."""
    return clears(measure(page, other), min_share)


#: Standard errors by which an estimated share must pass the bar. One kept most copies with
#: an inserted paragraph (a share near 0.85 from 64 samples, 0.045 of doubt): 71% of them
#: on pages of 2,000+ characters, 79% at a half; no drop lost more text for it on the
#: lossless benchmarks (benchmarks/lossless, thorough, zh_short_lines).
DOUBT = 0.5


def clears(found: tuple[float, int, bool] | None, min_share: float) -> bool:
    """Whether a share *found* by :func:`measure` is at least *min_share* beyond the doubt
    of sampling: an estimate from samples must pass by :data:`DOUBT` standard errors (a
    page of 40 samples at 0.80 is within 0.06 of 0.74 as often as not), an exact share as
    it is; an unknown one never does."""
    if found is None:
        return False
    value, samples, exact = found
    if exact:
        return value >= min_share
    return value - DOUBT * math.sqrt(value * (1 - value) / samples) >= min_share


def share_bucket(share: float) -> str:
    """A share's bucket in per cent, as stats and reports count drops: ``100``, ``90-99``,
    ``80-89``..."""
    percent = int(share * 100 + 1e-9)
    if percent >= 100:
        return "100"
    low = percent // 10 * 10
    return f"{low}-{low + 9}"
