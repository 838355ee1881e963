"""The crawl journal (see :mod:`.journal`) of a Redis index: a hash of the crawls, a lease
key per crawl and a set of pending keys per crawl, under the index's prefix (one hash slot
in a cluster).

The lease is a key that the *server* expires (``SET ... PX``), renewed by each heartbeat:
whether a crawl of another host is alive never depends on two hosts' clocks agreeing.
Writing a pending key, renewing the lease and dropping a dead crawl's record are scripts,
each atomic on the server: a crawl whose lease lapsed (stalled past it) recreates its
record and lease when it next writes or renews; a record is dropped only while its lease
is lapsed and no key of it is pending."""

from __future__ import annotations

import json
import time

from ..journal import CrawlRecord, Journal

#: KEYS: crawls hash, lease key. ARGV: crawl, record, lease in ms.
#: Returns 1 where the record or the lease was gone (then written again).
RENEW = """
local lost = 0
if redis.call('EXISTS', KEYS[2]) == 0 or redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  lost = 1
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SET', KEYS[2], '1', 'PX', ARGV[3])
return lost
"""

#: KEYS: crawls hash, lease key, pending set. ARGV: crawl, record, lease in ms, key.
#: Returns 1 where the lease (or record) was gone: both are written again.
PENDING = """
redis.call('SADD', KEYS[3], ARGV[4])
if redis.call('EXISTS', KEYS[2]) == 1 and redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SET', KEYS[2], '1', 'PX', ARGV[3])
return 1
"""

#: KEYS: crawls hash, lease key, pending set. ARGV: crawl, keys forgotten...
#: While the lease is lapsed: remove the keys, then the record if none is left.
DROP_DEAD = """
if redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
for first = 2, #ARGV, 1000 do
  redis.call('SREM', KEYS[3], unpack(ARGV, first, math.min(first + 999, #ARGV)))
end
if redis.call('SCARD', KEYS[3]) == 0 then
  redis.call('HDEL', KEYS[1], ARGV[1])
end
return 1
"""

#: Marks a record written by a crawl that holds a lease key (older records have none).
_LEASED = "lease"
_CHUNK = 1000


class RedisJournal(Journal):
    def _key(self, what: str) -> str:
        return f"{self.index.server.tag}:journal:{what}"

    def _lease_key(self, crawl: str) -> str:
        return self._key(f"lease:{crawl}")

    def _script(self, name: str, source: str):
        scripts = self.__dict__.setdefault("_scripts", {})
        if name not in scripts:
            scripts[name] = self.index.server.client.register_script(source)
        return scripts[name]

    def _value(self, record: CrawlRecord) -> str:
        return json.dumps([record.host, record.pid, record.started, record.beat, _LEASED])

    def _lease_ms(self) -> int:
        return max(1, int(self.lease * 1000))

    def _renew(self, record: CrawlRecord) -> bool:
        with self.index.server.errors("renew the crawl's lease"):
            return bool(
                self._script("renew", RENEW)(
                    keys=[self._key("crawls"), self._lease_key(record.crawl)],
                    args=[record.crawl, self._value(record), self._lease_ms()],
                )
            )

    def _records(self) -> list[CrawlRecord]:
        with self.index.server.errors("read the crawl journal"):
            stored = self.index.server.client.hgetall(self._key("crawls"))
            crawls = sorted(stored)
            if crawls:
                pipe = self.index.server.client.pipeline(transaction=False)
                for crawl in crawls:
                    pipe.exists(self._lease_key(crawl))
                held = [bool(n) for n in pipe.execute()]
            else:
                held = []
        records = []
        for crawl, leased in zip(crawls, held, strict=True):
            try:
                host, pid, started, beat, *mark = json.loads(stored[crawl])
                record = CrawlRecord(
                    crawl,
                    str(host),
                    int(pid),
                    str(started),
                    float(beat),
                    # A record of an older scrapy-simhash holds no lease key: timed here.
                    leased if mark == [_LEASED] else (True if leased else None),
                )
            except (ValueError, TypeError):
                record = CrawlRecord(crawl, "", 0, "", 0.0, leased)  # unreadable
            records.append(record)
        return records

    def _add_pending(self, key: str) -> bool:
        with self.index.server.errors("write the crawl journal"):
            return bool(
                self._script("pending", PENDING)(
                    keys=[
                        self._key("crawls"),
                        self._lease_key(self.crawl),
                        self._key(f"pending:{self.crawl}"),
                    ],
                    args=[self.crawl, self._value(self._now_record()), self._lease_ms(), key],
                )
            )

    def _now_record(self) -> CrawlRecord:
        return self._record(time.time())

    def _readd_pending(self, keys: list[str]) -> None:
        with self.index.server.errors("write the crawl journal"):
            for first in range(0, len(keys), _CHUNK):
                self.index.server.client.sadd(
                    self._key(f"pending:{self.crawl}"), *keys[first : first + _CHUNK]
                )

    def _remove_pending(self, keys: list[str]) -> None:
        with self.index.server.errors("write the crawl journal"):
            self.index.server.client.srem(self._key(f"pending:{self.crawl}"), *keys)

    def _pending(self, crawl: str) -> list[str]:
        with self.index.server.errors("read the crawl journal"):
            return sorted(self.index.server.client.smembers(self._key(f"pending:{crawl}")))

    def _drop_dead(self, record: CrawlRecord, keys: list[str]) -> None:
        with self.index.server.errors("write the crawl journal"):
            self._script("drop_dead", DROP_DEAD)(
                keys=[
                    self._key("crawls"),
                    self._lease_key(record.crawl),
                    self._key(f"pending:{record.crawl}"),
                ],
                args=[record.crawl, *keys],
            )

    def _end_lease(self, crawl: str) -> None:
        with self.index.server.errors("write the crawl journal"):
            self.index.server.client.delete(self._lease_key(crawl))

    def _drop(self, crawl: str) -> None:
        with self.index.server.errors("write the crawl journal"):
            self.index.server.client.delete(self._key(f"pending:{crawl}"))
            self.index.server.client.hdel(self._key("crawls"), crawl)
            self.index.server.client.delete(self._lease_key(crawl))
