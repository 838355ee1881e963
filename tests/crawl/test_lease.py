"""The crawl's lease is renewed, exported pages leave its journal, and the pages of dead
crawls are forgotten, beside the index's thread, never behind its queued checks (#43: on
the spread layout a live crawl's heartbeat waited 126 s behind its own checks, past the
120 s lease, and another crawl forgot its pages; on Redis, settlements waited 1 to 22 s a
round, and a crawl killed then had most of what it had exported forgotten and exported
again; a surviving crawl of two never recovered the dead one's pages in 31 s, and
dropped them as unchanged meanwhile)."""

from __future__ import annotations

import asyncio
import subprocess
import threading
import time

import pytest
from pipelines import make_pipeline
from redis_package import STORED_BACKENDS
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_simhash.crawl import deduplicator
from scrapy_simhash.index.base import storable_key
from scrapy_simhash.index.journal import CrawlRecord, journal_for

QUEUED = 200


BACKENDS = STORED_BACKENDS


def backend_settings(request, backend: str) -> dict:
    settings = {}
    if backend == "redis":
        server = request.getfixturevalue("redis_server")
        prefix = request.getfixturevalue("redis_prefix")
        settings["SIMHASH_INDEX_URI"] = f"{server.url}?prefix={prefix}"
    elif backend == "redis-spread":
        cluster = request.getfixturevalue("redis_cluster")
        prefix = request.getfixturevalue("redis_prefix")
        settings["SIMHASH_INDEX_URI"] = f"{cluster.url}&spread=true&prefix={prefix}"
    return settings


def busy(thread, index) -> tuple[threading.Event, list]:
    """The index's thread busy with one long call, and QUEUED checks waiting behind it."""
    release = threading.Event()
    calls = [asyncio.ensure_future(thread.run(release.wait))]
    calls += [
        asyncio.ensure_future(thread.run(index.check_and_add, n * 0x0101_0101_0101 + 7, f"k{n}"))
        for n in range(QUEUED)
    ]
    return release, calls


def wait_until_queued(thread, deadline: float) -> None:
    while len(thread._calls) > QUEUED and time.monotonic() < deadline:
        time.sleep(0.01)  # until the thread runs the long call
    assert len(thread._calls) == QUEUED


@pytest.mark.parametrize("backend", BACKENDS)
@deferred_f_from_coro_f
async def test_the_lease_is_renewed_while_checks_are_queued(
    tmp_path, monkeypatch, request, backend
):
    monkeypatch.setattr(deduplicator, "HEARTBEAT", 0.05, raising=False)
    pipeline = make_pipeline(tmp_path, **backend_settings(request, backend))
    runner = pipeline.runner
    journal, thread = runner.journal, runner.index_thread
    renewals: list[int] = []
    renew = getattr(journal, "renew", journal.heartbeat)

    def counted_renew() -> bool:
        renewals.append(len(thread._calls))  # checks still queued when it ran
        return renew()

    monkeypatch.setattr(journal, "renew", counted_renew, raising=False)
    release, calls = busy(thread, runner.dedup.index)
    await asyncio.sleep(0)  # each call is queued
    try:
        deadline = time.monotonic() + 60  # generous: only a failure waits this long
        wait_until_queued(thread, deadline)
        renewals.clear()  # those from before the queue was full
        while len(renewals) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(renewals) >= 2, "the lease was not renewed while checks were queued"
        assert all(queued == QUEUED for queued in renewals[:2])
    finally:
        release.set()
        await asyncio.gather(*calls)
        pipeline.close_spider()


@pytest.mark.parametrize("backend", BACKENDS)
@deferred_f_from_coro_f
async def test_exported_pages_leave_the_journal_while_checks_are_queued(tmp_path, request, backend):
    pipeline = make_pipeline(tmp_path, **backend_settings(request, backend))
    runner = pipeline.runner
    journal, thread = runner.journal, runner.index_thread
    exported = [f"https://example.com/page/{n}" for n in range(20)]
    for key in exported:
        journal.pending(key)
    stored = {storable_key(key) for key in exported}
    assert stored <= set(journal.unsettled())
    release, calls = busy(thread, runner.dedup.index)
    await asyncio.sleep(0)
    try:
        deadline = time.monotonic() + 60
        wait_until_queued(thread, deadline)
        # Their items are in the output: the pipeline hands their keys over.
        runner.settle(exported)
        while stored & set(journal.unsettled()) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not stored & set(journal.unsettled()), "settled only behind the checks"
        assert len(thread._calls) == QUEUED, "the checks ran first"
    finally:
        release.set()
        await asyncio.gather(*calls)
        pipeline.close_spider()


def crawl_that_died(index, keys: list[str]):
    """A crawl of this host that stored *keys* and died before they reached its output:
    its record names a process that has ended."""
    dead = journal_for(index)
    dead.begin()
    for n, key in enumerate(keys):
        dead.pending(key)
        index.check_and_add(n * 0x0F0F_0F0F_0F0F + 0x5A5A, key)
    child = subprocess.Popen(["true"])
    child.wait()
    dead._register(CrawlRecord(dead.crawl, dead.host, child.pid, "", time.time()))
    return dead


@pytest.mark.parametrize("backend", BACKENDS)
@deferred_f_from_coro_f
async def test_a_dead_crawls_pages_are_forgotten_while_checks_are_queued(
    tmp_path, monkeypatch, request, backend
):
    monkeypatch.setattr(deduplicator, "HEARTBEAT", 0.05, raising=False)
    pipeline = make_pipeline(tmp_path, **backend_settings(request, backend))
    runner = pipeline.runner
    index, thread = runner.dedup.index, runner.index_thread
    lost = [f"https://example.com/lost/{n}" for n in range(5)]
    dead = crawl_that_died(index, lost)  # after this crawl began: found at a heartbeat
    release, calls = busy(thread, index)
    await asyncio.sleep(0)
    try:
        deadline = time.monotonic() + 30  # generous: only a failure waits this long
        wait_until_queued(thread, deadline)
        began = time.monotonic()

        def recovered() -> bool:
            records = {record.crawl for record in runner.journal._records()}
            return dead.crawl not in records and not any(index.find(key) for key in lost)

        while not recovered() and time.monotonic() < deadline:
            time.sleep(0.01)
        took = time.monotonic() - began
        assert recovered(), "recovered only behind the checks"
        assert len(thread._calls) == QUEUED, "the checks ran first"
        assert dead._pending(dead.crawl) == []
        # A few heartbeats (0.05 s), not the time the queued checks take.
        assert took < 5
    finally:
        release.set()
        await asyncio.gather(*calls)
        pipeline.close_spider()
        dead.close()
    assert pipeline.stats.get_value("simhash/journal/forgotten") == len(lost)


def test_a_settlement_after_the_spider_closed_does_nothing(tmp_path):
    # A settlement that read the ended output failed ('NoneType' object has no attribute
    # 'confirmed').
    pipeline = make_pipeline(tmp_path)
    pipeline.close_spider()
    pipeline._settle()  # raises if it reads the ended output
    assert pipeline.output is None


@pytest.mark.redis
def test_a_recovery_that_fails_is_counted_logged_and_tried_again(
    tmp_path, monkeypatch, request, caplog
):
    monkeypatch.setattr(deduplicator, "HEARTBEAT", 0.05, raising=False)
    pipeline = make_pipeline(tmp_path, **backend_settings(request, "redis"))
    runner = pipeline.runner
    index, keeper = runner.dedup.index, runner.journal_keeper
    dead = crawl_that_died(index, [])
    # Another program wrote under the prefix: the dead crawl's journal cannot be read.
    index.store.server.client.set(dead._key(f"pending:{dead.crawl}"), "not a set")
    try:
        deadline = time.monotonic() + 30
        while runner.stats.get_value("simhash/errors/journal", 0) < 2:
            assert time.monotonic() < deadline, "no failed recovery reported"
            time.sleep(0.01)
        renewals = keeper.renewals
        while keeper.renewals == renewals and time.monotonic() < deadline:
            time.sleep(0.01)
        assert keeper.renewals > renewals, "the lease is still renewed"
    finally:
        pipeline.close_spider()
    [first, *_] = [r for r in caplog.records if r.levelname == "ERROR"]
    assert first.getMessage().startswith(
        "Could not forget the pages of dead crawls in the index: A key of the index at"
    )
