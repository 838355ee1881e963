"""Diagnostics read a page as the crawl did (#44): a spider whose items take a title from
``<title>`` (not the site banner, the page's first ``<h1>``) and the page's body, in the
default fields (``title``, ``content``) or in fields of its own (``headline``, ``article``,
and an empty ``summary``) that the diagnostics' settings do not name; afterwards ``text
--stored`` reads every page as the index recorded the crawl read it, finds every unchanged
page the very text the crawl analysed, never calls one changed, and ``explain`` and
``check`` give the distance the crawl logged."""

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
        body = response.css("body").get()
        if os.environ["FIELDS"] == "own":
            yield {"url": response.url, "headline": title, "summary": "", "article": body}
        else:
            yield {"url": response.url, "title": title, "content": body}
"""

#: The crawl's SIMHASH_TEXT_FIELDS; the diagnostics run with the defaults (title, content).
FIELDS = {"defaults": None, "own": "headline,summary,article"}


@pytest.mark.parametrize("fields", sorted(FIELDS))
def test_text_explain_and_check_read_pages_as_the_crawl_did(tmp_path, monkeypatch, fields):
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
    if FIELDS[fields]:
        command += ["-s", f"SIMHASH_TEXT_FIELDS={FIELDS[fields]}"]
    done = subprocess.run(
        command,
        cwd=tmp_path,
        env=subprocess_env(
            PAGES=str(tmp_path / "pages.json"), RETITLED="en-chess-open.html", FIELDS=fields
        ),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    with open_index(index, create=False) as opened:
        pages = list(opened.pages())
        stored = [page.key for page in pages]
        drops = list(opened.drops())
    assert len(stored) >= 10 and drops
    expected = ("headline", "-summary", "article") if FIELDS[fields] else ("title", "content")
    assert {page.analysed.fields for page in pages} == {expected}
    assert {page.analysed.extractor for page in pages} == {"builtin"}
    monkeypatch.chdir(tmp_path)  # no Scrapy project: the settings' defaults
    runner = CliRunner()
    for key in stored:
        shown = runner.invoke(main, ["text", "--stored", key, "--index", index])
        assert shown.exit_code == 0, shown.output
        verdict = next(line for line in shown.output.splitlines() if line.startswith("Stored"))
        read_as = next(line for line in shown.output.splitlines() if line.startswith("Read as"))
        assert "changed" not in verdict, shown.output
        assert (
            "read as stored: fields " + ", ".join(expected[0::2] if FIELDS[fields] else expected)
            in read_as
        )
        if key.endswith("en-chess-open.html"):  # its title is not on the page
            assert "the same page as far as the index can tell" in verdict, shown.output
            assert "not the very text the crawl analysed" in read_as, shown.output
        else:
            assert "the same: this is the very text the crawl analysed" in verdict
            assert "from the page's <title>" in read_as, shown.output
            assert read_as.endswith("; the very text the crawl analysed)"), shown.output
        as_json = json.loads(
            runner.invoke(main, ["text", "--stored", key, "--index", index, "--json"]).output
        )
        assert as_json["stored"]["analysed"]["fields"] == list(expected)
        assert as_json["text_fields"] == [name.lstrip("-") for name in expected]
        assert as_json["stored"]["holds"] is True
    for drop in drops:
        explained = runner.invoke(
            main, ["explain", drop.kept_key, drop.key, "--index", index, "--json"]
        )
        assert explained.exit_code == 0, explained.output
        result = json.loads(explained.output)
        assert result["distance"] == drop.distance, explained.output
        assert result["read_as"]["b"]["stored_same"] is None  # a drop is not stored
        if not drop.kept_key.endswith("en-chess-open.html"):  # the kept page: its very text
            assert result["read_as"]["a"]["same_text"] is True, explained.output
        assert "fields as stored for" in result["read_as"]["b"]["assumed"]
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
