"""Where a crawl analyses its pages: never on the reactor thread; in the worker processes
of ``SIMHASH_WORKERS`` while they work, else in a thread.

Apart from :mod:`~.deduplicator`, which checks what is analysed here: the worker pool as
the crawl uses it. A pool that cannot start leaves the pages to a thread; a worker that
hangs over a page lets that page through unchecked; a worker that dies has its page
analysed in a thread, and a pool whose workers keep dying is given up for one. The pool
itself (:mod:`~.workers`) runs without Scrapy.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from scrapy.utils.asyncio import is_asyncio_available, run_in_thread

from ..dedup import Analysis
from ..extract.fields import plain_value
from ..settings import SimhashSettings
from .outcomes import Outcomes
from .workers import WorkerDied, WorkerHung, WorkerPool

#: The logger of :mod:`~.deduplicator`, whose messages these were before the module was
#: split: a crawl's lines keep the one name users filter on.
logger = logging.getLogger("scrapy_simhash.crawl.deduplicator")


class CrawlAnalyser:
    """The analysis of one crawl component's pages, off the reactor thread.

    *here* analyses in the calling thread (run in a thread of its own, or where the
    worker processes failed); failures of the workers are counted in *outcomes*.
    """

    def __init__(
        self,
        config: SimhashSettings,
        outcomes: Outcomes,
        here: Callable[[list[Any]], Analysis],
    ) -> None:
        self.config = config
        self.outcomes = outcomes
        self.here = here
        #: What a worker process analyses pages with.
        self.params = config.analysis_params
        #: The worker processes (``SIMHASH_WORKERS``), while open.
        self.workers: WorkerPool | None = None

    def start(self) -> None:
        """Start the worker processes, if ``SIMHASH_WORKERS`` asks for any."""
        if self.config.workers:
            self.workers = self._start_workers(self.config.workers)

    def close(self) -> None:
        """Stop the worker processes, if any."""
        workers, self.workers = self.workers, None
        if workers is not None:
            workers.close()

    def _start_workers(self, count: int) -> WorkerPool | None:
        """The worker pool, or ``None`` (with a warning) where the pages are to be
        fingerprinted in a thread instead."""
        if not (is_asyncio_available() and os.name == "posix"):
            problem = (
                f"SIMHASH_WORKERS={count} needs Scrapy's asyncio reactor (the default "
                "TWISTED_REACTOR) on a POSIX system"
            )
        else:
            try:
                return WorkerPool(self.params, count, timeout=self.config.worker_timeout)
            except OSError as e:  # no interpreter to start, too many processes...
                problem = f"Could not start SIMHASH_WORKERS={count} worker processes ({e})"
        logger.warning("%s; pages are fingerprinted in a thread instead", problem)
        return None

    async def analyse(self, values: list[Any], key: str) -> Analysis | None:
        """Analyse the text of *values* (item fields, or a response's text; HTML reduced
        by ``SIMHASH_EXTRACTOR``) off the reactor thread: in a worker process if there are
        any. ``None``: a worker process took longer than ``SIMHASH_WORKER_TIMEOUT`` over
        this page (*key*); it was killed, and the caller lets the page through unchecked
        (counted here, and logged)."""
        if self.workers is None:
            return await run_in_thread(self.here, values)
        try:
            return await self.workers.analyse([plain_value(v) for v in values])
        except WorkerHung as e:
            # Not analysed again here: what hung a worker could hang the crawl's thread,
            # which nothing can stop. The pool starts a new worker for the next pages.
            self.outcomes.inc("errors/worker_timeout")
            logger.error(
                "%s: %s; let through unchecked. If pages really take that long, raise "
                "SIMHASH_WORKER_TIMEOUT (now %g s)",
                key,
                e,
                self.config.worker_timeout,
            )
            return None
        except (WorkerDied, OSError) as e:  # OSError: a new worker could not start
            # A worker died (killed, out of memory): this page is analysed here, and the
            # pool starts a new worker for the next ones, so that one crash does not leave
            # pages unchecked. Workers that keep dying are given up for a thread.
            self.outcomes.inc("errors/workers")
            workers = self.workers
            if workers is not None and workers.exhausted:
                logger.error(
                    "SIMHASH_WORKERS processes died %d times (%s); fingerprinting in a "
                    "thread from now on",
                    workers.restarts + 1,
                    e,
                )
                self.workers = None
                workers.close(timeout=1.0)
            return await run_in_thread(self.here, values)
