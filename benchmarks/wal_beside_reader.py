"""How large a SQLite index's write-ahead log grows while a long reader (``rebuild``,
``export``, ``expire``'s counting pass: one read of every page) holds its snapshot and a
crawl keeps checking and inserting pages.

    python benchmarks/wal_beside_reader.py [pages] [seconds]

Builds an index of *pages* random pages, starts a reader that walks ``pages()`` slowly
(one page per millisecond, as a rebuild into a slow Redis might), and checks-and-inserts
random pages in this process for *seconds*; prints the log's size and the inserts done
every few seconds, then again once the reader has finished and the next commit has
checkpointed.
"""

import multiprocessing
import os
import random
import sys
import time

from scrapy_simhash import open_index


def reader(uri: str, started) -> None:
    with open_index(uri, create=False, read_only=True) as index:
        pages = index.pages()
        next(pages)
        started.set()
        for _ in pages:
            time.sleep(0.001)


def main(pages: int, seconds: float) -> None:
    path = f"/tmp/wal-beside-reader-{os.getpid()}.db"
    uri = f"sqlite:///{path}"
    rng = random.Random(1)
    with open_index(uri) as index:
        for start in range(0, pages, 10_000):
            from scrapy_simhash.index.base import StoredPage

            index.add_pages(
                StoredPage(f"https://example.com/{n}", rng.getrandbits(64), time.time())
                for n in range(start, min(pages, start + 10_000))
            )
    started = multiprocessing.Event()
    walker = multiprocessing.Process(target=reader, args=(uri, started))
    walker.start()
    started.wait()
    inserted, begin, shown = 0, time.monotonic(), 0.0
    with open_index(uri) as index:
        while time.monotonic() - begin < seconds:
            index.check_and_add(rng.getrandbits(64), f"https://example.com/new/{inserted}")
            inserted += 1
            elapsed = time.monotonic() - begin
            if elapsed - shown >= 5:
                shown = elapsed
                wal = os.path.getsize(path + "-wal") / 1e6
                print(f"{elapsed:5.0f} s: {inserted:6d} inserts, log {wal:6.1f} MB", flush=True)
        walker.terminate()
        walker.join()
        for _ in range(1000):  # the next commits checkpoint (auto-checkpoint at 1000 pages)
            index.check_and_add(rng.getrandbits(64), f"https://example.com/new/{inserted}")
            inserted += 1
        wal = os.path.getsize(path + "-wal") / 1e6
        print(f"reader gone, 1,000 more inserts: log {wal:.1f} MB (reused from its start)")
    os.remove(path)


if __name__ == "__main__":
    main(
        int(sys.argv[1]) if len(sys.argv) > 1 else 100_000,
        float(sys.argv[2]) if len(sys.argv) > 2 else 30,
    )
