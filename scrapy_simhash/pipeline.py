"""The Scrapy item pipeline: drops items whose text is a near-duplicate of a kept page."""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.utils.asyncio import run_in_thread
from scrapy.utils.defer import deferred_from_coro
from scrapy.utils.project import data_path

from .dedup import Analysis, Deduplicator, Verdict
from .exceptions import SimhashIndexError
from .index import open_index
from .settings import SimhashSettings
from .text import field_text

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

STATS_PREFIX = "simhash"


class NearDuplicate(DropItem):
    """Raised to drop an item that duplicates a page kept earlier.

    Scrapy counts these under ``item_dropped_reasons_count/NearDuplicate``.
    """

    def __init__(self, message: str, verdict: Verdict, log_level: int = logging.INFO) -> None:
        super().__init__(message, log_level=log_level)
        self.verdict = verdict


def default_index_uri() -> str:
    """``sqlite:///`` + ``.scrapy/simhash.db`` in the project's data directory."""
    path = data_path("simhash.db")
    # data_path(createdir=True) would make "simhash.db" itself a directory.
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    return "sqlite:///" + path


class SimhashDedupPipeline:
    """Drops items whose text (the ``SIMHASH_TEXT_FIELDS``) is within
    ``SIMHASH_MAX_DISTANCE`` of a page kept earlier, in this run or any earlier one.

    The CPU work runs in a thread; the check-and-insert runs on the reactor thread with no
    ``await`` in between, so items processed concurrently are still checked one at a time.
    """

    def __init__(
        self,
        config: SimhashSettings,
        index_uri: str,
        stats: StatsCollector | None = None,
        crawler: Crawler | None = None,
    ) -> None:
        self.config = config
        self.index_uri = index_uri
        self.stats = stats
        self.crawler = crawler
        self.dedup: Deduplicator | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SimhashDedupPipeline:
        if not crawler.settings.getbool("SIMHASH_ENABLED", True):
            raise NotConfigured("SIMHASH_ENABLED is False")
        config = SimhashSettings.from_settings(crawler.settings)
        return cls(config, config.index_uri or default_index_uri(), crawler.stats, crawler)

    def open_spider(self) -> None:
        config = self.config
        index = open_index(
            self.index_uri,
            max_distance=config.max_distance,
            blocks=config.blocks,
            features=config.fingerprinter.signature,
        )
        self.dedup = Deduplicator(
            index,
            config.fingerprinter,
            min_terms=config.min_terms,
            max_length=config.max_text_length,
        )
        logger.info(
            "Simhash index %s: %d pages stored, max distance %d, %d tables",
            index.location,
            len(index),
            index.plan.max_distance,
            index.plan.table_count,
        )

    def close_spider(self) -> None:
        if self.dedup is not None:
            self.dedup.index.close()
            self.dedup = None

    async def process_item(self, item: Any) -> Any:
        if self.dedup is None:
            raise RuntimeError("SimhashDedupPipeline.process_item called before open_spider")
        adapter = ItemAdapter(item)
        values = [adapter.get(name) for name in self.config.text_fields]
        key = adapter.get(self.config.key_field)
        key = str(key) if key is not None else f"(item without {self.config.key_field})"
        self._inc("checked")
        try:
            analysis = await run_in_thread(self._analyse, values)
        except Exception:
            logger.exception("Could not fingerprint %s; the item is kept", key)
            self._inc("errors/analysis")
            return item
        # No await from here on: the check and the insert happen while no other item runs.
        try:
            verdict = self.dedup.check(analysis, key)
        except SimhashIndexError as e:
            return self._index_failed(item, key, e)
        self._count(verdict)
        if verdict.match is None:
            return item
        match = verdict.match
        if analysis.kind == "short":
            message = f"{key} has the same text as {match.key}"
        else:
            message = f"{key} is a near-duplicate of {match.key} (distance {match.distance})"
        raise NearDuplicate(
            message,
            verdict,
            self.config.drop_log_level,
        )

    def _analyse(self, values: list[Any]) -> Analysis:
        assert self.dedup is not None
        text = "\n".join(
            field_text(v, remove_boilerplate=self.config.remove_boilerplate) for v in values
        )
        return self.dedup.analyse(text)

    def _count(self, verdict: Verdict) -> None:
        analysis = verdict.analysis
        self._inc(analysis.kind)
        if analysis.truncated:
            self._inc("truncated")
        if verdict.match is None:
            self._inc("kept")
            return
        self._inc("dropped")
        self._inc(f"dropped/{'exact' if analysis.kind == 'short' else 'near'}")
        if analysis.kind == "simhash":
            self._inc(f"distance/{verdict.match.distance}")

    def _index_failed(self, item: Any, key: str, error: SimhashIndexError) -> Any:
        self._inc("errors/index")
        if self.config.on_index_error == "close" and self.crawler and self.crawler.engine:
            logger.error("Simhash index failed on %s: %s; closing the spider", key, error)
            self._closing = deferred_from_coro(
                self.crawler.engine.close_spider_async(reason="simhash_index_error")
            )
        else:
            logger.error(
                "Simhash index failed on %s: %s; the item is kept unchecked "
                "(SIMHASH_ON_INDEX_ERROR='keep')",
                key,
                error,
            )
        return item

    def _inc(self, name: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"{STATS_PREFIX}/{name}")
