"""End-to-end: crawl the bundled example site offline and check which pages are dropped.

example_project/site/manifest.json is the ground truth: every article page, and for each
planted near-duplicate the page it copies.
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import parsel
import pytest
from pipelines import subprocess_env

ROOT = Path(__file__).resolve().parents[2]
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
    from scrapy_simhash.extract.extractors import visible_text
    from scrapy_simhash.extract.text import normalize_text

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


def start_crawl(
    tmp_path: Path,
    run: str,
    *,
    project: Path = PROJECT,
    default_index: bool = False,
    settings: dict[str, object] | None = None,
    arguments: dict[str, object] | None = None,
) -> subprocess.Popen:
    """Start ``scrapy crawl news`` in *project*, exporting to ``<run>.jl``, logging to
    ``<run>.log``, with extra *settings* (``-s``) and spider *arguments* (``-a``). The
    index is ``index.db`` in *tmp_path*, or with *default_index* wherever the package puts
    it when ``SIMHASH_INDEX_URI`` is not set."""
    index = [] if default_index else ["-s", f"SIMHASH_INDEX_URI=sqlite:///{tmp_path / 'index.db'}"]
    for name, value in (settings or {}).items():
        index += ["-s", f"{name}={value}"]
    for name, value in (arguments or {}).items():
        index += ["-a", f"{name}={value}"]
    env = subprocess_env()
    command = [sys.executable, "-m", "scrapy", "crawl", "news", "-O", str(tmp_path / f"{run}.jl")]
    command += [*index, "-s", f"LOG_FILE={tmp_path / f'{run}.log'}"]
    return subprocess.Popen(
        command, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finish_crawl(process: subprocess.Popen, tmp_path: Path, run: str):
    """Wait for a crawl; return its exported items and its final stats."""
    _, stderr = process.communicate(timeout=300)
    log = tmp_path / f"{run}.log"
    log_text = log.read_text(encoding="utf-8") if log.exists() else ""
    assert process.returncode == 0, stderr + log_text
    # Errors in pipelines and signal handlers are logged without failing the process.
    assert "Traceback" not in log_text, log_text
    output = tmp_path / f"{run}.jl"
    items = []
    if output.exists():
        with output.open(encoding="utf-8") as lines:
            items = [json.loads(line) for line in lines if line.strip()]
    # The final stats dump prints the stats dict; pick the counters out of it.
    stats_text = log_text[log_text.rindex("Dumping Scrapy stats") :]
    stats = {key: int(value) for key, value in re.findall(r"'([\w/]+)': (\d+)\b", stats_text)}
    return items, stats


def crawl(tmp_path: Path, run: str, **options) -> tuple[list[dict], dict[str, int]]:
    return finish_crawl(start_crawl(tmp_path, run, **options), tmp_path, run)


def file_name(url: str) -> str:
    return Path(unquote(urlparse(url).path)).name


#: A new text for a page between two crawls: another story altogether.
NEW_STORY = [
    "The regional orchestra announced on Friday that its winter season will open with a",
    "program of new works by three young composers from the coastal towns.",
    "Tickets go on sale next month, and students may attend the rehearsals for free.",
    "The conductor said the season is meant to bring audiences who have never been to a",
    "concert hall, and that every performance will also be streamed to local libraries.",
    "Volunteers are needed to guide visitors and to help with the costumes of the opera.",
]


def test_crawl_keeps_originals_and_drops_planted_duplicates_then_recrawls(tmp_path):
    """Two runs of ``scrapy crawl news`` with nothing set: the index is kept in the
    project's .scrapy/, and the second run tells unchanged, changed and duplicate pages
    apart."""
    # A copy of the project: the index is not written into the source tree, and one page
    # changes between the two crawls.
    project = tmp_path / "example_project"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns(".scrapy", "__pycache__"))
    items, stats = crawl(tmp_path, "first", project=project, default_index=True)
    index_path = project / ".scrapy" / "simhash.db"
    assert index_path.is_file()
    kept = [file_name(item["url"]) for item in items]
    assert sorted(kept) == sorted(ORIGINALS)
    for item in items:
        assert item["title"], item["url"]
        assert item["content"].startswith("<body"), item["url"]
    assert stats.get("simhash/kept") == len(ORIGINALS)
    assert stats.get("simhash/dropped") == len(DUPLICATES)
    assert stats.get("item_dropped_count") == len(DUPLICATES)

    # An original that no planted duplicate copies gets a new text between the crawls.
    changed = sorted(ORIGINALS - set(DUPLICATES.values()))[0]
    page = project / "site" / changed
    paragraphs = iter(NEW_STORY * 10)
    html = re.sub(
        r"(?s)<p>.*?</p>", lambda _: f"<p>{next(paragraphs)}</p>", page.read_text("utf-8")
    )
    page.write_text(html, encoding="utf-8")

    # Same index again: the other originals are unchanged since the last crawl (not
    # duplicates of themselves) and dropped; the changed page is kept and replaces its
    # old text in the index; the planted duplicates are dropped as before.
    items, stats = crawl(tmp_path, "second", project=project, default_index=True)
    assert [file_name(item["url"]) for item in items] == [changed]
    assert stats.get("simhash/kept") == 1
    assert stats.get("simhash/changed") == 1
    assert stats.get("simhash/unchanged") == len(ORIGINALS) - 1
    assert stats.get("simhash/dropped") == len(DUPLICATES)
    assert stats.get("item_dropped_count") == len(MANIFEST) - 1
    assert stats.get("item_dropped_reasons_count/Unchanged") == len(ORIGINALS) - 1
    log = (tmp_path / "second.log").read_text(encoding="utf-8")
    for name in ORIGINALS - {changed}:
        url = (project / "site" / name).as_uri()
        assert f"Dropped: {url} is unchanged since the last crawl (distance 0)" in log
        assert f"{url} is a near-duplicate of {url} " not in log
    from scrapy_simhash import open_index

    with open_index(str(index_path)) as index:
        assert len(index.find(page.as_uri())) == 1, "one entry per key: the new text"
        assert len(index) == len(ORIGINALS)

    # A third crawl with the reset option (as scrapy-deltafetch's deltafetch_reset):
    # the index forgets its pages, and every article is exported again.
    arguments = {"simhash_reset": 1}
    items, stats = crawl(
        tmp_path, "reset", project=project, default_index=True, arguments=arguments
    )
    assert sorted(file_name(item["url"]) for item in items) == sorted(ORIGINALS)
    assert stats.get("simhash/kept") == len(ORIGINALS)
    assert stats.get("simhash/dropped") == len(DUPLICATES)
    assert "simhash/unchanged" not in stats
    log = (tmp_path / "reset.log").read_text(encoding="utf-8")
    assert f"forgot the {len(ORIGINALS)} pages it held" in log

    # A fourth, re-exporting the unchanged pages instead: all kept, none stored twice.
    arguments = {"simhash_drop_unchanged": 0}
    items, stats = crawl(
        tmp_path, "again", project=project, default_index=True, arguments=arguments
    )
    assert sorted(file_name(item["url"]) for item in items) == sorted(ORIGINALS)
    assert stats.get("simhash/unchanged") == len(ORIGINALS)
    assert stats.get("simhash/dropped") == len(DUPLICATES)
    with open_index(str(index_path)) as index:
        assert len(index) == len(ORIGINALS)
    for run in ("second", "reset", "again"):  # some page kept: no word of it
        assert "were unchanged since" not in (tmp_path / f"{run}.log").read_text("utf-8")

    # A fifth, as the first again: every page unchanged, an empty feed, and one warning
    # that says why and how to export them again.
    items, stats = crawl(tmp_path, "empty", project=project, default_index=True)
    assert items == []
    log = (tmp_path / "empty.log").read_text(encoding="utf-8")
    warning = f"All {len(ORIGINALS)} pages of this crawl were unchanged since an earlier crawl"
    assert log.count(warning) == 1, log
    assert "-a simhash_reset=1" in log and "-a simhash_drop_unchanged=0" in log


@pytest.mark.parametrize(
    "reactor",
    [
        "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
        # Worker processes need the asyncio reactor: with another one, a warning, and the
        # pages are fingerprinted in a thread.
        "twisted.internet.selectreactor.SelectReactor",
    ],
)
def test_crawl_with_a_worker_process(tmp_path, reactor):
    settings = {"SIMHASH_WORKERS": 1, "TWISTED_REACTOR": reactor}
    items, stats = crawl(tmp_path, "workers", settings=settings)
    assert sorted(file_name(item["url"]) for item in items) == sorted(ORIGINALS)
    assert stats.get("simhash/dropped") == len(DUPLICATES)
    assert "simhash/errors/workers" not in stats
    warned = "needs Scrapy's asyncio reactor" in (tmp_path / "workers.log").read_text()
    assert warned == ("asyncio" not in reactor)


def test_two_crawls_at_once_on_one_index_keep_each_page_once(tmp_path):
    """Two processes, same pages, same index file, started together: every page is kept
    by exactly one of them, and every planted duplicate by neither."""
    processes = [start_crawl(tmp_path, run) for run in ("a", "b")]
    results = [finish_crawl(p, tmp_path, run) for p, run in zip(processes, ("a", "b"), strict=True)]
    kept = [file_name(item["url"]) for items, _ in results for item in items]
    assert sorted(kept) == sorted(ORIGINALS)
    dropped = sum(stats.get("simhash/dropped", 0) for _, stats in results)
    assert dropped == 2 * len(DUPLICATES)
    # The run that came second to a page found it stored under its own URL, by the other
    # run during this crawl: "seen in this crawl", not "unchanged since the last crawl".
    repeated = sum(stats.get("simhash/repeated", 0) for _, stats in results)
    assert repeated == len(ORIGINALS)
    assert not any("simhash/unchanged" in stats for _, stats in results)
    log = (tmp_path / "a.log").read_text(encoding="utf-8") + (tmp_path / "b.log").read_text(
        encoding="utf-8"
    )
    assert "was already seen in this crawl" in log
    assert "unchanged since the last crawl" not in log


@pytest.mark.parametrize("name", sorted(DUPLICATES))
def test_duplicate_pages_differ_from_their_original(name):
    # Apart from the exact copy, each planted duplicate really is a different file.
    original = read(DUPLICATES[name])
    if "byte-identical" in MANIFEST[name]["note"]:
        assert read(name) == original
    else:
        assert read(name) != original


SCRIPT_WITHOUT_MAIN_GUARD = """
import json, sys
from pathlib import Path
import scrapy
from scrapy.crawler import CrawlerProcess

SITE = Path({site!r})
NAMES = {names!r}


class Pages(scrapy.Spider):
    name = "pages"

    async def start(self):
        for name in NAMES:
            yield scrapy.Request((SITE / name).as_uri())

    def parse(self, response):
        yield {{
            "url": response.url,
            "title": response.css("title::text").get(""),
            "content": response.css("body").get(""),
        }}


print("crawl starts", flush=True)
process = CrawlerProcess({settings!r})
crawler = process.create_crawler(Pages)
process.crawl(crawler)
process.start()
stats = crawler.stats.get_stats()
print(json.dumps({{k: v for k, v in stats.items() if k.startswith("simhash/")}}), flush=True)
"""


def run_script_without_main_guard(tmp_path: Path, workers: int) -> tuple[list[str], str]:
    settings = {
        "ITEM_PIPELINES": {"scrapy_simhash.SimhashDedupPipeline": 300},
        "SIMHASH_INDEX_URI": f"sqlite:///{tmp_path / f'index-{workers}.db'}",
        "SIMHASH_WORKERS": workers,
        "CONCURRENT_REQUESTS": 1,  # the same order in both runs
        "LOG_LEVEL": "WARNING",
        "TELNETCONSOLE_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,
    }
    script = tmp_path / f"crawl{workers}.py"
    script.write_text(
        SCRIPT_WITHOUT_MAIN_GUARD.format(site=str(SITE), names=sorted(MANIFEST), settings=settings),
        encoding="utf-8",
    )
    env = subprocess_env()
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines(), result.stderr


def test_worker_processes_in_a_script_without_a_main_guard(tmp_path):
    """A script that starts a crawl at import time (no ``if __name__ == "__main__":``):
    the workers must not run it again, and they decide as the thread does."""
    lines, stderr = run_script_without_main_guard(tmp_path, workers=1)
    assert lines[0] == "crawl starts" and lines.count("crawl starts") == 1, lines
    stats = json.loads(lines[-1])
    assert "simhash/errors/workers" not in stats, stderr
    assert stats["simhash/dropped"] >= len(DUPLICATES) - 1
    threaded, _ = run_script_without_main_guard(tmp_path, workers=0)

    def decided(stats: dict) -> dict:
        # The share is one page's text in the other's: which one is kept (the download
        # order) may change it, not what is dropped.
        shares = sum(v for k, v in stats.items() if k.startswith("simhash/share/"))
        return {**{k: v for k, v in stats.items() if "/share/" not in k}, "shares": shares}

    assert decided(stats) == decided(json.loads(threaded[-1]))
