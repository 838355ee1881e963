"""A new user's first hour, end to end: a brand-new ``scrapy startproject`` project whose
items have their own field names, crawled with ``scrapy crawl`` in a subprocess over local
``file://`` pages. It either works or says clearly what to change, and a setup mistake
stops the crawl with one log line before any request."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from pipelines import ARTICLE, subprocess_env

OTHER = (
    "A severe drought has left farmers in the southern provinces with half of their usual "
    "wheat harvest. Reservoirs stand at their lowest level in thirty years, and irrigation "
    "has been rationed since June. Agricultural economists expect bread prices to rise by "
    "autumn, and several cooperatives have asked the government for emergency loans."
)
PAGES = {
    "tram.html": ("New tram line approved", ARTICLE),
    # The same story, reposted with one sentence changed: a near-duplicate.
    "tram-repost.html": (
        "New tram line approved",
        ARTICLE.replace("The mayor promised", "The mayor again promised"),
    ),
    "drought.html": ("Drought halves the harvest", OTHER),
}

SPIDER = """
import scrapy


class PagesSpider(scrapy.Spider):
    name = "pages"
    custom_settings = {"CONCURRENT_REQUESTS": 1, "CONCURRENT_ITEMS": 1}

    async def start(self):
        for url in URLS:
            yield scrapy.Request(url)

    def parse(self, response):
        yield {
            "link": response.url,
            "headline": response.css("h1::text").get(),
            "body": " ".join(response.css("p::text").getall()),
        }
"""


def page(title: str, text: str) -> str:
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8">'
        f"<title>{title}</title></head><body><h1>{title}</h1><p>{text}</p></body></html>"
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """``scrapy startproject demo`` with one line added to its settings (the add-on) and
    a spider over three local pages whose items hold ``link``, ``headline``, ``body``."""
    root = tmp_path_factory.mktemp("first-hour")
    site = root / "site"
    site.mkdir()
    for name, (title, text) in PAGES.items():
        (site / name).write_text(page(title, text), encoding="utf-8")
    subprocess.run(
        [sys.executable, "-m", "scrapy", "startproject", "demo"],
        cwd=root,
        env=subprocess_env(),
        check=True,
        capture_output=True,
    )
    project = root / "demo"
    settings = project / "demo" / "settings.py"
    text = settings.read_text(encoding="utf-8")
    # startproject writes "ADDONS = {}": the README's line replaces it.
    assert "ADDONS = {}" in text
    settings.write_text(
        text.replace("ADDONS = {}", 'ADDONS = {"scrapy_simhash.Addon": 100}'), encoding="utf-8"
    )
    urls = [(site / name).as_uri() for name in PAGES]
    (project / "demo" / "spiders" / "pages.py").write_text(
        f"URLS = {urls!r}\n" + SPIDER, encoding="utf-8"
    )
    return project


def crawl(project: Path, index: Path | str, *settings: str) -> str:
    """Run ``scrapy crawl pages`` in *project* with the index at *index*; its log."""
    return run_crawl(project, index, *settings)[1]


def run_crawl(
    project: Path, index: Path | str, *settings: str, feed: Path | None = None, hide: str = ""
) -> tuple[int, str]:
    """``scrapy crawl pages`` in *project* with the index at *index* (and ``-O feed``):
    its exit status and its log. *hide*: a directory put on the module path after the
    package under test, whose modules hide installed ones."""
    uri = index if isinstance(index, str) else f"sqlite:///{index}"
    args = [
        "-s",
        "TELNETCONSOLE_ENABLED=False",
        "-s",
        "DOWNLOAD_DELAY=0",
        "-s",
        "ROBOTSTXT_OBEY=False",
        "-s",
        f"SIMHASH_INDEX_URI={uri}",
    ]
    for setting in settings:
        args += ["-s", setting]
    if feed is not None:
        args += ["-O", str(feed)]
    done = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "pages", *args],
        cwd=project,
        env=with_path(subprocess_env(), hide),
        capture_output=True,
        text=True,
        timeout=180,
    )
    return done.returncode, done.stdout + done.stderr


def with_path(env: dict[str, str], directory: str) -> dict[str, str]:
    if directory:
        env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], directory])
    return env


def stat(log: str, name: str) -> int | None:
    found = re.search(rf"'{re.escape(name)}': (\d+)", log)
    return int(found[1]) if found else None


def test_other_field_names_are_named_with_the_settings_to_change(project, tmp_path):
    log = crawl(project, tmp_path / "index.db")
    assert "Simhash pipeline: fingerprints the item fields 'title', 'content'" in log
    warnings = [line for line in log.splitlines() if "WARNING: SIMHASH_TEXT_FIELDS" in line]
    assert len(warnings) == 1, log
    warning = warnings[0]
    assert "3 of 3 items have no 'title' or 'content'" in warning
    assert "(their fields: 'link', 'headline', 'body')" in warning
    assert "kept unchecked" in warning
    assert "SIMHASH_TEXT_FIELDS = ['headline', 'body']" in warning
    assert "Set SIMHASH_KEY_FIELD = 'link'" in warning
    assert warning.endswith("[at close]")
    assert stat(log, "simhash/warnings/fields") == 1
    assert stat(log, "simhash/fields/missing/content") == 3
    assert stat(log, "simhash/dropped") is None


def test_the_settings_it_names_make_it_work(project, tmp_path):
    log = crawl(
        project,
        tmp_path / "index.db",
        "SIMHASH_TEXT_FIELDS=headline body",  # a string: split at spaces, as documented
        "SIMHASH_KEY_FIELD=link",
    )
    assert "WARNING" not in log, log
    site = project.parent / "site"
    dropped = [line for line in log.splitlines() if "Dropped:" in line]
    assert len(dropped) == 1, log
    original, repost = (site / "tram.html").as_uri(), (site / "tram-repost.html").as_uri()
    # Which of the two arrives first (and is kept) is up to the download order.
    assert re.search(
        rf"INFO: Dropped: ({re.escape(repost)} is a near-duplicate of {re.escape(original)}|"
        rf"{re.escape(original)} is a near-duplicate of {re.escape(repost)}) "
        r"\(distance \d; \d+% of its text is in the kept page\)$",
        dropped[0],
    ), dropped[0]
    assert "<html" not in dropped[0]  # the one-line drop log, not the whole item
    assert stat(log, "simhash/dropped") == 1
    assert stat(log, "simhash/kept") == 2


#: What an earlier crawl exported: a failed start must leave it as it was.
EARLIER_FEED = b'{"link": "file:///earlier", "headline": "kept from an earlier crawl"}\n'


def assert_stopped_in_one_line(
    project: Path, tmp_path: Path, index: Path | str, *settings: str, expected: tuple[str, ...]
) -> str:
    """A crawl with a setup mistake exits with status 1 before any request, with one
    ERROR line that says *expected*, and leaves the ``-O`` feed file's bytes as they were."""
    feed = tmp_path / "kept.jl"
    feed.write_bytes(EARLIER_FEED)
    status, log = run_crawl(project, index, *settings, feed=feed)
    assert status == 1, log
    assert feed.read_bytes() == EARLIER_FEED, log
    errors = [line for line in log.splitlines() if " ERROR: " in line]
    assert len(errors) == 1, log
    for text in expected:
        assert text in errors[0], errors[0]
    assert "[scrapy_simhash" in errors[0]
    assert errors[0].endswith("The crawl is stopped before it starts."), errors[0]
    assert "Traceback" not in log
    assert "Task exception was never retrieved" not in log
    assert "downloader/request_count" not in log  # no request was made
    assert "Stored jl feed" not in log
    return errors[0]


def test_unknown_index_scheme_stops_the_crawl_in_one_line(project, tmp_path):
    assert_stopped_in_one_line(
        project,
        tmp_path,
        "mysql://db.example/crawl",
        expected=("No index backend for the scheme 'mysql'",),
    )


def test_index_in_a_directory_that_cannot_exist_stops_the_crawl(project, tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the index's directory should be", encoding="utf-8")
    assert_stopped_in_one_line(project, tmp_path, blocker / "index.db", expected=(str(blocker),))


def test_changed_parameters_stop_the_crawl_in_one_line(project, tmp_path):
    index = tmp_path / "index.db"
    assert "'finish_reason': 'finished'" in crawl(project, index)
    line = assert_stopped_in_one_line(
        project, tmp_path, index, "SIMHASH_MAX_DISTANCE=4", expected=("max_distance", str(index))
    )
    assert "3" in line and "4" in line


def test_bad_setting_stops_the_crawl_in_one_line(project, tmp_path):
    line = assert_stopped_in_one_line(
        project,
        tmp_path,
        tmp_path / "index.db",
        "SIMHASH_MAX_DISTANCE=70",
        expected=("SIMHASH_MAX_DISTANCE=70 must be between 0 and 31",),
    )
    assert "SIMHASH_BLOCKS" not in line  # the user never set it


def test_unreachable_redis_stops_the_crawl_in_one_line(project, tmp_path):
    with socket.socket() as sock:  # a local port where nothing listens
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    assert_stopped_in_one_line(
        project,
        tmp_path,
        f"redis://127.0.0.1:{port}/0",
        "SIMHASH_ON_INDEX_ERROR=close",
        expected=(f"Cannot reach Redis at redis://127.0.0.1:{port}/0",),
    )


def test_missing_extra_stops_the_crawl_in_one_line(project, tmp_path):
    # The crawl's Python cannot import redis: as without pip install 'scrapy-simhash[redis]'.
    hidden = tmp_path / "without-redis"
    hidden.mkdir()
    (hidden / "redis.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'redis'\", name='redis')\n",
        encoding="utf-8",
    )
    status, log = run_crawl(project, "redis://127.0.0.1:6379/0", hide=str(hidden))
    assert status == 1, log
    errors = [line for line in log.splitlines() if " ERROR: " in line]
    assert len(errors) == 1, log
    assert "scrapy-simhash[redis]" in errors[0], errors[0]
    feed = tmp_path / "kept.jl"
    feed.write_bytes(EARLIER_FEED)
    status, log = run_crawl(project, "redis://127.0.0.1:6379/0", feed=feed, hide=str(hidden))
    assert status == 1 and feed.read_bytes() == EARLIER_FEED, log


def test_the_middleware_stops_the_crawl_in_one_line_too(project, tmp_path):
    """The spider middleware opens its index when it is built too: the same exit status."""
    assert_stopped_in_one_line(
        project,
        tmp_path,
        "mysql://db.example/crawl",
        "ITEM_PIPELINES={}",
        'SPIDER_MIDDLEWARES={"scrapy_simhash.SimhashDedupMiddleware": 600}',
        expected=("No index backend for the scheme 'mysql'",),
    )
