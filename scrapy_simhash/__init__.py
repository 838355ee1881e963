"""scrapy-simhash: drop near-duplicate pages in Scrapy crawls.

The core (:func:`fingerprint`, :func:`hamming_distance`, :func:`open_index`) needs no
Scrapy; the pipeline, the add-on and the log formatter are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .dedup import Analysis, Deduplicator, Verdict
from .exceptions import SimhashError
from .fingerprint import Fingerprinter, fingerprint, hamming_distance
from .index import Match, NearDuplicateIndex, open_index
from .index.base import DropRecord, StoredPage
from .transfer import export_index, import_index

if TYPE_CHECKING:
    from .addon import Addon
    from .logformatter import LogFormatter
    from .middleware import SimhashDedupMiddleware
    from .pipeline import NearDuplicate, SimhashDedupPipeline, Unchanged

__version__ = "0.1.0"

__all__ = [
    "Addon",
    "Analysis",
    "Deduplicator",
    "DropRecord",
    "Fingerprinter",
    "LogFormatter",
    "Match",
    "NearDuplicate",
    "NearDuplicateIndex",
    "SimhashDedupMiddleware",
    "SimhashDedupPipeline",
    "SimhashError",
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
    "NearDuplicate": "pipeline",
    "SimhashDedupPipeline": "pipeline",
    "SimhashDedupMiddleware": "middleware",
    "Unchanged": "pipeline",
}


def __getattr__(name: str) -> Any:
    if name in _ADAPTERS:
        import importlib

        return getattr(importlib.import_module(f".{_ADAPTERS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
