"""One index shared by many crawler processes on many hosts, in a Redis server.

Open it with ``redis://[user:password@]host:6379/0?prefix=myproject`` (``rediss://`` for
TLS). Every key of an index starts with ``{prefix}:`` (default prefix ``simhash``); the
layout is in :mod:`~scrapy_simhash.index.redis.layout`, the scripts in
:mod:`~scrapy_simhash.index.redis.scripts`, the URI in :mod:`~scrapy_simhash.index.redis.uri`,
the parameters stored in ``{prefix}:meta`` in :mod:`~scrapy_simhash.index.redis.meta`,
maintenance (the audit log, listing, expiry) in
:mod:`~scrapy_simhash.index.redis.maintenance`. None of the keys has a time to live of its
own, and the server must never evict them (``maxmemory-policy noeviction``, checked at
open and every minute by a crawl's checks; see :meth:`RedisIndex._check_eviction`).

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

import contextlib
import json
import re
import time
from typing import TYPE_CHECKING, Any

import redis

from ...exceptions import ConfigurationError, IndexCorrupt, IndexParameterMismatch
from ..analysed import Analysed
from ..base import IndexParameters, RequestedParameters, nearest
from ..policy import Index
from ..rule import Candidate
from .check import RedisCheck
from .guards import RedisServer
from .layout import DEFAULT_BUCKET_BITS, DEFAULT_PREFIX, hex64, record_tail, records, table_layouts
from .maintenance import SWEEP_BATCH, RedisMaintenance
from .meta import RedisMeta
from .page_values import analysed_args
from .scripts import (
    ADD_EXACT_IF_NEW,
    CHECK,
    CREATE_META,
    REMOVE,
    REMOVE_EXACT,
    STORE,
)
from .uri import client_from_uri, describe, duration

if TYPE_CHECKING:
    from ..journal import Journal

__all__ = ["SWEEP_BATCH", "RedisIndex", "duration"]

_PREFIX_RE = re.compile(r"^[A-Za-z0-9_.:/-]{1,100}$")
#: Once the server could not be reached, calls fail at once for this many seconds instead
#: of each waiting for connection timeouts and retries (the crawl goes on meanwhile).
RECONNECT_PAUSE = 1.0


class RedisStore(RedisMeta, RedisCheck, RedisMaintenance, RedisServer):
    """The store of a single-slot Redis index (see :mod:`~scrapy_simhash.index.store`);
    the arguments are :class:`RedisIndex`'s."""

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
        self._upgrade_anchors = upgrade and not read_only
        self._unreachable: tuple[float, str] | None = None
        self.reconnect_pause = reconnect_pause
        self._client = client
        self._password = password
        self.prefix = prefix
        self.location = location or describe(client, prefix)
        self.read_only = read_only
        self.ttl = ttl
        self._name_keys(prefix)
        self._store = client.register_script(STORE)
        self._remove = client.register_script(REMOVE)
        self._add_exact = client.register_script(ADD_EXACT_IF_NEW)
        self._remove_exact = client.register_script(REMOVE_EXACT)
        self._create_meta = client.register_script(CREATE_META)
        self._requested_bucket_bits = bucket_bits
        try:
            with self._errors("open"):
                client.ping()
                self._check_eviction(allow_eviction)  # before anything is written
        except BaseException:
            self.close()
            raise

    def opened(self, parameters: IndexParameters, max_distance: int) -> None:
        self.parameters, self.max_distance = parameters, max_distance
        self._lay_out(self._requested_bucket_bits)
        self._check_persistence()
        self._next_sweep = 0.0
        self._last_seq = 0

    def _name_keys(self, prefix: str) -> None:
        """The names of the index's keys (see :mod:`~.layout`)."""
        self._tag = "{" + prefix + "}"
        self._meta_key = f"{self._tag}:meta"
        self._counters_key = f"{self._tag}:n"
        self._fp_key = f"{self._tag}:fp"
        self._exact_key = f"{self._tag}:exact"
        self._drops_key = f"{self._tag}:drops"
        self._order_key = f"{self._tag}:order"
        self._keys_key = f"{self._tag}:keys"
        self._anchors_key = f"{self._tag}:anchors"
        self._page_anchors_key = f"{self._tag}:pa"
        self._sketches_key = f"{self._tag}:sk"
        self._analysed_key = f"{self._tag}:an"
        self._hows_key = f"{self._tag}:how"

    def _lay_out(self, bucket_bits: int | None) -> None:
        """The tables of the opened index's block plan and bucket bits (*bucket_bits*, when
        asked for, must be the index's), and the check script written for them."""
        if bucket_bits is not None and bucket_bits != self.bucket_bits:
            raise IndexParameterMismatch(
                f"The index at {self.location} was built with other parameters (bucket_bits: "
                f"index has {self.bucket_bits}, requested {bucket_bits}). Use the index's "
                "parameters, or choose a new prefix (an index is never rebuilt on its own: "
                "it would lose every stored page)."
            )
        self.plan = self.parameters.plan
        self._layouts = table_layouts(self.parameters, self.bucket_bits)
        self._key_masks = [((1 << 64) - 1) ^ layout.rest_mask for layout in self._layouts]
        layouts = "{" + ", ".join(layout.lua() for layout in self._layouts) + "}"
        self._check_script = self._client.register_script(CHECK.replace("--LAYOUTS--", layouts))

    # -- keys and members --------------------------------------------------------------

    def _table_keys(self, fingerprint: int) -> tuple[list[str], list[int]]:
        keys, members = [], []
        for table, layout in enumerate(self._layouts):
            bucket, member = layout.split(fingerprint)
            keys.append(f"{self._tag}:t:{table}:{bucket}")
            members.append(member)
        return keys, members

    def _exact_keys(self) -> list[str]:
        return [
            self._exact_key,
            self._counters_key,
            self._order_key,
            self._meta_key,
            self._keys_key,
            self._fp_key,
        ]

    def _script_keys(self, fingerprint: int) -> tuple[list[str], list[int]]:
        keys, members = self._table_keys(fingerprint)
        return [*keys, self._fp_key, self._counters_key, self._order_key], members

    def _cutoff(self) -> str:
        """Pages stored before this time have expired ('' without a ttl)."""
        return "" if self.ttl is None else repr(time.time() - self.ttl)

    def _vanished(self) -> IndexCorrupt:
        return IndexCorrupt(
            f"The index at {self.location} lost its keys while in use ({self._meta_key} "
            "or its counters are gone): they were deleted, or the server evicted them "
            "(maxmemory-policy). Pages stored until now are forgotten; restore the index "
            "from a backup (scrapy-simhash export/import), set maxmemory-policy "
            "noeviction, and open it again"
        )

    def _check_seq(self, seq: int) -> None:
        """A sequence number never goes back unless the counters were deleted."""
        if seq <= self._last_seq:
            raise self._vanished()
        self._last_seq = seq

    def _pipeline(self):
        """A pipeline (not a transaction) to the node holding this index's slot: Redis
        Cluster's own pipelines refuse scripts, and all of our keys are on one node."""
        client = self._client
        if isinstance(client, redis.RedisCluster):
            node = client.get_node_from_key(self._meta_key)
            client = client.get_redis_connection(node)
        return client.pipeline(transaction=False)

    # -- the index ---------------------------------------------------------------------

    def near(self, fingerprint: int, max_distance: int) -> list[Candidate]:
        """The records within *max_distance* of *fingerprint* (unexpired), nearest first,
        then in the order stored: read by a pipeline of the table sets, then the records."""
        cutoff = None if self.ttl is None else time.time() - self.ttl
        table_keys, _ = self._table_keys(fingerprint)
        with self._errors("query"):
            pipe = self._pipeline()
            for name in table_keys:
                pipe.smembers(name)
            replies = pipe.execute()
            candidates = []
            for table, (name, members) in enumerate(zip(table_keys, replies, strict=True)):
                bucket = int(name.rpartition(":")[2])
                for member in members:
                    found = self._layouts[table].join(bucket, int(member))
                    candidates.append((found, found))
            found = nearest(fingerprint, candidates, max_distance)
            if not found:
                return []
            values = self._client.hmget(self._fp_key, [hex64(fp) for _, fp in found])
        near = []
        for (distance, fp), value in zip(found, values, strict=True):
            for seq, stored_key, at in sorted(records(value)) if value is not None else ():
                if cutoff is None or at >= cutoff:
                    near.append(Candidate(seq, stored_key, fp, at, seq, distance))
        return sorted(near, key=lambda c: (c.distance, c.order))

    def check_exact(
        self, digest: int, key: str, analysed: Analysed | None
    ) -> tuple[str, float] | int:
        self._recheck_eviction()
        self._sweep_if_due()
        added_at = repr(time.time())
        args = [hex64(digest), record_tail(key, float(added_at)), added_at, self._cutoff(), key]
        after = [self.plan.table_count, *analysed_args(analysed)]
        reply = self._run_check(self._add_exact, self._exact_keys(), args, after)
        if int(reply[0]) == 0:
            return int(reply[1])
        _, stored_key, stored_at = json.loads(reply[1])
        if stored_key == key and float(stored_at) == float(added_at):
            return 0  # a retried call found its own insert
        return stored_key, float(stored_at)

    def count(self) -> int:
        with self._errors("count"):
            return int(self._client.hget(self._counters_key, "pages") or 0)

    def journal(self, crawl: str | None = None, **kwargs: Any) -> Journal:
        """The crawl journal, kept under the prefix."""
        from .journal import RedisJournal

        return RedisJournal(self, crawl, **kwargs)

    def close(self) -> None:
        """Close the connections. Idempotent."""
        client, self._client = getattr(self, "_client", None), None
        if client is not None:
            with contextlib.suppress(redis.RedisError):
                client.close()


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
