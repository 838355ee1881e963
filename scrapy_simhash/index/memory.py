"""An index held in a Python dict: for tests, scripts and one-off runs (nothing persists)."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable, Iterator

from ..features import DEFAULT_FEATURES
from .base import (
    DropRecord,
    IndexBase,
    IndexParameters,
    Match,
    RequestedParameters,
    StoredPage,
    nearest,
    storable_key,
    storable_pages,
)
from .uri import uri_options


class MemoryIndex(IndexBase):
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
        self.parameters: IndexParameters = requested.for_new_index(DEFAULT_FEATURES)
        self.plan = self.parameters.plan
        self.location = "memory:"
        # page id -> (fingerprint, key, added_at); ids grow, so "earliest" is the smallest id.
        self._pages: dict[int, tuple[int, str, float]] = {}
        self._tables: list[defaultdict[int, list[int]]] = [
            defaultdict(list) for _ in range(self.plan.table_count)
        ]
        self._exact: dict[int, tuple[str, float]] = {}
        self._drops: list[DropRecord] = []
        self._next_id = 1

    @classmethod
    def from_uri(
        cls, uri: str, *, create: bool = True, read_only: bool = False, **parameters
    ) -> MemoryIndex:
        """Open ``memory:``: a new, empty index every time."""
        uri_options(uri, {})
        return cls(**parameters)

    def _candidates(self, fingerprint: int):
        for table, key in zip(self._tables, self.plan.keys(fingerprint), strict=True):
            for page_id in table.get(key, ()):
                yield page_id, self._pages[page_id][0]

    def _matches(self, fingerprint: int, max_distance: int) -> list[Match]:
        found = nearest(fingerprint, self._candidates(fingerprint), max_distance)
        return [Match(self._pages[i][1], self._pages[i][0], d, self._pages[i][2]) for d, i in found]

    def query(self, fingerprint: int, max_distance: int | None = None) -> list[Match]:
        return self._matches(fingerprint, self._query_distance(max_distance))

    def add_if_new(self, fingerprint: int, key: str) -> Match | None:
        key = storable_key(key)
        found = self._matches(fingerprint, self.plan.max_distance)
        if found:
            return found[0]
        self._store(fingerprint, key, time.time())
        return None

    def _store(self, fingerprint: int, key: str, added_at: float) -> None:
        page_id, self._next_id = self._next_id, self._next_id + 1
        self._pages[page_id] = (fingerprint, key, added_at)
        for table, block_key in zip(self._tables, self.plan.keys(fingerprint), strict=True):
            table[block_key].append(page_id)

    def _remove(self, page_id: int) -> None:
        fingerprint = self._pages.pop(page_id)[0]
        for table, block_key in zip(self._tables, self.plan.keys(fingerprint), strict=True):
            ids = table[block_key]
            ids.remove(page_id)
            if not ids:
                del table[block_key]

    def add_exact_if_new(self, digest: int, key: str) -> Match | None:
        key = storable_key(key)
        if digest in self._exact:
            stored_key, added_at = self._exact[digest]
            return Match(stored_key, digest, 0, added_at)
        self._exact[digest] = (key, time.time())
        return None

    def __len__(self) -> int:
        return len(self._pages) + len(self._exact)

    # -- maintenance and audit ---------------------------------------------------------

    def record_drop(self, key: str, match: Match, *, exact: bool = False) -> None:
        self._drops.append(
            DropRecord(storable_key(key), match.key, match.distance, exact, time.time())
        )

    def drops(self, *, since: float | None = None) -> Iterator[DropRecord]:
        for record in list(self._drops):
            if since is None or record.at >= since:
                yield record

    def _all_pages(self) -> list[StoredPage]:
        pages = [StoredPage(k, fp, t) for fp, k, t in self._pages.values()]
        pages += [StoredPage(k, d, t, exact=True) for d, (k, t) in self._exact.items()]
        pages.sort(key=lambda page: page.added_at)  # stable: ties keep the order stored
        return pages

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
                self._exact[page.fingerprint] = (page.key, page.added_at)
            else:
                if (page.key, page.fingerprint) in stored:
                    continue
                stored.add((page.key, page.fingerprint))
                self._store(page.fingerprint, page.key, page.added_at)
            added += 1
        return added

    def _delete(self, pages, exact) -> int:
        page_ids, digests = list(pages), list(exact)
        for page_id in page_ids:
            self._remove(page_id)
        for digest in digests:
            del self._exact[digest]
        return len(page_ids) + len(digests)

    def forget(self, key: str) -> int:
        key = storable_key(key)
        return self._delete(
            (i for i, (_, k, _) in self._pages.items() if k == key),
            (d for d, (k, _) in self._exact.items() if k == key),
        )

    def expire(self, older_than: float) -> int:
        return self._delete(
            (i for i, (_, _, t) in self._pages.items() if t < older_than),
            (d for d, (_, t) in self._exact.items() if t < older_than),
        )

    def expire_drops(self, older_than: float) -> int:
        kept = [record for record in self._drops if record.at >= older_than]
        removed = len(self._drops) - len(kept)
        self._drops = kept
        return removed

    def close(self) -> None:
        pass
