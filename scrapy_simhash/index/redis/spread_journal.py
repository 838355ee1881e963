"""The crawl journal (see :mod:`..journal`) of a spread Redis index: the crawls in one hash
under ``{prefix}``, each crawl's pending keys in ``JOURNAL_SHARDS`` sets by the key's CRC,
so that the two writes a page costs spread over the masters like the index's own.

The lease is the single-slot layout's (a key the server expires, in the ``{prefix}`` slot
with the crawls' hash). A pending key is written with a plain ``SADD`` to its shard (a
script cannot also check the lease in another slot): a crawl that finds its lease lapsed
at its next renewal writes its pending keys again."""

from __future__ import annotations

from ..journal import CrawlRecord
from .journal import DROP_DEAD, RedisJournal
from .spread_layout import crc

#: Sets of pending keys per crawl.
JOURNAL_SHARDS = 16


class SpreadJournal(RedisJournal):
    def _shard(self, crawl: str, number: int) -> str:
        return f"{{{self.index.prefix}:j:{number}}}:pending:{crawl}"

    def _add_pending(self, key: str) -> bool:
        with self.index.server.errors("write the crawl journal"):
            shard = self._shard(self.crawl, crc(key) % JOURNAL_SHARDS)
            self.index.server.client.sadd(shard, key)
        return False

    def _by_shard(self, crawl: str, keys: list[str]) -> dict[str, list[str]]:
        by_shard: dict[str, list[str]] = {}
        for key in keys:
            by_shard.setdefault(self._shard(crawl, crc(key) % JOURNAL_SHARDS), []).append(key)
        return by_shard

    def _readd_pending(self, keys: list[str]) -> None:
        with self.index.server.errors("write the crawl journal"):
            for shard, members in self._by_shard(self.crawl, keys).items():
                self.index.server.client.sadd(shard, *members)

    def _remove_pending(self, keys: list[str]) -> None:
        with self.index.server.errors("write the crawl journal"):
            for shard, members in self._by_shard(self.crawl, keys).items():
                self.index.server.client.srem(shard, *members)

    def _drop_dead(self, record: CrawlRecord, keys: list[str]) -> None:
        client = self.index.server.client
        with self.index.server.errors("write the crawl journal"):
            if client.exists(self._lease_key(record.crawl)):
                return  # renewed meanwhile: alive, it keeps its record and keys
            for shard, members in self._by_shard(record.crawl, keys).items():
                client.srem(shard, *members)
            if any(client.scard(self._shard(record.crawl, n)) for n in range(JOURNAL_SHARDS)):
                return
            # The record, only while the lease is still lapsed (checked on the server).
            self._script("drop_dead", DROP_DEAD)(
                keys=[
                    self._key("crawls"),
                    self._lease_key(record.crawl),
                    self._key(f"pending:{record.crawl}"),  # empty in this layout
                ],
                args=[record.crawl],
            )

    def _pending(self, crawl: str) -> list[str]:
        found: set[str] = set()
        with self.index.server.errors("read the crawl journal"):
            for number in range(JOURNAL_SHARDS):
                found |= self.index.server.client.smembers(self._shard(crawl, number))
        return sorted(found)

    def _drop(self, crawl: str) -> None:
        with self.index.server.errors("write the crawl journal"):
            for number in range(JOURNAL_SHARDS):
                self.index.server.client.delete(self._shard(crawl, number))
            self.index.server.client.hdel(self._key("crawls"), crawl)
            self.index.server.client.delete(self._lease_key(crawl))
