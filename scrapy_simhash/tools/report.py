"""What an index holds, as plain data: its summary (``scrapy-simhash stats``) and the
stored pages nearest to a fingerprint (``scrapy-simhash check``). No Scrapy or click:
scripts call these as the CLI does."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..dedup import TextKind
from ..index.base import NearDuplicateIndex
from ..sketch import clears, measure
from .calibrate import FingerprintTable

__all__ = [
    "Neighbours",
    "held_words",
    "index_summary",
    "neighbours",
    "shares_held",
]


def index_summary(index: NearDuplicateIndex) -> dict[str, Any]:
    """Size, parameters and audit-log counts of *index*, in one pass over its pages
    (streamed: an index may hold millions)."""
    count = exact = 0
    oldest = newest = None
    for page in index.pages():
        count += 1
        exact += page.exact
        if oldest is None or page.added_at < oldest:
            oldest = page.added_at
        if newest is None or page.added_at > newest:
            newest = page.added_at
    records = list(index.drops())
    # A re-visit of a page unchanged since it was stored is no duplicate of anything.
    drops = [d for d in records if not d.is_revisit]
    plan, params = index.plan, index.parameters
    size = index.size()
    near_drops = Counter(d.distance for d in drops if not d.exact and not d.shared)
    return {
        "index": index.location,
        "bytes": size,
        "pages": count,
        "fingerprints": count - exact,
        "exact_texts": exact,
        "oldest": oldest,
        "newest": newest,
        "max_distance": params.max_distance,
        "blocks": params.blocks,
        "tables": plan.table_count,
        "key_bits": sorted({plan.key_bits(t) for t in range(plan.table_count)}),
        "features": params.features,
        "drops": len(drops),
        "drops_exact": sum(d.exact for d in drops),
        "drops_contained": sum(bool(d.shared) for d in drops),
        "drops_by_distance": {str(d): n for d, n in sorted(near_drops.items())},
        "unchanged_revisits": len(records) - len(drops),
        "last_drop": records[-1].at if records else None,
    }


@dataclass
class Neighbours:
    """Stored pages near a fingerprint: *matches* within the distance asked for, and a
    few *beyond* it; each ``{"key": ..., "distance": ...}``, nearest first."""

    matches: list[dict[str, Any]] = field(default_factory=list)
    beyond: list[dict[str, Any]] = field(default_factory=list)


def neighbours(
    index: NearDuplicateIndex,
    kind: TextKind,
    value: int,
    *,
    max_distance: int,
    limit: int,
    itself: str | None = None,
) -> Neighbours:
    """The stored pages nearest to a text of *kind* and *value* (a fingerprint, or the
    digest of a short text, which only equal digests match). Every stored fingerprint is
    scanned, so distances beyond the index's own threshold are found too. *itself*: the
    key of a stored page whose neighbours are asked for, left out of the answer."""
    found = Neighbours()
    if kind == "simhash":
        table = FingerprintTable(index.pages())
        # Room for the page's own entries, which are skipped.
        own = sum(not p.exact for p in index.find(itself)) if itself is not None else 0
        for distance, key, other in table.nearest(value, limit + own):
            if key == itself and other == value:
                continue  # the stored page itself
            page = {"key": key, "distance": distance}
            (found.matches if distance <= max_distance else found.beyond).append(page)
        found.matches = found.matches[:limit]
        found.beyond = found.beyond[: max(0, min(3, limit - len(found.matches)))]
    elif kind == "short":
        found.matches = [
            {"key": p.key, "distance": 0}
            for p in index.pages()
            if p.exact and p.fingerprint == value
        ][:limit]
    return found


def shares_held(index: NearDuplicateIndex, analysis, matches: list[dict], min_share: float) -> None:
    """Set ``share`` (of the text of *analysis* that each stored page of *matches* holds,
    ``None`` where unknown) and ``confirmed`` (whether a check would take the page as
    holding enough of it, see :func:`~scrapy_simhash.sketch.holds`) in each of *matches*.
    Without a sketch (a short text, or a stored page checked), every one is confirmed."""
    for match in matches:
        match["share"], match["confirmed"] = None, True
        if analysis is None or analysis.sketch is None or min_share <= 0:
            continue
        pages = [page for page in index.find(match["key"]) if not page.exact]
        sketch = pages[0].sketch if pages else None
        found = measure(analysis.sketch, sketch)
        match["share"] = None if found is None else found[0]
        match["confirmed"] = clears(found, min_share)


def held_words(held: float | None, lead: str = "; ") -> str:
    """How people read a share: ``; 97% of its text held`` (nothing where unknown)."""
    return "" if held is None else f"{lead}{held:.0%} of its text held"
