"""The redis package for the Redis tests: skipped without it outside CI, failing in CI."""

from __future__ import annotations

import os
from types import ModuleType

import pytest


def import_redis() -> ModuleType:
    """``redis``, or skip the calling test module (at its top level) when it is missing;
    in CI (``CI`` set) a missing package is an error, not a skip."""
    try:
        import redis
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip(
            "needs the redis package: pip install 'scrapy-simhash[redis]'",
            allow_module_level=True,
        )
    return redis


#: The stored backends, for ``pytest.mark.parametrize`` or a fixture's ``params``: asked
#: for at run time, so not seen by conftest.py, the Redis ones carry their markers here.
STORED_BACKENDS = [
    "sqlite",
    pytest.param("redis", marks=pytest.mark.redis),
    pytest.param(
        "redis-spread",
        marks=[pytest.mark.redis, pytest.mark.cluster, pytest.mark.slow],
    ),
]
