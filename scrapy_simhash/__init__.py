"""scrapy-simhash: drop near-duplicate pages in Scrapy crawls.

The public API is what ``__all__`` lists, documented in ``docs/api.md``. The core
(:func:`fingerprint`, :func:`hamming_distance`, :func:`open_index`, the index classes)
needs no Scrapy; the pipeline, the middleware, the add-on and the log formatter are
imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .dedup import Analysis, Deduplicator, Verdict
from .exceptions import SimhashError
from .fingerprint import Fingerprinter, fingerprint, hamming_distance
from .index import Match, NearDuplicateIndex, open_index
from .index.base import DropRecord, IndexParameters, StoredPage
from .index.memory import MemoryIndex
from .index.sqlite import SqliteIndex

if TYPE_CHECKING:
    from .addon import Addon
    from .index.redis import RedisIndex
    from .logformatter import LogFormatter
    from .middleware import SimhashDedupMiddleware
    from .near_duplicate import NearDuplicate, Unchanged
    from .pipeline import SimhashDedupPipeline
    from .transfer import export_index, import_index

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
    "Addon": "addon",
    "LogFormatter": "logformatter",
    "NearDuplicate": "near_duplicate",
    "SimhashDedupPipeline": "pipeline",
    "SimhashDedupMiddleware": "middleware",
    "Unchanged": "near_duplicate",
}
# Needs the optional redis package (pip install 'scrapy-simhash[redis]').
_OPTIONAL = {"RedisIndex": "index.redis"}
# Need numpy, which a crawl's process does not: its thousands of module objects would only
# lengthen every full garbage collection of the crawl.
_TOOLS = {"export_index": "transfer", "import_index": "transfer"}


def __getattr__(name: str) -> Any:
    module = _ADAPTERS.get(name) or _OPTIONAL.get(name) or _TOOLS.get(name)
    if module is not None:
        import importlib

        return getattr(importlib.import_module(f".{module}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
