"""Maintenance and audit of a Redis index: the audit log (a stream), listing pages in the
order stored, restoring an export, removing pages (by key, by age, and the sweep of a
ttl) and the space they take. Everything runs in batches of ``_BATCH`` commands, each
entry removed by a script that keeps the tables, the order and the keys hash in step."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from ..rule import sighting
from ..stored import DropRecord, StoredPage, storable_key, storable_pages
from .audit import RedisAuditLog
from .layout import hex64, parse_member, record_tail, records
from .page_values import (
    analysed_args,
    packed_sketch,
    page_anchors,
    stored_analysed,
    stored_sketch,
)
from .scripts import ADD_EXACT_IF_NEW, REMOVE, REMOVE_EXACT, STORE

if TYPE_CHECKING:
    from .slot import Slot

logger = logging.getLogger("scrapy_simhash.index.redis")

_BATCH = 1000
#: Expired pages one check removes at most.
SWEEP_BATCH = 100


class RedisMaintenance:
    """The audit log and maintenance part of
    :class:`~scrapy_simhash.index.redis.index.RedisStore`: the pages in *slot*, and the
    ttl's sweep that checks run (:meth:`sweep_if_due`)."""

    def __init__(self, slot: Slot) -> None:
        self.slot = slot
        self.audit = RedisAuditLog(slot.server, [slot.drops_key])
        client = slot.client
        self._store = client.register_script(STORE)
        self._remove = client.register_script(REMOVE)
        self._add_exact = client.register_script(ADD_EXACT_IF_NEW)
        self._remove_exact = client.register_script(REMOVE_EXACT)
        self._next_sweep = 0.0
        self._expired_left = False

    def add_drop(self, record: DropRecord) -> None:
        self.audit.add(record)

    def drops(self, since: float | None) -> Iterator[DropRecord]:
        return self.audit.drops(since)

    def _ordered(self, low: str = "-inf", high: str = "+inf") -> Iterator[tuple[int, StoredPage]]:
        """``(seq, page)`` for the pages stored from *low* to *high* (epoch times; ``(``
        before one excludes it), in the order stored, read in batches of ``_BATCH``."""
        after: tuple[float, str] | None = None
        count = _BATCH
        while True:
            with self.slot.server.errors("list pages"):
                batch = self.slot.client.zrangebyscore(
                    self.slot.order_key, low, high, start=0, num=count, withscores=True
                )
            fresh = batch if after is None else [m for m in batch if (m[1], m[0]) > after]
            if not fresh and len(batch) == count:
                count *= 2  # more than a batch of pages stored at the same moment
                continue
            yield from self._resolve([member for member, _ in fresh])
            if len(batch) < count:
                return
            after = (fresh[-1][1], fresh[-1][0])
            low, count = repr(after[0]), _BATCH

    def _resolve(
        self, members: list[str], *, with_anchors: bool = True
    ) -> Iterator[tuple[int, StoredPage]]:
        """The stored pages named by members of the order (skipping ones just removed),
        with their anchors and sketches unless *with_anchors* is false (to remove them:
        the scripts remove both with their page)."""
        if not members:
            return
        parsed = [(seq, exact, value) for exact, seq, value in map(parse_member, members)]
        seqs = [str(seq) for seq, exact, _ in parsed if not exact] if with_anchors else []
        every = [str(seq) for seq, _, _ in parsed] if with_anchors else []
        with self.slot.server.errors("list pages"):
            pipe = self.slot.server.pipeline()
            for _, exact, value in parsed:
                pipe.hget(self.slot.exact_key if exact else self.slot.fp_key, value)
            if seqs:
                pipe.hmget(self.slot.page_anchors_key, seqs)  # one command for the batch
                pipe.hmget(self.slot.sketches_key, seqs)
            if every:
                pipe.hmget(self.slot.analysed_key, every)
                pipe.hgetall(self.slot.hows_key)
            values = pipe.execute()
        held, sketched = values[len(parsed) : len(parsed) + 2] if seqs else ([], [])
        noted, hows = values[-2:] if every else ([], {})
        anchors = {int(s): page_anchors(v) for s, v in zip(seqs, held, strict=True)}
        sketches = {int(s): stored_sketch(v) for s, v in zip(seqs, sketched, strict=True)}
        analysed = {int(s): stored_analysed(v, hows) for s, v in zip(every, noted, strict=True)}
        values = values[: len(parsed)]
        for (seq, exact, hex_value), stored in zip(parsed, values, strict=True):
            if stored is None:
                continue
            if exact:
                stored_seq, key, at = json.loads(stored)
                if int(stored_seq) == seq:
                    yield seq, StoredPage(
                        key, int(hex_value, 16), float(at), exact=True,
                        analysed=analysed.get(seq),
                    )  # fmt: skip
                continue
            for record_seq, key, at in records(stored):
                if record_seq == seq:
                    yield seq, StoredPage(
                        key, int(hex_value, 16), at,
                        anchors=anchors.get(seq), sketch=sketches.get(seq),
                        analysed=analysed.get(seq),
                    )  # fmt: skip

    def pages(self) -> Iterator[StoredPage]:
        low = "-inf" if self.slot.ttl is None else repr(time.time() - self.slot.ttl)
        for _, page in self._ordered(low):
            yield page

    def _under(self, key: str) -> list[tuple[int, StoredPage]]:
        """``(seq, page)`` of the entries stored under *key*, oldest first."""
        with self.slot.server.errors("find"):
            listed = self.slot.client.hget(self.slot.keys_key, key)
        found = list(self._resolve(json.loads(listed) if listed else []))
        return sorted(found, key=lambda item: (item[1].added_at, item[1].exact, item[0]))

    def find(self, key: str) -> list[StoredPage]:
        return [page for _, page in self._under(storable_key(key))]

    def add_pages(self, pages: Iterable[StoredPage]) -> int:
        added = 0
        batch: list[StoredPage] = []
        for page in storable_pages(pages):
            batch.append(page)
            if len(batch) >= _BATCH:
                added += self._add_batch(batch)
                batch = []
        if batch:
            added += self._add_batch(batch)
        return added

    def _add_batch(self, batch: list[StoredPage]) -> int:
        with self.slot.server.errors("add pages"):
            pipe = self.slot.server.pipeline()
            for page in batch:
                tail = record_tail(page.key, page.added_at)
                if page.exact:
                    self._add_exact(
                        keys=self.slot.exact_keys(),
                        args=[
                            hex64(page.fingerprint),
                            tail,
                            repr(float(page.added_at)),
                            "",
                            page.key,
                            "*",
                            0,
                            *analysed_args(page.analysed),
                            0,
                        ],  # restored as is: nothing replaced
                        client=pipe,
                    )
                else:
                    keys, members = self.slot.script_keys(page.fingerprint)
                    args = [len(members), *members, hex64(page.fingerprint), tail, page.key]
                    args.append(repr(float(page.added_at)))
                    a = page.anchors
                    args.append(
                        json.dumps([a.words, a.cover, list(a.hashes), [], sighting(page.key)])
                        if a
                        else ""
                    )
                    args.append(packed_sketch(page.sketch))
                    args += analysed_args(page.analysed)
                    self._store(
                        keys=[*keys, self.slot.meta_key, self.slot.keys_key], args=args, client=pipe
                    )
            replies = pipe.execute()
        if -1 in replies or [-1] in replies:
            raise self.slot.vanished()
        added = 0
        for page, reply in zip(batch, replies, strict=True):
            added += int(reply[0]) == 0 if page.exact else int(reply)
        return added

    def _delete(self, doomed: Iterable[tuple[int, StoredPage]]) -> int:
        """Remove the ``(seq, page)`` records; return how many were removed."""
        by_fingerprint: dict[int, list[int]] = {}
        exact: list[tuple[int, int]] = []
        for seq, page in doomed:
            if page.exact:
                exact.append((page.fingerprint, seq))
            else:
                by_fingerprint.setdefault(page.fingerprint, []).append(seq)
        calls = [(False, fp, seqs) for fp, seqs in by_fingerprint.items()]
        calls += [(True, digest, [seq]) for digest, seq in exact]
        removed = 0
        for start in range(0, len(calls), _BATCH):
            with self.slot.server.errors("remove pages"):
                pipe = self.slot.server.pipeline()
                for is_exact, value, seqs in calls[start : start + _BATCH]:
                    if is_exact:
                        self._remove_exact(
                            keys=[
                                self.slot.exact_key,
                                self.slot.counters_key,
                                self.slot.order_key,
                                self.slot.keys_key,
                            ],
                            args=[hex64(value), seqs[0]],
                            client=pipe,
                        )
                    else:
                        keys, members = self.slot.script_keys(value)
                        self._remove(
                            keys=[*keys, self.slot.keys_key],
                            args=[len(members), *members, hex64(value), *seqs],
                            client=pipe,
                        )
                removed += sum(int(reply) for reply in pipe.execute())
        return removed

    def forget(self, key: str) -> int:
        return self._delete(self._under(storable_key(key)))

    def expire(self, older_than: float) -> int:
        removed = 0
        while True:
            removed += self._expire_batch(older_than, _BATCH)
            if not self._expired_left:
                return removed

    def _expire_batch(self, older_than: float, count: int) -> int:
        """Remove up to *count* of the oldest pages stored before *older_than*; set
        ``_expired_left`` to whether there may be more."""
        with self.slot.server.errors("expire"):
            members = self.slot.client.zrangebyscore(
                self.slot.order_key, "-inf", f"({older_than!r}", start=0, num=count
            )
        pages = list(self._resolve(members, with_anchors=False))
        removed = self._delete(pages)
        # Members whose page is gone (removed by another client meanwhile) go too, so
        # that they are not read again.
        found = {seq for seq, _ in pages}
        orphans = [m for m in members if parse_member(m)[1] not in found]
        if orphans:
            with self.slot.server.errors("expire"):
                self.slot.client.zrem(self.slot.order_key, *orphans)
        self._expired_left = len(members) == count
        return removed

    def expire_drops(self, older_than: float) -> int:
        return self.audit.expire(older_than)

    def size(self) -> int | None:
        """``None``: the keys of one index are spread over thousands of table sets, and
        the server's memory is shared with other data; ``INFO memory`` tells the total."""
        return None

    def compact(self) -> bool:
        """Redis frees a removed page's memory at once: with a ttl, remove the expired
        pages the sweep has not reached yet; without, nothing to do."""
        if self.slot.ttl is None:
            return False
        self.expire(time.time() - self.slot.ttl)
        return True

    # -- time to live ----------------------------------------------------------------

    def sweep_if_due(self) -> None:
        """Remove up to ``SWEEP_BATCH`` expired pages, at most every ``min(ttl / 24, 60 s)``,
        and again at the next call while there were more: bounded work for each check,
        whatever the size of the index. Expired pages are never matched meanwhile."""
        if self.slot.ttl is None or time.monotonic() < self._next_sweep:
            return
        now = time.time()
        removed = self._expire_batch(now - self.slot.ttl, SWEEP_BATCH)
        with self.slot.server.errors("expire"):
            # Whole stream nodes only, at most a batch's worth: bounded too.
            self.slot.client.xtrim(
                self.slot.drops_key,
                minid=int((now - self.slot.ttl) * 1000),
                approximate=True,
                limit=SWEEP_BATCH,
            )
        more = self._expired_left
        self._next_sweep = 0.0 if more else time.monotonic() + min(self.slot.ttl / 24, 60.0)
        if removed:
            logger.debug(
                "Removed %d pages older than the ttl of %g s from %s",
                removed,
                self.slot.ttl,
                self.slot.location,
            )
