"""The archive job with SIMHASH_SITE_TEMPLATES: the local engine reads the records in
order and learns each site's template as the crawl does (the dask engine's twin is in
test_archive_dask.py)."""

from __future__ import annotations

import pytest
from archive_feeds import assert_same_as_pipeline, feed_items, job_of, pipeline_verdicts
from template_pages import article, reposted, sidebar, text

from scrapy_simhash.settings import SimhashSettings
from scrapy_simhash.tools.archive import run_local
from scrapy_simhash.tools.feeds import read_feed, write_feed

TEMPLATES = SimhashSettings.from_settings({"SIMHASH_SITE_TEMPLATES": True})


def items_of(pages: list[tuple[str, str]]) -> list[dict]:
    return [{"url": url, "title": "", "content": body} for url, body in pages]


def test_a_local_job_drops_a_repost_into_another_sites_template_as_the_crawl(tmp_path):
    # Site two's own pages first (its template learned), then the repost.
    pages = [
        *reposted(2)[:2],
        ("https://two.test/c", text(article(3), sidebar(2))),
        reposted(2)[2],
    ]
    feed = tmp_path / "items.jl"
    write_feed(feed, items_of(pages))
    verdicts = pipeline_verdicts(TEMPLATES, read_feed(feed))
    assert [v.status for v in verdicts] == ["new", "new", "new", "duplicate"]
    result = run_local([str(feed)], job_of(TEMPLATES))
    assert_same_as_pipeline(result.outcomes, verdicts)
    # Without templates, both keep the repost.
    plain = SimhashSettings.from_settings({})
    assert all(v.match is None for v in pipeline_verdicts(plain, read_feed(feed)))
    assert result.outcomes.kept.sum() == 3
    assert run_local([str(feed)], job_of(plain)).outcomes.kept.sum() == 4


@pytest.mark.corpus
def test_with_templates_a_local_job_decides_as_the_pipeline(corpora, tmp_path):
    feed = tmp_path / "items.jl"
    write_feed(feed, feed_items(corpora))
    verdicts = pipeline_verdicts(TEMPLATES, read_feed(feed))
    assert sum(v.template > 0 for v in verdicts) > 10  # read with their site's template
    assert_same_as_pipeline(run_local([str(feed)], job_of(TEMPLATES)).outcomes, verdicts)
