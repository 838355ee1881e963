"""The spider middleware in real crawls of a local site (``scrapy runspider`` in a subprocess).

tests/sites/middleware/site/ has two pairs of pages with the same article and different
sidebars: tram.html / tram-copy.html and drought.html / drought-mirror.html. Each copy is
linked only from its original (so the original is checked first), and links to one page
that nothing else links to. The spider opts out of the middleware for the drought mirror's
link (``class="nocheck"``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scrapy_simhash import open_index

HERE = Path(__file__).resolve().parents[1] / "sites" / "middleware"
SITE = HERE / "site"


def url(name: str) -> str:
    return (SITE / name).as_uri()


def crawl(tmp_path: Path, *settings: str) -> tuple[list[dict], dict]:
    """Run the test spider in a subprocess; return its items and integer stats."""
    command = [sys.executable, "-m", "scrapy", "runspider", str(HERE / "spider.py")]
    command += ["-a", "stats_out=stats.json", "-O", "items.jl"]
    command += ["-s", f"SIMHASH_INDEX_URI=sqlite:///{tmp_path / 'index.db'}"]
    for setting in settings:
        command += ["-s", setting]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    lines = (tmp_path / "items.jl").read_text(encoding="utf-8").splitlines()
    stats = json.loads((tmp_path / "stats.json").read_text(encoding="utf-8"))
    return [json.loads(line) for line in lines], stats


def mw_stats(stats: dict) -> dict:
    prefix = "simhash/middleware/"
    return {k.removeprefix(prefix): v for k, v in stats.items() if k.startswith(prefix)}


@pytest.fixture(scope="module")
def first_run(tmp_path_factory) -> tuple[Path, list[dict], dict]:
    """One first crawl into a new index, for the tests that read it or crawl again: its
    directory (whose ``index.db`` a test may open), items and stats."""
    directory = tmp_path_factory.mktemp("first-run")
    items, stats = crawl(directory)
    copy_index(directory, directory / "as-left")
    return directory, items, stats


def copy_index(source: Path, target: Path) -> None:
    """Copy the index in *source* (its WAL too, if any) into *target*."""
    target.mkdir(exist_ok=True)
    for path in source.glob("index.db*"):
        shutil.copy(path, target / path.name)


def test_links_of_a_near_duplicate_are_not_followed(first_run):
    tmp_path, items, stats = first_run
    assert {item["url"] for item in items} == {
        url("index.html"),
        url("tram.html"),
        url("drought.html"),
        url("drought-mirror.html"),  # a duplicate too, but its request opted out
        url("only-via-mirror.html"),
    }
    # tram-copy.html is fetched (it is only known to be a copy once fetched); the page
    # reachable only through it is never requested.
    assert stats["downloader/request_count"] == 6
    assert mw_stats(stats) == {
        "checked": 5,
        "kept": 4,
        "simhash": 4,
        "short": 1,
        "dropped": 1,
        "dropped/near": 1,
        "distance/0": 1,
        "share/100": 1,
        "skipped/dont_simhash": 1,
    }
    with open_index(f"sqlite:///{tmp_path / 'index.db'}") as index:
        assert [(d.key, d.kept_key, d.distance) for d in index.drops()] == [
            (url("tram-copy.html"), url("tram.html"), 0)
        ]


def test_second_run_follows_links_of_unchanged_pages(first_run, tmp_path):
    copy_index(first_run[0] / "as-left", tmp_path)
    items, stats = crawl(tmp_path)
    # Every page was stored by the first run: items are dropped, but links of pages that
    # match themselves are followed, so the same pages are reached again.
    assert [item["url"] for item in items] == [url("drought-mirror.html")]
    assert stats["downloader/request_count"] == 6
    second = mw_stats(stats)
    assert (second["unchanged"], second.get("kept", 0), second["dropped"]) == (4, 0, 1)
    with open_index(f"sqlite:///{tmp_path / 'index.db'}") as index:
        drops = [(d.key, d.kept_key, d.unchanged) for d in index.drops()]
    assert sorted(drops[1:]) == sorted(
        [(url(p), url(p), True) for p in ("index.html", "tram.html", "drought.html")]
        + [(url("tram-copy.html"), url("tram.html"), False)]
        + [(url("only-via-mirror.html"), url("only-via-mirror.html"), True)]
    ), "the second run's drops: each page unchanged since the first, the copy a duplicate"

    # A third run that keeps unchanged pages: their items too, but still not the copy's.
    items, stats = crawl(tmp_path, "SIMHASH_DROP_UNCHANGED=False")
    assert len(items) == 5
    assert url("tram-copy.html") not in {item["url"] for item in items}
    assert (mw_stats(stats)["unchanged"], mw_stats(stats)["kept"]) == (4, 4)


def test_flag_only_keeps_and_marks(tmp_path):
    items, stats = crawl(tmp_path, "SIMHASH_FLAG_ONLY=True")
    by_url = {item["url"]: item for item in items}
    assert len(by_url) == 7, "every page is crawled"
    assert by_url[url("tram-copy.html")]["simhash_duplicate_of"] == url("tram.html")
    assert "simhash_duplicate_of" not in by_url[url("tram.html")]
    assert mw_stats(stats)["flagged"] == 1
    assert "dropped" not in mw_stats(stats)
    with open_index(f"sqlite:///{tmp_path / 'index.db'}") as index:
        assert list(index.drops()) == [], "nothing was dropped"
