"""One index spread over the masters of a Redis Cluster (``?cluster=true&spread=true``).

The layout is in :mod:`~.spread_layout`, the scripts in :mod:`~.spread_scripts`, what
the store's parts share in :mod:`~.cluster`.
A check touches the ``k + 1`` groups of its fingerprint (one for an exact digest) and the
home of its key, so no single script can make it atomic. The protocol:

1. **Reserve** (one round trip, the groups in parallel): each group's script returns the
   near entries it holds, committed or pending, and adds the page as *pending* under a new
   attempt id. ``WAIT`` on the replicas follows each.
2. **Resolve** the pending entries found, through the commit records at their keys' homes,
   by *wound-wait*: an older attempt (smaller id: its time, client and counter) is waited
   for, a younger one is aborted at once; one whose owner is silent for a *lease* is aborted
   too. The committed entries (found, or resolved) are the candidates of
   :func:`~scrapy_simhash.index.rule.decide` (:mod:`~.spread_decide`); when it matches
   one, the page's own reservations are released and the match returned.
3. **Commit** (one round trip): the script at the page's home lists the entry under its key
   unless the attempt was aborted; that one write decides. ``WAIT``, then acknowledge. An
   aborted attempt starts again with a new id.
4. **Clean up** (written without waiting for the replies, which are read before the
   next calls to each master): the entries are marked committed in their groups, and the
   entries the key stored before are removed.

Two near-duplicates share a group, where one script runs after the other and sees it; the
one that sees the other waits for it or aborts it, and commits only once the other is
aborted: an attempt is either listed under its key or aborted, never both, so of the two
exactly one is kept. A page's paragraph anchors take part in the same rounds, in slots of
their own (:mod:`~.spread_anchors`). docs/redis.md goes through each failure.
"""

from __future__ import annotations

import json
import logging
import time
from typing import TYPE_CHECKING, Any

import redis
from redis.exceptions import RedisClusterException

from ...anchors import Anchors
from ...exceptions import ConfigurationError, IndexUnavailable
from ..analysed import Analysed
from ..parameters import IndexParameters, RequestedParameters
from ..policy import Index
from ..rule import Candidate, Decision, Probe
from ..store import Checked, Decide, Page
from .cluster import Cluster
from .guards import RedisServer
from .layout import hex64, record_tail
from .spread_anchors import SpreadAnchors
from .spread_calls import SpreadCalls
from .spread_decide import SpreadDecide, candidate, exact_match
from .spread_io import Call
from .spread_layout import Found, member
from .spread_maintenance import SpreadMaintenance
from .spread_meta import SpreadMeta

if TYPE_CHECKING:
    from ..journal import Journal

logger = logging.getLogger("scrapy_simhash.index.redis")

#: Seconds a pending attempt's owner may stay silent before waiting checks abort it.
DEFAULT_LEASE = 5.0
#: The driver's errors that the server's ``errors`` translates.
_DRIVER_ERRORS = (redis.RedisError, RedisClusterException)
#: Attempts of one check before it fails (each restart follows an abort by an older one).
MAX_ATTEMPTS = 50


class SpreadStore:
    """The store of a spread Redis index (see :mod:`~scrapy_simhash.index.store`): a
    :class:`~.cluster.Cluster` (its server, keys, connections to each master and
    scripts) handed to each part: the parameters (:class:`~.spread_meta.SpreadMeta`),
    the calls of the protocol (:class:`~.spread_calls.SpreadCalls`) and of the anchors
    (:class:`~.spread_anchors.SpreadAnchors`), the verdict's candidates
    (:class:`~.spread_decide.SpreadDecide`), the audit log and maintenance
    (:class:`~.spread_maintenance.SpreadMaintenance`). The check itself, the protocol's
    rounds, is here. The arguments are :class:`RedisSpreadIndex`'s."""

    def __init__(
        self,
        client,
        client_kwargs: dict,
        *,
        prefix: str,
        location: str,
        read_only: bool = False,
        bucket_bits: int | None = None,
        password: str | None = None,
        lease: float = DEFAULT_LEASE,
        replicas: int = 1,
        allow_eviction: bool = False,
        retry_for: float = 1.0,
        upgrade: bool = False,
    ) -> None:
        self.server = RedisServer(
            client,
            prefix=prefix,
            location=location,
            password=password,
            driver_errors=_DRIVER_ERRORS,
        )
        self.location, self.read_only, self.ttl = location, read_only, None
        self.errors = self.server.errors
        self.cluster = cluster = Cluster(
            self.server, client_kwargs, lease=lease, replicas=replicas, retry_for=retry_for
        )
        if lease <= 0:
            raise ConfigurationError(f"lease={lease} must be a positive number of seconds")
        try:
            with self.errors("open"):
                client.ping()
                self.server.check_eviction(allow_eviction)
        except BaseException:
            self.close()
            raise
        self.meta = SpreadMeta(cluster, upgrade=upgrade and not read_only, bucket_bits=bucket_bits)
        self.anchors = SpreadAnchors(cluster)
        self.calls = SpreadCalls(cluster, self.anchors)
        self.decider = SpreadDecide(cluster)
        self.maintenance = m = SpreadMaintenance(cluster, self.calls, self.anchors)
        # The parameters are SpreadMeta's, the audit log and maintenance SpreadMaintenance's.
        self.read_parameters, self.create = self.meta.read_parameters, self.meta.create
        self.add_drop, self.drops, self.expire_drops = m.audit.add, m.audit.drops, m.audit.expire
        self.pages, self.find, self.add_pages, self.forget = m.pages, m.find, m.add_pages, m.forget
        self.expire, self.size, self.compact, self.count = m.expire, m.size, m.compact, m.count

    prefix = property(lambda self: self.server.prefix)
    keys = property(lambda self: self.cluster.keys, doc="The names of the index's keys.")
    lease = property(lambda self: self.cluster.lease)
    reconnect_pause = property(lambda self: self.server.reconnect_pause)
    bucket_bits = property(lambda self: self.meta.bucket_bits)

    def opened(self, parameters: IndexParameters, max_distance: int) -> None:
        """Connect to each master and load the scripts (see :meth:`~.cluster.Cluster.open`)."""
        self.parameters, self.max_distance = parameters, max_distance
        self.plan = parameters.plan
        self.cluster.open(parameters, self.bucket_bits, max_distance)

    def close(self) -> None:
        """Wait for the last clean-up and close the connections. Idempotent."""
        self.cluster.close()

    def journal(self, crawl: str | None = None, **kwargs: Any) -> Journal:
        """The crawl journal, its pending keys spread like the index."""
        from .spread_journal import SpreadJournal

        return SpreadJournal(self, crawl, **kwargs)

    def _resolve(self, pending: list[Found], own: str | None) -> dict[str, str]:
        """The final state ('c' or 'a') of each pending attempt: an older one (than
        *own*) is waited for, up to the lease; a younger one is aborted at once; with
        *own* ``None`` (a query) each is read once ('p' when still pending). Each round
        reads (or aborts) every attempt still pending at once."""
        todo = list({found.txn: found for found in pending}.values())
        states: dict[str, str] = {}
        started, delay = time.monotonic(), 0.002
        while todo:
            overdue = time.monotonic() - started >= self.cluster.lease
            calls = [
                self.calls.resolve_call(f, own is not None and (f.txn > own or overdue))
                for f in todo
            ]
            replies = self.cluster.io.batch(calls, wait=True)
            for found, state in zip(todo, replies, strict=True):
                states[found.txn] = state
            todo = [f for f in todo if states[f.txn] == "p"]
            if own is None or not todo:
                break
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        return states

    def _candidates(
        self, calls: list[Call], exact: bool, wait: bool = True
    ) -> tuple[list[Found], list[str], list[tuple[str, Found]]]:
        """Run the reserving calls: see :meth:`_found`."""
        return self.calls.found(calls, self.cluster.io.batch(calls, wait=wait), exact)

    # -- the check -------------------------------------------------------------------------

    def _check(
        self,
        value: int,
        key: str,
        exact: bool,
        page: Page | None = None,
        decide: Decide | None = None,
        analysed: Analysed | None = None,
    ):
        """The protocol, attempt after attempt: a :class:`Checked` for a *page*, what
        :meth:`check_exact` returns for an *exact* digest."""
        hex_value = hex64(value)
        probe = page.probe if page is not None else Probe(key, value)
        anchors, decision = probe.anchors, None
        io, protocol = self.cluster.io, self.calls
        for _ in range(MAX_ATTEMPTS):
            txn = self.cluster.attempts.new()
            added_at = repr(time.time())
            tail = record_tail(key, float(added_at))
            calls = protocol.reserve_calls(value, exact, txn, tail, True)
            anchor_calls = self.anchors.calls(anchors, txn, tail, hex_value, True, key=key)
            own = self.anchors.own(anchor_calls)
            try:
                committed, inside, reserved, after = self._reserve(
                    calls, anchor_calls, exact, txn, anchors, key, value
                )
                if exact:
                    matched = exact_match(committed, key) if committed else None
                else:
                    assert page is not None and decide is not None
                    decision = self.decider.verdict(page.shares, committed, inside, decide)
                    matched = None if decision.candidate is None else Checked(decision, None)
                if matched is not None:  # a duplicate: it never commits, so abort and release
                    if reserved or own:
                        after += protocol.withdraw(exact, hex_value, txn, key, reserved, own)
                    io.later(after)
                    return matched
                listed = member(exact, txn, hex_value)
                commit = protocol.commit_call(key, listed, added_at, txn, anchors, probe, analysed)
                reply = io.call(*commit, wait=True)
            except BaseException:
                self._abort(value, exact, key, txn, [call[0] for call in calls], own)
                raise
            if not int(reply[0]):  # aborted by an older check: start again
                after += protocol.release(exact, hex_value, [txn], set(reserved))
                io.later(after + self.anchors.settle(txn, own, False))
                continue
            old = json.loads(reply[1]) or []
            after += protocol.after_commit(exact, hex_value, txn, reserved, own, old, reply[2])
            io.later(after)
            return len(old) if exact else Checked(decision, len(old))
        raise IndexUnavailable(
            f"The index at {self.location}: a check was aborted by older ones {MAX_ATTEMPTS} "
            "times in a row; is this client's clock far behind the servers'?"
        )

    def _reserve(
        self,
        calls: list[Call],
        anchor_calls: list[Call],
        exact: bool,
        txn: str,
        anchors: Anchors | None,
        key: str,
        value: int,
    ) -> tuple[list[Found], list[Found], list[str], list[Call]]:
        """Steps 1 and 2 of the protocol for the attempt *txn*: run its reserving *calls*
        and *anchor_calls*, and resolve the pending entries they found. Returns the
        committed entries near the page, those that contain it (by its anchors), the tags
        where the page is reserved, and the clean-up calls of what was resolved."""
        replies = self.cluster.io.batch(calls + anchor_calls, wait=True)
        found, reserved, where = self.calls.found(calls, replies[: len(calls)], exact)
        contains, places = ([], [])
        if anchor_calls:
            contains, places = self.anchors.contained(
                anchor_calls, replies[len(calls) :], anchors, key, value
            )
        pending = [f for f in found + contains if not f.committed]
        states = self._resolve(pending, txn) if pending else {}
        after = self.calls.cleanup([(t, f) for t, f in where if not f.committed], states)
        after += self.anchors.cleanup(places, states)
        committed = [f for f in found if f.committed or states.get(f.txn) == "c"]
        inside = [f for f in contains if f.committed or states.get(f.txn) == "c"]
        return committed, inside, reserved, after

    def _abort(
        self, value: int, exact: bool, key: str, txn: str, reserved: list[str], anchors
    ) -> None:
        """After a failed check: abort the attempt at its home (so that checks waiting
        for it go on at once), then release its reservations. After an error the commit
        may have happened all the same (its reply lost): then the entries stay, marked
        committed. Tried once; what fails is left to the lease and ``vacuum``."""
        if not reserved:
            return
        hex_value = hex64(value)
        own = Found(0, hex_value, txn, key, 0.0, False, exact)
        try:
            state = self.cluster.io.batch([self.calls.resolve_call(own, True)])[0]
            if state in ("a", "c"):
                commit = state == "c"
                calls = self.anchors.settle(txn, anchors, commit)
                if commit:
                    calls += self.calls.finalize(exact, hex_value, txn, reserved)
                else:
                    calls += self.calls.release(exact, hex_value, [txn], set(reserved))
                self.cluster.io.later(calls)
        except (*_DRIVER_ERRORS, OSError) as e:
            logger.debug("A failed check of %s was not cleaned up: %s", self.location, e)

    def check(self, page: Page, decide: Decide) -> Checked:
        self.server.recheck_eviction()
        probe = page.probe
        return self.cluster.run(
            "add", self._check, probe.fingerprint, probe.key, False, page, decide, page.analysed
        )

    def check_exact(
        self, digest: int, key: str, analysed: Analysed | None
    ) -> tuple[str, float] | int:
        self.server.recheck_eviction()
        return self.cluster.run("add", self._check, digest, key, True, None, None, analysed)

    def read(self, page: Page, decide: Decide) -> Decision:
        """As the check's containment test, read without it (nothing is stored)."""
        probe = page.probe
        assert probe.anchors is not None

        def read() -> Decision:
            calls = self.anchors.calls(probe.anchors, "-", '"",""', "0" * 16, False)
            replies = self.cluster.io.batch(calls)
            found, _ = self.anchors.contained(
                calls, replies, probe.anchors, "\0", probe.fingerprint
            )
            pending = [f for f in found if not f.committed]
            states = self._resolve(pending, None) if pending else {}
            committed = [f for f in found if f.committed or states.get(f.txn) == "c"]
            return self.decider.verdict(page.shares, [], committed, decide)

        return self.cluster.run("query", read)

    def near(self, fingerprint: int, max_distance: int) -> list[Candidate]:
        def read() -> list[Candidate]:
            calls = self.calls.reserve_calls(fingerprint, False, "-", '"",""', False, max_distance)
            found, _, _ = self._candidates(calls, False, wait=False)
            pending = [f for f in found if not f.committed]
            states = self._resolve(pending, None) if pending else {}
            unique = {
                (f.hex, f.txn): f
                for f in found
                if f.distance <= max_distance and (f.committed or states.get(f.txn) == "c")
            }
            ordered = sorted(unique.values(), key=lambda f: (f.distance, f.txn))
            return [candidate(f, {}) for f in ordered]

        return self.cluster.run("query", read)


class RedisSpreadIndex(Index):
    """A near-duplicate index spread over a Redis Cluster; see the module's docstring.
    *client* is a sync ``redis.RedisCluster`` (parameters, server settings); *client_kwargs*
    the connection options for the connections to each master. *lease*: seconds a
    silent client's pending page may block others. *replicas*: replicas that must hold
    each write before a check is acknowledged (0 for a cluster without replicas)."""

    store: SpreadStore

    def __init__(
        self,
        client,
        client_kwargs: dict,
        *,
        max_distance: int | None = None,
        blocks: int | None = None,
        features: str | None = None,
        create: bool = True,
        **options: Any,
    ) -> None:
        store = SpreadStore(client, client_kwargs, **options)
        requested = RequestedParameters(max_distance, blocks, features)
        super().__init__(store, requested, create=create)

    prefix = property(lambda self: self.store.prefix, doc="The prefix of every key.")
    keys = property(lambda self: self.store.keys, doc="The names of the index's keys.")
    lease = property(lambda self: self.store.lease)
    ttl = property(lambda self: self.store.ttl)
    bucket_bits = property(lambda self: self.store.bucket_bits)
    read_only = property(lambda self: self.store.read_only)
    reconnect_pause = property(lambda self: self.store.reconnect_pause)
