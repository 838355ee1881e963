"""scrapy-simhash: drop near-duplicate pages in Scrapy crawls.

The public API is what ``__all__`` lists, documented in ``docs/api.md``. Each name is
imported on first use: the core (:func:`fingerprint`, :func:`hamming_distance`,
:func:`open_index`, the index classes) needs no Scrapy, and importing one layer (say
``scrapy_simhash.index``) does not import the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .analysis.fingerprint import Fingerprinter, fingerprint, hamming_distance
    from .crawl.addon import Addon
    from .crawl.logformatter import LogFormatter
    from .crawl.middleware import SimhashDedupMiddleware
    from .crawl.near_duplicate import NearDuplicate, Unchanged
    from .crawl.pipeline import SimhashDedupPipeline
    from .dedup import Analysis, Deduplicator, Verdict
    from .exceptions import SimhashError
    from .index import Match, NearDuplicateIndex, open_index
    from .index.memory import MemoryIndex
    from .index.parameters import IndexParameters
    from .index.redis import RedisIndex
    from .index.sqlite import SqliteIndex
    from .index.stored import DropRecord, StoredPage
    from .tools.transfer import export_index, import_index

__version__ = "0.1.0"

__all__ = [
    "Addon",
    "Analysis",
    "Deduplicator",
    "DropRecord",
    "Fingerprinter",
    "IndexParameters",
    "LogFormatter",
    "Match",
    "MemoryIndex",
    "NearDuplicate",
    "NearDuplicateIndex",
    "RedisIndex",
    "SimhashDedupMiddleware",
    "SimhashDedupPipeline",
    "SimhashError",
    "SqliteIndex",
    "StoredPage",
    "Unchanged",
    "Verdict",
    "export_index",
    "fingerprint",
    "hamming_distance",
    "import_index",
    "open_index",
]

#: Name -> the module that defines it. Every name is imported on first use, so that
#: ``import scrapy_simhash.index.blocks`` (or a worker process) loads only what it needs:
#: the Scrapy components need Scrapy; RedisIndex the optional redis package
#: (pip install 'scrapy-simhash[redis]'); export_index and import_index numpy, which a
#: crawl's process does not need (its thousands of objects would only lengthen every full
#: garbage collection of the crawl).
_MODULES = {
    "Addon": "crawl.addon",
    "Analysis": "dedup",
    "Deduplicator": "dedup",
    "DropRecord": "index.stored",
    "Fingerprinter": "analysis.fingerprint",
    "IndexParameters": "index.parameters",
    "LogFormatter": "crawl.logformatter",
    "Match": "index.outcome",
    "MemoryIndex": "index.memory",
    "NearDuplicate": "crawl.near_duplicate",
    "NearDuplicateIndex": "index.base",
    "RedisIndex": "index.redis",
    "SimhashDedupMiddleware": "crawl.middleware",
    "SimhashDedupPipeline": "crawl.pipeline",
    "SimhashError": "exceptions",
    "SqliteIndex": "index.sqlite",
    "StoredPage": "index.stored",
    "Unchanged": "crawl.near_duplicate",
    "Verdict": "dedup",
    "export_index": "tools.transfer",
    "fingerprint": "analysis.fingerprint",
    "hamming_distance": "analysis.fingerprint",
    "import_index": "tools.transfer",
    "open_index": "index",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
