"""``scrapy-simhash report``: one self-contained HTML page of an index's clusters.

Each cluster is a kept page with its copies and why each was dropped; a copy stands
beside its kept page with the shared passages marked (where their texts can be had, see
:mod:`.page_texts`); then histograms of distances and shares, drops per site and the
``calibrate`` what-if. On a large index the page holds the largest clusters only (the
rest are in ``--clusters``), and says so.
"""

from __future__ import annotations

import html
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from ..index.base import DropRecord, NearDuplicateIndex
from ..index.skip_rules import skip_rules_for
from ..url_rules import SkippedRequest
from .calibrate import Calibration, calibrate
from .calibration_views import advice, histogram_svg
from .clusters import Cluster, clusters_of, reason_of, why
from .passages import mark, marked_html, own_passages, shared_fraction
from .report_page import SCRIPT, STYLE, bar_chart, link

__all__ = ["Limits", "Report", "gather", "render", "site_of"]

#: Shown per site table: the sites with the most drops.
SITES_SHOWN = 200


@dataclass
class Report:
    """What the page shows, gathered in one pass over the index's pages and drops."""

    location: str
    max_distance: int
    pages: int
    clusters: list[Cluster]  #: every cluster with a copy, largest first
    calibration: Calibration
    advice: list[str]
    site_pages: Counter[str] = field(default_factory=Counter)
    site_drops: Counter[str] = field(default_factory=Counter)
    #: Requests not downloaded per site: predicted copies (``SIMHASH_SKIP_PREDICTED``).
    site_skips: Counter[str] = field(default_factory=Counter)
    #: The stored pages' keys, in the index's order, where asked for (``keys=True``).
    keys: list[str] = field(default_factory=list)

    @property
    def copies(self) -> list[DropRecord]:
        return [drop for cluster in self.clusters for drop in cluster.copies]


def site_of(key: str) -> str:
    """The host of a URL key (``file:`` for local files), else ``(no site)``."""
    parts = urlsplit(key)
    if parts.netloc:
        return parts.netloc.lower()
    return f"{parts.scheme}:" if parts.scheme else "(no site)"


def gather(
    index: NearDuplicateIndex, *, sample: int = 500, seed: int = 0, keys: bool = False
) -> Report:
    """The clusters, per-site counts and calibration of *index* (its pages streamed);
    with *keys*, the stored pages' keys too (for ``--clusters``)."""
    site_pages: Counter[str] = Counter()
    stored: list[str] = []
    for page in index.pages():
        site_pages[site_of(page.key)] += 1
        if keys:
            stored.append(page.key)
    clusters = clusters_of(index.drops())
    result = calibrate(index, sample=sample, pairs=3, seed=seed)
    report = Report(
        index.location,
        index.plan.max_distance,
        sum(site_pages.values()),
        clusters,
        result,
        advice(result, index.location),
        site_pages,
        keys=stored,
    )
    report.site_drops.update(site_of(drop.key) for drop in report.copies)
    report.site_skips.update(site_of(skip.url) for skip in skipped_requests(index))
    return report


def skipped_requests(index: NearDuplicateIndex) -> list[SkippedRequest]:
    """The requests a crawl of *index* did not download, predicted copies of kept pages
    (none for a backend that keeps no URL rules)."""
    try:
        return skip_rules_for(index).skipped()
    except TypeError:
        return []


@dataclass
class Limits:
    """How much of a large index the page holds."""

    clusters: int = 500  #: the largest clusters
    copies: int = 50  #: rows of copies per cluster
    compared: int = 3  #: copies per cluster shown beside their kept page
    chars: int = 6000  #: characters of each text shown


def render(
    report: Report,
    texts: Callable[[str], str | None] | None = None,
    *,
    limits: Limits | None = None,
    clusters_file: str | None = None,
) -> str:
    """The HTML page; *texts* gives a page's text by key (``None``: unknown)."""
    limits = limits or Limits()
    title = f"scrapy-simhash report: {report.location}"
    body = [
        f"<h1>{html.escape(title)}</h1>",
        _summary(report, limits, clusters_file),
        '<p><label>Filter by URL or site: <input id="filter" type="search" '
        'placeholder="e.g. example.com/news"></label> '
        '<span class="note"><span id="shown">0</span> clusters shown</span></p>',
        "<h2>Clusters</h2>",
        _legend(),
        *(_cluster(c, report, texts, limits) for c in report.clusters[: limits.clusters]),
        _charts(report),
        _sites(report),
        _what_if(report),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>\n<body>\n"
        + "\n".join(body)
        + f"\n<script>{SCRIPT}</script>\n</body></html>\n"
    )


def _summary(report: Report, limits: Limits, clusters_file: str | None) -> str:
    total, copies = len(report.clusters), len(report.copies)
    shown = min(total, limits.clusters)
    reasons = Counter(reason_of(d) for d in report.copies)
    how = {"distance": "by distance", "contained": "contained", "exact": "exact texts"}
    said = ", ".join(f"{n} {how[r]}" for r, n in sorted(reasons.items())) or "none"
    rest = (
        f"the rest are in {html.escape(clusters_file)}"
        if clusters_file
        else "write them all, one row per page, with <code>--clusters FILE</code>"
    )
    capped = (
        f" This page shows the <strong>{shown} largest</strong> of {total} clusters; {rest}."
        if shown < total
        else f" Every cluster is shown; {rest}."
    )
    skips = sum(report.site_skips.values())
    saved = (
        f" <strong>{skips}</strong> requests were not downloaded, predicted copies of kept "
        "pages (<code>SIMHASH_SKIP_PREDICTED</code>; <code>scrapy-simhash rules "
        "--skipped</code> lists them)."
        if skips
        else ""
    )
    return (
        f'<p id="summary">{report.pages} stored pages; <strong>{copies}</strong> pages '
        f"dropped as copies ({said}) in <strong>{total}</strong> clusters, each a kept "
        f"page and its copies; threshold (max distance) {report.max_distance}.{capped}"
        f"{saved} Written {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}.</p>"
    )


def _legend() -> str:
    return (
        '<p class="note"><mark>shared text</mark>: passages both pages hold; '
        "<ins>own text</ins>: passages only this page holds. A copy's share is the part of "
        "its text that the kept page holds, as measured when it was dropped.</p>"
    )


def _cluster(cluster: Cluster, report: Report, texts: Callable | None, limits: Limits) -> str:
    keys = " ".join([cluster.kept, *(d.key for d in cluster.copies)]).lower()
    rows = [
        f'<tr class="copy"><td>{link(d.key)}</td><td>{reason_of(d)}</td>'
        f'<td class="n">{d.distance}</td><td class="n">{_share(d.share)}</td>'
        f"<td>{html.escape(why(d, report.max_distance))}</td></tr>"
        for d in cluster.copies[: limits.copies]
    ]
    more = len(cluster.copies) - limits.copies
    if more > 0:
        rows.append(f'<tr><td colspan="5">and {more} more (see --clusters)</td></tr>')
    compared = cluster.copies[: limits.compared] if texts is not None else []
    pairs = [_pair(d, cluster.kept, texts, limits) for d in compared]
    return (
        f'<section class="cluster" id="c{cluster.id}" data-filter="{html.escape(keys)}">'
        f"<h3>Cluster {cluster.id}: kept {link(cluster.kept)} "
        f'<span class="note">({_copies(len(cluster.copies))})</span></h3>'
        "<table><thead><tr><th>copy (dropped)</th><th>reason</th><th>distance</th>"
        "<th>share in kept</th><th>why</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
        + "".join(pairs)
        + "</section>"
    )


def _copies(n: int) -> str:
    return "1 copy" if n == 1 else f"{n} copies"


def _share(share: float | None) -> str:
    return "" if share is None else f"{share:.0%}"


def _pair(drop: DropRecord, kept: str, texts: Callable | None, limits: Limits) -> str:
    copy_text = texts(drop.key) if texts else None
    kept_text = texts(kept) if texts and copy_text is not None else None
    if copy_text is None or kept_text is None:
        missing = drop.key if copy_text is None else kept
        return (
            f'<p class="note notext">No text of {html.escape(missing)} to compare (give the '
            "crawl's items with --feed, or --fetch for http pages).</p>"
        )
    copy_text, kept_text = copy_text[: limits.chars], kept_text[: limits.chars]
    copy_marked, kept_marked = mark(copy_text, kept_text)
    own = own_passages(copy_marked)
    listed = "".join(f"<li><ins>{html.escape(t)}</ins></li>" for t in own)
    said = (
        f"its own text, longest first:</p><ul>{listed}</ul>" if own else "no text of its own.</p>"
    )
    return (
        f'<p class="note own">{html.escape(drop.key)}: '
        f"{shared_fraction(copy_marked):.0%} of the words shown are in the kept page; "
        + said
        + '<div class="pair">'
        f'<div class="copy-text"><h4>copy: {html.escape(drop.key)}</h4>'
        f"{marked_html(copy_marked)}</div>"
        f'<div class="kept-text"><h4>kept: {html.escape(kept)}</h4>'
        f"{marked_html(kept_marked)}</div></div>"
    )


def _charts(report: Report) -> str:
    near = [d for d in report.copies if not d.exact]
    top = max([d.distance for d in near] + [report.max_distance])
    by_distance = Counter(d.distance for d in near)
    distances = [(str(d), by_distance.get(d, 0)) for d in range(top + 1)]
    shares = Counter(min(9, int(d.share * 10)) for d in report.copies if d.share is not None)
    share_bars = [(f"{10 * b}-{10 * b + 10}%", shares.get(b, 0)) for b in range(10)]
    return (
        '<h2>Distances and shares of the copies</h2><div class="charts">'
        + bar_chart(distances, label="copies by distance", colour="#d9534f", css_class="distances")
        + bar_chart(
            share_bars, label="copies by share in kept page", colour="#5b8c5a", css_class="shares"
        )
        + "</div>"
    )


def _sites(report: Report) -> str:
    drops, skips = report.site_drops, report.site_skips
    sites = sorted(drops.keys() | skips.keys(), key=lambda site: (-drops[site], site))
    rows = [
        f'<tr data-filter="{html.escape(site.lower())}"><td>{html.escape(site)}</td>'
        f'<td class="n">{drops[site]}</td><td class="n">{skips[site]}</td>'
        f'<td class="n">{report.site_pages.get(site, 0)}</td></tr>'
        for site in sites[:SITES_SHOWN]
    ]
    more = len(sites) - SITES_SHOWN
    note = f'<p class="note">and {more} more sites.</p>' if more > 0 else ""
    return (
        "<h2>Drops per site</h2><table><thead><tr><th>site</th><th>copies dropped</th>"
        "<th>requests skipped</th><th>pages kept</th></tr></thead><tbody>"
        + ("".join(rows) or '<tr><td colspan="4">No drops.</td></tr>')
        + "</tbody></table>"
        + note
    )


def _what_if(report: Report) -> str:
    result = report.calibration
    steps = "\n".join(report.advice) or "Nothing to change: no pairs near the threshold."
    return (
        "<h2>What another threshold would keep and drop</h2>"
        f'<p class="note">From <code>scrapy-simhash calibrate</code>: the nearest kept '
        f"neighbour of {result.sampled} of {result.stored} stored pages "
        '(<span class="key" style="background:#337ab7"></span>) and the drops by distance '
        '(<span class="key" style="background:#d9534f"></span>).</p>'
        f"<figure>{histogram_svg(result)}</figure><pre>{html.escape(steps)}</pre>"
    )
