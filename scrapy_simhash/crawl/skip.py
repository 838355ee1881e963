"""The downloader middleware that does not download what a site's own drops predict to be a copy.

With ``SIMHASH_SKIP_PREDICTED``, the pipeline teaches each site's URL rules (see
:mod:`scrapy_simhash.url_rules`) from its drops; this middleware skips a request when a
confirmed rule of its site maps its URL to a page stored in the index. A page never
downloaded is a loss nobody sees, so: a rule is used only after ``SIMHASH_SKIP_MIN_COPIES``
copies and no distinct page; 1 in ``SIMHASH_SKIP_CHECK_EVERY`` of the requests it would skip
is downloaded all the same, and one distinct page among them retires it for the site; start
requests and ``dont_simhash`` requests are never skipped; every skip is kept in the index
(``scrapy-simhash rules --skipped``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

from scrapy import Request, signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.utils.asyncio import is_asyncio_available

from ..exceptions import SimhashIndexError
from ..index.base import NearDuplicateIndex
from ..index.skip_rules import SkippedRequest, SkipRuleStore, skip_rules_for
from ..index.uri import redact
from ..settings import SimhashSettings
from ..url_rules import confirmed, predictions, site
from .middleware import META_OPT_OUT
from .setup import crawl_settings, setup_failed

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

__all__ = ["META_CHECKED", "SkipPredictedMiddleware"]

logger = logging.getLogger(__name__)

#: ``Request.meta`` key set on a request a rule would have skipped, downloaded as a check:
#: the rules that predicted it to be a copy.
META_CHECKED = "simhash_skip_check"
#: Seconds a site's confirmed rules are used before they are read from the index again
#: (another process, or this crawl's pipeline, may have confirmed or retired one).
RULES_FRESH_FOR = 2.0
#: A target URL requested this many seconds ago or less may still be on its way to the
#: index: a request predicted to be its copy waits for it up to TARGET_WAIT seconds,
#: looking every WAIT_STEP seconds, before it is downloaded all the same.
IN_FLIGHT_FOR = 30.0
TARGET_WAIT = 3.0
WAIT_STEP = 0.05
#: Requests remembered (for IN_FLIGHT_FOR), the oldest forgotten first.
REQUESTS_REMEMBERED = 10_000


class SkipPredictedMiddleware:
    """Skips (``IgnoreRequest``) a request that a confirmed URL rule of its site maps to a
    page stored in the index. Counted in ``simhash/skipped/predicted`` and
    ``simhash/skipped/checked`` (downloaded to check a rule)."""

    def __init__(
        self,
        config: SimhashSettings,
        index_uri: str,
        stats: StatsCollector | None = None,
    ) -> None:
        self.config = config
        self.index_uri = index_uri
        self.stats = stats
        self.index: NearDuplicateIndex | None = None
        self.store: SkipRuleStore | None = None
        #: site -> (its confirmed rules, when they were read).
        self._rules: dict[str, tuple[list[str], float]] = {}
        #: (site, rules) -> the requests they predicted so far (for the 1-in-N checks).
        self._predicted: dict[tuple[str, tuple[str, ...]], int] = {}
        self._logged: set[tuple[str, tuple[str, ...]]] = set()
        #: URL -> when this crawl requested it (the latest REQUESTS_REMEMBERED).
        self._requested: dict[str, float] = {}
        self._can_wait = is_asyncio_available()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SkipPredictedMiddleware:
        config, index_uri = crawl_settings(crawler)
        if not config.skip_predicted:
            raise NotConfigured  # no reason given: Scrapy logs none (off is the default)
        if index_uri.startswith("memory:"):
            logger.warning(
                "SIMHASH_SKIP_PREDICTED needs an index that the pipeline and this middleware "
                "both open (SQLite or Redis); with %s no request is skipped",
                index_uri,
            )
            raise NotConfigured  # the reason is in the warning above
        middleware = cls(config, index_uri, crawler.stats)
        crawler.signals.connect(middleware.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(middleware.spider_closed, signal=signals.spider_closed)
        return middleware

    def spider_opened(self) -> None:
        try:
            # After the pipeline's open: the index exists, built as configured.
            self.index = self.config.open_index(self.index_uri, create=True)
        except SimhashIndexError as e:
            raise setup_failed(e) from e
        self.store = skip_rules_for(self.index)

    def spider_closed(self) -> None:
        index, self.index, self.store = self.index, None, None
        if index is not None:
            index.close()

    async def process_request(self, request: Request) -> None:
        if self.index is None or self.store is None:
            return
        meta = request.meta
        url = request.url
        self._requested[url] = time.monotonic()
        if len(self._requested) > REQUESTS_REMEMBERED:
            del self._requested[next(iter(self._requested))]
        if meta.get("is_start_request") or meta.get(META_OPT_OUT):
            return
        where = site(url)
        try:
            rules = self._confirmed(where)
            if not rules:
                return
            predicted = self.store.copy_of(url)  # by a rule, from a page kept since
            if (
                predicted is not None
                and predicted[1] in rules
                and predicted[0] != url
                and self.index.find(predicted[0])
            ):
                self._predicted_copy(request, where, (predicted[1],), predicted[0])
                return
            found = predictions(url, rules)
            for used, target in found:
                kept = self._kept(target, rules)
                if kept is not None and kept != url:
                    self._predicted_copy(request, where, used, kept)
                    return
            # A target requested moments ago may be on its way to the index: wait for it
            # rather than download what is likely its copy.
            waiting = [(u, t) for u, t in found if self._in_flight(t)] if self._can_wait else []
            deadline = time.monotonic() + TARGET_WAIT
            while waiting and time.monotonic() < deadline:
                await asyncio.sleep(WAIT_STEP)
                for used, target in waiting:
                    kept = self._kept(target, rules)
                    if kept is not None and kept != url:
                        self._predicted_copy(request, where, used, kept)
                        return
        except SimhashIndexError as e:
            self._inc("errors/url_rules")
            logger.error("Could not check %s against the URL rules of %s: %s", url, where, e)

    def _kept(self, url: str, rules: list[str]) -> str | None:
        """The URL of the stored page that *url* names: itself, or the page it is a copy of
        (dropped as one, or predicted by one of *rules*, the site's confirmed ones)."""
        assert self.index is not None and self.store is not None
        if self.index.find(url):
            return url
        copy = self.store.copy_of(url)
        if copy is not None and (not copy[1] or copy[1] in rules) and self.index.find(copy[0]):
            return copy[0]
        return None

    def _in_flight(self, url: str) -> bool:
        asked = self._requested.get(url)
        return asked is not None and time.monotonic() - asked < IN_FLIGHT_FOR

    def _predicted_copy(
        self, request: Request, where: str, used: tuple[str, ...], target: str
    ) -> None:
        """*used* maps *request* to the stored *target*: skip it, or download it as the
        1 in ``SIMHASH_SKIP_CHECK_EVERY`` that checks the rule."""
        seen = self._predicted.get((where, used), 0) + 1
        self._predicted[where, used] = seen
        if seen % self.config.skip_check_every == 0:
            request.meta[META_CHECKED] = "+".join(used)
            self._inc("skipped/checked")
            return
        rule = "+".join(used)
        self._requested.pop(request.url, None)  # not on its way: no request waits for it
        assert self.store is not None
        self.store.record_skip(SkippedRequest(request.url, where, rule, target, time.time()))
        self._inc("skipped/predicted")
        if (where, used) not in self._logged:
            self._logged.add((where, used))
            logger.info(
                "Skipped %s: the URL rule %s of %s maps it to %s, stored; this rule's "
                "other skips on this site are only counted (simhash/skipped/predicted; "
                "scrapy-simhash rules --skipped lists them)",
                request.url,
                rule,
                where,
                target,
            )
        raise IgnoreRequest(f"predicted copy of {target} (URL rule {rule})")

    def _confirmed(self, where: str) -> list[str]:
        """The confirmed rules of the site *where*, read again every RULES_FRESH_FOR s."""
        cached = self._rules.get(where)
        now = time.monotonic()
        if cached is not None and now - cached[1] < RULES_FRESH_FOR:
            return cached[0]
        assert self.store is not None
        evidence = self.store.rules(where)
        rules = [
            rule
            for (_, rule), seen in sorted(evidence.items(), key=lambda kv: -kv[1].observations)
            if confirmed(seen, self.config.skip_min_copies)
        ]
        self._rules[where] = (rules, now)
        return rules

    def _inc(self, name: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"simhash/{name}")

    def __repr__(self) -> str:
        return f"SkipPredictedMiddleware({redact(self.index_uri)})"
