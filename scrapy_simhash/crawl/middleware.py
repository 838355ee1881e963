"""The Scrapy spider middleware: a near-duplicate page yields neither its items nor its links.

The pipeline compares items; this middleware compares responses, before the spider's output
goes anywhere. Ignoring a near-duplicate's out-links (as Manku et al. recommend) saves crawl
budget on mirrors, print versions and crawler traps.
"""

from __future__ import annotations

import logging
import mimetypes
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.http import HtmlResponse, Response, TextResponse, XmlResponse
from scrapy.utils.misc import load_object

from ..dedup import Verdict
from ..index.analysed import RESPONSE_FIELD
from ..index.uri import redact
from ..settings import SimhashSettings
from .deduplicator import CrawlDeduplicator
from .setup import crawl_settings

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

__all__ = ["META_OPT_OUT", "STATS_PREFIX", "SimhashDedupMiddleware"]

logger = logging.getLogger(__name__)

STATS_PREFIX = "simhash/middleware"
#: ``Request.meta`` key: true to let this request's response through unchecked.
META_OPT_OUT = "dont_simhash"


class SimhashDedupMiddleware:
    """Fingerprints each response's text (the visible text of HTML) and, when it is within
    ``SIMHASH_MAX_DISTANCE`` of a page kept earlier, discards everything the spider yields
    for it: items and requests. HTML is reduced to text by ``SIMHASH_EXTRACTOR``, as the
    pipeline's HTML fields are.

    * ``Request.meta["dont_simhash"] = True`` lets one response through unchecked.
    * Only responses whose media type is in ``SIMHASH_MIDDLEWARE_CONTENT_TYPES`` are
      checked (HTML by default; ``text/*`` style wildcards allowed).
    * A page that matches a page stored under its own URL (a re-crawl of an unchanged page)
      has its items dropped but its links followed, so a second run still reaches new pages.
    * With ``SIMHASH_FLAG_ONLY``, nothing is discarded: the items of a duplicate get
      ``SIMHASH_FLAG_FIELD`` set to the kept page's URL, and ``response.meta`` gets the same
      key before the spider's output is consumed.

    Stats are counted under ``simhash/middleware/``.
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
        self.runner = CrawlDeduplicator(
            config, index_uri, stats=stats, crawler=crawler, stats_prefix=STATS_PREFIX
        )

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SimhashDedupMiddleware:
        config, index_uri = crawl_settings(crawler)
        middleware = cls(config, index_uri, crawler.stats, crawler)
        # Opened now, not when the spider opens: Scrapy opens the feeds then, and an
        # index that cannot be opened must stop the crawl before (see setup_failed).
        middleware.runner.open_index()
        crawler.signals.connect(middleware.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(middleware.spider_closed, signal=signals.spider_closed)
        if _pipeline_enabled(crawler):
            logger.warning(
                "SimhashDedupMiddleware and SimhashDedupPipeline are both enabled on the index "
                "%s: each item would be compared with the page it came from, and dropped when "
                "their texts are alike. Enable one of them (both use SIMHASH_INDEX_URI).",
                redact(middleware.index_uri),
            )
        return middleware

    def spider_opened(self) -> None:
        self.runner.open()

    def spider_closed(self) -> None:
        self.runner.close()

    async def process_spider_output(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        verdict = await self._check(response)
        action = self.runner.outcomes.action(verdict)
        if action == "keep":
            contained = self.runner.outcomes.contained_key(verdict)
            if contained is not None:
                response.meta[self.config.contains_field] = contained
            async for output in result:
                if contained is not None and not isinstance(output, Request):
                    self.runner.outcomes.mark_contained(output, verdict)
                yield output
            return
        message = self.runner.outcomes.describe(response.url, verdict)
        if action == "unchanged":
            # Its items were kept at the last crawl; its links are followed, as they may
            # lead to pages that are new. DEBUG: a re-crawl has one such page per page
            # (nothing is lost that a user must be told about).
            logger.debug("Ignored its items, followed its links: %s", message)
            async for output in result:
                if isinstance(output, Request):
                    yield output
            return
        if action == "flag":
            response.meta[self.config.flag_field] = verdict.match.key
            logger.log(self.config.drop_log_level, "Flagged (kept): %s", message)
            async for output in result:
                if not isinstance(output, Request):
                    self.runner.outcomes.mark(output, verdict)
                yield output
            return
        logger.log(self.config.drop_log_level, "Ignored its items and links: %s", message)

    async def _check(self, response: Response) -> Verdict | None:
        """The verdict on *response*, or ``None`` when it is not checked."""
        if not isinstance(response, Response):
            return None
        if response.meta.get(META_OPT_OUT):
            self.runner.inc("skipped/dont_simhash")
            return None
        media_type = response_media_type(response)
        if not isinstance(response, TextResponse) or not self._counts(media_type):
            self.runner.inc("skipped/content_type")
            return None
        if self.runner.dedup is None:
            raise RuntimeError("SimhashDedupMiddleware used before the spider was opened")
        self.runner.inc("checked")
        try:
            analysis = await self.runner.analyse([response.text], response.url)
        except Exception:
            logger.exception("Could not fingerprint %s; its output is kept", response.url)
            self.runner.inc("errors/analysis")
            return None
        if analysis is None:  # counted and logged: a worker process hung on it
            return None
        # Checked in the index's own thread, one page at a time, in the order they come.
        return await self.runner.decide(analysis, response.url, (RESPONSE_FIELD,))

    def _counts(self, media_type: str) -> bool:
        for pattern in self.config.middleware_content_types:
            if pattern == media_type or (
                pattern.endswith("/*") and media_type.startswith(pattern[:-1])
            ):
                return True
        return False


def response_media_type(response: Response) -> str:
    """The media type of *response*: its Content-Type header, else guessed from its class
    (``file://`` responses have no headers) or its URL."""
    header = response.headers.get(b"Content-Type")
    if header:
        return header.decode("latin-1").partition(";")[0].strip().lower()
    if isinstance(response, HtmlResponse):
        return "text/html"
    if isinstance(response, XmlResponse):
        return "text/xml"
    guessed, _ = mimetypes.guess_type(response.url)
    if guessed:
        return guessed
    return "text/plain" if isinstance(response, TextResponse) else "application/octet-stream"


def _pipeline_enabled(crawler: Crawler) -> bool:
    from .pipeline import SimhashDedupPipeline

    for path in crawler.settings.getwithbase("ITEM_PIPELINES"):
        try:
            component = load_object(path) if isinstance(path, str) else path
        except (ImportError, NameError, ValueError):
            continue
        if isinstance(component, type) and issubclass(component, SimhashDedupPipeline):
            return True
    return False
