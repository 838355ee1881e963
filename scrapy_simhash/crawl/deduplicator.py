"""What the item pipeline and the spider middleware share in a crawl.

:class:`CrawlDeduplicator` wraps a :class:`~scrapy_simhash.dedup.Deduplicator` with the
Scrapy side of a verdict: it opens the index when the spider opens, counts stats under one
prefix, writes every drop to the index's audit log, marks duplicates in flag-only mode,
and turns index failures into a counted pass-through or a closed spider
(``SIMHASH_ON_INDEX_ERROR``). The pipeline and the middleware differ only in where the text
comes from and what "drop" means (an item, or a response's whole output).

Beside it: the settings read and a setup that cannot work in :mod:`~.setup`, the CPU work
(in a thread, or with ``SIMHASH_WORKERS`` in worker processes) in :mod:`~.analyser`, what
a verdict means to the crawl in :mod:`~.outcomes`.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Any

from scrapy.utils.defer import deferred_from_coro

from ..analysis.speedups import accelerated
from ..dedup import Analysis, Deduplicator, Verdict, analyse_text, fields_text
from ..exceptions import SimhashError, SimhashIndexError
from ..extract.extractors import extractor_version
from ..index.analysed import Analysed
from ..index.base import NearDuplicateIndex
from ..index.journal import HEARTBEAT, Journal, journal_for
from ..index.journal_keeper import JournalKeeper
from ..index.skip_rules import learn, skip_rules_for
from ..settings import SimhashSettings
from .analyser import CrawlAnalyser
from .indexthread import IndexThread
from .outcomes import Outcomes
from .setup import crawl_settings, settings_from_crawler, setup_failed

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from .workers import WorkerPool

__all__ = ["CrawlDeduplicator", "crawl_settings", "settings_from_crawler", "setup_failed"]

logger = logging.getLogger(__name__)


class CrawlDeduplicator:
    """One index and its verdicts for one crawl component (pipeline or middleware).

    Stats are counted under *stats_prefix* (``simhash`` for the pipeline,
    ``simhash/middleware`` for the middleware).
    """

    def __init__(
        self,
        config: SimhashSettings,
        index_uri: str,
        *,
        stats: StatsCollector | None = None,
        crawler: Crawler | None = None,
        stats_prefix: str = "simhash",
    ) -> None:
        self.config = config
        self.index_uri = index_uri
        self.stats = stats
        self.crawler = crawler
        self.stats_prefix = stats_prefix
        self.dedup: Deduplicator | None = None
        #: What each verdict means to the crawl: its stats, words and marks.
        self.outcomes = Outcomes(config, stats, stats_prefix)
        #: The thread that runs every check on the index, while open.
        self.index_thread: IndexThread | None = None
        #: Analyses the pages off the reactor thread (in the worker processes, while open).
        self.analyser = CrawlAnalyser(config, self.outcomes, self.analyse_here)
        #: The crawl's journal of pages not yet in the output, while open (pipeline).
        self.journal: Journal | None = None
        #: Renews the journal's lease, settles its keys and forgets the pages of dead
        #: crawls in a thread of its own, while the journal is open.
        self.journal_keeper: JournalKeeper | None = None
        #: Pages of dead crawls forgotten as this crawl began (see :meth:`open`).
        self.forgotten_at_start = 0
        self._open_index: NearDuplicateIndex | None = None
        self._extractor_version: str | None = None
        #: URL-rule lessons that failed in the index thread, not yet counted.
        self._rule_errors: list[SimhashIndexError] = []

    def open_index(self) -> Deduplicator:
        """Open the index, once; an index that cannot be opened as configured (a scheme,
        file, permission, server or parameter problem) is logged in one line and raised
        as :class:`~scrapy_simhash.exceptions.SetupFailed`, which stops the crawl before
        it starts."""
        if self.dedup is not None:
            return self.dedup
        config = self.config
        try:
            dedup = config.open_deduplicator(self.index_uri)
        except SimhashError as e:
            raise setup_failed(e) from e
        index = dedup.index
        try:
            # An explicit reset, logged: every page is forgotten, the audit log is kept.
            forgotten = index.expire(math.inf) if config.reset else None
            if config.reset:  # requests skipped as copies of pages now forgotten
                skip_rules_for(index).forget_url()
            stored = len(index)
        except SimhashError as e:
            index.close()
            raise setup_failed(e) from e
        if forgotten is not None:
            logger.warning(
                "SIMHASH_RESET: the index %s forgot the %d pages it held; every page of "
                "this crawl is new to it",
                index.location,
                forgotten,
            )
        self.dedup = dedup
        logger.info(
            "Simhash index %s: %d pages stored, max distance %d%s, %d tables%s",
            index.location,
            stored,
            index.max_distance,
            ""
            if index.max_distance == index.plan.max_distance
            else f" (the index is built for {index.plan.max_distance})",
            index.plan.table_count,
            " (flag-only: duplicates are kept and marked)" if config.flag_only else "",
        )
        logger.info(
            "Simhash analysis: %s; Chinese words by %s",
            "C accelerator in use"
            if accelerated()
            else "C accelerator not in use (not built, or SCRAPY_SIMHASH_PURE_PYTHON set): "
            "pure Python, the same fingerprints, slower",
            "rjieba"
            if config.fingerprinter.term_extractor.segmenter.backend == "rjieba"
            else "jieba (pip install 'scrapy-simhash[fast]' for rjieba: the same words, faster)",
        )
        return self.dedup

    def open(self, *, journal: bool = False) -> Deduplicator:
        """Open the index (see :meth:`open_index`), start the index's thread and the
        worker processes.

        *journal*: keep the crawl's journal of pages not yet in the output (see
        :mod:`scrapy_simhash.index.journal`); first forget the pages of dead crawls."""
        dedup = self.open_index()
        if journal and hasattr(dedup.index, "journal"):
            try:
                self.journal = journal_for(dedup.index)
                self.forgotten_at_start = self.journal.begin()
                self._forgotten(self.forgotten_at_start)
                # Beside the index's thread: neither the lease, the settlements nor the
                # recovery of dead crawls wait behind queued checks.
                self.journal_keeper = JournalKeeper(self.journal, HEARTBEAT, self._keeper_failed)
            except SimhashError as e:
                self.dedup = None
                dedup.index.close()
                raise setup_failed(e) from e
        elif journal:  # a backend of another package's
            logger.info(
                "Simhash index %s keeps no crawl journal: a crawl killed before its "
                "feed is written can leave pages that no feed holds",
                dedup.index.location,
            )
        self.index_thread = IndexThread()
        self.analyser.start()
        return dedup

    def close(self, *, keep_index: bool = False) -> None:
        """Stop the workers and the index's thread, then close the index, unless
        *keep_index* (:meth:`close_index` then does it)."""
        dedup, self.dedup = self.dedup, None
        index_thread, self.index_thread = self.index_thread, None
        if dedup is not None:
            self._open_index = dedup.index
        try:
            self.analyser.close()
        finally:
            try:
                if index_thread is not None:
                    index_thread.close()
            finally:
                if not keep_index:
                    self.close_index()

    def close_index(self, confirmed: list[str] | None = None) -> None:
        """End the crawl's journal (*confirmed*: keys whose items are in the output; the
        pages of the others are forgotten), then close the index."""
        index, self._open_index = self._open_index, None
        journal, self.journal = self.journal, None
        keeper, self.journal_keeper = self.journal_keeper, None
        # Before the journal ends: no renewal recreates its record.
        unsettled = keeper.stop() if keeper is not None else []
        if keeper is not None:
            self._forgotten(keeper.take_forgotten())
        if index is None:
            return
        try:
            if journal is not None:
                journal.settle(unsettled + (confirmed or []))
                forgotten = journal.end()
                if forgotten:
                    self.inc("journal/not_output", forgotten)
                    logger.warning(
                        "Forgot %d pages stored in the index whose items did not reach the "
                        "output (dropped or failed in a later pipeline, or a feed not "
                        "stored): they are checked as new when seen again",
                        forgotten,
                    )
        except SimhashError as e:
            self.inc("errors/journal")
            logger.error("Could not end the crawl's journal in the index: %s", e)
        finally:
            try:
                if journal is not None:
                    journal.close()
            finally:
                index.close()

    def _keeper_failed(self, doing: str, error: BaseException) -> None:
        """In the journal keeper's thread: a renewal, a settlement or a recovery failed;
        it is tried again (the keys stay pending meanwhile: at worst their pages are
        forgotten)."""
        self.inc("errors/journal")
        logger.error("Could not %s in the index: %s", doing, error)

    def _forgotten(self, count: int) -> None:
        if count:
            self.inc("journal/forgotten", count)
            logger.warning(
                "Forgot %d pages that a crawl which stopped before they reached its output "
                "had stored in the index: they are checked as new when seen again",
                count,
            )

    def settle(self, confirmed: list[str]) -> None:
        """Hand *confirmed* to :attr:`journal_keeper`, which removes them from the journal
        in its thread, beside the index's; count and log the pages of dead crawls it
        forgot since (at its heartbeats)."""
        keeper = self.journal_keeper
        if keeper is None:
            return  # opened without a journal, or closed: its end settles
        keeper.settle(confirmed)
        self._forgotten(keeper.take_forgotten())

    @property
    def workers(self) -> WorkerPool | None:
        """The worker processes (``SIMHASH_WORKERS``), while open."""
        return self.analyser.workers

    async def analyse(self, values: list[Any], key: str) -> Analysis | None:
        """Analyse the text of *values* off the reactor thread (see
        :meth:`.CrawlAnalyser.analyse`); ``None``: let the page through unchecked."""
        return await self.analyser.analyse(values, key)

    def analyse_here(self, values: list[Any]) -> Analysis:
        """Analyse the text of *values* in this thread."""
        if self.dedup is None:
            raise RuntimeError("CrawlDeduplicator.analyse called before open")
        return analyse_text(self.dedup, fields_text(values, self.config.html_extractor))

    def analysed(self, analysis: Analysis, fields: tuple[str, ...]) -> Analysed:
        """The record of how *analysis* was read (*fields*: see
        :attr:`~scrapy_simhash.index.analysed.Analysed.fields`), stored with its page."""
        extractor = self.config.extractor_name
        if self._extractor_version is None:
            self._extractor_version = extractor_version(extractor)
        return Analysed(fields, extractor, self._extractor_version, analysis.text_hash)

    async def decide(
        self, analysis: Analysis, key: str, fields: tuple[str, ...] = ()
    ) -> Verdict | None:
        """Check-and-insert *analysis* under *key* with the record of how it was read
        from *fields* (see :meth:`analysed`), count it, and log a duplicate to the
        audit log (unless flag-only). Return ``None`` when the index failed (handled as
        ``SIMHASH_ON_INDEX_ERROR`` says: the caller lets the item or response through).

        The index is used from its own thread, one check at a time in the order they come
        (:mod:`scrapy_simhash.crawl.indexthread`): a check that waits for another process's lock
        holds up its item, never the reactor."""
        if self.dedup is None or self.index_thread is None:
            raise RuntimeError("CrawlDeduplicator.decide called before open")
        try:
            verdict, audit_error = await self.index_thread.run(
                self._check_and_record, self.dedup, analysis, key, fields
            )
        except SimhashIndexError as e:
            self.index_failed(key, e)
            return None
        if audit_error is not None:
            # The verdict stands; only its audit entry is missing.
            self.inc("errors/audit_log")
            logger.error("Could not write the drop of %s to the audit log: %s", key, audit_error)
        while self._rule_errors:
            self._rule_errors.pop()
            self.inc("errors/url_rules")
        self.outcomes.count(verdict, key)
        return verdict

    def _check_and_record(
        self, dedup: Deduplicator, analysis: Analysis, key: str, fields: tuple[str, ...]
    ) -> tuple[Verdict, SimhashIndexError | None]:
        """In the index thread: the check-and-insert, then the audit entry of a drop.
        Stats are counted by the caller, on the reactor thread."""
        if self.journal is not None and analysis.kind != "empty":
            self.journal.pending(key)  # before the check that may store the page
        verdict = dedup.check(analysis, key, analysed=self.analysed(analysis, fields))
        if self.config.skip_predicted and analysis.kind != "empty":
            self._learn(dedup, verdict, key)
        if verdict.match is not None and self.outcomes.drops(verdict):
            try:
                dedup.index.record_drop(
                    key,
                    verdict.match,
                    exact=analysis.kind == "short",
                    unchanged=verdict.status == "unchanged",
                )
            except SimhashIndexError as e:
                return verdict, e
        return verdict, None

    def _learn(self, dedup: Deduplicator, verdict: Verdict, key: str) -> None:
        """In the index thread: what the page of *verdict* teaches the site's URL rules
        (``SIMHASH_SKIP_PREDICTED``). A failure costs the lesson, never the verdict."""
        if verdict.status == "duplicate" and verdict.match is not None:
            copy_of: str | None = verdict.match.key
        elif verdict.status in ("new", "changed"):
            copy_of = None
        else:
            return  # a re-crawl of the same URL teaches nothing about URL variants
        try:
            learn(dedup.index, key, copy_of)
        except SimhashIndexError as e:
            logger.error("Could not record what %s teaches the URL rules: %s", key, e)
            self._rule_errors.append(e)  # counted by decide, on the reactor thread

    def index_failed(self, key: str, error: SimhashIndexError) -> None:
        self.inc("errors/index")
        crawler = self.crawler
        if self.config.on_index_error == "close" and crawler and crawler.engine:
            logger.error("Simhash index failed on %s: %s; closing the spider", key, error)
            self._closing = deferred_from_coro(
                crawler.engine.close_spider_async(reason="simhash_index_error")
            )
        else:
            logger.error(
                "Simhash index failed on %s: %s; let through unchecked "
                "(SIMHASH_ON_INDEX_ERROR='keep')",
                key,
                error,
            )

    def inc(self, name: str, count: int = 1) -> None:
        self.outcomes.inc(name, count)
