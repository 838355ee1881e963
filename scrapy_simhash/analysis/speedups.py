"""The optional C accelerator, ``scrapy_simhash._speedups``: built on installation where a
C compiler is present, and used unless ``SCRAPY_SIMHASH_PURE_PYTHON`` is set. Each of its
functions has a pure-Python twin next to the code that calls it, with the same results.
"""

from __future__ import annotations

import os
from typing import Any


def compiled(name: str) -> Any:
    """The accelerator's function *name*, or ``None`` where the pure-Python path is to run
    (not built, or ``SCRAPY_SIMHASH_PURE_PYTHON`` set)."""
    if os.environ.get("SCRAPY_SIMHASH_PURE_PYTHON"):
        return None
    try:
        from .. import _speedups
    except ImportError:
        return None
    return getattr(_speedups, name)


def accelerated() -> bool:
    """Whether the analysis runs on the C accelerator (else on the pure-Python twins)."""
    return compiled("combine") is not None
