"""One index shared by many crawler processes on many hosts, in a Redis server.

Open it with ``redis://[user:password@]host:6379/0?prefix=myproject`` (``rediss://`` for
TLS). Every key of an index starts with ``{prefix}:`` (default prefix ``simhash``); the
layout is in :mod:`~scrapy_simhash.index.redis.layout`, the scripts in
:mod:`~scrapy_simhash.index.redis.scripts`, the URI in :mod:`~scrapy_simhash.index.redis.uri`,
the parameters stored in ``{prefix}:meta`` in :mod:`~scrapy_simhash.index.redis.meta`,
maintenance (the audit log, listing, expiry) in
:mod:`~scrapy_simhash.index.redis.maintenance`, the server's errors and guards in
:mod:`~scrapy_simhash.index.redis.guards`. None of the keys has a time to live of its
own, and the server must never evict them (``maxmemory-policy noeviction``, checked at
open and every minute by a crawl's checks; see :meth:`~.guards.RedisServer.check_eviction`).

**Atomicity.** ``check_and_add`` runs one Lua script (sent with EVALSHA, loaded again after
a NOSCRIPT reply when the server restarted or its scripts were flushed) that reads the
candidates (probing every table, putting the stored fingerprints' bits back in order) and
stores the page only when what it reads is what the verdict was made on: the verdict is
:func:`~scrapy_simhash.index.rule.decide`'s, asked in Python, as in every backend (see
:mod:`~scrapy_simhash.index.redis.check`). Of two hosts seeing near-duplicate pages at the
same moment, one keeps its page and the other gets it as the match. A page with no
candidate at all is stored by the first run (one round trip, as a duplicate); one that
looked alike but was kept takes two (three when its key stored another fingerprint).

**Redis Cluster** (``?cluster=true``): the braces make ``prefix`` a hash tag, so every key
of one index lives in one slot, and the script stays atomic across all clients. The price:
one index lives on one shard (and its replicas); indexes with different prefixes spread
over the cluster.

**Expiry** (``?ttl=30d``): a page stored longer ago than the TTL is never a match again
(the check compares the stored time with the cutoff). Its keys are removed by a sweep that
the checks of a crawl run: at most every ``min(ttl / 24, 60 s)`` a check removes up to
100 of the oldest expired pages (read from ``{simhash}:order`` by score), and the next
check goes on while a full batch was found; a check's work stays bounded whatever the size
of the index. Commands that only read (``stats``, ``export``, ...) never sweep; they list
no expired page, but ``len()`` counts the expired pages not yet swept.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ...exceptions import ConfigurationError, IndexParameterMismatch
from ..base import IndexParameters, RequestedParameters
from ..policy import Index
from .check import RedisCheck
from .guards import RedisServer
from .layout import DEFAULT_BUCKET_BITS, DEFAULT_PREFIX
from .maintenance import SWEEP_BATCH, RedisMaintenance
from .meta import RedisMeta
from .slot import Slot
from .uri import client_from_uri, describe, duration

if TYPE_CHECKING:
    from ..journal import Journal

__all__ = ["SWEEP_BATCH", "RedisIndex", "duration"]

_PREFIX_RE = re.compile(r"^[A-Za-z0-9_.:/-]{1,100}$")
#: Once the server could not be reached, calls fail at once for this many seconds instead
#: of each waiting for connection timeouts and retries (the crawl goes on meanwhile).
RECONNECT_PAUSE = 1.0


class RedisStore:
    """The store of a single-slot Redis index (see :mod:`~scrapy_simhash.index.store`):
    a :class:`~.guards.RedisServer` (the client, its errors and guards) and the keys of
    its :class:`~.slot.Slot`, handed to each part: the parameters
    (:class:`~.meta.RedisMeta`), the check (:class:`~.check.RedisCheck`, once open), the
    audit log and maintenance (:class:`~.maintenance.RedisMaintenance`). The arguments
    are :class:`RedisIndex`'s."""

    def __init__(
        self,
        client,
        *,
        prefix: str = DEFAULT_PREFIX,
        location: str | None = None,
        read_only: bool = False,
        bucket_bits: int | None = None,
        ttl: float | None = None,
        password: str | None = None,
        reconnect_pause: float = RECONNECT_PAUSE,
        allow_eviction: bool = False,
        upgrade: bool = False,
    ) -> None:
        _check_options(prefix, bucket_bits, ttl)
        self.server = RedisServer(
            client,
            prefix=prefix,
            location=location or describe(client, prefix),
            password=password,
            reconnect_pause=reconnect_pause,
        )
        self.location = self.server.location
        self.read_only = read_only
        self.slot = Slot(self.server, ttl)
        self.errors = self.server.errors
        try:
            with self.errors("open"):
                client.ping()
                self.server.check_eviction(allow_eviction)  # before anything is written
            self.meta = RedisMeta(
                self.slot, upgrade=upgrade and not read_only, bucket_bits=bucket_bits
            )
            self.maintenance = m = RedisMaintenance(self.slot)
        except BaseException:
            self.close()
            raise
        # The parameters are RedisMeta's, the audit log and maintenance RedisMaintenance's.
        self.read_parameters, self.create = self.meta.read_parameters, self.meta.create
        self.add_drop, self.drops, self.expire_drops = m.audit.add, m.audit.drops, m.audit.expire
        self.pages, self.find, self.add_pages, self.forget = m.pages, m.find, m.add_pages, m.forget
        self.expire, self.size, self.compact = m.expire, m.size, m.compact

    prefix = property(lambda self: self.server.prefix)
    ttl = property(lambda self: self.slot.ttl)
    reconnect_pause = property(lambda self: self.server.reconnect_pause)
    bucket_bits = property(lambda self: self.meta.bucket_bits)

    def opened(self, parameters: IndexParameters, max_distance: int) -> None:
        """Lay out the tables of the opened index's block plan and bucket bits (the
        bucket bits asked for, if any, must be the index's), and write the check script
        for them."""
        requested = self.meta.requested_bucket_bits
        if requested is not None and requested != self.bucket_bits:
            raise IndexParameterMismatch(
                f"The index at {self.location} was built with other parameters (bucket_bits: "
                f"index has {self.bucket_bits}, requested {requested}). Use the index's "
                "parameters, or choose a new prefix (an index is never rebuilt on its own: "
                "it would lose every stored page)."
            )
        self.parameters, self.max_distance = parameters, max_distance
        self.plan = parameters.plan
        self.slot.lay_out(parameters, self.bucket_bits)
        self.checker = checker = RedisCheck(self.slot, max_distance, self.maintenance.sweep_if_due)
        # The check's methods are the store's (bound: no call in between on the hot path).
        self.check, self.read, self.near = checker.check, checker.read, checker.near
        self.check_exact = checker.check_exact
        self.server.check_persistence()

    def count(self) -> int:
        with self.errors("count"):
            return int(self.server.client.hget(self.slot.counters_key, "pages") or 0)

    def journal(self, crawl: str | None = None, **kwargs: Any) -> Journal:
        """The crawl journal, kept under the prefix."""
        from .journal import RedisJournal

        return RedisJournal(self, crawl, **kwargs)

    def close(self) -> None:
        """Close the connections. Idempotent."""
        self.server.close()


class RedisIndex(Index):
    """A near-duplicate index in a Redis server, shared by every process that opens it.

    *client* is a ``redis.Redis`` (or ``redis.RedisCluster``) created with
    ``decode_responses=True``; :meth:`from_uri` makes one from a URI. All keys start with
    ``{prefix}:``. *location* names the server in messages (never with a password).
    *bucket_bits* is fixed when the index is created (see the module's docstring). *ttl*
    (seconds) makes pages expire that long after they were stored. After a failure to reach
    the server, calls fail at once for *reconnect_pause* seconds, then try again. A server
    that may evict the index's keys is refused unless *allow_eviction*. *read_only* marks
    an index opened by a command that only reads. *upgrade* adds the anchors to an
    index written before them (else it is refused).
    """

    store: RedisStore

    def __init__(
        self,
        client,
        *,
        max_distance: int | None = None,
        blocks: int | None = None,
        features: str | None = None,
        create: bool = True,
        **options: Any,
    ) -> None:
        store = RedisStore(client, **options)
        requested = RequestedParameters(max_distance, blocks, features)
        super().__init__(store, requested, create=create)

    @classmethod
    def from_uri(cls, uri: str, **parameters) -> RedisIndex:
        """Open ``redis://[user:password@]host:6379/0?prefix=myproject&ttl=30d`` (or
        ``rediss://`` for TLS; ``&cluster=true`` for Redis Cluster)."""
        client, options = client_from_uri(uri)
        spread = options.pop("spread", None)
        if spread is not None:
            from .spread import RedisSpreadIndex

            return RedisSpreadIndex(client, **spread, **options, **parameters)  # type: ignore[return-value]
        return cls(client, **options, **parameters)

    prefix = property(lambda self: self.store.prefix, doc="The prefix of every key.")
    ttl = property(lambda self: self.store.ttl, doc="Seconds a page is kept, or None.")
    bucket_bits = property(lambda self: self.store.bucket_bits, doc="Bits of a bucket key.")
    read_only = property(lambda self: self.store.read_only)
    reconnect_pause = property(lambda self: self.store.reconnect_pause)


def _check_options(prefix: str, bucket_bits: int | None, ttl: float | None) -> None:
    """Refuse a prefix, bucket bits or ttl that no index can have, before any connection."""
    if not isinstance(prefix, str) or not _PREFIX_RE.match(prefix):
        raise ConfigurationError(
            f"Redis key prefix {prefix!r} must be 1 to 100 letters, digits or '_.:/-' "
            "(no braces: the prefix becomes the hash tag {prefix})"
        )
    if bucket_bits is not None and not 12 <= bucket_bits <= 32:
        raise ConfigurationError(
            f"bucket_bits={bucket_bits} must be between 12 and 32; about log2(pages / 30) "
            f"is best, and the default {DEFAULT_BUCKET_BITS} suits 1 to 30 million pages"
        )
    if ttl is not None and ttl <= 0:
        raise ConfigurationError(f"ttl={ttl} must be a positive number of seconds")
