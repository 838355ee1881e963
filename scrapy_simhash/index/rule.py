"""The verdict of a check, written once: the stored facts of the candidates in, the outcome
out. Every backend (memory, SQLite, both Redis layouts) and the archive job gather the
candidates their own way and ask :func:`decide`; none decides anything else.

A stored page is a *candidate* when its fingerprint is within the distance of the page
checked (``near``), or when it shares at least :data:`~scrapy_simhash.anchors.MIN_SHARED`
of the page's long paragraphs that few pages carry (:func:`by_anchors`) and the pages
pass :func:`~scrapy_simhash.anchors.contained` (``contained``). A candidate is *confirmed*
when it holds at least ``min_share`` of the page's text (:func:`~scrapy_simhash.sketch.share`):
a drop loses nothing but repetition. The page's text is its own text where its site's
template is known (the blocks other pages of the site hold: :mod:`scrapy_simhash.template`).
Of the confirmed candidates the verdict takes the page's own key (``unchanged``: a
re-crawl), else the nearest near one, earliest stored
first, else the earliest contained one (``duplicate``). With none, the page is stored.

**Boilerplate is counted in pages seen.** Every check records, in the same atomic step,
that its page holds each of its anchors: a *sighting*, the hash of the page's key
(:func:`sighting`), at most :data:`MAX_SIGHTINGS` of them an anchor. An anchor is
boilerplate for a page once more than :data:`~scrapy_simhash.anchors.MAX_ANCHOR_PAGES`
other pages were seen holding it (:func:`is_boilerplate`), whether they were kept or
dropped: a note that 50 pages carry stops dropping them after the sixth, though only the
first is stored. Sightings count keys, so a check that runs again (a retry, a re-crawl, an
attempt aborted on the spread layout) never counts twice.
"""

from __future__ import annotations

import zlib
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Literal

from ..anchors import MAX_ANCHOR_PAGES, MIN_SHARED, Anchors, Summary, contained
from ..sketch import Sketch, clears, measure

#: ``near``: within the distance; ``contained``: found by shared long paragraphs.
Found = Literal["near", "contained"]
#: Sightings an index keeps of an anchor: enough to tell that more than
#: ``MAX_ANCHOR_PAGES`` pages other than the one checked hold it. A full list makes the
#: anchor boilerplate for every page (see :func:`is_boilerplate`).
MAX_SIGHTINGS = MAX_ANCHOR_PAGES + 2


def sighting(key: str) -> int:
    """The number a page is counted by among the sightings of its anchors: its key's
    CRC-32, signed (as anchors are). Two keys of one anchor rarely collide; when they do,
    the anchor turns boilerplate one page later."""
    value = zlib.crc32(key.encode("utf-8", "surrogatepass"))
    return value - (1 << 32) if value >= 1 << 31 else value


def sighted(seen: Collection[int], page: int) -> list[int] | None:
    """The sightings of an anchor once *page* is seen holding it (*seen*: as stored), or
    ``None`` when they stay as they are (*page* counted already, or the list full)."""
    if page in seen or len(seen) >= MAX_SIGHTINGS:
        return None
    return [*seen, page]


def is_boilerplate(seen: Collection[int], page: int) -> bool:
    """Whether an anchor whose sightings are *seen* is boilerplate for *page*: more than
    ``MAX_ANCHOR_PAGES`` pages other than it were seen holding it."""
    return len(set(seen) - {page}) > MAX_ANCHOR_PAGES


def boilerplate(seen: Mapping[int, Collection[int]], key: str) -> frozenset[int]:
    """The anchors of *seen* (``anchor -> its sightings``) that are boilerplate for the
    page under *key*."""
    page = sighting(key)
    return frozenset(a for a, pages in seen.items() if is_boilerplate(pages, page))


@dataclass(frozen=True)
class Probe:
    """The page being checked: its key, fingerprint, anchors and sketch."""

    key: str
    fingerprint: int
    anchors: Anchors | None = None
    sketch: Sketch | None = None


@dataclass(frozen=True)
class Candidate:
    """A stored page that may be the one a page repeats, with what the rule reads of it."""

    id: object  #: the backend's id of the page
    key: str
    fingerprint: int
    added_at: float
    order: int  #: the order stored: the smaller, the earlier
    distance: int
    found: Found = "near"
    #: the anchors it shares with the page (``contained`` candidates)
    shared: tuple[int, ...] = ()
    summary: Summary | None = None  #: its anchors' summary (``contained`` candidates)
    sketch: Sketch | None = None


@dataclass(frozen=True)
class Decision:
    """What :func:`decide` found: the candidate matched and the share of the page's text
    it holds (``None``: unknown), or no candidate (``candidate is None``). ``refused``
    counts the candidates that look alike but hold too little of the page's text."""

    candidate: Candidate | None = None
    share: float | None = None
    own: bool = False  #: the candidate is stored under the page's own key
    refused: int = 0
    #: the best refused candidate and its share, for people judging a kept page
    closest: tuple[Candidate, float | None] | None = None
    #: the share of the closest refused candidate's text that the page holds: at least
    #: ``min_share``, the page contains that one (and adds text of its own)
    contains: float | None = None
    #: the share is of the page's own text, its site's template aside
    own_text: bool = False


def by_anchors(
    hits: Mapping[int, Iterable[object]], boilerplate: Collection[int] = ()
) -> dict[object, list[int]]:
    """``page id -> anchors it shares`` from *hits* (``anchor -> ids`` of the stored pages
    holding it, at most ``MAX_ANCHOR_PAGES + 1`` of them): the anchors of *boilerplate*
    (see :func:`boilerplate`) and those stored for more pages are ignored, and a page
    sharing fewer than ``MIN_SHARED`` is no candidate."""
    by_page: dict[object, list[int]] = {}
    for anchor, pages in hits.items():
        pages = list(pages)
        if len(pages) <= MAX_ANCHOR_PAGES and anchor not in boilerplate:
            for page in pages:
                by_page.setdefault(page, []).append(anchor)
    return {page: anchors for page, anchors in by_page.items() if len(anchors) >= MIN_SHARED}


def _anchored(probe: Probe, c: Candidate) -> bool:
    """Whether a ``contained`` candidate is one: it shares ``MIN_SHARED`` anchors with
    the page, and the two pass :func:`~scrapy_simhash.anchors.contained` by them. The share
    decides after that; the anchors' test keeps out pairs whose eight largest paragraphs
    say that they differ where the page's fingerprinted text does not (a list of links, a
    page whose code or tables the extractor left out), and a page that shares only lists
    with it, not one of its paragraphs, is none (see
    :meth:`~scrapy_simhash.anchors.Anchors.shares_a_paragraph`)."""
    if probe.anchors is None or len(c.shared) < MIN_SHARED or c.summary is None:
        return False
    _, words = probe.anchors.shared_with(c.shared)
    return contained(
        len(c.shared), words, probe.anchors.summary, c.summary
    ) and probe.anchors.shares_a_paragraph(c.shared)


def decide(
    probe: Probe,
    candidates: Iterable[Candidate],
    *,
    max_distance: int,
    min_share: float,
) -> Decision:
    """The verdict for *probe* among *candidates* (see the module's text). A ``near``
    candidate beyond *max_distance*, a ``contained`` one under the page's own key or not
    passing the anchors' test, is no candidate. *min_share* ``0`` turns the share check
    off (the candidates are confirmed as found), as does a *probe* without a sketch (its
    caller asked for no share); a stored page without one (stored before sketches) holds
    an unknown share, and is refused."""
    if probe.sketch is None:
        min_share = 0.0
    own: list[tuple[tuple, Candidate, float | None]] = []
    near: list[tuple[tuple, Candidate, float | None]] = []
    held: list[tuple[tuple, Candidate, float | None]] = []
    refused: list[tuple[float, Candidate, float | None]] = []
    by_own_text: set[int] = set()  # the candidates confirmed on the page's own text
    for c in candidates:
        if c.found == "near":
            if c.distance > max_distance:
                continue
        elif c.key == probe.key or not _anchored(probe, c):
            continue
        found, own_text = _held(probe.sketch, c.sketch, min_share) if min_share > 0 else (None, 0)
        if own_text:
            by_own_text.add(id(c))
        fraction = None if found is None else found[0]
        confirmed = min_share <= 0 or clears(found, min_share)
        # A re-crawl: unchanged unless its text is known to have changed this much.
        if c.found == "near" and c.key == probe.key and (fraction is None or confirmed):
            own.append(((c.distance, c.order), c, fraction))
            continue
        if not confirmed:
            refused.append((-1.0 if fraction is None else fraction, c, fraction))
        elif c.found == "near":
            near.append(((c.distance, c.order), c, fraction))
        else:
            held.append(((c.order,), c, fraction))
    extra = {"refused": len(refused), **_closest(probe, refused, min_share)}
    for group, is_own in ((own, True), (near, False), (held, False)):
        if group:
            _, best, fraction = min(group, key=lambda g: g[0])
            return Decision(best, fraction, is_own, own_text=id(best) in by_own_text, **extra)
    return Decision(**extra)


def _held(
    sketch: Sketch | None, other: Sketch | None, min_share: float
) -> tuple[tuple[float, int, bool] | None, bool]:
    """``(found, own_text)``: what :func:`~scrapy_simhash.sketch.measure` finds *other*
    holds of the page *sketch*ed, of all its text; where that falls short and the page's
    site template is known (:attr:`~scrapy_simhash.sketch.Sketch.own`), of its own text
    when that clears *min_share* (``own_text``): the template only ever adds drops, of
    pages whose own text the kept page holds."""
    found = measure(sketch, other)
    if sketch is not None and sketch.own and not clears(found, min_share):
        own = measure(sketch.own, other)
        if clears(own, min_share):
            return own, True
    return found, False


def _closest(
    probe: Probe, refused: list[tuple[float, Candidate, float | None]], min_share: float
) -> dict:
    """``closest`` and ``contains`` of a :class:`Decision`: of the refused candidates, the
    earliest whose text the page holds (a longer page holding a stored one), else the one
    holding most of the page's text, earliest first."""
    if not refused:
        return {"closest": None, "contains": None}
    for _, candidate, fraction in sorted(refused, key=lambda r: r[1].order):
        back = measure(candidate.sketch, probe.sketch) if min_share > 0 else None
        if clears(back, min_share):
            assert back is not None
            return {"closest": (candidate, fraction), "contains": back[0]}
    _, candidate, fraction = max(refused, key=lambda r: (r[0], -r[1].order))
    return {"closest": (candidate, fraction), "contains": None}


def anchor_candidates(
    probe: Probe, by_page: Mapping[object, list[int]], stored: Mapping[object, Candidate]
) -> list[Candidate]:
    """The ``contained`` candidates among *by_page* (of :func:`by_anchors`): *stored*
    holds the facts of each page id (with its anchors' ``summary``); a page missing
    there (expired, another process's) is none."""
    found = []
    for page, hashes in by_page.items():
        fact = stored.get(page)
        if fact is not None and probe.anchors is not None:
            shared, _ = probe.anchors.shared_with(hashes)
            found.append(replace(fact, found="contained", shared=tuple(sorted(shared))))
    return found
