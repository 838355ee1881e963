"""The crawl journal (see :mod:`..journal`) of a spread Redis index: the crawls in one hash
under ``{prefix}``, each crawl's pending keys in ``JOURNAL_SHARDS`` sets by the key's CRC,
so that the two writes a page costs spread over the masters like the index's own."""

from __future__ import annotations

from .journal import RedisJournal
from .spread_layout import crc

#: Sets of pending keys per crawl.
JOURNAL_SHARDS = 16


class SpreadJournal(RedisJournal):
    def _shard(self, crawl: str, number: int) -> str:
        return f"{{{self.index.prefix}:j:{number}}}:pending:{crawl}"

    def _add_pending(self, key: str) -> None:
        with self.index._errors("write the crawl journal"):
            shard = self._shard(self.crawl, crc(key) % JOURNAL_SHARDS)
            self.index._client.sadd(shard, key)

    def _remove_pending(self, keys: list[str]) -> None:
        by_shard: dict[str, list[str]] = {}
        for key in keys:
            by_shard.setdefault(self._shard(self.crawl, crc(key) % JOURNAL_SHARDS), []).append(key)
        with self.index._errors("write the crawl journal"):
            for shard, members in by_shard.items():
                self.index._client.srem(shard, *members)

    def _pending(self, crawl: str) -> list[str]:
        found: set[str] = set()
        with self.index._errors("read the crawl journal"):
            for number in range(JOURNAL_SHARDS):
                found |= self.index._client.smembers(self._shard(crawl, number))
        return sorted(found)

    def _drop(self, crawl: str) -> None:
        with self.index._errors("write the crawl journal"):
            for number in range(JOURNAL_SHARDS):
                self.index._client.delete(self._shard(crawl, number))
            self.index._client.hdel(self._key("crawls"), crawl)
