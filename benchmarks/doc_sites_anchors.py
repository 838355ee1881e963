"""False drops on two documentation sites, with and without paragraph anchors.

    python benchmarks/doc_sites_anchors.py              # both sites, anchors on and off
    python benchmarks/doc_sites_anchors.py --anchors on

Data: ``../shared/corpora/doc-sites`` (Python 3.11's and PostgreSQL 15's HTML
documentation, 1,699 pages). Nearly every page is a distinct page sharing its site's
template, notes, code samples and footers with its siblings: a trap for anything that
matches a fragment a page shares with others. Each site's pages are checked in archive
order, as a crawl would meet them, by the pipeline's analysis and check-and-insert
(default settings, built-in extractor) on an in-memory index. A drop is a *false drop*
unless the two pages' extracted texts are near-copies: word 4-shingle Jaccard >= 0.8, or
the dropped page's shingles 90% or more in the kept one's (a real containment).
"""

from __future__ import annotations

import argparse
import re
import sys
import tarfile
from pathlib import Path

from scrapy_simhash import open_index
from scrapy_simhash.analysis.fingerprint import Fingerprinter
from scrapy_simhash.anchors import DEFAULT_ANCHORS
from scrapy_simhash.dedup import Deduplicator, analyse_text
from scrapy_simhash.extract.extractors import get_extractor

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpora" / "doc-sites"
SITES = ("python-3.11", "postgresql-15")
_WORD = re.compile(r"\w+")


def shingles(text: str) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return {tuple(words[i : i + 4]) for i in range(max(len(words) - 3, 1))}


def pages(site: str) -> list[tuple[str, str]]:
    with tarfile.open(CORPUS / f"{site}.tar.xz") as archive:
        return [
            (member.name, archive.extractfile(member).read().decode("utf-8", "replace"))
            for member in archive
            if member.isfile() and member.name.endswith(".html")
        ]


def measure(site: str, anchors: bool) -> dict:
    extract = get_extractor("builtin")
    texts: dict[str, str] = {}
    drops = []
    with open_index("memory:") as index:
        dedup = Deduplicator(index, Fingerprinter(), anchors=DEFAULT_ANCHORS if anchors else 0)
        for name, html in pages(site):
            texts[name] = extract(html)
            verdict = dedup.check(analyse_text(dedup, texts[name]), name)
            if verdict.is_duplicate:
                drops.append((name, verdict.match.key, verdict.test))
    false = []
    for name, kept, test in drops:
        a, b = shingles(texts[name]), shingles(texts[kept])
        jaccard = len(a & b) / len(a | b) if a | b else 1.0
        inside = len(a & b) / len(a) if a else 1.0
        if jaccard < 0.8 and inside < 0.9:
            false.append((name, kept, test, jaccard, inside))
    return {"pages": len(texts), "drops": drops, "false": false}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--anchors", choices=["on", "off", "both"], default="both")
    args = parser.parse_args(argv)
    if not CORPUS.is_dir():
        print(f"{CORPUS} is missing: this benchmark needs shared/corpora/doc-sites")
        return 1
    modes = {"on": [True], "off": [False], "both": [False, True]}[args.anchors]
    print("| site | anchors | pages | drops | of them by containment | false drops |")
    print("|---|---|---:|---:|---:|---:|")
    details = []
    for site in SITES:
        for anchors in modes:
            r = measure(site, anchors)
            contained = sum(test == "contained" for *_, test in r["drops"])
            print(
                f"| {site} | {'on' if anchors else 'off'} | {r['pages']} | {len(r['drops'])} "
                f"| {contained} | {len(r['false'])} |",
                flush=True,
            )
            details += [(site, anchors, *f) for f in r["false"]]
    for _, anchors, name, kept, test, jaccard, inside in details:
        print(
            f"- false drop ({'anchors' if anchors else 'no anchors'}, {test}): {name} -> "
            f"{kept}, Jaccard {jaccard:.2f}, {inside:.0%} of its shingles in the kept page"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
