"""Thorough at our speed (issue #41): the crawl filter, the archive job and datatrove's
MinHash example pipeline on one feed of real text with planted copies; see README.md.

    python -m benchmarks.thorough [--originals 5000] [--copies 1000] [--seed 41]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchmarks.lossless.truth import GOAL, grams, share_of
from benchmarks.results import stamp
from benchmarks.thorough import feed as feeds
from benchmarks.thorough.feed import KINDS, Doc

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"
_SPACE = re.compile(r"\s+")
METHODS = ("crawl", "archive", "datatrove")
LABELS = {
    "crawl": "crawl filter (Deduplicator, memory:)",
    "archive": "archive job (dedup --engine local)",
    "datatrove": "datatrove MinHash example",
}


def truth_grams(text: str) -> frozenset[str]:
    """The ground truth's 5-gram set of a plain text: whitespace collapsed, case-folded
    (as :func:`benchmarks.lossless.truth.page_text` leaves a page's text)."""
    return grams(_SPACE.sub(" ", text).strip().casefold())


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# --- the three methods: each gives {removed url: [kept urls it matched]} and CPU seconds ---


def run_crawl(feed: list[Doc]) -> tuple[dict[str, list[str]], float]:
    from scrapy_simhash.dedup import analyse_fields
    from scrapy_simhash.settings import SimhashSettings

    start = time.process_time()
    settings = SimhashSettings()
    params = settings.analysis_params
    dedup = settings.open_deduplicator("memory:")
    removed = {}
    for doc in feed:
        # the pipeline's analysis of the item's fields (SIMHASH_TEXT_FIELDS = ["text"])
        verdict = dedup.check(analyse_fields(params, [doc.text]), doc.url)
        if verdict.is_duplicate:
            removed[doc.url] = [verdict.match.key]
    cpu = time.process_time() - start
    return removed, cpu


def _timed(command: list[str], log: Path) -> float:
    before = children_cpu()
    with log.open("w") as out:
        subprocess.run(command, check=True, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    return children_cpu() - before


def archive_command(path: Path) -> list[str]:
    return [
        str(Path(sys.executable).with_name("scrapy-simhash")),
        "dedup",
        str(path),
        "--fields",
        "text",
        "--key",
        "url",
        "--engine",
        "local",
        "-o",
        str(path.with_suffix(".kept.jl")),
        "--decisions",
        str(path.with_suffix(".decisions.csv")),
    ]


def run_archive(path: Path) -> tuple[dict[str, list[str]], float]:
    cpu = _timed(archive_command(path), path.with_suffix(".archive.log"))
    removed = {}
    with path.with_suffix(".decisions.csv").open(newline="", encoding="utf-8") as rows:
        for row in csv.DictReader(rows):
            if row["decision"] == "dropped":
                removed[row["key"]] = [row["matched_key"]]
    return removed, cpu


def minhash_command(path: Path, work: Path, tasks: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "benchmarks.thorough.minhash",
        str(path),
        str(work),
        "--tasks",
        str(tasks),
    ]


def _read_jsonl_gz(folder: Path):
    for part in sorted(folder.glob("*.jsonl.gz")):
        with gzip.open(part, "rt", encoding="utf-8") as lines:
            for line in lines:
                yield json.loads(line)


def run_datatrove(path: Path, tasks: int) -> tuple[dict[str, list[str]], float]:
    work = path.parent / f"{path.stem}.datatrove"
    cpu = _timed(minhash_command(path, work, tasks), path.with_suffix(".datatrove.log"))
    kept_of_cluster: dict[int, list[str]] = {}
    for doc in _read_jsonl_gz(work / "output"):
        cluster = doc["metadata"].get("minhash_cluster_id", -1)
        if cluster != -1:
            kept_of_cluster.setdefault(cluster, []).append(doc["id"])
    removed = {}
    for doc in _read_jsonl_gz(work / "removed"):
        removed[doc["id"]] = kept_of_cluster.get(doc["metadata"]["minhash_cluster_id"], [])
    return removed, cpu


def fixed_cost(folder: Path, feed: list[Doc], tasks: int, methods: list[str]) -> dict[str, float]:
    """CPU seconds of each command of *methods* on a feed of 20 documents: start-up and
    imports."""
    tiny = folder / "tiny.jl"
    feeds.write(feed[:20], tiny)
    commands = {
        "archive": archive_command(tiny),
        "datatrove": minhash_command(tiny, folder / "tiny.datatrove", tasks),
    }
    return {
        method: _timed(command, tiny.with_suffix(f".{method}.log"))
        for method, command in commands.items()
        if method in methods
    }


# --- scoring ----------------------------------------------------------------------------


def score(feed: list[Doc], removed: dict[str, list[str]]) -> dict:
    """The figures of one method (see README.md)."""
    by_url = {doc.url: doc for doc in feed}
    family = {doc.url: doc.source or doc.url for doc in feed}
    cache: dict[str, frozenset[str]] = {}

    def grams_of(url: str) -> frozenset[str]:
        if url not in cache:
            if len(cache) > 2000:
                cache.clear()
            cache[url] = truth_grams(by_url[url].text)
        return cache[url]

    removals = []
    for url, matches in removed.items():
        best, best_share = None, None
        for kept in matches:
            if kept not in by_url:
                continue
            value = share_of(grams_of(url), grams_of(kept))
            if best_share is None or value > best_share:
                best, best_share = kept, value
        removals.append(
            {
                "removed": url,
                "kept": best,
                "kind": by_url[url].kind or "original",
                "same_family": best is not None and family[best] == family[url],
                "share": best_share,
            }
        )
    caught = Counter()
    planted = Counter()
    # copies that hold >= GOAL of their text in their original (truth): the ones a
    # lossless filter may remove; an appended sentence on a short text can be more
    caught_lossless = Counter()
    planted_lossless = Counter()
    for doc in feed:
        if doc.kind is None:
            continue
        planted[doc.kind] += 1
        hit = doc.url in removed or (
            doc.source in removed and doc.url in removed[doc.source] and doc.url not in removed
        )
        if hit:
            caught[doc.kind] += 1
        if share_of(grams_of(doc.url), grams_of(doc.source)) >= GOAL:
            planted_lossless[doc.kind] += 1
            if hit:
                caught_lossless[doc.kind] += 1
    originals_removed = [r for r in removals if r["kind"] == "original"]
    other = [r for r in originals_removed if not r["same_family"]]
    measured = [r for r in removals if r["share"] is not None]
    lowest = sorted(measured, key=lambda r: r["share"])
    return {
        "planted": dict(planted),
        "caught": dict(caught),
        "recall": {k: caught[k] / planted[k] if planted[k] else None for k in KINDS},
        "recall_all": sum(caught.values()) / max(1, sum(planted.values())),
        "planted_lossless": dict(planted_lossless),
        "recall_lossless": {
            k: caught_lossless[k] / planted_lossless[k] if planted_lossless[k] else None
            for k in KINDS
        },
        "recall_lossless_all": sum(caught_lossless.values())
        / max(1, sum(planted_lossless.values())),
        "removed": len(removed),
        "originals_removed": len(originals_removed),
        "originals_removed_for_own_copy": len(originals_removed) - len(other),
        "false_removals": sum(r["share"] is None or r["share"] < GOAL for r in other),
        "natural_lossless": sum(r["share"] is not None and r["share"] >= GOAL for r in other),
        "unmeasured": len(removals) - len(measured),
        "below_goal": sum(r["share"] < GOAL for r in measured),
        "below_goal_by_kind": dict(Counter(r["kind"] for r in measured if r["share"] < GOAL)),
        "lowest": lowest[:10],
        # every removal, compact: [removed, kept, kind, kept is of its family, share]
        "removals": [
            [
                r["removed"],
                r["kept"],
                r["kind"],
                r["same_family"],
                None if r["share"] is None else round(r["share"], 3),
            ]
            for r in removals
        ],
    }


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def table(results: dict, docs: int) -> str:
    methods = [m for m in METHODS if m in results]
    head = ["", *[LABELS[m] for m in methods]]
    rows = [
        *[
            [f"copies removed: {kind}", *[pct(results[m]["recall"][kind]) for m in methods]]
            for kind in KINDS
        ],
        ["copies removed: all four", *[pct(results[m]["recall_all"]) for m in methods]],
        *[
            [
                f"copies holding >= 0.8 in their original removed: {kind}",
                *[pct(results[m]["recall_lossless"][kind]) for m in methods],
            ]
            for kind in KINDS
        ],
        [
            "copies holding >= 0.8 in their original removed: all four",
            *[pct(results[m]["recall_lossless_all"]) for m in methods],
        ],
        ["documents removed", *[str(results[m]["removed"]) for m in methods]],
        [
            "false removals (original, match not its copy, share < 0.8)",
            *[str(results[m]["false_removals"]) for m in methods],
        ],
        [
            "natural near-duplicates removed (share >= 0.8)",
            *[str(results[m]["natural_lossless"]) for m in methods],
        ],
        [
            "removals below 0.8 by the truth (all kinds)",
            *[str(results[m]["below_goal"]) for m in methods],
        ],
        ["removals not measurable", *[str(results[m]["unmeasured"]) for m in methods]],
        ["CPU seconds", *[f"{results[m]['cpu']:.1f}" for m in methods]],
        [
            "documents per CPU-second",
            *[f"{docs / results[m]['cpu']:.0f}" for m in methods],
        ],
        [
            "documents per CPU-second, start-up subtracted",
            *[
                f"{docs / results[m]['cpu_net']:.0f}" if "cpu_net" in results[m] else "-"
                for m in methods
            ],
        ],
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


_ROW = re.compile(
    r'\[\n\s+("[^"\n]*"|null),\n\s+("[^"\n]*"|null),\n\s+("[^"\n]*"),\n\s+(true|false),'
    r"\n\s+([0-9.]+|null)\n\s+\]"
)


def dump(results: dict) -> str:
    """*results* as indented JSON with one line per removal row."""
    return _ROW.sub(r"[\1, \2, \3, \4, \5]", json.dumps(results, indent=1, ensure_ascii=False))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--originals", type=int, default=5000)
    parser.add_argument("--copies", type=int, default=1000, help="planted copies per kind")
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--min-chars", type=int, default=feeds.MIN_CHARS)
    parser.add_argument("--tasks", type=int, default=1, help="datatrove tasks and workers")
    parser.add_argument("--only", action="append", choices=METHODS)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    if not feeds.have_corpora():
        print(f"skipped: {feeds.CORPORA} lacks debian-handbook, doc-sites or web-extraction")
        return 0
    methods = args.only or list(METHODS)
    feed = feeds.build(args.originals, args.copies, args.seed, args.min_chars)
    by_url = {doc.url: doc for doc in feed}
    for line in feeds.describe(feed):
        print(line)
    held = Counter(
        d.kind
        for d in feed
        if d.kind and share_of(truth_grams(d.text), truth_grams(by_url[d.source].text)) >= GOAL
    )
    print("copies holding >= 0.8 of their text in their original (truth): " + str(dict(held)))
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="thorough-") as folder:
        path = Path(folder) / "feed.jl"
        feeds.write(feed, path)
        fixed = fixed_cost(Path(folder), feed, args.tasks, methods)
        for method in methods:
            print(f"running {LABELS[method]} ...", flush=True)
            if method == "crawl":
                removed, cpu = run_crawl(feed)
            elif method == "archive":
                removed, cpu = run_archive(path)
            else:
                removed, cpu = run_datatrove(path, args.tasks)
            results[method] = score(feed, removed)
            results[method]["cpu"] = cpu
            if method in fixed:
                results[method]["cpu_fixed"] = fixed[method]
                results[method]["cpu_net"] = max(1e-9, cpu - fixed[method])
            print(f"  {len(removed)} removed, {cpu:.1f} CPU s", flush=True)
    docs = len(feed)
    print()
    print(table(results, docs))
    ratio = None
    if "archive" in results and "datatrove" in results:
        ratio = results["datatrove"]["cpu"] / results["archive"]["cpu"]
        net = results["datatrove"]["cpu_net"] / results["archive"]["cpu_net"]
        print(
            f"\narchive job vs datatrove, documents per CPU-second: {ratio:.1f}x "
            f"({net:.1f}x with each command's start-up on 20 documents subtracted; goal >= 10x)"
        )
    for method, result in results.items():
        if result["lowest"]:
            low = ", ".join(
                f"{r['share']:.2f} ({r['kind']})" for r in result["lowest"][:5] if r["share"] < GOAL
            )
            if low:
                print(f"{LABELS[method]}: lowest shares {low}")
    if not args.no_write:
        RESULTS.mkdir(exist_ok=True)
        default = (args.originals, args.copies, args.seed, args.min_chars) == (
            5000,
            1000,
            41,
            feeds.MIN_CHARS,
        )
        if default and not args.only:
            name = "thorough.json"
        else:
            name = f"thorough-{args.originals}-{'-'.join(methods)}.partial.json"
        out = RESULTS / name
        out.write_text(
            dump(
                {
                    **stamp(argv),
                    "args": vars(args),
                    "documents": docs,
                    "feed": list(feeds.describe(feed)),
                    "archive_vs_datatrove_docs_per_cpu_s": ratio,
                    "results": results,
                },
            ),
            encoding="utf-8",
        )
        print(f"\nwritten to {out.relative_to(ROOT)}")
    return 0
