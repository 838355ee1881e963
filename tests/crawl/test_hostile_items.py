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

    from scrapy_simhash import SimhashDedupPipeline
    from scrapy_simhash.exceptions import SetupFailed

    if isinstance(value, str):
        value = value.format(tmp=tmp_path)
    crawler = make_crawler(tmp_path, **{setting: value})
    # Refused in from_crawler, before the spider opens (a real crawl then exits with
    # status 1: tests/e2e/test_first_hour.py).
    with pytest.raises(SetupFailed):
        SimhashDedupPipeline.from_crawler(crawler)
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


@deferred_f_from_coro_f
async def test_a_page_of_one_12_mb_text_node_is_checked_and_counted_as_truncated(tmp_path):
    words = " ".join(f"w{i % 997}x{i % 13}" for i in range(1_800_000))
    page = f"<html><body><main><p>{words}</p></main></body></html>"
    assert len(page) > 12_000_000
    pipeline = make_pipeline(tmp_path)
    first = {"url": "u1", "content": page}
    assert await pipeline.process_item(first) is first
    copy = {"url": "u2", "content": page.replace("w5x5", "w6x5", 1)}
    with pytest.raises(NearDuplicate):
        await pipeline.process_item(copy)
    counted = simhash_stats(pipeline)
    assert counted["truncated"] == 2 and counted.get("no_text", 0) == 0, counted
    pipeline.close_spider()
