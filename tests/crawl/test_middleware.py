"""The spider middleware: real crawls of a local site, and a real crawler object in-process.

tests/sites/middleware/site/ has two pairs of pages with the same article and different
sidebars: tram.html / tram-copy.html and drought.html / drought-mirror.html. Each copy is
linked only from its original (so the original is checked first), and links to one page
that nothing else links to. The spider opts out of the middleware for the drought mirror's
link (``class="nocheck"``).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pipelines import make_crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Request, TextResponse
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_simhash import SimhashDedupMiddleware, open_index
from scrapy_simhash.crawl.deduplicator import settings_from_crawler
from scrapy_simhash.exceptions import ConfigurationError

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


def test_links_of_a_near_duplicate_are_not_followed(tmp_path):
    items, stats = crawl(tmp_path)
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
        "skipped/dont_simhash": 1,
    }
    with open_index(f"sqlite:///{tmp_path / 'index.db'}") as index:
        assert [(d.key, d.kept_key, d.distance) for d in index.drops()] == [
            (url("tram-copy.html"), url("tram.html"), 0)
        ]


def test_second_run_follows_links_of_unchanged_pages(tmp_path):
    crawl(tmp_path)
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


# -- in-process, with a real crawler object ----------------------------------------------

ARTICLE = (SITE / "tram.html").read_text(encoding="utf-8")


def make_middleware(tmp_path, **settings) -> SimhashDedupMiddleware:
    middleware = SimhashDedupMiddleware.from_crawler(make_crawler(tmp_path, **settings))
    middleware.spider_opened()
    return middleware


async def run(middleware, response, outputs) -> list:
    async def result():
        for output in outputs:
            yield output

    return [o async for o in middleware.process_spider_output(response, result())]


def html(name: str, body: str = ARTICLE, meta: dict | None = None) -> HtmlResponse:
    address = f"https://site.example/{name}"
    request = Request(address, meta=meta)
    return HtmlResponse(address, body=body, encoding="utf-8", request=request)


@deferred_f_from_coro_f
async def test_drops_items_and_requests_of_a_duplicate(tmp_path):
    middleware = make_middleware(tmp_path)
    outputs = [{"title": "a"}, Request("https://site.example/next")]
    assert await run(middleware, html("a"), outputs) == outputs
    assert await run(middleware, html("b"), outputs) == []
    middleware.spider_closed()


@deferred_f_from_coro_f
async def test_opt_out_per_request(tmp_path):
    middleware = make_middleware(tmp_path)
    await run(middleware, html("a"), [])
    response = html("b", meta={"dont_simhash": True})
    assert await run(middleware, response, [{"x": 1}]) == [{"x": 1}]
    assert middleware.runner.stats.get_value("simhash/middleware/skipped/dont_simhash") == 1


@deferred_f_from_coro_f
async def test_only_configured_content_types_count(tmp_path):
    text = TextResponse(
        "https://site.example/a.txt",
        body=ARTICLE,
        encoding="utf-8",
        headers={"Content-Type": "text/plain; charset=utf-8"},
        request=Request("https://site.example/a.txt"),
    )
    middleware = make_middleware(tmp_path)
    assert await run(middleware, text, [{"x": 1}]) == [{"x": 1}]
    assert await run(middleware, text, [{"x": 1}]) == [{"x": 1}], "text/plain is not checked"
    assert middleware.runner.stats.get_value("simhash/middleware/skipped/content_type") == 2
    middleware.spider_closed()

    middleware = make_middleware(tmp_path, SIMHASH_MIDDLEWARE_CONTENT_TYPES=["text/*"])
    assert await run(middleware, text, [{"x": 1}]) == [{"x": 1}]
    copy = TextResponse(
        "https://site.example/b.txt",
        body=ARTICLE,
        encoding="utf-8",
        headers={"Content-Type": "text/plain"},
        request=Request("https://site.example/b.txt"),
    )
    assert await run(middleware, copy, [{"x": 1}]) == []


@deferred_f_from_coro_f
async def test_flag_only_marks_what_it_can(tmp_path):
    import scrapy

    class Declared(scrapy.Item):
        title = scrapy.Field()

    middleware = make_middleware(tmp_path, SIMHASH_FLAG_ONLY=True)
    await run(middleware, html("a"), [])
    response = html("b")
    item, declared = {"title": "b"}, Declared(title="b")
    assert await run(middleware, response, [item, declared]) == [item, declared]
    assert item["simhash_duplicate_of"] == "https://site.example/a"
    assert response.meta["simhash_duplicate_of"] == "https://site.example/a"
    assert "simhash_duplicate_of" not in declared
    assert middleware.runner.stats.get_value("simhash/middleware/flag_field_missing") == 1


def test_disabled_raises_not_configured():
    crawler = get_crawler(settings_dict={"SIMHASH_ENABLED": False})
    with pytest.raises(NotConfigured, match="SIMHASH_ENABLED is False"):
        SimhashDedupMiddleware.from_crawler(crawler)


def test_no_content_types_is_an_error():
    crawler = get_crawler(settings_dict={"SIMHASH_MIDDLEWARE_CONTENT_TYPES": []})
    with pytest.raises(ConfigurationError, match="SIMHASH_MIDDLEWARE_CONTENT_TYPES is empty"):
        settings_from_crawler(crawler)
    # The middleware is left out and the crawl stopped when the spider opens.
    with pytest.raises(NotConfigured):
        SimhashDedupMiddleware.from_crawler(crawler)


def test_warns_when_the_pipeline_shares_the_index(tmp_path, caplog):
    uri = f"sqlite:///{tmp_path}/index.db"
    pipeline = {"ITEM_PIPELINES": {"scrapy_simhash.SimhashDedupPipeline": 300}}
    with caplog.at_level(logging.WARNING, logger="scrapy_simhash.crawl.middleware"):
        SimhashDedupMiddleware.from_crawler(get_crawler(settings_dict={"SIMHASH_INDEX_URI": uri}))
        assert caplog.record_tuples == [], "no warning without the pipeline"
        SimhashDedupMiddleware.from_crawler(
            get_crawler(settings_dict={"SIMHASH_INDEX_URI": uri, **pipeline})
        )
    assert caplog.record_tuples == [
        (
            "scrapy_simhash.crawl.middleware",
            logging.WARNING,
            f"SimhashDedupMiddleware and SimhashDedupPipeline are both enabled on the index "
            f"{uri}: each item would be compared with the page it came from, and dropped when "
            "their texts are alike. Enable one of them (both use SIMHASH_INDEX_URI).",
        )
    ]


@pytest.mark.parametrize(("extractor", "dropped"), [("builtin", True), ("none", False)])
@deferred_f_from_coro_f
async def test_html_is_reduced_by_simhash_extractor(tmp_path, extractor, dropped):
    drought = (SITE / "drought.html").read_text(encoding="utf-8")
    chess = (SITE / "only-via-copy.html").read_text(encoding="utf-8")
    # The same article in another site's chrome: a long navigation block of other text.
    framed = ARTICLE.replace("<nav>", "<nav>" + drought + chess)
    # By distance only: the article is contained in the framed page, which the paragraph
    # anchors would tell with either extractor.
    middleware = make_middleware(tmp_path, SIMHASH_EXTRACTOR=extractor, SIMHASH_ANCHORS=False)
    await run(middleware, html("a"), [])
    outputs = await run(middleware, html("b", body=framed), [{"x": 1}])
    assert outputs == ([] if dropped else [{"x": 1}])


@deferred_f_from_coro_f
async def test_an_article_in_another_sites_chrome_is_contained_in_it(tmp_path):
    drought = (SITE / "drought.html").read_text(encoding="utf-8")
    chess = (SITE / "only-via-copy.html").read_text(encoding="utf-8")
    framed = ARTICLE.replace("<nav>", "<nav>" + drought + chess)
    middleware = make_middleware(tmp_path, SIMHASH_EXTRACTOR="none")
    await run(middleware, html("a"), [])
    assert await run(middleware, html("b", body=framed), [{"x": 1}]) == []
    assert middleware.runner.stats.get_value("simhash/middleware/dropped/contained") == 1


@deferred_f_from_coro_f
async def test_workers_fingerprint_pages_in_other_processes(tmp_path):
    middleware = make_middleware(tmp_path, SIMHASH_WORKERS=1)
    try:
        assert middleware.runner.workers is not None
        outputs = [{"x": 1}]
        assert await run(middleware, html("a"), outputs) == outputs
        assert await run(middleware, html("b"), outputs) == []
        (worker_pid,) = middleware.runner.workers.pids
        assert worker_pid != os.getpid()
    finally:
        middleware.spider_closed()
    assert middleware.runner.workers is None
