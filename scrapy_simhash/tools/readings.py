"""How a page may have been read into the item the crawl fingerprinted, and which reading
gives what the index stored for it.

A diagnostic given a page (a file, a URL) has no item: it builds one as
:func:`~scrapy_simhash.tools.fingerprinted.item_from_page` says. An index records how each
page was analysed (see :mod:`scrapy_simhash.index.analysed`): the item's text fields, the
extractor, a hash of the text; with that record the item is built on the crawl's fields
and extractor, and the reading whose text hash is the one stored is the very text the crawl
analysed (*read as stored*). The title field stays a guess (spiders take ``<title>``, the
first ``h1`` or the article's): :func:`page_readings` lists every such reading;
:func:`stored_reading` picks the one whose text (else fingerprint) the index stored under
the page's key, else the nearest, and says whether the stored page still holds the text
(within the distance and by the share check), so that ``text --stored``, ``explain`` and
``check`` read a stored page as the crawl did, and say what they assumed.

No Scrapy import.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..analysis.fingerprint import hamming_distance
from ..dedup import Analysis, analyse_text, fields_text
from ..extract.extractors import EXTRACTORS, extractor_version
from ..extract.text import looks_like_html, parse_html
from ..index.analysed import RESPONSE_FIELD, Analysed
from ..index.base import StoredPage
from ..sketch import share
from .fingerprinted import TITLE_FIELDS, fingerprinted_text, item_from_source, page_title
from .sources import read_source

__all__ = [
    "Reading",
    "SourceText",
    "StoredReading",
    "assumption",
    "page_readings",
    "read_as_crawled",
    "stored_reading",
]

#: Where a title field may come from, as spiders take it, and how it is named in output.
TITLE_SOURCES = (
    (".//article//h1", "the article's first <h1>"),
    (".//h1", "the page's first <h1>"),
    (".//title", "the page's <title>"),
)


@dataclass(frozen=True)
class Reading:
    """One way the crawl's item may have held the page: the item, the text fingerprinted,
    and how it was read, in words (``""`` for an item given as it is)."""

    item: Mapping[str, Any]
    text: str
    how: str
    #: Where the title fields came from (see :data:`TITLE_SOURCES`), ``""`` if not read.
    title_from: str = ""


@dataclass(frozen=True)
class StoredReading:
    """The reading of a page nearest to what the index stored under its key."""

    reading: Reading
    analysis: Analysis
    page: StoredPage
    #: True when the reading gives the stored fingerprint (or exact digest) itself.
    same: bool
    #: Distance to the stored fingerprint; ``None`` for exact entries or short texts.
    distance: int | None
    #: The share of this text that the stored page holds (``None``: unknown).
    share: float | None
    #: True when this is the very text the crawl analysed (the hash of the text is the
    #: one the index recorded), False when it is not; ``None``: no record to tell.
    same_text: bool | None = None

    def holds(self, max_distance: int, min_share: float) -> bool:
        """Whether the stored page is this text as far as the index can tell: the same
        text or fingerprint, or within *max_distance* with at least *min_share* of the text
        held (an unknown share counts as held within the distance)."""
        if self.same or self.same_text:
            return True
        if self.distance is None or self.distance > max_distance:
            return False
        return self.share is None or self.share >= min_share


def _title_options(html: str) -> list[tuple[str, str]]:
    """``(title, where from)`` for each distinct title a spider may take from *html*, the
    default reading (:func:`page_title`) first, then no title at all."""
    options: list[tuple[str, str]] = []
    root = parse_html(html) if looks_like_html(html) else None
    if root is not None:
        for path, name in TITLE_SOURCES:
            found = root.find(path)
            if found is not None:
                text = " ".join("".join(found.itertext()).split())
                if text and all(text != seen for seen, _ in options):
                    options.append((text, name))
    default = page_title(html) if root is not None else ""
    options.sort(key=lambda option: option[0] != default)
    options.append(("", "nothing (no title)"))
    return options


def as_analysed(config: Any, analysed: Analysed | None) -> Any:
    """*config* with the text fields and extractor the crawl analysed a page with, as
    *analysed* records them (*config* itself without a record, or for a page the
    middleware checked)."""
    if analysed is None or analysed.fields == (RESPONSE_FIELD,):
        return config
    changes: dict[str, Any] = {}
    if analysed.text_fields != tuple(config.text_fields):
        changes["text_fields"] = analysed.text_fields
    if analysed.extractor != config.extractor_name and analysed.extractor in EXTRACTORS:
        changes.update(extractor=analysed.extractor, remove_boilerplate=True)
    return replace(config, **changes) if changes else config


def stored_how(analysed: Analysed | None) -> str:
    """What a diagnostic reading a page by *analysed* says of it: ``read as stored``, and
    what differs from the crawl's reading (an extractor of another version); ``""``
    without a record."""
    if analysed is None:
        return ""
    said = f"read as stored: {analysed.describe()}"
    if analysed.extractor not in EXTRACTORS:
        said += f"; assumed: no extractor {analysed.extractor!r} here, read with this one"
    elif analysed.version != extractor_version(analysed.extractor):
        now = extractor_version(analysed.extractor) or "another version"
        said += f"; assumed: read with {analysed.extractor} {now}"
    return said


def page_readings(
    raw: str, config: Any, url: str = "", analysed: Analysed | None = None
) -> list[Reading]:
    """Every reading of *raw* (a page, or a JSON item) under *config*, on the fields and
    extractor of *analysed* (the index's record of how the crawl read it) if given: the
    default first (what :func:`~scrapy_simhash.tools.fingerprinted.item_from_source`
    builds), then each other title a spider may have taken. A JSON item, or settings
    naming no title field, give one reading; so does a page the middleware checked."""
    if analysed is not None and analysed.fields == (RESPONSE_FIELD,):
        text = fields_text([raw], config.html_extractor)
        return [Reading({}, text, "the response's text, as the middleware read it")]
    config = as_analysed(config, analysed)
    item = item_from_source(raw, config, url=url)
    empty = set() if analysed is None else set(analysed.text_fields) - set(analysed.held)
    for name in empty:  # the fields the crawl's item left empty
        item[name] = ""
    titles = [name for name in config.text_fields if name in TITLE_FIELDS and name not in empty]
    is_page = any(item.get(name) == raw for name in config.text_fields)
    if not is_page or not looks_like_html(raw[:4096]):
        return [Reading(item, fingerprinted_text(item, config), "")]
    pages = [name for name in config.text_fields if name not in titles and name not in empty]
    if not pages or not titles:
        fields = ", ".join(config.text_fields)
        return [Reading(item, fingerprinted_text(item, config), f"{fields}: the page")]
    readings = []
    for title, source in _title_options(raw):
        variant = dict(item)
        for name in titles:
            variant[name] = title
        how = f"{', '.join(titles)} from {source}; {', '.join(pages)}: the page"
        readings.append(Reading(variant, fingerprinted_text(variant, config), how, source))
    return readings


def stored_reading(
    readings: list[Reading], pages: list[StoredPage], dedup: Any
) -> StoredReading | None:
    """Of *readings* and the *pages* stored under one key, the pair that agrees: a reading
    giving a stored fingerprint, else the nearest one; ``None`` when nothing is stored."""
    if not pages:
        return None
    best: StoredReading | None = None
    for reading in readings:
        analysis = analyse_text(dedup, reading.text)
        for page in pages:
            candidate = _compare(reading, analysis, page)
            if candidate.same_text:
                return candidate
            if best is None or _rank(candidate) < _rank(best):
                best = candidate
    return best


def _compare(reading: Reading, analysis: Analysis, page: StoredPage) -> StoredReading:
    same = page.fingerprint == analysis.value and page.exact == (analysis.kind == "short")
    distance = None
    held = None
    if not page.exact and analysis.kind == "simhash":
        distance = hamming_distance(page.fingerprint, analysis.value)
        held = share(analysis.sketch, page.sketch)
    same_text = None if page.analysed is None else page.analysed.text_hash == analysis.text_hash
    return StoredReading(reading, analysis, page, same, distance, held, same_text)


def _rank(candidate: StoredReading) -> tuple[bool, int, float]:
    distance = 65 if candidate.distance is None else candidate.distance
    return not candidate.same, distance, -(candidate.share or 0.0)


def assumption(readings: list[Reading], found: StoredReading | None) -> str:
    """What was assumed of the crawl's item, in words; ``""`` when nothing was (one
    reading only, or the one that gives the stored fingerprint). A page the index has a
    record of is ``read as stored``, and the very text the crawl analysed, or not."""
    analysed = None if found is None else found.page.analysed
    if found is not None and analysed is not None:
        said = stored_how(analysed)
        if found.same_text:
            return f"{said}; the very text the crawl analysed"
        return (
            f"{said}; not the very text the crawl analysed (another hash): a field the "
            "crawl's item did not take from the page as read here, or the page changed"
        )
    if found is not None and len(readings) < 2:
        return "assumed: read by these settings; the index has no record of how the crawl did"
    if len(readings) < 2:
        return ""
    if found is not None and found.same:
        return "the reading that gives the stored fingerprint"
    if found is not None:
        return "assumed: no reading gives the stored fingerprint; this one is nearest"
    return "assumed: not stored in the index, so a spider's other title cannot be ruled out"


@dataclass(frozen=True)
class SourceText:
    """A source read as the crawl read it (see :func:`read_as_crawled`)."""

    label: str
    text: str
    reading: Reading
    found: StoredReading | None
    assumed: str

    @property
    def described(self) -> str:
        """How it was read and what was assumed, in words; ``""`` for an item as it is."""
        if not self.reading.how:
            return ""
        return self.reading.how + (f" ({self.assumed})" if self.assumed else "")

    def as_dict(self) -> dict[str, Any]:
        return {
            "how": self.reading.how or None,
            # Nothing assumed of the very text the crawl analysed (its hash is recorded).
            "assumed": None if self.found and self.found.same_text else self.assumed or None,
            "stored_same": None if self.found is None else self.found.same,
            "same_text": None if self.found is None else self.found.same_text,
        }


def stored_keys(source: str) -> list[str]:
    """The keys *source* may be stored under: itself, and a file's ``file://`` URL."""
    keys = [source]
    path = Path(source)
    if len(source) < 4096 and "\n" not in source and path.is_file():
        keys.append(path.resolve().as_uri())
    return keys


def read_as_crawled(
    source: str, config: Any, index: Any, dedup: Any, like: SourceText | None = None
) -> SourceText:
    """*source* (as :func:`~scrapy_simhash.tools.sources.read_source` takes it) read as
    the crawl read it: when its key (a URL, or a file's ``file://`` URL) is stored in
    *index*, the reading that gives the stored fingerprint (or the nearest). A page not
    stored (a dropped copy) is read as *like* (a stored page read by this function) was,
    else as the reading nearest a stored page within the index's distance, else by the
    default reading; each says what it assumed."""
    label, raw = read_source(source, lambda value: value)  # type: ignore[arg-type,return-value]
    if isinstance(raw, bytes | bytearray):
        raw = bytes(raw).decode("utf-8", errors="replace")
    found = None
    readings: list[Reading] = []
    for key in stored_keys(source) if source != "-" else []:
        pages = index.find(key)
        if pages:
            readings = page_readings(raw, config, url=key, analysed=pages[-1].analysed)
            found = stored_reading(readings, pages, dedup)
            break
    # Not stored (a dropped copy): read on the fields of the stored page beside it.
    record = like.found.page.analysed if like is not None and like.found else None
    on = f", fields as stored for {like.label}" if like and record else ""
    if not readings:
        readings = page_readings(raw, config, analysed=record)
    if found is not None or len(readings) < 2:
        reading = found.reading if found else readings[0]
        return SourceText(label, reading.text, reading, found, assumption(readings, found))
    dropped = _as_dropped(readings, stored_keys(source), index, dedup)
    if dropped is not None:
        assumed = f"assumed: not stored; the reading at the distance the crawl logged{on}"
        return SourceText(label, dropped.text, dropped, None, assumed)
    if like is not None and like.found is not None and like.found.same:
        for reading in readings:
            if reading.title_from == like.reading.title_from:
                assumed = f"assumed: read as {like.label}, a stored page, was{on}"
                return SourceText(label, reading.text, reading, None, assumed)
    nearest = _nearest_stored(readings, index, dedup)
    if nearest is not None:
        assumed = f"assumed: not stored; the reading nearest a stored page{on}"
        return SourceText(label, nearest.text, nearest, None, assumed)
    assumed = assumption(readings, None) or ("assumed: not stored; read" if on else "")
    assumed += on if assumed else ""
    return SourceText(label, readings[0].text, readings[0], None, assumed)


def _as_dropped(readings: list[Reading], keys: list[str], index: Any, dedup: Any) -> Reading | None:
    """For a page the audit log says was dropped (its last drop, by distance), the first
    reading at the logged distance from the stored page it matched; else ``None``."""
    drop = None
    for record in index.drops():
        if record.key in keys and not record.exact and not record.shared:
            drop = record
    if drop is None:
        return None
    kept = [page.fingerprint for page in index.find(drop.kept_key) if not page.exact]
    for reading in readings:
        analysis = analyse_text(dedup, reading.text)
        if analysis.kind == "simhash" and any(
            hamming_distance(analysis.value, value) == drop.distance for value in kept
        ):
            return reading
    return None


def _nearest_stored(readings: list[Reading], index: Any, dedup: Any) -> Reading | None:
    """The reading whose fingerprint is nearest a stored page within the index's
    distance (the first of equals), ``None`` when none is near one."""
    best: tuple[int, int] | None = None
    for number, reading in enumerate(readings):
        analysis = analyse_text(dedup, reading.text)
        if analysis.kind != "simhash":
            continue
        distances = [m.distance for m in index.query(analysis.value)]
        if distances and (best is None or min(distances) < best[0]):
            best = (min(distances), number)
    return None if best is None else readings[best[1]]
