"""Items whose values raise when printed or compared, pages whose elements carry
thousands of attributes, settings that cannot work: each ends in one counted outcome, or
stops the crawl at its start in one line."""

from __future__ import annotations

import numpy as np
import pytest
from pipelines import ARTICLE, make_pipeline, simhash_stats
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_simhash import NearDuplicate

# -- items whose values raise when printed or compared -----------------------------------


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text for you")

    __repr__ = __str__


class Uncomparable:
    """Raises on ``==``, as a numpy array of several values does in a truth test."""

    def __eq__(self, other: object) -> bool:
        raise TypeError("cannot compare")

    __hash__ = object.__hash__


def _nested(depth: int) -> list:
    value: list = ["x"]
    for _ in range(depth):
        value = [value]
    return value


HOSTILE_VALUES = {
    "10**5000": lambda: 10**5000,
    "__str__ raises": Unprintable,
    "== raises": Uncomparable,
    "a list nested 50,000 deep": lambda: _nested(50_000),
    "a numpy array": lambda: np.arange(12),
    "an empty numpy array": lambda: np.zeros(0),
}
OUTCOMES = ("simhash", "short", "empty", "errors/analysis")


@pytest.mark.parametrize("field", ["url", "content", "title"])
@pytest.mark.parametrize("name", sorted(HOSTILE_VALUES))
@deferred_f_from_coro_f
async def test_hostile_values_end_in_exactly_one_counted_outcome(tmp_path, field, name):
    pipeline = make_pipeline(tmp_path)
    item = {"url": "https://example.com/a", "title": "A title", "content": ARTICLE}
    item[field] = HOSTILE_VALUES[name]()
    try:
        result = await pipeline.process_item(item)
    except NearDuplicate:  # pragma: no cover - a fresh index
        pytest.fail("dropped on an empty index")
    assert result is item
    counted = simhash_stats(pipeline)
    assert counted["checked"] == 1, counted
    assert sum(counted.get(kind, 0) for kind in OUTCOMES) == 1, counted
    pipeline.close_spider()


# -- settings that cannot work stop the crawl at its start -------------------------------


@pytest.mark.parametrize(
    ("setting", "value", "says"),
    [
        ("SIMHASH_TOP_N", 10**23, "SIMHASH_TOP_N"),
        ("SIMHASH_WORKERS", 10**9, "SIMHASH_WORKERS"),
        ("SIMHASH_WORKER_TIMEOUT", float("inf"), "SIMHASH_WORKER_TIMEOUT"),
        ("SIMHASH_WORKER_TIMEOUT", float("nan"), "SIMHASH_WORKER_TIMEOUT"),
        ("SIMHASH_INDEX_URI", "sqlite:///{tmp}/x.db?timeout=nan", "timeout"),
        ("SIMHASH_INDEX_URI", "sqlite:///{tmp}/x.db?timeout=inf", "timeout"),
        ("SIMHASH_INDEX_URI", "sqlite:///{tmp}/x.db?timeout=-1", "timeout"),
        ("SIMHASH_INDEX_URI", "redis://127.0.0.1:1/0?ttl=100000000000000000000000d", "ttl"),
    ],
)
def test_settings_that_cannot_work_stop_the_crawl_at_start(tmp_path, caplog, setting, value, says):
    from pipelines import make_crawler
    from scrapy import signals
    from scrapy.exceptions import CloseSpider, NotConfigured

    from scrapy_simhash import SimhashDedupPipeline

    if isinstance(value, str):
        value = value.format(tmp=tmp_path)
    crawler = make_crawler(tmp_path, **{setting: value})
    try:
        pipeline = SimhashDedupPipeline.from_crawler(crawler)
    except NotConfigured:
        # Refused in from_crawler: the crawl is stopped when the spider opens.
        [(_, failure)] = [
            (receiver, result)
            for receiver, result in crawler.signals.send_catch_log(signal=signals.spider_opened)
            if "refuse_to_start" in getattr(receiver, "__qualname__", "")
        ]
        error = failure.value
    else:
        with pytest.raises(CloseSpider) as excinfo:
            pipeline.open_spider()
        error = excinfo.value
    assert isinstance(error, CloseSpider) and error.reason == "simhash_setup_error"
    [line] = [r.getMessage() for r in caplog.records if r.name.startswith("scrapy_simhash")]
    assert says in line and line.endswith("The crawl is stopped before it starts."), line
    assert not (tmp_path / "x.db").exists()


@pytest.mark.parametrize("workers", [0, 1])
@deferred_f_from_coro_f
async def test_a_crowded_page_is_counted_as_truncated(tmp_path, workers):
    crowded = " ".join(f'a{i}="v"' for i in range(300_000))
    pipeline = make_pipeline(tmp_path, SIMHASH_WORKERS=workers)
    item = {"url": "u", "content": f"<html><body><div {crowded}><p>{ARTICLE}</p></div></body>"}
    assert await pipeline.process_item(item) is item
    counted = simhash_stats(pipeline)
    assert counted["simhash"] == 1 and counted["truncated"] == 1, counted
    pipeline.close_spider()
