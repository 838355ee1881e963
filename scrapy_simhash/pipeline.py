"""The Scrapy item pipeline: drops items whose text is a near-duplicate of a kept page."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy.exceptions import DropItem

from .adapter import CrawlDeduplicator, default_index_uri, settings_from_crawler
from .dedup import Deduplicator, Verdict
from .settings import SimhashSettings

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from .workers import WorkerPool

logger = logging.getLogger(__name__)

STATS_PREFIX = "simhash"


class NearDuplicate(DropItem):
    """Raised to drop an item that duplicates a page kept earlier.

    Scrapy counts these under ``item_dropped_reasons_count/NearDuplicate``.
    """

    def __init__(self, message: str, verdict: Verdict, log_level: int = logging.INFO) -> None:
        super().__init__(message, log_level=log_level)
        self.verdict = verdict


class Unchanged(NearDuplicate):
    """Raised to drop an item whose page is unchanged since the last crawl: its text
    matches the page stored under its own key (``SIMHASH_DROP_UNCHANGED``).

    Scrapy counts these under ``item_dropped_reasons_count/Unchanged``.
    """


__all__ = ["NearDuplicate", "SimhashDedupPipeline", "Unchanged", "default_index_uri"]


class SimhashDedupPipeline:
    """Drops items whose text (the ``SIMHASH_TEXT_FIELDS``) is within
    ``SIMHASH_MAX_DISTANCE`` of a page kept earlier, in this run or any earlier one.

    The CPU work runs in a thread (or worker processes); the check-and-insert runs in the
    index's own thread, so items processed concurrently are still checked one at a time, in
    order, and a check that waits for the index never stops the reactor.

    With ``SIMHASH_FLAG_ONLY``, duplicates are kept with ``SIMHASH_FLAG_FIELD`` set to the
    key of the page they duplicate, and counted under ``simhash/flagged``.
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
        self.runner = CrawlDeduplicator(
            config, index_uri, stats=stats, crawler=crawler, stats_prefix=STATS_PREFIX
        )

    _warned_fields = False

    def _warn_missing_fields(self, adapter: ItemAdapter) -> None:
        """Warn once when an item lacks a SIMHASH_TEXT_FIELDS field: with none of them, every
        item is kept unchecked (counted ``simhash/empty``); with some, duplicates are judged
        on part of their text. Either way, nothing else would say so."""
        fields = list(adapter.keys())
        missing = [name for name in self.config.text_fields if name not in fields]
        if not missing or not fields:
            return
        self._warned_fields = True
        every = len(missing) == len(self.config.text_fields)
        logger.warning(
            "SIMHASH_TEXT_FIELDS=%r: this item has no %s (its fields: %s); %s. Set "
            "SIMHASH_TEXT_FIELDS to the fields that hold the page's text (warned once)",
            list(self.config.text_fields),
            " and no ".join(repr(name) for name in missing),
            ", ".join(repr(name) for name in fields),
            "it is kept unchecked, and so will every item like it"
            if every
            else "it is checked on the others only",
        )

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SimhashDedupPipeline:
        config, index_uri = settings_from_crawler(crawler)
        return cls(config, index_uri, crawler.stats, crawler)

    @property
    def dedup(self) -> Deduplicator | None:
        """The deduplicator over the open index, while the spider is open."""
        return self.runner.dedup

    @property
    def workers(self) -> WorkerPool | None:
        """The worker processes (``SIMHASH_WORKERS``), while the spider is open."""
        return self.runner.workers

    def open_spider(self) -> None:
        self.runner.open()

    def close_spider(self) -> None:
        self.runner.close()

    async def process_item(self, item: Any) -> Any:
        if self.dedup is None:
            raise RuntimeError("SimhashDedupPipeline.process_item called before open_spider")
        adapter = ItemAdapter(item)
        values = [adapter.get(name) for name in self.config.text_fields]
        if not self._warned_fields:
            self._warn_missing_fields(adapter)
        key = adapter.get(self.config.key_field)
        key = str(key) if key is not None else f"(item without {self.config.key_field})"
        self._inc("checked")
        try:
            analysis = await self.runner.analyse(values, key)
        except Exception:
            logger.exception("Could not fingerprint %s; the item is kept", key)
            self._inc("errors/analysis")
            return item
        if analysis is None:  # counted and logged: a worker process hung on it
            return item
        # Checked in the index's own thread, one item at a time, in the order they come.
        verdict = await self.runner.decide(analysis, key)
        if verdict is None or verdict.match is None:
            return item
        message = self.runner.describe(key, verdict)
        if verdict.status == "unchanged":
            if not self.runner.drops(verdict):
                return item  # kept: SIMHASH_DROP_UNCHANGED = False (or flag-only)
            raise Unchanged(message, verdict, self.config.drop_log_level)
        if self.config.flag_only:
            self.runner.mark(item, verdict)
            logger.log(self.config.drop_log_level, "Flagged (kept): %s", message)
            return item
        raise NearDuplicate(message, verdict, self.config.drop_log_level)

    def _inc(self, name: str) -> None:
        self.runner.inc(name)
