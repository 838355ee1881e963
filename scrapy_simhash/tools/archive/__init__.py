"""Deduplicate an archive: the crawl-time filter's decisions over a whole batch.

A record is dropped iff an **earlier kept** record (in the inputs' order: file, then
line or offset) is within the distance, exactly as the pipeline decides during a crawl;
the decisions do not depend on the partitioning or the number of workers.

* :func:`run_local`: one machine, numpy sorts (no extra dependency);
* :func:`run_dask`: any ``dask.distributed`` cluster (``pip install
  'scrapy-simhash[dask]'``);
* :func:`write_kept_records`, :func:`write_decisions`, :func:`write_clusters`: the outputs.

Modules: :mod:`.records` (inputs and orders), :mod:`.job` (fingerprints, local mode),
:mod:`.candidates` (near pairs by sorting), :mod:`.decide` (the rule, in rounds),
:mod:`.batch` (the steps in memory), :mod:`.distributed` (the steps on Dask),
:mod:`.scheduler` (reaching a Dask scheduler, bounded), :mod:`.output`, :mod:`.parquet`
(Parquet inputs and outputs, a few rows at a time), :mod:`.extras` (imported on use).
"""

from __future__ import annotations

from typing import Any

from .job import ArchiveJob, ArchiveResult, run_local
from .output import kept_pages, kept_path, write_clusters, write_decisions, write_kept_records
from .parquet import parquet_fields
from .records import input_format

__all__ = [
    "ArchiveJob",
    "ArchiveResult",
    "input_format",
    "kept_pages",
    "kept_path",
    "parquet_fields",
    "run_dask",
    "run_local",
    "write_clusters",
    "write_decisions",
    "write_kept_records",
]


def run_dask(*args: Any, **kwargs: Any) -> ArchiveResult:
    """:func:`.distributed.run_dask` (imported on use: Dask is an optional extra)."""
    try:
        from .distributed import run_dask as run
    except ImportError as e:
        from ...exceptions import ConfigurationError

        raise ConfigurationError(
            f"The dask engine needs Dask ({e.name} is not installed): "
            "pip install 'scrapy-simhash[dask]'"
        ) from None
    return run(*args, **kwargs)
