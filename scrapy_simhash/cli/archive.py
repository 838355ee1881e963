"""``dedup`` as an archive job: many inputs (feeds, WARC/WET, Parquet), on this machine
or a Dask cluster, with a decisions table (see :mod:`scrapy_simhash.tools.archive`)."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import click

from ..exceptions import FeedError
from ..index.uri import redact
from ..tools.archive import (
    ArchiveJob,
    input_format,
    kept_pages,
    kept_path,
    run_dask,
    run_local,
    write_decisions,
    write_kept_records,
)
from .main import Env, echo_json, refuse_overwrite


def archive_mode(inputs: tuple[Path, ...], engine: str | None, scheduler: str | None) -> bool:
    """Whether ``dedup`` runs as an archive job: asked for, or inputs a single feed
    cannot be (several, WARC, Parquet)."""
    if engine or scheduler or len(inputs) > 1:
        return True
    try:
        return input_format(inputs[0]) in ("warc", "parquet")
    except FeedError:
        return False  # the one-feed path says which formats it reads


def decisions_path(first: Path) -> Path:
    """``all.jl`` -> ``all.jl.decisions.csv``."""
    return first.with_name(f"{first.name}.decisions.csv")


def run_archive(
    env: Env,
    inputs: tuple[Path, ...],
    *,
    output: Path | None,
    decisions: Path | None,
    text_fields: list[str],
    key_field: str,
    index_uri: str,
    add_kept: bool,
    engine: str | None,
    scheduler: str | None,
    workers: int,
    raw_csv: bool,
    as_json: bool,
) -> None:
    config = env.settings
    if output is not None and len(inputs) > 1:
        raise click.ClickException(
            "--output names the kept records of one input; with several inputs each one's "
            "are written beside it (NAME.kept.EXT)"
        )
    outputs = {
        i: str(output if output is not None else kept_path(path)) for i, path in enumerate(inputs)
    }
    decisions = decisions or decisions_path(inputs[0])
    refuse_overwrite(
        [*(("--output", Path(o)) for o in outputs.values()), ("--decisions", decisions)],
        list(inputs),
    )
    job = ArchiveJob(
        config.analysis_params,
        tuple(text_fields),
        key_field,
        config.max_distance,
        min_share=config.min_share,
    )

    def progress(stage: str, detail: str) -> None:
        click.echo(f"{stage}: {detail}", err=True)

    paths = [str(p) for p in inputs]
    with config.open_index(index_uri) as index:
        stored = list(index.pages())
        if stored:
            click.echo(f"index: {len(stored):,} stored pages from {index.location}", err=True)
        if engine == "dask" or scheduler:
            result = _on_dask(paths, job, stored, progress, scheduler, workers)
        else:
            result = run_local(paths, job, stored=stored, progress=progress)
        added = index.add_pages(kept_pages(result, time.time())) if add_kept else 0
    written = write_kept_records(result, outputs, raw_csv=raw_csv)
    write_decisions(result, decisions)
    summary = {
        **result.summary(),
        "added_to_index": added,
        "outputs": {paths[i]: outputs[i] for i in outputs},
        "kept_written": sum(written.values()),
        "decisions": str(decisions),
        "stages": dict(result.stages),
    }
    if as_json:
        echo_json(summary)
        return
    click.echo(
        f"{summary['records']} records: kept {summary['kept']}, dropped {summary['dropped']}; "
        f"{summary['no_text']} without text (kept)."
    )
    for source, target in summary["outputs"].items():
        click.echo(f"Kept records of {source}: {target}")
    click.echo(f"Decisions: {decisions}")
    if add_kept:
        click.echo(f"Added {added} pages to {redact(index_uri)}")


def _on_dask(paths, job, stored, progress, scheduler: str | None, workers: int):
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise click.ClickException(
            "--engine dask needs Dask: pip install 'scrapy-simhash[dask]'"
        ) from None
    # The shuffle logs each start and end at WARNING; the stages say what matters.
    logging.getLogger("distributed.shuffle").setLevel(logging.ERROR)
    if scheduler:
        with Client(scheduler) as client:
            return run_dask(paths, job, client, stored=stored, progress=progress)
    click.echo(f"dask: a local cluster of {workers} worker processes", err=True)
    with (
        LocalCluster(n_workers=workers, threads_per_worker=1, processes=True) as cluster,
        Client(cluster) as client,
    ):
        return run_dask(paths, job, client, stored=stored, progress=progress)


__all__ = ["archive_mode", "run_archive"]
