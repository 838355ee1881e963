"""The diagnostics compute on the text the pipeline fingerprinted: on every drop of a real
crawl of a small documentation site (and of pages that share a block with their siblings),
``check`` and ``explain`` find the distance the crawl dropped at, and ``text --stored`` the
fingerprint it stored."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from fragment_sites import BLOG_TAG_BALCONY, BLOG_TAG_RYE, CALC, DRAW, doc_site, quotes_tag_page
from pipelines import subprocess_env

from scrapy_simhash import open_index
from scrapy_simhash.cli import main

SPIDER = """
import json, os
import scrapy

class Pages(scrapy.Spider):
    name = "pages"
    custom_settings = {"TELNETCONSOLE_ENABLED": False}

    async def start(self):
        for path in json.load(open(os.environ["PAGES"])):
            yield scrapy.Request("file://" + path)

    def parse(self, response):
        if os.environ["SHAPE"] == "html":
            yield {"url": response.url, "html": response.text}
        else:
            # The headline, as careful spiders take it: <title> carries a site suffix.
            title = next(filter(None, (" ".join("".join(response.css(q).getall()).split())
                                       for q in ("article h1 ::text", "h1 ::text",
                                                 "title::text"))), "")
            yield {"url": response.url, "title": title, "content": response.text}
"""


@pytest.mark.parametrize("shape", ["fields", "html"])
def test_check_and_explain_agree_with_the_crawl_on_every_drop(tmp_path, shape, monkeypatch):
    site = doc_site()
    site.update({"menus-draw.html": DRAW, "menus-calc.html": CALC})
    site.update({"tag-rye.html": BLOG_TAG_RYE, "tag-balcony.html": BLOG_TAG_BALCONY})
    site.update({"quotes-thinking.html": quotes_tag_page("thinking")})
    site.update({"quotes-world.html": quotes_tag_page("world")})
    pages = tmp_path / "site"
    pages.mkdir()
    paths = []
    for name, html in site.items():
        (pages / name).write_text(html, encoding="utf-8")
        paths.append(str(pages / name))
    (tmp_path / "pages.json").write_text(json.dumps(paths), encoding="utf-8")
    (tmp_path / "spider.py").write_text(SPIDER, encoding="utf-8")
    index = f"sqlite:///{tmp_path / 'index.db'}"
    settings = {"SIMHASH_INDEX_URI": index}
    if shape == "html":
        settings["SIMHASH_TEXT_FIELDS"] = "html"
    command = [sys.executable, "-m", "scrapy", "runspider", str(tmp_path / "spider.py")]
    command += ["-s", "ITEM_PIPELINES=" + json.dumps({"scrapy_simhash.SimhashDedupPipeline": 1})]
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    done = subprocess.run(
        command,
        cwd=tmp_path,
        env=subprocess_env(PAGES=str(tmp_path / "pages.json"), SHAPE=shape),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    with open_index(index, create=False) as opened:
        drops = list(opened.drops())
    # Two of the three copies of the chapter (pages are fetched concurrently: whichever
    # came first is kept), and nothing else.
    copies = {"tutorial.html", "tutorial-3.1.html", "tutorial-print.html"}
    assert len(drops) == 2
    for drop in drops:
        assert {Path(drop.key).name, Path(drop.kept_key).name} <= copies
    monkeypatch.chdir(tmp_path)  # no Scrapy project here: the settings' defaults
    runner = CliRunner()
    options = ["-s", "SIMHASH_TEXT_FIELDS=html"] if shape == "html" else []
    for drop in drops:
        dropped, kept = drop.key.removeprefix("file://"), drop.kept_key.removeprefix("file://")
        found = runner.invoke(main, [*options, "check", dropped, "--index", index, "--json"])
        assert found.exit_code == 0, found.output
        matches = json.loads(found.output)["matches"]
        assert {"key": drop.kept_key, "distance": drop.distance} in [
            {"key": m["key"], "distance": m["distance"]} for m in matches
        ]
        explained = runner.invoke(main, [*options, "explain", dropped, kept, "--json"])
        assert explained.exit_code == 0, explained.output
        result = json.loads(explained.output)
        assert (result["distance"], result["duplicate"]) == (drop.distance, True)
        shown = runner.invoke(main, [*options, "text", "--stored", drop.kept_key, "--index", index])
        assert shown.exit_code == 0, shown.output
        # Read as the index recorded the crawl read it: the very text it analysed.
        assert "the same: this is the very text the crawl analysed" in shown.output
        assert "read as stored: fields " in shown.output
    # A page kept beside a sibling: check finds no stored page near it but itself.
    found = runner.invoke(
        main, [*options, "check", str(pages / "genindex-Q.html"), "--index", index, "--json"]
    )
    assert [m["key"] for m in json.loads(found.output)["matches"]] == [
        "file://" + str(pages / "genindex-Q.html")
    ]
