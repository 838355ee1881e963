"""End-to-end: crawl the bundled example site offline and check which pages are dropped.

example_project/site/manifest.json is the ground truth: every article page, and for each
planted near-duplicate the page it copies.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import parsel
import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ROOT / "example_project"
SITE = PROJECT / "site"
MANIFEST = json.loads((SITE / "manifest.json").read_text(encoding="utf-8"))["pages"]
ORIGINALS = {name for name, page in MANIFEST.items() if page["duplicate_of"] is None}
DUPLICATES = {name: page["duplicate_of"] for name, page in MANIFEST.items() if page["duplicate_of"]}
MAX_DISTANCE = 3


def page_names(html: str) -> list[str]:
    return [
        href
        for href in parsel.Selector(html).css("a::attr(href)").getall()
        if href.endswith(".html")
    ]


def read(name: str) -> str:
    return (SITE / name).read_text(encoding="utf-8")


def test_manifest_matches_site():
    article_pages = {p.name for p in SITE.glob("*.html")} - {"index.html"}
    assert set(MANIFEST) == article_pages
    assert ORIGINALS and DUPLICATES
    for name, page in MANIFEST.items():
        assert page["lang"] in {"en", "zh", "mixed"}, name
        assert page["note"], name
    for duplicate, original in DUPLICATES.items():
        assert original in ORIGINALS, f"{duplicate} copies {original}, which is not an original"


def test_every_page_declares_utf8():
    for path in SITE.glob("*.html"):
        assert '<meta charset="utf-8">' in path.read_text(encoding="utf-8"), path.name


def test_duplicates_are_only_reachable_through_their_original():
    # This is what makes the original the copy that the crawl keeps.
    assert set(page_names(read("index.html"))) == ORIGINALS
    for name in MANIFEST:
        for target in page_names(read(name)):
            assert target in MANIFEST or target == "index.html", f"{name} links to {target}"
            if target in DUPLICATES and target != name:
                assert DUPLICATES[target] in (name, DUPLICATES.get(name)), (
                    f"{target} is linked from {name}, not only from its original"
                )


def test_planted_distances():
    """Duplicates are within SIMHASH_MAX_DISTANCE of their original; distinct pages are not."""
    from scrapy_simhash import fingerprint, hamming_distance
    from scrapy_simhash.text import normalize_text, visible_text

    def page_fingerprint(name: str) -> int:
        # The same text the pipeline hashes: the spider's "title" and "content" fields.
        selector = parsel.Selector(read(name))
        title = " ".join("".join(selector.css("article h1 ::text").getall()).split())
        return fingerprint(normalize_text(title + "\n" + visible_text(selector.css("body").get())))

    fingerprints = {name: page_fingerprint(name) for name in MANIFEST}
    for duplicate, original in DUPLICATES.items():
        distance = hamming_distance(fingerprints[duplicate], fingerprints[original])
        assert distance <= MAX_DISTANCE, f"{duplicate} is {distance} bits from {original}"
    for a, b in itertools.combinations(sorted(ORIGINALS), 2):
        distance = hamming_distance(fingerprints[a], fingerprints[b])
        assert distance > MAX_DISTANCE, f"distinct pages {a} and {b} are {distance} bits apart"


def crawl(
    tmp_path: Path, run: str, *, project: Path = PROJECT, default_index: bool = False
) -> tuple[list[dict], dict[str, int]]:
    """Run ``scrapy crawl news`` in *project*; return the exported items and the stats.

    The index is ``index.db`` in *tmp_path*, or with *default_index* wherever the package
    puts it when ``SIMHASH_INDEX_URI`` is not set.
    """
    output = tmp_path / f"{run}.jl"
    log = tmp_path / f"{run}.log"
    index = [] if default_index else ["-s", f"SIMHASH_INDEX_URI=sqlite:///{tmp_path / 'index.db'}"]
    env = dict(os.environ)
    # The package under test, whether or not it is installed in this environment.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "scrapy",
            "crawl",
            "news",
            "-O",
            str(output),
            *index,
            "-s",
            f"LOG_FILE={log}",
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    log_text = log.read_text(encoding="utf-8") if log.exists() else ""
    assert result.returncode == 0, result.stderr + log_text
    # Errors in pipelines and signal handlers are logged without failing the process.
    assert "Traceback" not in log_text, log_text
    items = []
    if output.exists():
        with output.open(encoding="utf-8") as lines:
            items = [json.loads(line) for line in lines if line.strip()]
    # The final stats dump prints the stats dict; pick the counters out of it.
    stats_text = log_text[log_text.rindex("Dumping Scrapy stats") :]
    stats = {key: int(value) for key, value in re.findall(r"'([\w/]+)': (\d+)\b", stats_text)}
    return items, stats


def file_name(url: str) -> str:
    return Path(unquote(urlparse(url).path)).name


def test_crawl_keeps_originals_and_drops_planted_duplicates(tmp_path):
    items, stats = crawl(tmp_path, "first")
    kept = [file_name(item["url"]) for item in items]
    assert sorted(kept) == sorted(ORIGINALS)
    for item in items:
        assert item["title"], item["url"]
        assert item["content"].startswith("<body"), item["url"]
    assert stats.get("simhash/kept") == len(ORIGINALS)
    assert stats.get("simhash/dropped") == len(DUPLICATES)
    assert stats.get("item_dropped_count") == len(DUPLICATES)

    # Same index again: every page was seen in the first run, so nothing is kept.
    items, stats = crawl(tmp_path, "second")
    assert items == []
    assert stats.get("simhash/kept", 0) == 0
    assert stats.get("simhash/dropped") == len(MANIFEST)
    assert stats.get("item_dropped_count") == len(MANIFEST)


def test_crawl_with_the_default_index_location(tmp_path):
    """``scrapy crawl news`` with nothing set keeps its index in the project's .scrapy/."""
    # A copy, so that the index is not written into the source tree.
    project = tmp_path / "example_project"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns(".scrapy", "__pycache__"))
    items, stats = crawl(tmp_path, "default", project=project, default_index=True)
    assert sorted(file_name(item["url"]) for item in items) == sorted(ORIGINALS)
    assert stats.get("simhash/dropped") == len(DUPLICATES)
    assert (project / ".scrapy" / "simhash.db").is_file()


@pytest.mark.parametrize("name", sorted(DUPLICATES))
def test_duplicate_pages_differ_from_their_original(name):
    # Apart from the exact copy, each planted duplicate really is a different file.
    original = read(DUPLICATES[name])
    if "byte-identical" in MANIFEST[name]["note"]:
        assert read(name) == original
    else:
        assert read(name) != original
