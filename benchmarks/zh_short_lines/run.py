"""Copies of Chinese text made of short lines: does the crawl filter catch them, and does
every removal keep the removed text? Against MinHash LSH on the same documents; see
README.md.

    python -m benchmarks.zh_short_lines [--limit N] [--seed 41] [--no-write]
"""

from __future__ import annotations

import argparse
import random
import re
import time
from collections import Counter
from pathlib import Path

from benchmarks.lossless.truth import GOAL, grams, share_of
from benchmarks.results import dump, stamp
from benchmarks.zh_short_lines import data
from benchmarks.zh_short_lines.data import KINDS, Doc

RESULTS = Path(__file__).resolve().parent / "results"
_SPACE = re.compile(r"\s+")
#: MinHash LSH's Jaccard threshold and permutations (as benchmarks/quality.py).
JACCARD, PERMUTATIONS = 0.8, 128


def truth(text: str) -> frozenset[str]:
    return grams(_SPACE.sub(" ", text).strip().casefold())


def feed(docs: list[Doc], seed: int) -> list[tuple[str, str, str | None, str]]:
    """(url, text, the url of its original or None, kind): every original, then one copy
    of each kind per original, shuffled among themselves."""
    rng = random.Random(seed)
    items = [(doc.name, doc.text, None, "original") for doc in docs]
    copies = []
    for number, doc in enumerate(docs):
        for kind in KINDS:
            donor = docs[(number + 1 + rng.randrange(len(docs) - 1)) % len(docs)]
            lines = data.edit(doc, kind, donor, rng)
            copies.append((f"{doc.name}~{kind}", "\n".join(lines), doc.name, kind))
    rng.shuffle(copies)
    return items + copies


def run_ours(items) -> tuple[dict[str, str], float]:
    from scrapy_simhash.dedup import analyse_fields
    from scrapy_simhash.settings import SimhashSettings

    start = time.process_time()
    settings = SimhashSettings()
    params = settings.analysis_params
    dedup = settings.open_deduplicator("memory:")
    removed = {}
    for url, text, _, _ in items:
        verdict = dedup.check(analyse_fields(params, [text]), url)
        if verdict.is_duplicate:
            removed[url] = verdict.match.key
    return removed, time.process_time() - start


def run_minhash(items, texts: dict[str, frozenset[str]]) -> tuple[dict[str, str], float]:
    from datasketch import MinHash, MinHashLSH

    start = time.process_time()
    lsh = MinHashLSH(threshold=JACCARD, num_perm=PERMUTATIONS)
    removed = {}
    for url, _, _, _ in items:
        signature = MinHash(num_perm=PERMUTATIONS, seed=1)
        signature.update_batch([g.encode("utf-8") for g in texts[url]])
        found = lsh.query(signature)
        if found:
            removed[url] = sorted(found)[0]
        else:
            lsh.insert(url, signature)
    return removed, time.process_time() - start


def score(items, removed: dict[str, str], texts) -> dict:
    """Per kind of item: how many, how many removed, and of the copies whose original holds
    at least :data:`GOAL` of their text by the truth (``due``: a removal loses nothing),
    how many were removed for their original (``caught``)."""
    by_kind: dict[str, dict] = {}
    shares = []
    for url, _, original, kind in items:
        row = by_kind.setdefault(kind, Counter())
        row["items"] += 1
        due = original is not None and share_of(texts[url], texts[original]) >= GOAL
        row["due"] += due
        row["caught"] += due and removed.get(url) == original
        if url not in removed:
            continue
        row["removed"] += 1
        if original is not None and removed[url] == original:
            row["to its original"] += 1
        held = share_of(texts[url], texts[removed[url]])
        shares.append(held)
        row["below goal"] += held < GOAL
    return {
        "kinds": {kind: dict(row) for kind, row in by_kind.items()},
        "removals below 0.8": sum(s < GOAL for s in shares),
        "lowest shares": sorted(round(s, 3) for s in shares)[:10],
    }


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, help="originals of each source at most")
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    missing = data.available()
    if missing:
        print(f"skipped: {missing}")
        return
    sources = {"digests": data.digests(), "wiki": data.wiki(), "questions": data.questions()}
    report: dict = {**stamp(argv), "seed": args.seed, "sources": {}}
    for source, docs in sources.items():
        docs = docs[: args.limit] if args.limit else docs
        items = feed(docs, args.seed)
        texts = {url: truth(text) for url, text, _, _ in items}
        chars = sorted(len(doc.text) for doc in docs)
        print(
            f"\n{source}: {len(docs)} originals of {chars[0]}-{chars[-1]} characters "
            f"(median {chars[len(chars) // 2]}), {len(items) - len(docs)} copies"
        )
        results = {}
        for name, run in (("crawl filter", run_ours), ("MinHash LSH", run_minhash)):
            removed, cpu = run_ours(items) if run is run_ours else run(items, texts)
            results[name] = {**score(items, removed, texts), "cpu seconds": round(cpu, 2)}
        print(
            f"| edit | copies (due: their original holds >= {GOAL}) | crawl filter "
            f"| MinHash LSH (J >= {JACCARD}) |"
        )
        print("|---|---:|---:|---:|")
        for kind in ("original", *KINDS):
            ours, theirs = (results[n]["kinds"].get(kind, {}) for n in results)
            count = ours.get("items", 0)
            if kind == "original":
                print(
                    f"| originals removed (false) | {count} | {ours.get('removed', 0)} "
                    f"| {theirs.get('removed', 0)} |"
                )
                continue
            due = ours.get("due", 0)
            print(
                f"| {kind} | {count} ({due} due) | {pct(ours.get('caught', 0), due)} "
                f"| {pct(theirs.get('caught', 0), due)} |"
            )
        for name, result in results.items():
            print(
                f"{name}: removals below {GOAL} by the truth: {result['removals below 0.8']}; "
                f"lowest shares {result['lowest shares'][:5]}; {result['cpu seconds']} CPU s"
            )
        report["sources"][source] = {
            "originals": len(docs),
            "characters": {"min": chars[0], "median": chars[len(chars) // 2], "max": chars[-1]},
            "results": results,
        }
    if not args.no_write:
        RESULTS.mkdir(exist_ok=True)
        # A run of a part (--limit) must not replace the day's run of every document.
        out = RESULTS / f"{report['date'][:10]}{'.partial' if args.limit else ''}.json"
        out.write_text(dump(report), encoding="utf-8")
        print(f"\nwritten: {out.relative_to(RESULTS.parents[2])}")


if __name__ == "__main__":
    main()
