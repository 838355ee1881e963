"""What the crawl journal adds to a check-and-insert: 4,000 checks of random fingerprints
into a new index, with and without writing each key to the journal first (and settling
them 200 at a time, as a crawl does once a second), in alternating runs.

    python benchmarks/journal_cost.py sqlite
    python benchmarks/journal_cost.py redis://127.0.0.1:6379/0
"""

import random
import statistics
import sys
import tempfile
import time
import uuid

from scrapy_simhash import open_index
from scrapy_simhash.index.journal import journal_for

CHECKS = 4000


def run(uri: str, journal: bool) -> float:
    """Microseconds per check."""
    rng = random.Random(1)
    with open_index(uri) as index:
        crawl = journal_for(index) if journal else None
        if crawl is not None:
            crawl.begin()
        start, done = time.perf_counter(), []
        for number in range(CHECKS):
            key = f"https://example.com/{number}"
            if crawl is not None:
                crawl.pending(key)
            index.check_and_add(rng.getrandbits(64), key)
            done.append(key)
            if crawl is not None and len(done) >= 200:
                crawl.settle(done)
                done = []
        if crawl is not None:
            crawl.settle(done)
            crawl.end()
        return (time.perf_counter() - start) / CHECKS * 1e6


def main(where: str) -> None:
    times: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(7):
        for journal in (False, True):
            if where == "sqlite":
                uri = f"sqlite:///{tempfile.mkdtemp()}/index.db"
            else:
                uri = f"{where}?prefix=bench-{uuid.uuid4().hex[:8]}"
            times[journal].append(run(uri, journal))
    plain, journalled = statistics.median(times[False]), statistics.median(times[True])
    print(
        f"{where}: {plain:.0f} us per check without the journal, {journalled:.0f} us with it "
        f"(x{journalled / plain:.2f}; medians of 7 alternating runs)"
    )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "sqlite")
