"""Where the time of ``Analyser.analyse`` goes: each step timed alone, per document.

    python benchmarks/analysis_steps.py              # Chinese Debian Handbook pages
    python benchmarks/analysis_steps.py --pages DIR  # your own .html/.txt files

Each step runs over all documents on the input the step before it produced (computed
once, beforehand), best of several rounds, on one core; with rjieba (HMM off) and the
default fingerprinter. ``SCRAPY_SIMHASH_PURE_PYTHON=1`` times the pure-Python path.
The steps' sum is close to, not exactly, the whole: the whole is timed as one call.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import rjieba

from scrapy_simhash.analysis.attribution import strip_attribution
from scrapy_simhash.analysis.fingerprint import Fingerprinter
from scrapy_simhash.analysis.function_words import remove_stop_words
from scrapy_simhash.analysis.terms import _strip_addresses
from scrapy_simhash.analysis.words import count_long_words, count_words, lower
from scrapy_simhash.dedup import Analyser
from scrapy_simhash.extract.text import normalize_characters

sys.path.insert(0, str(Path(__file__).parent))
from speed import load_texts


def best_ms_per_doc(step: Callable[[object], object], inputs: list, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        began = time.perf_counter()
        for value in inputs:
            step(value)
        best = min(best, time.perf_counter() - began)
    return best / len(inputs) * 1e3


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=Path, help="directory of .html/.txt files")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    texts = load_texts(args.pages)
    fingerprinter = Fingerprinter(segmenter="rjieba")
    extractor = fingerprinter.term_extractor
    analyser = Analyser(fingerprinter)
    for text in texts:  # warm: dictionaries, the IDF and hash caches
        analyser.analyse(text)

    # The inputs of each step, as analyse() computes them.
    normal = [normalize_characters(t) for t in texts]
    lowered = [t.lower() for t in normal]
    stripped = [strip_attribution(t, low) for t, low in zip(normal, lowered, strict=True)]
    stripped_lower = [
        low if s is t else s.lower() for s, t, low in zip(stripped, normal, lowered, strict=True)
    ]
    addressless = [_strip_addresses(t) for t in stripped_lower]
    word_counts = []
    han_texts = []
    for text in addressless:
        counts: Counter[str] = Counter()
        han_texts.append(count_words(text, counts))
        word_counts.append(counts)
    segmented = [rjieba.cut(h, hmm=False) for h in han_texts]
    term_counts = [extractor.term_counts(t) for t in normal]
    top = [extractor.top_terms(c) for c in term_counts]

    def counted(pair: tuple[list[str], Counter[str]]) -> None:
        count_long_words(pair[0], Counter(pair[1]))

    def stop_words(counts: Counter[str]) -> None:
        remove_stop_words(Counter(counts))

    steps: dict[str, tuple[Callable, list]] = {
        "normalize_characters (NFKC, invisible characters)": (normalize_characters, texts),
        "lower (str.lower; compiled where built)": (lower, normal),
        "strip_attribution": (
            lambda pair: strip_attribution(*pair),
            list(zip(normal, lowered, strict=True)),
        ),
        "_strip_addresses (URLs, e-mail)": (_strip_addresses, stripped_lower),
        "count_words (words, Han runs)": (lambda t: count_words(t, Counter()), addressless),
        "remove_stop_words (with a copy of the counts)": (stop_words, word_counts),
        "rjieba.cut of the Han runs": (lambda h: rjieba.cut(h, hmm=False), han_texts),
        "count_long_words (with a copy of the counts)": (
            counted,
            list(zip(segmented, word_counts, strict=True)),
        ),
        "copy of the counts (to subtract from the line above)": (Counter, word_counts),
        "top_terms (IDF, top 128, cap)": (extractor.top_terms, term_counts),
        "simhash (hashes, combine)": (fingerprinter.simhash, top),
        "all of analyse": (analyser.analyse, texts),
        "bound: rjieba.cut of the whole text": (lambda t: rjieba.cut(t, hmm=False), texts),
    }
    print(f"{len(texts)} documents; ms per document, best of {args.rounds} rounds, one core\n")
    print("| step | ms/document |")
    print("|---|---:|")
    for name, (step, inputs) in steps.items():
        print(f"| {name} | {best_ms_per_doc(step, inputs, args.rounds):.3f} |")


if __name__ == "__main__":
    main()
