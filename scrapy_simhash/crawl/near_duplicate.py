"""The exception that drops a near-duplicate item, apart from the pipeline so that the log
formatter and the middleware can name it without importing the pipeline."""

from __future__ import annotations

import logging

from scrapy.exceptions import DropItem

from ..dedup import Verdict

__all__ = ["NearDuplicate", "Unchanged"]


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
