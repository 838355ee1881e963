"""The index: one policy over a store (see :mod:`~.store`).

:class:`Index` is what every backend is: it opens the store (reading, creating and
checking the parameters), asks :func:`~.rule.decide` on what the store's atomic step
read, and says what a check answers. How pages are kept, and how a check stays atomic,
is the store's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ..anchors import Anchors
from ..exceptions import IndexNotFound
from ..features import DEFAULT_FEATURES
from ..sketch import DEFAULT_MIN_SHARE, Sketch
from .analysed import Analysed
from .base import as_match, probe_of, stored_outcome
from .blocks import BlockPlan
from .outcome import Match, Outcome
from .parameters import IndexParameters, RequestedParameters
from .rule import Decision, Probe, decide
from .store import Page, Reading, Store
from .stored import DropRecord, StoredPage, drop_record, storable_key

if TYPE_CHECKING:
    from .journal import Journal

__all__ = ["Index"]


class Index:
    """A near-duplicate index over *store*, opened with the *requested* parameters
    (created with them when there is no index yet and *create*). Implements
    :class:`~.base.NearDuplicateIndex`."""

    #: The share of a page's text a stored page must hold to match it (0: not checked).
    min_share: float = DEFAULT_MIN_SHARE

    def __init__(self, store: Store, requested: RequestedParameters, *, create: bool) -> None:
        self.store = store
        self.location = store.location
        try:
            self.parameters: IndexParameters = self._open(requested, create=create)
            self.plan: BlockPlan = self.parameters.plan
            store.opened(self.parameters, self.max_distance)
        except BaseException:
            store.close()
            raise

    def _open(self, requested: RequestedParameters, *, create: bool) -> IndexParameters:
        """Read the stored parameters; with none stored, create the index with the
        requested ones (or, unless *create*, refuse); then check the request against
        what is stored. Never rebuilds or deletes what is there."""
        with self.store.errors("open"):
            stored = self.store.read_parameters()
            if stored is None:
                if not create:
                    raise IndexNotFound(f"No index at {self.location}")
                stored = self.store.create(requested.for_new_index(DEFAULT_FEATURES))
        parameters = requested.check(stored, self.location)
        #: The distance checks use: the index's own, or a smaller one asked for.
        self.max_distance: int = (
            parameters.max_distance if requested.max_distance is None else requested.max_distance
        )
        return parameters

    # -- the decision ------------------------------------------------------------------

    def _decide(self, reading: Reading, probe: Probe, *, near: bool = True) -> Decision:
        """The verdict of :func:`~.rule.decide` on what *reading* found for *probe*. The
        pages sharing paragraphs are read only when no page within the distance is
        confirmed (one would win anyway). Without *near*, only they are asked."""
        k, share = self.max_distance, self.min_share
        found = reading.near(probe.fingerprint, k) if near else []
        decision = decide(probe, found, max_distance=k, min_share=share)
        if decision.candidate is not None or not probe.anchors:
            return decision
        found += reading.anchored(probe)
        return decide(probe, found, max_distance=k, min_share=share)

    def _page(self, probe: Probe, analysed: Analysed | None = None) -> Page:
        return Page(probe, analysed, shares=self.min_share > 0 and probe.sketch is not None)

    # -- the hot path ------------------------------------------------------------------

    def check_and_add(
        self,
        fingerprint: int,
        key: str,
        anchors: Anchors | None = None,
        sketch: Sketch | None = None,
        *,
        analysed: Analysed | None = None,
    ) -> Outcome:
        probe = probe_of(key, fingerprint, anchors, sketch)
        checked = self.store.check(
            self._page(probe, analysed), lambda reading: self._decide(reading, probe)
        )
        if checked.replaced is not None:
            return stored_outcome(checked.decision, fingerprint, bool(checked.replaced))
        decision = checked.decision
        assert decision is not None and decision.candidate is not None
        match = as_match(decision.candidate, fingerprint, decision.share, decision.own_text)
        return Outcome("unchanged" if decision.own else "duplicate", match)

    def check_and_add_exact(
        self, digest: int, key: str, *, analysed: Analysed | None = None
    ) -> Outcome:
        key = storable_key(key)
        found = self.store.check_exact(digest, key, analysed)
        if isinstance(found, tuple):
            stored_key, added_at = found
            match = Match(stored_key, digest, 0, added_at)
            return Outcome("unchanged" if stored_key == key else "duplicate", match)
        return Outcome("changed" if found else "new")

    def query(self, fingerprint: int, max_distance: int | None = None) -> list[Match]:
        k = self._query_distance(max_distance)
        return [as_match(c, fingerprint) for c in self.store.near(fingerprint, k)]

    def query_contained(
        self, fingerprint: int, anchors: Anchors, sketch: Sketch | None = None
    ) -> Match | None:
        if not anchors:
            return None
        probe = probe_of("", fingerprint, anchors, sketch)
        decision = self.store.read(
            self._page(probe), lambda reading: self._decide(reading, probe, near=False)
        )
        if decision.candidate is None:
            return None
        return as_match(decision.candidate, fingerprint, decision.share, decision.own_text)

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

    def __len__(self) -> int:
        return self.store.count()

    # -- the audit log -----------------------------------------------------------------

    def record_drop(
        self, key: str, match: Match, *, exact: bool = False, unchanged: bool = False
    ) -> None:
        self.store.add_drop(drop_record(key, match, exact=exact, unchanged=unchanged))

    def drops(self, *, since: float | None = None) -> Iterator[DropRecord]:
        return self.store.drops(since)

    def expire_drops(self, older_than: float) -> int:
        return self.store.expire_drops(older_than)

    # -- maintenance -------------------------------------------------------------------

    def pages(self) -> Iterator[StoredPage]:
        return self.store.pages()

    def find(self, key: str) -> list[StoredPage]:
        return self.store.find(key)

    def add_pages(self, pages: Iterable[StoredPage]) -> int:
        return self.store.add_pages(pages)

    def forget(self, key: str) -> int:
        return self.store.forget(key)

    def expire(self, older_than: float) -> int:
        return self.store.expire(older_than)

    def size(self) -> int | None:
        return self.store.size()

    def compact(self) -> bool:
        return self.store.compact()

    def journal(self, crawl: str | None = None, **kwargs: Any) -> Journal:
        """The journal of a crawl's pages not yet in its output (see
        :mod:`scrapy_simhash.index.journal`), kept by the store."""
        return self.store.journal(crawl, **kwargs)

    def close(self) -> None:
        """Close the store. Idempotent."""
        self.store.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.location!r}, {self.parameters})"
