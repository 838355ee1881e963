"""The connection side of a Redis index, either layout: its client and hash tag, what the
server says about the index (whether it may evict the index's keys or lose them on a
restart: checked at open, the eviction policy again during a crawl), and its errors,
translated into ours with the server named and the password never shown. Each part of a
store is handed the store's :class:`RedisServer`, as a SQLite store's parts are its
``Database``."""

from __future__ import annotations

import contextlib
import logging
import re
import time
from collections.abc import Iterator
from typing import Any

import redis

from ...exceptions import ConfigurationError, IndexCorrupt, IndexUnavailable, SimhashIndexError

logger = logging.getLogger("scrapy_simhash.index.redis")

#: Seconds between two reads of the server's maxmemory-policy by a crawl's checks.
POLICY_RECHECK = 60.0
_OUT_OF_MEMORY = getattr(redis.exceptions, "OutOfMemoryError", ())


class RedisServer:
    """The server of the index under ``{prefix}:`` at *location* through *client*
    (``decode_responses=True``): its errors as ours (*driver_errors*, the password
    scrubbed), failing at once for *reconnect_pause* seconds once it could not be
    reached, and its guards. A client of its own is never shared with another index."""

    def __init__(
        self,
        client: Any,
        *,
        prefix: str,
        location: str,
        password: str | None = None,
        reconnect_pause: float = 0.0,
        driver_errors: tuple[type[BaseException], ...] = (redis.RedisError,),
    ) -> None:
        self.client = client
        self.prefix = prefix
        #: The hash tag every key of the index starts with: one slot in a cluster.
        self.tag = "{" + prefix + "}"
        self.location = location
        self.reconnect_pause = reconnect_pause
        self._password = password
        self._driver_errors = driver_errors
        self._unreachable: tuple[float, str] | None = None
        self._allow_eviction = False
        self._next_policy_check = float("inf")

    def has_keys(self) -> bool:
        """Whether any key starts with this index's ``{prefix}:``."""
        pattern = re.sub(r"([*?\[\]\\])", r"\\\1", self.tag) + ":*"
        return any(True for _ in self.client.scan_iter(match=pattern, count=1000))

    def check_eviction(self, allowed: bool) -> None:
        """Refuse a server that may evict our keys to make room: an evicted table or meta
        key makes the index forget pages silently (1-bit variants of stored pages kept)."""
        self._allow_eviction = allowed
        self._next_policy_check = time.monotonic() + POLICY_RECHECK
        try:
            config = self.client.config_get("maxmemory-policy")
        except redis.RedisError as e:
            self._next_policy_check = float("inf")  # it will not be readable later either
            logger.warning(
                "Could not read the maxmemory-policy of %s (%s); make sure it is noeviction: "
                "a server that evicts keys to make room loses pages of the index silently",
                self.location,
                self.scrub(str(e)),
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

    def recheck_eviction(self) -> None:
        """The policy may be changed on a running server: read it again every
        ``POLICY_RECHECK`` seconds, and fail the checks while it evicts."""
        if self._allow_eviction or time.monotonic() < self._next_policy_check:
            return
        self._next_policy_check = time.monotonic() + POLICY_RECHECK
        with self.errors("read maxmemory-policy"):
            message = self._evicting(self.client.config_get("maxmemory-policy"))
        if message is not None:
            self._next_policy_check = 0.0  # until it is fixed
            raise IndexUnavailable(message + "; checks fail until it is noeviction again")

    def check_persistence(self) -> None:
        try:
            config = self.client.config_get("appendonly")
        except redis.RedisError as e:
            logger.debug(
                "Could not read the appendonly setting of %s (%s); make sure the server "
                "persists its data, or a restart loses the index",
                self.location,
                self.scrub(str(e)),
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

    def scrub(self, message: str) -> str:
        if self._password:
            message = message.replace(self._password, "***")
        return message

    @contextlib.contextmanager
    def errors(self, doing: str) -> Iterator[None]:
        """redis-py's errors as ours (see :meth:`translate`), failing at once for a
        moment after the server could not be reached rather than waiting for timeouts
        on every item."""
        if self._unreachable is not None:
            until, message = self._unreachable
            if time.monotonic() < until:
                raise IndexUnavailable(
                    f"{message} (next attempt in {until - time.monotonic():.1f} s)"
                )
        try:
            yield
        except self._driver_errors as e:
            raise self.translate(e, doing) from None

    def translate(self, e: BaseException, doing: str) -> SimhashIndexError:
        """redis-py's errors as ours, naming the server (never the password)."""
        if isinstance(e, redis.AuthenticationError):
            return IndexUnavailable(
                f"Redis at {self.location} refused the credentials ({doing}: "
                f"{self.scrub(str(e))}); check the user and password in SIMHASH_INDEX_URI"
            )
        if isinstance(e, redis.ConnectionError | redis.TimeoutError):
            message = (
                f"Cannot reach Redis at {self.location} ({doing}: {self.scrub(str(e))}); "
                "start the server or fix SIMHASH_INDEX_URI. The index reconnects when it is back"
            )
            # Fail at once for a moment rather than wait for timeouts on every item.
            self._unreachable = (time.monotonic() + self.reconnect_pause, message)
            return IndexUnavailable(message)
        if isinstance(e, redis.ResponseError):
            message = self.scrub(str(e))
            if "WRONGTYPE" in message:
                return IndexCorrupt(
                    f"A key of the index at {self.location} has the wrong type ({doing}: "
                    f"{message}); another program wrote under the prefix. Restore the index "
                    "from a backup or choose another prefix"
                )
            if isinstance(e, _OUT_OF_MEMORY) or "maxmemory" in message:
                return IndexUnavailable(
                    f"Redis at {self.location} is out of memory ({doing}: {message}); raise "
                    "its maxmemory, use a ttl, or use another server"
                )
            return IndexUnavailable(f"Redis at {self.location} failed ({doing}: {message})")
        return IndexUnavailable(f"Redis at {self.location} failed ({doing}: {self.scrub(str(e))})")

    def pipeline(self) -> Any:
        """A pipeline (not a transaction) to the node holding the index's slot: Redis
        Cluster's own pipelines refuse scripts, and all keys under the tag are on one
        node."""
        client = self.client
        if isinstance(client, redis.RedisCluster):
            node = client.get_node_from_key(f"{self.tag}:meta")
            client = client.get_redis_connection(node)
        return client.pipeline(transaction=False)

    def close(self) -> None:
        """Close the connections. Idempotent."""
        client, self.client = self.client, None
        if client is not None:
            with contextlib.suppress(*self._driver_errors):
                client.close()
