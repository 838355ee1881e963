"""What ``scrapy-simhash check`` finds for a source: the stored pages near it, a stored
page that contains it, and the pages dropped as its copies; nothing is stored."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..analysis.anchors import anchor_lines
from ..analysis.fingerprint import format_fingerprint
from ..dedup import Analysis, Deduplicator, analyse_text
from ..extract.text import normalize_characters
from ..index.base import NearDuplicateIndex
from .readings import read_as_crawled
from .report import Neighbours, neighbours, shares_held

__all__ = ["Checked", "check_source"]


@dataclass
class Checked:
    """The answer for one source (see :func:`check_source`)."""

    label: str
    kind: str
    fingerprint: int
    max_distance: int
    #: The index's own threshold: a page within it is a duplicate where its share holds.
    duplicate_at: int
    found: Neighbours
    #: The analysis of a source read from its text (``None`` for a stored page).
    analysis: Analysis | None = None
    read_as: str = ""
    #: A stored page that contains the source, with the paragraphs they share.
    contained: dict[str, Any] | None = None
    #: The pages dropped as copies of a stored source (the audit log).
    dropped_for: list[dict[str, Any]] = field(default_factory=list)
    #: The source is stored as an exact-text entry: it has no near neighbours.
    exact_only: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "source": self.label,
            "read_as": self.read_as or None,
            "kind": self.kind,
            "fingerprint": format_fingerprint(self.fingerprint),
            "max_distance": self.max_distance,
            "matches": self.found.matches,
            "nearest_beyond": self.found.beyond,
            "contained": self.contained,
            "dropped_as_its_duplicates": self.dropped_for,
        }


def check_source(
    index: NearDuplicateIndex,
    source: str,
    settings: Any,
    deduplicator: Callable[[], Deduplicator],
    *,
    max_distance: int | None = None,
    limit: int = 10,
) -> Checked:
    """The stored pages nearest to *source* (a stored page's key, else read as a crawl
    would read it: see :func:`~.readings.read_as_crawled`; *settings* are the
    :class:`~scrapy_simhash.settings.SimhashSettings` in use), each with the share of its
    text held; a stored page containing it, asked as a crawl asks: only when no page
    within the distance holds enough of it."""
    k = index.plan.max_distance if max_distance is None else max_distance
    stored = index.find(source) if source != "-" else []
    by_fingerprint = [page for page in stored if not page.exact]
    if stored and not by_fingerprint:
        return Checked(
            source, "short", 0, k, index.plan.max_distance, Neighbours(), exact_only=True
        )
    analysis, text, read_as = None, "", ""
    if by_fingerprint:
        label, fingerprint, kind = source, by_fingerprint[0].fingerprint, "simhash"
    else:
        dedup = deduplicator()
        read = read_as_crawled(source, settings, index, dedup)
        label, text, read_as = read.label, read.text, read.described
        analysis = analyse_text(dedup, text)
        kind, fingerprint = analysis.kind, analysis.value
    found = neighbours(
        index,
        kind,
        fingerprint,
        max_distance=k,
        limit=limit,
        itself=source if by_fingerprint else None,
    )
    result = Checked(label, kind, fingerprint, k, index.plan.max_distance, found, analysis, read_as)
    result.dropped_for = _dropped_for(index, source) if stored else []
    # Short texts are matched exactly, never by share.
    simhash = analysis is not None and analysis.kind == "simhash"
    shares_held(index, analysis, found.matches + found.beyond, settings.min_share if simhash else 0)
    # As in a crawl: a page within the distance holding enough of the text decides
    # first; the pages sharing long paragraphs only for a page with none.
    near = any(m["distance"] <= result.duplicate_at and m["confirmed"] for m in found.matches)
    if analysis is not None and analysis.anchors and not near:
        result.contained = _container(index, analysis, text, settings)
    return result


def _dropped_for(index: NearDuplicateIndex, source: str) -> list[dict[str, Any]]:
    """The pages the audit log says were dropped as copies of the stored page *source*
    (revisits of a page left out)."""
    return [
        {"key": d.key, "distance": d.distance, "shared": d.shared, "share": d.share, "at": d.at}
        for d in index.drops()
        if d.kept_key == source and not d.is_revisit
    ]


def _container(
    index: NearDuplicateIndex, analysis: Analysis, text: str, settings: Any
) -> dict[str, Any] | None:
    """The stored page that contains the *text* analysed as *analysis*, with the long
    paragraphs they share, or ``None``."""
    container = index.query_contained(analysis.value, analysis.anchors, analysis.sketch)
    if container is None:
        return None
    lines = anchor_lines(normalize_characters(text), settings.fingerprinter.seed)
    return {
        "key": container.key,
        "distance": container.distance,
        "share": container.share,
        "shared_paragraphs": [lines[h] for h in container.shared if h in lines],
    }
