"""What an index holds, as its maintenance reads and restores it: a :class:`StoredPage`,
a :class:`DropRecord` of the audit log, and the key every entry is stored under
(:func:`storable_key`).

Apart from :mod:`~.base` (the interface every index implements): export, import, the CLI
and the archive job read and write these values with any backend, and every backend
stores a key the same way.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from ..anchors import Anchors
from ..sketch import Sketch
from .analysed import Analysed
from .outcome import Match


@dataclass(frozen=True)
class StoredPage:
    """A page as stored in an index (for listing, export and the CLI)."""

    key: str
    fingerprint: int  #: its SimHash, or for ``exact`` entries the digest of its text
    added_at: float
    exact: bool = False  #: stored by :meth:`NearDuplicateIndex.check_and_add_exact`
    #: Its paragraph anchors (without their units' sizes), if any.
    anchors: Anchors | None = None
    #: The sketch of its text (as stored), if any.
    sketch: Sketch | None = None
    #: How its text was analysed (fields, extractor, text hash), if the index knows.
    analysed: Analysed | None = None


@dataclass(frozen=True)
class DropRecord:
    """One entry of the audit log: a page that was dropped, and the kept page it matched."""

    key: str
    kept_key: str
    distance: int
    exact: bool
    at: float
    #: Dropped as unchanged since the last crawl (it matched its own stored entry), not
    #: as a duplicate of another page.
    unchanged: bool = False
    #: Paragraph anchors shared with the kept page when it was dropped as contained in it
    #: (0: dropped by distance, or exactly).
    shared: int = 0
    #: The share of the dropped page's text that the kept page holds (``None``: unknown,
    #: or recorded before shares were).
    share: float | None = None

    @property
    def is_revisit(self) -> bool:
        """A page dropped because it was unchanged since it was stored under its own key
        (a re-crawl), not as a duplicate of another page (entries written before
        ``unchanged`` existed tell it by the two keys)."""
        return self.unchanged or self.key == self.kept_key


#: Longest key stored, in UTF-8 bytes (longer ones are cut, at a character): longer than
#: URLs that web servers accept (8 KB by default in Apache and nginx), short enough that
#: a crafted export of many keys cannot make an import hold much memory per page.
MAX_KEY_BYTES = 16384


def storable_key(key: str) -> str:
    """*key* as every backend stores it. A lone surrogate (``"\\ud800"``, from a broken
    decoder upstream) cannot be written as UTF-8, which SQLite and Redis need: it becomes
    its escape (``\\ud800`` as six characters). A key longer than :data:`MAX_KEY_BYTES`
    is cut there. Any other key is returned unchanged."""
    try:
        encoded = key.encode("utf-8")
    except UnicodeEncodeError:
        encoded = key.encode("utf-8", "backslashreplace")
    else:
        if len(encoded) <= MAX_KEY_BYTES:
            return key
    return encoded[:MAX_KEY_BYTES].decode("utf-8", "ignore")


def storable_pages(pages: Iterable[StoredPage]) -> Iterator[StoredPage]:
    """*pages* with their keys made storable (see :func:`storable_key`)."""
    for page in pages:
        key = storable_key(page.key)
        yield page if key is page.key else replace(page, key=key)


def drop_record(key: str, match: Match, *, exact: bool, unchanged: bool) -> DropRecord:
    """The audit log's record, made now, of the page under *key* dropped as a repeat of
    *match* (see :meth:`~.base.IndexHotPath.record_drop`)."""
    return DropRecord(
        storable_key(key),
        match.key,
        match.distance,
        exact,
        time.time(),
        unchanged,
        len(match.shared),
        match.share,
    )
