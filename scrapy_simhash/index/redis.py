"""One index shared by many crawler processes on many hosts, in a Redis server.

Open it with ``redis://[user:password@]host:6379/0?prefix=myproject`` (``rediss://`` for
TLS). Every key of an index starts with ``{prefix}:`` (default prefix ``simhash``)::

    {simhash}:meta              hash    format, version, max_distance, blocks, features,
                                        bucket_bits, created_at: checked on every open
    {simhash}:n                 hash    pages (the count), seq (the last sequence number)
    {simhash}:t:<table>:<bucket> set    one per table and bucket: the fingerprints whose
                                        table key starts with <bucket>, as integers
    {simhash}:fp                hash    fingerprint (16 hex digits) -> [[seq, key, "added_at"]]
    {simhash}:exact             hash    text digest (16 hex digits) -> [seq, key, "added_at"]
    {simhash}:order             zset    one member per stored page, "<seq>:f:<hex>" (or
                                        ":x:" for exact entries), scored by the time stored:
                                        pages() in order, expiry by time, both in batches
    {simhash}:drops             stream  the audit log (key, kept, distance, exact, at)

None of these keys has a time to live of its own, and the server must never evict them
(``maxmemory-policy noeviction``, checked at open and every minute by a crawl's checks;
see :meth:`RedisIndex._check_eviction`).

**Tables and buckets.** For each table of the block plan a fingerprint's bits are
rearranged so that the table's key comes first (see :mod:`scrapy_simhash.blocks`). The
first ``bucket_bits`` bits (default 16) name the set; the remaining ``64 - bucket_bits``
bits (at most 52) are the member, so a member is an exact Lua number and the sets stay
compact intsets (8 bytes a member) until they hold 512 members. A probe reads one set per
table and keeps the members whose remaining key bits are equal; the other bits are
compared in two 24-bit halves (Lua's ``bit`` library is 32-bit).

**Atomicity.** ``add_if_new`` is one Lua script (sent with EVALSHA, loaded again after
a NOSCRIPT reply when the server restarted or its scripts were flushed): it probes every
table, checks the distances and inserts only when nothing is near, while no other client's
command runs. Of two hosts seeing near-duplicate pages at the same moment, one keeps its
page and the other gets it as the match. Of equally near stored pages the earliest stored
(smallest sequence number) is the match, as in every backend. The script also puts the
matched fingerprint's bits back in order and returns its stored record: a check is one
round trip. The scripts live in :mod:`scrapy_simhash.index.redis_scripts`.

There is no index by URL: ``find`` and ``forget`` read every stored page (``HSCAN``),
which takes seconds for millions of pages; they are for maintenance, not for the crawl's
path. ``pages`` and ``expire`` read ``{simhash}:order`` in batches.

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
import logging
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlsplit

import redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from ..blocks import BlockPlan
from ..exceptions import (
    ConfigurationError,
    IndexCorrupt,
    IndexNotFound,
    IndexParameterMismatch,
    IndexUnavailable,
    NotAnIndex,
    UnsupportedIndexURI,
)
from ..features import DEFAULT_FEATURES
from .base import (
    DropRecord,
    IndexBase,
    IndexParameters,
    Match,
    RequestedParameters,
    StoredPage,
    nearest,
    storable_key,
    storable_pages,
)
from .redis_scripts import (
    ADD_EXACT_IF_NEW,
    ADD_IF_NEW,
    CREATE_META,
    REMOVE,
    REMOVE_EXACT,
    STORE,
)
from .uri import redact, uri_options

logger = logging.getLogger(__name__)

#: The value of ``format`` in ``{prefix}:meta``: marks our keys.
FORMAT = "scrapy-simhash"
#: Bumped with every change of the key layout above (2: the order of pages).
LAYOUT_VERSION = 2
DEFAULT_PREFIX = "simhash"
DEFAULT_BUCKET_BITS = 16
#: Members must be exact Lua numbers (doubles): at most 52 bits.
MAX_MEMBER_BITS = 52
_PREFIX_RE = re.compile(r"^[A-Za-z0-9_.:/-]{1,100}$")
_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_BATCH = 1000
#: Expired pages one check removes at most.
SWEEP_BATCH = 100
#: Seconds between two reads of the server's maxmemory-policy by a crawl's checks.
POLICY_RECHECK = 60.0
_OUT_OF_MEMORY = getattr(redis.exceptions, "OutOfMemoryError", ())
#: Once the server could not be reached, calls fail at once for this many seconds instead
#: of each waiting for connection timeouts and retries (the crawl goes on meanwhile).
RECONNECT_PAUSE = 1.0


def duration(value: str) -> float:
    """Seconds in ``3600``, ``90s``, ``45m``, ``12h``, ``30d`` or ``2w``; must be positive."""
    found = _DURATION_RE.match(value)
    if not found or float(found[1]) <= 0:
        raise ValueError(value)
    return float(found[1]) * _UNITS[found[2]]


def boolean(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(value)


@dataclass(frozen=True)
class _TableLayout:
    """How one table's key and the remaining bits of a fingerprint map to a set and a member."""

    key_blocks: tuple[tuple[int, int], ...]  #: (shift, width) of the key's blocks, first = top
    rest_blocks: tuple[tuple[int, int], ...]  #: the other blocks, first = top
    key_bits: int
    rest_bits: int
    bucket_bits: int

    @property
    def rest_mask(self) -> int:
        """The bits of a fingerprint outside this table's key."""
        return sum(((1 << width) - 1) << shift for shift, width in self.rest_blocks)

    def lua(self) -> str:
        """``{rest_bits, {position in rest, width, shift}, ...}`` for the add script."""
        parts, position = [], self.rest_bits
        for shift, width in self.rest_blocks:
            position -= width
            parts.append(f"{{{position}, {width}, {shift}}}")
        return "{" + ", ".join([str(self.rest_bits), *parts]) + "}"

    def split(self, fingerprint: int) -> tuple[int, int]:
        """(bucket, member) of *fingerprint* in this table."""
        key = rest = 0
        for shift, width in self.key_blocks:
            key = (key << width) | ((fingerprint >> shift) & ((1 << width) - 1))
        for shift, width in self.rest_blocks:
            rest = (rest << width) | ((fingerprint >> shift) & ((1 << width) - 1))
        low_bits = self.key_bits - self.bucket_bits
        bucket = key >> low_bits
        member = ((key & ((1 << low_bits) - 1)) << self.rest_bits) | rest
        return bucket, member

    def join(self, bucket: int, member: int) -> int:
        """The fingerprint stored as *member* of the set *bucket*."""
        low_bits = self.key_bits - self.bucket_bits
        key = (bucket << low_bits) | (member >> self.rest_bits)
        rest = member & ((1 << self.rest_bits) - 1)
        fingerprint = 0
        for blocks, value in ((self.key_blocks, key), (self.rest_blocks, rest)):
            for shift, width in reversed(blocks):
                fingerprint |= (value & ((1 << width) - 1)) << shift
                value >>= width
        return fingerprint


def _layouts(parameters: IndexParameters, bucket_bits: int) -> list[_TableLayout]:
    plan = parameters.plan
    layouts = []
    for table in plan.tables:
        key_blocks = tuple(plan.spans[i] for i in table)
        rest_blocks = tuple(plan.spans[i] for i in range(plan.blocks) if i not in table)
        key_bits = sum(width for _, width in key_blocks)
        bits = min(bucket_bits, key_bits)
        if plan.bits - bits > MAX_MEMBER_BITS:
            raise ConfigurationError(
                f"The Redis index needs table keys of at least {plan.bits - MAX_MEMBER_BITS} "
                f"bits, but max_distance={plan.max_distance} with blocks={plan.blocks} makes "
                f"{key_bits}-bit keys; {_blocks_advice(plan.max_distance)}"
            )
        layouts.append(_TableLayout(key_blocks, rest_blocks, key_bits, plan.bits - key_bits, bits))
    return layouts


def _blocks_advice(max_distance: int) -> str:
    """Which numbers of blocks give keys long enough for Redis members (at most 52 bits)."""
    usable = []
    for blocks in range(max_distance + 1, 65):
        try:
            plan = BlockPlan(max_distance=max_distance, blocks=blocks)
        except ConfigurationError:
            continue
        if min(plan.key_bits(t) for t in range(plan.table_count)) >= 64 - MAX_MEMBER_BITS:
            usable.append(blocks)
    if not usable:
        return (
            f"no block plan for max_distance={max_distance} fits; "
            "use SQLite, or a smaller max_distance"
        )
    return f"use blocks={usable[0]}" + (f" to {usable[-1]}" if len(usable) > 1 else "")


def _check_credentials(uri: str) -> None:
    """Refuse credentials that would be misread (and shown) as a path or options."""
    if "@" in uri.partition("://")[2] and "@" not in urlsplit(uri).netloc:
        raise UnsupportedIndexURI(
            f"The user or password in the index URI {redact(uri)} holds '/', '?' or '#': "
            "write them as %2F, %3F and %23 (and '@' as %40), as in "
            "redis://:pa%2Fss@localhost:6379/0"
        )
    names = {name.lower() for name, _ in parse_qsl(urlsplit(uri).query)}
    if names & {"password", "username", "user"}:
        raise UnsupportedIndexURI(
            f"Credentials go before the host in the index URI, not in its options "
            f"({redact(uri)}): redis://user:password@host:6379/0 (or redis://:password@...)"
        )


def _describe(client, prefix: str) -> str:
    """``redis://host:port/db?prefix=...`` for a client (without user or password)."""
    pool = getattr(client, "connection_pool", None)
    kwargs = getattr(pool, "connection_kwargs", {})
    where = f"{kwargs.get('host', '?')}:{kwargs.get('port', '?')}/{kwargs.get('db', 0)}"
    return f"redis://{where}?prefix={prefix}"


def _hex(value: int) -> str:
    return f"{value:016x}"


def _tail(key: str, added_at: float) -> str:
    """The end of a stored record: ``"key","added_at"`` (the time as a string keeps every
    digit through Lua's cjson)."""
    return json.dumps(key, ensure_ascii=False) + "," + json.dumps(repr(float(added_at)))


def _records(value: str) -> list[tuple[int, str, float]]:
    """The ``(seq, key, added_at)`` records of one stored fingerprint."""
    return [(int(seq), key, float(at)) for seq, key, at in json.loads(value)]


class RedisIndex(IndexBase):
    """A near-duplicate index in a Redis server, shared by every process that opens it.

    *client* is a ``redis.Redis`` (or ``redis.RedisCluster``) created with
    ``decode_responses=True``; :meth:`from_uri` makes one from a URI. All keys start with
    ``{prefix}:``. *location* names the server in messages (never with a password).
    *bucket_bits* is fixed when the index is created (see the module's docstring). *ttl*
    (seconds) makes pages expire that long after they were stored. After a failure to reach
    the server, calls fail at once for *reconnect_pause* seconds, then try again. A server
    that may evict the index's keys is refused unless *allow_eviction*. *read_only* marks
    an index opened by a command that only reads.
    """

    def __init__(
        self,
        client,
        *,
        prefix: str = DEFAULT_PREFIX,
        location: str | None = None,
        max_distance: int | None = None,
        blocks: int | None = None,
        features: str | None = None,
        create: bool = True,
        read_only: bool = False,
        bucket_bits: int | None = None,
        ttl: float | None = None,
        password: str | None = None,
        reconnect_pause: float = RECONNECT_PAUSE,
        allow_eviction: bool = False,
    ) -> None:
        self._unreachable: tuple[float, str] | None = None
        self.reconnect_pause = reconnect_pause

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
        self._client = client
        self._password = password
        self.prefix = prefix
        self.location = location or _describe(client, prefix)
        self.read_only = read_only
        self.ttl = ttl
        self._tag = "{" + prefix + "}"
        self._meta_key = f"{self._tag}:meta"
        self._counters_key = f"{self._tag}:n"
        self._fp_key = f"{self._tag}:fp"
        self._exact_key = f"{self._tag}:exact"
        self._drops_key = f"{self._tag}:drops"
        self._order_key = f"{self._tag}:order"
        self._store = client.register_script(STORE)
        self._remove = client.register_script(REMOVE)
        self._add_exact = client.register_script(ADD_EXACT_IF_NEW)
        self._remove_exact = client.register_script(REMOVE_EXACT)
        self._create_meta = client.register_script(CREATE_META)
        requested = RequestedParameters(max_distance, blocks, features)
        try:
            with self._errors("open"):
                client.ping()
                self._check_eviction(allow_eviction)  # before anything is written
                self.parameters, self.bucket_bits = self._load_or_create(
                    requested, bucket_bits, create, DEFAULT_FEATURES
                )
            self.plan = self.parameters.plan
            self._layouts = _layouts(self.parameters, self.bucket_bits)
            self._key_masks = [((1 << 64) - 1) ^ layout.rest_mask for layout in self._layouts]
            layouts = "{" + ", ".join(layout.lua() for layout in self._layouts) + "}"
            self._add_if_new = client.register_script(ADD_IF_NEW.replace("--LAYOUTS--", layouts))
            self._check_persistence()
            self._next_sweep = 0.0
            self._last_seq = 0
        except BaseException:
            self.close()
            raise

    @classmethod
    def from_uri(cls, uri: str, **parameters) -> RedisIndex:
        """Open ``redis://[user:password@]host:6379/0?prefix=myproject&ttl=30d`` (or
        ``rediss://`` for TLS; ``&cluster=true`` for Redis Cluster)."""
        _check_credentials(uri)
        options = uri_options(
            uri,
            {
                "prefix": str,
                "ttl": duration,
                "bucket_bits": int,
                "cluster": boolean,
                "timeout": float,
                "ssl_cert_reqs": str,
                "ssl_ca_certs": str,
                "ssl_certfile": str,
                "ssl_keyfile": str,
                "allow_eviction": boolean,
            },
        )
        parts = urlsplit(uri)
        try:
            host, port = parts.hostname or "localhost", parts.port or 6379
        except ValueError:
            raise UnsupportedIndexURI(f"Bad port in index URI {redact(uri)}") from None
        db_text = parts.path.strip("/") or "0"
        if not db_text.isdigit():
            raise UnsupportedIndexURI(
                f"Redis database {db_text!r} in {redact(uri)} must be a number, "
                "as in redis://localhost:6379/0"
            )
        db = int(db_text)
        cluster = bool(options.pop("cluster", False))
        if cluster and db != 0:
            raise UnsupportedIndexURI(
                f"Redis Cluster has only database 0, not {db} ({redact(uri)})"
            )
        timeout = float(options.pop("timeout", 5.0))
        password = unquote(parts.password) if parts.password is not None else None
        username = unquote(parts.username) if parts.username else None
        prefix = str(options.pop("prefix", DEFAULT_PREFIX))
        ttl = options.pop("ttl", None)
        bucket_bits = options.pop("bucket_bits", None)
        allow_eviction = bool(options.pop("allow_eviction", False))
        scheme = parts.scheme.lower()
        kwargs = dict(
            host=host,
            port=port,
            username=username,
            password=password,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            decode_responses=True,
            # Connection errors and timeouts are retried with a short backoff; a retried
            # add_if_new recognises its own insert (see add_if_new).
            retry=Retry(ExponentialBackoff(cap=1.0, base=0.05), 3),
            retry_on_error=[redis.ConnectionError, redis.TimeoutError],  # redis-py 5 needs it
        )
        if scheme == "rediss":
            kwargs["ssl"] = True
            kwargs.update(options)
        elif options:
            raise UnsupportedIndexURI(
                f"Options {', '.join(sorted(options))} in {redact(uri)} need TLS: use rediss://"
            )
        location = f"{scheme}://{host}:{port}/{db}?prefix={prefix}"
        if cluster:
            location += "&cluster=true"
            client = redis.RedisCluster(**kwargs)
        else:
            client = redis.Redis(db=db, **kwargs)
        return cls(
            client,
            prefix=prefix,
            location=location,
            bucket_bits=bucket_bits,
            ttl=ttl,
            password=password,
            allow_eviction=allow_eviction,
            **parameters,
        )

    # -- opening -----------------------------------------------------------------------

    def _load_or_create(self, requested, bucket_bits, create, default_features):
        meta = self._client.hgetall(self._meta_key)
        if not meta and self._has_keys():
            # Keys but no parameters. Another process may have just created this index:
            # its parameters are written first, in one script, before any other key.
            meta = self._client.hgetall(self._meta_key)
            if not meta:
                raise NotAnIndex(
                    f"{self.location} has keys under {self._tag}: but no scrapy-simhash "
                    f"parameters in {self._meta_key}; they were left untouched. Choose "
                    "another prefix in SIMHASH_INDEX_URI (?prefix=...)."
                )
        if not meta:
            if not create:
                raise IndexNotFound(f"No index at {self.location}")
            parameters = requested.for_new_index(default_features)
            bits = DEFAULT_BUCKET_BITS if bucket_bits is None else bucket_bits
            _layouts(parameters, bits)  # validates before anything is written
            fields = {
                "format": FORMAT,
                "version": str(LAYOUT_VERSION),
                "max_distance": str(parameters.max_distance),
                "blocks": str(parameters.blocks),
                "features": parameters.features,
                "bucket_bits": str(bits),
                "created_at": repr(time.time()),
            }
            args = [x for item in fields.items() for x in item]
            reply = self._create_meta(keys=[self._meta_key], args=args)
            meta = dict(zip(reply[::2], reply[1::2], strict=True))
        if meta.get("format") != FORMAT:
            raise NotAnIndex(
                f"{self.location} holds a key {self._meta_key} that is not scrapy-simhash's; "
                "it was left untouched. Choose another prefix in SIMHASH_INDEX_URI "
                "(?prefix=...)."
            )
        version = int(meta.get("version", "0"))
        if version > LAYOUT_VERSION:
            raise IndexUnavailable(
                f"The index at {self.location} has layout version {version}, newer than this "
                f"scrapy-simhash knows ({LAYOUT_VERSION}); upgrade scrapy-simhash"
            )
        if version < LAYOUT_VERSION:
            raise IndexUnavailable(
                f"The index at {self.location} has layout version {version}, from a "
                f"pre-release of scrapy-simhash (this one reads {LAYOUT_VERSION}). It was left "
                "untouched: export it with the scrapy-simhash that built it (scrapy-simhash "
                "export) and import the file into a new prefix with this one"
            )
        try:
            stored = IndexParameters(
                int(meta["max_distance"]), int(meta["blocks"]), meta["features"]
            )
            stored_bits = int(meta["bucket_bits"])
        except (KeyError, ValueError):
            raise IndexCorrupt(
                f"The index at {self.location} has no valid parameters in {self._meta_key}; "
                "restore it from a backup (scrapy-simhash export/import) or use another prefix"
            ) from None
        parameters = requested.check(stored, self.location)
        if bucket_bits is not None and bucket_bits != stored_bits:
            raise IndexParameterMismatch(
                f"The index at {self.location} was built with other parameters (bucket_bits: "
                f"index has {stored_bits}, requested {bucket_bits}). Use the index's "
                "parameters, or choose a new prefix (an index is never rebuilt on its own: "
                "it would lose every stored page)."
            )
        return parameters, stored_bits

    def _has_keys(self) -> bool:
        """Whether any key starts with this index's ``{prefix}:``."""
        pattern = re.sub(r"([*?\[\]\\])", r"\\\1", self._tag) + ":*"
        return any(True for _ in self._client.scan_iter(match=pattern, count=1000))

    def _check_eviction(self, allowed: bool) -> None:
        """Refuse a server that may evict our keys to make room: an evicted table or meta
        key makes the index forget pages silently (1-bit variants of stored pages kept)."""
        self._allow_eviction = allowed
        self._next_policy_check = time.monotonic() + POLICY_RECHECK
        try:
            config = self._client.config_get("maxmemory-policy")
        except redis.RedisError as e:
            self._next_policy_check = float("inf")  # it will not be readable later either
            logger.warning(
                "Could not read the maxmemory-policy of %s (%s); make sure it is noeviction: "
                "a server that evicts keys to make room loses pages of the index silently",
                self.location,
                self._scrub(str(e)),
            )
            return
        message = self._evicting(config)
        if message is None:
            return
        if not allowed:
            raise ConfigurationError(
                message + ". To use it anyway, add allow_eviction=true to the index URI"
            )
        logger.warning("%s (allowed by allow_eviction=true)", message)

    def _evicting(self, config) -> str | None:
        """What is wrong with the ``CONFIG GET maxmemory-policy`` reply, if anything."""
        policy = config.get("maxmemory-policy", "") if isinstance(config, dict) else ""
        # volatile-* policies evict only keys with a time to live; ours have none.
        if not policy.startswith("allkeys-"):
            return None
        return (
            f"Redis at {self.location} has maxmemory-policy {policy}: when full it evicts "
            "keys of the index, which then forgets pages silently and lets duplicates "
            "through. Use a server (or database) with: CONFIG SET maxmemory-policy "
            "noeviction (and in redis.conf); a full server then refuses writes and the "
            "crawl counts them as index errors"
        )

    def _recheck_eviction(self) -> None:
        """The policy may be changed on a running server: read it again every
        ``POLICY_RECHECK`` seconds, and fail the checks while it evicts."""
        if self._allow_eviction or time.monotonic() < self._next_policy_check:
            return
        self._next_policy_check = time.monotonic() + POLICY_RECHECK
        with self._errors("read maxmemory-policy"):
            message = self._evicting(self._client.config_get("maxmemory-policy"))
        if message is not None:
            self._next_policy_check = 0.0  # until it is fixed
            raise IndexUnavailable(message + "; checks fail until it is noeviction again")

    def _check_persistence(self) -> None:
        try:
            config = self._client.config_get("appendonly")
        except redis.RedisError as e:
            logger.debug(
                "Could not read the appendonly setting of %s (%s); make sure the server "
                "persists its data, or a restart loses the index",
                self.location,
                self._scrub(str(e)),
            )
            return
        values = list(config.values()) if isinstance(config, dict) else []
        if "no" in values:
            logger.warning(
                "Redis at %s has appendonly off: a restart of the server loses every page "
                "stored since its last snapshot. Turn it on with: CONFIG SET appendonly yes "
                "(and in redis.conf)",
                self.location,
            )

    # -- errors ------------------------------------------------------------------------

    def _scrub(self, message: str) -> str:
        if self._password:
            message = message.replace(self._password, "***")
        return message

    @contextlib.contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        """Turn redis-py's errors into ours, naming the server (never the password)."""
        if self._unreachable is not None:
            until, message = self._unreachable
            if time.monotonic() < until:
                raise IndexUnavailable(
                    f"{message} (next attempt in {until - time.monotonic():.1f} s)"
                )
        try:
            yield
        except redis.AuthenticationError as e:
            raise IndexUnavailable(
                f"Redis at {self.location} refused the credentials ({doing}: "
                f"{self._scrub(str(e))}); check the user and password in SIMHASH_INDEX_URI"
            ) from None
        except (redis.ConnectionError, redis.TimeoutError) as e:
            message = (
                f"Cannot reach Redis at {self.location} ({doing}: {self._scrub(str(e))}); "
                "start the server or fix SIMHASH_INDEX_URI. The index reconnects when it is back"
            )
            # Fail at once for a moment rather than wait for timeouts on every item.
            self._unreachable = (time.monotonic() + self.reconnect_pause, message)
            raise IndexUnavailable(message) from None
        except redis.ResponseError as e:
            message = self._scrub(str(e))
            if "WRONGTYPE" in message:
                raise IndexCorrupt(
                    f"A key of the index at {self.location} has the wrong type ({doing}: "
                    f"{message}); another program wrote under the prefix. Restore the index "
                    "from a backup or choose another prefix"
                ) from None
            if isinstance(e, _OUT_OF_MEMORY) or "maxmemory" in message:
                raise IndexUnavailable(
                    f"Redis at {self.location} is out of memory ({doing}: {message}); raise "
                    "its maxmemory, use a ttl, or use another server"
                ) from None
            raise IndexUnavailable(
                f"Redis at {self.location} failed ({doing}: {message})"
            ) from None
        except redis.RedisError as e:
            raise IndexUnavailable(
                f"Redis at {self.location} failed ({doing}: {self._scrub(str(e))})"
            ) from None

    # -- keys and members --------------------------------------------------------------

    def _table_keys(self, fingerprint: int) -> tuple[list[str], list[int]]:
        keys, members = [], []
        for table, layout in enumerate(self._layouts):
            bucket, member = layout.split(fingerprint)
            keys.append(f"{self._tag}:t:{table}:{bucket}")
            members.append(member)
        return keys, members

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

    def add_if_new(self, fingerprint: int, key: str) -> Match | None:
        key = storable_key(key)
        self._recheck_eviction()
        self._sweep_if_due()
        keys, members = self._script_keys(fingerprint)
        args: list[object] = [self.plan.max_distance]
        for member, mask in zip(members, self._key_masks, strict=True):
            key_part = fingerprint & mask
            args += (member, key_part >> 32, key_part & 0xFFFF_FFFF)
        added_at = repr(time.time())
        args += [_hex(fingerprint), _tail(key, float(added_at)), added_at, self._cutoff()]
        with self._errors("add"):
            reply = self._add_if_new(keys=[*keys, self._meta_key], args=args)
        status = int(reply[0])
        if status == -1:
            raise self._vanished()
        if status == -2:
            raise IndexCorrupt(
                f"The index at {self.location} lists fingerprint {reply[1]} in its tables "
                f"but not in {self._fp_key}; another program changed its keys. Restore it "
                "from a backup (scrapy-simhash export/import) or choose another prefix"
            )
        if status == 0:
            self._check_seq(int(reply[1]))
            return None
        found, value, distance, seq = int(reply[1], 16), reply[2], int(reply[3]), int(reply[4])
        (stored_key, stored_at) = next((k, at) for s, k, at in _records(value) if s == seq)
        if distance == 0 and stored_key == key and stored_at == float(added_at):
            return None  # a call retried after a timeout found its own insert
        return Match(stored_key, found, distance, stored_at)

    def query(self, fingerprint: int, max_distance: int | None = None) -> list[Match]:
        k = self._query_distance(max_distance)
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
            found = nearest(fingerprint, candidates, k)
            if not found:
                return []
            values = self._client.hmget(self._fp_key, [_hex(fp) for _, fp in found])
        matches = []
        for (distance, fp), value in zip(found, values, strict=True):
            if value is not None:
                for seq, stored_key, at in sorted(_records(value)):
                    if cutoff is None or at >= cutoff:
                        matches.append((distance, seq, Match(stored_key, fp, distance, at)))
        return [match for _, _, match in sorted(matches, key=lambda m: m[:2])]

    def add_exact_if_new(self, digest: int, key: str) -> Match | None:
        key = storable_key(key)
        self._recheck_eviction()
        self._sweep_if_due()
        added_at = repr(time.time())
        with self._errors("add"):
            value = self._add_exact(
                keys=[self._exact_key, self._counters_key, self._order_key, self._meta_key],
                args=[_hex(digest), _tail(key, float(added_at)), added_at, self._cutoff()],
            )
        if value is None:
            return None
        if value == -1:
            raise self._vanished()
        _, stored_key, stored_at = json.loads(value)
        if stored_key == key and float(stored_at) == float(added_at):
            return None  # a retried call found its own insert
        return Match(stored_key, digest, 0, float(stored_at))

    def __len__(self) -> int:
        with self._errors("count"):
            return int(self._client.hget(self._counters_key, "pages") or 0)

    # -- maintenance and audit ---------------------------------------------------------

    def record_drop(self, key: str, match: Match, *, exact: bool = False) -> None:
        fields = {
            "key": storable_key(key),
            "kept": match.key,
            "distance": match.distance,
            "exact": int(exact),
            "at": repr(time.time()),
        }
        with self._errors("record a drop"):
            self._client.xadd(self._drops_key, fields)

    def drops(self, *, since: float | None = None) -> Iterator[DropRecord]:
        # Entry ids are the server's clock in ms, ``at`` the client's: start 10 minutes early.
        start = "-" if since is None else f"{max(0, int((since - 600) * 1000))}-0"
        while True:
            with self._errors("read the drops"):
                batch = self._client.xrange(self._drops_key, min=start, count=_BATCH)
            for _, fields in batch:
                record = DropRecord(
                    fields["key"],
                    fields["kept"],
                    int(fields["distance"]),
                    fields["exact"] == "1",
                    float(fields["at"]),
                )
                if since is None or record.at >= since:
                    yield record
            if len(batch) < _BATCH:
                return
            start = "(" + batch[-1][0]

    def _scan(self, name: str) -> Iterator[tuple[str, str]]:
        with self._errors("list pages"):
            yield from self._client.hscan_iter(name, count=_BATCH)

    def _stored(self) -> Iterator[tuple[int, StoredPage]]:
        """``(seq, page)`` for every stored page, in no particular order."""
        for hex_fp, value in self._scan(self._fp_key):
            for seq, key, at in _records(value):
                yield seq, StoredPage(key, int(hex_fp, 16), at)
        for hex_digest, value in self._scan(self._exact_key):
            seq, key, at = json.loads(value)
            yield int(seq), StoredPage(key, int(hex_digest, 16), float(at), exact=True)

    def _ordered(self, low: str = "-inf", high: str = "+inf") -> Iterator[tuple[int, StoredPage]]:
        """``(seq, page)`` for the pages stored from *low* to *high* (epoch times; ``(``
        before one excludes it), in the order stored, read in batches of ``_BATCH``."""
        after: tuple[float, str] | None = None
        count = _BATCH
        while True:
            with self._errors("list pages"):
                batch = self._client.zrangebyscore(
                    self._order_key, low, high, start=0, num=count, withscores=True
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

    def _resolve(self, members: list[str]) -> Iterator[tuple[int, StoredPage]]:
        """The stored pages named by members of the order (skipping ones just removed)."""
        if not members:
            return
        parsed = [(int(seq), kind == "x", value) for seq, kind, value in
                  (member.split(":") for member in members)]  # fmt: skip
        with self._errors("list pages"):
            pipe = self._pipeline()
            for _, exact, value in parsed:
                pipe.hget(self._exact_key if exact else self._fp_key, value)
            values = pipe.execute()
        for (seq, exact, hex_value), stored in zip(parsed, values, strict=True):
            if stored is None:
                continue
            if exact:
                stored_seq, key, at = json.loads(stored)
                if int(stored_seq) == seq:
                    yield seq, StoredPage(key, int(hex_value, 16), float(at), exact=True)
                continue
            for record_seq, key, at in _records(stored):
                if record_seq == seq:
                    yield seq, StoredPage(key, int(hex_value, 16), at)

    def pages(self) -> Iterator[StoredPage]:
        low = "-inf" if self.ttl is None else repr(time.time() - self.ttl)
        for _, page in self._ordered(low):
            yield page

    def find(self, key: str) -> list[StoredPage]:
        key = storable_key(key)
        found = [(page.added_at, seq, page) for seq, page in self._stored() if page.key == key]
        return [page for _, _, page in sorted(found, key=lambda item: item[:2])]

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
        with self._errors("add pages"):
            pipe = self._pipeline()
            for page in batch:
                tail = _tail(page.key, page.added_at)
                if page.exact:
                    self._add_exact(
                        keys=[self._exact_key, self._counters_key, self._order_key, self._meta_key],
                        args=[_hex(page.fingerprint), tail, repr(float(page.added_at)), ""],
                        client=pipe,
                    )
                else:
                    keys, members = self._script_keys(page.fingerprint)
                    args = [len(members), *members, _hex(page.fingerprint), tail, page.key]
                    args.append(repr(float(page.added_at)))
                    self._store(keys=[*keys, self._meta_key], args=args, client=pipe)
            replies = pipe.execute()
        if -1 in replies:
            raise self._vanished()
        added = 0
        for page, reply in zip(batch, replies, strict=True):
            if page.exact:
                added += reply is None
            else:
                added += int(reply)
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
            with self._errors("remove pages"):
                pipe = self._pipeline()
                for is_exact, value, seqs in calls[start : start + _BATCH]:
                    if is_exact:
                        self._remove_exact(
                            keys=[self._exact_key, self._counters_key, self._order_key],
                            args=[_hex(value), seqs[0]],
                            client=pipe,
                        )
                    else:
                        keys, members = self._script_keys(value)
                        self._remove(
                            keys=keys,
                            args=[len(members), *members, _hex(value), *seqs],
                            client=pipe,
                        )
                removed += sum(int(reply) for reply in pipe.execute())
        return removed

    def forget(self, key: str) -> int:
        key = storable_key(key)
        return self._delete([(seq, page) for seq, page in self._stored() if page.key == key])

    def expire(self, older_than: float) -> int:
        removed = 0
        while True:
            removed += self._expire_batch(older_than, _BATCH)
            if not self._expired_left:
                return removed

    def _expire_batch(self, older_than: float, count: int) -> int:
        """Remove up to *count* of the oldest pages stored before *older_than*; set
        ``_expired_left`` to whether there may be more."""
        with self._errors("expire"):
            members = self._client.zrangebyscore(
                self._order_key, "-inf", f"({older_than!r}", start=0, num=count
            )
        pages = list(self._resolve(members))
        removed = self._delete(pages)
        # Members whose page is gone (removed by another client meanwhile) go too, so
        # that they are not read again.
        found = {seq for seq, _ in pages}
        orphans = [m for m in members if int(m.partition(":")[0]) not in found]
        if orphans:
            with self._errors("expire"):
                self._client.zrem(self._order_key, *orphans)
        self._expired_left = len(members) == count
        return removed

    def expire_drops(self, older_than: float) -> int:
        # Entries are in the order the server received them; ``at`` is the writer's clock.
        # Read up to 10 minutes past the cutoff (as drops() does before it) and delete by
        # ``at``, so that the result does not depend on the server's clock.
        end = f"{int((older_than + 600) * 1000)}-0"
        doomed: list[str] = []
        start = "-"
        while True:
            with self._errors("read the drops"):
                batch = self._client.xrange(self._drops_key, min=start, max=end, count=_BATCH)
            doomed += [entry for entry, fields in batch if float(fields["at"]) < older_than]
            if len(batch) < _BATCH:
                break
            start = "(" + batch[-1][0]
        removed = 0
        for first in range(0, len(doomed), _BATCH):
            with self._errors("remove audit-log entries"):
                removed += self._client.xdel(self._drops_key, *doomed[first : first + _BATCH])
        return removed

    # -- time to live ------------------------------------------------------------------

    def _sweep_if_due(self) -> None:
        """Remove up to ``SWEEP_BATCH`` expired pages, at most every ``min(ttl / 24, 60 s)``,
        and again at the next call while there were more: bounded work for each check,
        whatever the size of the index. Expired pages are never matched meanwhile."""
        if self.ttl is None or time.monotonic() < self._next_sweep:
            return
        now = time.time()
        removed = self._expire_batch(now - self.ttl, SWEEP_BATCH)
        with self._errors("expire"):
            # Whole stream nodes only, at most a batch's worth: bounded too.
            self._client.xtrim(
                self._drops_key,
                minid=int((now - self.ttl) * 1000),
                approximate=True,
                limit=SWEEP_BATCH,
            )
        more = self._expired_left
        self._next_sweep = 0.0 if more else time.monotonic() + min(self.ttl / 24, 60.0)
        if removed:
            logger.debug(
                "Removed %d pages older than the ttl of %g s from %s",
                removed,
                self.ttl,
                self.location,
            )

    def close(self) -> None:
        """Close the connections. Idempotent."""
        client, self._client = getattr(self, "_client", None), None
        if client is not None:
            with contextlib.suppress(redis.RedisError):
                client.close()

    def __repr__(self) -> str:
        return f"RedisIndex({self.location!r}, {self.parameters})"
