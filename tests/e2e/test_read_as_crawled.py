"""Diagnostics read a page as the crawl did (#44): a spider whose items take ``title``
from ``<title>`` (not the site banner, the page's first ``<h1>``) and ``content`` from the
page; afterwards ``text --stored`` finds every unchanged page the same, names the reading,
and ``explain`` and ``check`` give the distance the crawl logged."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from pipelines import subprocess_env

from scrapy_simhash import open_index
from scrapy_simhash.cli import main

pytestmark = pytest.mark.e2e

SITE = Path(__file__).resolve().parents[2] / "example_project" / "site"

SPIDER = """
import json, os
import scrapy

class Pages(scrapy.Spider):
    name = "pages"
    custom_settings = {"TELNETCONSOLE_ENABLED": False, "CONCURRENT_REQUESTS": 1}

    async def start(self):
        for path in json.load(open(os.environ["PAGES"])):
            yield scrapy.Request("file://" + path)

    def parse(self, response):
        title = response.css("title::text").get("")
        if response.url.endswith(os.environ["RETITLED"]):
            # A title the page does not hold (from the site's API, say).
            title += " (updated: prize money corrected)"
        yield {"url": response.url, "title": title, "content": response.css("body").get()}
"""


def test_text_explain_and_check_read_pages_as_the_crawl_did(tmp_path, monkeypatch):
    pages = tmp_path / "site"
    pages.mkdir()
    paths = []
    for page in sorted(SITE.glob("*.html")):
        if page.name == "index.html":
            continue
        html = page.read_text(encoding="utf-8")
        # The article's headline in an <h2>, and a site banner in the page's first <h1>:
        # a diagnostic guessing the title reads the banner, the spider took <title>.
        html = re.sub(r"<(/?)h1>", r"<\1h2>", html)
        html = re.sub(r'<p class="site-name">(.*?)</p>', r"<h1>\1</h1>", html, count=1)
        (pages / page.name).write_text(html, encoding="utf-8")
        paths.append(str(pages / page.name))
    (tmp_path / "pages.json").write_text(json.dumps(paths), encoding="utf-8")
    (tmp_path / "spider.py").write_text(SPIDER, encoding="utf-8")
    index = f"sqlite:///{tmp_path / 'index.db'}"
    command = [sys.executable, "-m", "scrapy", "runspider", str(tmp_path / "spider.py")]
    command += ["-s", "ADDONS=" + json.dumps({"scrapy_simhash.Addon": 100})]
    command += ["-s", f"SIMHASH_INDEX_URI={index}"]
    done = subprocess.run(
        command,
        cwd=tmp_path,
        env=subprocess_env(PAGES=str(tmp_path / "pages.json"), RETITLED="en-chess-open.html"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    with open_index(index, create=False) as opened:
        stored = [page.key for page in opened.pages()]
        drops = list(opened.drops())
    assert len(stored) >= 10 and drops
    monkeypatch.chdir(tmp_path)  # no Scrapy project: the settings' defaults
    runner = CliRunner()
    for key in stored:
        shown = runner.invoke(main, ["text", "--stored", key, "--index", index])
        assert shown.exit_code == 0, shown.output
        verdict = next(line for line in shown.output.splitlines() if line.startswith("Stored"))
        assert "changed" not in verdict, shown.output
        if key.endswith("en-chess-open.html"):
            assert "the same page as far as the index can tell" in verdict, shown.output
        else:
            assert "the same: this is the text that was fingerprinted" in verdict
            # (Over a long article, the title rarely moves a bit: the banner and <title>
            # readings often give the same fingerprint; the first of them is named.)
            assert "(the reading that gives the stored fingerprint)" in shown.output
    for drop in drops:
        explained = runner.invoke(
            main, ["explain", drop.kept_key, drop.key, "--index", index, "--json"]
        )
        assert explained.exit_code == 0, explained.output
        result = json.loads(explained.output)
        assert result["distance"] == drop.distance, explained.output
        assert result["read_as"]["b"]["stored_same"] is None  # a drop is not stored
        found = runner.invoke(
            main, ["check", drop.key.removeprefix("file://"), "--index", index, "--json"]
        )
        checked = json.loads(found.output)
        if drop.shared:  # dropped as contained in the kept page
            # `check` answers for the index as it is now: a page stored after the drop and
            # near this one (the crawl order decides which) is asked first, and then no
            # container is looked up. Where one is, it is the kept page.
            if checked["contained"] is not None:
                assert checked["contained"]["key"] == drop.kept_key, found.output
            continue
        assert {"key": drop.kept_key, "distance": drop.distance} in [
            {"key": m["key"], "distance": m["distance"]} for m in checked["matches"]
        ], found.output
