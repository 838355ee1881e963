"""Diagnostics read a stored page by the index's record of how the crawl analysed it
(:mod:`scrapy_simhash.index.analysed`): the crawl's fields and extractor, whatever the
diagnostic's settings say, and the very text when the hash agrees; what they assume is
said."""

from __future__ import annotations

import pytest
from prose import prose

from scrapy_simhash.dedup import analyse_text, fields_text
from scrapy_simhash.extract.extractors import extractor_version
from scrapy_simhash.index.analysed import RESPONSE_FIELD, Analysed
from scrapy_simhash.settings import SimhashSettings
from scrapy_simhash.tools.fingerprinted import fingerprinted_text
from scrapy_simhash.tools.readings import read_as_crawled

#: The crawl's fields; the diagnostics run with the defaults (title, content).
CRAWL = SimhashSettings(text_fields=("headline", "summary", "article"))
DEFAULTS = SimhashSettings()
BUILTIN = extractor_version("builtin")


def page(seed: int) -> str:
    paragraphs = "".join(f"<p>{p}.</p>" for p in prose(600, seed))
    return (
        "<html><head><title>Harbour tram approved</title></head><body>"
        "<h1>The Lindenport Courier</h1><article><h2>Harbour tram approved</h2>"
        f"{paragraphs}</article></body></html>"
    )


@pytest.fixture
def stored(tmp_path):
    """A page stored as a crawl with CRAWL's fields stores it (its summary empty), and
    the way to store it otherwise."""
    path = tmp_path / "tram.html"
    path.write_text(page(1), encoding="utf-8")
    with CRAWL.open_index("memory:") as index:
        dedup = CRAWL.deduplicator(index)

        def store(item, fields, version=BUILTIN, config=CRAWL):
            analysis = analyse_text(dedup, fingerprinted_text(item, config))
            record = Analysed(fields, "builtin", version, analysis.text_hash)
            assert dedup.check(analysis, path.as_uri(), analysed=record).status != "duplicate"
            return path, index, dedup

        yield store


def test_a_page_is_read_on_the_crawls_fields_and_found_the_very_text(stored):
    html = page(1)
    item = {"headline": "Harbour tram approved", "summary": "", "article": html}
    path, index, dedup = stored(item, ("headline", "-summary", "article"))
    read = read_as_crawled(str(path), DEFAULTS, index, dedup)
    assert read.found is not None and read.found.same_text is True
    assert read.text == fingerprinted_text(item, CRAWL)
    assert "headline from the page's <title>" in read.described
    assert "read as stored: fields headline, article (empty: summary); builtin" in read.described
    assert read.described.endswith("; the very text the crawl analysed)")


def test_a_field_not_from_the_page_is_not_the_very_text_but_the_same_page(stored):
    item = {"headline": "Harbour tram approved (corrected)", "summary": "", "article": page(1)}
    path, index, dedup = stored(item, ("headline", "-summary", "article"))
    read = read_as_crawled(str(path), DEFAULTS, index, dedup)
    assert read.found is not None and read.found.same_text is False
    assert read.found.holds(3, 0.8)
    assert "not the very text the crawl analysed" in read.described


def test_another_extractor_version_is_said_to_be_assumed(stored):
    item = {"headline": "Harbour tram approved", "summary": "", "article": page(1)}
    path, index, dedup = stored(item, ("headline", "-summary", "article"), version="terms-v1")
    read = read_as_crawled(str(path), DEFAULTS, index, dedup)
    assert f"assumed: read with builtin {BUILTIN}" in read.described


def test_a_page_the_middleware_checked_is_read_as_the_response(stored):
    html = page(1)
    item = {RESPONSE_FIELD: html}
    middleware = SimhashSettings(text_fields=(RESPONSE_FIELD,))
    path, index, dedup = stored(item, (RESPONSE_FIELD,), config=middleware)
    read = read_as_crawled(str(path), DEFAULTS, index, dedup)
    assert read.found is not None and read.found.same_text is True
    assert read.text == fields_text([html], DEFAULTS.html_extractor)
    assert read.described.startswith("the response's text, as the middleware read it (read as")


def test_a_page_stored_without_a_record_is_read_by_the_settings_and_says_so(tmp_path):
    path = tmp_path / "tram.html"
    path.write_text(page(1), encoding="utf-8")
    with DEFAULTS.open_index("memory:") as index:
        dedup = DEFAULTS.deduplicator(index)
        item = {"title": "Harbour tram approved", "content": page(1)}
        dedup.check(analyse_text(dedup, fingerprinted_text(item, DEFAULTS)), path.as_uri())
        read = read_as_crawled(str(path), DEFAULTS, index, dedup)
    assert read.found is not None and read.found.same_text is None and read.found.same
    assert "read as stored" not in read.described
    assert "(the reading that gives the stored fingerprint)" in read.described
