"""Two crawls of the example project at once against one index spread over a Redis
Cluster keep, between them, what one crawl against SQLite keeps: each original once."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from pipelines import subprocess_env

from scrapy_simhash import open_index

pytestmark = pytest.mark.xdist_group("redis-cluster")

ROOT = Path(__file__).resolve().parents[2]


def _crawl(output: Path, log: Path, index_uri: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "scrapy", "crawl", "news", "-O", str(output),
         "-s", f"SIMHASH_INDEX_URI={index_uri}", "-s", f"LOG_FILE={log}"],
        cwd=ROOT / "example_project",
        env=subprocess_env(),
    )  # fmt: skip


def _kept(output: Path, log: Path) -> list[str]:
    text = log.read_text("utf-8")
    assert "Traceback" not in text and "simhash/errors" not in text, text
    lines = output.read_text("utf-8").splitlines()
    return sorted(Path(unquote(urlparse(json.loads(line)["url"]).path)).name for line in lines)


def test_two_crawls_on_a_spread_index_keep_each_original_once(redis_cluster, tmp_path):
    uri = f"{redis_cluster.url}&spread=true&prefix=crawl-{uuid.uuid4().hex[:8]}"
    runs = {"spread-one": uri, "spread-two": uri}
    crawls = {
        name: _crawl(tmp_path / f"{name}.jl", tmp_path / f"{name}.log", index)
        for name, index in runs.items()
    }
    for name, crawl in crawls.items():
        assert crawl.wait(timeout=300) == 0, (tmp_path / f"{name}.log").read_text("utf-8")
    kept = {name: _kept(tmp_path / f"{name}.jl", tmp_path / f"{name}.log") for name in runs}
    assert not set(kept["spread-one"]) & set(kept["spread-two"]), "no page kept twice"
    # What a crawl on SQLite keeps: every original article, no repost (test_example_crawl).
    manifest = json.loads((ROOT / "example_project/site/manifest.json").read_text("utf-8"))
    originals = sorted(n for n, page in manifest["pages"].items() if page["duplicate_of"] is None)
    assert sorted(kept["spread-one"] + kept["spread-two"]) == originals
    with open_index(uri) as index:
        assert len(index) == len(originals)
