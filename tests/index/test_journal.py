"""The crawl journal of every backend (memory, SQLite, Redis): pending pages of a crawl
that ends, or dies, are forgotten; a crawl on another host only after its lease."""

from __future__ import annotations

import subprocess
import time

import pytest

from scrapy_simhash import open_index
from scrapy_simhash.index.journal import CrawlRecord, journal_for


@pytest.fixture(
    params=[
        "memory",
        "sqlite",
        # Asked for at run time, so not seen by conftest.py: the markers are given here.
        pytest.param("redis", marks=pytest.mark.redis),
        pytest.param(
            "redis-spread",
            marks=[
                pytest.mark.redis,
                pytest.mark.cluster,
                pytest.mark.slow,
                pytest.mark.xdist_group("redis-cluster"),
            ],
        ),
    ]
)
def index_uri(request, tmp_path):
    if request.param == "memory":
        return "memory://"
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'index.db'}"
    if request.param == "redis-spread":
        cluster = request.getfixturevalue("redis_cluster")
        return f"{cluster.url}&spread=true&prefix={request.getfixturevalue('redis_prefix')}"
    server = request.getfixturevalue("redis_server")
    return f"{server.url}?prefix={request.getfixturevalue('redis_prefix')}"


def test_pending_pages_of_a_crawl_that_ends_are_forgotten(index_uri):
    with open_index(index_uri) as index:
        journal = journal_for(index)
        assert journal.begin() == 0
        for n, key in enumerate(["a", "b", "c"]):
            journal.pending(key)
            index.check_and_add(n * 0x0F0F_0F0F_0F0F_0F0F + 1, key)
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
        index.check_and_add(12345, "lost")
        dead.pending("kept")
        index.check_and_add(2**40 + 99, "kept")
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
        index.check_and_add(777, "theirs")
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
            index.check_and_add(n * 0x1234_5678_9ABC + 5, key)
        assert journal.end() == 2
        assert len(index) == 0
