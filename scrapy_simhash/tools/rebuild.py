"""Rebuilding an index for another threshold.

An index answers "every page within distance k" because its block tables were built for k
(see :mod:`scrapy_simhash.index.blocks`); a larger k needs other tables. They are derived from the
fingerprints alone, which every index stores, so no page has to be crawled again: the
pages are copied into a new index built for the new k. The old index is only read, so an
interrupted rebuild loses nothing (run it again: pages already copied are skipped).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..exceptions import ConfigurationError, IndexNotFound
from ..index import open_index
from ..index.base import IndexParameters, NearDuplicateIndex, StoredPage

#: Pages of an existing target compared with the source before a rebuild goes on into it.
PAGES_COMPARED = 1000


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
        _refuse_unrelated_target(source, target_uri)
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


def _refuse_unrelated_target(source: NearDuplicateIndex, target_uri: str) -> None:
    """Raise unless the index at *target_uri* is absent, empty, or an earlier rebuild of
    *source*: its first :data:`PAGES_COMPARED` pages all stored in *source* with the same
    fingerprint. Another index is left as it is, rather than merged into."""
    try:
        target = open_index(target_uri, create=False, read_only=True)
    except IndexNotFound:
        return
    with target:
        for page in itertools.islice(target.pages(), PAGES_COMPARED):
            if not any(
                (p.fingerprint, p.exact) == (page.fingerprint, page.exact)
                for p in source.find(page.key)
            ):
                raise ConfigurationError(
                    f"{target.location} is not empty ({len(target)} pages) and is no "
                    f"earlier rebuild of {source.location} (its page {page.key!r} is not "
                    "stored there): it is left as it is. Give a new path or URI to --into"
                )
