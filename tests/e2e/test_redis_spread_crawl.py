"""Crawls of the example project against an index spread over a Redis Cluster: one crawl
keeps and drops what a crawl against SQLite does, and two crawls at once keep, between
them, each original once."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import unquote, urlparse

from pipelines import subprocess_env

from scrapy_simhash import open_index

ROOT = Path(__file__).resolve().parents[2]


def _crawl(output: Path, log: Path, index_uri: str, *settings: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "scrapy", "crawl", "news", "-O", str(output),
         "-s", f"SIMHASH_INDEX_URI={index_uri}", "-s", f"LOG_FILE={log}",
         *(arg for setting in settings for arg in ("-s", setting))],
        cwd=ROOT / "example_project",
        env=subprocess_env(),
    )  # fmt: skip


def _kept(output: Path, log: Path) -> list[str]:
    text = log.read_text("utf-8")
    assert "Traceback" not in text and "simhash/errors" not in text, text
    lines = output.read_text("utf-8").splitlines()
    return sorted(Path(unquote(urlparse(json.loads(line)["url"]).path)).name for line in lines)


def _counts(log: Path) -> dict[str, int]:
    """The simhash counters of a crawl's final stats."""
    text = log.read_text("utf-8")
    stats = text[text.rindex("Dumping Scrapy stats") :]
    return {k: int(v) for k, v in re.findall(r"'(simhash/[\w/]+)': (\d+)\b", stats)}


def test_a_crawl_on_a_spread_index_keeps_and_drops_what_it_does_on_sqlite(redis_cluster, tmp_path):
    runs = {
        "sqlite": f"sqlite:///{tmp_path / 'index.db'}",
        "spread": f"{redis_cluster.url}&spread=true&prefix=parity-{uuid.uuid4().hex[:8]}",
    }
    crawls = {  # one request at a time: both crawls meet the pages in the same order
        name: _crawl(tmp_path / f"{name}.jl", tmp_path / f"{name}.log", uri,
                     "CONCURRENT_REQUESTS=1")
        for name, uri in runs.items()
    }  # fmt: skip
    for name, crawl in crawls.items():
        assert crawl.wait(timeout=300) == 0, (tmp_path / f"{name}.log").read_text("utf-8")
    kept = {name: _kept(tmp_path / f"{name}.jl", tmp_path / f"{name}.log") for name in runs}
    counts = {name: _counts(tmp_path / f"{name}.log") for name in runs}
    assert kept["spread"] == kept["sqlite"]
    assert counts["sqlite"]["simhash/dropped"] > 0, "the site has planted near-duplicates"
    for counter in ("simhash/kept", "simhash/dropped", "simhash/new", "simhash/duplicate"):
        assert counts["spread"].get(counter) == counts["sqlite"].get(counter), counter


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
