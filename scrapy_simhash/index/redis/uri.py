"""Redis index URIs: ``redis://[user:password@]host:port/db?option=value``, turned into a
client and the index's options; credentials are never shown (see :func:`~.uri.redact`)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, unquote

import redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from ...durations import duration
from ...exceptions import UnsupportedIndexURI
from ..uri import redact, split, timeout, uri_options
from .layout import DEFAULT_PREFIX


def boolean(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(value)


def check_credentials(uri: str) -> None:
    """Refuse credentials that would be misread (and shown) as a path or options."""
    if "@" in uri.partition("://")[2] and "@" not in split(uri).netloc:
        raise UnsupportedIndexURI(
            f"The user or password in the index URI {redact(uri)} holds '/', '?' or '#': "
            "write them as %2F, %3F and %23 (and '@' as %40), as in "
            "redis://:pa%2Fss@localhost:6379/0"
        )
    names = {name.lower() for name, _ in parse_qsl(split(uri).query)}
    if names & {"password", "username", "user"}:
        raise UnsupportedIndexURI(
            f"Credentials go before the host in the index URI, not in its options "
            f"({redact(uri)}): redis://user:password@host:6379/0 (or redis://:password@...)"
        )


def describe(client, prefix: str) -> str:
    """``redis://host:port/db?prefix=...`` for a client (without user or password)."""
    pool = getattr(client, "connection_pool", None)
    kwargs = getattr(pool, "connection_kwargs", {})
    where = f"{kwargs.get('host', '?')}:{kwargs.get('port', '?')}/{kwargs.get('db', 0)}"
    return f"redis://{where}?prefix={prefix}"


#: The options a Redis index URI may hold, and how each is read.
_OPTIONS = {
    "prefix": str,
    "ttl": duration,
    "bucket_bits": int,
    "cluster": boolean,
    "timeout": timeout,
    "ssl_cert_reqs": str,
    "ssl_ca_certs": str,
    "ssl_certfile": str,
    "ssl_keyfile": str,
    "allow_eviction": boolean,
    "spread": boolean,
    "lease": duration,
    "replicas": int,
}


def client_from_uri(uri: str) -> tuple[redis.Redis, dict[str, Any]]:
    """A client for ``redis://[user:password@]host:6379/0?prefix=myproject&ttl=30d`` (or
    ``rediss://`` for TLS; ``&cluster=true`` for Redis Cluster), and the index's options
    in the URI (prefix, location, bucket_bits, ttl, password, allow_eviction)."""
    check_credentials(uri)
    options = uri_options(uri, _OPTIONS)
    parts = split(uri)
    db = _database(parts.path, uri)
    cluster = bool(options.pop("cluster", False))
    spread = {
        name: options.pop(name) for name in ("spread", "lease", "replicas") if name in options
    }
    if spread and not (cluster and spread.get("spread")):
        raise UnsupportedIndexURI(
            f"Options {', '.join(sorted(spread))} in {redact(uri)} are for an index spread over "
            "a Redis Cluster: use them with cluster=true&spread=true"
        )
    if cluster and db != 0:
        raise UnsupportedIndexURI(f"Redis Cluster has only database 0, not {db} ({redact(uri)})")
    wait = float(options.pop("timeout", 5.0))
    password = unquote(parts.password) if parts.password is not None else None
    prefix = str(options.pop("prefix", DEFAULT_PREFIX))
    ttl = options.pop("ttl", None)
    where = f"{parts.hostname or 'localhost'}:{parts.port or 6379}/{db}"
    index_options: dict[str, Any] = dict(
        prefix=prefix,
        location=f"{parts.scheme.lower()}://{where}?prefix={prefix}",
        bucket_bits=options.pop("bucket_bits", None),
        password=password,
        allow_eviction=bool(options.pop("allow_eviction", False)),
    )
    kwargs = _connection(parts, password, wait, options, uri)
    if not cluster:
        return redis.Redis(db=db, **kwargs), {**index_options, "ttl": ttl}
    index_options["location"] += "&cluster=true"
    client = redis.RedisCluster(**kwargs)
    if not spread.pop("spread", False):
        return client, {**index_options, "ttl": ttl}
    index_options["location"] += "&spread=true"
    if ttl is not None:
        raise UnsupportedIndexURI(
            f"ttl is not supported on a spread index ({redact(uri)}); remove old "
            "pages with: scrapy-simhash expire --older-than ..."
        )
    return client, {**index_options, "spread": dict(spread, client_kwargs=kwargs)}


def _database(path: str, uri: str) -> int:
    """The database number of the URI's *path* (``/0``; none is 0)."""
    db_text = path.strip("/") or "0"
    if not db_text.isdigit():
        raise UnsupportedIndexURI(
            f"Redis database {db_text!r} in {redact(uri)} must be a number, "
            "as in redis://localhost:6379/0"
        )
    return int(db_text)


def _connection(
    parts: Any, password: str | None, wait: float, options: dict[str, Any], uri: str
) -> dict[str, Any]:
    """The keyword arguments of a client (``redis.Redis`` or ``redis.RedisCluster``) for
    the URI split in *parts*: *options* are what is left of its options, TLS ones only."""
    scheme = parts.scheme.lower()
    kwargs: dict[str, Any] = dict(
        host=parts.hostname or "localhost",
        port=parts.port or 6379,
        username=unquote(parts.username) if parts.username else None,
        password=password,
        socket_timeout=wait,
        socket_connect_timeout=wait,
        decode_responses=True,
        # Connection errors and timeouts are retried with a short backoff; a retried
        # check recognises its own insert (see RedisIndex.check_and_add).
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
    return kwargs
