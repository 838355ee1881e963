"""What a job writes: the kept records in each input's format, and the decisions table."""

from __future__ import annotations

import csv
import json
import os
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...exceptions import FeedError
from ...index.base import DropRecord, StoredPage
from ..clusters import CLUSTER_COLUMNS, cluster_rows, clusters_of, write_rows
from ..feeds import spreadsheet_safe
from .batch import EMPTY, NO_MATCH, SHORT, STATUSES
from .decide import EVIDENCE_NAMES
from .job import ArchiveResult
from .records import POSITION_BITS

#: The columns of the decisions table.
DECISION_COLUMNS = (
    "record",
    "key",
    "decision",
    "status",
    "matched_record",
    "matched_key",
    "distance",
    "evidence",
)


def kept_path(path: str | os.PathLike[str]) -> Path:
    """``a.jl`` -> ``a.kept.jl``; ``a.warc.gz`` -> ``a.kept.warc.gz``."""
    path = Path(path)
    name = path.name
    for suffix in (".warc.gz", ".wet.gz"):
        if name.lower().endswith(suffix):
            return path.with_name(name[: -len(suffix)] + ".kept" + name[-len(suffix) :])
    return path.with_name(f"{path.stem}.kept{path.suffix}")


def decision_rows(result: ArchiveResult, keys: dict[int, str]) -> Iterator[dict[str, Any]]:
    """One row per record, in order (*keys*: order -> key of every record)."""
    o = result.outcomes
    for order, kept, status, matched, matched_key, distance, evidence in zip(
        o.order.tolist(),
        o.kept.tolist(),
        o.status.tolist(),
        o.matched.tolist(),
        o.matched_key.tolist(),
        o.distance.tolist(),
        o.evidence.tolist(),
        strict=True,
    ):
        found = matched != NO_MATCH
        yield {
            "record": result.label(order),
            "key": keys.get(order, ""),
            "decision": "kept" if kept else "dropped",
            "status": STATUSES[status],
            "matched_record": result.label(matched) if found else "",
            "matched_key": matched_key if found else "",
            "distance": distance if found else "",
            "evidence": EVIDENCE_NAMES[evidence] if found else "",
        }


def write_decisions(result: ArchiveResult, path: str | os.PathLike[str]) -> int:
    """Write the decisions table to *path* (``.csv``, ``.jl``/``.jsonl`` or
    ``.parquet``); return how many rows."""
    keys = dict(zip(result.outcomes.order.tolist(), result.outcomes.key.tolist(), strict=True))
    rows = decision_rows(result, keys)
    suffix = Path(path).suffix.lower()
    written = 0
    try:
        if suffix == ".parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pa.Table.from_pylist(
                [{**r, "distance": None if r["distance"] == "" else r["distance"]} for r in rows]
            )
            pq.write_table(table, path)
            return table.num_rows
        with open(path, "w", encoding="utf-8", errors="backslashreplace", newline="") as f:
            if suffix in (".jl", ".jsonl"):
                for row in rows:
                    f.write(json.dumps(row, ensure_ascii=False) + "\n")
                    written += 1
            elif suffix == ".csv":
                writer = csv.DictWriter(f, fieldnames=DECISION_COLUMNS)
                writer.writeheader()
                for row in rows:
                    writer.writerow({k: spreadsheet_safe(v) for k, v in row.items()})
                    written += 1
            else:
                raise FeedError(f"{path}: write the decisions as .csv, .jl or .parquet")
    except OSError as e:
        raise FeedError(f"Cannot write {os.fspath(path)}: {e.strerror}") from None
    return written


def write_clusters(result: ArchiveResult, path: str | os.PathLike[str]) -> int:
    """Write one row per record to *path*, with the columns of ``scrapy-simhash report
    --clusters`` (:data:`~scrapy_simhash.tools.clusters.CLUSTER_COLUMNS`): each dropped
    record in the cluster of the page it matched; each kept record (and one unchanged since
    it was stored) a cluster of its own unless copies matched it. The share is not kept by
    the job: empty."""
    o = result.outcomes
    drops: list[DropRecord] = []
    kept: list[str] = []
    for order, key, is_kept, status, matched, matched_key, distance, evidence in zip(
        o.order.tolist(),
        o.key.tolist(),
        o.kept.tolist(),
        o.status.tolist(),
        o.matched.tolist(),
        o.matched_key.tolist(),
        o.distance.tolist(),
        o.evidence.tolist(),
        strict=True,
    ):
        key = key or result.label(order)
        if is_kept or matched == NO_MATCH or STATUSES[status] == "unchanged":
            kept.append(key)
            continue
        how = EVIDENCE_NAMES[evidence]
        drops.append(
            DropRecord(
                key, matched_key, distance, how == "exact", 0.0, shared=int(how == "contained")
            )
        )
    return write_rows(path, cluster_rows(clusters_of(drops), kept), CLUSTER_COLUMNS)


def write_kept_records(
    result: ArchiveResult,
    outputs: dict[int, str],
    *,
    raw_csv: bool = False,
    text_fields: tuple[str, ...] = (),
) -> dict[int, int]:
    """Write the kept records of each input (file index -> output path) in the input's
    format (a Parquet file's *text_fields* without statistics); return how many were
    written per input."""
    from .records import write_kept

    kept = result.outcomes.order[result.outcomes.kept]
    positions: dict[int, set[int]] = defaultdict(set)
    for order in kept.tolist():
        positions[order >> POSITION_BITS].add(order & ((1 << POSITION_BITS) - 1))
    files = {p.file_index: p for p in result.parts}
    return {
        i: write_kept(
            files[i].path, files[i].fmt, positions[i], out, raw_csv=raw_csv, text_fields=text_fields
        )
        for i, out in outputs.items()
    }


def kept_pages(result: ArchiveResult, added_at: float) -> list[StoredPage]:
    """The kept records with text, as pages to add to an index."""
    o = result.outcomes
    keep = o.kept & (o.kind != EMPTY)
    texts = o.text[keep].tolist() if o.text is not None else [None] * int(keep.sum())
    return [
        StoredPage(
            key,
            int(value),
            added_at,
            exact=bool(kind == SHORT),
            anchors=text.anchors.stored() if text and text.anchors else None,
            sketch=text.sketch.stored() if text and text.sketch else None,
        )
        for key, value, kind, text in zip(
            o.key[keep].tolist(), o.value[keep].tolist(), o.kind[keep].tolist(), texts, strict=True
        )
    ]


__all__ = ["kept_pages", "kept_path", "write_decisions", "write_kept_records"]
