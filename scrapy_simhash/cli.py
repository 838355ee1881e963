"""The ``scrapy-simhash`` command: inspect, maintain and calibrate an index; dedup feeds.

Each command is a thin wrapper: it opens the index, calls the library, prints. Library
errors (:class:`~scrapy_simhash.exceptions.SimhashError`) become one-line errors with exit
status 1.

The index is ``--index URI`` if given, else ``SIMHASH_INDEX_URI`` of the Scrapy project in
the working directory, else ``.scrapy/simhash.db`` (where the pipeline puts it).
Fingerprinting settings (``SIMHASH_TOP_N``, ``SIMHASH_SECRET``, ...) come from the same
project; ``-s NAME=VALUE`` overrides any of them.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import sys
import time
import urllib.request
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import click

from .calibrate import FingerprintTable, calibrate, render_html, render_text
from .dedup import Analysis, Deduplicator
from .exceptions import IndexNotFound, Interrupted, SimhashError
from .explain import explain as explain_texts
from .feeds import dedup_items, read_feed, spreadsheet_safe, write_feed
from .fingerprint import format_fingerprint
from .index import open_index
from .index.base import NearDuplicateIndex
from .settings import SimhashSettings
from .text import field_text
from .transfer import export_index, import_index, read_header

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class SimhashGroup(click.Group):
    """Turns library errors into one-line CLI errors."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SimhashError as e:
            raise click.ClickException(str(e)) from None


class Env:
    """What every command needs: the project's settings and the index URI."""

    def __init__(self, overrides: dict[str, str]) -> None:
        self.overrides = overrides
        self._settings: SimhashSettings | None = None
        self._scrapy_settings: Any = None

    @property
    def scrapy_settings(self) -> Any:
        if self._scrapy_settings is None:
            from scrapy.utils.project import get_project_settings

            settings = get_project_settings()
            settings.setdict(self.overrides, priority="cmdline")
            self._scrapy_settings = settings
        return self._scrapy_settings

    @property
    def settings(self) -> SimhashSettings:
        if self._settings is None:
            self._settings = SimhashSettings.from_settings(self.scrapy_settings)
        return self._settings

    def text_of(self, value: object) -> str:
        """The text the pipeline would fingerprint for an item field holding *value*."""
        return field_text(value, extractor=self.settings.html_extractor)

    def index_uri(self, given: str | None) -> str:
        if given:
            return given
        if self.settings.index_uri:
            return self.settings.index_uri
        from scrapy.utils.project import data_path

        return "sqlite:///" + data_path("simhash.db")

    def open(self, given: str | None, *, read_only: bool = False) -> NearDuplicateIndex:
        """Open an existing index (never creates one); *read_only* for commands that only
        read, which then also work on a read-only file system."""
        return open_index(self.index_uri(given), create=False, read_only=read_only)

    def deduplicator(self, index: NearDuplicateIndex) -> Deduplicator:
        """A deduplicator for *index* with the project's fingerprinter, which must produce
        the index's kind of fingerprints."""
        config = self.settings
        theirs, ours = index.parameters.features, config.fingerprinter.signature
        if theirs != ours:
            raise click.ClickException(
                f"The index {index.location} holds fingerprints of features {theirs!r}, but "
                f"these settings make {ours!r}; run the command in the project that built the "
                "index, or set the same SIMHASH_TOP_N/SIMHASH_SECRET with -s"
            )
        return Deduplicator(
            index,
            config.fingerprinter,
            min_terms=config.min_terms,
            max_length=config.max_text_length,
        )


def _parse_set(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict:
    overrides = {}
    for value in values:
        name, sep, setting = value.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"{value!r} is not NAME=VALUE", ctx, param)
        overrides[name.strip()] = setting
    return overrides


@click.group(cls=SimhashGroup, context_settings=CONTEXT_SETTINGS)
@click.option(
    "-s",
    "--set",
    "overrides",
    multiple=True,
    metavar="NAME=VALUE",
    callback=_parse_set,
    help="Override a setting of the project, e.g. -s SIMHASH_TOP_N=64 (repeatable).",
)
@click.version_option(package_name="scrapy-simhash")
@click.pass_context
def main(ctx: click.Context, overrides: dict[str, str]) -> None:
    """Inspect and maintain a scrapy-simhash index, calibrate its threshold, and remove
    near-duplicates from exported feeds.

    The index is --index URI if given, else SIMHASH_INDEX_URI of the Scrapy project in
    the working directory, else .scrapy/simhash.db.

    \b
    Example:
      scrapy-simhash stats
      scrapy-simhash --set SIMHASH_TOP_N=64 check page.html --index sqlite:///crawl.db
    """
    ctx.obj = Env(overrides)


def index_option(f):
    return click.option(
        "--index",
        "index_uri",
        metavar="URI",
        help="The index: sqlite:///path.db, redis://host:6379/0, a path. "
        "[default: the project's SIMHASH_INDEX_URI, else .scrapy/simhash.db]",
    )(f)


def raw_csv_option(f):
    return click.option(
        "--raw-csv",
        is_flag=True,
        help="Write CSV cells as they are. By default a cell starting with = + - @ (or a "
        "tab or carriage return) gets a leading ' so that spreadsheets do not run it as "
        "a formula.",
    )(f)


def json_option(f):
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for programs.")(f)


def _echo_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def _when(epoch: float | None) -> str:
    if epoch is None:
        return "-"
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_cutoff(value: str, now: float | None = None) -> float:
    """``30d``, ``12h``, ``90m``, ``2w``, ``45s`` (that long ago) or an ISO date/time
    (UTC unless it says otherwise) -> seconds since the epoch."""
    now = time.time() if now is None else now
    match = _DURATION.match(value)
    if match:
        return now - float(match.group(1)) * _UNITS[match.group(2).lower()]
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is neither a duration (30d, 12h, 90m, 2w) nor a date (2026-01-31)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


_DOCUMENT_NAME = re.compile(r"^\S+\.(?:html?|xhtml|xml|txt|md|jl|jsonl?)$", re.IGNORECASE)


def _read_source(source: str, env: Env) -> tuple[str, str]:
    """(label, text) of ``-`` (stdin), a file, an http(s)/file URL, or literal text. HTML
    is reduced to its visible text, as the pipeline does."""
    if source == "-":
        return "stdin", env.text_of(sys.stdin.read())
    if re.match(r"^(https?|file)://", source):
        try:
            with urllib.request.urlopen(source, timeout=30) as response:
                charset = response.headers.get_content_charset() or "utf-8"
                body = response.read().decode(charset, errors="replace")
        except (OSError, ValueError) as e:
            raise click.ClickException(f"Cannot fetch {source}: {e}") from None
        return source, env.text_of(body)
    path = Path(source)
    if len(source) < 4096 and "\n" not in source and path.is_file():
        try:
            raw = path.read_bytes()
        except OSError as e:
            raise click.ClickException(f"Cannot read {source}: {e.strerror}") from None
        return source, env.text_of(raw)
    if _DOCUMENT_NAME.match(source):
        # One word ending like a document's file name: a typo of a path, far more likely
        # than text to check (which can still come on stdin, as "-").
        raise click.ClickException(
            f"No such file: {source}. To check it as text, pass it on standard input: "
            f"echo '{source}' | scrapy-simhash check -"
        )
    label = source if len(source) <= 40 else source[:37] + "..."
    return repr(label), env.text_of(source)


def _describe_analysis(analysis: Analysis) -> str:
    if analysis.kind == "empty":
        return "no text"
    if analysis.kind == "short":
        return f"{analysis.terms} terms: too short for SimHash, matched on its exact text"
    return f"{analysis.terms} terms, fingerprint {format_fingerprint(analysis.value)}"


# -- stats -------------------------------------------------------------------------------


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
        count = exact = 0
        oldest = newest = None
        for page in index.pages():  # streamed: an index may hold millions
            count += 1
            exact += page.exact
            if oldest is None or page.added_at < oldest:
                oldest = page.added_at
            if newest is None or page.added_at > newest:
                newest = page.added_at
        drops = list(index.drops())
        plan, params = index.plan, index.parameters
        size = index.size()
        near_drops = Counter(d.distance for d in drops if not d.exact)
        data = {
            "index": index.location,
            "bytes": size,
            "pages": count,
            "fingerprints": count - exact,
            "exact_texts": exact,
            "oldest": oldest,
            "newest": newest,
            "max_distance": params.max_distance,
            "blocks": params.blocks,
            "tables": plan.table_count,
            "key_bits": sorted({plan.key_bits(t) for t in range(plan.table_count)}),
            "features": params.features,
            "drops": len(drops),
            "drops_exact": sum(d.exact for d in drops),
            "drops_by_distance": {str(d): n for d, n in sorted(near_drops.items())},
            "last_drop": drops[-1].at if drops else None,
        }
    if as_json:
        _echo_json(data)
        return
    size_text = f" ({size:,} bytes)" if size is not None else ""
    key_bits = "-".join(str(b) for b in data["key_bits"])
    by_distance = ", ".join(f"{d}: {n}" for d, n in data["drops_by_distance"].items())
    click.echo(f"Index       {data['index']}{size_text}")
    click.echo(
        f"Pages       {data['pages']} ({data['fingerprints']} fingerprints, "
        f"{data['exact_texts']} exact texts)"
    )
    click.echo(f"Stored      {_when(data['oldest'])} .. {_when(data['newest'])}")
    click.echo(
        f"Parameters  max distance {params.max_distance}, {params.blocks} blocks, "
        f"{plan.table_count} tables of {key_bits}-bit keys"
    )
    click.echo(f"Features    {params.features}")
    click.echo(
        f"Drops       {data['drops']} ({data['drops'] - data['drops_exact']} near, "
        f"{data['drops_exact']} exact)" + (f"; by distance {by_distance}" if by_distance else "")
    )
    if drops:
        click.echo(f"Last drop   {_when(data['last_drop'])}")


# -- check -------------------------------------------------------------------------------


@main.command(short_help="Stored pages nearest to a page, file or text.")
@click.argument("source")
@index_option
@click.option(
    "--max-distance",
    type=click.IntRange(0, 64),
    help="Show stored pages up to this distance (beyond the index's own threshold, all "
    "stored fingerprints are scanned).  [default: the index's]",
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
        k = index.plan.max_distance if max_distance is None else max_distance
        stored = index.find(source) if source != "-" else []
        stored_fp = [p for p in stored if not p.exact]
        if stored_fp:
            label, fingerprint, kind = source, stored_fp[0].fingerprint, "simhash"
            what = f"stored page, fingerprint {format_fingerprint(fingerprint)}"
        elif stored:
            raise click.ClickException(
                f"{source} is stored as an exact-text entry (its text was too short for "
                "SimHash), so it has no near neighbours"
            )
        else:
            label, text = _read_source(source, env)
            dedup = env.deduplicator(index)
            analysis = dedup.analyse(text)
            kind, fingerprint, what = analysis.kind, analysis.value, _describe_analysis(analysis)
        matches: list[dict] = []
        nearest: list[dict] = []
        if kind == "simhash":
            table = FingerprintTable(index.pages())
            for distance, key, other in table.nearest(fingerprint, limit + len(stored_fp)):
                if key == source and other == fingerprint:
                    continue  # the stored page itself
                found = {"key": key, "distance": distance}
                (matches if distance <= k else nearest).append(found)
            matches, nearest = matches[:limit], nearest[: max(0, min(3, limit - len(matches)))]
        elif kind == "short":
            matches = [
                {"key": p.key, "distance": 0}
                for p in index.pages()
                if p.exact and p.fingerprint == fingerprint
            ][:limit]
        dropped_for = [
            {"key": d.key, "distance": d.distance, "at": d.at}
            for d in (index.drops() if stored else ())
            if d.kept_key == source
        ]
    if as_json:
        _echo_json(
            {
                "source": label,
                "kind": kind,
                "fingerprint": format_fingerprint(fingerprint),
                "max_distance": k,
                "matches": matches,
                "nearest_beyond": nearest,
                "dropped_as_its_duplicates": dropped_for,
            }
        )
        return
    click.echo(f"{label}: {what}")
    if kind == "short" and not matches:
        click.echo("No stored page has the same text.")
    elif kind == "simhash" and not matches:
        click.echo(f"No stored page within distance {k}.")
    if matches:
        duplicate_at = index.plan.max_distance
        click.echo(f"Stored pages within distance {k}:")
        for match in matches:
            flag = "  (a duplicate)" if match["distance"] <= duplicate_at else ""
            click.echo(f"  {match['distance']:>2}  {match['key']}{flag}")
    if nearest:
        click.echo("Nearest stored pages beyond it:")
        for match in nearest:
            click.echo(f"  {match['distance']:>2}  {match['key']}")
    if dropped_for:
        click.echo("Dropped as its duplicates (audit log):")
        for drop in dropped_for:
            click.echo(f"  {drop['distance']:>2}  {drop['key']}")


# -- explain -----------------------------------------------------------------------------


@main.command(short_help="Distance of two texts and the terms behind it.")
@click.argument("a")
@click.argument("b")
@index_option
@click.option("--top", default=12, show_default=True, help="Terms to list in each group.")
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
        index = env.open(index_uri, read_only=True)
    except IndexNotFound:
        config = env.settings
        index = open_index(
            "memory:",
            max_distance=config.max_distance,
            blocks=config.blocks,
            features=config.fingerprinter.signature,
        )
    with index:
        label_a, text_a = _read_source(a, env)
        label_b, text_b = _read_source(b, env)
        result = explain_texts(env.deduplicator(index), text_a, text_b, top=top)
    if as_json:
        _echo_json(result.as_dict())
        return
    click.echo(f"A  {label_a}: {_describe_analysis(result.a)}")
    click.echo(f"B  {label_b}: {_describe_analysis(result.b)}")
    if result.distance is not None:
        verdict = "near-duplicates" if result.duplicate else "different"
        click.echo(
            f"Distance {result.distance} (threshold {result.max_distance}): {verdict}. "
            f"Differing bits {list(result.differing_bits) or 'none'}, in blocks "
            f"{list(result.differing_blocks) or 'none'}."
        )
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


# -- dropped -----------------------------------------------------------------------------


@main.command(short_help="The audit log of dropped pages (table, CSV, JSON).")
@index_option
@click.option("--since", metavar="WHEN", help="Only drops since: 30d, 12h, 2026-01-31, ...")
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
    since: str | None,
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
    cutoff = parse_cutoff(since) if since else None
    with env.open(index_uri, read_only=True) as index:
        records = [
            r
            for r in index.drops(since=cutoff)
            if (kept is None or r.kept_key == kept) and (contains is None or contains in r.key)
        ]
    if limit is not None:
        records = records[-limit:]
    rows = [
        {
            "at": datetime.fromtimestamp(r.at, timezone.utc).isoformat(timespec="seconds"),
            "dropped": r.key,
            "kept": r.kept_key,
            "distance": r.distance,
            "exact": r.exact,
            "unchanged": r.unchanged,
        }
        for r in records
    ]
    if as_json:
        for row in rows:
            click.echo(json.dumps(row, ensure_ascii=False))
    elif as_csv:
        out = io.StringIO()
        writer = csv.DictWriter(
            out, fieldnames=["at", "dropped", "kept", "distance", "exact", "unchanged"]
        )
        writer.writeheader()
        for row in rows:
            writer.writerow(row if raw_csv else {k: spreadsheet_safe(v) for k, v in row.items()})
        click.echo(out.getvalue(), nl=False)
    elif not rows:
        click.echo("No drops recorded" + (" matching the filters." if records != [] else "."))
    else:
        for row in rows:
            how = "exact" if row["exact"] else f"d={row['distance']}"
            how = f"same {how}" if row["unchanged"] else how
            click.echo(f"{row['at']}  {how:<5}  {row['dropped']}  ->  {row['kept']}")
        click.echo(f"{len(rows)} drops.")


# -- export / import ---------------------------------------------------------------------


def _interrupted(done: str, rest: str) -> None:
    """Ctrl-C during a command that commits in batches: say how far it got, exit 130."""
    click.echo(
        f"Interrupted after {done}; those are committed and the index is consistent. "
        f"Run the command again to {rest}.",
        err=True,
    )
    raise click.exceptions.Exit(130)


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
        _echo_json({"index": location, "file": file, "pages": count, "bytes": size})
        return
    per_page = f", {size / count:.1f} bytes per page" if count else ""
    click.echo(f"Exported {count} pages from {location} to {file} ({size:,} bytes{per_page}).")


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
    header = read_header(file)
    uri = env.index_uri(index_uri)
    try:
        index = open_index(uri, create=False)
    except IndexNotFound:
        params = header.parameters
        index = open_index(
            uri, max_distance=params.max_distance, blocks=params.blocks, features=params.features
        )
    with index:
        try:
            added = import_index(index, file)
        except Interrupted as e:
            _interrupted(
                f"importing {e.done} pages", "import the rest (pages already stored are skipped)"
            )
        location = index.location
    skipped = header.pages - added
    if as_json:
        _echo_json({"index": location, "file": file, "added": added, "skipped": skipped})
        return
    click.echo(f"Imported {added} pages from {file} into {location} ({skipped} already stored).")


# -- expire / forget / vacuum ------------------------------------------------------------


@main.command(short_help="Remove pages (or audit-log entries) stored before a time.")
@click.option(
    "--older-than",
    "older_than",
    required=True,
    metavar="WHEN",
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
    older_than: str,
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
    cutoff = parse_cutoff(older_than)
    noun, verb = ("audit-log entries", "recorded") if drops else ("pages", "stored")
    with env.open(index_uri) as index:
        total = count = 0
        if drops:
            for record in index.drops():  # one read of the log, which can be long
                total += 1
                count += record.at < cutoff
        else:
            count = sum(1 for page in index.pages() if page.added_at < cutoff)
        if count and not dry_run and not yes:
            click.confirm(
                f"Remove {count} {noun} {verb} before {_when(cutoff)} from {index.location}?",
                abort=True,
            )
        removed = 0
        if count and not dry_run:
            try:
                removed = index.expire_drops(cutoff) if drops else index.expire(cutoff)
            except Interrupted as e:
                _interrupted(f"removing {e.done} {noun}", "remove the rest")
        left = total - removed if drops else len(index)
    if as_json:
        _echo_json({"before": cutoff, "matching": count, "removed": removed, "left": left})
    elif dry_run:
        click.echo(f"{count} {noun} were {verb} before {_when(cutoff)}; nothing removed (dry run).")
    else:
        click.echo(f"Removed {removed} {noun} {verb} before {_when(cutoff)}; {left} left.")


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
        for url in urls:
            removed = index.forget(url)
            if removed:
                click.echo(
                    f"Forgot {url} ({removed} stored {'entry' if removed == 1 else 'entries'})."
                )
            else:
                missing.append(url)
    if missing:
        raise click.ClickException(f"No page is stored under: {', '.join(missing)}")


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


# -- dedup -------------------------------------------------------------------------------


def _sibling(path: Path, tag: str, suffix: str | None = None) -> Path:
    return path.with_name(f"{path.stem}.{tag}{suffix or path.suffix}")


@main.command(short_help="Remove near-duplicates from an exported feed.")
@click.argument("feed", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the kept items (.jl/.json/.csv).  [default: FEED.kept.<ext>]",
)
@click.option(
    "--report",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the duplicates report (.csv/.jl/.json).  [default: FEED.duplicates.csv]",
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
@raw_csv_option
@json_option
@click.pass_obj
def dedup(
    env: Env,
    feed: Path,
    output: Path | None,
    report: Path | None,
    fields: str | None,
    key_field: str | None,
    index_uri: str,
    raw_csv: bool,
    as_json: bool,
) -> None:
    """Remove near-duplicate items from an exported FEED (.jl, .json or .csv, as Scrapy's
    feed exports write them): the first item of each group is kept.

    \b
    Example:
      scrapy-simhash dedup items.jl
      scrapy-simhash dedup items.csv --fields title,body --key link -o clean.csv
    """
    config = env.settings
    text_fields = [f.strip() for f in fields.split(",") if f.strip()] if fields else None
    text_fields = text_fields or list(config.text_fields)
    key_field = key_field or config.key_field
    output = output or _sibling(feed, "kept")
    report = report or _sibling(feed, "duplicates", ".csv")
    if output.resolve() == feed.resolve():
        raise click.ClickException(f"--output {output} would overwrite the feed; choose another")
    items = read_feed(feed)
    kept, duplicates = [], []
    kinds: Counter[str] = Counter()
    with open_index(
        index_uri,
        max_distance=config.max_distance,
        blocks=config.blocks,
        features=config.fingerprinter.signature,
    ) as index:
        dedup_ = env.deduplicator(index)
        results = dedup_items(
            items,
            dedup_,
            text_fields=text_fields,
            key_field=key_field,
            extractor=config.html_extractor,
        )
        with click.progressbar(
            results, length=len(items), label="Checking", file=sys.stderr
        ) as bar:
            for result in bar:
                kinds[result.verdict.analysis.kind] += 1
                match = result.verdict.match
                if match is None:
                    kept.append(result.item)
                    continue
                exact = result.verdict.analysis.kind == "short"
                unchanged = result.verdict.status == "unchanged"
                index.record_drop(result.key, match, exact=exact, unchanged=unchanged)
                duplicates.append(
                    {
                        "item": result.number,
                        "key": result.key,
                        "duplicate_of": match.key,
                        "distance": match.distance,
                        "match": "exact" if exact else "near",
                    }
                )
    write_feed(output, kept, raw_csv=raw_csv)
    write_feed(report, duplicates, raw_csv=raw_csv)
    summary = {
        "items": len(items),
        "kept": len(kept),
        "dropped": len(duplicates),
        "dropped_near": sum(d["match"] == "near" for d in duplicates),
        "dropped_exact": sum(d["match"] == "exact" for d in duplicates),
        "no_text": kinds["empty"],
        "output": str(output),
        "report": str(report),
    }
    if as_json:
        _echo_json(summary)
        return
    click.echo(
        f"{summary['items']} items: kept {summary['kept']}, dropped {summary['dropped']} "
        f"({summary['dropped_near']} near-duplicates, {summary['dropped_exact']} exact "
        f"short texts); {summary['no_text']} without text (kept)."
    )
    click.echo(f"Kept items: {output}")
    click.echo(f"Duplicates report: {report}")


# -- calibrate ---------------------------------------------------------------------------


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
@click.option("--seed", default=0, show_default=True, help="Seed of the random sample.")
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
    the threshold before changing SIMHASH_MAX_DISTANCE.

    \b
    Example:
      scrapy-simhash calibrate
      scrapy-simhash calibrate --sample 5000 --html calibration.html
    """
    with env.open(index_uri, read_only=True) as index:
        result = calibrate(index, sample=sample, pairs=pairs, seed=seed)
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
        _echo_json(result.as_dict())
    else:
        click.echo(render_text(result))
    if html_path is not None:
        click.echo(f"HTML report: {html_path}", err=as_json)


if __name__ == "__main__":  # pragma: no cover
    main()
