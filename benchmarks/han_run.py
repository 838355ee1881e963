"""Seconds to fingerprint a long run of one Han character with each segmenter.

With jieba's HMM on, '的' * 100_000 took minutes (quadratic); the segmenters run with it
off (tests/crawl/test_bad_input.py checks that it is off). A figure to read, not a test:

    .venv/bin/python benchmarks/han_run.py
"""

from __future__ import annotations

import importlib.util
import time

from scrapy_simhash.analysis.fingerprint import Fingerprinter


def main() -> None:
    for backend in ("jieba", "rjieba"):
        if importlib.util.find_spec(backend) is None:
            print(f"{backend:7} not installed")
            continue
        fingerprinter = Fingerprinter(segmenter=backend)
        fingerprinter.terms("的")  # the dictionary is loaded outside the timing
        for length in (25_000, 50_000, 100_000):
            started = time.perf_counter()
            fingerprinter.fingerprint("的" * length)
            print(f"{backend:7} '的' * {length:>7,}: {time.perf_counter() - started:6.2f} s")


if __name__ == "__main__":
    main()
