"""Maintenance of a spread Redis index, home by home and group by group: the audit log
(one stream per ``DROP_STREAMS``), listing pages (the homes' orders merged), restoring
an export, removing pages by key or by age, and the clean-up of entries left behind by
clients that died mid-check (:meth:`SpreadMaintenance.compact`, the ``vacuum`` command).
"""

from __future__ import annotations

import heapq
import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ..base import DropRecord, StoredPage, storable_key, storable_pages
from .audit import RedisAuditLog
from .layout import hex64, record_tail
from .page_values import analysed_args, packed_sketch, stored_analysed, stored_sketch
from .spread_anchors import read_anchors, stored_anchors
from .spread_layout import DROP_STREAMS, Found, member, parse_member

if TYPE_CHECKING:
    from .cluster import Cluster
    from .spread_anchors import SpreadAnchors
    from .spread_calls import SpreadCalls
    from .spread_io import Call

logger = logging.getLogger("scrapy_simhash.index.redis")

_BATCH = 1000


class SpreadMaintenance:
    """The audit log and maintenance of the index on *cluster*, made of the *calls* and
    *anchors* of the protocol: a part of :class:`~.spread.SpreadStore`."""

    def __init__(self, cluster: Cluster, calls: SpreadCalls, anchors: SpreadAnchors) -> None:
        self.cluster = cluster
        self.calls = calls
        self.anchors = anchors
        #: The audit log: ``DROP_STREAMS`` streams, each in a slot of its own (named by
        #: the prefix alone, so the homes that the parameters set later do not matter).
        self.audit = RedisAuditLog(
            cluster.server, [cluster.keys.drops(n) for n in range(DROP_STREAMS)]
        )

    #: Called with a count of homes (or streams) done, for commands that show progress.
    progress: Callable[[int, int], None] | None = None

    def _each_home(self, read: Callable[[Any, str], None]) -> list[Any]:
        """Pipeline ``read(pipe, home)`` for every home, home by home in batches."""
        results: list[Any] = []
        homes = self.cluster.keys.all_homes()
        for first in range(0, len(homes), 256):
            with self.cluster.server.errors("read the homes"):
                pipe = self.cluster.client.pipeline()
                for home in homes[first : first + 256]:
                    read(pipe, home)
                results += pipe.execute()
            if self.progress is not None:
                self.progress(min(first + 256, len(homes)), len(homes))
        return results

    def count(self) -> int:
        return sum(int(n or 0) for n in self._each_home(lambda p, h: p.hget(f"{h}:n", "pages")))

    # -- the audit log -------------------------------------------------------------------

    def add_drop(self, record: DropRecord) -> None:
        self.audit.add(record)

    def drops(self, since: float | None) -> Iterator[DropRecord]:
        return self.audit.drops(since)

    def expire_drops(self, older_than: float) -> int:
        return self.audit.expire(older_than)

    # -- listing ---------------------------------------------------------------------------

    def _order(self, home: str, low: str, high: str) -> Iterator[tuple[float, str]]:
        """``(time, order member)`` of one home from *low* to *high*, in batches."""
        offset = 0
        while True:
            with self.cluster.server.errors("list pages"):
                batch = self.cluster.client.zrangebyscore(
                    f"{home}:order", low, high, start=offset, num=_BATCH, withscores=True
                )
            for name, score in batch:
                yield score, name
            if len(batch) < _BATCH:
                return
            offset += len(batch)

    def _with_anchors(self, home: str, found: Iterable[tuple[float, str]]) -> Iterator[tuple]:
        """``(time, order member, its anchors or '', its sketch or '', its record or
        None)`` of *found* (one home's, in order), their anchors, sketches and records of
        how they were analysed read in batches."""
        batch: list[tuple[float, str]] = []
        hows: dict[str, str] | None = None

        def flush() -> Iterator[tuple]:
            nonlocal hows
            fields = [":".join(name.split(":", 3)[:3]) for _, name in batch]
            if not fields:
                return
            with self.cluster.server.errors("list pages"):
                held = self.cluster.client.hmget(f"{home}:pa", fields)
                sketches = self.cluster.client.hmget(f"{home}:sk", fields)
                noted = self.cluster.client.hmget(f"{home}:an", fields)
                if hows is None and any(noted):
                    hows = self.cluster.client.hgetall(f"{home}:how")
            rows = zip(batch, held, sketches, noted, strict=True)
            for (score, name), value, sketch, record in rows:
                analysed = stored_analysed(record, hows or {})
                yield score, name, value or "", sketch or "", analysed

        for item in found:
            batch.append(item)
            if len(batch) >= _BATCH:
                yield from flush()
                batch = []
        yield from flush()

    @staticmethod
    def _page(
        score: float, name: str, anchors: str = "", sketch: str = "", analysed=None
    ) -> StoredPage:
        exact, _, hex_value = parse_member(name)
        key = name.split(":", 3)[3]
        return StoredPage(
            key, int(hex_value, 16), score, exact, read_anchors(anchors), stored_sketch(sketch),
            analysed,
        )  # fmt: skip

    def pages(self) -> Iterator[StoredPage]:
        orders = (
            self._with_anchors(home, self._order(home, "-inf", "+inf"))
            for home in self.cluster.keys.all_homes()
        )
        for page in heapq.merge(*orders):
            yield self._page(*page)

    def find(self, key: str) -> list[StoredPage]:
        key = storable_key(key)
        home = self.cluster.keys.home_of(key)
        with self.cluster.server.errors("find"):
            listed = self.cluster.client.hget(f"{home}:keys", key)
            names = [f"{m}:{key}" for m in (json.loads(listed) if listed else [])]
            scores = self.cluster.client.zmscore(f"{home}:order", names) if names else []
        found = [
            (score, name) for score, name in zip(scores, names, strict=True) if score is not None
        ]
        return [self._page(*page) for page in self._with_anchors(home, sorted(found))]

    # -- restoring -------------------------------------------------------------------------

    def _store(self, batch: list[StoredPage]) -> int:
        """Restore *batch* in two rounds: the exact digests in their groups and the other
        pages at their homes (where the skip rules are decided, in the order given: one
        key, one home; one digest, one group), then the homes of the digests stored and
        the groups of the pages listed."""
        first, second = [], []
        for page in batch:
            call, then = self._restore_calls(page)
            first.append(call)
            second.append(then)
        stored = self.cluster.io.batch(first, wait=True)
        after = [
            call for done, calls in zip(stored, second, strict=True) if int(done) for call in calls
        ]
        self.cluster.io.batch(after, wait=True)
        return sum(int(done) for done in stored)

    def _restore_calls(self, page: StoredPage) -> tuple[Call, list[Call]]:
        """The calls restoring *page* (see :meth:`_store`): the one of the first round,
        and those of the second, run if it stored the page."""
        sha = self.cluster.sha
        txn, hex_value = self.cluster.attempts.new(), hex64(page.fingerprint)
        tail = record_tail(page.key, page.added_at)
        home = self.cluster.keys.home_of(page.key)
        anchors = None if page.exact else page.anchors
        home_call = (
            home,
            sha["store_home"],
            [f"{home}:{name}" for name in ("keys", "order", "n", "pa", "sk", "an", "how")],
            [
                page.key,
                member(page.exact, txn, hex_value),
                repr(float(page.added_at)),
                hex_value,
                stored_anchors(anchors),
                "" if page.exact else packed_sketch(page.sketch),
                *analysed_args(page.analysed),
            ],
        )
        if page.exact:
            tag = self.cluster.keys.exact(page.fingerprint)
            return (tag, sha["store"], [f"{tag}:exact"], [0, hex_value, txn, tail, "1"]), [
                home_call
            ]
        groups = [
            (tag, sha["store"], [*sets, f"{tag}:fp"], [len(sets), *m, hex_value, txn, tail, "0"])
            for tag, sets, m, _ in self.calls.group_calls(page.fingerprint)
        ]
        return home_call, groups + self.anchors.calls(
            anchors, txn, tail, hex_value, True, committed=True, key=page.key
        )

    def add_pages(self, pages: Iterable[StoredPage]) -> int:
        added = 0
        window: list[StoredPage] = []
        for page in storable_pages(pages):
            window.append(page)
            if len(window) >= _BATCH:
                added += self.cluster.run("add pages", self._store, window)
                window = []
        if window:
            added += self.cluster.run("add pages", self._store, window)
        return added

    # -- removing --------------------------------------------------------------------------

    def _unlist(self, entries: list[tuple[str, list[str]]]) -> int:
        """Unlist entries of keys (``(key, names)``, names ``["*"]``: all) at their
        homes, then remove them from their groups; return how many were unlisted."""
        calls = []
        for key, names in entries:
            home = self.cluster.keys.home_of(key)
            home_keys = [f"{home}:keys", f"{home}:order", f"{home}:n", f"{home}:pa", f"{home}:sk"]
            home_keys.append(f"{home}:an")
            calls.append((home, self.cluster.sha["unlist"], home_keys, [key, *names]))
        removed = [pair for pairs in self.cluster.io.batch(calls, wait=True) for pair in pairs]
        releases = []
        for name, anchors in zip(removed[::2], removed[1::2], strict=True):
            exact, txn, hex_value = parse_member(name)
            releases += self.calls.release(exact, hex_value, [txn])
            releases += self.anchors.release_page(txn, anchors)
        self.cluster.io.batch(releases, wait=True)
        return len(removed) // 2

    def forget(self, key: str) -> int:
        return self.cluster.run("forget", self._unlist, [(storable_key(key), ["*"])])

    def expire(self, older_than: float) -> int:
        removed = 0
        for home in self.cluster.keys.all_homes():
            by_key: dict[str, list[str]] = {}
            for _, name in self._order(home, "-inf", f"({older_than!r}"):
                kind, txn, hex_value, key = name.split(":", 3)
                by_key.setdefault(key, []).append(f"{kind}:{txn}:{hex_value}")
            keys = list(by_key.items())
            for first in range(0, len(keys), _BATCH):
                removed += self.cluster.run("expire", self._unlist, keys[first : first + _BATCH])
        return removed

    def size(self) -> int | None:
        """``None``: an index's keys are spread over every master, among other data."""
        return None

    # -- vacuum ----------------------------------------------------------------------------

    def _scan(self, pattern: str) -> Iterator[str]:
        for node in self.cluster.client.get_primaries():
            with self.cluster.server.errors("vacuum"):
                yield from self.cluster.client.scan_iter(
                    match=pattern, count=1000, target_nodes=node
                )

    def compact(self) -> bool:
        """Clean up after clients that died mid-check (``vacuum``): entries still marked
        pending are resolved through their commit records (those older than the lease are
        aborted) and marked committed or removed; entries whose page was replaced or
        removed meanwhile by a client that died before removing them go too. Returns
        True (there is always something to look at)."""
        tag = self.cluster.keys.meta.split("}")[0][1:]
        pattern = "{" + tag.replace("*", r"\*").replace("?", r"\?")
        for suffix in (":g:*}:fp", ":x:*}:exact", ":a:*}:anchors"):
            for name in self._scan(pattern + suffix):
                with self.cluster.server.errors("vacuum"):
                    entries = self.cluster.client.hgetall(name)
                self.cluster.run("vacuum", self._vacuum, name, entries)
        return True

    def _vacuum(self, name: str, entries: dict[str, str]) -> None:
        kind = name.rsplit(":", 1)[1]
        exact = kind == "exact"
        tag = name.rsplit(":", 1)[0]
        old = f"{int((time.time() - self.cluster.lease) * 1e6):016d}"
        found = []  # (the field, the entry)
        for field, value in entries.items():
            if value == "b":  # an anchor of too many pages: no records
                continue
            for txn, key, at, committed, *rest in json.loads(value):
                hex_value = rest[0] if rest else field
                found.append(
                    (field, Found(0, hex_value, txn, key, float(at), committed == 1, exact))
                )

        for first in range(0, len(found), _BATCH):
            chunk = found[first : first + _BATCH]
            states = self.cluster.io.batch(
                [self.calls.resolve_call(e, not e.committed and e.txn < old) for _, e in chunk],
                wait=True,
            )
            calls = []
            for (field, entry), state in zip(chunk, states, strict=True):
                done = state == "c" and not entry.committed
                doomed = state == "a" or (state == "p" and entry.committed)
                if kind == "anchors" and (done or doomed):
                    calls += self.anchors.settle(entry.txn, {tag: [field]}, done)
                elif done:
                    calls += self.calls.finalize(exact, entry.hex, entry.txn, [tag])
                elif doomed:
                    calls += self.calls.release(exact, entry.hex, [entry.txn], {tag})
            self.cluster.io.batch(calls, wait=True)
