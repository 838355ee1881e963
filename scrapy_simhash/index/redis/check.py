"""The check of a single-slot Redis index: the candidates read by one script, the verdict
asked of :func:`~scrapy_simhash.index.rule.decide` in Python, the page stored by the same
script once the verdict says so.

**Atomicity, optimistically.** The script (:data:`~.scripts.CHECK`) reads the candidates
of the page (the records within the distance; with anchors, the pages listed under its
anchors) and, with none at all, stores it at once: every verdict on no candidate stores
the page, so a new page costs one round trip, as a duplicate does. Otherwise it returns
what it read and a token, the SHA-1 of it; the client decides, and when the verdict is to
store, runs the script again with the token. The script stores only when what it reads
then is what the token says, in the same run as the store, while no other client's
command runs; else it returns what it read now and the client decides again. A page
stored near the checked one, or under one of its anchors, changes what is read: of two
clients checking near-duplicates at the same moment, the second is told of the first's
page and decides on it, so exactly one is kept.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from ...anchors import Anchors
from ...exceptions import IndexCorrupt, IndexUnavailable
from ..analysed import Analysed
from ..base import nearest
from ..rule import Candidate, Decision, Probe, anchor_candidates, boilerplate, by_anchors, sighting
from ..store import Checked, Decide, Page
from .layout import hex64, parse_member, record_tail, records, with_layouts
from .page_values import analysed_args, packed_sketch, page_anchors, stored_sketch
from .scripts import ADD_EXACT_IF_NEW, CHECK

if TYPE_CHECKING:
    from collections.abc import Callable

    from .slot import Slot

#: Runs of the check script at most for one check (each after another client changed
#: what it read, or the entries under its key).
MAX_RUNS = 100


class _Read:
    """What one run of the check script read (see :data:`~.scripts.CHECK`): a
    :class:`~scrapy_simhash.index.store.Reading`."""

    def __init__(self, state: str, sketches: str, cutoff: float | None) -> None:
        near, hits, pages, sights = (part or [] for part in json.loads(state))
        listed = json.loads(sketches) or []
        self.sketches = {
            int(seq): stored_sketch(value)
            for seq, value in zip(listed[::2], listed[1::2], strict=True)
        }
        self.cutoff = cutoff
        self.near_rows = [(int(d), int(hex_value, 16), rows) for d, hex_value, rows in near]
        self.hits = {int(anchor): [int(s) for s in on.split(",") if s] for anchor, on in hits}
        self.pages = {int(seq): (held, value) for seq, held, value in pages}
        self.seen = {int(anchor): [int(p) for p in on.split(",")] for anchor, on in sights}

    def live(self, rows) -> list[tuple[int, str, float]]:
        return [
            (int(seq), key, float(at))
            for seq, key, at in rows
            if self.cutoff is None or float(at) >= self.cutoff
        ]

    def near(self, fingerprint: int, max_distance: int) -> list[Candidate]:
        found = []
        for distance, other, rows in self.near_rows:
            if distance <= max_distance:
                for seq, key, at in self.live(rows):
                    sketch = self.sketches.get(seq)
                    found.append(Candidate(seq, key, other, at, seq, distance, sketch=sketch))
        return found

    def anchored(self, probe: Probe) -> list[Candidate]:
        assert probe.anchors is not None
        pages = by_anchors(self.hits, boilerplate(self.seen, probe.key))
        stored = {}
        for seq in pages:
            if seq not in self.pages:
                continue
            held, value = self.pages[seq]
            anchors = page_anchors(held)
            other = int(json.loads(held)[0], 16)
            for record_seq, key, at in self.live(json.loads(value) if value else []):
                if record_seq == seq and anchors is not None:
                    stored[seq] = Candidate(
                        seq, key, other, at, seq, (probe.fingerprint ^ other).bit_count(),
                        summary=anchors.summary, sketch=self.sketches.get(seq),
                    )  # fmt: skip
        return anchor_candidates(probe, pages, stored)


class RedisCheck:
    """The check-and-insert part of :class:`~scrapy_simhash.index.redis.index.RedisStore`:
    the check script written for *slot*'s tables, run within *max_distance*; *sweep* is
    called before each check (the ttl's sweep, see :mod:`.maintenance`)."""

    def __init__(self, slot: Slot, max_distance: int, sweep: Callable[[], None]) -> None:
        self.slot = slot
        self.max_distance = max_distance
        self._sweep = sweep
        self._last_seq = 0
        self._check_script = slot.client.register_script(with_layouts(CHECK, slot.layouts))
        self._add_exact = slot.client.register_script(ADD_EXACT_IF_NEW)

    def _check_seq(self, seq: int) -> None:
        """A sequence number never goes back unless the counters were deleted."""
        if seq <= self._last_seq:
            raise self.slot.vanished()
        self._last_seq = seq

    # -- the script ----------------------------------------------------------------------

    def _old_fingerprints(self, listed: str) -> tuple[list[str], list[object]]:
        """The set keys (KEYS) and the count, hex and members (ARGV) of the fingerprints
        listed under a key in the keys hash (*listed*, as read), for the scripts."""
        fingerprints = sorted(
            {value for exact, _, value in map(parse_member, json.loads(listed)) if not exact}
        )
        keys: list[str] = []
        args: list[object] = [len(fingerprints)]
        for value in fingerprints:
            table_keys, members = self.slot.table_keys(int(value, 16))
            keys += table_keys
            args += [value, *members]
        return keys, args

    def _checked(self, script, keys, args, after, expected: str):
        """One run of a check script; raises on the replies that say the index is broken."""
        old_keys, old_args = self._old_fingerprints(expected) if expected else ([], [0])
        with self.slot.server.errors("add"):
            reply = script(keys=[*keys, *old_keys], args=[*args, expected, *after, *old_args])
        status = int(reply[0])
        if status == -1:
            raise self.slot.vanished()
        if status == -2:
            raise IndexCorrupt(
                f"The index at {self.slot.location} lists fingerprint {reply[1]} but not in "
                f"{self.slot.fp_key}; another program changed its keys. Restore it from a "
                "backup (scrapy-simhash export/import) or choose another prefix"
            )
        return reply

    def _run_check(self, script, keys: list[str], args: list[object], after: list[object]):
        """Run a check script, again with the fingerprints stored under its key when it
        answers that they changed (``{-3, listed}``): see redis_scripts."""
        expected = ""
        for _ in range(MAX_RUNS):
            reply = self._checked(script, keys, args, after, expected)
            if int(reply[0]) != -3:
                return reply
            expected = reply[1]
        raise self._busy()

    def _busy(self) -> IndexUnavailable:
        return IndexUnavailable(
            f"The index at {self.slot.location}: what a check read kept changing while it was "
            f"checked ({MAX_RUNS} attempts); another client is rewriting it"
        )

    def _check_args(
        self, fingerprint: int, key: str, added_at: str, anchors: Anchors | None
    ) -> tuple[list[str], list[object], str]:
        keys, members = self.slot.script_keys(fingerprint)
        args: list[object] = [self.max_distance]
        for member, mask in zip(members, self.slot.key_masks, strict=True):
            key_part = fingerprint & mask
            args += (member, key_part >> 32, key_part & 0xFFFF_FFFF)
        cutoff = self.slot.cutoff()
        args += [hex64(fingerprint), record_tail(key, float(added_at)), added_at, cutoff, key]
        keys += [self.slot.meta_key, self.slot.keys_key, self.slot.exact_key]
        probe = ""
        if anchors:
            hashes, sizes = list(anchors.hashes), list(anchors.sizes)
            probe = json.dumps([anchors.words, anchors.cover, hashes, sizes, sighting(key)])
        return keys, args, probe

    @staticmethod
    def _reading(reply, cutoff: str) -> _Read:
        """What a run of the script read (``{3, token, state, sketches}``)."""
        return _Read(reply[2], reply[3], float(cutoff) if cutoff else None)

    def check(self, page: Page, decide: Decide) -> Checked:
        """Runs of the check script: the verdict asked on what each read, the page stored
        by the run that finds what the verdict was made on (see the module's text)."""
        probe = page.probe
        fingerprint = probe.fingerprint
        self.slot.server.recheck_eviction()
        self._sweep()
        added_at = repr(time.time())
        keys, args, anchor_arg = self._check_args(fingerprint, probe.key, added_at, probe.anchors)
        after = [anchor_arg, packed_sketch(probe.sketch), "", *analysed_args(page.analysed)]
        expected, decision = "", None
        for _ in range(MAX_RUNS):
            reply = self._checked(self._check_script, keys, args, after, expected)
            status = int(reply[0])
            if status == -3:
                expected = reply[1]
                continue
            if status == 0:
                self._check_seq(int(reply[1]))
                return Checked(decision, int(reply[2]))
            after[2] = reply[1]  # the token: store only on what this run read
            decision = decide(self._reading(reply, str(args[-2])))
            found = decision.candidate
            if found is None:
                continue
            if (
                decision.own
                and found.fingerprint == fingerprint
                and found.added_at == float(added_at)
            ):
                return Checked(None, 0)  # a call retried after a timeout found its own insert
            return Checked(decision, None)
        raise self._busy()

    def read(self, page: Page, decide: Decide) -> Decision:
        """What a check would decide, read by the check script with a token that never
        stores (nothing is stored)."""
        probe = page.probe
        keys, args, anchor_arg = self._check_args(
            probe.fingerprint, "", repr(time.time()), probe.anchors
        )
        reply = self._checked(self._check_script, keys, args, [anchor_arg, "", "-", "", ""], "")
        return decide(self._reading(reply, str(args[-2])))

    def check_exact(
        self, digest: int, key: str, analysed: Analysed | None
    ) -> tuple[str, float] | int:
        """The stored ``(key, added_at)`` under *digest*, or how many entries its key
        stored before, replaced in the same script run that stored it."""
        self.slot.server.recheck_eviction()
        self._sweep()
        added_at = repr(time.time())
        args = [hex64(digest), record_tail(key, float(added_at)), added_at, self.slot.cutoff(), key]
        after = [len(self.slot.layouts), *analysed_args(analysed)]
        reply = self._run_check(self._add_exact, self.slot.exact_keys(), args, after)
        if int(reply[0]) == 0:
            return int(reply[1])
        _, stored_key, stored_at = json.loads(reply[1])
        if stored_key == key and float(stored_at) == float(added_at):
            return 0  # a retried call found its own insert
        return stored_key, float(stored_at)

    def near(self, fingerprint: int, max_distance: int) -> list[Candidate]:
        """The records within *max_distance* of *fingerprint* (unexpired), nearest first,
        then in the order stored: read by a pipeline of the table sets, then the records."""
        slot = self.slot
        cutoff = None if slot.ttl is None else time.time() - slot.ttl
        table_keys, _ = slot.table_keys(fingerprint)
        with slot.server.errors("query"):
            pipe = slot.server.pipeline()
            for name in table_keys:
                pipe.smembers(name)
            replies = pipe.execute()
            candidates = []
            for table, (name, members) in enumerate(zip(table_keys, replies, strict=True)):
                bucket = int(name.rpartition(":")[2])
                for member in members:
                    found = slot.layouts[table].join(bucket, int(member))
                    candidates.append((found, found))
            found = nearest(fingerprint, candidates, max_distance)
            if not found:
                return []
            values = slot.client.hmget(slot.fp_key, [hex64(fp) for _, fp in found])
        near = []
        for (distance, fp), value in zip(found, values, strict=True):
            for seq, stored_key, at in sorted(records(value)) if value is not None else ():
                if cutoff is None or at >= cutoff:
                    near.append(Candidate(seq, stored_key, fp, at, seq, distance))
        return sorted(near, key=lambda c: (c.distance, c.order))
