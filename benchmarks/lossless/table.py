"""The lossless table of docs/quality.md, made from this benchmark's results: per corpus,
the drops and the drops that kept less than the goal of the dropped page's text.

    python -m benchmarks.lossless.table        # print the rows, from results/*.json

A corpus crawled as several crawls (doc-sites: one per site; synthetic: one per site) is
the sum of its crawls; the handbook is its crawl of all six languages as one site (``all``),
where the copies between languages are.
"""

from __future__ import annotations

import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
#: corpus -> the crawls its row counts (None: all of them)
ROWS = {
    "doc-sites": None,
    "debian-handbook": ["debian-handbook/all"],
    "web-extraction": None,
    "synthetic": None,
}


def rows(results: Path = RESULTS) -> dict[str, tuple[int, int, int]]:
    """``corpus -> (pages, drops, drops below the goal)`` from the results of each corpus."""
    found = {}
    for corpus, wanted in ROWS.items():
        data = json.loads((results / f"{corpus}.json").read_text(encoding="utf-8"))
        crawls = [c for c in data["crawls"] if wanted is None or c["crawl"] in wanted]
        found[corpus] = (
            sum(c["pages"] for c in crawls),
            sum(c["drops"] for c in crawls),
            sum(c["lossy"] for c in crawls),
        )
    return found


def main() -> None:
    print("| corpus | pages | drops | below 0.8 |")
    print("|---|---:|---:|---:|")
    for corpus, (pages, drops, lossy) in rows().items():
        print(f"| {corpus} | {pages:,} | {drops} | {lossy} |")


if __name__ == "__main__":
    main()
