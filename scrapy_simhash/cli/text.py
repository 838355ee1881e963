"""``text``: the text the pipeline fingerprints for a page, field by field, and why."""

from __future__ import annotations

import click

from ..analysis.fingerprint import format_fingerprint, hamming_distance
from ..dedup import analyse_text
from ..extract.extractors import FALLBACK_REASONS
from ..index import open_index
from ..tools.fingerprinted import field_reports, fingerprinted_text, item_from_source
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
    item = item_from_source(raw, config, url=stored or "")
    fingerprinted = fingerprinted_text(item, config)
    reports = field_reports(item, config)
    stored_pages = []
    if stored is not None:
        with env.open(index_uri, read_only=True) as index:
            stored_pages = index.find(stored)
            dedup = env.deduplicator(index)
            analysis = analyse_text(dedup, fingerprinted)
    else:
        with open_index("memory:", features=config.fingerprinter.signature) as index:
            analysis = analyse_text(env.deduplicator(index), fingerprinted)
    comparison = [
        {
            "fingerprint": format_fingerprint(page.fingerprint),
            "exact": page.exact,
            "same": page.fingerprint == analysis.value,
            "distance": None
            if page.exact or analysis.kind != "simhash"
            else hamming_distance(page.fingerprint, analysis.value),
        }
        for page in stored_pages
    ]
    if as_json:
        echo_json(
            {
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
                "stored": comparison,
                "text": str(fingerprinted),
            }
        )
        return
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
    if stored is not None:
        if not comparison:
            click.echo(f"Stored      nothing under {stored}")
        for entry in comparison:
            if entry["same"]:
                verdict = "the same: this is the text that was fingerprinted"
            elif entry["distance"] is not None:
                verdict = (
                    f"distance {entry['distance']} from this text: the page has changed since, "
                    "or the item the crawl yielded held other fields"
                )
            else:
                verdict = "not the same: the page has changed since, or the item held other fields"
            click.echo(f"Stored      {entry['fingerprint']}, {verdict}")
    click.echo("")
    click.echo(str(fingerprinted))
