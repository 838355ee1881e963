"""Nothing lost between the index and the output: a page the index treats as seen is in
some crawl's output, however the crawls before stopped (SIGKILL while the feed exporter
still buffered items). Real crawls in child processes, real SQLite files and a real
redis-server; the journal itself on every backend."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from crawls import crawl_command, run_crawl
from pipelines import subprocess_env

from scrapy_simhash import open_index
from scrapy_simhash.index.journal import CrawlRecord, journal_for

PAGES = 1200


def feed_urls(feed: Path) -> set[str]:
    """The URLs of the items in a JSON-lines feed; a last line cut by a kill is skipped."""
    urls = set()
    if not feed.exists():
        return urls
    for line in feed.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(ValueError):
            urls.add(json.loads(line)["url"])
    return urls


def stored_pages(uri: str) -> int:
    with open_index(uri, create=False, read_only=True) as index:
        return len(index)


def kill_mid_crawl(tmp_path: Path, uri: str, feed: Path, after_pages: int) -> int:
    """Start a crawl and SIGKILL it once the index holds *after_pages* pages more than
    before; return how many it held when killed."""
    before = stored_pages(uri) if Path(uri.removeprefix("sqlite:///")).exists() else 0
    process = subprocess.Popen(
        crawl_command(tmp_path, uri, PAGES, str(feed), CONCURRENT_REQUESTS="8"),
        env=subprocess_env(),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.2)
            try:
                if stored_pages(uri) - before >= after_pages:
                    break
            except Exception:  # not created yet
                continue
        assert process.poll() is None, "the crawl ended before it could be killed"
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=60)
    return stored_pages(uri)


def run_kills_then_resume(tmp_path: Path, uri: str, kills: int) -> tuple[set[str], int]:
    feeds = [tmp_path / f"feed-{n}.jl" for n in range(kills + 1)]
    held = [kill_mid_crawl(tmp_path, uri, feed, after_pages=150) for feed in feeds[:-1]]
    log = run_crawl(tmp_path, uri, PAGES, str(feeds[-1]), CONCURRENT_REQUESTS="8")
    assert "'finish_reason': 'finished'" in log, log[-3000:]
    assert "Traceback" not in log, log
    seen = set().union(*(feed_urls(feed) for feed in feeds))
    assert held[-1] < PAGES  # each kill came mid-crawl
    return seen, stored_pages(uri)


def all_pages(tmp_path: Path) -> set[str]:
    return {(tmp_path / "site" / f"{n}.html").as_uri() for n in range(PAGES)}


def test_sqlite_every_page_reaches_a_feed_after_kills(tmp_path):
    uri = f"sqlite:///{tmp_path / 'index.db'}"
    seen, stored = run_kills_then_resume(tmp_path, uri, kills=3)
    missing = all_pages(tmp_path) - seen
    assert not missing, f"{len(missing)} of {PAGES} pages in no feed, e.g. {sorted(missing)[:3]}"
    assert stored == PAGES


def test_redis_every_page_reaches_a_feed_after_kills(tmp_path, redis_server, redis_prefix):
    uri = f"{redis_server.url}?prefix={redis_prefix}"
    seen, stored = run_kills_then_resume(tmp_path, uri, kills=2)
    missing = all_pages(tmp_path) - seen
    assert not missing, f"{len(missing)} of {PAGES} pages in no feed, e.g. {sorted(missing)[:3]}"
    assert stored == PAGES


# -- the journal on every backend -----------------------------------------------------


@pytest.fixture(params=["memory", "sqlite", "redis"])
def index_uri(request, tmp_path):
    if request.param == "memory":
        return "memory://"
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'index.db'}"
    server = request.getfixturevalue("redis_server")
    return f"{server.url}?prefix={request.getfixturevalue('redis_prefix')}"


def test_pending_pages_of_a_crawl_that_ends_are_forgotten(index_uri):
    with open_index(index_uri) as index:
        journal = journal_for(index)
        assert journal.begin() == 0
        for n, key in enumerate(["a", "b", "c"]):
            journal.pending(key)
            index.add_if_new(n * 0x0F0F_0F0F_0F0F_0F0F + 1, key)
        journal.settle(["a", "c"])
        assert journal.unsettled() == ["b"]
        assert journal.end() == 1
        assert sorted(page.key for page in index.pages()) == ["a", "c"]
        assert journal.unsettled() == []


def test_a_dead_crawl_is_recovered_by_the_next(index_uri, tmp_path):
    if index_uri == "memory://":
        pytest.skip("a memory index dies with its crawl")
    with open_index(index_uri) as index:
        dead = journal_for(index)
        dead.begin()
        dead.pending("lost")
        index.add_if_new(12345, "lost")
        dead.pending("kept")
        index.add_if_new(2**40 + 99, "kept")
        dead.settle(["kept"])
        # A process of this host that has ended: its journal says so.
        child = subprocess.Popen(["true"])
        child.wait()
        dead._register(CrawlRecord(dead.crawl, dead.host, child.pid, "", time.time()))
        alive = journal_for(index)
        assert alive.begin() == 1
        assert [page.key for page in index.pages()] == ["kept"]
        assert alive.unsettled() == [] and dead.unsettled() == []


def test_a_crawl_on_another_host_is_dead_only_after_its_lease(index_uri):
    if index_uri == "memory://":
        pytest.skip("a memory index dies with its crawl")
    with open_index(index_uri) as index:
        other = journal_for(index)
        other.begin()
        other.pending("theirs")
        index.add_if_new(777, "theirs")
        other._register(CrawlRecord(other.crawl, "elsewhere", 1, "", time.time()))
        ours = journal_for(index, lease=5.0)
        assert ours.begin() == 0  # its heartbeat is fresh
        other._register(CrawlRecord(other.crawl, "elsewhere", 1, "", time.time() - 6))
        assert ours.heartbeat() == 1
        assert len(index) == 0


def test_keys_with_surrogates_and_long_keys_are_journalled_as_stored(index_uri):
    with open_index(index_uri) as index:
        journal = journal_for(index)
        journal.begin()
        for n, key in enumerate(["https://a.example/\ud800", "x" * 40_000]):
            journal.pending(key)
            index.add_if_new(n * 0x1234_5678_9ABC + 5, key)
        assert journal.end() == 2
        assert len(index) == 0
