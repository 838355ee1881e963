"""The shares of the drops in an audit log (``scrapy-simhash calibrate``): how much of each
dropped page's text the kept page held, and what another ``SIMHASH_MIN_SHARE`` would have
kept. The share is what decides a drop, whichever test found the pair (distance or shared
paragraphs); a bar closer to 1 keeps more pages with some text of their own."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..index.base import DropRecord
from ..sketch import share_bucket

__all__ = ["ShareSummary", "render_shares", "summarise_shares"]

#: Bars offered as what-ifs, above the one in use.
WHAT_IF = (0.85, 0.9, 0.95, 1.0)


@dataclass
class ShareSummary:
    min_share: float  #: the bar the index was used with (``SIMHASH_MIN_SHARE``)
    #: per-cent bucket (``100``, ``90-99``...) -> drops
    buckets: Counter[str] = field(default_factory=Counter)
    unknown: int = 0  #: drops recorded without a share (before sketches, or short texts)
    #: the lowest shares: ``(share, dropped key, kept key, test)``
    lowest: list[tuple[float, str, str, str]] = field(default_factory=list)
    #: every known share, for the what-ifs
    shares: list[float] = field(default_factory=list)

    def by_share(self) -> list[tuple[str, int]]:
        """``(bucket, drops)``, the highest shares first."""
        return sorted(self.buckets.items(), key=lambda b: -int(b[0].split("-")[0]))

    def kept_at(self, bar: float) -> int:
        """Drops that a bar of *bar* would have kept (their share is below it)."""
        return sum(1 for share in self.shares if share < bar)

    def as_dict(self) -> dict:
        return {
            "min_share": self.min_share,
            "by_share": dict(self.by_share()),
            "unknown": self.unknown,
            "lowest": [
                {"share": s, "dropped": d, "kept": k, "test": t} for s, d, k, t in self.lowest
            ],
            "kept_at": {str(bar): self.kept_at(bar) for bar in WHAT_IF if bar > self.min_share},
        }


def summarise_shares(
    drops: Iterable[DropRecord], min_share: float, lowest: int = 5
) -> ShareSummary:
    """The shares of the drops of another page (not re-visits, not exact texts)."""
    summary = ShareSummary(min_share)
    found = []
    for drop in drops:
        if drop.is_revisit or drop.exact:
            continue
        if drop.share is None:
            summary.unknown += 1
            continue
        summary.buckets[share_bucket(drop.share)] += 1
        summary.shares.append(drop.share)
        test = "contained" if drop.shared else f"distance {drop.distance}"
        found.append((round(drop.share, 3), drop.key, drop.kept_key, test))
    summary.lowest = sorted(found)[:lowest]
    return summary


def render_shares(summary: ShareSummary) -> list[str]:
    """The summary for the terminal: drops by share, the lowest, the what-ifs."""
    if not summary.shares and not summary.unknown:
        return []
    lines = [
        "Share of each dropped page's text that the kept page holds (SIMHASH_MIN_SHARE = "
        f"{summary.min_share:g}; near and contained drops alike):",
    ]
    for name, count in summary.by_share():
        lines.append(f"  {name + '%':>7}  {count}")
    if summary.unknown:
        lines.append(f"  unknown  {summary.unknown} (recorded before shares were)")
    if summary.lowest:
        lines.append("Lowest shares:")
        lines += [f"  {s:.2f}  {d}  ~  {k}  ({t})" for s, d, k, t in summary.lowest]
    higher = [bar for bar in WHAT_IF if bar > summary.min_share]
    keeping = [bar for bar in higher if summary.kept_at(bar)]
    if keeping:
        bar = keeping[0]
        lines.append(
            f"SIMHASH_MIN_SHARE = {bar:g} would have kept {summary.kept_at(bar)} of these "
            f"{len(summary.shares)} drops."
        )
    elif higher and summary.shares:
        lines.append(
            f"Every drop held all of its page's text: no SIMHASH_MIN_SHARE up to "
            f"{higher[-1]:g} would have kept any."
        )
    lines.append(
        "SIMHASH_ANCHORS = False would keep the contained drops; SIMHASH_MIN_SHARE = 0 drops "
        "what looks alike without asking."
    )
    return lines
