"""Looking into an index: ``stats``, ``check``, ``explain``, ``dropped``."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timezone

import click

from ..analysis.fingerprint import format_fingerprint
from ..exceptions import IndexNotFound
from ..index import open_index
from ..index.base import DropRecord
from ..tools.check import Checked, check_source
from ..tools.explain import Explanation
from ..tools.explain import explain as explain_texts
from ..tools.feeds import spreadsheet_safe
from ..tools.readings import SourceText, read_as_crawled
from ..tools.report import held_words, index_summary
from .main import (
    FINGERPRINT_SETTINGS,
    INDEX_SETTINGS,
    Env,
    cutoff,
    describe_analysis,
    echo_json,
    honours,
    index_option,
    json_option,
    main,
    raw_csv_option,
    when,
)

#: Why the commands that only read an index take none of the fingerprinting settings.
READS_THE_INDEX = "it reads the index as it was built; only SIMHASH_INDEX_URI (or --index) applies"


@honours(INDEX_SETTINGS, READS_THE_INDEX)
@main.command(short_help="Size, parameters and drops of the index.")
@index_option
@json_option
@click.pass_obj
def stats(env: Env, index_uri: str | None, as_json: bool) -> None:
    """Size, parameters and audit log of the index.

    \b
    Example:
      scrapy-simhash stats
      scrapy-simhash stats --index sqlite:///crawl.db --json
    """
    with env.open(index_uri, read_only=True) as index:
        data = index_summary(index)
    if as_json:
        echo_json(data)
        return
    size_text = f" ({data['bytes']:,} bytes)" if data["bytes"] is not None else ""
    key_bits = "-".join(str(b) for b in data["key_bits"])
    by_distance = ", ".join(f"{d}: {n}" for d, n in data["drops_by_distance"].items())
    click.echo(f"Index       {data['index']}{size_text}")
    click.echo(
        f"Pages       {data['pages']} ({data['fingerprints']} fingerprints, "
        f"{data['exact_texts']} exact texts)"
    )
    click.echo(f"Stored      {when(data['oldest'])} .. {when(data['newest'])}")
    click.echo(
        f"Parameters  max distance {data['max_distance']}, {data['blocks']} blocks, "
        f"{data['tables']} tables of {key_bits}-bit keys"
    )
    click.echo(f"Features    {data['features']}")
    click.echo(
        f"Drops       {data['drops']} "
        f"({data['drops'] - data['drops_exact'] - data['drops_contained']} near, "
        f"{data['drops_contained']} contained, {data['drops_exact']} exact)"
        + (f"; by distance {by_distance}" if by_distance else "")
    )
    if data["unchanged_revisits"]:
        click.echo(
            f"Unchanged   {data['unchanged_revisits']} re-visits of stored pages whose text "
            "had not changed (not duplicates)"
        )
    if data["last_drop"] is not None:
        click.echo(f"Last drop   {when(data['last_drop'])}")


@honours(
    INDEX_SETTINGS | FINGERPRINT_SETTINGS,
    "its threshold is --max-distance, else the index's own",
)
@main.command(short_help="Stored pages nearest to a page, file or text.")
@click.argument("source")
@index_option
@click.option(
    "--max-distance",
    type=click.IntRange(0, 64),
    help="List stored pages up to this distance as matches (every stored fingerprint is "
    "scanned, so this may exceed the index's own threshold).  [default: the index's]",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    help="Show at most this many pages.",
)
@json_option
@click.pass_obj
def check(
    env: Env,
    source: str,
    index_uri: str | None,
    max_distance: int | None,
    limit: int,
    as_json: bool,
) -> None:
    """The stored pages nearest to SOURCE: a stored page's URL, a file (HTML or text),
    an http(s) URL, literal text, or - for stdin. Nothing is stored.

    \b
    Example:
      scrapy-simhash check https://news.example/2026/tram.html
      scrapy-simhash check saved-page.html --max-distance 8
      curl -s https://news.example/ | scrapy-simhash check -
    """
    with env.open(index_uri, read_only=True) as index:
        result = check_source(
            index,
            source,
            env.settings,
            lambda: env.deduplicator(index),
            max_distance=max_distance,
            limit=limit,
        )
    if result.exact_only:
        raise click.ClickException(
            f"{source} is stored as an exact-text entry (its text was too short for "
            "SimHash), so it has no near neighbours"
        )
    if as_json:
        echo_json(result.as_json())
        return
    _echo_checked(result)


def _echo_checked(result: Checked) -> None:
    found, k = result.found, result.max_distance
    what = (
        describe_analysis(result.analysis)
        if result.analysis is not None
        else f"stored page, fingerprint {format_fingerprint(result.fingerprint)}"
    )
    click.echo(f"{result.label}: {what}")
    if result.read_as:
        click.echo(f"Read as {result.read_as}")
    if result.kind == "short" and not found.matches:
        click.echo("No stored page has the same text.")
    elif result.kind == "simhash" and not found.matches:
        click.echo(f"No stored page within distance {k}.")
    if found.matches:
        click.echo(f"Stored pages within distance {k}:")
        for match in found.matches:
            flag = ""
            if match["distance"] <= result.duplicate_at:
                flag = (
                    "  (a duplicate" + held_words(match["share"]) + ")"
                    if match["confirmed"]
                    else "  (near, but kept: "
                    + (held_words(match["share"], "") or "an unknown share of its text held")
                    + ")"
                )
            click.echo(f"  {match['distance']:>2}  {match['key']}{flag}")
    if found.beyond:
        click.echo("Nearest stored pages beyond it:")
        for match in found.beyond:
            click.echo(f"  {match['distance']:>2}  {match['key']}")
    contained = result.contained
    if contained:
        click.echo(
            f"Contained in {contained['key']} (distance {contained['distance']}"
            f"{held_words(contained['share'])}): a duplicate by its shared long paragraphs:"
        )
        for line in contained["shared_paragraphs"]:
            click.echo(f"  {line[:150]}{'...' if len(line) > 150 else ''}")
    if result.dropped_for:
        click.echo("Dropped as its duplicates (audit log):")
        for drop in result.dropped_for:
            how = [f"contained ({drop['shared']} paragraphs)"] if drop["shared"] else []
            how += [held_words(drop["share"], "")] if drop["share"] is not None else []
            click.echo(f"  {drop['distance']:>2}  {drop['key']}  {'; '.join(how)}".rstrip())


@honours(
    INDEX_SETTINGS | FINGERPRINT_SETTINGS | {"SIMHASH_MAX_DISTANCE", "SIMHASH_BLOCKS"},
    "it fingerprints two texts and compares them, nothing else",
)
@main.command(short_help="Distance of two texts and the terms behind it.")
@click.argument("a")
@click.argument("b")
@index_option
@click.option(
    "--top",
    type=click.IntRange(min=0),
    default=12,
    show_default=True,
    help="Terms to list in each group.",
)
@json_option
@click.pass_obj
def explain(env: Env, a: str, b: str, index_uri: str | None, top: int, as_json: bool) -> None:
    """Distance between two texts and the heavy terms they share and do not.

    A and B are files (HTML or text), http(s) URLs, literal text, or - for stdin. The
    threshold and block plan are the index's if it exists, else the settings'.

    \b
    Example:
      scrapy-simhash explain original.html repost.html
      scrapy-simhash explain "The council approved the tram" "Council approves tram line"
    """
    try:
        index = open_index(env.index_uri(index_uri), create=False, read_only=True)
    except IndexNotFound:
        index = env.settings.open_index("memory:")
    with index:
        dedup = env.deduplicator(index)
        read_a = read_as_crawled(a, env.settings, index, dedup)
        read_b = read_as_crawled(b, env.settings, index, dedup, like=read_a)
        if read_b.found is not None and read_a.found is None:
            read_a = read_as_crawled(a, env.settings, index, dedup, like=read_b)
        result = explain_texts(dedup, read_a.text, read_b.text, top=top)
    if as_json:
        echo_json(result.as_dict() | {"read_as": {"a": read_a.as_dict(), "b": read_b.as_dict()}})
        return
    _echo_explanation(result, read_a, read_b, env.settings.min_share)


def _echo_explanation(
    result: Explanation, read_a: SourceText, read_b: SourceText, min_share: float
) -> None:
    """``explain`` as text: how each text was read, their distance and shares (or why
    they were not compared), and the heavy terms they share and do not."""
    for name, read, analysis in (("A", read_a, result.a), ("B", read_b, result.b)):
        click.echo(f"{name}  {read.label}: {describe_analysis(analysis)}")
        if read.described:
            click.echo(f"   read as {read.described}")
    if result.distance is not None:
        verdict = {
            "near": "near-duplicates",
            "contained": "B is contained in A",
        }.get(result.test or "", "B would be kept")
        click.echo(
            f"Distance {result.distance} (threshold {result.max_distance}): {verdict}. "
            f"Differing bits {list(result.differing_bits) or 'none'}, in blocks "
            f"{list(result.differing_blocks) or 'none'}."
        )
        click.echo(
            f"A holds {_percent(result.share)} of B's text, B {_percent(result.share_back)} "
            f"of A's (a drop needs {min_share:.0%}: SIMHASH_MIN_SHARE)."
        )
        if result.shared_paragraphs and result.test != "near":
            how = (
                "contained: duplicates"
                if result.contained
                else "lists only: neither page's own paragraphs are in the other"
                if result.lists_only
                else "not enough for containment"
            )
            click.echo(f"Shared long paragraphs ({how}):")
            for line in result.shared_paragraphs:
                click.echo(f"  {line[:150]}{'...' if len(line) > 150 else ''}")
    elif result.a.kind == "short" and result.b.kind == "short":
        same = "the same" if result.duplicate else "not the same"
        click.echo(f"Both too short for SimHash: their exact texts are {same}.")
    else:
        click.echo("Not compared by distance: one text is too short for SimHash or empty.")

    def terms(pairs) -> str:
        return ", ".join(f"{t} ({w:.1f})" for t, w in pairs) or "-"

    shared = ", ".join(f"{t} ({wa:.1f}/{wb:.1f})" for t, wa, wb in result.shared) or "-"
    click.echo(f"Shared heavy terms: {shared}")
    click.echo(f"Only in A: {terms(result.only_a)}")
    click.echo(f"Only in B: {terms(result.only_b)}")


def _percent(share: float | None) -> str:
    return "an unknown share" if share is None else f"{share:.0%}"


@honours(INDEX_SETTINGS, READS_THE_INDEX)
@main.command(short_help="The audit log of dropped pages (table, CSV, JSON).")
@index_option
@click.option(
    "--since",
    metavar="WHEN",
    callback=cutoff,
    help="Only drops since: 30d, 12h, 2026-01-31, ...",
)
@click.option("--kept", metavar="URL", help="Only drops that matched this kept page.")
@click.option("--contains", metavar="TEXT", help="Only drops whose URL contains TEXT.")
@click.option("--limit", type=click.IntRange(min=1), help="Only the last N drops.")
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV.")
@raw_csv_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON lines.")
@click.pass_obj
def dropped(
    env: Env,
    index_uri: str | None,
    since: float | None,
    kept: str | None,
    contains: str | None,
    limit: int | None,
    as_csv: bool,
    raw_csv: bool,
    as_json: bool,
) -> None:
    """The audit log: every page dropped as a duplicate, the page it matched, the
    distance and the time, oldest first.

    \b
    Example:
      scrapy-simhash dropped --since 1d
      scrapy-simhash dropped --kept https://news.example/tram.html --csv > drops.csv
    """
    with env.open(index_uri, read_only=True) as index:
        records = [
            r
            for r in index.drops(since=since)
            if (kept is None or r.kept_key == kept) and (contains is None or contains in r.key)
        ]
    if limit is not None:
        records = records[-limit:]
    rows = [_drop_row(r) for r in records]
    if as_json:
        for row in rows:
            click.echo(json.dumps(row, ensure_ascii=False))
    elif as_csv:
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=DROP_COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow(row if raw_csv else {k: spreadsheet_safe(v) for k, v in row.items()})
        click.echo(out.getvalue(), nl=False)
    elif not rows:
        filtered = since is not None or kept is not None or contains is not None
        click.echo("No drops recorded" + (" matching the filters." if filtered else "."))
    else:
        for row in rows:
            click.echo(_drop_line(row))
        click.echo("1 drop." if len(rows) == 1 else f"{len(rows)} drops.")


#: The columns of ``dropped --csv`` (and the keys of ``--json``), in order.
DROP_COLUMNS = [
    "at",
    "dropped",
    "kept",
    "distance",
    "exact",
    "unchanged",
    "test",
    "shared",
    "share",
]


def _drop_row(r: DropRecord) -> dict:
    """An entry of the audit log as ``dropped`` shows it (the keys of :data:`DROP_COLUMNS`)."""
    return {
        "at": datetime.fromtimestamp(r.at, timezone.utc).isoformat(timespec="seconds"),
        "dropped": r.key,
        "kept": r.kept_key,
        "distance": r.distance,
        "exact": r.exact,
        "unchanged": r.unchanged,
        "test": "exact" if r.exact else "contained" if r.shared else "near",
        "shared": r.shared,
        "share": None if r.share is None else round(r.share, 3),
    }


def _drop_line(row: dict) -> str:
    """A row of :func:`_drop_row` as a line of the table."""
    how = "exact" if row["exact"] else f"d={row['distance']}"
    if row["shared"]:
        how = f"contained ({row['shared']} paragraphs)"
    how = f"same {how}" if row["unchanged"] else how
    held = "" if row["share"] is None else f"  ({row['share']:.0%} of its text kept)"
    return f"{row['at']}  {how:<5}  {row['dropped']}  ->  {row['kept']}{held}"
