"""Choosing a threshold: ``calibrate``."""

from __future__ import annotations

from pathlib import Path

import click

from ..tools.calibrate import calibrate
from ..tools.calibration_views import advice, render_html, render_text
from ..tools.shares import render_shares, summarise_shares
from .main import INDEX_SETTINGS, Env, echo_json, honours, index_option, json_option, main


@honours(
    INDEX_SETTINGS,
    "it measures the distances between the pages an index holds; to try another "
    "threshold, read its histogram (only SIMHASH_INDEX_URI, or --index, applies)",
)
@main.command(name="calibrate", short_help="Distance histogram and pairs to choose a threshold.")
@index_option
@click.option(
    "--sample",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="Stored pages to sample.",
)
@click.option(
    "--pairs",
    type=click.IntRange(min=0),
    default=3,
    show_default=True,
    help="Example pairs per distance.",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Seed of the random sample.",
)
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write a self-contained HTML report with the histogram drawn.",
)
@json_option
@click.pass_obj
def calibrate_command(
    env: Env,
    index_uri: str | None,
    sample: int,
    pairs: int,
    seed: int,
    html_path: Path | None,
    as_json: bool,
) -> None:
    """Histogram of nearest-neighbour distances between stored pages, and of the
    distances of drops, with example pairs at each distance: look at real pairs around
    the threshold before changing SIMHASH_MAX_DISTANCE. Then the drops by the share of
    their text the kept page holds, and what a higher SIMHASH_MIN_SHARE would keep.

    \b
    Example:
      scrapy-simhash calibrate
      scrapy-simhash calibrate --sample 5000 --html calibration.html
    """
    with env.open(index_uri, read_only=True) as index:
        result = calibrate(index, sample=sample, pairs=pairs, seed=seed)
        shares = summarise_shares(index.drops(), env.settings.min_share)
        location = index.location
    if html_path is not None:
        try:
            html_path.write_text(
                render_html(result, title=f"scrapy-simhash calibration: {location}"),
                encoding="utf-8",
            )
        except OSError as e:
            raise click.ClickException(f"Cannot write {html_path}: {e.strerror}") from None
    if as_json:
        echo_json({**result.as_dict(), "shares": shares.as_dict()})
    else:
        click.echo(render_text(result))
        share_lines = render_shares(shares)
        if share_lines:
            click.echo("\n" + "\n".join(share_lines))
        steps = advice(result, location)
        if steps:
            click.echo("\n" + "\n".join(steps))
    if html_path is not None:
        click.echo(f"HTML report: {html_path}", err=as_json)
