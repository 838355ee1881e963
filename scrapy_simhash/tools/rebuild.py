"""Rebuilding an index for another threshold.

An index answers "every page within distance k" because its block tables were built for k
(see :mod:`scrapy_simhash.index.blocks`); a larger k needs other tables. They are derived from the
fingerprints alone, which every index stores, so no page has to be crawled again: the
pages are copied into a new index built for the new k. The old index is only read, so an
interrupted rebuild loses nothing (run it again: pages already copied are skipped).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..exceptions import ConfigurationError
from ..index import open_index
from ..index.base import IndexParameters, StoredPage


@dataclass(frozen=True)
class RebuildResult:
    source: str
    target: str
    parameters: IndexParameters
    #: Pages copied now; pages that an earlier, interrupted run had copied are not counted.
    copied: int
    #: Pages in the new index when done.
    pages: int


def rebuild_index(
    source_uri: str,
    target_uri: str,
    *,
    max_distance: int,
    blocks: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> RebuildResult:
    """Copy every page of the index at *source_uri* into a new index at *target_uri* built
    for *max_distance* (and *blocks*, by default ``max_distance + 2``), with the same
    features. *progress* is called with the number of pages read so far, every 1,000 pages
    and once at the end.

    The target must not exist yet, or be an earlier rebuild of the same source with the
    same parameters (an interrupted run, which this one completes).
    """
    if source_uri == target_uri:
        raise ConfigurationError(
            "rebuild writes a new index: give another URI for it, then point "
            "SIMHASH_INDEX_URI at it once it is built"
        )
    with open_index(source_uri, create=False, read_only=True) as source:
        features = source.parameters.features
        with open_index(
            target_uri, max_distance=max_distance, blocks=blocks, features=features
        ) as target:
            copied = target.add_pages(_counted(source.pages(), progress))
            return RebuildResult(
                source.location, target.location, target.parameters, copied, len(target)
            )


def _counted(
    pages: Iterator[StoredPage], progress: Callable[[int], None] | None
) -> Iterator[StoredPage]:
    if progress is None:
        yield from pages
        return
    count = 0
    for count, page in enumerate(pages, 1):
        yield page
        if count % 1000 == 0:
            progress(count)
    progress(count)
