"""The optional extras of the archive job (``[warc]``, ``[parquet]``), imported on use."""

from __future__ import annotations

import importlib

from ...exceptions import FeedError


def optional(module: str, extra: str):
    """Import *module* of the optional *extra*, or say what to install."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise FeedError(
            f"Reading and writing this format needs {module.split('.')[0]}: "
            f"pip install 'scrapy-simhash[{extra}]'"
        ) from None


__all__ = ["optional"]
