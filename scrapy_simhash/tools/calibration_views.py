"""What a calibration says, shown: the terminal's histogram, the advice on the threshold
and the HTML page (see :mod:`.calibrate` for how the figures are found)."""

from __future__ import annotations

import html

from .calibrate import Calibration, Pair
from .report_page import link

__all__ = ["advice", "histogram_svg", "render_html", "render_text"]


def render_text(result: Calibration, width: int = 40) -> str:
    """A histogram for the terminal, then the example pairs."""
    lines = [
        f"Nearest stored neighbour of {result.sampled} of {result.stored} stored pages, and "
        f"{sum(result.dropped.values())} drops from the audit log; "
        f"threshold {result.max_distance}"
        + (
            f" ({result.revisits} re-visits of unchanged pages left out)" if result.revisits else ""
        ),
        "",
        "distance  dropped  nearest",
    ]
    peak = max([*result.nearest.values(), *result.dropped.values(), 1])
    for d in result.distances:
        dropped, nearest = result.dropped.get(d, 0), result.nearest.get(d, 0)
        if not dropped and not nearest and d > result.max_distance + 1:
            continue  # empty rows far from the threshold say nothing
        bar = "x" * round(width * dropped / peak) + "#" * round(width * nearest / peak)
        marker = "  <- threshold" if d == result.max_distance else ""
        lines.append(f"{d:>8}  {dropped:>7}  {nearest:>7}  {bar}{marker}")
    lines += ["", "x: dropped (audit log), #: nearest kept neighbour (sample)"]
    if result.contained:
        lines.append(
            f"Not shown: {result.contained} drops of pages contained in a kept one (shared "
            "paragraphs, at any distance)"
        )
    if result.examples:
        lines += ["", "Example pairs:"]
        for d, pairs in result.examples.items():
            for pair in pairs:
                how = "dropped, kept" if pair.dropped else "kept,    kept"
                lines.append(f"  {d:>2}  {how}  {pair.key}  ~  {pair.other}")
    return "\n".join(lines)


#: How far above the threshold kept pairs are worth a look as missed copies.
ADVICE_RANGE = 3


def advice(result: Calibration, location: str) -> list[str]:
    """What the histogram says about the threshold, with the pairs on both sides of each
    change it mentions and what the change would keep and drop, and what to run, exactly
    as the user would type it.

    A larger distance is offered when kept pages have their nearest kept page just above
    the threshold (copies the index may be missing). A smaller one is offered only when
    kept pages come that near too: then the drops at the threshold sit among distinct
    pages. Drops at the threshold far below the nearest kept pages are in the gap between
    copies and distinct pages, where a threshold belongs; lowering it would only undo
    them (the example's re-dated repost at distance 3 is such a drop)."""
    return _larger(result, location) + _smaller(result)


def _larger(result: Calibration, location: str) -> list[str]:
    """The advice on a larger distance, where kept pages have their nearest kept page
    just above the threshold (see :func:`advice`), with the command that builds it."""
    k = result.max_distance
    above = [d for d in range(k + 1, k + 1 + ADVICE_RANGE) if result.nearest.get(d)]
    if not above:
        return []
    d = above[0]
    target = _beside(location, f"-k{d}")
    return [
        f"{result.nearest[d]} sampled pages have their nearest kept page at distance {d}. "
        f"A threshold of {d} would drop one page of each such pair, such as:",
        *_listed(result.pairs(d, dropped=False)),
        "and keep pages further apart"
        + _as_in(result, d + 1, dropped=False)
        + ". If the pairs it would drop are copies, build an index that drops them (the "
        "old index is only read), then set SIMHASH_INDEX_URI and SIMHASH_MAX_DISTANCE as "
        "it says:",
        f"  scrapy-simhash rebuild --index {location} --max-distance {d} --into {target}",
    ]


def _smaller(result: Calibration) -> list[str]:
    """The advice on the drops at the threshold (see :func:`advice`): a smaller distance
    where kept pages come as near, else keeping the threshold."""
    k = result.max_distance
    at_threshold = result.dropped.get(k, 0)
    if not (k > 0 and at_threshold):
        return []
    nearest_kept = result.nearest_kept
    would_keep = _listed(result.pairs(k, dropped=True))
    still = sum(n for d, n in result.dropped.items() if d < k)
    still_dropped = (
        f"and still drop the {still} drops at distance {k - 1} or less"
        + _as_in(result, k - 1, dropped=True, down=True)
        if still
        else "and drop nothing that is dropped now"
    )
    if nearest_kept is not None and nearest_kept <= k + ADVICE_RANGE:
        return [
            f"{_drops(at_threshold)} at distance {k}, and kept pages come as near as "
            f"{nearest_kept} to each other: the threshold is where distinct pages begin. "
            f"SIMHASH_MAX_DISTANCE = {k - 1} would keep the pages dropped at {k}, such as:",
            *would_keep,
            still_dropped + ".",
            "Only if the pairs it would keep are different pages, set in settings.py (the "
            "index answers any smaller distance, no rebuild):",
            f"  SIMHASH_MAX_DISTANCE = {k - 1}",
        ]
    apart = (
        f"the nearest kept pages are {nearest_kept} apart"
        if nearest_kept is not None
        else "no two kept pages were compared"
    )
    return [
        f"{_drops(at_threshold)} at distance {k} and {apart}: the threshold sits "
        "in the gap between copies and distinct pages; keep it. A smaller "
        f"SIMHASH_MAX_DISTANCE would keep the pages dropped at {k}, such as:",
        *would_keep,
        "Lower it only if those are different pages.",
    ]


def _drops(count: int) -> str:
    return f"{count} drop was" if count == 1 else f"{count} drops were"


def _listed(pairs: list[Pair]) -> list[str]:
    return [f"    {p.distance:>2}  {p.key}  ~  {p.other}" for p in pairs]


def _as_in(result: Calibration, start: int, *, dropped: bool, down: bool = False) -> str:
    """``" (as X ~ Y at distance d)"``: the first example pair at *start* or beyond
    (below, with *down*), or nothing when there is none."""
    distances = range(start, -1, -1) if down else range(start, max(result.distances) + 1)
    for d in distances:
        pairs = result.pairs(d, dropped=dropped)
        if pairs:
            return f" (as {pairs[0].key} ~ {pairs[0].other} at distance {d})"
    return ""


def _beside(location: str, suffix: str) -> str:
    """A path next to a SQLite file index (``pages.db`` -> ``pages-k5.db``), else a
    placeholder for the user to fill in."""
    path = location.removeprefix("sqlite:///")
    if "://" in path or path.startswith("memory:"):
        return "NEW-INDEX-URI"
    stem, dot, extension = path.rpartition(".")
    return f"{stem}{suffix}.{extension}" if dot and "/" not in extension else path + suffix


_SVG_WIDTH, _SVG_HEIGHT, _MARGIN = 760, 300, 40
_DROPPED_COLOUR, _NEAREST_COLOUR = "#d9534f", "#337ab7"


def histogram_svg(result: Calibration) -> str:
    distances = list(result.distances)
    peak = max([*result.nearest.values(), *result.dropped.values(), 1])
    plot_w, plot_h = _SVG_WIDTH - 2 * _MARGIN, _SVG_HEIGHT - 2 * _MARGIN
    slot = plot_w / len(distances)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_SVG_WIDTH}" height="{_SVG_HEIGHT}" '
        f'viewBox="0 0 {_SVG_WIDTH} {_SVG_HEIGHT}" role="img" '
        'aria-label="Histogram of distances">',
        f'<line x1="{_MARGIN}" y1="{_MARGIN + plot_h}" x2="{_MARGIN + plot_w}" '
        f'y2="{_MARGIN + plot_h}" stroke="#333"/>',
        f'<text x="{_MARGIN}" y="{_MARGIN - 12}" font-size="12">{peak} pages</text>',
    ]
    for n, d in enumerate(distances):
        x = _MARGIN + n * slot
        for offset, count, colour, name in (
            (0.1, result.dropped.get(d, 0), _DROPPED_COLOUR, "dropped"),
            (0.5, result.nearest.get(d, 0), _NEAREST_COLOUR, "nearest"),
        ):
            if count:
                h = max(1.0, plot_h * count / peak)
                parts.append(
                    f'<rect class="{name}" x="{x + offset * slot:.1f}" '
                    f'y="{_MARGIN + plot_h - h:.1f}" width="{0.4 * slot:.1f}" '
                    f'height="{h:.1f}" fill="{colour}"><title>distance {d}: {count} {name}'
                    "</title></rect>"
                )
        if len(distances) <= 33 or d % 2 == 0:
            parts.append(
                f'<text x="{x + slot / 2:.1f}" y="{_MARGIN + plot_h + 16}" font-size="11" '
                f'text-anchor="middle">{d}</text>'
            )
    threshold_x = _MARGIN + (result.max_distance + 1) * slot
    parts.append(
        f'<line class="threshold" x1="{threshold_x:.1f}" y1="{_MARGIN - 5}" '
        f'x2="{threshold_x:.1f}" y2="{_MARGIN + plot_h}" stroke="#000" '
        'stroke-dasharray="4 3"/>'
    )
    parts.append(
        f'<text x="{threshold_x + 4:.1f}" y="{_MARGIN + 6}" font-size="11">threshold '
        f"{result.max_distance}</text>"
    )
    parts.append(
        f'<text x="{_MARGIN + plot_w / 2}" y="{_SVG_HEIGHT - 6}" font-size="12" '
        'text-anchor="middle">Hamming distance</text></svg>'
    )
    return "\n".join(parts)


def render_html(result: Calibration, *, title: str = "scrapy-simhash calibration") -> str:
    """A self-contained HTML page (no scripts, no external files) with the histogram drawn
    in inline SVG and the example pairs in a table."""
    rows = []
    for d, pairs in result.examples.items():
        for pair in pairs:
            kind = "dropped / kept" if pair.dropped else "kept / kept"
            rows.append(
                f"<tr><td>{d}</td><td>{kind}</td><td>{link(pair.key)}</td>"
                f"<td>{link(pair.other)}</td></tr>"
            )
    table = "\n".join(rows) or '<tr><td colspan="4">No pairs yet.</td></tr>'
    drops = sum(result.dropped.values())
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; max-width: 60em; }}
table {{ border-collapse: collapse; }} td, th {{ border: 1px solid #ccc; padding: .3em .6em; }}
.key {{ display: inline-block; width: 1em; height: 1em; vertical-align: middle; }}
</style></head>
<body>
<h1>{html.escape(title)}</h1>
<p>Threshold (max distance) of the index: <strong>{result.max_distance}</strong>.
Nearest stored neighbour of {result.sampled} of {result.stored} stored pages, and
{drops} drops from the audit log.</p>
<p><span class="key" style="background:{_DROPPED_COLOUR}"></span> dropped pages, by their
distance to the page kept &nbsp;
<span class="key" style="background:{_NEAREST_COLOUR}"></span> kept pages, by the distance
to their nearest kept neighbour</p>
<figure>{histogram_svg(result)}</figure>
<p>Kept pairs just above the threshold that are really the same page suggest a higher
threshold; dropped pairs at the threshold that are different pages suggest a lower one.</p>
<h2>Example pairs</h2>
<table><thead><tr><th>distance</th><th>pages</th><th>page</th><th>matched / nearest</th></tr>
</thead><tbody>
{table}
</tbody></table>
</body></html>
"""
