"""The crawl's lease is renewed beside the index's thread, never behind its queued checks
(#43: on the spread layout a live crawl's heartbeat waited 126 s behind its own checks,
past the 120 s lease, and another crawl forgot its pages)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from pipelines import make_pipeline
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_simhash.crawl import deduplicator

QUEUED = 200


@pytest.mark.parametrize(
    "backend",
    [
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
    ],
)
@deferred_f_from_coro_f
async def test_the_lease_is_renewed_while_checks_are_queued(
    tmp_path, monkeypatch, request, backend
):
    monkeypatch.setattr(deduplicator, "HEARTBEAT", 0.05, raising=False)
    settings = {}
    if backend == "redis":
        server = request.getfixturevalue("redis_server")
        prefix = request.getfixturevalue("redis_prefix")
        settings["SIMHASH_INDEX_URI"] = f"{server.url}?prefix={prefix}"
    elif backend == "redis-spread":
        cluster = request.getfixturevalue("redis_cluster")
        prefix = request.getfixturevalue("redis_prefix")
        settings["SIMHASH_INDEX_URI"] = f"{cluster.url}&spread=true&prefix={prefix}"
    pipeline = make_pipeline(tmp_path, **settings)
    runner = pipeline.runner
    journal, thread = runner.journal, runner.index_thread
    renewals: list[int] = []
    renew = getattr(journal, "renew", journal.heartbeat)

    def counted_renew() -> bool:
        renewals.append(len(thread._calls))  # checks still queued when it ran
        return renew()

    monkeypatch.setattr(journal, "renew", counted_renew, raising=False)
    release = threading.Event()
    index = runner.dedup.index
    # The index's thread is busy with one long call, and QUEUED checks wait behind it.
    calls = [asyncio.ensure_future(thread.run(release.wait))]
    calls += [
        asyncio.ensure_future(thread.run(index.check_and_add, n * 0x0101_0101_0101 + 7, f"k{n}"))
        for n in range(QUEUED)
    ]
    await asyncio.sleep(0)  # each call is queued
    try:
        deadline = time.monotonic() + 60  # generous: only a failure waits this long
        while len(thread._calls) > QUEUED and time.monotonic() < deadline:
            time.sleep(0.01)  # until the thread runs the long call
        assert len(thread._calls) == QUEUED
        renewals.clear()  # those from before the queue was full
        while len(renewals) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(renewals) >= 2, "the lease was not renewed while checks were queued"
        assert all(queued == QUEUED for queued in renewals[:2])
    finally:
        release.set()
        await asyncio.gather(*calls)
        pipeline.close_spider()
