"""Lossless drops (issue #41): for every drop the crawl filter makes, how much of the
dropped page's text does the kept page hold? Goal: at least 0.8 for every drop.

    python -m benchmarks.lossless                       # every corpus (a few minutes)
    python -m benchmarks.lossless --corpus synthetic    # one corpus (repeatable)
    python -m benchmarks.lossless --corpus doc-sites/python-3.11 --limit 200

See benchmarks/lossless/README.md for what is measured and the data it needs.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

if __package__ in (None, ""):  # run as a script: python benchmarks/lossless/run.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.lossless.corpora import CORPORA, CORPUS_DATA, ROOT, crawls
from benchmarks.lossless.pairs import PAIR_GOAL, PAIR_JACCARD, both_kept, close_pairs
from benchmarks.lossless.truth import GOAL, grams, page_text, share_of
from benchmarks.results import dump
from benchmarks.results import stamp as results_stamp
from scrapy_simhash.crawl.deduplicator import CrawlDeduplicator
from scrapy_simhash.settings import SimhashSettings

RESULTS = Path(__file__).resolve().parent / "results"
SEED = 41
#: The crawl's settings: the defaults, with the page's HTML in one item field.
SETTINGS = {"SIMHASH_TEXT_FIELDS": ["html"], "SIMHASH_INDEX_URI": "memory:"}
SHOWN = 10


def ordered(pages: list[tuple[str, str]], keep_order: bool, seed: int, limit: int | None):
    """The pages in the order the crawl meets them: shuffled with *seed* (from their
    keys' sorted order, so that the order does not depend on how they were read), unless
    the crawl's order is part of its case; the first *limit*."""
    if not keep_order:
        pages = sorted(pages)
        random.Random(seed).shuffle(pages)
    return pages[:limit] if limit else pages


def crawl(
    pages: list[tuple[str, str]], settings: dict = SETTINGS, site: str = ""
) -> tuple[list[dict], Counter, Counter]:
    """Every page through the decision the pipeline makes for an item ``{"url": key,
    "html": page}``: the crawl's analysis (:meth:`CrawlDeduplicator.analyse_here`: the
    field's HTML reduced by the default extractor) and the check-and-insert on an
    in-memory index. A key that is no URL is checked as a page of *site* (a host), as a
    crawl of that site would see it. Returns the drops, the count of each status and of
    each text kind."""
    config = SimhashSettings.from_settings(settings)
    prefix = f"https://{site}/" if site else ""

    def url(key: str) -> str:
        return key if "://" in key else prefix + key

    runner = CrawlDeduplicator(config, "memory:")
    dedup = runner.open_index()
    drops, statuses, kinds = [], Counter(), Counter()
    try:
        for key, html in pages:
            analysis = runner.analyse_here([html])
            verdict = dedup.check(analysis, url(key))
            statuses[verdict.status] += 1
            kinds[analysis.kind] += 1
            if not verdict.is_duplicate:
                continue
            match = verdict.match
            tool_share = getattr(match, "share", None)
            if tool_share is None:
                tool_share = getattr(verdict, "share", None)
            drops.append(
                {
                    "dropped": key,
                    "kept": match.key.removeprefix(prefix) if prefix else match.key,
                    "test": verdict.test,
                    "distance": match.distance,
                    "shared_anchors": len(match.shared),
                    "tool_share": tool_share,
                }
            )
    finally:
        runner.close()
    return drops, statuses, kinds


def measure(drops: list[dict], pages: list[tuple[str, str]]) -> None:
    """Add the ground-truth share (and both texts' lengths) to every drop."""
    html = dict(pages)
    texts: dict[str, str] = {}
    cache: dict[str, frozenset[str]] = {}

    def grams_of(key: str) -> frozenset[str]:
        if key not in cache:
            texts[key] = page_text(html[key])
            cache[key] = grams(texts[key])
        return cache[key]

    for drop in drops:
        dropped, kept = grams_of(drop["dropped"]), grams_of(drop["kept"])
        drop["share"] = round(share_of(dropped, kept), 4)
        drop["dropped_chars"] = len(texts[drop["dropped"]])
        drop["kept_chars"] = len(texts[drop["kept"]])


def run_crawl(name, load, keep_order, seed, limit, settings=SETTINGS) -> dict:
    started = time.perf_counter()
    pages = ordered(load(), keep_order, seed, limit)
    loaded = time.perf_counter()
    drops, statuses, kinds = crawl(pages, settings, name.replace("/", "-") + ".test")
    crawled = time.perf_counter()
    measure(drops, pages)
    lossy = [d for d in drops if d["share"] < GOAL]
    pairs = close_pairs({key: grams(page_text(html)) for key, html in pages})
    kept_pairs = both_kept(pairs, {d["dropped"] for d in drops})
    return {
        "crawl": name,
        "pages": len(pages),
        "order": "as generated" if keep_order else f"shuffled, seed {seed}",
        "statuses": dict(statuses),
        "kinds": dict(kinds),
        "drops": len(drops),
        "drops_by_test": dict(Counter(d["test"] for d in drops)),
        "lossy": len(lossy),
        "lossy_by_test": dict(Counter(d["test"] for d in lossy)),
        # Drops of a page with no ground-truth text: share 1.0 by convention, unmeasured.
        "unmeasured": sum(d["dropped_chars"] == 0 for d in drops),
        "seconds": {
            "load": round(loaded - started, 2),
            "crawl": round(crawled - loaded, 2),
            "truth": round(time.perf_counter() - crawled, 2),
        },
        "close_pairs": len(pairs),
        "both_kept": len(kept_pairs),
        "both_kept_pairs": kept_pairs,
        "all_drops": sorted(drops, key=lambda d: (d["share"], d["dropped"])),
    }


def report(result: dict) -> None:
    tests = ", ".join(f"{n} {t}" for t, n in sorted(result["drops_by_test"].items())) or "-"
    print(
        f"\n## {result['crawl']}: {result['pages']} pages, {result['drops']} drops ({tests}), "
        f"{result['lossy']} with share < {GOAL} (goal 0)"
        + (f", {result['unmeasured']} of a page with no text" if result["unmeasured"] else "")
        + "  "
        f"[{result['seconds']['crawl'] + result['seconds']['truth']:.0f} s]"
    )
    pairs, kept = result["close_pairs"], result["both_kept"]
    print(
        f"  pairs at least {PAIR_JACCARD} alike (5-gram Jaccard): {pairs}, both pages kept: "
        f"{kept}" + (f" ({kept / pairs:.1%}; goal {PAIR_GOAL:.0%})" if pairs else "")
    )
    for a, b, similar in result["both_kept_pairs"][:SHOWN]:
        print(f"  kept both  {similar:.3f}  {a}  {b}")
    for drop in result["all_drops"][:SHOWN]:
        tool = "" if drop["tool_share"] is None else f", tool share {drop['tool_share']:.2f}"
        print(
            f"  {drop['share']:.3f}  {drop['test']:<9} d={drop['distance']}  "
            f"{drop['dropped']} ({drop['dropped_chars']} ch) -> kept {drop['kept']} "
            f"({drop['kept_chars']} ch){tool}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.lossless", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--corpus",
        action="append",
        metavar="NAME",
        help=f"a corpus ({', '.join(CORPUS_DATA)}) or one crawl of it "
        "(e.g. debian-handbook/all, synthetic/shop); repeatable; default: every corpus",
    )
    parser.add_argument("--limit", type=int, help="the first N pages of each crawl (in order)")
    parser.add_argument("--seed", type=int, default=SEED, help=f"page order (default {SEED})")
    parser.add_argument(
        "--templates",
        action="store_true",
        help="learn each site's template (SIMHASH_SITE_TEMPLATES); "
        "results in <corpus>-templates.json",
    )
    parser.add_argument("--no-write", action="store_true", help="write no results file")
    args = parser.parse_args(argv)
    wanted = args.corpus or list(CORPUS_DATA)
    by_corpus: dict[str, list[str | None]] = {}
    for name in wanted:
        corpus, _, one = name.partition("/")
        if corpus not in CORPUS_DATA:
            parser.error(f"no corpus {corpus!r}; choose from {', '.join(CORPUS_DATA)}")
        if one and f"{corpus}/{one}" not in {name for name, *_ in crawls(corpus)}:
            known = ", ".join(name for name, *_ in crawls(corpus))
            parser.error(f"no crawl {name!r}; {corpus} has {known}")
        by_corpus.setdefault(corpus, []).append(one or None)
    settings = {**SETTINGS, "SIMHASH_SITE_TEMPLATES": True} if args.templates else SETTINGS
    stamp = {
        **results_stamp(argv),
        "settings": settings,
        "seed": args.seed,
        "limit": args.limit,
        "goal": GOAL,
    }
    print(f"commit {stamp['commit'][:12]}{' (dirty)' if stamp['dirty'] else ''}, {stamp['date']}")
    missing = 0
    for corpus, only in by_corpus.items():
        if not (CORPORA / CORPUS_DATA[corpus]).is_dir():
            print(f"\n{corpus}: skipped, {CORPORA / CORPUS_DATA[corpus]} is missing")
            missing += 1
            continue
        results = []
        for name, load, keep_order in crawls(corpus):
            if None not in only and name.split("/", 1)[1] not in only:
                continue
            results.append(run_crawl(name, load, keep_order, args.seed, args.limit, settings))
            report(results[-1])
        if not args.no_write:
            partial = args.limit or None not in only
            RESULTS.mkdir(exist_ok=True)
            suffix = ("-templates" if args.templates else "") + (".partial" if partial else "")
            path = RESULTS / f"{corpus}{suffix}.json"
            payload = {"corpus": corpus, **stamp, "crawls": results}
            path.write_text(dump(payload), "utf-8")
            print(f"\n(written to {path.relative_to(ROOT)})")
    return 1 if missing == len(by_corpus) else 0


if __name__ == "__main__":
    sys.exit(main())
