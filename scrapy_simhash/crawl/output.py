"""When the item of a page stored in the index is in the crawl's output.

The pipeline stores a page when it checks it; the page's key stays in the crawl's journal
(:mod:`scrapy_simhash.index.journal`) until its item is in the output, so that a crawl that
dies in between leaves nothing the index remembers and no output holds. An item is in the
output once it has left every item pipeline (``item_scraped``) and:

- without feeds (``FEEDS``): at once: the later pipelines are the output;
- with feeds that write a local file or stdout: once the feed's file has been flushed to
  the operating system, which :meth:`Output.confirmed` does every
  :data:`FLUSH_INTERVAL` seconds and at close (a process killed after that loses
  nothing of it; a power cut can, as it can any file not fsynced);
- with any other feed (S3, FTP, a post-processed file...): once Scrapy has stored every
  feed, at the end of the crawl (``feed_exporter_closed``), when no store failed.

An item dropped or failed in a later pipeline never reaches the output: its page stays
pending and is forgotten when the crawl ends.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

#: Seconds between two flushes of the feeds (and settlements of the journal).
FLUSH_INTERVAL = 1.0


def _feed_exporter(crawler: Crawler | None) -> Any:
    from scrapy.extensions.feedexport import FeedExporter

    extensions = getattr(getattr(crawler, "extensions", None), "middlewares", ())
    return next((e for e in extensions if isinstance(e, FeedExporter)), None)


def _has_engine(crawler: Crawler | None) -> bool:
    try:
        return getattr(crawler, "engine", None) is not None
    except RuntimeError:  # Scrapy 2.14+: "Crawler.engine is not set yet"
        return False


def _local(slot: Any) -> bool:
    """Whether a feed slot writes where the feed ends up, so that a flush puts its items
    there (a local file, stdout), rather than into a file uploaded at the end."""
    from scrapy.extensions.feedexport import FileFeedStorage, StdoutFeedStorage

    return isinstance(slot.storage, FileFeedStorage | StdoutFeedStorage) and (
        "postprocessing" not in (slot.feed_options or {})
    )


def _flush(slot: Any) -> None:
    """Push what the slot's exporter and file hold in memory to the operating system."""
    exporter = slot.exporter
    stream = getattr(exporter, "stream", None)  # CSV: a text wrapper of its own
    if stream is not None and not stream.closed:
        stream.flush()
    xml = getattr(exporter, "xg", None)  # XML: the generator's own text wrapper
    if xml is not None and callable(getattr(xml, "_flush", None)):
        xml._flush()
    if not slot.file.closed:
        slot.file.flush()


class Output:
    """Follows the items of the pages a crawl stored until they are in its output."""

    def __init__(self, crawler: Crawler | None) -> None:
        self.crawler = crawler
        #: id(item) -> (item, key): items whose page was stored, not yet scraped.
        self._stored: dict[int, tuple[Any, str]] = {}
        #: Keys of items scraped since the last :meth:`confirmed`.
        self._scraped: list[str] = []
        #: Keys to remove from the journal with no wait (nothing of theirs was stored).
        self._nothing_stored: list[str] = []
        self.lost = 0
        #: Without an engine (a pipeline driven by a script or a test), nothing sends
        #: ``item_scraped``: whoever called the pipeline has the item when it returns.
        self._engine = _has_engine(crawler)
        if self._engine:
            crawler.signals.connect(self._item_scraped, signal=signals.item_scraped)
            crawler.signals.connect(self._item_lost, signal=signals.item_dropped)
            crawler.signals.connect(self._item_lost, signal=signals.item_error)

    def stored(self, item: Any, key: str) -> None:
        """The page of *item* was stored under *key* (its key is in the journal)."""
        if self._engine:
            self._stored[id(item)] = (item, key)
        else:
            self._scraped.append(key)

    def nothing_stored(self, key: str) -> None:
        """*key* was written to the journal, but its check stored nothing."""
        self._nothing_stored.append(key)

    def _item_scraped(self, item: Any) -> None:
        entry = self._stored.pop(id(item), None)
        if entry is not None:
            self._scraped.append(entry[1])

    def _item_lost(self, item: Any) -> None:
        # Dropped or failed in a later pipeline (the pipeline's own drops are never in
        # _stored): not in the output; the key stays pending until the crawl ends.
        if self._stored.pop(id(item), None) is not None:
            self.lost += 1

    @property
    def waits_for_the_end(self) -> bool:
        """Whether some feed is stored only at the end of the crawl (see module doc)."""
        exporter = _feed_exporter(self.crawler)
        return exporter is not None and not all(_local(slot) for slot in exporter.slots)

    def confirmed(self, *, at_end: bool = False) -> list[str]:
        """The keys whose items are in the output since the last call (and those whose
        check stored nothing), after flushing the local feeds. *at_end*: every feed has
        been stored (``feed_exporter_closed``)."""
        exporter = _feed_exporter(self.crawler)
        ready, self._nothing_stored = self._nothing_stored, []
        if exporter is not None and not at_end:
            for slot in exporter.slots:
                if slot.file is not None and _local(slot):
                    try:
                        _flush(slot)
                    except (OSError, ValueError) as e:  # a full disk: not in the output
                        logger.error("Could not flush the feed %s: %s", slot.uri, e)
                        return ready
            if not all(_local(slot) for slot in exporter.slots):
                return ready
        if at_end and self._feeds_failed():
            return ready
        ready.extend(self._scraped)
        self._scraped = []
        return ready

    def _feeds_failed(self) -> bool:
        stats = getattr(self.crawler, "stats", None)
        if stats is None:
            return False
        return any(
            name.startswith("feedexport/failed_count/") and value
            for name, value in stats.get_stats().items()
        )

    def disconnect(self) -> None:
        if self._engine:
            self.crawler.signals.disconnect(self._item_scraped, signal=signals.item_scraped)
            self.crawler.signals.disconnect(self._item_lost, signal=signals.item_dropped)
            self.crawler.signals.disconnect(self._item_lost, signal=signals.item_error)
