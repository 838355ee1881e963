"""What every index does, whatever stores it.

An index holds the fingerprints of pages already kept and answers one question atomically:
"is there a stored page within ``max_distance`` of this fingerprint? If not, store this one."
Backends (memory, SQLite, Redis) implement :class:`NearDuplicateIndex`; one contract test
suite runs against each.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Literal, Protocol, runtime_checkable

from ..anchors import ANCHORS_FORMAT, Anchors
from ..exceptions import (
    IndexCorrupt,
    IndexNotFound,
    IndexParameterMismatch,
    IndexUnavailable,
    SimhashIndexError,
)
from ..features import DEFAULT_FEATURES
from ..sketch import DEFAULT_MIN_SHARE, SKETCH_FORMAT, Sketch
from .analysed import Analysed
from .blocks import BlockPlan, default_blocks
from .rule import Candidate, Decision, Probe, decide

_MASK64 = (1 << 64) - 1


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


@dataclass(frozen=True)
class IndexParameters:
    """What an index was built for; stored in the index and checked on every open."""

    max_distance: int
    blocks: int
    features: str  #: the fingerprinter's signature: fingerprints of other features never mix

    @property
    def plan(self) -> BlockPlan:
        return BlockPlan(max_distance=self.max_distance, blocks=self.blocks)


@dataclass(frozen=True)
class RequestedParameters:
    """Parameters asked for when opening an index; ``None`` means "whatever is stored"
    (or the default, for a new index)."""

    max_distance: int | None = None
    blocks: int | None = None
    features: str | None = None

    def for_new_index(self, default_features: str) -> IndexParameters:
        k = 3 if self.max_distance is None else self.max_distance
        blocks = default_blocks(k) if self.blocks is None else self.blocks
        params = IndexParameters(k, blocks, self.features or default_features)
        params.plan  # noqa: B018  (validates the combination before anything is written)
        return params

    def check(self, stored: IndexParameters, location: str) -> IndexParameters:
        """Return *stored* if it satisfies this request, else raise with both values.
        A smaller ``max_distance`` than the stored one is satisfied: an index finds every
        page within its distance, so it answers any smaller one too."""
        asked_beyond = self.max_distance is not None and self.max_distance > stored.max_distance
        wanted = {
            "max_distance": self.max_distance if asked_beyond else None,
            "blocks": self.blocks,
            "features": self.features,
        }
        differences = [
            f"{name}: index has {getattr(stored, name)!r}, requested {value!r}"
            for name, value in wanted.items()
            if value is not None and value != getattr(stored, name)
        ]
        if differences:
            rebuild = (
                f" To keep its pages, build a copy for distance {self.max_distance} and point "
                f"SIMHASH_INDEX_URI at it: scrapy-simhash rebuild --index {location} "
                f"--max-distance {self.max_distance} --into NEW-INDEX."
                if asked_beyond and len(differences) == 1
                else ""
            )
            raise IndexParameterMismatch(
                f"The index at {location} was built with other parameters ("
                + "; ".join(differences)
                + "). Use the index's parameters, or point SIMHASH_INDEX_URI at a new index "
                "(an index is never rebuilt on its own: it would lose every stored page)." + rebuild
            )
        return stored


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


class IndexBase:
    """What the backends share: the open / create / check-parameters lifecycle, the
    mapping of a driver's errors to ours, context management and distance checks.

    A backend implements :meth:`_read_parameters` and :meth:`_create`, and names its
    driver's errors in ``_driver_errors`` with :meth:`_translate` to turn them into ours.
    """

    plan: BlockPlan
    parameters: IndexParameters
    location: str
    #: The exceptions of the backend's driver that :meth:`_errors` translates.
    _driver_errors: tuple[type[BaseException], ...] = ()

    # -- the lifecycle -----------------------------------------------------------------

    def _open(self, requested: RequestedParameters, *, create: bool) -> IndexParameters:
        """Read the stored parameters; with none stored, create the index with the
        requested ones (or, unless *create*, refuse); then check the request against
        what is stored. Never rebuilds or deletes what is there."""
        with self._errors("open"):
            stored = self._read_parameters()
            if stored is None:
                if not create:
                    raise IndexNotFound(f"No index at {self.location}")
                stored = self._create(requested.for_new_index(DEFAULT_FEATURES))
        parameters = requested.check(stored, self.location)
        self.max_distance = (
            parameters.max_distance if requested.max_distance is None else requested.max_distance
        )
        return parameters

    def _read_parameters(self) -> IndexParameters | None:  # pragma: no cover - abstract
        """The parameters stored at the location, ``None`` where there is no index yet;
        raises when what is there is not a usable index."""
        raise NotImplementedError

    def _create(self, parameters: IndexParameters) -> IndexParameters:  # pragma: no cover
        """Create the index with *parameters*; return the parameters stored then (another
        process creating the same index at the same moment may have won)."""
        raise NotImplementedError

    @contextlib.contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        """Turn the driver's errors into ours, naming the index and what to do."""
        try:
            yield
        except self._driver_errors as e:
            raise self._translate(e, doing) from None

    def _translate(self, error: BaseException, doing: str) -> SimhashIndexError:
        return IndexUnavailable(f"The index at {self.location} failed ({doing}: {error})")

    # -- the decision ------------------------------------------------------------------

    #: The share of a page's text a stored page must hold to match it (0: not checked).
    min_share: float = DEFAULT_MIN_SHARE

    def _near(self, fingerprint: int, max_distance: int) -> list[Candidate]:  # pragma: no cover
        """The stored pages within *max_distance*, with their sketches."""
        raise NotImplementedError

    def _anchored(self, probe: Probe) -> list[Candidate]:  # pragma: no cover
        """The stored pages sharing long paragraphs with *probe* (see
        :func:`~scrapy_simhash.index.rule.anchor_candidates`)."""
        raise NotImplementedError

    def _decide(self, probe: Probe, *, near: bool = True) -> Decision:
        """Inside a check's transaction: the verdict of :func:`~.rule.decide` on the
        candidates of *probe*. The pages sharing paragraphs are read only when no page
        within the distance is confirmed (one would win anyway). Without *near*, only
        they are asked (:meth:`query_contained`)."""
        found = self._near(probe.fingerprint, self.max_distance) if near else []
        decision = decide(probe, found, max_distance=self.max_distance, min_share=self.min_share)
        if decision.candidate is not None or not probe.anchors:
            return decision
        found += self._anchored(probe)
        return decide(probe, found, max_distance=self.max_distance, min_share=self.min_share)

    def _outcome(self, decision: Decision, probe: Probe) -> Outcome | None:
        """The outcome of a matched *decision*, ``None`` when the page is to be stored."""
        if decision.candidate is None:
            return None
        match = as_match(decision.candidate, probe.fingerprint, decision.share)
        return Outcome("unchanged" if decision.own else "duplicate", match)

    # -- shared behaviour --------------------------------------------------------------

    def __enter__(self):
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    #: The distance checks use: the index's own, or a smaller one asked for when opening it.
    max_distance: int

    def _query_distance(self, max_distance: int | None) -> int:
        k = self.plan.max_distance
        if max_distance is None:
            return self.max_distance
        if not 0 <= max_distance <= k:
            raise ValueError(
                f"max_distance={max_distance} is beyond what the index at {self.location} "
                f"guarantees to find (0 to {k}); build an index with a larger max_distance"
            )
        return max_distance


def check_layout_version(version: int, supported: int, location: str, what: str) -> None:
    """Refuse a layout (*what*: "schema version", "layout version") other than
    *supported*: a newer one needs a newer scrapy-simhash, an older one an export with
    the scrapy-simhash that built it (there is no upgrade in place)."""
    if version > supported:
        raise IndexUnavailable(
            f"The index at {location} has {what} {version}, newer than this scrapy-simhash "
            f"knows ({supported}); upgrade scrapy-simhash"
        )
    if version < supported:
        raise IndexUnavailable(
            f"The index at {location} has {what} {version}, older than this "
            f"scrapy-simhash's ({supported}), and there is no automatic upgrade. It was left "
            "untouched: export it with the scrapy-simhash that built it (scrapy-simhash "
            "export) and import the file into a new index with this one"
        )


def check_anchors_format(stored: str | None, location: str) -> None:
    """Refuse an index whose paragraph anchors were made otherwise than this
    scrapy-simhash makes them (they would never match)."""
    if stored != ANCHORS_FORMAT:
        raise IndexParameterMismatch(
            f"The index at {location} stores paragraph anchors of the format {stored!r}; "
            f"this scrapy-simhash makes {ANCHORS_FORMAT!r}, and the two never match. Use "
            "the scrapy-simhash that built it, or point SIMHASH_INDEX_URI at a new index "
            "(scrapy-simhash export, then import into the new one, keeps its pages)"
        )


def stored_parameters(meta: Mapping[str, str], location: str, where: str) -> IndexParameters:
    """The parameters in the stored *meta* (read from *where*), else :class:`IndexCorrupt`."""
    try:
        return IndexParameters(int(meta["max_distance"]), int(meta["blocks"]), meta["features"])
    except (KeyError, ValueError):
        raise IndexCorrupt(
            f"The index at {location} has no valid parameters in {where}; restore it from "
            "a backup (scrapy-simhash export/import) or use another index"
        ) from None


#: Longest key stored, in UTF-8 bytes (longer ones are cut, at a character): longer than
#: URLs that web servers accept (8 KB by default in Apache and nginx), short enough that
#: a crafted export of many keys cannot make an import hold much memory per page.
MAX_KEY_BYTES = 16384


def as_match(candidate: Candidate, fingerprint: int, share: float | None = None) -> Match:
    """*candidate* as the match of a check of *fingerprint*."""
    distance = ((fingerprint ^ candidate.fingerprint) & _MASK64).bit_count()
    return Match(
        candidate.key, candidate.fingerprint, distance, candidate.added_at, candidate.shared, share
    )


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


def check_sketch_format(stored: str | None, location: str) -> None:
    """Refuse an index whose sketches were made otherwise than this scrapy-simhash makes
    them (their samples would never match)."""
    if stored != SKETCH_FORMAT:
        raise IndexParameterMismatch(
            f"The index at {location} stores text sketches of the format {stored!r}; "
            f"this scrapy-simhash makes {SKETCH_FORMAT!r}, and the two never match. Use "
            "the scrapy-simhash that built it, or point SIMHASH_INDEX_URI at a new index "
            "(scrapy-simhash export, then import into the new one, keeps its pages)"
        )


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
