"""The archive job on a real multi-process Dask cluster decides as the local mode (and so
as the pipeline), with two workers, with one, and when a worker dies mid-job. One cluster
serves the module."""

from __future__ import annotations

import os
import signal
import time

import pytest
from archive_feeds import (
    COMPARED,
    assert_same_as_pipeline,
    feed_items,
    job_of,
    pipeline_verdicts,
)

from scrapy_simhash.tools.archive import run_local
from scrapy_simhash.tools.feeds import read_feed, write_feed

distributed = pytest.importorskip("distributed", reason="needs the [dask] extra")
pytestmark = [pytest.mark.corpus, pytest.mark.slow]  # a Dask cluster of worker processes


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def feed(tmp_path_factory):
    from conftest import CORPORA

    if not CORPORA.is_dir():
        pytest.skip(f"needs the shared corpora at {CORPORA} (not part of a user's checkout)")
    path = tmp_path_factory.mktemp("archive") / "items.jl"
    write_feed(path, feed_items(CORPORA, seed=21, limit=90))
    return path


@pytest.fixture(scope="module")
def local(feed, config):
    return run_local([str(feed)], job_of(config)).outcomes


@pytest.fixture(scope="module")
def config():
    from scrapy_simhash.settings import SimhashSettings

    return SimhashSettings.from_settings({})


def run(client, feed, config, **options):
    from scrapy_simhash.tools.archive import run_dask

    # Small partitions: several per worker, so that buckets and rounds cross them.
    return run_dask([str(feed)], job_of(config), client, blocksize=40_000, **options)


def same(a, b) -> None:
    for name in COMPARED:
        assert getattr(a, name).tolist() == getattr(b, name).tolist(), name


def test_two_workers_decide_as_the_local_mode_and_the_pipeline(client, feed, config, local):
    result = run(client, feed, config, remainder=0, max_rounds=1)
    assert len(result.parts) > 3
    assert "1 rounds" in result.outcomes.how
    same(result.outcomes, local)
    assert_same_as_pipeline(result.outcomes, pipeline_verdicts(config, read_feed(feed)))


def test_with_templates_two_workers_decide_as_the_local_mode_and_the_pipeline(client, feed):
    from scrapy_simhash.settings import SimhashSettings

    # One site's records in every partition: a record's template is learned from records
    # of other partitions, read in a first pass.
    config = SimhashSettings.from_settings({"SIMHASH_SITE_TEMPLATES": True})
    verdicts = pipeline_verdicts(config, read_feed(feed))
    assert sum(v.template > 0 for v in verdicts) > 0
    result = run(client, feed, config)
    assert len(result.parts) > 3
    assert [name for name, _ in result.stages][:2] == ["templates", "fingerprint"]
    same(result.outcomes, run_local([str(feed)], job_of(config)).outcomes)
    assert_same_as_pipeline(result.outcomes, verdicts)


def test_one_worker_decides_as_two(client, feed, config, local):
    client.cluster.scale(1)
    deadline = time.monotonic() + 60
    while len(client.scheduler_info()["workers"]) > 1 and time.monotonic() < deadline:
        time.sleep(0.2)
    try:
        assert len(client.scheduler_info()["workers"]) == 1
        same(run(client, feed, config).outcomes, local)
    finally:
        client.cluster.scale(2)
        client.wait_for_workers(2, timeout=120)


def test_a_worker_killed_mid_job_changes_nothing(client, feed, config, tmp_path):
    # Against an index's pages too: a crawl stored some of the stories before.
    uri = f"sqlite:///{tmp_path / 'index.db'}"
    earlier = [
        {**item, "url": f"https://old.example/{n}"} for n, item in enumerate(read_feed(feed))
    ]
    pipeline_verdicts(config, earlier[::7], uri)
    with config.open_index(uri) as index:
        stored = list(index.pages())
    local = run_local([str(feed)], job_of(config), stored=stored).outcomes
    assert any(o < 0 for o in local.matched.tolist()) and "rounds" in local.how
    client.wait_for_workers(2, timeout=60)
    pids = client.run(os.getpid)
    killed = []

    def progress(stage: str, detail: str) -> None:
        # The fingerprints are held by the workers now: kill one of them.
        if stage == "fingerprint":
            victim = sorted(pids)[0]
            os.kill(pids[victim], signal.SIGKILL)
            killed.append(victim)
            time.sleep(0.5)

    result = run(client, feed, config, progress=progress, stored=stored)
    assert killed
    same(result.outcomes, local)
