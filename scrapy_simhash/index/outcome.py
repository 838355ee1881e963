"""What a check answers: its :data:`Status`, the :class:`Match` it found and the
:class:`Outcome` that holds both.

Apart from :mod:`~.base` (the interface every index implements): these are the values a
check hands to the crawl, the CLI and the archive job, which read them without caring
which backend made them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Match:
    """A stored page found near a probed fingerprint."""

    key: str  #: the URL (or other key) the page was stored under
    fingerprint: int  #: its fingerprint (for exact entries: the digest of its text)
    distance: int  #: Hamming distance to the probed fingerprint (0 for exact entries)
    added_at: float  #: when it was stored, seconds since the epoch
    #: For a page found by containment (see :mod:`scrapy_simhash.anchors`): the anchors
    #: it shares with the probed page; empty for a page found by distance.
    shared: tuple[int, ...] = ()
    #: The share of the probed page's text that this page holds (see
    #: :func:`~scrapy_simhash.sketch.share`); ``None`` where unknown or not asked.
    share: float | None = None
    #: A stored page refused (see :attr:`Outcome.refused`) whose text the probed page
    #: holds: the share of it held, at least the check's ``min_share``; else ``None``.
    contained_in_page: float | None = None
    #: The share is of the probed page's own text, its site's template aside (see
    #: :mod:`scrapy_simhash.template`).
    own_text: bool = False

    @property
    def contained(self) -> bool:
        """Found because one page's long paragraphs are in the other's, not by distance."""
        return bool(self.shared)


#: What a check found, seen from the page checked under its key:
#: ``new``: nothing near and nothing under its key, stored;
#: ``changed``: nothing near, but its key was stored: the new fingerprint replaced the
#: entries under the key;
#: ``unchanged``: the nearest entry within the distance is the one under its own key
#: (a re-crawl), nothing stored;
#: ``duplicate``: the nearest entry within the distance is another page's, nothing stored.
Status = Literal["new", "changed", "unchanged", "duplicate"]


@dataclass(frozen=True)
class Outcome:
    """The result of :meth:`NearDuplicateIndex.check_and_add`."""

    status: Status
    #: The entry matched (``unchanged``: under the page's own key; ``duplicate``: another
    #: page's); ``None`` when the page was stored.
    match: Match | None = None
    #: A stored page that looked alike (near, or sharing long paragraphs) but holds too
    #: little of this page's text to drop it: the closest of them, with its share.
    refused: Match | None = None
