"""The crawl journal (see :mod:`.journal`) of an in-memory index: it dies with the
crawl's process, so records and pending keys live in this process, behind one lock."""

from __future__ import annotations

import threading
import time
from typing import Any

from .journal import CrawlRecord, Journal


class MemoryJournal(Journal):
    """The journal of an in-memory index: it dies with the crawl's process, so only the
    crawl's own pending pages matter (forgotten at :meth:`end`). Its records are its own
    crawl's alone: a recovery (in the journal keeper's thread) finds no dead crawl and
    never touches the index, which has no lock of its own."""

    def __init__(self, index: Any, crawl: str | None = None, **kwargs: Any) -> None:
        super().__init__(index, crawl, **kwargs)
        self._crawls: dict[str, CrawlRecord] = {}
        self._keys: dict[str, set[str]] = {}
        self._lock = threading.Lock()

    def _renew(self, record: CrawlRecord) -> bool:
        with self._lock:
            lost = record.crawl not in self._crawls
            self._crawls[record.crawl] = record
        return lost

    def _records(self) -> list[CrawlRecord]:
        with self._lock:
            return list(self._crawls.values())

    def _add_pending(self, key: str) -> bool:
        with self._lock:
            self._keys.setdefault(self.crawl, set()).add(key)
            if self.crawl in self._crawls:
                return False
            self._crawls[self.crawl] = self._record(time.time())
            return True

    def _readd_pending(self, keys: list[str]) -> None:
        with self._lock:
            self._keys.setdefault(self.crawl, set()).update(keys)

    def _remove_pending(self, keys: list[str]) -> None:
        with self._lock:
            self._keys.get(self.crawl, set()).difference_update(keys)

    def _pending(self, crawl: str) -> list[str]:
        with self._lock:
            return sorted(self._keys.get(crawl, ()))

    def _drop_dead(self, record: CrawlRecord, keys: list[str]) -> None:
        with self._lock:
            left = self._keys.get(record.crawl, set())
            left.difference_update(keys)
            if not left and self._crawls.get(record.crawl) == record:
                self._keys.pop(record.crawl, None)
                self._crawls.pop(record.crawl, None)

    def _drop(self, crawl: str) -> None:
        with self._lock:
            self._keys.pop(crawl, None)
            self._crawls.pop(crawl, None)
