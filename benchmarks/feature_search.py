"""Feature designs side by side: edit recall and false positives of each, in one run.

    python benchmarks/feature_search.py            # every design below (~10 min)
    python benchmarks/feature_search.py --quick    # a subset of the documents
    python benchmarks/feature_search.py --seeds 3 --only "long texts"   # and 3 other hashes

Each design turns a text's terms (``TermExtractor.tokens``: the same tokens the product
counts, attribution lines already left out) into weighted features, and a SimHash of
them; texts with fewer than 20 distinct terms are matched exactly, as in the product.
The documents, the edits and the ground truth are ``benchmarks/quality.py``'s; only the
weighting differs, so a row shows what that one choice buys and costs. ``--seeds N``
repeats each design with N other term hashes: which near-threshold pairs fall within
distance 3 is partly chance, and a difference smaller than its spread over hashes is no
difference.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import itertools

from quality_data import CORPORA, Doc, corpus_docs, pct, scores, true_pairs
from quality_edits import edited_pairs
from quality_methods import Ours
from results import table

from scrapy_simhash.analysis.fingerprint import Fingerprinter, hash_term, simhash
from scrapy_simhash.analysis.terms import MAX_TERM_SHARE, TermExtractor, jieba_idf
from scrapy_simhash.dedup import Analyser
from scrapy_simhash.extract.text import exact_form, normalize_characters

MIN_TERMS = 20


@dataclass(frozen=True)
class Design:
    name: str
    tf: str = "raw"  #: raw, log (1 + ln tf) or sqrt
    power: float = 1.0  #: every weight raised to this power
    top_n: int = 128  #: 0: all terms
    number_idf: float = 1.0  #: numbers weigh this share of the median IDF
    hapax: float = 1.0  #: in a long text (>= 100 terms), a word used once weighs this share
    pairs: float = 0.0  #: in a long text, consecutive terms as features, at this share


DESIGNS = [
    Design("product (terms-v4)"),
    Design("weights ^1.5", power=1.5),
    Design("weights ^2", power=2.0),
    Design("numbers at 1/3 of the median IDF", number_idf=1 / 3),
    Design("log TF", tf="log"),
    Design("sqrt TF", tf="sqrt"),
    Design("all terms", top_n=0),
    Design("top 256", top_n=256),
    Design("long texts: words used once at 1/2", hapax=0.5),
    Design("long texts: once at 1/2, and term pairs", hapax=0.5, pairs=0.5),
]


class Signer:
    def __init__(self, design: Design, seed: bytes | None) -> None:
        self.design, self.seed = design, seed
        self.idf, self.median = jieba_idf()
        self.terms = TermExtractor()
        self._tokens: dict[str, list[str]] = {}

    def tokens(self, text: str) -> list[str]:
        found = self._tokens.get(text)
        if found is None:
            found = self._tokens[text] = self.terms.tokens(normalize_characters(text))
        return found

    def sign(self, doc: Doc) -> tuple[str, int]:
        d = self.design
        tokens = self.tokens(doc.text)
        counts = Counter(tokens)
        if len(counts) < MIN_TERMS:
            return ("short", hash_term(exact_form(normalize_characters(doc.text))))
        long_text = len(counts) >= 100
        weights = {}
        for term, tf in counts.items():
            w = tf if d.tf == "raw" else (1 + math.log(tf) if d.tf == "log" else math.sqrt(tf))
            if long_text and tf == 1:
                w *= d.hapax
            idf = self.idf.get(term, self.median)
            if d.number_idf != 1.0 and term.isdecimal():
                idf = self.median * d.number_idf
            weights[term] = w * idf
        if d.pairs and long_text:
            for pair, tf in Counter(itertools.pairwise(tokens)).items():
                weights[" ".join(pair)] = tf * self.median * d.pairs
        if d.power != 1.0:
            weights = {t: w**d.power for t, w in weights.items()}
        ranked = sorted(weights.items(), key=lambda tw: (-tw[1], tw[0]))
        if d.top_n:
            ranked = ranked[: d.top_n]
        cap = MAX_TERM_SHARE * sum(w for _, w in ranked)
        return ("simhash", simhash([(t, min(w, cap)) for t, w in ranked], self.seed))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a subset of the documents")
    parser.add_argument("--seeds", type=int, default=0, help="also N other term hashes")
    parser.add_argument("--only", default="", help="designs whose name contains this")
    args = parser.parse_args(argv)
    if not CORPORA.is_dir():
        sys.exit(f"no corpora at {CORPORA}")
    edit_docs, _, hb, rt = corpus_docs(args.quick)
    # The first design is the product's weighting: check it gives the product's values.
    product, signer = Analyser(Fingerprinter()), Signer(DESIGNS[0], None)
    same = 0
    for doc in edit_docs:
        analysis = product.analyse(doc.text)
        same += (analysis.kind, analysis.value) == signer.sign(doc)
    print(f"'{DESIGNS[0].name}' gives the product's value for {same} of {len(edit_docs)} texts\n")
    edits = {k: v for k, v in edited_pairs(edit_docs).items() if v}
    truths = [
        (title, docs, true_pairs(docs))
        for title, docs in (("Debian Handbook", hb), ("Reuters-21578", rt))
    ]
    header = ["design", "hash", *edits]
    header += [f"{title} {what}" for title, _, _ in truths for what in ("F1", "false pos.")]
    rows = []
    seeds: list[bytes | None] = [None] + [bytes([s]) * 16 for s in range(1, args.seeds + 1)]
    for design in [d for d in DESIGNS if args.only in d.name]:
        for seed in seeds:
            signer = Signer(design, seed)
            row: list[object] = [design.name, "public" if seed is None else f"key {seed[0]}"]
            for pairs in edits.values():
                near = sum(Ours.distance(signer.sign(a), signer.sign(b)) <= 3 for a, b in pairs)
                row.append(pct(near / len(pairs)))
            for _, docs, truth in truths:
                flagged = Ours.flagged([signer.sign(doc) for doc in docs], 3)
                row += [f"{scores(flagged, truth)[2]:.3f}", len(flagged - truth)]
            rows.append(row)
            print(table(header, [row]).splitlines()[-1], flush=True)
    print()
    print(table(header, rows))


if __name__ == "__main__":
    main()
