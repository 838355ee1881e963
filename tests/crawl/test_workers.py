"""SIMHASH_WORKERS: fingerprinting in worker processes, check-and-insert still atomic."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from pipelines import make_pipeline
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_simhash import NearDuplicate
from scrapy_simhash.crawl.deduplicator import settings_from_crawler
from scrapy_simhash.crawl.workers import MAX_RESTARTS, WorkerDied, WorkerPool
from scrapy_simhash.dedup import AnalysisParams, analyse_fields
from scrapy_simhash.exceptions import ConfigurationError

#: Every test here starts worker processes (each loads the dictionaries): seconds apiece.
pytestmark = pytest.mark.slow

PAGE = """<html><head><meta charset="utf-8"><title>{title}</title></head><body>
<div id="nav"><a href="/">Home</a> <a href="/news">News</a> <a href="/about">About</a></div>
<article><h1>{title}</h1><p>{body}</p></article>
<div class="footer">Copyright Example News. All rights reserved.</div></body></html>"""

STORIES = [
    "The city council approved a new tram line on Tuesday after a long debate about costs. "
    "The line will connect the harbour district with the university campus and the central "
    "station, and the first trams are expected to run in the spring of next year.",
    "A severe drought has left farmers in the southern provinces with half of their usual "
    "wheat harvest. Reservoirs stand at their lowest level in thirty years, and irrigation "
    "has been rationed since June, while bread prices are expected to rise by autumn.",
    "北京大学的研究人员周二发布了一项关于城市交通的新研究。研究显示，地铁线路的扩建显著减少了"
    "市中心的交通拥堵，同时提高了公共交通的使用率。专家认为，这一经验值得其他城市借鉴，"
    "但也提醒需要关注票价、换乘便利和夜间服务等问题。",
    "The museum reopened its east wing after three years of restoration work, showing "
    "medieval tapestries, a collection of rare maps and a gallery of early photographs "
    "that had been stored in the basement since the flood, to crowds of visitors.",
]


def items() -> list[dict]:
    """Three copies of every story (one with a changed site template), interleaved."""
    out = []
    for copy in range(3):
        for n, story in enumerate(STORIES):
            title = f"Story {n}"
            html = PAGE.format(title=title, body=story)
            if copy == 2:
                html = html.replace("All rights reserved.", "Mirror site, updated daily.")
            out.append({"url": f"https://site{copy}.example/{n}", "title": title, "content": html})
    return out


async def run_all(pipeline, batch: list[dict]) -> list[bool]:
    """Process *batch* concurrently, as Scrapy does; True where the item was kept."""

    async def one(item):
        try:
            await pipeline.process_item(item)
            return True
        except NearDuplicate:
            return False

    return list(await asyncio.gather(*(one(item) for item in batch)))


@deferred_f_from_coro_f
async def test_two_workers_keep_one_copy_of_each_page(tmp_path):
    pipeline = make_pipeline(tmp_path, SIMHASH_WORKERS=2)
    try:
        assert pipeline.workers is not None
        batch = items()
        kept = await run_all(pipeline, batch)
        # Concurrently processed copies are checked one at a time: exactly one per story.
        kept_urls = [item["url"] for item, k in zip(batch, kept, strict=True) if k]
        assert len(kept_urls) == len(STORIES)
        assert {u.rsplit("/", 1)[1] for u in kept_urls} == {str(n) for n in range(len(STORIES))}
        worker_pids = set(pipeline.workers.pids)
        assert len(worker_pids) == 2 and os.getpid() not in worker_pids
    finally:
        pipeline.close_spider()
    assert pipeline.workers is None
    stats = pipeline.stats.get_stats()
    assert stats["simhash/checked"] == len(batch)
    assert stats["simhash/kept"] == len(STORIES)
    assert stats["simhash/dropped"] == 2 * len(STORIES)


@deferred_f_from_coro_f
async def test_workers_give_the_same_analysis_as_the_thread(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    threaded = make_pipeline(tmp_path / "a", SIMHASH_WORKERS=0)
    pooled = make_pipeline(tmp_path / "b", SIMHASH_WORKERS=1)
    try:
        for item in items()[: len(STORIES)]:
            values = [item["title"], item["content"]]
            pooled_analysis = await pooled.workers.analyse(values)
            assert pooled_analysis == threaded.runner.analyse_here(values)
    finally:
        threaded.close_spider()
        pooled.close_spider()


def test_analyse_fields_is_the_pipeline_analysis():
    params = AnalysisParams(
        top_n=128, seed=0, segmenter="jieba", min_terms=20, max_length=1000, extractor="builtin"
    )
    html = PAGE.format(title="Story", body=STORIES[2])
    analysis = analyse_fields(params, ["Story", html.encode("utf-8"), None])
    assert analysis.kind == "simhash"
    assert analysis == analyse_fields(params, ["Story", html])
    assert analyse_fields(params, ["", None]).kind == "empty"


def test_negative_workers_is_refused():
    with pytest.raises(ConfigurationError, match="SIMHASH_WORKERS=-1 must be from 0 to 1,024"):
        settings_from_crawler(get_crawler(settings_dict={"SIMHASH_WORKERS": -1}))


@deferred_f_from_coro_f
async def test_a_dead_worker_is_replaced_and_no_page_goes_unchecked(tmp_path):
    pipeline = make_pipeline(tmp_path, SIMHASH_WORKERS=1)
    try:
        batch = items()
        await run_all(pipeline, batch[: len(STORIES)])
        (old_pid,) = pipeline.workers.pids
        os.kill(old_pid, signal.SIGKILL)
        # Every later copy is still analysed (here, then by a new worker) and dropped.
        kept = await run_all(pipeline, batch[len(STORIES) :])
        assert not any(kept)
        # The next page starts a new worker, which answers.
        assert (await pipeline.workers.analyse([STORIES[0]])).kind == "simhash"
        (new_pid,) = pipeline.workers.pids
        assert new_pid != old_pid
    finally:
        pipeline.close_spider()
    stats = pipeline.stats.get_stats()
    assert stats["simhash/errors/workers"] >= 1
    assert stats["simhash/dropped"] == 2 * len(STORIES)
    assert "simhash/errors/analysis" not in stats


PARAMS = AnalysisParams(
    top_n=128, seed=0, segmenter="auto", min_terms=20, max_length=2_000_000, extractor="builtin"
)


@deferred_f_from_coro_f
async def test_each_page_gets_its_own_answer_from_the_pool():
    # Replies are matched to requests by order on each worker's socket: many pages at once,
    # over two workers, must each get the analysis of their own text.
    texts = [f"{story} Edition {n}, page {n * 7}." for n in range(40) for story in STORIES]
    pool = WorkerPool(PARAMS, 2)
    try:
        answers = await asyncio.gather(*(pool.analyse([t]) for t in texts))
    finally:
        pool.close()
    assert answers == [analyse_fields(PARAMS, [t]) for t in texts]
    assert len({a.value for a in answers}) > len(STORIES)


@deferred_f_from_coro_f
async def test_workers_run_outside_the_crawls_process_group():
    # Ctrl-C in a terminal signals the crawl's process group, at any moment: also while a
    # worker's interpreter is still starting, before it could ignore SIGINT itself.
    pool = WorkerPool(PARAMS, 2)
    try:
        for pid in pool.pids:
            assert os.getpgid(pid) != os.getpgrp()
            os.kill(pid, 0)  # alive
        answers = await asyncio.wait_for(
            asyncio.gather(*(pool.analyse([story]) for story in STORIES)), timeout=120
        )
        assert answers == [analyse_fields(PARAMS, [story]) for story in STORIES]
        assert pool.restarts == 0
    finally:
        pool.close()


@deferred_f_from_coro_f
async def test_pages_larger_than_the_socket_buffer_go_through():
    # Several megabytes at once fill the socket: the rest is written as the worker reads.
    big = " ".join(f"{story} Section {n}." for n in range(3000) for story in STORIES[:2])
    assert len(big.encode()) > 1_000_000
    pool = WorkerPool(PARAMS, 1)
    try:
        answers = await asyncio.gather(pool.analyse([big]), pool.analyse([STORIES[0]]))
    finally:
        pool.close()
    assert answers == [analyse_fields(PARAMS, [big]), analyse_fields(PARAMS, [STORIES[0]])]


@deferred_f_from_coro_f
async def test_pages_waiting_on_a_closed_pool_fail_with_worker_died():
    pool = WorkerPool(PARAMS, 1)
    pending = asyncio.ensure_future(pool.analyse([STORIES[0] * 200]))
    await asyncio.sleep(0)
    pool.close()
    with pytest.raises(WorkerDied):
        await pending


@deferred_f_from_coro_f
async def test_workers_that_keep_dying_are_given_up_for_a_thread(tmp_path):
    pipeline = make_pipeline(tmp_path, SIMHASH_WORKERS=1)
    try:
        workers = pipeline.workers
        # Every new worker now fails while it starts (an unknown segmenter), as a broken
        # installation would; then the running one is killed.
        workers.params = dataclasses.replace(workers.params, segmenter="no-such-segmenter")
        os.kill(workers.pids[0], signal.SIGKILL)
        batch = items()
        kept = []
        for item in batch:  # one at a time: each page finds the worker dead
            kept += await run_all(pipeline, [item])
        assert pipeline.workers is None
    finally:
        pipeline.close_spider()
    assert kept == [True] * len(STORIES) + [False] * (len(batch) - len(STORIES))
    assert workers.restarts == MAX_RESTARTS
    stats = pipeline.stats.get_stats()
    # The killed worker, each restarted one, and the page that found none left.
    assert MAX_RESTARTS + 1 <= stats["simhash/errors/workers"] <= MAX_RESTARTS + 2
    assert "simhash/errors/analysis" not in stats


@deferred_f_from_coro_f
async def test_a_worker_that_dies_while_idle_is_replaced_and_its_successor_answers():
    # The successor's socket and sentinel may get the file descriptor numbers of the dead
    # worker's: they must still be watched (a stale registration would hang this test).
    pool = WorkerPool(PARAMS, 2)
    try:
        await asyncio.gather(*(pool.analyse([story]) for story in STORIES))
        dead = pool.pids[0]
        os.kill(dead, signal.SIGKILL)
        for _ in range(1000):  # until the event loop sees the exit (at most 10 s)
            if not pool._workers[0].alive:
                break
            await asyncio.sleep(0.01)
        assert not pool._workers[0].alive
        answers = await asyncio.wait_for(
            asyncio.gather(*(pool.analyse([story]) for story in STORIES * 5)), timeout=60
        )
        assert answers == [analyse_fields(PARAMS, [story]) for story in STORIES * 5]
        assert dead not in pool.pids and pool.restarts == 1
        assert all(worker.alive for worker in pool._workers)
    finally:
        pool.close()


def test_closing_after_the_event_loop_stops_every_worker(tmp_path):
    # The reactor stopped with a page still waiting: closing must still stop every worker.
    # In a process of its own: the tests run inside the reactor's event loop.
    script = tmp_path / "closing.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import asyncio
            from scrapy_simhash.dedup import AnalysisParams
            from scrapy_simhash.crawl.workers import WorkerPool

            if __name__ == "__main__":
                pool = WorkerPool({PARAMS!r}, 2)
                loop = asyncio.new_event_loop()
                pending = []

                async def first():
                    await asyncio.gather(*(pool.analyse([t]) for t in ["a b c"] * 4))
                    pending.append(asyncio.ensure_future(pool.analyse(["a b c" * 100000])))
                    await asyncio.sleep(0)

                loop.run_until_complete(first())
                loop.close()
                processes = [worker.process for worker in pool._workers]
                pool.close(timeout=5)
                if all(process.returncode is not None for process in processes):
                    print("closed")
            """
        )
    )
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "closed\n", result.stderr


def test_workers_that_cannot_start_leave_the_crawl_to_a_thread(tmp_path, monkeypatch, caplog):
    # No interpreter where sys.executable points (an embedded Python, a removed venv).
    monkeypatch.setattr("sys.executable", str(tmp_path / "no-such-python"))
    pipeline = make_pipeline(tmp_path, SIMHASH_WORKERS=1)
    try:
        assert pipeline.workers is None
        assert pipeline.dedup is not None, "the index is open: the crawl goes on"
    finally:
        pipeline.close_spider()
    assert "Could not start SIMHASH_WORKERS=1 worker processes" in caplog.text


@deferred_f_from_coro_f
async def test_a_dead_worker_that_cannot_be_replaced_leaves_no_page_unchecked(
    tmp_path, monkeypatch
):
    pipeline = make_pipeline(tmp_path, SIMHASH_WORKERS=1)
    try:
        workers = pipeline.workers
        os.kill(workers.pids[0], signal.SIGKILL)
        # From now on no process can start (the interpreter is gone).
        monkeypatch.setattr("sys.executable", str(tmp_path / "no-such-python"))
        batch = items()
        kept = []
        for item in batch:
            kept += await run_all(pipeline, [item])
        assert pipeline.workers is None, "given up for a thread"
    finally:
        pipeline.close_spider()
    assert kept == [True] * len(STORIES) + [False] * (len(batch) - len(STORIES))
    assert workers.restarts == MAX_RESTARTS
    stats = pipeline.stats.get_stats()
    assert "simhash/errors/analysis" not in stats
    assert stats["simhash/errors/workers"] >= MAX_RESTARTS


@deferred_f_from_coro_f
async def test_a_hung_worker_is_killed_and_its_page_let_through_counted(tmp_path, caplog):
    # 5 s: long enough for a fresh worker to load its dictionary on a busy machine.
    pipeline = make_pipeline(tmp_path, SIMHASH_WORKERS=1, SIMHASH_WORKER_TIMEOUT=5)
    batch = items()
    originals, copies, more_copies = (
        batch[i * len(STORIES) : (i + 1) * len(STORIES)] for i in range(3)
    )
    try:
        assert await run_all(pipeline, originals) == [True] * len(STORIES)
        (hung_pid,) = pipeline.workers.pids
        hung = pipeline.workers._workers[0].process
        # A real process that really stops answering (as one stuck in a loop would).
        os.kill(hung_pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            # Not a bound on time: only that a hang fails instead of stopping the suite.
            kept = await asyncio.wait_for(run_all(pipeline, copies), timeout=300)
            elapsed = time.monotonic() - started
        finally:
            if hung.poll() is None:
                os.kill(hung_pid, signal.SIGCONT)
        # The page the worker was stuck on is let through; the pages queued behind it are
        # analysed in the crawl's process and dropped.
        assert kept == [True] + [False] * (len(STORIES) - 1)
        # It waited for its timeout (a lower bound, which no load can break) and no more
        # than the one page it was stuck on: the others were analysed here (counted below).
        assert elapsed >= 5
        assert hung.wait(timeout=10) == -signal.SIGKILL, "the hung worker was not killed"
        # A new worker answers the next pages.
        kept_later = await run_all(pipeline, more_copies)
        assert kept_later == [False] * len(STORIES), pipeline.stats.get_stats()
        (new_pid,) = pipeline.workers.pids
        assert new_pid != hung_pid
    finally:
        pipeline.close_spider()
    stats = pipeline.stats.get_stats()
    assert stats["simhash/errors/worker_timeout"] == 1
    assert stats["simhash/checked"] == len(batch)
    # Every item in exactly one outcome.
    assert stats["simhash/kept"] + stats["simhash/dropped"] + stats[
        "simhash/errors/worker_timeout"
    ] == len(batch)
    assert stats["simhash/dropped"] == 2 * len(STORIES) - 1
    assert "simhash/errors/analysis" not in stats
    assert f"{copies[0]['url']}: worker {hung_pid} gave no answer in 5 s" in caplog.text


@pytest.mark.parametrize("value", [0, -1, "soon"])
def test_a_worker_timeout_that_is_not_a_positive_number_is_refused(value):
    with pytest.raises(ConfigurationError, match="SIMHASH_WORKER_TIMEOUT"):
        settings_from_crawler(get_crawler(settings_dict={"SIMHASH_WORKER_TIMEOUT": value}))
