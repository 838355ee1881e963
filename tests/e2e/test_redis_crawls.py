"""Two real crawls of the example project (``scrapy crawl`` in subprocesses) at once on one
Redis index, against a real ``redis-server`` started by the fixtures in conftest.py."""

from __future__ import annotations

import json
import subprocess
import sys
from itertools import combinations
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from pipelines import subprocess_env
from redis_package import import_redis

from scrapy_simhash import open_index
from scrapy_simhash.analysis.fingerprint import hamming_distance

import_redis()

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def uri(redis_server, redis_prefix) -> str:
    return f"{redis_server.url}?prefix={redis_prefix}"


def _crawl(output: Path, log: Path, index_uri: str) -> subprocess.Popen:
    env = subprocess_env()
    return subprocess.Popen(
        [sys.executable, "-m", "scrapy", "crawl", "news", "-O", str(output),
         "-s", f"SIMHASH_INDEX_URI={index_uri}", "-s", f"LOG_FILE={log}"],
        cwd=ROOT / "example_project",
        env=env,
    )  # fmt: skip


def _kept(tmp_path: Path, run: str) -> list[str]:
    log = (tmp_path / f"{run}.log").read_text("utf-8")
    assert "Traceback" not in log, log
    assert "simhash/errors" not in log, log
    lines = (tmp_path / f"{run}.jl").read_text("utf-8").splitlines()
    return [Path(unquote(urlparse(json.loads(line)["url"]).path)).name for line in lines]


def test_two_crawls_sharing_one_index_keep_each_page_once(uri, tmp_path):
    """Two crawls of the example site started at once on one new index keep, between them,
    each article once and no repost; no two stored pages are near-duplicates."""
    manifest = json.loads((ROOT / "example_project/site/manifest.json").read_text("utf-8"))
    originals = {n for n, page in manifest["pages"].items() if page["duplicate_of"] is None}
    crawls = [_crawl(tmp_path / f"{r}.jl", tmp_path / f"{r}.log", uri) for r in ("one", "two")]
    for run, crawl in zip(("one", "two"), crawls, strict=True):
        log = tmp_path / f"{run}.log"
        assert crawl.wait(timeout=300) == 0, log.read_text("utf-8") if log.exists() else ""
    one, two = _kept(tmp_path, "one"), _kept(tmp_path, "two")
    assert not set(one) & set(two), "no page kept by both crawls"
    assert sorted(one + two) == sorted(originals), "originals kept, reposts dropped"
    with open_index(uri) as index:
        stored = list(index.pages())
    assert sorted(Path(unquote(urlparse(p.key).path)).name for p in stored) == sorted(originals)
    close = [
        (a.key, b.key)
        for a, b in combinations(stored, 2)
        if not (a.exact or b.exact) and hamming_distance(a.fingerprint, b.fingerprint) <= 3
    ]
    assert close == [], "near-duplicates kept twice"
