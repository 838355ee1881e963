"""The Scrapy item pipeline: drops items whose text is a near-duplicate of a kept page."""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.exceptions import CloseSpider
from twisted.internet.task import LoopingCall

from ..dedup import Deduplicator
from ..extract.fields import FieldCensus, item_key
from ..settings import SimhashSettings
from .deduplicator import CrawlDeduplicator
from .near_duplicate import NearDuplicate, Unchanged
from .output import FLUSH_INTERVAL, Output
from .setup import crawl_settings

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from .workers import WorkerPool

logger = logging.getLogger(__name__)

STATS_PREFIX = "simhash"
#: The finish reason of a crawl that ran to its end but whose feeds could not take some
#: items (a full disk): not ``finished``, which would say that the output is complete.
FEED_EXPORT_FAILED = "feed_export_failed"
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
        self.output: Output | None = None
        self._loop: LoopingCall | None = None
        self._fields_checked = False
        #: Names items without a key apart from those of other crawls.
        self._crawl = "crawl started " + datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SimhashDedupPipeline:
        config, index_uri = crawl_settings(crawler)
        pipeline = cls(config, index_uri, crawler.stats, crawler)
        # Opened now, not in open_spider: an index that cannot be opened then stops the
        # crawl before Scrapy builds the rest of the engine (see setup_failed).
        pipeline.runner.open_index()
        return pipeline

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
        self.runner.open(journal=True)
        self.output = Output(self.crawler)
        if self.runner.forgotten_at_start:
            self.output.warn_overwritten(self.runner.forgotten_at_start)
        if self.output.follows_items:
            self.crawler.signals.connect(self._spider_idle, signal=signals.spider_idle)
        self._loop = LoopingCall(self._settle)
        self._loop.start(FLUSH_INTERVAL, now=False)
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
            self.runner.outcomes.warn_if_all_unchanged()
        finally:
            loop, self._loop = self._loop, None
            if loop is not None and loop.running:
                loop.stop()
            output = self.output
            if output is not None:
                output.report()
            if output is not None and output.waits_for_the_end:
                # A feed stored only at the end (S3, FTP...): its items are in the output
                # once Scrapy has stored it; the index stays open until then.
                self.runner.close(keep_index=True)
                self.crawler.signals.connect(
                    self._feeds_stored, signal=signals.feed_exporter_closed, weak=False
                )
            else:
                self.runner.close(keep_index=True)
                try:
                    confirmed = output.confirmed() if output is not None else []
                finally:
                    self._end(confirmed if output is not None else [])

    def _feeds_stored(self) -> None:
        self._end(self.output.confirmed(at_end=True))

    def _spider_idle(self) -> None:
        """The crawl is over: a crawl whose feeds could not take some items does not end
        as ``finished`` (Scrapy's exit status stays 0: it reflects only a failed start)."""
        if self.output is not None and self.output.export_failures:
            raise CloseSpider(FEED_EXPORT_FAILED)

    def _end(self, confirmed: list[str]) -> None:
        self.runner.close_index(confirmed)
        if self.output is not None:
            if self.output.follows_items:
                self.crawler.signals.disconnect(self._spider_idle, signal=signals.spider_idle)
            self.output.disconnect()
            self.output = None

    def _settle(self) -> None:
        """Every FLUSH_INTERVAL: flush the feeds, hand the keys of the items now in the
        output to the journal keeper (which removes them from the journal, renews the
        crawl's lease and recovers dead crawls in its own thread)."""
        output = self.output
        if output is None:
            return  # the spider closed: its end settles
        self.runner.settle(output.confirmed())

    async def process_item(self, item: Any) -> Any:
        if self.dedup is None:
            raise RuntimeError("SimhashDedupPipeline.process_item called before open_spider")
        self._inc("checked")
        try:
            values, key, lacking = self._read(item)
        except Exception:
            # An item the fields of which cannot even be read: still one counted outcome.
            logger.exception("Could not read the fields of an item; the item is kept")
            self._inc("errors/analysis")
            return item
        try:
            analysis = await self.runner.analyse(values, key)
        except Exception:
            logger.exception("Could not fingerprint %s; the item is kept", key)
            self._inc("errors/analysis")
            return item
        if analysis is None:  # counted and logged: a worker process hung on it
            return item
        if analysis.kind == "short" and self.census.left_out(lacking):
            # Without the field most items lack, what is left (a title alone) is no page:
            # distinct pages share it, and an exact match on it would drop them. Let
            # through, counted, and named in the fields warning until the settings change.
            self._inc(analysis.kind)
            self._inc("skipped/fields")
            return item
        # Checked in the index's own thread, one item at a time, in the order they come.
        # How it was read, kept with the page: the fields it lacked marked (see Analysed).
        fields = tuple(f"-{n}" if n in lacking else n for n in self.config.text_fields)
        verdict = await self.runner.decide(analysis, key, fields)
        if verdict is not None and analysis.kind != "empty" and self.output is not None:
            if verdict.status in ("new", "changed"):
                self.output.stored(item, key)  # in the journal until in the output
            else:
                self.output.nothing_stored(key)
        action = self.runner.outcomes.action(verdict)
        if action == "keep":
            self.runner.outcomes.mark_contained(item, verdict)
            return item
        message = self.runner.outcomes.describe(key, verdict)
        if action == "unchanged":
            raise Unchanged(message, verdict, self.config.drop_log_level)
        if action == "flag":
            self.runner.outcomes.mark(item, verdict)
            logger.log(self.config.drop_log_level, "Flagged (kept): %s", message)
            return item
        raise NearDuplicate(message, verdict, self.config.drop_log_level)

    def _read(self, item: Any) -> tuple[list[Any], str, list[str]]:
        """The values of the text fields of *item*, its key, and the configured fields it
        lacks; counts its fields."""
        adapter = ItemAdapter(item)
        values = [adapter.get(name) for name in self.config.text_fields]
        lacking = self.census.add(adapter)
        for name in lacking:
            self._inc(f"fields/missing/{name}")
        if not self._fields_checked and self.census.items >= FIELD_CHECK_AFTER:
            self._check_fields()
        key_field = self.config.key_field
        key = item_key(adapter.get(key_field), self.census.items, key_field, self._crawl)
        return values, key, lacking

    def _inc(self, name: str) -> None:
        self.runner.inc(name)
