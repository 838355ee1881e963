"""What a job is asked to do, the fingerprints of one partition, and the local mode.

:class:`ArchiveJob` holds plain values (picklable: it travels to every worker of a cluster).
:func:`fingerprint_part` reads one partition and analyses each record exactly as the
pipeline analyses an item's fields. :func:`run_local` is the whole job on one machine; it
reads the records in order, and so learns each site's template as a crawl of them would
(``SIMHASH_SITE_TEMPLATES``, see :mod:`scrapy_simhash.template`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...dedup import Analysis, AnalysisParams, analyse_fields
from ...exceptions import FeedError
from ...extract.fields import item_key
from ...index.base import StoredPage, storable_key
from ...sketch import DEFAULT_MIN_SHARE
from .batch import KIND_CODES, Batch, Outcomes, decide_batch
from .candidates import choose_plan
from .records import Part, plan_parts, read_part, record_order
from .templates import Learner, Learning, Sites, learners_of, learnt, read_record
from .texts import text_of

#: Called with a stage's name and what it found, as each stage ends.
Progress = Callable[[str, str], None]


@dataclass
class StageLog:
    """The stages of a job as they end, one line each (name, detail and its time), also
    handed to *progress*: what both engines report."""

    progress: Progress | None = None
    lines: list[tuple[str, str]] = field(default_factory=list)

    def __call__(self, name: str, detail: str, started: float) -> None:
        line = (name, f"{detail} ({time.perf_counter() - started:.1f} s)")
        self.lines.append(line)
        if self.progress:
            self.progress(*line)


@dataclass(frozen=True)
class ArchiveJob:
    """How records are read and fingerprinted, and the distance: the values of the
    pipeline's settings (``SimhashSettings.analysis_params``, ``text_fields``,
    ``key_field``, ``max_distance``, ``min_share``). *blocks*: the block plan to compare
    with (``None``: the job chooses by the number of records, see
    :func:`~.candidates.choose_plan`)."""

    analysis: AnalysisParams
    text_fields: tuple[str, ...]
    key_field: str
    max_distance: int = 3
    blocks: int | None = None
    #: The share check (``SIMHASH_MIN_SHARE``; 0: off).
    min_share: float = DEFAULT_MIN_SHARE


@dataclass
class ArchiveResult:
    """The decisions of a job and how it went (one line per stage in *stages*)."""

    parts: list[Part]
    outcomes: Outcomes
    stages: list[tuple[str, str]] = field(default_factory=list)

    def label(self, order: int) -> str:
        """The record *order* as ``file@offset`` or ``file:row``; a page of the index
        as ``index``."""
        if order < 0:
            return "index"
        file_index, position = divmod(order, 1 << 40)
        part = next(p for p in self.parts if p.file_index == file_index)
        return part.label(position)

    def summary(self) -> dict[str, int]:
        o = self.outcomes
        return {
            "records": len(o.order),
            "kept": int(o.kept.sum()),
            "dropped": int((~o.kept).sum()),
            "no_text": int((o.kind == 0).sum()),
        }


def fingerprint_part(part: Part, job: ArchiveJob, sites: Sites | None = None) -> Batch:
    """Read and fingerprint the records of *part*: the text of the item fields, analysed
    as the pipeline analyses them (same extractor, same short-text path). With *sites*
    (``SIMHASH_SITE_TEMPLATES``), each record is read with its site's template, as the
    crawl's check reads a page (see :mod:`.templates`)."""
    positions, kinds, values, keys, texts = [], [], [], [], []
    first = record_order(part.file_index, 0)
    for position, key, analysis in analysed_records(part, job):
        if sites is not None:
            analysis = read_record(analysis, key, first + position, sites, job.analysis)
        positions.append(position)
        kinds.append(KIND_CODES[analysis.kind])
        values.append(analysis.value)
        texts.append(text_of(analysis))
        keys.append(key)
    orders = np.asarray(positions, dtype=np.int64) + first
    return Batch.of(orders, kinds, values, keys, texts)


def analysed_records(
    part: Part, job: ArchiveJob, skip: Callable[[str], bool] | None = None
) -> Iterator[tuple[int, str, Analysis]]:
    """``(position, key, analysis)`` of each record of *part*, in order; with *skip*, the
    records whose key it says to skip are left out, unanalysed."""
    fields = job.text_fields[:1] if part.fmt == "warc" else job.text_fields
    where = Path(part.path).name
    params, key_field = job.analysis, job.key_field
    for position, item in read_part(part, key_field=key_field, text_fields=fields):
        if not isinstance(item, dict):
            raise FeedError(f"{part.label(position)} is a {type(item).__name__}, not an object")
        key = item.get(key_field)
        if not (isinstance(key, str) and key and key.isascii()):
            key = storable_key(item_key(key, position, key_field, where))
        if skip is None or not skip(key):
            yield position, key, analyse_fields(params, [item.get(name) for name in fields])


def part_learners(part: Part, job: ArchiveJob) -> dict[str, list[Learner]]:
    """The records of *part* that teach their site's template first (see
    :func:`.templates.learners_of`). Only the records that may be one are analysed: not
    those of no site, nor those of a site whose first learners are found."""
    first = record_order(part.file_index, 0)
    found: dict[str, list[Learner]] = {}
    records = (
        (first + p, key, a) for p, key, a in analysed_records(part, job, lambda k: learnt(k, found))
    )
    return learners_of(records, job.analysis.seed, found)


def stored_batch(pages: list[StoredPage] | None) -> Batch:
    return Batch.of_pages(list(pages or []))


def run_local(
    paths: list[str],
    job: ArchiveJob,
    *,
    stored: list[StoredPage] | None = None,
    progress: Progress | None = None,
) -> ArchiveResult:
    """The job on one machine, without a cluster: numpy sorts instead of shuffles."""
    stage = StageLog(progress)

    started = time.perf_counter()
    parts = plan_parts(paths)
    sites = Learning() if job.analysis.templates else None
    records = Batch.concat([fingerprint_part(part, job, sites) for part in parts])
    stage("fingerprint", f"{len(records):,} records from {len(paths)} inputs", started)
    outcomes = decide_fingerprints(records, job, stored_batch(stored), stage)
    return ArchiveResult(parts, outcomes, stage.lines)


def decide_fingerprints(
    records: Batch, job: ArchiveJob, stored: Batch, stage: Callable[[str, str, float], None]
) -> Outcomes:
    """:func:`~.batch.decide_batch` with the job's plan, reporting the stages."""
    started = time.perf_counter()
    plan, why = choose_plan(job.max_distance, job.blocks, len(records) + len(stored))
    stage("plan", why, started)
    started = time.perf_counter()
    outcomes = decide_batch(records, stored, plan, job.max_distance, min_share=job.min_share)
    kept = int(np.count_nonzero(outcomes.kept))
    stage(
        "decide", f"kept {kept:,}, dropped {len(outcomes.order) - kept:,}, {outcomes.how}", started
    )
    return outcomes
