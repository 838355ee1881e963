"""Fingerprinting throughput on real text, against the usual Python recipe, in one run.

    python benchmarks/speed.py                  # Chinese Debian Handbook pages (../shared/corpora)
    python benchmarks/speed.py --pages DIR      # your own .html/.txt files
    python benchmarks/speed.py --only "ours, jieba" --seconds 5   # one method

Every method gets the same documents: the visible text of each page (HTML reduced with
``scrapy_simhash.extract.text.visible_text``), already in memory, and runs on one core:

* reference: ``jieba.analyse.extract_tags(text, topK=128, withWeight=True)`` (jieba's
  TF-IDF keywords, HMM on, its default) fed to ``simhash.Simhash`` (the ``simhash`` package);
* ours (jieba) / ours (rjieba): what the pipeline does with a text,
  ``Deduplicator.analyse`` (normalise, term counts, TF-IDF top 128, SimHash, paragraph
  anchors), with pure jieba (HMM off) or the ``[fast]`` extra; and with rjieba without the
  anchors (``SIMHASH_ANCHORS = False``);
* the bound: ``rjieba.cut(text, hmm=False)`` alone, segmentation and nothing else; our
  rjieba path can only approach it;
* peers: the ``simhash`` package on its own features (``Simhash(text)``), and MinHash with
  128 permutations over rjieba word 3-shingles, with datasketch (Python) and with rensa
  (Rust): each also segments the text with rjieba, inside the time measured.

A method whose package is not installed is left out, and the run says so (`pip install
'scrapy-simhash[fast,bench]'` installs them all).

It also times hash-and-combine alone (weighted terms -> 64 bits) per document. With
``SCRAPY_SIMHASH_PURE_PYTHON=1`` "ours" runs without the C accelerator.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path

from scrapy_simhash.analysis.fingerprint import (
    Fingerprinter,
    combine_compiled,
    combine_numpy,
    hash_term,
    simhash,
)
from scrapy_simhash.anchors import DEFAULT_ANCHORS
from scrapy_simhash.dedup import Deduplicator
from scrapy_simhash.extract.extractors import visible_text
from scrapy_simhash.extract.text import normalize_text

DEFAULT_CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"


def load_texts(pages: Path | None) -> list[str]:
    if pages is None:
        root = DEFAULT_CORPUS / "debian-handbook"
        if not root.is_dir():
            sys.exit(f"no corpus at {root}; pass --pages DIR with .html or .txt files")
        files = sorted(root.glob("zh-*/*.html"))
    else:
        files = sorted(p for p in pages.rglob("*") if p.suffix in (".html", ".htm", ".txt"))
    texts = []
    for path in files:
        raw = path.read_text(encoding="utf-8", errors="replace")
        text = raw if path.suffix == ".txt" else visible_text(raw)
        if text.strip():
            texts.append(text)
    if not texts:
        sys.exit("no documents with text found")
    return texts


def ours(segmenter: str, anchors: bool = True, sketch: bool = True) -> Callable[[str], object]:
    """What the pipeline does with a page's text: ``Deduplicator.analyse`` (normalise,
    count terms, TF-IDF top 128, SimHash, the paragraph anchors unless *anchors* is false,
    as with ``SIMHASH_ANCHORS = False``, and the sketch unless *sketch* is false, as with
    ``SIMHASH_MIN_SHARE = 0``; the index is not touched)."""
    count = DEFAULT_ANCHORS if anchors else 0
    dedup = Deduplicator(
        None,  # type: ignore[arg-type]
        Fingerprinter(segmenter=segmenter),
        anchors=count,
        sketch=sketch,
    )
    return dedup.analyse


def reference() -> Callable[[str], int]:
    import jieba
    import jieba.analyse
    from simhash import Simhash

    logging.getLogger("jieba").setLevel(logging.WARNING)
    jieba.initialize()

    def run(text: str) -> int:
        return Simhash(jieba.analyse.extract_tags(text, topK=128, withWeight=True)).value

    return run


def word_shingles(text: str) -> list[str]:
    """rjieba words (HMM off, whitespace dropped), three at a time: the MinHash peers' features."""
    import rjieba

    words = [word for word in rjieba.cut(text, hmm=False) if not word.isspace()]
    return [" ".join(words[i : i + 3]) for i in range(max(len(words) - 2, 1))]


def peers() -> tuple[dict[str, Callable[[str], object]], list[str]]:
    """The peers that are installed, by name, and the names of those that are not."""
    found: dict[str, Callable[[str], object]] = {}
    missing = []
    if importlib.util.find_spec("simhash") is not None:
        from simhash import Simhash

        found["`simhash` package, `Simhash(text)`"] = lambda text: Simhash(text).value
    else:
        missing.append("simhash")
    if importlib.util.find_spec("rjieba") is None:
        return found, [*missing, "datasketch and rensa (they need rjieba here)"]
    if importlib.util.find_spec("datasketch") is not None:
        from datasketch import MinHash

        def datasketch_minhash(text: str) -> object:
            minhash = MinHash(num_perm=128)
            minhash.update_batch([shingle.encode("utf-8") for shingle in word_shingles(text)])
            return minhash.digest()

        found["datasketch MinHash, rjieba 3-shingles"] = datasketch_minhash
    else:
        missing.append("datasketch")
    if importlib.util.find_spec("rensa") is not None:
        from rensa import RMinHash

        def rensa_minhash(text: str) -> object:
            minhash = RMinHash(num_perm=128, seed=42)
            minhash.update(word_shingles(text))
            return minhash.digest()

        found["rensa RMinHash (Rust), rjieba 3-shingles"] = rensa_minhash
    else:
        missing.append("rensa")
    return found, missing


def best_pass_times(
    functions: dict[str, Callable[[str], object]], texts: list, min_seconds: float
) -> dict[str, float]:
    """Seconds for one pass over *texts*, per function: the best of several rounds, each
    round running every function once in turn, so that load from other processes on the
    machine slows all of them alike (at least three rounds, and *min_seconds* in all)."""
    for function in functions.values():
        function(texts[0])  # warm up: dictionaries, caches
    best = dict.fromkeys(functions, float("inf"))
    start = time.perf_counter()
    rounds = 0
    while rounds < 3 or time.perf_counter() - start < min_seconds:
        for name, function in functions.items():
            began = time.perf_counter()
            for text in texts:
                function(text)
            best[name] = min(best[name], time.perf_counter() - began)
        rounds += 1
    return best


def python_loop_simhash(pairs: list[tuple[str, float]], seed: int = 0) -> int:
    """The textbook loop over 64 bits per term, for scale."""
    totals = [0.0] * 64
    for term, weight in pairs:
        h = hash_term(term, seed)
        for bit in range(64):
            totals[bit] += weight if h >> bit & 1 else -weight
    return sum(1 << bit for bit in range(64) if totals[bit] > 0)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=Path, help="directory of .html/.txt files")
    parser.add_argument("--seconds", type=float, default=20.0, help="minimum time in all")
    parser.add_argument(
        "--only", help="time only the methods whose name holds this text ('ours, jieba')"
    )
    args = parser.parse_args(argv)

    texts = load_texts(args.pages)
    megabytes = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    print(
        f"{len(texts)} documents, {megabytes:.2f} MB of text, "
        f"{megabytes * 1e6 / len(texts) / 1000:.1f} KB each on average; one core\n"
    )
    methods: dict[str, Callable[[str], object]] = {
        "reference (jieba extract_tags + simhash)": reference()
    }
    methods["ours, jieba (HMM off)"] = ours("jieba")
    has_rjieba = importlib.util.find_spec("rjieba") is not None
    bound = "bound: `rjieba.cut` alone (HMM off)"
    if has_rjieba:
        import rjieba

        methods["ours, rjieba ([fast] extra)"] = ours("rjieba")
        methods["ours, rjieba, without anchors"] = ours("rjieba", anchors=False)
        methods[bound] = functools.partial(rjieba.cut, hmm=False)
    else:
        print("rjieba is not installed (pip install 'scrapy-simhash[fast]'); skipping it\n")
    found, missing = peers()
    methods.update(found)
    if missing:
        print(f"not installed, left out: {', '.join(missing)} (pip install them to compare)\n")
    if args.only:
        methods = {name: method for name, method in methods.items() if args.only in name}

    rates = {
        name: len(texts) / seconds
        for name, seconds in best_pass_times(methods, texts, args.seconds).items()
    }
    base = rates.get("reference (jieba extract_tags + simhash)")
    print("| method | documents/s | MB/s | ms/document | vs reference | vs `rjieba.cut` |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, docs in rates.items():
        versus_cut = f"{docs / rates[bound]:.0%}" if bound in rates else "–"
        versus_base = f"{docs / base:.1f}x" if base else "–"
        print(
            f"| {name} | {docs:,.0f} | {docs * megabytes / len(texts):.2f} | "
            f"{1e3 / docs:.2f} | {versus_base} | {versus_cut} |"
        )

    # Hash-and-combine alone, on the weighted terms of the same documents.
    fingerprinter = Fingerprinter(segmenter="rjieba" if has_rjieba else "jieba")
    terms = [fingerprinter.terms(normalize_text(t)) for t in texts]
    which = (
        "compiled"
        if combine_compiled is not None
        else "numpy: the C accelerator is off or not built"
    )
    combine = {
        "Python loop over 64 bits": lambda pairs: python_loop_simhash(pairs),
        f"`simhash()`, hashing every term ({which})": lambda pairs: simhash(pairs),
        f"`Fingerprinter.simhash`, cached term hashes ({which})": fingerprinter.simhash,
    }
    print(f"\nhash-and-combine of the top {fingerprinter.top_n} terms, per document:")
    print("| method | us/document |")
    print("|---|---:|")
    for name, seconds in best_pass_times(combine, terms, min(args.seconds, 3.0)).items():
        print(f"| {name} | {seconds / len(terms) * 1e6:.0f} |")
    # The combine alone, term hashes given: numpy (the pure-Python path) and compiled.
    hashed = [
        (
            b"".join(hash_term(term).to_bytes(8, "little") for term, _ in pairs),
            [w for _, w in pairs],
        )
        for pairs in terms
    ]
    alone = {"combine alone, numpy": lambda job: combine_numpy(*job)}
    if combine_compiled is not None:
        alone["combine alone, compiled"] = lambda job: combine_compiled(*job)
    for name, seconds in best_pass_times(alone, hashed, min(args.seconds, 3.0)).items():
        print(f"| {name} | {seconds / len(terms) * 1e6:.0f} |")


if __name__ == "__main__":
    main()
