"""What every index does, whatever stores it.

An index holds the fingerprints of pages already kept and answers one question atomically:
"is there a stored page within ``max_distance`` of this fingerprint? If not, store this one."
Backends (memory, SQLite, Redis) implement :class:`NearDuplicateIndex`, each as
:class:`~.policy.Index` over a store of its own (see :mod:`~.store`); one contract test
suite runs against each. The functions below are what the policy and the stores share:
the way a verdict of :func:`~.rule.decide` becomes an :class:`Outcome`.

The values the interface speaks of live beside it, each in the module named after it:
what a check answers in :mod:`~.outcome`, what an index holds (pages, the audit log, keys)
in :mod:`~.stored`, what it was built for and the checks on open in :mod:`~.parameters`.
They are importable from here too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Protocol, runtime_checkable

from ..anchors import Anchors
from ..sketch import Sketch
from .analysed import Analysed
from .blocks import BlockPlan
from .outcome import Match, Outcome, Status
from .parameters import (
    IndexParameters,
    RequestedParameters,
    check_anchors_format,
    check_layout_version,
    check_sketch_format,
    stored_parameters,
)
from .rule import Candidate, Decision, Probe
from .stored import MAX_KEY_BYTES, DropRecord, StoredPage, storable_key, storable_pages

__all__ = [
    "MAX_KEY_BYTES",
    "DropRecord",
    "IndexHotPath",
    "IndexMaintenance",
    "IndexParameters",
    "Match",
    "NearDuplicateIndex",
    "Outcome",
    "RequestedParameters",
    "Status",
    "StoredPage",
    "as_match",
    "check_anchors_format",
    "check_layout_version",
    "check_sketch_format",
    "nearest",
    "probe_of",
    "storable_key",
    "storable_pages",
    "stored_outcome",
    "stored_parameters",
]

_MASK64 = (1 << 64) - 1


class IndexHotPath(Protocol):
    """What a crawl calls for every page: check-and-insert, query, the audit log."""

    #: The block plan (tables and keys) the index was built with.
    plan: BlockPlan
    #: The parameters stored in the index.
    parameters: IndexParameters
    #: The distance checks use: ``parameters.max_distance``, or a smaller one asked for
    #: when the index was opened.
    max_distance: int
    #: Where the index lives, for messages (never contains a password).
    location: str

    #: The share of a page's text a stored page must hold to match it (0: not checked).
    min_share: float

    def check_and_add(
        self,
        fingerprint: int,
        key: str,
        anchors: Anchors | None = None,
        sketch: Sketch | None = None,
        *,
        analysed: Analysed | None = None,
    ) -> Outcome:
        """Atomically: ask :func:`~scrapy_simhash.index.rule.decide` which stored page
        this one repeats, among the pages within ``max_distance`` of *fingerprint* and,
        with *anchors*, those sharing its long paragraphs: the entry under *key* itself
        (``unchanged``), else another page's (``duplicate``), each holding at least
        ``min_share`` of its text by *sketch*; with none, store *fingerprint*, *anchors*
        and *sketch* under *key*, replacing what was stored under *key* (``changed``) or
        not (``new``). An index holds one entry per key: the newest. *analysed*, how the
        text was read, is stored with the page, in the same write."""
        ...

    def check_and_add_exact(
        self, digest: int, key: str, *, analysed: Analysed | None = None
    ) -> Outcome:
        """:meth:`check_and_add` for a text *digest*, matched exactly: used for texts too
        short for SimHash distances to mean much. Entries of both kinds share the keys:
        a page whose text became short replaces its fingerprint, and the other way."""
        ...

    def query(self, fingerprint: int, max_distance: int | None = None) -> list[Match]:
        """Return the stored pages within *max_distance* (default and at most the index's
        own), nearest first."""
        ...

    def query_contained(
        self, fingerprint: int, anchors: Anchors, sketch: Sketch | None = None
    ) -> Match | None:
        """The page a check of *fingerprint* with *anchors* and *sketch* would match by
        shared paragraphs (see :meth:`check_and_add`), ignoring any page within the
        distance; nothing is stored."""
        ...

    def __len__(self) -> int:
        """Number of stored pages (fingerprints and exact digests)."""
        ...

    def record_drop(
        self, key: str, match: Match, *, exact: bool = False, unchanged: bool = False
    ) -> None:
        """Append to the audit log that *key* was dropped as a duplicate of *match*, or,
        *unchanged*, as unchanged since *match* was stored under its own key."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> NearDuplicateIndex: ...

    def __exit__(self, *exc_info: object) -> None: ...


class IndexMaintenance(Protocol):
    """What the CLI, export and import call: reading, restoring, forgetting, expiring."""

    def drops(self, *, since: float | None = None) -> Iterator[DropRecord]:
        """The audit log, oldest first, optionally only entries at or after *since*."""
        ...

    def pages(self) -> Iterator[StoredPage]:
        """Every stored page, in the order stored: by ``added_at``, ties in the order
        the entries were written."""
        ...

    def find(self, key: str) -> list[StoredPage]:
        """The stored pages with this *key* (usually one)."""
        ...

    def add_pages(self, pages: Iterable[StoredPage]) -> int:
        """Store *pages* as they are, without checking for near-duplicates (restoring an
        export); return how many were stored. Skipped: a fingerprint already stored under
        the same key; an exact digest already stored (under any key: a digest is stored
        once)."""
        ...

    def forget(self, key: str) -> int:
        """Remove the pages stored under *key* (so they can be crawled again); return how
        many were removed."""
        ...

    def expire(self, older_than: float) -> int:
        """Remove pages stored before the epoch time *older_than*; return how many."""
        ...

    def expire_drops(self, older_than: float) -> int:
        """Remove audit-log entries recorded before the epoch time *older_than*; return
        how many. Stored pages are not touched."""
        ...

    def size(self) -> int | None:
        """Bytes the index takes (on disk, or in memory), or ``None`` where the backend
        cannot tell cheaply."""
        ...

    def compact(self) -> bool:
        """Give the space of removed pages back (SQLite: ``VACUUM``); return False when
        the backend has nothing to give back and nothing was done."""
        ...


@runtime_checkable
class NearDuplicateIndex(IndexHotPath, IndexMaintenance, Protocol):
    """The interface of every index backend: the hot path and maintenance."""


def as_match(
    candidate: Candidate, fingerprint: int, share: float | None = None, own_text: bool = False
) -> Match:
    """*candidate* as the match of a check of *fingerprint* (holding *share* of its text,
    of its own text with *own_text*)."""
    distance = ((fingerprint ^ candidate.fingerprint) & _MASK64).bit_count()
    c = candidate
    return Match(c.key, c.fingerprint, distance, c.added_at, c.shared, share, own_text=own_text)


def probe_of(
    key: str, fingerprint: int, anchors: Anchors | None = None, sketch: Sketch | None = None
) -> Probe:
    """The page a check asks :func:`~.rule.decide` about: its key as stored, and its
    anchors and sketch where it has any."""
    return Probe(storable_key(key), fingerprint, anchors or None, sketch or None)


def stored_outcome(decision: Decision | None, fingerprint: int, replaced: bool) -> Outcome:
    """The outcome of a check that stored its page (``changed`` where it *replaced* what
    its key held), with the closest candidate *decision* refused (see
    :attr:`Outcome.refused`)."""
    refused = None
    if decision is not None and decision.closest is not None:
        candidate, share = decision.closest
        refused = replace(
            as_match(candidate, fingerprint, share), contained_in_page=decision.contains
        )
    return Outcome("changed" if replaced else "new", refused=refused)


def nearest(fingerprint: int, candidates, max_distance: int) -> list[tuple[int, object]]:
    """Return ``(distance, candidate_id)`` for the ``(candidate_id, fingerprint)`` pairs
    within *max_distance*, nearest first, each candidate once."""
    seen: dict[object, int] = {}
    for candidate_id, other in candidates:
        if candidate_id not in seen:
            distance = ((fingerprint ^ other) & _MASK64).bit_count()
            if distance <= max_distance:
                seen[candidate_id] = distance
    return sorted((d, c) for c, d in seen.items())
