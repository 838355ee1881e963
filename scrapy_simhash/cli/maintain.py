"""Keeping an index: ``export``, ``import``, ``expire``, ``forget``, ``vacuum``, ``upgrade``,
``rebuild``: the commands that change what an index holds or how it is built."""

from __future__ import annotations

import contextlib
import os
import sys

import click

from ..exceptions import IndexNotFound, Interrupted
from ..index import open_index
from ..index.skip_rules import skip_rules_for
from ..index.uri import redact
from ..tools.rebuild import rebuild_index
from ..tools.transfer import export_index, import_pages, read_pages
from .main import (
    INDEX_SETTINGS,
    Env,
    cutoff,
    echo_json,
    honours,
    index_option,
    interrupted,
    json_option,
    main,
    when,
)

#: Why the maintenance commands take no fingerprinting or threshold settings.
KEEPS_ITS_PARAMETERS = (
    "an index keeps the parameters it was built with; only SIMHASH_INDEX_URI (or --index) applies"
)


@honours(INDEX_SETTINGS, KEEPS_ITS_PARAMETERS)
@main.command("export", short_help="Write the index to a compact portable file.")
@click.argument("file", type=click.Path(dir_okay=False, writable=True))
@index_option
@json_option
@click.pass_obj
def export_command(env: Env, file: str, index_uri: str | None, as_json: bool) -> None:
    """Write every stored page to FILE in a compact portable format (sorted, delta-coded
    fingerprints, compressed keys), readable by `import` into any backend.

    \b
    Example:
      scrapy-simhash export backup.simhash
      scrapy-simhash export moved.simhash --index sqlite:///old.db
    """
    with env.open(index_uri, read_only=True) as index:
        count = export_index(index, file)
        location = index.location
    size = os.path.getsize(file)
    if as_json:
        echo_json({"index": location, "file": file, "pages": count, "bytes": size})
        return
    per_page = f", {size / count:.1f} bytes per page" if count else ""
    click.echo(f"Exported {count} pages from {location} to {file} ({size:,} bytes{per_page}).")


@honours(
    INDEX_SETTINGS,
    "a new index takes the export's parameters (see `stats` of the index it came from) and "
    "an existing index keeps its own",
)
@main.command("import", short_help="Add the pages of an export file to the index.")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@index_option
@json_option
@click.pass_obj
def import_command(env: Env, file: str, index_uri: str | None, as_json: bool) -> None:
    """Add the pages of an export FILE to the index; pages already stored are skipped.
    A new index is created with the export's parameters.

    \b
    Example:
      scrapy-simhash import backup.simhash
      scrapy-simhash import backup.simhash --index redis://localhost:6379/0
    """
    # The whole file is read and checked before an index is opened or created for it:
    # a damaged export leaves nothing behind.
    header, pages = read_pages(file)
    uri = env.index_uri(index_uri, create=True)
    try:
        index = open_index(uri, create=False)
    except IndexNotFound:
        params = header.parameters
        index = open_index(
            uri, max_distance=params.max_distance, blocks=params.blocks, features=params.features
        )
    with index:
        try:
            added = import_pages(index, header, pages, file)
        except Interrupted as e:
            interrupted(
                f"importing {e.done} pages", "import the rest (pages already stored are skipped)"
            )
        location = index.location
    skipped = header.pages - added
    if as_json:
        echo_json({"index": location, "file": file, "added": added, "skipped": skipped})
        return
    click.echo(f"Imported {added} pages from {file} into {location} ({skipped} already stored).")


@honours(INDEX_SETTINGS, KEEPS_ITS_PARAMETERS)
@main.command(short_help="Remove pages (or audit-log entries) stored before a time.")
@click.option(
    "--older-than",
    "older_than",
    required=True,
    metavar="WHEN",
    callback=cutoff,
    help="A duration (30d, 12h, 2w) or a date (2026-01-31): what is older goes.",
)
@click.option(
    "--drops",
    is_flag=True,
    help="Remove audit-log entries recorded before WHEN instead of pages.",
)
@index_option
@click.option("--dry-run", is_flag=True, help="Only say how many would be removed.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@json_option
@click.pass_obj
def expire(
    env: Env,
    older_than: float,
    drops: bool,
    index_uri: str | None,
    dry_run: bool,
    yes: bool,
    as_json: bool,
) -> None:
    """Remove pages stored before a time, so that pages seen again are kept again. With
    --drops, remove audit-log entries instead (the log of drops grows with every
    duplicate; pages are then left alone).

    \b
    Example:
      scrapy-simhash expire --older-than 30d
      scrapy-simhash expire --older-than 2026-01-01 --dry-run
      scrapy-simhash expire --older-than 90d --drops --yes
    """
    before = older_than
    noun, verb = ("audit-log entries", "recorded") if drops else ("pages", "stored")
    with env.open(index_uri) as index:
        total = count = 0
        if drops:
            for record in index.drops():  # one read of the log, which can be long
                total += 1
                count += record.at < before
        else:
            count = sum(1 for page in index.pages() if page.added_at < before)
        if count and not dry_run and not yes:
            click.confirm(
                f"Remove {count} {noun} {verb} before {when(before)} from {index.location}?",
                abort=True,
            )
        removed = 0
        if count and not dry_run:
            try:
                removed = index.expire_drops(before) if drops else index.expire(before)
            except Interrupted as e:
                interrupted(f"removing {e.done} {noun}", "remove the rest")
        left = total - removed if drops else len(index)
    if as_json:
        echo_json({"before": before, "matching": count, "removed": removed, "left": left})
    elif dry_run:
        click.echo(f"{count} {noun} were {verb} before {when(before)}; nothing removed (dry run).")
    else:
        click.echo(f"Removed {removed} {noun} {verb} before {when(before)}; {left} left.")


@honours(INDEX_SETTINGS, KEEPS_ITS_PARAMETERS)
@main.command(short_help="Remove the pages stored under URLs.")
@click.argument("urls", nargs=-1, required=True, metavar="URL...")
@index_option
@click.pass_obj
def forget(env: Env, urls: tuple[str, ...], index_uri: str | None) -> None:
    """Remove the pages stored under each URL, so that they are kept when crawled again.
    Exits with status 1 if a URL had no page stored.

    \b
    Example:
      scrapy-simhash forget https://news.example/2026/tram.html
    """
    missing = []
    with env.open(index_uri) as index:
        store = skip_rules_for(index)
        for url in urls:
            removed = index.forget(url)
            if removed:
                click.echo(
                    f"Forgot {url} ({removed} stored {'entry' if removed == 1 else 'entries'})."
                )
            if store.forget_url(url):
                # Forgotten, yet the rule would skip it again: say how to download it.
                click.echo(
                    f"Forgot that {url} was skipped as a predicted copy (scrapy-simhash rules "
                    "--remove RULE lets a crawl download such URLs again)."
                )
            elif not removed:
                missing.append(url)
    if missing:
        raise click.ClickException(f"No page is stored under: {', '.join(missing)}")


@honours(INDEX_SETTINGS, KEEPS_ITS_PARAMETERS)
@main.command(short_help="Give the space of removed pages back to the disk.")
@index_option
@click.pass_obj
def vacuum(env: Env, index_uri: str | None) -> None:
    """Give the space of removed pages back to the disk (SQLite: VACUUM).

    \b
    Example:
      scrapy-simhash expire --older-than 90d --yes && scrapy-simhash vacuum
    """
    with env.open(index_uri) as index:
        before = index.size()
        if not index.compact():
            click.echo(f"The index {index.location} has nothing to vacuum.")
            return
        after = index.size()
    if before is not None and after is not None:
        click.echo(f"Vacuumed {index.location}: {before:,} -> {after:,} bytes.")
    else:
        click.echo(f"Vacuumed {index.location}.")


@honours(INDEX_SETTINGS, KEEPS_ITS_PARAMETERS)
@main.command(short_help="Upgrade an index written by an earlier scrapy-simhash.")
@index_option
@click.pass_obj
def upgrade(env: Env, index_uri: str | None) -> None:
    """Upgrade an index written by an earlier scrapy-simhash to store paragraph anchors,
    text sketches, the pages seen holding each anchor and how each page was analysed: its
    pages are kept (without anchors, sketches or records when it had none; counted as
    seen). An index that needs it is refused by a crawl until it is upgraded. Older
    scrapy-simhash versions refuse the upgraded index.

    \b
    Example:
      scrapy-simhash upgrade --index .scrapy/simhash.db
    """
    with env.open(index_uri, upgrade=True) as index:
        click.echo(
            f"The index {index.location} stores paragraph anchors, sketches and how each "
            f"page was analysed ({len(index)} pages)."
        )


@honours(
    INDEX_SETTINGS,
    "the new index takes --max-distance and --blocks, and the features of "
    "the index it is built from",
)
@main.command(short_help="Build a copy of the index for another --max-distance.")
@click.option(
    "--max-distance",
    "max_distance",
    required=True,
    type=click.IntRange(0, 31),
    help="The distance the new index finds every page within.",
)
@click.option(
    "--blocks",
    type=click.IntRange(1, 64),
    default=None,
    help="Block tables (more: fewer candidates per probe, more space). Default: K + 2.",
)
@click.option(
    "--into",
    "target",
    required=True,
    metavar="URI",
    help="Where to build the new index (a path or URI that does not exist yet).",
)
@index_option
@json_option
@click.pass_obj
def rebuild(
    env: Env,
    max_distance: int,
    blocks: int | None,
    target: str,
    index_uri: str | None,
    as_json: bool,
) -> None:
    """Build a new index for another threshold from the fingerprints stored in this one:
    no page is crawled again. The old index is only read; if the rebuild is interrupted,
    run it again (pages already copied are skipped). Then set SIMHASH_INDEX_URI and
    SIMHASH_MAX_DISTANCE to the new index and distance. The audit log of drops stays in
    the old index.

    \b
    Example:
      scrapy-simhash rebuild --max-distance 5 --into .scrapy/simhash-k5.db
    """
    source = env.index_uri(index_uri)
    with env.open(index_uri, read_only=True) as index:
        total = len(index)
    # A bar where someone watches; a log or a pipe gets the result line only.
    shown = sys.stderr.isatty()
    bar = click.progressbar(length=total, label="Copying pages", file=sys.stderr)
    try:
        with bar if shown else contextlib.nullcontext():
            result = rebuild_index(
                source,
                target,
                max_distance=max_distance,
                blocks=blocks,
                progress=(lambda count: bar.update(count - bar.pos)) if shown else None,
            )
    except Interrupted as e:
        interrupted(f"copying {e.done} pages", "copy the rest (pages already copied are skipped)")
    params = result.parameters
    if as_json:
        echo_json(
            {
                "index": result.source,
                "into": result.target,
                "max_distance": params.max_distance,
                "blocks": params.blocks,
                "copied": result.copied,
                "pages": result.pages,
            }
        )
        return
    click.echo(
        f"Built {result.target} for max_distance={params.max_distance} with {params.blocks} "
        f"blocks ({params.plan.table_count} tables): {result.pages} pages ({result.copied} "
        f"copied now) from {result.source}."
    )
    shown = redact(target)
    click.echo(
        "To use it, set in settings.py:\n"
        f"  SIMHASH_INDEX_URI = {shown!r}"
        + ("  # with the password where *** stands" if shown != target else "")
        + f"\n  SIMHASH_MAX_DISTANCE = {params.max_distance}"
    )
