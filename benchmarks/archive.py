"""Deduplicating an archive: how fast the batch job decides, against peers measured in the
same run.

    python benchmarks/archive.py                     # all three parts
    python benchmarks/archive.py --only local --records 10000000
    python benchmarks/archive.py --only e2e --stories 8000
    python benchmarks/archive.py --only e2e --html --stories 400   # web pages
    python benchmarks/archive.py --only dask --stories 4000

* local: the local mode on precomputed fingerprints (random, with 10% near copies and
  chains), records decided per second; goal: 10M records in <= 2 min on one core.
* e2e: text -> decisions per core (reading a JSON-lines feed of Reuters stories with
  planted copies, fingerprinting, deciding) against the crawl-time analysis of the same
  items (the pipeline's analyse_fields) and against the crawl-time check (analysis and
  an in-memory index, as ``dedup_items``); goal: >= 0.9x the analysis. ``--html``: web
  pages of the extraction corpus (HTML through the built-in extractor) instead, a fifth
  of them twice.
* dask: the same feed on a LocalCluster of 1, then 2 worker processes: the speed-up, and
  whether the decisions are identical.

Needs ../shared/corpora for e2e and dask.
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from scrapy_simhash.tools.archive.batch import SIMHASH, Batch, decide_batch  # noqa: E402
from scrapy_simhash.tools.archive.candidates import choose_plan  # noqa: E402

CORPORA = ROOT.parent / "shared" / "corpora"


def planted(n: int, seed: int = 1) -> Batch:
    """*n* fingerprints: random, 10% near copies (1-3 bits) of earlier ones, 1% exact
    copies, and a chain of 21 one-bit steps every 100,000 records; no keys (each record
    is its own)."""
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 2**64 - 1, n, dtype=np.uint64)
    copies = rng.choice(n, n // 10, replace=False)
    sources = rng.integers(0, n, len(copies))
    flips = np.zeros(len(copies), dtype=np.uint64)
    for _ in range(3):
        flips ^= np.uint64(1) << rng.integers(0, 64, len(copies)).astype(np.uint64)
    values[copies] = values[sources] ^ flips
    exact = rng.choice(n, n // 100, replace=False)
    values[exact] = values[rng.integers(0, n, len(exact))]
    for start in range(0, n - 21, 100_000):
        for step in range(1, 21):
            values[start + step] = values[start + step - 1] ^ np.uint64(1 << (step * 7 % 64))
    return Batch.of(np.arange(n), np.full(n, SIMHASH), values)


def bench_local(records: int) -> None:
    batch = planted(records)
    plan, why = choose_plan(3, None, records)
    print(f"local mode, {records:,} precomputed fingerprints; plan: {why}")
    gc.collect()
    started = time.perf_counter()
    cpu = time.process_time()
    outcomes = decide_batch(batch, Batch.of_pages([]), plan, 3)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    kept = int(outcomes.kept.sum())
    print(
        f"  decided {records:,} records in {wall:.1f} s wall, {cpu:.1f} s CPU "
        f"({records / wall:,.0f} records/s); kept {kept:,}, dropped {records - kept:,}; "
        f"{outcomes.how}"
    )
    # The goal is one core's work: CPU seconds (the sorts run on one thread), since the
    # wall time of a shared machine counts the other jobs' turns too.
    scaled = cpu * 10_000_000 / records
    goal = "met" if scaled <= 120 else "missed"
    print(f"  goal 10M in <= 120 s of one core: {goal} ({scaled:.0f} CPU s scaled to 10M)")


def page_items(pages: int) -> list[dict]:
    """Web pages as a crawl's items (their HTML in ``content``), a fifth of them twice."""
    import tarfile

    items = []
    with tarfile.open(CORPORA / "web-extraction" / "pages.tar.xz", "r|xz") as archive:
        for member in archive:
            if member.isfile() and len(items) < pages:
                html = archive.extractfile(member).read().decode("utf-8", "replace")
                items.append({"url": member.name, "title": "", "content": html})
    copies = [{**item, "url": item["url"] + "?copy"} for item in items[::5]]
    return items + copies


def story_items(stories: int) -> list[dict]:
    from archive_feeds import edited

    rng = random.Random(5)
    texts = []
    for path in sorted((CORPORA / "reuters21578").glob("reut2-*.sgm")):
        texts += read_stories_file(path)
        if len(texts) >= stories:
            break
    texts = texts[:stories]
    items = []
    for n, text in enumerate(texts):
        items.append({"url": f"https://a.example/{n}", "title": "", "content": text})
        if len(text.split()) > 40 and rng.random() < 0.2:
            copy = edited(text, rng, rng.randint(1, 3))
            items.append({"url": f"https://b.example/{n}", "title": "", "content": copy})
    return items


def read_stories_file(path: Path) -> list[str]:
    import html
    import re

    raw = path.read_text(encoding="latin-1")
    return [html.unescape(m) for m in re.findall(r"<BODY>(.*?)</BODY>", raw, re.S)]


def bench_e2e(stories: int, runs: int, html: bool = False) -> None:
    from scrapy_simhash.dedup import Deduplicator, analyse_fields
    from scrapy_simhash.index import open_index
    from scrapy_simhash.settings import SimhashSettings
    from scrapy_simhash.tools.archive import ArchiveJob, run_local
    from scrapy_simhash.tools.feeds import dedup_items, read_feed, write_feed

    config = SimhashSettings.from_settings({})
    params = config.analysis_params
    job = ArchiveJob(
        params,
        tuple(config.text_fields),
        config.key_field,
        config.max_distance,
        min_share=config.min_share,
    )
    items = page_items(stories) if html else story_items(stories)
    with tempfile.TemporaryDirectory() as tmp:
        feed = Path(tmp) / "items.jl"
        write_feed(feed, items)

        def analysis():
            for item in read_feed(feed):
                analyse_fields(params, [item.get(f) for f in config.text_fields])

        def check():
            with open_index("memory:", features=config.fingerprinter.signature) as index:
                dedup = Deduplicator(index, config.fingerprinter, min_terms=config.min_terms)
                for _ in dedup_items(
                    read_feed(feed),
                    dedup,
                    text_fields=config.text_fields,
                    key_field=config.key_field,
                    extractor=config.html_extractor,
                ):
                    pass

        def batch():
            run_local([str(feed)], job)

        # One pass first: the segmenter's dictionary and the term caches fill on the first
        # texts, for every peer alike.
        analysis()
        peers = {
            "archive job (text -> decisions)": batch,
            "crawl-time analysis": analysis,
            "crawl-time check (analysis + index)": check,
        }
        times: dict[str, list[float]] = {name: [] for name in peers}
        for _ in range(runs):
            for name, fn in peers.items():
                cpu = time.process_time()
                fn()
                times[name].append(time.process_time() - cpu)
    n = len(items)
    what = "web pages and copies" if html else "Reuters stories and near copies"
    print(f"end to end, {n:,} items ({what}), CPU seconds, median of {runs} alternating runs:")
    median = {name: sorted(t)[len(t) // 2] for name, t in times.items()}
    for name, t in median.items():
        print(f"  {name:38s} {t:6.2f} s  {n / t:8,.0f} items/s per core")
    ratio = median["crawl-time analysis"] / median["archive job (text -> decisions)"]
    print(
        f"  archive job / crawl-time analysis speed: {ratio:.2f}x (goal >= 0.9x: "
        f"{'met' if ratio >= 0.9 else 'missed'})"
    )


def bench_dask(stories: int, html: bool = False) -> None:
    import logging

    from distributed import Client, LocalCluster

    from scrapy_simhash.settings import SimhashSettings
    from scrapy_simhash.tools.archive import ArchiveJob
    from scrapy_simhash.tools.archive.distributed import run_dask
    from scrapy_simhash.tools.feeds import write_feed

    logging.getLogger("distributed").setLevel(logging.ERROR)
    config = SimhashSettings.from_settings({})
    job = ArchiveJob(
        config.analysis_params,
        tuple(config.text_fields),
        config.key_field,
        config.max_distance,
        min_share=config.min_share,
    )
    items = page_items(stories) if html else story_items(stories)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        feed = Path(tmp) / "items.jl"
        write_feed(feed, items)
        blocksize = max(feed.stat().st_size // 8, 1)
        for workers in (1, 2):
            with (
                LocalCluster(
                    n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
                ) as cluster,
                Client(cluster) as client,
            ):
                client.run(lambda: __import__("scrapy_simhash.dedup"))
                started = time.perf_counter()
                result = run_dask([str(feed)], job, client, blocksize=blocksize)
                results[workers] = (time.perf_counter() - started, result.outcomes)
    print(f"dask, {len(items):,} items in 8 partitions, LocalCluster of 1 and 2 processes:")
    for workers, (wall, _) in results.items():
        print(f"  {workers} worker(s): {wall:.1f} s")
    speedup = results[1][0] / results[2][0]
    a, b = results[1][1], results[2][1]
    same = all(
        np.array_equal(getattr(a, f), getattr(b, f))
        for f in ("order", "kept", "status", "matched", "distance")
    )
    print(f"  speed-up 2 vs 1 worker: {speedup:.2f}x; decisions identical: {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=["local", "e2e", "dask"])
    parser.add_argument("--records", type=int, default=10_000_000)
    parser.add_argument("--stories", type=int, default=6000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--html", action="store_true", help="e2e on web pages (HTML)")
    args = parser.parse_args()
    if args.only in (None, "local"):
        bench_local(args.records)
    if args.only in (None, "e2e", "dask") and not CORPORA.is_dir():
        sys.exit(f"needs the shared corpora at {CORPORA}")
    if args.only in (None, "e2e"):
        bench_e2e(args.stories, args.runs, args.html)
    if args.only in (None, "dask"):
        bench_dask(args.stories, args.html)


if __name__ == "__main__":
    main()
