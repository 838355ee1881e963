"""Near-duplicate indexes and :func:`open_index`, which picks a backend by URI scheme.

=================================  ==============================================
URI                                backend
=================================  ==============================================
``sqlite:///relative/path.db``     :class:`~scrapy_simhash.index.sqlite.SqliteIndex`
``sqlite:////absolute/path.db``    (three slashes, then the path as given)
``/path/to/file.db``, ``x.db``     a plain path also means SQLite
``memory:``                        :class:`~scrapy_simhash.index.memory.MemoryIndex`
``redis://host:6379/0?prefix=p``   :class:`~scrapy_simhash.index.redis.RedisIndex`
``rediss://...`` (TLS)             (needs ``pip install 'scrapy-simhash[redis]'``)
``redis://...?cluster=true``       one index in one slot of a Redis Cluster
``...&cluster=true&spread=true``   one index spread over every master of the cluster:
                                   :class:`~scrapy_simhash.index.redis.spread.RedisSpreadIndex`
=================================  ==============================================

Backend options go in the query string, e.g.
``sqlite:///crawl.db?synchronous=FULL&timeout=60``.
"""

from __future__ import annotations

import importlib

from ..exceptions import UnsupportedIndexURI
from .base import IndexParameters, Match, NearDuplicateIndex, Outcome, Status
from .uri import redact, split

__all__ = [
    "INDEX_SCHEMES",
    "IndexParameters",
    "Match",
    "NearDuplicateIndex",
    "Outcome",
    "Status",
    "open_index",
]

#: Scheme -> "module:Class"; the class's ``from_uri(uri, **parameters)`` opens the index.
#: Imported lazily, so that an optional backend's dependency is only needed when used.
INDEX_SCHEMES: dict[str, str] = {
    "sqlite": "scrapy_simhash.index.sqlite:SqliteIndex",
    "memory": "scrapy_simhash.index.memory:MemoryIndex",
    "redis": "scrapy_simhash.index.redis:RedisIndex",
    "rediss": "scrapy_simhash.index.redis:RedisIndex",
}

#: Scheme -> the package extra that installs its dependency, where the names differ.
_EXTRAS = {"rediss": "redis"}


def open_index(
    uri: str,
    *,
    max_distance: int | None = None,
    blocks: int | None = None,
    features: str | None = None,
    create: bool = True,
    read_only: bool = False,
    upgrade: bool = False,
) -> NearDuplicateIndex:
    """Open (or create) the index at *uri*.

    *create* false: an index that does not exist raises
    :class:`~scrapy_simhash.exceptions.IndexNotFound`. *read_only*: nothing is written
    (never creates; for commands that only read, also on a read-only file system).

    ``None`` for a parameter means "what the index was built with" when it exists, and the
    default when it is created (``max_distance=3``, ``blocks=max_distance + 2``, the default
    fingerprinter's features). A parameter that differs from the stored one raises
    :class:`~scrapy_simhash.exceptions.IndexParameterMismatch` showing both values.
    *upgrade*: an index written before paragraph anchors, text sketches or sightings is
    upgraded (else refused).
    """
    return _backend_for(uri).from_uri(
        uri,
        max_distance=max_distance,
        blocks=blocks,
        features=features,
        create=create,
        read_only=read_only,
        **({"upgrade": True} if upgrade else {}),
    )


def _backend_for(uri: str) -> type:
    if not isinstance(uri, str) or not uri:
        raise UnsupportedIndexURI(f"An index URI must be a non-empty string, not {uri!r}")
    scheme = split(uri).scheme.lower() if "://" in uri or uri.startswith("memory:") else ""
    if len(scheme) == 1:  # a Windows drive letter, not a scheme
        scheme = ""
    scheme = scheme or "sqlite"
    target = INDEX_SCHEMES.get(scheme)
    if target is None:
        raise UnsupportedIndexURI(
            f"No index backend for the scheme {scheme!r} in {redact(uri)}; "
            f"use one of: {', '.join(sorted(INDEX_SCHEMES))}"
        )
    module_name, _, name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise UnsupportedIndexURI(
            f"The {scheme!r} index backend needs a package that is not installed ({e.name}); "
            f"install it with: pip install 'scrapy-simhash[{_EXTRAS.get(scheme, scheme)}]'"
        ) from None
    return getattr(module, name)
