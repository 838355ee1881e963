"""An index held in a Python dict: for tests, scripts and one-off runs (nothing persists)."""

from __future__ import annotations

import time
from collections import defaultdict

from .base import IndexBase, IndexParameters, Match, RequestedParameters, nearest
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
        from ..fingerprint import Fingerprinter

        requested = RequestedParameters(max_distance, blocks, features)
        self.parameters: IndexParameters = requested.for_new_index(Fingerprinter().signature)
        self.plan = self.parameters.plan
        self.location = "memory:"
        # page id -> (fingerprint, key, added_at); ids grow, so "earliest" is the smallest id.
        self._pages: dict[int, tuple[int, str, float]] = {}
        self._tables: list[defaultdict[int, list[int]]] = [
            defaultdict(list) for _ in range(self.plan.table_count)
        ]
        self._exact: dict[int, tuple[str, float]] = {}
        self._next_id = 1

    @classmethod
    def from_uri(cls, uri: str, *, create: bool = True, **parameters) -> MemoryIndex:
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
        found = self._matches(fingerprint, self.plan.max_distance)
        if found:
            return found[0]
        page_id, self._next_id = self._next_id, self._next_id + 1
        self._pages[page_id] = (fingerprint, key, time.time())
        for table, block_key in zip(self._tables, self.plan.keys(fingerprint), strict=True):
            table[block_key].append(page_id)
        return None

    def add_exact_if_new(self, digest: int, key: str) -> Match | None:
        if digest in self._exact:
            stored_key, added_at = self._exact[digest]
            return Match(stored_key, digest, 0, added_at)
        self._exact[digest] = (key, time.time())
        return None

    def __len__(self) -> int:
        return len(self._pages) + len(self._exact)

    def close(self) -> None:
        pass
