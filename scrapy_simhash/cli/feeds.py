"""Cleaning exported feeds: ``dedup``."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TypeVar

import click

from ..tools.feeds import REPORT_FIELDS, dedup_items, read_feed, record_verdicts, write_feed
from .archive import archive_mode, run_archive
from .main import (
    FINGERPRINT_SETTINGS,
    Env,
    echo_json,
    honours,
    json_option,
    main,
    raw_csv_option,
    refuse_overwrite,
)

T = TypeVar("T")

#: Seconds between two progress lines of ``dedup``.
PROGRESS_EVERY = 5.0


def with_progress(
    things: Iterable[T],
    total: int,
    *,
    every: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[T]:
    """*things*, with a line on stderr every *every* seconds (``PROGRESS_EVERY``) saying
    how many of *total* items were checked, at what rate and how long the rest should
    take, and a last line if any was written; work shorter than that says nothing."""
    every = PROGRESS_EVERY if every is None else every
    start = last = clock()
    done = 0
    for done, thing in enumerate(things, 1):
        yield thing
        now = clock()
        if now - last >= every and done < total:
            last = now
            rate = done / max(now - start, 1e-9)
            left = (total - done) / rate if rate else 0
            click.echo(
                f"Checked {done:,} of {total:,} items ({done / total:.0%}), "
                f"{_rate(rate)} items/s, about {left:,.0f} s left",
                err=True,
            )
    if last != start:
        elapsed = max(clock() - start, 1e-9)
        click.echo(
            f"Checked {done:,} items in {elapsed:,.1f} s, {_rate(done / elapsed)} items/s",
            err=True,
        )


def _rate(rate: float) -> str:
    return f"{rate:,.1f}" if rate < 10 else f"{rate:,.0f}"


def kept_path(feed: Path) -> Path:
    """``all.jl`` -> ``all.kept.jl``: the kept items, in the feed's format."""
    return feed.with_name(f"{feed.stem}.kept{feed.suffix}")


def report_path(feed: Path) -> Path:
    """``all.jl`` -> ``all.duplicates.jl``: named as :func:`kept_path` names the kept
    items, in the feed's format, so that the reports on ``all.jl``, ``all.csv`` and
    ``all.json`` do not overwrite each other (``--report x.csv`` for a spreadsheet)."""
    return feed.with_name(f"{feed.stem}.duplicates{feed.suffix}")


@honours(
    FINGERPRINT_SETTINGS
    | {"SIMHASH_MAX_DISTANCE", "SIMHASH_BLOCKS", "SIMHASH_TEXT_FIELDS", "SIMHASH_KEY_FIELD"},
    "its index is --index (memory: by default), not SIMHASH_INDEX_URI",
)
@main.command(short_help="Remove near-duplicates from an exported feed or an archive.")
@click.argument(
    "inputs",
    metavar="FEED...",
    nargs=-1,
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the kept items (.jl/.json/.csv).  [default: FEED.kept.<ext>]",
)
@click.option(
    "--report",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the duplicates report (.csv/.jl/.json).  [default: FEED.duplicates.<ext>]",
)
@click.option(
    "--fields",
    help="Comma-separated item fields holding the text.  [default: SIMHASH_TEXT_FIELDS]",
)
@click.option("--key", "key_field", help="Item field naming an item.  [default: SIMHASH_KEY_FIELD]")
@click.option(
    "--index",
    "index_uri",
    default="memory:",
    show_default=True,
    metavar="URI",
    help="Check against (and add the kept items to) this index; memory: compares the "
    "feed's items only with each other.",
)
@click.option(
    "--engine",
    type=click.Choice(["local", "dask"]),
    help="Run as an archive job: local (numpy, this machine) or dask (a cluster).  "
    "[default: one item at a time; an archive job for several inputs, WARC or Parquet]",
)
@click.option(
    "--scheduler",
    metavar="ADDRESS",
    help="Run the archive job on this Dask scheduler (tcp://host:8786); implies --engine dask.",
)
@click.option(
    "--connect-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="How long to wait for the --scheduler to connect and answer.",
)
@click.option(
    "--workers",
    type=click.IntRange(1),
    default=2,
    show_default=True,
    help="Worker processes of the local Dask cluster (--engine dask without --scheduler).",
)
@click.option(
    "--decisions",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Archive job: where to write the decisions table (.csv/.jl/.parquet).  "
    "[default: FEED.decisions.csv]",
)
@click.option(
    "--clusters",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Archive job: also write one row per record (cluster, key, kept, reason, distance, "
    "share), as report --clusters does (.csv/.jl/.parquet).",
)
@click.option(
    "--add-kept",
    is_flag=True,
    help="Archive job: add the kept records to --index.",
)
@raw_csv_option
@json_option
@click.pass_obj
def dedup(
    env: Env,
    inputs: tuple[Path, ...],
    output: Path | None,
    report: Path | None,
    fields: str | None,
    key_field: str | None,
    index_uri: str,
    engine: str | None,
    scheduler: str | None,
    connect_timeout: float,
    workers: int,
    decisions: Path | None,
    clusters: Path | None,
    add_kept: bool,
    raw_csv: bool,
    as_json: bool,
) -> None:
    """Remove near-duplicate items from an exported FEED (.jl, .json or .csv, as Scrapy's
    feed exports write them): the first item of each group is kept.

    An archive job (--engine, several inputs, WARC/WET or Parquet) decides the same way
    over whole archives, on this machine or a Dask cluster, and writes each input's kept
    records beside it and a decisions table (record, kept/dropped, matched record,
    distance).

    \b
    Example:
      scrapy-simhash dedup items.jl
      scrapy-simhash dedup items.csv --fields title,body --key link -o clean.csv
      scrapy-simhash dedup crawl-*.warc.gz --engine dask --scheduler tcp://10.0.0.5:8786
    """
    config = env.settings
    text_fields = [f.strip() for f in fields.split(",") if f.strip()] if fields else None
    text_fields = text_fields or list(config.text_fields)
    key_field = key_field or config.key_field
    archive = archive_mode(inputs, engine, scheduler)
    _refuse_other_mode(archive, report, decisions, clusters, add_kept)
    if archive:
        run_archive(
            env,
            inputs,
            output=output,
            decisions=decisions,
            clusters=clusters,
            text_fields=text_fields,
            key_field=key_field,
            index_uri=index_uri,
            add_kept=add_kept,
            engine=engine,
            scheduler=scheduler,
            workers=workers,
            connect_timeout=connect_timeout,
            raw_csv=raw_csv,
            as_json=as_json,
        )
        return
    (feed,) = inputs
    _dedup_feed(env, feed, output, report, text_fields, key_field, index_uri, raw_csv, as_json)


def _refuse_other_mode(
    archive: bool,
    report: Path | None,
    decisions: Path | None,
    clusters: Path | None,
    add_kept: bool,
) -> None:
    """Refuse the options of the mode ``dedup`` is not in: ``--report`` in an *archive*
    job, the archive job's options for one feed."""
    if archive:
        if report is not None:
            raise click.ClickException(
                "--report is the one-feed duplicates report; an archive job writes "
                "--decisions instead"
            )
        return
    for option, value in (
        ("--decisions", decisions),
        ("--clusters", clusters),
        ("--add-kept", add_kept or None),
    ):
        if value is not None:
            raise click.ClickException(f"{option} is for an archive job (add --engine local)")


def _dedup_feed(
    env: Env,
    feed: Path,
    output: Path | None,
    report: Path | None,
    text_fields: list[str],
    key_field: str,
    index_uri: str,
    raw_csv: bool,
    as_json: bool,
) -> None:
    """One exported feed: its kept items and its duplicates report, beside it."""
    config = env.settings
    output = output or kept_path(feed)
    report = report or report_path(feed)
    refuse_overwrite([("--output", output), ("--report", report)], [feed], "the feed")
    items = read_feed(feed)
    dedup = config.open_deduplicator(index_uri)
    with dedup.index as index:
        verdicts = dedup_items(
            items,
            dedup,
            text_fields=text_fields,
            key_field=key_field,
            extractor=config.html_extractor,
            where=feed.name,
        )
        result = record_verdicts(with_progress(verdicts, len(items)), index)
    write_feed(output, result.kept, raw_csv=raw_csv)
    write_feed(report, result.duplicates, raw_csv=raw_csv, fields=REPORT_FIELDS)
    summary = {**result.summary(), "output": str(output), "report": str(report)}
    if as_json:
        echo_json(summary)
        return
    contained = summary["dropped_contained"]
    click.echo(
        f"{summary['items']} items: kept {summary['kept']}, dropped {summary['dropped']} "
        f"({summary['dropped_near']} near-duplicates, "
        + (f"{contained} contained in a kept item, " if contained else "")
        + f"{summary['dropped_exact']} exact short texts); {summary['no_text']} without "
        "text (kept)."
    )
    click.echo(f"Kept items: {output}")
    click.echo(f"Duplicates report: {report}")
