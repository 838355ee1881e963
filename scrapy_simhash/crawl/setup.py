"""A crawl's setup: its ``SIMHASH_*`` settings read and checked when a component is built,
and a setting or an index that cannot work stopping the crawl before it starts.

Apart from :mod:`~.deduplicator`: every crawl component (the pipeline, the spider
middleware, the downloader middleware that skips predicted copies) reads its settings
and fails its setup the same way, whether or not it checks pages.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured
from scrapy.utils.project import data_path

from ..exceptions import ConfigurationError, SetupFailed, SimhashError
from ..settings import (
    SimhashSettings,
    index_uri,
    setting_bool,
    unknown_settings,
    with_spider_arguments,
)

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

#: The logger of :mod:`~.deduplicator`: a crawl's setup lines keep the one name users
#: filter on.
logger = logging.getLogger("scrapy_simhash.crawl.deduplicator")


def settings_from_crawler(crawler: Crawler) -> tuple[SimhashSettings, str]:
    """The validated ``SIMHASH_*`` settings of *crawler* and its index URI; raises
    ``NotConfigured`` when ``SIMHASH_ENABLED`` is False and
    :class:`~scrapy_simhash.exceptions.ConfigurationError` for a value that cannot work.
    A ``SIMHASH_*`` name that is no setting (a typo) is logged as a warning."""
    if not setting_bool("SIMHASH_ENABLED", crawler.settings.get("SIMHASH_ENABLED", True)):
        raise NotConfigured("SIMHASH_ENABLED is False")
    for message in unknown_settings(crawler.settings):
        logger.warning("%s", message)
    settings = with_spider_arguments(crawler.settings, getattr(crawler, "spider", None))
    config = SimhashSettings.from_settings(settings)
    return config, index_uri(config.index_uri, data_path, create=True)


def crawl_settings(crawler: Crawler) -> tuple[SimhashSettings, str]:
    """:func:`settings_from_crawler` for a component's ``from_crawler``: a value that
    cannot work stops the crawl before it starts (:func:`setup_failed`)."""
    try:
        return settings_from_crawler(crawler)
    except ConfigurationError as e:
        raise setup_failed(e) from e


def setup_failed(error: SimhashError) -> SetupFailed:
    """Log *error* (a setting or an index that cannot work) in one ERROR line and return
    the :class:`~scrapy_simhash.exceptions.SetupFailed` to raise from ``from_crawler`` or
    ``open_spider``.

    Raised there, before the spider opens, it makes ``scrapy crawl`` exit with status 1
    and keeps Scrapy from opening the feed storage, so an existing ``-O`` file is left as
    it was. (``CloseSpider`` would stop the crawl too, but Scrapy then opens the feeds and
    exits 0.) Scrapy hands the exception to asyncio, which would print it again as "Task
    exception was never retrieved" with a traceback: that record is filtered out, as the
    reason is already in the log."""
    logger.error("%s. The crawl is stopped before it starts.", str(error).rstrip("."))
    asyncio_logger = logging.getLogger("asyncio")
    if _ALREADY_LOGGED not in asyncio_logger.filters:
        asyncio_logger.addFilter(_ALREADY_LOGGED)
    failed = SetupFailed(str(error))
    failed.__cause__ = error
    return failed


class _AlreadyLogged(logging.Filter):
    """Drops asyncio's report of a :class:`SetupFailed` nobody awaited: its reason was
    logged when it was raised."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], SetupFailed))


_ALREADY_LOGGED = _AlreadyLogged()
