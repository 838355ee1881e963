"""The downloader middleware that skips predicted copies, on a real SQLite index."""

from __future__ import annotations

import logging

import pytest
from crawls import page_text
from pipelines import make_crawler
from scrapy import Request
from scrapy.exceptions import IgnoreRequest, NotConfigured

from scrapy_simhash import Addon, Fingerprinter, open_index
from scrapy_simhash.crawl.skip import META_CHECKED, SkipPredictedMiddleware
from scrapy_simhash.index.skip_rules import learn, skip_rules_for

SITE = "http://docs.test"


@pytest.fixture
def index_uri(tmp_path):
    return f"sqlite:///{tmp_path / 'index.db'}"


def store_page(index, url: str, words: str) -> None:
    assert index.check_and_add(Fingerprinter().fingerprint(words), url).status == "new"


def taught(index_uri: str, copies: int) -> None:
    """*copies* pages stored, each with a copy of it under ``?ref=feed`` learned."""
    with open_index(index_uri) as index:
        for n in range(copies + 1):
            store_page(index, f"{SITE}/{n}.html", page_text(n))
        for n in range(copies):
            learn(index, f"{SITE}/{n}.html?ref=feed", f"{SITE}/{n}.html")


def opened(tmp_path, **settings) -> SkipPredictedMiddleware:
    crawler = make_crawler(tmp_path, SIMHASH_SKIP_PREDICTED=True, **settings)
    middleware = SkipPredictedMiddleware.from_crawler(crawler)
    middleware.spider_opened()
    return middleware


async def skips(middleware: SkipPredictedMiddleware, url: str, **meta) -> bool:
    try:
        await middleware.process_request(Request(url, meta=meta))
    except IgnoreRequest:
        return True
    return False


def test_off_by_default_and_enabled_by_the_addon(tmp_path):
    with pytest.raises(NotConfigured):
        SkipPredictedMiddleware.from_crawler(make_crawler(tmp_path))
    crawler = make_crawler(tmp_path, ADDONS={Addon: 100})
    assert crawler.settings.getdict("DOWNLOADER_MIDDLEWARES")[SkipPredictedMiddleware] == 50


async def test_a_confirmed_rule_skips_a_variant_of_a_stored_page(tmp_path, index_uri, caplog):
    taught(index_uri, copies=3)
    middleware = opened(tmp_path)
    with caplog.at_level(logging.INFO, logger="scrapy_simhash.crawl.skip"):
        assert await skips(middleware, f"{SITE}/3.html?ref=feed")
        assert await skips(middleware, f"{SITE}/3.html?ref=mail")
    assert [r.getMessage() for r in caplog.records] == [
        f"Skipped {SITE}/3.html?ref=feed: the URL rule query:-ref of docs.test maps it to "
        f"{SITE}/3.html, stored; this rule's other skips on this site are only counted "
        "(simhash/skipped/predicted; scrapy-simhash rules --skipped lists them)"
    ]
    assert middleware.stats.get_value("simhash/skipped/predicted") == 2
    # Not stored, another site, a start request, an opted-out request: downloaded.
    assert not await skips(middleware, f"{SITE}/9.html?ref=feed")
    assert not await skips(middleware, "http://other.test/3.html?ref=feed")
    assert not await skips(middleware, f"{SITE}/3.html?ref=feed", is_start_request=True)
    assert not await skips(middleware, f"{SITE}/3.html?ref=feed", dont_simhash=True)
    middleware.spider_closed()
    with open_index(index_uri) as index:
        skipped = skip_rules_for(index).skipped()
    assert [(s.url, s.rule, s.target) for s in skipped] == [
        (f"{SITE}/3.html?ref=feed", "query:-ref", f"{SITE}/3.html"),
        (f"{SITE}/3.html?ref=mail", "query:-ref", f"{SITE}/3.html"),
    ]


async def test_too_few_copies_skip_nothing(tmp_path, index_uri):
    taught(index_uri, copies=2)
    middleware = opened(tmp_path)
    assert not await skips(middleware, f"{SITE}/2.html?ref=feed")
    middleware.spider_closed()


async def test_one_in_n_is_downloaded_and_one_distinct_page_retires_the_rule(tmp_path, index_uri):
    taught(index_uri, copies=3)
    middleware = opened(tmp_path, SIMHASH_SKIP_CHECK_EVERY=3)
    checked = Request(f"{SITE}/3.html?ref=c")
    outcomes = [await skips(middleware, f"{SITE}/3.html?ref={n}") for n in range(2)]
    await middleware.process_request(checked)
    assert outcomes == [True, True]
    assert checked.meta[META_CHECKED] == "query:-ref"
    assert middleware.stats.get_value("simhash/skipped/checked") == 1
    # The page checked was distinct after all: kept, and the rule is retired.
    with open_index(index_uri) as index:
        store_page(index, checked.url, page_text(1000))
        learn(index, checked.url, None)
    middleware._rules.clear()  # as when RULES_FRESH_FOR has passed
    assert not await skips(middleware, f"{SITE}/3.html?ref=z")
    middleware.spider_closed()
