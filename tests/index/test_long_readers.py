"""A reader of every page (rebuild, export, expire) beside a crawl's commits."""

from __future__ import annotations

from pathlib import Path

import pytest

from scrapy_simhash.index.base import StoredPage


@pytest.mark.slow
def test_the_log_stays_bounded_beside_a_reader_of_every_page(tmp_path, monkeypatch):
    """A rebuild, export or expire reads every page, slowly when its target is slow; a
    crawl's commits meanwhile must still be checkpointed. Before pages() read in short
    transactions, the log held every commit made during the read (56 KB each)."""
    import random

    from scrapy_simhash.index.sqlite import index as sqlite_module
    from scrapy_simhash.index.sqlite.index import SqliteIndex

    monkeypatch.setattr(sqlite_module, "AUTOCHECKPOINT_PAGES", 100)
    wal_bound = (100 + 64) * 4096
    path = tmp_path / "index.db"
    rng = random.Random(3)
    with SqliteIndex(path) as index:
        index.add_pages(StoredPage(f"p{n}", rng.getrandbits(64), 1.7e9 + n) for n in range(25_000))
    largest = 0
    with SqliteIndex(path, read_only=True) as reader, SqliteIndex(path) as crawl:
        walk = reader.pages()
        read = [next(walk)]
        for n in range(1500):
            crawl.check_and_add(rng.getrandbits(64), f"new{n}")
            if n % 3 == 0:
                read.append(next(walk))  # the reader goes on, slowly
            if n % 50 == 0:
                largest = max(largest, Path(f"{path}-wal").stat().st_size)
        read.extend(walk)
    assert largest < wal_bound, f"the log grew to {largest:,} bytes"
    assert [p.key for p in read] == [f"p{n}" for n in range(25_000)]
