"""What the record of how each page was analysed (its fields, extractor, text hash) adds to
an index: the same pages checked into a new index with and without a record, and the
bytes a page takes in each (SQLite: the file after VACUUM; Redis: MEMORY USAGE of the
index's keys). Pages of one crawl share their fields and extractor: two hows here.

    python benchmarks/record_size.py sqlite [PAGES]
    python benchmarks/record_size.py redis://127.0.0.1:6379/0 [PAGES]
"""

import random
import sys
import tempfile
import uuid

from scrapy_simhash import open_index
from scrapy_simhash.index.analysed import Analysed

HOWS = [
    ("title", "content"),
    ("title", "-summary", "content"),
]


def fill(uri: str, pages: int, records: bool) -> None:
    rng = random.Random(1)
    with open_index(uri) as index:
        for number in range(pages):
            fields = HOWS[number % 7 == 0]
            analysed = Analysed(fields, "builtin", "terms-v13", rng.getrandbits(64))
            key = f"https://news{number % 40}.example/2026/article-{number}.html"
            index.check_and_add(rng.getrandbits(64), key, analysed=analysed if records else None)
        if uri.startswith("sqlite"):
            index.compact()


def size(uri: str) -> int:
    if uri.startswith("sqlite"):
        with open_index(uri, create=False) as index:
            return index.size()
    import redis

    url, _, prefix = uri.partition("?prefix=")
    client = redis.Redis.from_url(url)
    keys = list(client.scan_iter(match="{" + prefix + "}:*", count=1000))
    total = sum(client.memory_usage(key, samples=0) or 0 for key in keys)
    client.delete(*keys)
    return total


def main() -> None:
    where = sys.argv[1] if len(sys.argv) > 1 else "sqlite"
    pages = int(sys.argv[2]) if len(sys.argv) > 2 else 20_000
    figures = {}
    with tempfile.TemporaryDirectory() as folder:
        for records in (False, True):
            if where == "sqlite":
                uri = f"sqlite:///{folder}/{'with' if records else 'without'}.db"
            else:
                uri = f"{where}?prefix=record-size-{uuid.uuid4().hex[:8]}"
            fill(uri, pages, records)
            figures[records] = size(uri) / pages
    print(f"{where}, {pages:,} pages (no anchors, no sketches)")
    print(f"  without records  {figures[False]:7.1f} bytes per page")
    print(f"  with records     {figures[True]:7.1f} bytes per page")
    print(f"  the record       {figures[True] - figures[False]:7.1f} bytes per page")


if __name__ == "__main__":
    main()
