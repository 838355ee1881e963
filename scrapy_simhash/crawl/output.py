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
pending and is forgotten when the crawl ends. So does an item that a feed could not take:
Scrapy's feed exporter writes items in its ``item_scraped`` handler, and when the write
raises (a full disk: ``No space left on device``) Scrapy only logs it and goes on; a later
flush that succeeds puts the *other* items in the file, never that one. The exporter's
handler is therefore called through :meth:`Output._export`, which notes the items whose
export raised: those are never confirmed, whatever later flushes do, and they are counted
(``simhash/errors/feed_export``) and reported at the end (:meth:`Output.report`). A
feed written in batches (``batch_item_count``) needs one more step: no export raises while
the lines fit the file's buffer, and Scrapy closes a finished batch's file later, only
logging a close that fails; so when a batch ends its file is flushed at once, and if that
fails, none of the items waiting to be confirmed is.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from pydispatch.robustapply import robustApply
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


def _overwritten_files(crawler: Crawler | None) -> list[str]:
    """The local files of the crawl's feeds that are overwritten (``-O``, ``overwrite``)
    and are not empty; feeds named by a template (``%(time)s``) are each crawl's own."""
    from urllib.parse import urlparse
    from urllib.request import url2pathname

    settings = getattr(crawler, "settings", None)
    feeds = settings.getdict("FEEDS") if settings is not None else {}
    found = []
    for uri, options in feeds.items():
        uri = str(uri)
        if not (options or {}).get("overwrite") or "%(" in uri:
            continue
        parsed = urlparse(uri)
        if parsed.scheme == "file":
            path = url2pathname(parsed.path)
        elif len(parsed.scheme) <= 1:  # a path (or a Windows drive letter)
            path = uri
        else:
            continue
        if os.path.isfile(path) and os.path.getsize(path) > 0:
            found.append(path)
    return found


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


def _position(slot: Any) -> int | None:
    """Where the next byte written to the slot's file goes (its buffer included), for a
    local file; ``None`` otherwise."""
    if not _local(slot):
        return None
    file = slot.file
    try:
        if file is None:  # opened at its first item: where that item goes
            path = getattr(slot.storage, "path", None)
            if path is None:  # stdout
                return None
            if getattr(slot.storage, "write_mode", "ab") == "wb" or not os.path.exists(path):
                return 0
            return os.path.getsize(path)
        return None if file.closed else file.tell()
    except (OSError, ValueError):  # stdout to a pipe
        return None


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
        #: id(item) of the items whose export to a feed raised, until their
        #: ``item_scraped`` reaches :meth:`_item_scraped` (at once, in the same signal).
        self._failed: set[int] = set()
        #: How many items could not be written to the feeds, and the first error.
        self.export_failures = 0
        self._first_failure: str | None = None
        #: The feed exporter whose ``item_scraped`` handler :meth:`_export` calls.
        self._exporter: Any = None
        self._batches = False
        #: Without an engine (a pipeline driven by a script or a test), nothing sends
        #: ``item_scraped``: whoever called the pipeline has the item when it returns.
        self._engine = _has_engine(crawler)
        if self._engine:
            self._wrap_exporter()  # before _item_scraped: the export is known when it runs
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

    def _wrap_exporter(self) -> None:
        """Call the feed exporter's ``item_scraped`` handler through :meth:`_export`, so
        that an item it could not write is known (Scrapy would only log the exception)."""
        exporter = _feed_exporter(self.crawler)
        if exporter is None:
            return
        try:
            self.crawler.signals.disconnect(exporter.item_scraped, signal=signals.item_scraped)
        except Exception as e:  # not connected the usual way: leave it as it is
            logger.warning(
                "Could not follow the feed exporter's writes (%s): an item a feed fails to "
                "write may leave the crawl's journal all the same",
                e,
            )
            return
        self._exporter = exporter
        #: Whether some feed is written in batches (``batch_item_count``).
        self._batches = any(
            (options or {}).get("batch_item_count") for options in exporter.feeds.values()
        )
        self.crawler.signals.connect(self._export, signal=signals.item_scraped)

    def _export(self, item: Any, **named: Any) -> None:
        """The feed exporter's ``item_scraped``; an item whose export raises is noted, and
        so are the items of a batch file whose last lines cannot be written."""
        exporter = self._exporter
        before, failed_stores = (
            (list(exporter.slots), self._failed_stores()) if self._batches else ((), 0)
        )
        positions = [(slot, _position(slot)) for slot in exporter.slots]
        try:
            # With the arguments its signature takes, as the signal would give them.
            robustApply(exporter.item_scraped, item=item, **named)
        except Exception as e:
            self._export_failed(item, e)
            for slot, position in positions:
                self._end_cut_line(slot, position)
            return
        for slot in before:
            if any(slot is current for current in exporter.slots):
                continue
            # A batch ended with this item (``batch_item_count``): Scrapy closes its file
            # later, and a close that fails is only logged. Write what it holds now.
            error = self._retire(slot, failed_stores)
            if error is not None:
                self._batch_failed(item, slot, error)

    def _end_cut_line(self, slot: Any, position: int | None) -> None:
        """After an export that raised: if part of the item went into *slot*'s file (a
        line longer than the file's buffer, written past it until the disk filled), end
        that line, so that the next item's line is not joined to it and lost with it."""
        now = _position(slot)
        if position is None or now is None or now <= position:
            return
        try:
            slot.file.write(b"\n")
        except (OSError, ValueError) as e:
            logger.error("Could not end the cut line in the feed %s: %s", slot.uri, e)
        else:
            logger.error(
                "The feed %s holds the first %d bytes of an item it could not take, on a "
                "line of their own",
                slot.uri,
                now - position,
            )

    def _failed_stores(self) -> int:
        stats = getattr(self.crawler, "stats", None)
        if stats is None:
            return 0
        return sum(
            value or 0
            for name, value in stats.get_stats().items()
            if name.startswith("feedexport/failed_count/")
        )

    def _retire(self, slot: Any, failed_stores: int) -> str | None:
        """Flush the file of a batch that has just ended; the error, if it failed."""
        file = slot.file
        if file is None or not _local(slot):
            return None  # stored at the end: confirmed only once every feed is stored
        if file.closed:  # Scrapy closed it already (without asyncio): did that fail?
            if self._failed_stores() > failed_stores:
                return "Scrapy could not store it"
            return None
        try:
            _flush(slot)
        except (OSError, ValueError) as e:
            return f"{type(e).__name__}: {e}"
        return None

    def _batch_failed(self, item: Any, slot: Any, error: str) -> None:
        """The items written to *slot* since the last confirmation may not be in its file:
        none of those waiting is confirmed (some are kept twice, none is lost)."""
        waiting, self._scraped = self._scraped, []
        self._failed.add(id(item))
        count = len(waiting) + (id(item) in self._stored)
        self._count_failures(count, error)
        logger.error(
            "Could not write the end of the feed batch %s: %s; the %d items waiting to be "
            "confirmed stay pending and are forgotten at the end of the crawl, so the next "
            "crawl exports them again",
            slot.uri,
            error,
            count,
        )

    def _count_failures(self, count: int, error: str) -> None:
        self.export_failures += count
        if self._first_failure is None:
            self._first_failure = error
        stats = getattr(self.crawler, "stats", None)
        if stats is not None and count:
            stats.inc_value("simhash/errors/feed_export", count)

    def _export_failed(self, item: Any, e: Exception) -> None:
        self._failed.add(id(item))
        first = self._first_failure is None
        self._count_failures(1, f"{type(e).__name__}: {e}")
        entry = self._stored.get(id(item))
        what = f"the item of {entry[1]}" if entry is not None else "an item"
        if first:
            logger.error(
                "Could not write %s to the feeds: %s; its page stays pending and is "
                "forgotten at the end of the crawl, so the next crawl exports it again",
                what,
                e,
                exc_info=(type(e), e, e.__traceback__),
            )
        else:
            logger.error("Could not write %s to the feeds: %s", what, e)

    def _item_scraped(self, item: Any) -> None:
        failed = id(item) in self._failed
        self._failed.discard(id(item))
        entry = self._stored.pop(id(item), None)
        if entry is not None and not failed:
            self._scraped.append(entry[1])
        # An item a feed could not write: its line is in no file, whatever later flushes
        # do; its key stays pending until the crawl ends.

    def report(self) -> None:
        """At the end of the crawl: one line for the items the feeds could not take."""
        if self.export_failures:
            logger.error(
                "%d item%s could not be written to the feeds (the first: %s); their pages "
                "stay pending and are forgotten from the index at the end of the crawl, so "
                "that the next crawl keeps and exports them again",
                self.export_failures,
                "" if self.export_failures == 1 else "s",
                self._first_failure,
            )

    def _item_lost(self, item: Any) -> None:
        # Dropped or failed in a later pipeline (the pipeline's own drops are never in
        # _stored): not in the output; the key stays pending until the crawl ends.
        if self._stored.pop(id(item), None) is not None:
            self.lost += 1

    def warn_overwritten(self, forgotten: int) -> None:
        """A WARNING per local feed file that this crawl overwrites (``-O``) and that holds
        items, once a crawl of the index was found to have died (*forgotten* pages): the
        items it did export may be in that file alone, and this crawl drops their pages as
        unchanged. Called before Scrapy opens the feeds, so before the file is emptied."""
        for path in _overwritten_files(self.crawler):
            logger.warning(
                "A crawl of this index stopped before its end (%d of its pages were "
                "forgotten). The items it exported may be only in %s, which this crawl "
                "overwrites (-O): its pages are dropped as unchanged and will be in no "
                "feed. Stop now and copy that file, or crawl with -o (append) or another "
                "file name; -a simhash_drop_unchanged=0 exports unchanged pages again",
                forgotten,
                path,
            )

    @property
    def follows_items(self) -> bool:
        """Whether a running engine sends the crawl's item signals (not a script or a
        test driving the pipeline by hand)."""
        return self._engine

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
        if self._exporter is not None:
            self.crawler.signals.disconnect(self._export, signal=signals.item_scraped)
            self.crawler.signals.connect(self._exporter.item_scraped, signal=signals.item_scraped)
            self._exporter = None
        if self._engine:
            self.crawler.signals.disconnect(self._item_scraped, signal=signals.item_scraped)
            self.crawler.signals.disconnect(self._item_lost, signal=signals.item_dropped)
            self.crawler.signals.disconnect(self._item_lost, signal=signals.item_error)
