"""What a larger SIMHASH_MAX_DISTANCE buys and what it costs, one row per threshold.

    python benchmarks/quality.py --thresholds          # with the rest of quality.py
    python benchmarks/thresholds.py [--quick] [--index-pages N]

Buys: recall of each edit kind (quality.py's edits, on the Debian Handbook en-US and
zh-CN and on Reuters stories), and precision/recall/F1 over all pairs of the Handbook (six
languages) and of Reuters, ground truth as in quality.py. Our fingerprints are computed
once; only the threshold changes.

Costs: the block plan at the default ``blocks = k + 2`` (tables, key bits), the expected
candidates per probe at 1M and 10M pages (``tables * n / 2**key_bits`` for random
fingerprints), and, measured on a SQLite index of ``--index-pages`` random fingerprints
built for that k: bytes per page, lookups/s and the 99th percentile of one
check-and-insert.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from quality_data import CORPORA, corpus_docs, pct, scores, true_pairs
from quality_edits import edited_pairs
from quality_methods import Ours
from results import Tables, write_results

from scrapy_simhash import open_index
from scrapy_simhash.index.base import StoredPage
from scrapy_simhash.index.blocks import BlockPlan

THRESHOLDS = range(2, 9)


def index_costs(k: int, pages: int, probes: int = 2000) -> dict[str, float]:
    """Measured on a fresh SQLite index of *pages* random fingerprints built for *k*."""
    rng = random.Random(k)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "index.db")
        with open_index(str(path), max_distance=k) as index:
            index.add_pages(
                StoredPage(f"https://site.example/{i}", rng.getrandbits(64), 0.0)
                for i in range(pages)
            )
            started = time.perf_counter()
            for _ in range(probes):
                index.query(rng.getrandbits(64))
            lookups = probes / (time.perf_counter() - started)
            times = []
            for i in range(probes):
                fingerprint = rng.getrandbits(64)
                t = time.perf_counter()
                index.check_and_add(fingerprint, f"https://new.example/{i}")
                times.append(time.perf_counter() - t)
        size = path.stat().st_size
    return {
        "bytes": size / (pages + probes),
        "lookups": lookups,
        "p99": statistics.quantiles(times, n=100)[98] * 1000,
    }


def section_thresholds(edit_pairs, corpora, index_pages: int, tables: Tables) -> None:
    """*edit_pairs*: quality.py's edited pairs by edit kind; *corpora*: ``(title, docs,
    true pairs)``; the tables printed are kept in *tables*."""
    ours = Ours("builtin")
    signed: dict[int, object] = {}  # an original is in a pair of every edit kind

    def sign(doc):
        if id(doc) not in signed:
            signed[id(doc)] = ours.sign(doc)
        return signed[id(doc)]

    distances = {
        kind: [ours.distance(sign(a), ours.sign(b)) for a, b in kind_pairs]
        for kind, kind_pairs in edit_pairs.items()
        if kind_pairs
    }
    print("\n## (e) Per threshold: what a larger SIMHASH_MAX_DISTANCE buys\n")
    header = ["edit", "pairs"] + [f"k={k}" for k in THRESHOLDS]
    rows = [
        [kind, len(ds)] + [pct(sum(d <= k for d in ds) / len(ds)) for k in THRESHOLDS]
        for kind, ds in distances.items()
    ]
    print(tables.table("(e) recall by edit kind, per threshold", header, rows))
    print()
    rows = []
    for title, docs, truth in corpora:
        signatures = [ours.sign(d) for d in docs]
        for k in THRESHOLDS:
            flagged = ours.flagged(signatures, k)
            precision, recall, f1 = scores(flagged, truth)
            rows.append(
                [
                    title,
                    k,
                    len(flagged),
                    len(flagged - truth),
                    f"{precision:.3f}",
                    f"{recall:.3f}",
                    f"{f1:.3f}",
                ]
            )
    header = ["corpus", "k", "flagged", "false pos.", "precision", "recall", "F1"]
    print(tables.table("(e) all pairs, per threshold", header, rows))
    print("\n## (f) Per threshold: what the index pays (SQLite, default blocks = k + 2)\n")
    rows = []
    for k in THRESHOLDS:
        plan = BlockPlan(max_distance=k, blocks=k + 2)
        bits = min(plan.key_bits(t) for t in range(len(plan.tables)))
        expected = [len(plan.tables) * n / 2**bits for n in (1_000_000, 10_000_000)]
        costs = index_costs(k, index_pages)
        rows.append(
            [k, k + 2, len(plan.tables), bits]
            + [f"{c:.1f}" for c in expected]
            + [f"{costs['bytes']:.0f}", f"{costs['lookups']:,.0f}", f"{costs['p99']:.2f}"]
        )
    print(
        tables.table(
            "(f) what the index pays, per threshold",
            [
                "k",
                "blocks",
                "tables",
                "key bits (min)",
                "candidates/probe at 1M",
                "at 10M",
                f"bytes/page ({index_pages:,} pages)",
                "lookups/s",
                "check-and-insert p99 (ms)",
            ],
            rows,
        )
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a subset")
    parser.add_argument("--index-pages", type=int, default=50_000)
    parser.add_argument("--no-write", action="store_true", help="print only, write no results")
    args = parser.parse_args(argv)
    if not CORPORA.is_dir():
        sys.exit(f"no corpora at {CORPORA}")
    edit_docs, _, hb, rt = corpus_docs(args.quick)
    corpora = [
        (title, docs, true_pairs(docs))
        for title, docs in (("Debian Handbook", hb), ("Reuters-21578", rt))
    ]
    tables = Tables()
    section_thresholds(edited_pairs(edit_docs), corpora, args.index_pages, tables)
    if not args.no_write:
        name = "thresholds" + ("-quick" if args.quick else "")
        write_results(name, {"args": vars(args), "tables": tables.kept}, argv=argv)


if __name__ == "__main__":
    main()
