"""``report``: one HTML page of the index's clusters, and ``--clusters`` as a table."""

from __future__ import annotations

from pathlib import Path

import click

from ..tools.clusters import CLUSTER_COLUMNS, cluster_rows, write_rows
from ..tools.html_report import Limits, gather, render
from ..tools.page_texts import PageTexts
from .main import (
    FINGERPRINT_SETTINGS,
    INDEX_SETTINGS,
    Env,
    honours,
    index_option,
    main,
    refuse_overwrite,
)


@honours(
    INDEX_SETTINGS | FINGERPRINT_SETTINGS | {"SIMHASH_KEY_FIELD"},
    "it reads pages' texts as the pipeline would, with the project's fingerprinting settings",
)
@main.command(short_help="An HTML report of the clusters: each copy beside its kept page.")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The HTML file to write (self-contained: no network).",
)
@index_option
@click.option(
    "--clusters",
    "clusters_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write one row per page (cluster, key, kept, reason, distance, share) to "
    "this .csv, .jl or .parquet file.",
)
@click.option(
    "--feed",
    "feeds",
    multiple=True,
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="A JSON-lines feed of the crawl's items, for the pages' texts (repeatable).",
)
@click.option("--fetch", is_flag=True, help="Also fetch http(s) pages for their texts.")
@click.option("--no-texts", is_flag=True, help="Compare no texts: clusters and figures only.")
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=500,
    show_default=True,
    help="Clusters shown in the page, largest first.",
)
@click.option(
    "--sample",
    type=click.IntRange(min=1),
    default=500,
    show_default=True,
    help="Stored pages sampled for the threshold's what-if (as calibrate --sample).",
)
@click.pass_obj
def report(
    env: Env,
    output: Path,
    index_uri: str | None,
    clusters_path: Path | None,
    feeds: tuple[Path, ...],
    fetch: bool,
    no_texts: bool,
    limit: int,
    sample: int,
) -> None:
    """Write one self-contained HTML page of the index's clusters: each kept page with
    the pages dropped as its copies and why (distance, containment, the share of the
    copy's text in the kept page), each copy beside its kept page with the shared
    passages marked, histograms of distances and shares, drops per site, and what
    another threshold would keep and drop. A filter box narrows it to a URL or site.

    The index keeps fingerprints, not texts: texts come from --feed (the crawl's items),
    else from file:// pages read again (and http(s) pages with --fetch), read as the
    `text` command reads them. The page holds the --limit largest clusters; --clusters
    writes every page's cluster.

    \b
    Example:
      scrapy-simhash report -o report.html --feed kept.jl --clusters clusters.csv
    """
    refuse_overwrite([("--output", output)], list(feeds), "a feed")
    if clusters_path is not None:
        refuse_overwrite([("--clusters", clusters_path)], [output, *feeds], "another file")
    with env.open(index_uri, read_only=True) as index:
        gathered = gather(index, sample=sample, keys=clusters_path is not None)
    rows = 0
    if clusters_path is not None:
        table = cluster_rows(gathered.clusters, gathered.keys)
        rows = write_rows(clusters_path, table, CLUSTER_COLUMNS)
    texts = None
    if not no_texts:
        key_field = env.settings.key_field if feeds else "url"
        texts = PageTexts(env.text_of, feeds=feeds, key_field=key_field, fetch=fetch)
    page = render(
        gathered,
        texts,
        limits=Limits(clusters=limit),
        clusters_file=str(clusters_path) if clusters_path else None,
    )
    try:
        output.write_text(page, encoding="utf-8")
    except OSError as e:
        raise click.ClickException(f"Cannot write {output}: {e.strerror}") from None
    shown = min(limit, len(gathered.clusters))
    click.echo(
        f"Report: {output} ({shown} of {len(gathered.clusters)} clusters with copies, "
        f"{gathered.pages} stored pages)"
    )
    if clusters_path is not None:
        click.echo(f"Clusters: {clusters_path} ({rows} pages)")
    if texts is not None and texts.failures:
        click.echo(f"Could not read the text of {texts.failures} pages.", err=True)
