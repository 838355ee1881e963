"""How right are the fingerprints? Precision, recall and F1 on real pages, against peers.

    python benchmarks/quality.py              # ../shared/corpora: Handbook, Reuters, zh pairs
    python benchmarks/quality.py --quick      # a subset, in under two minutes
    python benchmarks/quality.py --pages DIR  # your own .html/.txt files
    python benchmarks/quality.py --anchors-only  # ours with and without anchors, MinHash LSH

Every method sees the same documents and calls a pair a duplicate in its own way:

* ours: ``scrapy_simhash`` by distance only (``SIMHASH_ANCHORS = False``: main text by
  SIMHASH_EXTRACTOR, TF-IDF top 128, 64-bit SimHash, distance <= 3; texts with fewer than 20
  distinct terms match exactly); also with the other extractors (``trafilatura``, ``none``);
* ours, anchors: at its defaults: the same, or one text contained in the other by its
  paragraph anchors (``scrapy_simhash.anchors``). Over all pairs of a corpus, an anchor
  held by more than ``MAX_ANCHOR_PAGES + 1`` of its documents is boilerplate (an index
  counts the pages stored before; a corpus at once is the same once it is in);
* ``simhash`` package: ``Simhash(text)`` with its defaults (character 4-grams), distance <= 3;
* trafilatura: ``trafilatura.deduplication.Simhash(text)``, distance <= 3;
* MinHash LSH: datasketch ``MinHashLSH(threshold=0.8, num_perm=128)`` over the same
  shingles as the ground truth (so it estimates the very measure the truth is defined by).

Peers get the main text of each page as the built-in extractor gives it, so that the
comparison is about fingerprinting; the extractor rows compare text extraction.

Ground truth, from the text itself: tokens are lower-cased words (scripts with spaces) and
single Han characters; shingles are 4 consecutive tokens; a pair is a near-duplicate when
the Jaccard similarity of the two shingle sets, computed exactly, is >= 0.8. The truth text
of an HTML page is all of its visible text minus the Debian Handbook's own template
(``#banner``, ``#title``, ``.docnav``; on other pages nothing is removed). All pairs with
Jaccard >= 0.8 are found exactly (prefix filtering), and every pair a method flags is scored.

Sections: (a) recall by edit kind on real pages; (b)+(c) precision/recall/F1 over all pairs
of distinct real pages, where the natural near-duplicates (untranslated handbook chapters,
re-sent Reuters stories) are the positives and same-template pages the traps; (d) short
texts (LCQMC, PAWS-X): the exact-match path, and what SimHash would have said.

The documents and the truth are in quality_data.py, the edits in quality_edits.py, the
methods in quality_methods.py (thresholds.py and feature_search.py use them too). The tables
printed are written to ``benchmarks/results/quality[-quick]-DATE.json`` (``--no-write``: not).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from quality_data import (
    CONTAINED,
    CORPORA,
    JACCARD,
    MAX_DISTANCE,
    SHINGLE,
    Doc,
    contained_pairs,
    corpus_docs,
    jaccard,
    pct,
    scores,
    true_pairs,
    user_docs,
)
from quality_edits import edited_pairs, lossless_recall
from quality_methods import Method, MinHashLSH, Ours, OursAnchors, OursShared, methods
from results import Tables, write_results
from thresholds import section_thresholds

from scrapy_simhash.analysis.fingerprint import Fingerprinter, simhash
from scrapy_simhash.anchors import contained
from scrapy_simhash.dedup import Analyser
from scrapy_simhash.extract.text import exact_form, normalize_text

# ---------------------------------------------------------------------------- reports


def section_edits(
    tables: Tables, docs: list[Doc], chosen: list[Method]
) -> dict[str, list[tuple[Doc, Doc]]]:
    """Print the recall of each edit kind; return the edited pairs."""
    pairs = edited_pairs(docs)
    print("\n## (a) Recall by edit kind: share of edited copies still within the threshold\n")
    header = ["edit", "pairs", "median Jaccard"] + [m.name for m in chosen]
    rows = []
    by_length: list[list[object]] = []
    lossless: list[list[object]] = []
    signs: dict[tuple[int, int], object] = {}
    for kind, kind_pairs in pairs.items():
        if not kind_pairs:
            continue
        js = [jaccard(a.truth, b.truth) for a, b in kind_pairs]
        row: list[object] = [kind, len(kind_pairs), f"{statistics.median(js):.2f}"]
        for mi, m in enumerate(chosen):
            found = []
            for a, b in kind_pairs:
                key = (mi, id(a))
                if key not in signs:
                    signs[key] = m.sign(a)
                found.append(m.same(signs[key], m.sign(b)))
            row.append(pct(sum(found) / len(kind_pairs)))
            if isinstance(m, Ours) and m.extractor_name == "builtin":
                by_length.append([kind, _anchors_label(m), *_recall_by_length(kind_pairs, found)])
            if isinstance(m, OursShared):
                lossless.append([kind, *lossless_recall(kind_pairs, found)])
        rows.append(row)
    print(tables.table("(a) recall by edit kind", header, rows))
    print("\n## (a2) Ours, with and without anchors: the same recall by length of the original\n")
    print(
        "The same edit is a larger share of a shorter text: a paragraph is a tenth of a "
        "2,000-character page and a fiftieth of a 10,000-character one.\n"
    )
    bands = [*(f"{label} chars" for label, _ in LENGTH_BANDS), "all >= 2,000 chars"]
    print(tables.table("(a2) recall by length", ["edit", "anchors", *bands], by_length))
    if lossless:
        print(
            "\n## (a3) Ours with the share check, 2,000+ chars: by the share the original holds\n"
        )
        head = ["edit", "original holds >= 0.8: found", "holds < 0.8 (kept by the rule): found"]
        print(tables.table("(a3) found by share held", head, lossless))
    return pairs


def _anchors_label(method: Ours) -> str:
    return "on" if isinstance(method, OursAnchors) else "off"


#: Bands of the original text's length (characters of its main text), for (a2).
LENGTH_BANDS = [
    ("< 2,000", 2000),
    ("2,000-5,000", 5000),
    ("5,000-10,000", 10000),
    (">= 10,000", 1 << 62),
]


def _recall_by_length(pairs: list[tuple[Doc, Doc]], found: list[bool]) -> list[str]:
    """'hits/pairs share' of *found* in each of the :data:`LENGTH_BANDS` of the original."""
    cells = []
    low = 0
    for _, high in LENGTH_BANDS:
        band = [ok for (a, _), ok in zip(pairs, found, strict=True) if low <= len(a.text) < high]
        cells.append(f"{sum(band)}/{len(band)} {pct(sum(band) / len(band))}" if band else "-")
        low = high
    band = [ok for (a, _), ok in zip(pairs, found, strict=True) if len(a.text) >= 2000]
    cells.append(f"{sum(band)}/{len(band)} {pct(sum(band) / len(band))}" if band else "-")
    return cells


def section_pairs(
    tables: Tables,
    title: str,
    docs: list[Doc],
    chosen: list[Method],
    note: str = "",
    truth: set[tuple[int, int]] | None = None,
    false_positives: bool = False,
) -> dict:
    """Print each method's scores over all pairs of *docs* (*truth*: their true pairs,
    computed here when not given; *false_positives*: and the first method's false pairs)."""
    start = time.perf_counter()
    truth = true_pairs(docs) if truth is None else truth
    identical = {(a, b) for a, b in truth if docs[a].truth == docs[b].truth}
    n = len(docs)
    print(f"\n## {title}\n")
    print(
        f"{n} documents, {n * (n - 1) // 2:,} pairs; {len(truth)} near-duplicate pairs "
        f"(shingle Jaccard >= {JACCARD}), {len(truth) - len(identical)} of them not "
        f"identical. {note}\n"
    )
    rows = []
    results = {}
    for m in chosen:
        t = time.perf_counter()
        flagged = m.flagged([m.sign(d) for d in docs])
        tp = flagged & truth
        precision, recall, f1 = scores(flagged, truth)
        nonident = truth - identical
        r_ni = len(tp & nonident) / len(nonident) if nonident else 1.0
        fp = flagged - truth
        rows.append(
            [
                m.name,
                len(flagged),
                len(fp),
                f"{precision:.3f}",
                f"{recall:.3f}",
                f"{f1:.3f}",
                f"{r_ni:.3f}",
                f"{time.perf_counter() - t:.1f}",
            ]
        )
        results[m.name] = (flagged, truth)
    print(
        tables.table(
            title,
            [
                "method",
                "flagged",
                "false pos.",
                "precision",
                "recall",
                "F1",
                "recall (not identical)",
                "s",
            ],
            rows,
        )
    )
    print(f"\n({time.perf_counter() - start:.0f} s)")
    wider = truth | contained_pairs(docs)
    print(
        f"\nWith a truth that counts containment too ({len(wider) - len(truth)} more pairs "
        f"where {CONTAINED:.0%} of the smaller text's shingles are in the larger: truncated "
        "copies, copies with text added around them):\n"
    )
    print(
        tables.table(
            f"{title}, containment counted",
            ["method", "flagged", "false pos.", "precision", "recall", "F1"],
            [
                [
                    name,
                    len(flagged),
                    len(flagged - wider),
                    *(f"{x:.3f}" for x in scores(flagged, wider)),
                ]
                for name, (flagged, _) in results.items()
            ],
        )
    )
    if false_positives:
        flagged, _ = results[chosen[0].name]
        print(f"\n{chosen[0].name}'s false positives (shingle Jaccard, pages):\n")
        for a, b in sorted(flagged - truth):
            print(f"- {jaccard(docs[a].truth, docs[b].truth):.2f} {docs[a].name} ~ {docs[b].name}")
        if not flagged - truth:
            print("(none)")
    return results


def section_natural(tables: Tables, docs: list[Doc], results: dict) -> None:
    """Untranslated handbook chapters vs en-US: same file name, other language."""
    by_name = {d.name: i for i, d in enumerate(docs)}
    rows = []
    for lang in ("hr-HR", "ro-RO", "tr-TR"):
        pairs = set()
        for d in docs:
            if d.name.startswith(lang + "/"):
                other = "en-US/" + d.name.split("/", 1)[1]
                if other in by_name:
                    a, b = sorted((by_name[other], by_name[d.name]))
                    pairs.add((a, b))
        if not pairs:
            continue
        some = next(iter(results.values()))[1]
        positives = pairs & some
        row: list[object] = [f"en-US vs {lang}", len(positives)]
        for flagged, _ in results.values():
            row.append(f"{len(positives & flagged)}/{len(positives)}")
        rows.append(row)
    if rows:
        print("\n### (c) Untranslated chapters found (one page in two languages, Jaccard >= 0.8)\n")
        title = "(c) untranslated chapters found"
        print(tables.table(title, ["pair", "true", *results], rows))


def section_short(tables: Tables, limit: int | None) -> None:
    print("\n## (d) Short texts: Chinese sentence pairs (LCQMC test, PAWS-X zh test)\n")
    fingerprinter = Fingerprinter()
    dedup = Analyser(fingerprinter)  # at its defaults: with anchors
    rows = []
    for name, path, skip in (
        ("LCQMC", CORPORA / "zh-pairs" / "lcqmc-test.tsv", 0),
        ("PAWS-X zh", CORPORA / "zh-pairs" / "pawsx-zh-test.tsv", 1),
    ):
        lines = path.read_text(encoding="utf-8").splitlines()[skip:][:limit]
        stats: dict[str, Counter] = {"0": Counter(), "1": Counter()}
        for line in lines:
            cols = line.split("\t")
            s1, s2, label = cols[-3], cols[-2], cols[-1].strip()
            a, b = dedup.analyse(s1), dedup.analyse(s2)
            c = stats[label]
            c["pairs"] += 1
            c["short"] += a.kind == "short" and b.kind == "short"
            dropped = a.kind == b.kind and (
                (a.kind == "short" and a.value == b.value)
                or (a.kind == "simhash" and (a.value ^ b.value).bit_count() <= MAX_DISTANCE)
            )
            c["dropped"] += dropped
            c["dropped, texts differ"] += dropped and exact_form(s1) != exact_form(s2)
            both = a.anchors and b.anchors
            hashes, chars = a.anchors.shared_with(b.anchors.hashes) if both else ((), 0)
            anchored = dropped or bool(
                both and contained(len(hashes), chars, a.anchors.summary, b.anchors.summary)
            )
            c["dropped with anchors, texts differ"] += anchored and exact_form(s1) != exact_form(s2)
            forced = [
                simhash(
                    fingerprinter.term_extractor.top_terms(
                        fingerprinter.term_extractor.term_counts(normalize_text(s))
                    )
                )
                for s in (s1, s2)
            ]
            c["simhash<=3"] += (forced[0] ^ forced[1]).bit_count() <= MAX_DISTANCE and bool(
                forced[0] or forced[1]
            )
        for label, c in stats.items():
            meaning = "same intent/paraphrase" if label == "1" else "different meaning"
            rows.append(
                [
                    f"{name}, label {label} ({meaning})",
                    c["pairs"],
                    pct(c["short"] / c["pairs"]),
                    c["dropped"],
                    c["dropped, texts differ"],
                    c["dropped with anchors, texts differ"],
                    pct(c["simhash<=3"] / c["pairs"]),
                ]
            )
    print(
        tables.table(
            "(d) short texts",
            [
                "pairs",
                "n",
                "both on the exact path",
                "dropped by ours",
                "of them different texts",
                "different texts dropped with anchors",
                "SimHash alone would drop (d<=3)",
            ],
            rows,
        )
    )
    print(
        "\nOurs drops a pair of short texts only when their normalised texts are equal (the "
        "datasets hold some byte-identical pairs, even under label 0); a drop of two different "
        "texts would be a false drop. Label-1 pairs are paraphrases, not copies: keeping them "
        "is right for a page de-duplicator."
    )


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a subset (< 2 minutes)")
    parser.add_argument("--pages", type=Path, help="your own directory of .html/.txt files")
    parser.add_argument("--no-peers", action="store_true", help="ours only")
    parser.add_argument(
        "--anchors-only",
        action="store_true",
        help="ours by distance, with paragraph anchors, with anchors and the share check (the "
        "defaults), and MinHash LSH; no other peer or extractor",
    )
    parser.add_argument(
        "--thresholds",
        action="store_true",
        help="also (e)+(f): each threshold from 2 to 8, what it buys and costs "
        "(benchmarks/thresholds.py)",
    )
    parser.add_argument(
        "--false-positives", action="store_true", help="list ours' false pairs of each corpus"
    )
    parser.add_argument("--no-write", action="store_true", help="print only, write no results")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    if args.anchors_only:
        chosen = [Ours("builtin"), OursAnchors("builtin"), OursShared("builtin"), MinHashLSH()]
    else:
        chosen = methods(extractors=True, peers=not args.no_peers)
    print(
        f"# Quality: distance <= {MAX_DISTANCE}; "
        f"truth = {SHINGLE}-token shingle Jaccard >= {JACCARD}"
    )
    tables = Tables()
    if args.pages:
        docs = user_docs(args.pages)
        section_edits(tables, docs, chosen)
        title = f"(b) All pairs of {args.pages}"
        section_pairs(tables, title, docs, chosen, false_positives=args.false_positives)
    elif not CORPORA.is_dir():
        sys.exit(f"no corpora at {CORPORA}; pass --pages DIR")
    else:
        corpora_sections(tables, args, chosen)
    if not args.no_write:
        name = "quality" + ("-quick" if args.quick else "") + ("-pages" if args.pages else "")
        methods_run = [m.name for m in chosen]
        write_results(
            name, {"args": vars(args), "methods": methods_run, "tables": tables.kept}, argv=argv
        )


def corpora_sections(tables: Tables, args: argparse.Namespace, chosen: list[Method]) -> None:
    """Every section on the shared corpora (``--thresholds``: and thresholds.py's)."""
    edit_docs, langs, hb, rt = corpus_docs(args.quick)
    edit_pairs = section_edits(tables, edit_docs, chosen)
    hb_truth, rt_truth = true_pairs(hb), true_pairs(rt)
    results = section_pairs(
        tables,
        "(b)+(c) Debian Handbook: all pairs, " + ", ".join(langs),
        hb,
        chosen,
        "Same-template pages within a language are the traps; "
        "untranslated chapters are the natural near-duplicates.",
        hb_truth,
        args.false_positives,
    )
    section_natural(tables, hb, results)
    section_pairs(
        tables,
        "(b)+(c) Reuters-21578: all pairs of stories with a body",
        rt,
        chosen,
        "Re-sent and corrected stories are the natural near-duplicates.",
        rt_truth,
        args.false_positives,
    )
    section_short(tables, 500 if args.quick else None)
    if args.thresholds:
        section_thresholds(
            edit_pairs,
            [("Debian Handbook", hb, hb_truth), ("Reuters-21578", rt, rt_truth)],
            index_pages=50_000,
            tables=tables,
        )


if __name__ == "__main__":
    main()
