"""The index's clusters: each kept page with the pages dropped as its copies, and why.

Built from the audit log (``index.drops()``) and the stored pages (``index.pages()``),
streamed: only the drops are held in memory, never every stored page. ``scrapy-simhash
report`` shows the largest clusters; ``--clusters FILE`` writes one row per page.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..exceptions import FeedError
from ..index.base import DropRecord, NearDuplicateIndex
from .feeds import spreadsheet_safe

__all__ = [
    "CLUSTER_COLUMNS",
    "Cluster",
    "cluster_rows",
    "clusters_of",
    "index_rows",
    "reason_of",
    "why",
    "write_rows",
]

#: The columns of ``--clusters``: one row per page.
CLUSTER_COLUMNS = ("cluster", "key", "kept", "reason", "distance", "share")


@dataclass
class Cluster:
    """A kept page and the pages dropped as its copies, nearest first."""

    id: int
    kept: str
    copies: list[DropRecord] = field(default_factory=list)

    @property
    def size(self) -> int:
        return 1 + len(self.copies)


def reason_of(drop: DropRecord) -> str:
    """``exact`` (the same text), ``contained`` (its long paragraphs are in the kept page)
    or ``distance`` (its fingerprint within the threshold of the kept page's)."""
    if drop.exact:
        return "exact"
    return "contained" if drop.shared else "distance"


def why(drop: DropRecord, max_distance: int) -> str:
    """Why *drop* was dropped, in one sentence."""
    reason = reason_of(drop)
    if reason == "exact":
        said = "the same text as the kept page (equal digests)"
    elif reason == "contained":
        said = (
            f"contained in the kept page: {drop.shared} long paragraphs shared "
            f"(fingerprints {drop.distance} bits apart)"
        )
    else:
        said = f"fingerprint {drop.distance} bits from the kept page's (threshold {max_distance})"
    if drop.share is not None:
        said += f"; {drop.share:.0%} of its text is in the kept page"
    return said


def clusters_of(drops: Iterable[DropRecord]) -> list[Cluster]:
    """The clusters with at least one copy, largest first (ties by the kept page's key),
    numbered from 1. A page dropped more than once (on several crawls) counts once, by
    its latest drop; re-visits of unchanged pages are no copies."""
    latest: dict[str, DropRecord] = {}
    for drop in drops:
        if not drop.is_revisit:
            latest[drop.key] = drop
    by_kept: dict[str, list[DropRecord]] = {}
    for drop in latest.values():
        by_kept.setdefault(drop.kept_key, []).append(drop)
    order = sorted(by_kept.items(), key=lambda item: (-len(item[1]), item[0]))
    return [
        Cluster(n, kept, sorted(copies, key=lambda d: (d.distance, d.key)))
        for n, (kept, copies) in enumerate(order, start=1)
    ]


def cluster_rows(clusters: list[Cluster], kept_keys: Iterable[str]) -> Iterator[dict[str, Any]]:
    """One row per page (see :data:`CLUSTER_COLUMNS`): the clusters' pages, then each
    other kept page (of *kept_keys*: an index's stored pages, streamed) as a cluster of
    its own, numbered on."""
    seen: set[str] = set()
    for cluster in clusters:
        seen.add(cluster.kept)
        yield _row(cluster.id, cluster.kept, cluster.kept, "kept", None, None)
        for drop in cluster.copies:
            seen.add(drop.key)
            reason = reason_of(drop)
            yield _row(cluster.id, drop.key, cluster.kept, reason, drop.distance, drop.share)
    number = len(clusters)
    for key in kept_keys:
        if key not in seen:
            seen.add(key)
            number += 1
            yield _row(number, key, key, "kept", None, None)


def index_rows(index: NearDuplicateIndex) -> Iterator[dict[str, Any]]:
    """:func:`cluster_rows` of an index: its drops' clusters, then its other pages."""
    return cluster_rows(clusters_of(index.drops()), (page.key for page in index.pages()))


def _row(cluster: int, key: str, kept: str, reason: str, distance, share) -> dict[str, Any]:
    share = None if share is None else round(share, 4)
    return dict(zip(CLUSTER_COLUMNS, (cluster, key, kept, reason, distance, share), strict=True))


def write_rows(path: str | os.PathLike[str], rows: Iterable[dict[str, Any]], columns) -> int:
    """Write *rows* to *path* as ``.csv``, ``.jl``/``.jsonl`` or ``.parquet`` (a missing
    value: empty in CSV, null in the others); return how many rows were written."""
    suffix = Path(path).suffix.lower()
    if suffix not in (".csv", ".jl", ".jsonl", ".parquet"):
        raise FeedError(f"{os.fspath(path)}: write the table as .csv, .jl or .parquet")
    try:
        if suffix == ".parquet":
            return _write_parquet(path, rows, columns)
        written = 0
        with open(path, "w", encoding="utf-8", errors="backslashreplace", newline="") as f:
            if suffix == ".csv":
                writer = csv.DictWriter(f, fieldnames=list(columns))
                writer.writeheader()
                for row in rows:
                    writer.writerow(
                        {k: "" if v is None else spreadsheet_safe(v) for k, v in row.items()}
                    )
                    written += 1
            else:
                for row in rows:
                    f.write(json.dumps(row, ensure_ascii=False) + "\n")
                    written += 1
        return written
    except OSError as e:
        raise FeedError(f"Cannot write {os.fspath(path)}: {e.strerror}") from None


def _write_parquet(path, rows: Iterable[dict[str, Any]], columns, batch: int = 100_000) -> int:
    from .archive.extras import optional

    pa = optional("pyarrow", "parquet")
    pq = optional("pyarrow.parquet", "parquet")
    written, writer, chunk = 0, None, []
    rows = iter(rows)
    try:
        while True:
            chunk = [row for _, row in zip(range(batch), rows, strict=False)]
            if not chunk and writer is not None:
                break
            table = pa.Table.from_pylist(chunk, schema=_schema(pa, columns, chunk))
            if writer is None:
                writer = pq.ParquetWriter(os.fspath(path), table.schema)
            writer.write_table(table)
            written += len(chunk)
            if len(chunk) < batch:
                break
    finally:
        if writer is not None:
            writer.close()
    return written


def _schema(pa, columns, chunk):
    if tuple(columns) != CLUSTER_COLUMNS:
        return pa.Table.from_pylist(chunk).schema if chunk else None
    return pa.schema(
        [
            ("cluster", pa.int64()),
            ("key", pa.string()),
            ("kept", pa.string()),
            ("reason", pa.string()),
            ("distance", pa.int64()),
            ("share", pa.float64()),
        ]
    )
