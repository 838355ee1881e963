"""The crawl journal (see :mod:`.journal`) of a Redis index: a hash of the crawls and a
set of pending keys per crawl, under the index's prefix (one hash slot in a cluster)."""

from __future__ import annotations

import json

from ..journal import CrawlRecord, Journal


class RedisJournal(Journal):
    def _key(self, what: str) -> str:
        return f"{self.index._tag}:journal:{what}"

    def _register(self, record: CrawlRecord) -> None:
        value = json.dumps([record.host, record.pid, record.started, record.beat])
        with self.index._errors("renew the crawl's lease"):
            self.index._client.hset(self._key("crawls"), record.crawl, value)

    def _records(self) -> list[CrawlRecord]:
        with self.index._errors("read the crawl journal"):
            stored = self.index._client.hgetall(self._key("crawls"))
        records = []
        for crawl, value in stored.items():
            try:
                host, pid, started, beat = json.loads(value)
                records.append(CrawlRecord(crawl, str(host), int(pid), str(started), float(beat)))
            except (ValueError, TypeError):
                records.append(CrawlRecord(crawl, "", 0, "", 0.0))  # unreadable: dead
        return records

    def _add_pending(self, key: str) -> None:
        with self.index._errors("write the crawl journal"):
            self.index._client.sadd(self._key(f"pending:{self.crawl}"), key)

    def _remove_pending(self, keys: list[str]) -> None:
        with self.index._errors("write the crawl journal"):
            self.index._client.srem(self._key(f"pending:{self.crawl}"), *keys)

    def _pending(self, crawl: str) -> list[str]:
        with self.index._errors("read the crawl journal"):
            return sorted(self.index._client.smembers(self._key(f"pending:{crawl}")))

    def _drop(self, crawl: str) -> None:
        with self.index._errors("write the crawl journal"):
            self.index._client.delete(self._key(f"pending:{crawl}"))
            self.index._client.hdel(self._key("crawls"), crawl)
