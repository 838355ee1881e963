"""The item pipeline, driven through a real Scrapy crawler object (no mocks)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re

import pytest
from pipelines import ARTICLE, make_pipeline, simhash_stats
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_simhash import Addon, LogFormatter, NearDuplicate, SimhashDedupPipeline, open_index
from scrapy_simhash.crawl.deduplicator import settings_from_crawler
from scrapy_simhash.crawl.pipeline import Unchanged
from scrapy_simhash.exceptions import ConfigurationError, IndexParameterMismatch, SetupFailed

OTHER = (
    "A severe drought has left farmers in the southern provinces with half of their usual "
    "wheat harvest. Reservoirs stand at their lowest level in thirty years, and irrigation "
    "has been rationed since June. Agricultural economists expect bread prices to rise by "
    "autumn, and several cooperatives have asked the government for emergency loans, seed "
    "subsidies and a plan to modernise the ageing canals that lose much of the water."
)


def test_disabled_raises_not_configured(tmp_path):
    crawler = get_crawler(settings_dict={"SIMHASH_ENABLED": False})
    with pytest.raises(NotConfigured, match="SIMHASH_ENABLED is False"):
        SimhashDedupPipeline.from_crawler(crawler)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"SIMHASH_BLOCKS": 3}, "SIMHASH_BLOCKS=3 with SIMHASH_MAX_DISTANCE=3: .*use 4 or more"),
        ({"SIMHASH_TEXT_FIELDS": []}, "SIMHASH_TEXT_FIELDS is empty"),
        ({"SIMHASH_TEXT_FIELDS": 5}, r"SIMHASH_TEXT_FIELDS=5 is a int; give a list of strings"),
        ({"SIMHASH_TEXT_FIELDS": ["title", None]}, r"holds None; every entry must be"),
        ({"SIMHASH_KEY_FIELD": ["url"]}, r"SIMHASH_KEY_FIELD=\['url'\] is a list; it must be"),
        ({"SIMHASH_FLAG_ONLY": "maybe"}, "SIMHASH_FLAG_ONLY='maybe' is not a boolean"),
        ({"SIMHASH_MIDDLEWARE_CONTENT_TYPES": "html"}, "'html', which is not a media type"),
        ({"SIMHASH_DROP_LOG_LEVEL": "LOUD"}, "not a log level"),
        ({"SIMHASH_ON_INDEX_ERROR": "ignore"}, "must be 'keep'"),
        ({"SIMHASH_MAX_DISTANCE": "three"}, "SIMHASH_MAX_DISTANCE='three' is not an integer"),
        ({"SIMHASH_MAX_DISTANCE": 70}, r"^SIMHASH_MAX_DISTANCE=70 must be between 0 and 31;"),
        (
            {"SIMHASH_MAX_DISTANCE": 25},
            r"^the default SIMHASH_BLOCKS \(SIMHASH_MAX_DISTANCE \+ 2 = 27\) with "
            "SIMHASH_MAX_DISTANCE=25: .* makes 351 tables",
        ),
    ],
)
def test_bad_settings_say_what_is_wrong(settings, message):
    crawler = get_crawler(settings_dict=settings)
    with pytest.raises(ConfigurationError, match=message):
        settings_from_crawler(crawler)
    # From the pipeline itself: SetupFailed, which stops the crawl before the spider opens
    # (the real crawl, its exit status and its feed file are in test_first_hour.py).
    with pytest.raises(SetupFailed, match=message) as excinfo:
        SimhashDedupPipeline.from_crawler(get_crawler(settings_dict=settings))
    assert isinstance(excinfo.value.__cause__, ConfigurationError)


@pytest.mark.parametrize(
    ("value", "fields"),
    [
        ("title content", ("title", "content")),
        ("title,content", ("title", "content")),
        (" body ", ("body",)),
        (("headline", "body"), ("headline", "body")),
    ],
)
def test_text_fields_given_as_a_string_are_split(value, fields):
    config, _ = settings_from_crawler(get_crawler(settings_dict={"SIMHASH_TEXT_FIELDS": value}))
    assert config.text_fields == fields


def test_misspelt_settings_are_named(caplog):
    crawler = get_crawler(settings_dict={"SIMHASH_TEXT_FIELD": ["body"], "SIMHASH_X": 1})
    with caplog.at_level(logging.WARNING, logger="scrapy_simhash"):
        settings_from_crawler(crawler)
    assert [r.getMessage() for r in caplog.records] == [
        "SIMHASH_TEXT_FIELD is not a setting of scrapy-simhash; did you mean SIMHASH_TEXT_FIELDS?",
        "SIMHASH_X is not a setting of scrapy-simhash; see the settings in docs/usage.md",
    ]


@deferred_f_from_coro_f
async def test_keeps_first_and_drops_near_duplicate(tmp_path):
    pipeline = make_pipeline(tmp_path)
    first = {"url": "https://a.example/tram", "title": "New tram line", "content": ARTICLE}
    assert await pipeline.process_item(first) is first
    repost = {
        "url": "https://b.example/repost?utm_source=x",
        "title": "New tram line",
        "content": f"<nav>Home News</nav><p>{ARTICLE}</p><footer>(c) B</footer>",
    }
    with pytest.raises(NearDuplicate) as excinfo:
        await pipeline.process_item(repost)
    message = str(excinfo.value)
    assert message.startswith(
        "https://b.example/repost?utm_source=x is a near-duplicate of https://a.example/tram"
    )
    assert excinfo.value.log_level == logging.INFO
    other = {"url": "https://a.example/drought", "title": "Drought", "content": OTHER}
    assert await pipeline.process_item(other) is other
    pipeline.close_spider()
    assert simhash_stats(pipeline) == {
        "checked": 3,
        "simhash": 3,
        "kept": 2,
        "dropped": 1,
        "dropped/near": 1,
        f"distance/{excinfo.value.verdict.match.distance}": 1,
        "share/100": 1,
    }


@deferred_f_from_coro_f
async def test_second_run_remembers_first(tmp_path):
    pipeline = make_pipeline(tmp_path)
    item = {"url": "u1", "title": "t", "content": ARTICLE}
    await pipeline.process_item(item)
    pipeline.close_spider()
    pipeline = make_pipeline(tmp_path)
    with pytest.raises(
        NearDuplicate,
        match="u2 is a near-duplicate of u1 \\(distance 0; 100% of its text is in the kept page\\)",
    ):
        await pipeline.process_item({**item, "url": "u2"})
    pipeline.close_spider()


#: A third story, far from ARTICLE and OTHER.
CONCERTS = (
    "The regional orchestra announced on Friday that its winter season will open with a "
    "program of new works by three young composers from the coastal towns. Tickets go on "
    "sale next month, and students may attend the rehearsals for free. The conductor said "
    "the season is meant to bring audiences who have never been to a concert hall, and "
    "every performance will be streamed to local libraries and schools across the region."
)


@pytest.mark.parametrize("drop_unchanged", [True, False])
@deferred_f_from_coro_f
async def test_a_recrawl_tells_unchanged_changed_and_duplicate_pages_apart(
    tmp_path, drop_unchanged
):
    first = make_pipeline(tmp_path)
    tram = {"url": "u1", "title": "t", "content": ARTICLE}
    drought = {"url": "u2", "title": "d", "content": OTHER}
    assert await first.process_item(tram) is tram
    assert await first.process_item(drought) is drought
    first.close_spider()

    pipeline = make_pipeline(tmp_path, SIMHASH_DROP_UNCHANGED=drop_unchanged)
    if drop_unchanged:
        with pytest.raises(Unchanged) as excinfo:
            await pipeline.process_item(tram)
        assert str(excinfo.value) == "u1 is unchanged since the last crawl (distance 0)"
        assert excinfo.value.verdict.status == "unchanged"
        assert not excinfo.value.verdict.is_duplicate
    else:
        assert await pipeline.process_item(tram) is tram
    # u2 now holds another story: changed, kept, and its old text is forgotten...
    changed = {"url": "u2", "title": "c", "content": CONCERTS}
    assert await pipeline.process_item(changed) is changed
    # ...so a repost of the drought story is new, while a copy of the tram story is not.
    repost = {"url": "u3", "title": "d", "content": OTHER}
    assert await pipeline.process_item(repost) is repost
    with pytest.raises(NearDuplicate, match=r"^u4 is a near-duplicate of u1 "):
        await pipeline.process_item({**tram, "url": "u4"})
    pipeline.close_spider()
    stats = simhash_stats(pipeline)
    assert (stats["unchanged"], stats["changed"], stats["dropped"]) == (1, 1, 1)
    assert stats["kept"] == 2 + (not drop_unchanged)
    with open_index(f"sqlite:///{tmp_path / 'index.db'}") as index:
        assert len(index.find("u2")) == 1, "one entry per key"
        assert sorted(p.key for p in index.pages()) == ["u1", "u2", "u3"]
        drops = [(d.key, d.kept_key, d.unchanged) for d in index.drops()]
    assert drops == [("u1", "u1", True)] * drop_unchanged + [("u4", "u1", False)]


@deferred_f_from_coro_f
async def test_short_and_empty_texts(tmp_path):
    pipeline = make_pipeline(tmp_path)
    shirt = "Blue cotton shirt, size M"
    await pipeline.process_item({"url": "s1", "title": "Shirt", "content": shirt})
    # Short texts are never matched by distance, only exactly (after normalisation).
    await pipeline.process_item({"url": "s2", "title": "Shirt", "content": shirt[:-1] + "L"})
    with pytest.raises(NearDuplicate, match=r"^s3 has the same text as s1$"):
        await pipeline.process_item(
            {"url": "s3", "title": "shirt", "content": "  BLUE " + shirt[5:]}
        )
    empty = {"url": "e1", "other": "no text fields"}
    assert await pipeline.process_item(empty) is empty
    assert await pipeline.process_item({"url": "e2", "title": None, "content": ""})
    pipeline.close_spider()
    s = simhash_stats(pipeline)
    assert (s["short"], s["empty"], s["kept"], s["dropped/exact"]) == (3, 2, 4, 1)


@deferred_f_from_coro_f
async def test_a_title_alone_is_not_a_page(tmp_path):
    """SIMHASH_TEXT_FIELDS names a field the items lack (body, not content): what is left,
    a title, is shared by distinct pages. They are let through, counted, never dropped."""
    pipeline = make_pipeline(tmp_path, SIMHASH_TEXT_FIELDS=["title", "body"])
    items = [
        {"url": f"https://docs.example/{n}", "title": "Reference", "content": f"{ARTICLE} {n}"}
        for n in range(12)
    ]
    for item in items:
        assert await pipeline.process_item(item) is item
    pipeline.close_spider()
    s = simhash_stats(pipeline)
    assert s["skipped/fields"] == 12
    assert "dropped" not in s and "kept" not in s
    assert s["checked"] == 12 and s["fields/missing/body"] == 12


@deferred_f_from_coro_f
async def test_a_field_missing_now_and_then_is_not_skipped(tmp_path):
    """One item in many without its content is checked on its title, as before: the
    settings are right, and the item is short, matched only on its exact text."""
    pipeline = make_pipeline(tmp_path)
    for n in range(4):
        with contextlib.suppress(NearDuplicate):  # the same article again is a duplicate
            await pipeline.process_item({"url": f"u{n}", "title": "Tram", "content": ARTICLE})
    await pipeline.process_item({"url": "t1", "title": "A page without its text"})
    with pytest.raises(NearDuplicate, match=r"^t2 has the same text as t1$"):
        await pipeline.process_item({"url": "t2", "title": "A page without its text"})
    pipeline.close_spider()
    assert "skipped/fields" not in simhash_stats(pipeline)


@deferred_f_from_coro_f
async def test_concurrent_near_duplicates_keep_exactly_one(tmp_path):
    """Items of one response run concurrently (CONCURRENT_ITEMS); only one may be kept."""
    pipeline = make_pipeline(tmp_path)
    items = [
        {"url": f"u{i}", "title": "t", "content": ARTICLE + (" Updated on Friday." * (i % 2))}
        for i in range(16)
    ]

    async def run(item):
        try:
            return await pipeline.process_item(item)
        except NearDuplicate:
            return None

    results = await asyncio.gather(*(run(item) for item in items))
    pipeline.close_spider()
    assert sum(r is not None for r in results) == 1
    assert simhash_stats(pipeline)["dropped"] == 15


def test_index_with_other_parameters_is_refused(tmp_path, caplog):
    make_pipeline(tmp_path).close_spider()
    crawler = get_crawler(
        settings_dict={
            "SIMHASH_INDEX_URI": f"sqlite:///{tmp_path / 'index.db'}",
            "SIMHASH_TOP_N": 64,
        }
    )
    with (
        caplog.at_level(logging.ERROR, logger="scrapy_simhash"),
        pytest.raises(SetupFailed) as excinfo,
    ):
        SimhashDedupPipeline.from_crawler(crawler)
    assert isinstance(excinfo.value.__cause__, IndexParameterMismatch)
    [record] = caplog.records
    assert "features: index has" in record.getMessage()
    assert record.getMessage().endswith("The crawl is stopped before it starts.")


def test_default_index_is_in_the_scrapy_data_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    crawler = get_crawler(settings_dict={})
    pipeline = SimhashDedupPipeline.from_crawler(crawler)
    assert pipeline.index_uri == "sqlite:///.scrapy/simhash.db"
    pipeline.open_spider()
    pipeline.close_spider()
    assert (tmp_path / ".scrapy" / "simhash.db").is_file()


def test_addon_enables_pipeline_and_log_formatter():
    crawler = get_crawler(settings_dict={"ADDONS": {Addon: 100}})
    crawler._apply_settings()
    pipelines = crawler.settings.getwithbase("ITEM_PIPELINES")
    assert any(
        cls is SimhashDedupPipeline or cls == "scrapy_simhash.SimhashDedupPipeline"
        for cls in pipelines
    )
    assert crawler.settings["LOG_FORMATTER"] is LogFormatter


def test_log_formatter_omits_the_item_for_near_duplicates(tmp_path):
    from scrapy import Spider

    formatter = LogFormatter()
    spider = Spider("s")
    spider.crawler = get_crawler()
    item = {"content": "x" * 1000}
    drop = NearDuplicate("u2 is a near-duplicate of u1", None)
    entry = formatter.dropped(item, drop, None, spider)
    assert entry["msg"] % entry["args"] == "Dropped: u2 is a near-duplicate of u1"
    assert entry["level"] == logging.INFO


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (
            {"link": "u", "headline": "Tram", "body": ARTICLE},
            "SIMHASH_TEXT_FIELDS=['title', 'content']: 10 of 10 items have no 'title' or "
            "'content' (their fields: 'link', 'headline', 'body'), so nothing of theirs is "
            "fingerprinted and they are kept unchecked. Set SIMHASH_TEXT_FIELDS to the fields "
            "that hold the page's text, e.g. SIMHASH_TEXT_FIELDS = ['link', 'headline', 'body']. "
            "SIMHASH_KEY_FIELD='url': 10 of 10 items have no 'url', so they are named by their "
            "position in the log and the index. Set SIMHASH_KEY_FIELD to the field that holds "
            "the page's URL [after the first 10 items]",
        ),
        (
            {"url": "https://a.example/", "title": "Tram", "contents": ARTICLE},
            "SIMHASH_TEXT_FIELDS=['title', 'content']: 10 of 10 items have no 'content' "
            "(their fields: 'url', 'title', 'contents'), so they are checked on 'title' alone, "
            "and those whose 'title' alone is too short to be a page are let through unchecked "
            "(simhash/skipped/fields). Set SIMHASH_TEXT_FIELDS to the fields that hold the "
            "page's text, e.g. SIMHASH_TEXT_FIELDS = ['title', 'contents'] "
            "[after the first 10 items]",
        ),
    ],
)
@deferred_f_from_coro_f
async def test_items_without_the_configured_fields_are_warned_about(
    tmp_path, caplog, item, expected
):
    # Items with other field names were all counted simhash/empty and kept, silently.
    pipeline = make_pipeline(tmp_path)
    with caplog.at_level(logging.WARNING, logger="scrapy_simhash"):
        for n in range(12):
            with contextlib.suppress(NearDuplicate):  # the same text again is a duplicate
                await pipeline.process_item({**item, "n": n})
        assert [r.getMessage() for r in caplog.records] == [expected]
        pipeline.close_spider()
    at_close = expected.replace("10 of 10", "12 of 12").replace(
        "[after the first 10 items]", "[at close]"
    )
    assert [r.getMessage() for r in caplog.records] == [expected, at_close]
    stats = simhash_stats(pipeline)
    assert stats["warnings/fields"] == 2
    assert stats["fields/missing/content"] == 12


@deferred_f_from_coro_f
async def test_items_with_the_configured_fields_are_not_warned_about(tmp_path, caplog):
    pipeline = make_pipeline(tmp_path)
    with caplog.at_level(logging.WARNING, logger="scrapy_simhash"):
        for n in range(12):
            item = {"url": f"u{n}", "title": "Tram", "content": f"{ARTICLE} {n}"}
            with contextlib.suppress(NearDuplicate):
                await pipeline.process_item(item)
        pipeline.close_spider()
    assert caplog.records == []
    assert "warnings/fields" not in simhash_stats(pipeline)


@deferred_f_from_coro_f
async def test_items_without_a_key_are_told_apart(tmp_path):
    # They were all "(item without url)", each "a near-duplicate of (item without url)".
    pipeline = make_pipeline(tmp_path)
    assert await pipeline.process_item({"title": "Tram", "content": ARTICLE})
    with pytest.raises(NearDuplicate) as excinfo:
        await pipeline.process_item({"title": "Tram", "content": ARTICLE})
    pipeline.close_spider()
    found = re.fullmatch(
        r"\(item 2 without url, (crawl started \S+)\) has the same text as "
        r"\(item 1 without url, (crawl started \S+)\)|"
        r"\(item 2 without url, (crawl started \S+)\) is a near-duplicate of "
        r"\(item 1 without url, (crawl started \S+)\) \(distance 0; 100% of its text is in "
        r"the kept page\)",
        str(excinfo.value),
    )
    assert found, str(excinfo.value)


@pytest.mark.needs_compiled
@pytest.mark.parametrize(
    ("segmenter", "pure_python", "expected"),
    [
        ("rjieba", False, "Simhash analysis: C accelerator in use; Chinese words by rjieba"),
        (
            "jieba",
            True,
            "Simhash analysis: C accelerator not in use (not built, or "
            "SCRAPY_SIMHASH_PURE_PYTHON set): pure Python, the same fingerprints, slower; "
            "Chinese words by jieba (pip install 'scrapy-simhash[fast]' for rjieba: the same "
            "words, faster)",
        ),
    ],
)
def test_the_crawl_log_says_which_analysis_runs(
    tmp_path, caplog, monkeypatch, segmenter, pure_python, expected
):
    if pure_python:
        monkeypatch.setenv("SCRAPY_SIMHASH_PURE_PYTHON", "1")
    with caplog.at_level(logging.INFO, logger="scrapy_simhash"):
        make_pipeline(tmp_path, SIMHASH_SEGMENTER=segmenter).close_spider()
    assert [r.getMessage() for r in caplog.records if "analysis:" in r.getMessage()] == [expected]
