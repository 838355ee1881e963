"""The crawl journal of every backend (memory, SQLite, Redis): pending pages of a crawl
that ends, or dies, are forgotten; a crawl on another host only after its lease."""

from __future__ import annotations

import contextlib
import random
import subprocess
import time
import types

import pytest
from redis_package import STORED_BACKENDS

from scrapy_simhash import open_index
from scrapy_simhash.index import journal as journal_module
from scrapy_simhash.index.journal import CrawlRecord, journal_for


@pytest.fixture(params=["memory", *STORED_BACKENDS])
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


def test_a_crawl_on_another_host_is_dead_only_after_its_lease(index_uri, monkeypatch):
    if index_uri == "memory://":
        pytest.skip("a memory index dies with its crawl")
    with open_index(index_uri) as index:
        other = journal_for(index, lease=60.0)
        other.host = "elsewhere"  # another host: only its lease tells whether it lives
        other.begin()
        other.pending("theirs")
        index.check_and_add(777, "theirs")
        ours = journal_for(index, lease=60.0)
        assert ours.begin() == 0  # its lease is held
        assert ours.heartbeat() == 0
        # It stops renewing: Redis lets its (now short) lease lapse on the server; SQLite
        # sees its beat unchanged for the lease, timed by this host's monotonic clock.
        other.lease = 0.2
        other.renew()
        shift = [0.0]
        real = journal_module.monotonic
        monkeypatch.setattr(journal_module, "monotonic", lambda: real() + shift[0])
        forgotten = ours.heartbeat()
        deadline = time.monotonic() + 60
        while not forgotten and time.monotonic() < deadline:
            shift[0] += 61.0
            time.sleep(0.05)
            forgotten = ours.heartbeat()
        assert forgotten == 1
        assert len(index) == 0
        assert other.crawl not in {record.crawl for record in ours._records()}


@contextlib.contextmanager
def clock_ahead(monkeypatch, seconds: float):
    """This client's wall clock runs *seconds* ahead (the module's ``time.time``), as on
    a host whose clock is wrong; the other client's calls are made outside."""
    skewed = types.SimpleNamespace(
        time=lambda: REAL_TIME() + seconds, monotonic=time.monotonic, sleep=time.sleep
    )
    with monkeypatch.context() as patch:
        patch.setattr(journal_module, "time", skewed)
        yield


REAL_TIME = time.time


@pytest.mark.parametrize("skew", [300.0, -300.0])
def test_a_skewed_clock_never_makes_a_live_crawl_dead(index_uri, monkeypatch, skew):
    """#43: a crawl on a host whose clock ran 5 minutes ahead took a live crawl for dead
    and forgot its pending pages."""
    if index_uri == "memory://":
        pytest.skip("a memory index dies with its crawl")
    with open_index(index_uri) as index:
        other = journal_for(index)
        other.host = "elsewhere"
        other.begin()
        other.pending("theirs")
        index.check_and_add(777, "theirs")
        ours = journal_for(index)
        with clock_ahead(monkeypatch, skew):
            assert ours.begin() == 0
        for _ in range(3):
            other.heartbeat()
            with clock_ahead(monkeypatch, skew):
                assert ours.heartbeat() == 0
        assert [page.key for page in index.pages()] == ["theirs"]
        assert other.unsettled() == ["theirs"]
        assert other.crawl in {record.crawl for record in ours._records()}


def test_a_crawl_whose_record_was_removed_writes_it_again(index_uri):
    """#43: a crawl taken for dead lost its record; its next pending keys went into a
    journal that no record named, and no crawl ever recovered them."""
    with open_index(index_uri) as index:
        crawl = journal_for(index)
        crawl.begin()
        crawl.pending("a")
        index.check_and_add(0x0F0F_0F0F, "a")
        crawl._drop(crawl.crawl)  # what a crawl that took it for dead did
        crawl.heartbeat()  # its next heartbeat finds out
        assert crawl.crawl in {record.crawl for record in crawl._records()}
        assert crawl.unsettled() == ["a"]
        if "spread=true" not in index_uri:
            # Between two heartbeats: the next pending key writes the record again.
            crawl._drop(crawl.crawl)
            crawl.pending("b")
            index.check_and_add(0xF0F0_F0F0_0000, "b")
            assert crawl.crawl in {record.crawl for record in crawl._records()}
            assert crawl.unsettled() == ["a", "b"]
        stored = len(index)
        assert stored > 0 and crawl.end() == stored


def test_a_crawl_resuming_after_its_lease_writes_its_record_before_its_next_key(
    index_uri, monkeypatch
):
    """A crawl stalled past its lease (its record removed by a crawl that took it for
    dead) writes its record and pending keys again before the next key, on every layout
    (the spread layout's pending sets are in other slots than the record)."""
    with open_index(index_uri) as index:
        crawl = journal_for(index, lease=60.0)
        crawl.begin()
        crawl.pending("a")
        crawl._drop(crawl.crawl)  # taken for dead while stalled
        shift = [0.0]
        real = time.monotonic
        monkeypatch.setattr(journal_module, "monotonic", lambda: real() + shift[0], raising=False)
        shift[0] = 61.0  # it resumes after its lease
        crawl.pending("b")
        assert crawl.crawl in {record.crawl for record in crawl._records()}
        assert crawl.unsettled() == ["a", "b"]
        assert crawl.end() == 0


def test_a_stalled_crawl_keeps_its_record_and_what_it_wrote_since(index_uri, monkeypatch):
    """A crawl stalled past its lease is taken for dead; once it renews, the pages it
    wrote since stay in its journal and its record is not removed by the late recovery."""
    if index_uri == "memory://":
        pytest.skip("a memory index dies with its crawl")
    with open_index(index_uri) as index:
        stalled = journal_for(index, lease=0.2)
        stalled.host = "elsewhere"
        stalled.begin()
        stalled.pending("old")
        index.check_and_add(0x0F0F_0F0F, "old")
        ours = journal_for(index, lease=0.2)
        ours.begin()
        shift = [0.0]
        real = journal_module.monotonic
        monkeypatch.setattr(journal_module, "monotonic", lambda: real() + shift[0])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # until its lease has lapsed
            records = {record.crawl: record for record in ours._records()}
            if ours.dead(records[stalled.crawl]):
                break
            shift[0] += 1.0
            time.sleep(0.05)
        record = records[stalled.crawl]
        # The recovery has read the keys; meanwhile the stalled crawl wakes up and writes.
        keys = ours._pending(stalled.crawl)
        stalled.renew()
        stalled.pending("new")
        ours._drop_dead(record, keys)
        assert stalled.crawl in {record.crawl for record in ours._records()}
        assert "new" in stalled.unsettled()


def test_keys_with_surrogates_and_long_keys_are_journalled_as_stored(index_uri):
    with open_index(index_uri) as index:
        journal = journal_for(index)
        journal.begin()
        for n, key in enumerate(["https://a.example/\ud800", "x" * 40_000]):
            journal.pending(key)
            index.check_and_add(n * 0x1234_5678_9ABC + 5, key)
        assert journal.end() == 2
        assert len(index) == 0


def test_a_dead_crawls_page_is_forgotten_with_all_that_is_stored_for_it(tmp_path):
    """SQLite forgets a dead crawl's pages on the journal's own connection (beside the
    index's thread), with the index's own removal: the page's block table rows (kept in
    step by triggers that each connection has for itself), anchors, sketch and analysis
    record go with it, and a copy checked again is new."""
    from scrapy_simhash.analysis.fingerprint import Fingerprinter
    from scrapy_simhash.dedup import Analyser
    from scrapy_simhash.index.analysed import Analysed

    rng = random.Random(5)
    words = ["".join(rng.choice("abcdefghij") for _ in range(7)) for _ in range(400)]
    paragraphs = [" ".join(words[n : n + 50]) + "." for n in range(0, 400, 50)]
    analysis = Analyser(Fingerprinter()).analyse("\n".join(paragraphs))
    assert analysis.anchors and analysis.sketch
    analysed = Analysed(("content",), "builtin", "1", analysis.text_hash)
    with open_index(f"sqlite:///{tmp_path / 'index.db'}") as index:
        dead = journal_for(index)
        dead.begin()
        dead.pending("lost")
        outcome = index.check_and_add(
            analysis.value, "lost", analysis.anchors, analysis.sketch, analysed=analysed
        )
        assert outcome.status == "new"
        child = subprocess.Popen(["true"])
        child.wait()
        dead._register(CrawlRecord(dead.crawl, dead.host, child.pid, "", time.time()))
        dead.close()
        alive = journal_for(index)
        assert alive.begin() == 1
        conn = index.store.db.conn
        tables = [*index.store.tables.names, "pages", "page_keys", "page_anchors", "anchors"]
        tables += ["page_sketches", "page_analyses", "journal_pending"]
        assert {
            name: conn.execute(f"SELECT count(*) FROM {name}").fetchone()[0] for name in tables
        } == dict.fromkeys(tables, 0)
        again = index.check_and_add(analysis.value, "copy", analysis.anchors, analysis.sketch)
        assert again.status == "new"
        alive.end()
