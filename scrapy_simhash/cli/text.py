"""``text``: the text the pipeline fingerprints for a page, field by field, and why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import click

from ..analysis.fingerprint import format_fingerprint
from ..dedup import analyse_text
from ..extract.extractors import FALLBACK_REASONS
from ..index import open_index
from ..tools.fingerprinted import field_reports
from ..tools.readings import (
    StoredReading,
    as_analysed,
    assumption,
    page_readings,
    stored_reading,
)
from ..tools.sources import read_source
from .main import (
    FINGERPRINT_SETTINGS,
    INDEX_SETTINGS,
    Env,
    describe_analysis,
    echo_json,
    honours,
    index_option,
    json_option,
    main,
)


@honours(
    INDEX_SETTINGS | FINGERPRINT_SETTINGS,
    "it reads a page as the pipeline would, with the project's fingerprinting settings",
)
@main.command(short_help="The text fingerprinted for a page, and why that text.")
@click.argument("source", required=False)
@click.option(
    "--stored",
    metavar="KEY",
    help="A stored page: KEY (its URL) is read again and its fingerprint compared with "
    "the one stored under KEY.",
)
@index_option
@json_option
@click.pass_obj
def text(
    env: Env, source: str | None, stored: str | None, index_uri: str | None, as_json: bool
) -> None:
    """The text the pipeline fingerprints for SOURCE, and why it is that text.

    SOURCE is a file (HTML or text), an http(s) or file URL, a JSON item (a file holding
    one object, as a feed writes items), literal text, or - for stdin. A page is read as
    the item a spider yields for it: its <title> in a title field of SIMHASH_TEXT_FIELDS
    (title, headline, name), the page in the others; a JSON item is read as it is. Each
    HTML field is reduced by SIMHASH_EXTRACTOR, which may keep a wider text than the
    article (the page's own blocks, its text without chrome): the reason is shown.

    \b
    Example:
      scrapy-simhash text saved-page.html
      scrapy-simhash text --stored https://docs.example/genindex-Y.html
      scrapy-simhash -s SIMHASH_TEXT_FIELDS=html text item.json --json
    """
    if (source is None) == (stored is None):
        raise click.UsageError("Give SOURCE or --stored KEY (one of them).")
    config = env.settings
    label, raw = read_source(stored or source, lambda value: value)  # type: ignore[arg-type]
    if isinstance(raw, bytes | bytearray):
        raw = bytes(raw).decode("utf-8", errors="replace")
    found = None
    if stored is not None:
        with env.open(index_uri, read_only=True) as index:
            stored_pages = index.find(stored)
            record = stored_pages[-1].analysed if stored_pages else None
            readings = page_readings(raw, config, url=stored, analysed=record)
            config = as_analysed(config, record)
            dedup = env.deduplicator(index)
            max_distance = index.plan.max_distance
            found = stored_reading(readings, stored_pages, dedup)
            reading = found.reading if found else readings[0]
            analysis = found.analysis if found else analyse_text(dedup, reading.text)
    else:
        readings = page_readings(raw, config)
        reading = readings[0]
        with open_index("memory:", features=config.fingerprinter.signature) as index:
            analysis = analyse_text(env.deduplicator(index), reading.text)
    item = reading.item
    reports = field_reports(item, config)
    verdict = _verdict(found, max_distance if found else 0, config.min_share)
    assumed = assumption(readings, found)
    if stored is None and assumed:
        assumed = "assumed: a spider may take another title; --stored URL tries each"
    shown = Shown(label, config, reports, analysis, reading, found, assumed, verdict)
    if as_json:
        echo_json(_as_json(shown))
        return
    _echo_text(shown, stored)


@dataclass
class Shown:
    """What ``text`` shows of one source."""

    label: str
    config: Any
    reports: list
    analysis: Any
    reading: Any
    found: StoredReading | None
    assumed: str
    verdict: tuple[bool, str]


def _as_json(shown: Shown) -> dict[str, Any]:
    label, config, reports, analysis = shown.label, shown.config, shown.reports, shown.analysis
    reading, found, assumed, verdict = shown.reading, shown.found, shown.assumed, shown.verdict
    fingerprinted = reading.text
    return {
        "source": label,
        "text_fields": list(config.text_fields),
        "extractor": config.extractor_name,
        "fields": [
            {"name": r.name, "how": r.how, "fallback": r.fallback, "chars": len(r.text)}
            for r in reports
        ],
        "fallback": analysis.fallback,
        "kind": analysis.kind,
        "terms": analysis.terms,
        "fingerprint": format_fingerprint(analysis.value),
        "read_as": reading.how or None,
        # Nothing assumed of the very text the crawl analysed (its hash is recorded).
        "assumed": None if found and found.same_text else assumed,
        "stored": None
        if found is None
        else {
            "fingerprint": format_fingerprint(found.page.fingerprint),
            "exact": found.page.exact,
            "same": found.same,
            "distance": found.distance,
            "share": found.share,
            "holds": verdict[0],
            "same_text": found.same_text,
            "analysed": None
            if found.page.analysed is None
            else {
                "fields": list(found.page.analysed.fields),
                "extractor": found.page.analysed.extractor,
                "version": found.page.analysed.version,
            },
        },
        "text": str(fingerprinted),
    }


def _echo_text(shown: Shown, stored: str | None) -> None:
    label, config, reports, analysis = shown.label, shown.config, shown.reports, shown.analysis
    reading, found, assumed, verdict = shown.reading, shown.found, shown.assumed, shown.verdict
    fingerprinted = reading.text
    click.echo(f"Source      {label}")
    for report in reports:
        if report.how == "missing":
            how = "missing or empty: nothing"
        elif report.how == "text":
            how = f"text, taken as it is: {len(report.text)} characters"
        else:
            how = f"HTML, {config.extractor_name} extractor: {len(report.text)} characters"
            if report.fallback:
                how += f", a wider text ({report.fallback}): " + FALLBACK_REASONS.get(
                    report.fallback, report.fallback
                )
            else:
                how += ", the main text"
        click.echo(f"Field       {report.name}: {how}")
    click.echo(f"Analysis    {describe_analysis(analysis)}")
    if reading.how or assumed:
        how = reading.how or "the fields as they are"
        click.echo(f"Read as     {how}" + (f" ({assumed})" if assumed else ""))
    if stored is not None:
        if found is None:
            click.echo(f"Stored      nothing under {stored}")
        else:
            click.echo(f"Stored      {format_fingerprint(found.page.fingerprint)}, {verdict[1]}")
    click.echo("")
    click.echo(str(fingerprinted))


def _verdict(found: StoredReading | None, max_distance: int, min_share: float) -> tuple[bool, str]:
    """Whether the stored page is this text, and in words; an unchanged page is never
    called changed: within the distance and held by the share check, it is the same."""
    if found is None:
        return False, ""
    if found.same_text:
        return True, "the same: this is the very text the crawl analysed"
    if found.same and found.same_text is False:
        return True, (
            "the same fingerprint, but not the very text the crawl analysed (another hash): "
            "the page as far as the index can tell"
        )
    if found.same:
        return True, "the same: this is the text that was fingerprinted"
    held = "" if found.share is None else f", the stored page holds {found.share:.0%} of this text"
    if found.holds(max_distance, min_share):
        return True, (
            f"distance {found.distance}{held}: the same page as far as the index can tell "
            "(the crawl's item held slightly other text than this reading of the page)"
        )
    if found.share is not None and found.share >= min_share:
        return False, (
            f"distance {found.distance}, but the stored page holds {found.share:.0%} of this "
            "text: the crawl's item held text this page does not (a field not read from "
            "the page), or the page lost text since"
        )
    if found.distance is not None:
        return False, (
            f"distance {found.distance}{held}: the page has changed since, or the item "
            "the crawl yielded held other fields"
        )
    return False, "not the same: the page has changed since, or the item held other fields"
