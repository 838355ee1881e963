"""The Scrapy item pipeline: drops items whose text is a near-duplicate of a kept page."""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter

from ..dedup import Deduplicator
from ..exceptions import ConfigurationError
from ..extract.fields import FieldCensus, item_key
from ..settings import SimhashSettings
from .deduplicator import (
    CrawlDeduplicator,
    refuse_to_start,
    settings_from_crawler,
)
from .near_duplicate import NearDuplicate, Unchanged

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from .workers import WorkerPool

logger = logging.getLogger(__name__)

STATS_PREFIX = "simhash"
#: After this many items, the fields they have are compared with the settings once (and
#: again at close), and a warning says which setting to change when they do not match.
FIELD_CHECK_AFTER = 10


__all__ = ["NearDuplicate", "SimhashDedupPipeline", "Unchanged"]


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

        self.census = FieldCensus(config.text_fields, config.key_field)
        self._fields_checked = False
        #: Names items without a key apart from those of other crawls.
        self._crawl = "crawl started " + datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SimhashDedupPipeline:
        try:
            config, index_uri = settings_from_crawler(crawler)
        except ConfigurationError as e:
            raise refuse_to_start(crawler, e) from e
        return cls(config, index_uri, crawler.stats, crawler)

    def _check_fields(self, at_close: bool = False) -> None:
        """Warn when most items lacked the configured text or key fields: nothing else
        would say that items are kept unchecked or judged on part of their text."""
        self._fields_checked = True
        problem = self.census.problem()
        if problem is None:
            return
        self._inc("warnings/fields")
        logger.warning(
            "%s [%s]",
            problem,
            "at close" if at_close else f"after the first {self.census.items} items",
        )

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
        logger.info(
            "Simhash pipeline: fingerprints the item fields %s (SIMHASH_TEXT_FIELDS); "
            "names items by %r (SIMHASH_KEY_FIELD)",
            ", ".join(repr(name) for name in self.config.text_fields),
            self.config.key_field,
        )

    def close_spider(self) -> None:
        try:
            if self.census.items:
                self._check_fields(at_close=True)
        finally:
            self.runner.close()

    async def process_item(self, item: Any) -> Any:
        if self.dedup is None:
            raise RuntimeError("SimhashDedupPipeline.process_item called before open_spider")
        adapter = ItemAdapter(item)
        values = [adapter.get(name) for name in self.config.text_fields]
        for name in self.census.add(adapter):
            self._inc(f"fields/missing/{name}")
        if not self._fields_checked and self.census.items >= FIELD_CHECK_AFTER:
            self._check_fields()
        key_field = self.config.key_field
        key = item_key(adapter.get(key_field), self.census.items, key_field, self._crawl)
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
        action = self.runner.action(verdict)
        if action == "keep":
            return item
        message = self.runner.describe(key, verdict)
        if action == "unchanged":
            raise Unchanged(message, verdict, self.config.drop_log_level)
        if action == "flag":
            self.runner.mark(item, verdict)
            logger.log(self.config.drop_log_level, "Flagged (kept): %s", message)
            return item
        raise NearDuplicate(message, verdict, self.config.drop_log_level)

    def _inc(self, name: str) -> None:
        self.runner.inc(name)
