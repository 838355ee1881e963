"""The Scrapy add-on: ``ADDONS = {"scrapy_simhash.Addon": 100}`` switches the filter on."""

from __future__ import annotations

from typing import Any

from .logformatter import LogFormatter
from .pipeline import SimhashDedupPipeline
from .skip import SkipPredictedMiddleware

#: Late in the pipeline chain, so that the other pipelines have filled and cleaned the item.
PIPELINE_ORDER = 800
#: Early in the downloader middlewares: a request skipped as a predicted copy costs nothing
#: further (no cookies, no retries, no cache lookups).
SKIP_ORDER = 50


class Addon:
    """Enables :class:`~scrapy_simhash.SimhashDedupPipeline` (unless already in
    ``ITEM_PIPELINES``), the one-line drop log (unless ``LOG_FORMATTER`` was changed) and
    the downloader middleware that skips predicted copies (which does nothing unless
    ``SIMHASH_SKIP_PREDICTED``)."""

    def __repr__(self) -> str:
        # Scrapy lists enabled add-ons by their repr: the name users put in ADDONS.
        return "scrapy_simhash.Addon"

    def update_settings(self, settings: Any) -> None:
        settings.setdefault_in_component_priority_dict(
            "ITEM_PIPELINES", SimhashDedupPipeline, PIPELINE_ORDER
        )
        settings.setdefault_in_component_priority_dict(
            "DOWNLOADER_MIDDLEWARES", SkipPredictedMiddleware, SKIP_ORDER
        )
        if settings.getpriority("LOG_FORMATTER") == 0:  # still Scrapy's default
            settings.set("LOG_FORMATTER", LogFormatter, "addon")
