"""A log formatter that logs near-duplicate drops in one line, without the whole item.

Scrapy's default formatter logs every dropped item in full; for a filter that may drop
thousands of pages (each with its HTML) that floods the log. Other drops are logged as
Scrapy logs them. The add-on installs it; by hand::

    LOG_FORMATTER = "scrapy_simhash.LogFormatter"
"""

from __future__ import annotations

from typing import Any

from scrapy import logformatter

from .near_duplicate import NearDuplicate


class LogFormatter(logformatter.LogFormatter):
    def dropped(self, item: Any, exception: BaseException, response: Any, spider: Any):
        entry = super().dropped(item, exception, response, spider)
        if isinstance(exception, NearDuplicate):
            entry["msg"] = "Dropped: %(exception)s"
            entry["args"] = {"exception": exception}
        return entry
