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
    parquet_fields,
    run_dask,
    run_local,
    write_clusters,
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
    clusters: Path | None = None,
    text_fields: list[str],
    key_field: str,
    index_uri: str,
    add_kept: bool,
    engine: str | None,
    scheduler: str | None,
    workers: int,
    connect_timeout: float = 30.0,
    raw_csv: bool,
    as_json: bool,
) -> None:
    config = env.settings
    outputs, decisions = _targets(inputs, output, decisions, clusters)
    job = ArchiveJob(
        config.analysis_params,
        tuple(text_fields),
        key_field,
        config.max_distance,
        min_share=config.min_share,
    )

    paths = [str(p) for p in inputs]
    _warn_of_missing_fields(paths, text_fields)
    with config.open_index(index_uri) as index:
        stored = list(index.pages())
        if stored:
            click.echo(f"index: {len(stored):,} stored pages from {index.location}", err=True)
        if engine == "dask" or scheduler:
            result = _on_dask(paths, job, stored, scheduler, workers, connect_timeout)
        else:
            result = run_local(paths, job, stored=stored, progress=_progress)
        added = index.add_pages(kept_pages(result, time.time())) if add_kept else 0
    written = write_kept_records(result, outputs, raw_csv=raw_csv, text_fields=job.text_fields)
    write_decisions(result, decisions)
    if clusters is not None:
        write_clusters(result, clusters)
    summary = {
        **result.summary(),
        "added_to_index": added,
        "outputs": {paths[i]: outputs[i] for i in outputs},
        "kept_written": sum(written.values()),
        "decisions": str(decisions),
        "clusters": str(clusters) if clusters else None,
        "stages": dict(result.stages),
    }
    if as_json:
        echo_json(summary)
    else:
        _echo_summary(summary, added_to=redact(index_uri) if add_kept else None)


def _targets(
    inputs: tuple[Path, ...], output: Path | None, decisions: Path | None, clusters: Path | None
) -> tuple[dict[int, str], Path]:
    """The kept records' file of each input (by its place) and the decisions' file,
    none of which may be an input or, unless asked for, an existing file."""
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
        [
            *(("--output", Path(o)) for o in outputs.values()),
            ("--decisions", decisions),
            *((("--clusters", clusters),) if clusters else ()),
        ],
        list(inputs),
    )
    return outputs, decisions


def _echo_summary(summary: dict, *, added_to: str | None) -> None:
    """The summary of a job as lines; *added_to*: the index the kept pages were added to
    (``None``: they were not)."""
    click.echo(
        f"{summary['records']} records: kept {summary['kept']}, dropped {summary['dropped']}; "
        f"{summary['no_text']} without text (kept)."
    )
    for source, target in summary["outputs"].items():
        click.echo(f"Kept records of {source}: {target}")
    click.echo(f"Decisions: {summary['decisions']}")
    if summary["clusters"] is not None:
        click.echo(f"Clusters: {summary['clusters']}")
    if added_to is not None:
        click.echo(f"Added {summary['added_to_index']} pages to {added_to}")


def _progress(stage: str, detail: str) -> None:
    click.echo(f"{stage}: {detail}", err=True)


def _warn_of_missing_fields(paths: list[str], text_fields: list[str]) -> None:
    """Warn of each Parquet input that has none of the text fields: each of its records
    would be kept "without text", and the run end well."""
    for path in paths:
        if input_format(path) != "parquet":
            continue
        names = parquet_fields(path)
        if not set(text_fields) & set(names):
            click.echo(
                f"Warning: {path} has no field {', '.join(text_fields)}: every record is kept "
                f"without text; its fields are {', '.join(names) or '(none)'} (choose with "
                "--fields)",
                err=True,
            )


def _on_dask(paths, job, stored, scheduler: str | None, workers: int, connect_timeout: float):
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise click.ClickException(
            "--engine dask needs Dask: pip install 'scrapy-simhash[dask]'"
        ) from None
    # The shuffle logs each start and end at WARNING; the stages say what matters.
    logging.getLogger("distributed.shuffle").setLevel(logging.ERROR)
    if scheduler:
        with _scheduler_client(Client, scheduler, connect_timeout) as client:
            return run_dask(paths, job, client, stored=stored, progress=_progress)
    click.echo(f"dask: a local cluster of {workers} worker processes", err=True)
    with (
        LocalCluster(n_workers=workers, threads_per_worker=1, processes=True) as cluster,
        Client(cluster) as client,
    ):
        return run_dask(paths, job, client, stored=stored, progress=_progress)


def _scheduler_client(Client, scheduler: str, timeout: float):
    """A client of the Dask *scheduler*, connected within *timeout* seconds (see
    :func:`~scrapy_simhash.tools.archive.scheduler.probe_scheduler`), or one line saying
    why not (the address shown without credentials, Dask's traceback left out)."""
    import asyncio

    from ..tools.archive.scheduler import NotAScheduler, probe_scheduler

    shown = redact(scheduler)
    try:
        probe_scheduler(scheduler, timeout)
        return Client(scheduler, timeout=timeout)
    except (ValueError, TypeError):
        raise click.ClickException(
            f"--scheduler {shown} is not a Dask scheduler address: use tcp://host:8786"
        ) from None
    except asyncio.TimeoutError:
        raise click.ClickException(
            f"The Dask scheduler at {shown} accepted a connection but did not answer within "
            f"{timeout:g} s; check that it is a Dask scheduler and it runs "
            "(--connect-timeout to wait longer)"
        ) from None
    except ConnectionError as e:
        raise click.ClickException(
            f"Cannot reach the Dask scheduler at {shown} within {timeout:g} s ({e}); check "
            "the address and that the scheduler runs (--connect-timeout to wait longer)"
        ) from None
    except (NotAScheduler, OSError) as e:
        raise click.ClickException(
            f"The server at {shown} did not answer as a Dask scheduler "
            f"({type(e).__name__ if isinstance(e, OSError) else e}); check the address and "
            "that the scheduler runs a matching version of Dask"
        ) from None


__all__ = ["archive_mode", "run_archive"]
