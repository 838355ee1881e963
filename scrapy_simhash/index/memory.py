"""An index held in a Python dict: for tests, scripts and one-off runs (nothing persists)."""

from __future__ import annotations

import contextlib
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ..anchors import MAX_ANCHOR_PAGES, Anchors
from ..sketch import Sketch
from .analysed import Analysed
from .base import nearest
from .parameters import IndexParameters, RequestedParameters
from .policy import Index
from .rule import (
    Candidate,
    Decision,
    Probe,
    anchor_candidates,
    boilerplate,
    by_anchors,
    sighted,
    sighting,
)
from .store import Checked, Decide, Page
from .stored import DropRecord, StoredPage, storable_key, storable_pages
from .uri import uri_options

if TYPE_CHECKING:
    from .journal import Journal


class MemoryStore:
    """The store of an in-process index (see :mod:`~.store`): dicts, and an atomic step
    that is atomic because one thread at a time calls it."""

    location = "memory:"

    def __init__(self) -> None:
        # page id -> (fingerprint, key, added_at); ids grow, so "earliest" is the smallest id.
        self._pages: dict[int, tuple[int, str, float]] = {}
        # digest -> (key, added_at, id): ids shared with pages, for the order stored.
        self._exact: dict[int, tuple[str, float, int]] = {}
        # key -> ids of its pages and digests of its exact entries: a check looks up the
        # entries to replace under its key without reading every page.
        self._by_key: defaultdict[str, tuple[set[int], set[int]]] = defaultdict(
            lambda: (set(), set())
        )
        self._drops: list[DropRecord] = []
        self._next_id = 1
        # Paragraph anchors: anchor -> ids of the pages holding it (its count is the
        # size), and page id -> its anchors.
        self._anchor_pages: defaultdict[int, set[int]] = defaultdict(set)
        self._anchors: dict[int, Anchors] = {}
        # anchor -> the sightings of the pages seen holding it (see rule.is_boilerplate):
        # kept when its pages are dropped or removed.
        self._seen: dict[int, list[int]] = {}
        # page id -> its text's sketch (see scrapy_simhash.sketch).
        self._sketches: dict[int, Sketch] = {}
        # key -> how its page was analysed, while the key holds entries.
        self._analysed: dict[str, Analysed] = {}

    def errors(self, doing: str) -> contextlib.nullcontext[None]:
        return contextlib.nullcontext()  # no driver, no driver's errors

    def read_parameters(self) -> IndexParameters | None:
        return None  # a new index every time

    def create(self, parameters: IndexParameters) -> IndexParameters:
        return parameters

    def opened(self, parameters: IndexParameters, max_distance: int) -> None:
        self.plan = parameters.plan
        self._tables: list[defaultdict[int, list[int]]] = [
            defaultdict(list) for _ in range(self.plan.table_count)
        ]

    def _candidates(self, fingerprint: int):
        for table, key in zip(self._tables, self.plan.keys(fingerprint), strict=True):
            for page_id in table.get(key, ()):
                yield page_id, self._pages[page_id][0]

    def _candidate(self, page_id: int, distance: int) -> Candidate:
        fingerprint, key, added_at = self._pages[page_id]
        anchors = self._anchors.get(page_id)
        return Candidate(
            page_id,
            key,
            fingerprint,
            added_at,
            page_id,
            distance,
            summary=anchors.summary if anchors else None,
            sketch=self._sketches.get(page_id),
        )

    def near(self, fingerprint: int, max_distance: int) -> list[Candidate]:
        found = nearest(fingerprint, self._candidates(fingerprint), max_distance)
        return [self._candidate(i, d) for d, i in found]

    def anchored(self, probe: Probe) -> list[Candidate]:
        assert probe.anchors is not None
        hits = {
            a: sorted(self._anchor_pages[a])[: MAX_ANCHOR_PAGES + 1]
            for a in probe.anchors.hashes
            if a in self._anchor_pages
        }
        seen = {a: self._seen.get(a, ()) for a in hits}
        pages = by_anchors(hits, boilerplate(seen, probe.key))
        stored = {
            i: self._candidate(i, (probe.fingerprint ^ self._pages[i][0]).bit_count())
            for i in pages
        }
        return anchor_candidates(probe, pages, stored)

    def check(self, page: Page, decide: Decide) -> Checked:
        probe = page.probe
        self._sight(probe.anchors, probe.key)
        decision = decide(self)
        if decision.candidate is not None:
            return Checked(decision, None)
        replaced = self._forget(probe.key)
        self._store(probe.fingerprint, probe.key, time.time(), probe.anchors, probe.sketch)
        self._note(probe.key, page.analysed)
        return Checked(decision, replaced)

    def read(self, page: Page, decide: Decide) -> Decision:
        return decide(self)

    def _sight(self, anchors: Anchors | None, key: str) -> None:
        """Count the page under *key* among those seen holding *anchors*."""
        page = sighting(key)
        for anchor in anchors.hashes if anchors else ():
            more = sighted(self._seen.get(anchor, ()), page)
            if more is not None:
                self._seen[anchor] = more

    def _store(
        self,
        fingerprint: int,
        key: str,
        added_at: float,
        anchors: Anchors | None = None,
        sketch: Sketch | None = None,
    ) -> None:
        page_id, self._next_id = self._next_id, self._next_id + 1
        self._pages[page_id] = (fingerprint, key, added_at)
        if sketch:
            self._sketches[page_id] = sketch.stored()
        self._by_key[key][0].add(page_id)
        for table, block_key in zip(self._tables, self.plan.keys(fingerprint), strict=True):
            table[block_key].append(page_id)
        if anchors:
            self._anchors[page_id] = anchors.stored()
            for anchor in anchors.hashes:
                self._anchor_pages[anchor].add(page_id)

    def _remove(self, page_id: int) -> None:
        fingerprint, key, _ = self._pages.pop(page_id)
        anchors = self._anchors.pop(page_id, None)
        self._sketches.pop(page_id, None)
        for anchor in anchors.hashes if anchors else ():
            pages = self._anchor_pages[anchor]
            pages.discard(page_id)
            if not pages:
                del self._anchor_pages[anchor]
        self._unlist(key, page_id, 0)
        for table, block_key in zip(self._tables, self.plan.keys(fingerprint), strict=True):
            ids = table[block_key]
            ids.remove(page_id)
            if not ids:
                del table[block_key]

    def check_exact(
        self, digest: int, key: str, analysed: Analysed | None
    ) -> tuple[str, float] | int:
        if digest in self._exact:
            stored_key, added_at, _ = self._exact[digest]
            return stored_key, added_at
        replaced = self._forget(key)
        self._store_exact(digest, key, time.time())
        self._note(key, analysed)
        return replaced

    def _store_exact(self, digest: int, key: str, added_at: float) -> None:
        self._exact[digest] = (key, added_at, self._next_id)
        self._by_key[key][1].add(digest)
        self._next_id += 1

    def _remove_exact(self, digest: int) -> None:
        key = self._exact.pop(digest)[0]
        self._unlist(key, digest, 1)

    def _note(self, key: str, analysed: Analysed | None) -> None:
        """Keep how the page stored under *key* was analysed (with its entries)."""
        if analysed is not None:
            self._analysed[key] = analysed

    def _unlist(self, key: str, entry: int, kind: int) -> None:
        entries = self._by_key[key]
        entries[kind].discard(entry)
        if not entries[0] and not entries[1]:
            del self._by_key[key]
            self._analysed.pop(key, None)

    def _forget(self, key: str) -> int:
        pages, digests = self._by_key.get(key, ((), ()))
        return self._delete(list(pages), list(digests))

    def count(self) -> int:
        return len(self._pages) + len(self._exact)

    # -- maintenance and audit ---------------------------------------------------------

    def add_drop(self, record: DropRecord) -> None:
        self._drops.append(record)

    def drops(self, since: float | None) -> Iterator[DropRecord]:
        for record in list(self._drops):
            if since is None or record.at >= since:
                yield record

    def _all_pages(self) -> list[StoredPage]:
        # By time; at the same time fingerprints first, each kind in the order stored.
        pages = [
            (
                t,
                0,
                i,
                StoredPage(
                    k,
                    fp,
                    t,
                    anchors=self._anchors.get(i),
                    sketch=self._sketches.get(i),
                    analysed=self._analysed.get(k),
                ),
            )
            for i, (fp, k, t) in self._pages.items()
        ]
        pages += [
            (t, 1, i, StoredPage(k, d, t, True, analysed=self._analysed.get(k)))
            for d, (k, t, i) in self._exact.items()
        ]
        return [page for *_, page in sorted(pages, key=lambda entry: entry[:3])]

    def pages(self) -> Iterator[StoredPage]:
        yield from self._all_pages()

    def find(self, key: str) -> list[StoredPage]:
        key = storable_key(key)
        return [page for page in self._all_pages() if page.key == key]

    def add_pages(self, pages: Iterable[StoredPage]) -> int:
        stored = {(k, fp) for fp, k, _ in self._pages.values()}
        added = 0
        for page in storable_pages(pages):
            if page.exact:
                if page.fingerprint in self._exact:
                    continue
                self._store_exact(page.fingerprint, page.key, page.added_at)
            else:
                if (page.key, page.fingerprint) in stored:
                    continue
                stored.add((page.key, page.fingerprint))
                self._sight(page.anchors, page.key)
                self._store(page.fingerprint, page.key, page.added_at, page.anchors, page.sketch)
            self._note(page.key, page.analysed)
            added += 1
        return added

    def _delete(self, pages, exact) -> int:
        page_ids, digests = list(pages), list(exact)
        for page_id in page_ids:
            self._remove(page_id)
        for digest in digests:
            self._remove_exact(digest)
        return len(page_ids) + len(digests)

    def forget(self, key: str) -> int:
        return self._forget(storable_key(key))

    def expire(self, older_than: float) -> int:
        return self._delete(
            (i for i, (_, _, t) in self._pages.items() if t < older_than),
            (d for d, (_, t, _) in self._exact.items() if t < older_than),
        )

    def expire_drops(self, older_than: float) -> int:
        kept = [record for record in self._drops if record.at >= older_than]
        removed = len(self._drops) - len(kept)
        self._drops = kept
        return removed

    def size(self) -> None:
        return None  # Python objects: no figure worth the name

    def compact(self) -> bool:
        return False  # removed pages are freed at once

    def journal(self, crawl: str | None = None, **kwargs: Any) -> Journal:
        """The crawl journal, kept in this process."""
        from .memory_journal import MemoryJournal

        return MemoryJournal(self, crawl, **kwargs)

    def close(self) -> None:
        pass


class MemoryIndex(Index):
    """In-process index. ``open_index("memory:")`` returns one.

    Safe for one thread at a time, like the pipeline's reactor thread.
    """

    def __init__(
        self,
        *,
        max_distance: int | None = None,
        blocks: int | None = None,
        features: str | None = None,
    ) -> None:
        requested = RequestedParameters(max_distance, blocks, features)
        super().__init__(MemoryStore(), requested, create=True)

    @classmethod
    def from_uri(
        cls, uri: str, *, create: bool = True, read_only: bool = False, **parameters
    ) -> MemoryIndex:
        """Open ``memory:``: a new, empty index every time."""
        uri_options(uri, {})
        return cls(**parameters)
