"""scrapy-simhash: drop near-duplicate pages in Scrapy crawls.

The public API is what ``__all__`` lists, documented in ``docs/api.md``. The core
(:func:`fingerprint`, :func:`hamming_distance`, :func:`open_index`, the index classes)
needs no Scrapy; the pipeline, the middleware, the add-on and the log formatter are
imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .analysis.fingerprint import Fingerprinter, fingerprint, hamming_distance
from .dedup import Analysis, Deduplicator, Verdict
from .exceptions import SimhashError
from .index import Match, NearDuplicateIndex, open_index
from .index.base import DropRecord, IndexParameters, StoredPage
from .index.memory import MemoryIndex
from .index.sqlite import SqliteIndex

if TYPE_CHECKING:
    from .crawl.addon import Addon
    from .crawl.logformatter import LogFormatter
    from .crawl.middleware import SimhashDedupMiddleware
    from .crawl.near_duplicate import NearDuplicate, Unchanged
    from .crawl.pipeline import SimhashDedupPipeline
    from .index.redis import RedisIndex
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

# Scrapy adapters, imported lazily so that scripts using only the core do not import Scrapy.
_ADAPTERS = {
    "Addon": "crawl.addon",
    "LogFormatter": "crawl.logformatter",
    "NearDuplicate": "crawl.near_duplicate",
    "SimhashDedupPipeline": "crawl.pipeline",
    "SimhashDedupMiddleware": "crawl.middleware",
    "Unchanged": "crawl.near_duplicate",
}
# Needs the optional redis package (pip install 'scrapy-simhash[redis]').
_OPTIONAL = {"RedisIndex": "index.redis"}
# Need numpy, which a crawl's process does not: its thousands of module objects would only
# lengthen every full garbage collection of the crawl.
_TOOLS = {"export_index": "tools.transfer", "import_index": "tools.transfer"}


def __getattr__(name: str) -> Any:
    module = _ADAPTERS.get(name) or _OPTIONAL.get(name) or _TOOLS.get(name)
    if module is not None:
        import importlib

        return getattr(importlib.import_module(f".{module}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
