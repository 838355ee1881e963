"""Crawls given an index they cannot use (a malformed Redis URI, a FIFO): stopped at their
start in one log line, never a traceback or a crawl that waits for ever."""

from __future__ import annotations

import os
import sys


def test_malformed_redis_uri_stops_the_crawl_in_one_line(redis_server, tmp_path):
    from crawls import run_crawl

    for uri in (
        f"redis://:pa]ss@127.0.0.1:{redis_server.port}/0",
        f"redis://127.0.0.1:{redis_server.port}/0?timeout=nan",
    ):
        log = run_crawl(tmp_path, uri, pages=2)
        assert "'finish_reason': 'simhash_setup_error'" in log, log
        assert "Traceback" not in log, log


def test_a_fifo_as_the_index_path_is_refused_not_waited_on(tmp_path):
    import subprocess

    from pipelines import subprocess_env

    fifo = tmp_path / "index.db"
    os.mkfifo(fifo)
    out = subprocess.run(
        [sys.executable, "-m", "scrapy_simhash", "stats", "--index", str(fifo)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=subprocess_env(),
        timeout=60,
    )
    assert out.returncode == 1, out.stderr
    assert "not a regular file" in out.stderr and "Traceback" not in out.stderr
    from crawls import run_crawl

    log = run_crawl(tmp_path, f"sqlite:///{fifo}", pages=2, timeout=120)
    assert "'finish_reason': 'simhash_setup_error'" in log, log[-2000:]
    assert "not a regular file" in log
