"""The spider middleware in-process, with a real crawler object (its real crawls of a local
site are in tests/e2e/test_middleware_crawls.py)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from pipelines import make_crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Request, TextResponse
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_simhash import SimhashDedupMiddleware
from scrapy_simhash.crawl.deduplicator import settings_from_crawler
from scrapy_simhash.exceptions import ConfigurationError, SetupFailed

HERE = Path(__file__).resolve().parents[1] / "sites" / "middleware"
SITE = HERE / "site"


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
    # The crawl is stopped before the spider opens.
    with pytest.raises(SetupFailed, match="SIMHASH_MIDDLEWARE_CONTENT_TYPES is empty"):
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
async def test_an_article_is_contained_in_a_page_framing_it_and_not_the_other_way(tmp_path):
    drought = (SITE / "drought.html").read_text(encoding="utf-8")
    chess = (SITE / "only-via-copy.html").read_text(encoding="utf-8")
    framed = ARTICLE.replace("<nav>", "<nav>" + drought + chess)
    middleware = make_middleware(tmp_path, SIMHASH_EXTRACTOR="none", SIMHASH_ANCHORS=True)
    # The framing page first: the article alone, checked after it, is all in it.
    await run(middleware, html("b", body=framed), [])
    assert await run(middleware, html("a"), [{"x": 1}]) == []
    assert middleware.runner.stats.get_value("simhash/middleware/dropped/contained") == 1
    # The other way, the framing page holds two more articles: dropping it would lose them.
    (tmp_path / "other").mkdir()
    middleware = make_middleware(tmp_path / "other", SIMHASH_EXTRACTOR="none", SIMHASH_ANCHORS=True)
    await run(middleware, html("a"), [])
    assert await run(middleware, html("b", body=framed), [{"x": 1}]) == [{"x": 1}]
    assert middleware.runner.stats.get_value("simhash/middleware/kept/own_text") == 1
    assert middleware.runner.stats.get_value("simhash/middleware/kept/contains") == 1
    # Flag-only: the framing page's items and response say which page it contains.
    (tmp_path / "flagged").mkdir()
    middleware = make_middleware(
        tmp_path / "flagged", SIMHASH_EXTRACTOR="none", SIMHASH_ANCHORS=True, SIMHASH_FLAG_ONLY=True
    )
    await run(middleware, html("a"), [])
    framing = html("b", body=framed)
    assert await run(middleware, framing, [{"x": 1}]) == [
        {"x": 1, "simhash_contains": "https://site.example/a"}
    ]
    assert framing.meta["simhash_contains"] == "https://site.example/a"


@pytest.mark.slow
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
