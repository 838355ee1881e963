"""Real crawls of two saved sites (one folder each, ``file://``): an article reposted into
the other site's template is dropped with SIMHASH_SITE_TEMPLATES, kept without it, and the
other site's own pages are kept either way."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from crawls import page_text
from pipelines import subprocess_env

SPIDER = """
import json, os
import scrapy

class Pages(scrapy.Spider):
    name = "pages"
    custom_settings = {"TELNETCONSOLE_ENABLED": False}

    # One page after the other, in the order listed, each requested once the last one's
    # item is through the pipeline: the first of two copies checked is the one kept.
    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.next_page, signal=scrapy.signals.item_scraped)
        crawler.signals.connect(spider.next_page, signal=scrapy.signals.item_dropped)
        return spider

    async def start(self):
        self.paths = json.load(open(os.environ["TEMPLATE_PAGES"]))
        self.done = 0
        yield scrapy.Request("file://" + self.paths[0])

    def parse(self, response):
        yield {"url": response.url, "html": response.text}

    def next_page(self):
        self.done += 1
        if self.done < len(self.paths):
            self.crawler.engine.crawl(scrapy.Request("file://" + self.paths[self.done]))
"""


def page(title: str, article: list[str], box: list[str]) -> str:
    """A page of a site whose template puts a box of notes (plain ``div``s, named after
    nothing an extractor knows) right under the article."""
    paragraphs = "".join(f"<p>{p}</p>" for p in article)
    notes = "".join(f"<p>{p}</p>" for p in box)
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{title}</title></head>'
        f"<body><div class='c'><h1>{title}</h1>{paragraphs}"
        f"<div class='b'>{notes}</div></div></body></html>"
    )


def write_sites(folder: Path) -> list[str]:
    """Site one: an article. Site two: three articles of its own, then site one's article
    reposted; each of site two's pages carries the same two notes."""
    one, two = folder / "one.test", folder / "two.test"
    one.mkdir()
    two.mkdir()
    notes = [page_text(900), page_text(901)]
    article = [page_text(1), page_text(2), page_text(3)]
    (one / "article.html").write_text(page("An article", article, []), encoding="utf-8")
    paths = [str(one / "article.html")]
    for n in range(3):
        own = [page_text(10 * n + 20), page_text(10 * n + 21), page_text(10 * n + 22)]
        path = two / f"own-{n}.html"
        path.write_text(page(f"Own {n}", own, notes), encoding="utf-8")
        paths.append(str(path))
    (two / "repost.html").write_text(page("A repost", article, notes), encoding="utf-8")
    return [*paths, str(two / "repost.html")]


def crawl(folder: Path, paths: list[str], templates: bool) -> tuple[list[str], list[str], str]:
    """Crawl *paths* in order; return the URLs kept and dropped, and the log."""
    listing, spider = folder / "pages.json", folder / "spider.py"
    listing.write_text(json.dumps(paths), encoding="utf-8")
    spider.write_text(SPIDER, encoding="utf-8")
    index, feed = folder / f"index-{templates}.db", folder / f"kept-{templates}.jl"
    settings = {
        "ITEM_PIPELINES": json.dumps({"scrapy_simhash.SimhashDedupPipeline": 300}),
        "SIMHASH_INDEX_URI": f"sqlite:///{index}",
        "SIMHASH_TEXT_FIELDS": "html",
        "SIMHASH_SITE_TEMPLATES": str(templates),
    }
    command = [sys.executable, "-m", "scrapy", "runspider", str(spider), "-O", str(feed)]
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    environment = subprocess_env(TEMPLATE_PAGES=str(listing))
    log = subprocess.run(
        command, check=True, env=environment, cwd=folder, capture_output=True, text=True
    ).stderr
    kept = [json.loads(line)["url"] for line in feed.read_text(encoding="utf-8").splitlines()]
    with sqlite3.connect(index) as db:
        dropped = [key for (key,) in db.execute("SELECT key FROM drops")]
    return kept, dropped, log


@pytest.mark.slow
def test_a_repost_into_another_sites_template_is_dropped_only_with_templates(tmp_path):
    paths = write_sites(tmp_path)
    urls = ["file://" + path for path in paths]
    kept, dropped, log = crawl(tmp_path, paths, templates=False)
    assert sorted(kept) == sorted(urls) and dropped == []
    assert "simhash/template" not in log
    kept, dropped, log = crawl(tmp_path, paths, templates=True)
    assert dropped == [urls[-1]]
    # The drop line says of what text the share is; the stats count the pages so checked
    # (site two's later pages and the repost).
    assert f"{urls[-1]} is contained in {urls[0]}" in log
    assert "of its own text is in the kept page, its site's template aside" in log
    assert "'simhash/template/own_text': 3" in log
    assert sorted(kept) == sorted(urls[:-1])
    with sqlite3.connect(tmp_path / "index-True.db") as db:
        sites = [site for (site,) in db.execute("SELECT site FROM site_templates")]
    assert sorted(sites) == sorted(
        f"file://{tmp_path / name}/" for name in ("one.test", "two.test")
    )
