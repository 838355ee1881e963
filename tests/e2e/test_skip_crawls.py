"""Real crawls of a local HTTP site with URL variants, with and without
SIMHASH_SKIP_PREDICTED: copies are skipped, distinct pages never are."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from crawls import page_text

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    from benchmarks.skip_predicted import run, site

    return run, site


@pytest.mark.parametrize("order", ["bfs", "dfs"])
def test_a_crawl_skips_predicted_copies_and_keeps_every_distinct_page(bench, tmp_path, order):
    run, site = bench
    documents = [
        site.Document(f"Page {n}", (page_text(n), page_text(1000 + n)), f"s{n % 3}")
        for n in range(30)
    ]
    # One request at a time, paced: the rules are learned from pages already checked, and
    # on a loaded machine a crawl of four at a time downloaded every variant before the
    # index had checked the first three copies (none skipped, and nothing to test).
    paced = {"CONCURRENT_REQUESTS": "1", "DOWNLOAD_DELAY": "0.05"}
    with site.Server(site.Site(documents)) as server:
        plain = run.crawl(server, order, False, tmp_path)
        skip = run.crawl(server, order, True, tmp_path, paced)
    assert plain["skipped"] == 0
    assert skip["skipped"] > 0
    assert skip["copies_downloaded"] < plain["copies_downloaded"]
    # Every content kept without the option is downloaded with it: none was skipped.
    assert len(plain["kept"]) == len(documents) + server.site.list_pages + len(server.site.sections)
    assert set(plain["kept"]) <= set(skip["downloaded"])
    with sqlite3.connect(tmp_path / f"{order}-skip.db") as db:
        skipped = db.execute("SELECT url, target FROM skip_requests").fetchall()
    assert len(skipped) == skip["skipped"]
    for url, target in skipped:
        assert server.content_id(url) == server.content_id(target), (url, target)
