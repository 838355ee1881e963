"""What a verdict means to a crawl: the action its page gets (keep, drop, flag), the
stats it counts, the words of its log line, and the fields it marks in flag-only mode.
The pipeline and the spider middleware read a verdict the same way, through the
:class:`Outcomes` of their :class:`~.deduplicator.CrawlDeduplicator`."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, Literal

from itemadapter import ItemAdapter

from ..dedup import Verdict
from ..extract.extractors import FALLBACK_REASONS
from ..index.base import Match
from ..settings import SimhashSettings
from ..sketch import share_bucket

if TYPE_CHECKING:
    from scrapy.statscollectors import StatsCollector

#: The crawl's verdict lines keep the one logger name users filter on.
logger = logging.getLogger("scrapy_simhash.crawl.deduplicator")

#: How many pages whose main text was not found are logged in one crawl (all are counted).
FALLBACKS_LOGGED = 5

#: What a crawl component does with a page (see :meth:`Outcomes.action`).
Action = Literal["keep", "unchanged", "flag", "drop"]


def held_text(share: float | None, own_text: bool = False) -> str:
    """The drop line's words on the share of the dropped page's text the kept page holds
    (*own_text*: of its own text, its site's template aside)."""
    if share is None:
        return ""
    if own_text:
        return f"; {share:.0%} of its own text is in the kept page, its site's template aside"
    return f"; {share:.0%} of its text is in the kept page"


class Outcomes:
    """The verdicts of one crawl component, counted under *stats_prefix*."""

    def __init__(
        self,
        config: SimhashSettings,
        stats: StatsCollector | None = None,
        stats_prefix: str = "simhash",
    ) -> None:
        self.config = config
        self.stats = stats
        self.stats_prefix = stats_prefix
        #: When this crawl began: a page stored under its own key since then was seen in
        #: this crawl (twice, or by another process on the same index), not unchanged
        #: since the last crawl.
        self.started = time.time()

    def action(self, verdict: Verdict | None) -> Action:
        """What the pipeline and the middleware do with the page of *verdict*:

        * ``"keep"``: no match (or not checked); also a page unchanged since the last crawl
          that is kept (``SIMHASH_DROP_UNCHANGED = False``, or flag-only);
        * ``"unchanged"``: dropped as unchanged since the last crawl;
        * ``"flag"``: a near-duplicate kept and marked (``SIMHASH_FLAG_ONLY``);
        * ``"drop"``: a near-duplicate, dropped.
        """
        if verdict is None or verdict.match is None:
            return "keep"
        if verdict.status == "unchanged":
            return "unchanged" if self.drops(verdict) else "keep"
        return "flag" if self.config.flag_only else "drop"

    def drops(self, verdict: Verdict) -> bool:
        """Whether the page of *verdict* is dropped: a duplicate unless flag-only; a page
        unchanged since the last crawl also when ``SIMHASH_DROP_UNCHANGED``."""
        if self.config.flag_only:
            return False
        if verdict.status == "unchanged":
            return self.config.drop_unchanged
        return verdict.status == "duplicate"

    def count(self, verdict: Verdict, key: str = "") -> None:
        analysis = verdict.analysis
        self.inc(analysis.kind)
        if analysis.truncated:
            self.inc("truncated")
        if analysis.fallback:
            self.extraction_fell_back(analysis.fallback, key)
        if verdict.template:
            self.inc("template/own_text")
        if verdict.status == "unchanged" and self.seen_in_this_crawl(verdict):
            self.inc("repeated")
        elif verdict.status in ("changed", "unchanged"):
            self.inc(verdict.status)
        if verdict.status != "duplicate":
            if not self.drops(verdict):
                self.inc("kept")
            if verdict.refused is not None:
                # Looked alike, but dropping it would lose text found nowhere else.
                self.inc("kept/own_text")
                if verdict.refused.contained_in_page is not None:
                    self.inc("kept/contains")
                logger.debug("%s", self.describe_refused(key, verdict.refused))
            return
        self.inc("flagged" if self.config.flag_only else "dropped")
        self.inc(f"{'flagged' if self.config.flag_only else 'dropped'}/{verdict.test}")
        if verdict.test == "near":
            self.inc(f"distance/{verdict.match.distance}")
        if verdict.match.share is not None:
            self.inc(f"share/{share_bucket(verdict.match.share)}")

    def seen_in_this_crawl(self, verdict: Verdict) -> bool:
        """Whether the page of an ``unchanged`` *verdict* was stored since this crawl
        began (a URL fetched twice), rather than by an earlier crawl."""
        return verdict.match is not None and verdict.match.added_at >= self.started

    def describe(self, key: str, verdict: Verdict) -> str:
        match = verdict.match
        assert match is not None
        if verdict.status == "unchanged":
            how = "same text" if verdict.analysis.kind == "short" else f"distance {match.distance}"
            if self.seen_in_this_crawl(verdict):
                return f"{key} was already seen in this crawl ({how})"
            return f"{key} is unchanged since the last crawl ({how})"
        if verdict.analysis.kind == "short":
            return f"{key} has the same text as {match.key}"
        held = held_text(match.share, match.own_text)
        if match.contained:
            return (
                f"{key} is contained in {match.key} ({len(match.shared)} long paragraphs shared, "
                f"distance {match.distance}{held})"
            )
        return f"{key} is a near-duplicate of {match.key} (distance {match.distance}{held})"

    @staticmethod
    def describe_refused(key: str, refused: Match) -> str:
        how = (
            f"{len(refused.shared)} long paragraphs shared"
            if refused.contained
            else f"distance {refused.distance}"
        )
        share = "an unknown share" if refused.share is None else f"{refused.share:.0%}"
        told = f"Kept {key}: it looks like {refused.key} ({how}), which holds {share} of its text"
        if refused.contained_in_page is not None:
            told += f"; it holds {refused.contained_in_page:.0%} of that page's and adds its own"
        return told

    def contained_key(self, verdict: Verdict | None) -> str | None:
        """Flag-only: the stored page that the kept page of *verdict* contains (it holds
        that page's text and adds its own), else ``None``."""
        if not self.config.flag_only or verdict is None or verdict.refused is None:
            return None
        return verdict.refused.key if verdict.refused.contained_in_page is not None else None

    def mark_contained(self, item: Any, verdict: Verdict | None) -> None:
        """Flag-only: set ``SIMHASH_CONTAINS_FIELD`` of a kept *item* to the stored page it
        contains, where the item has that field (counted in ``contains_field_missing``
        where it has not)."""
        contained = self.contained_key(verdict)
        if contained is None:
            return
        try:
            ItemAdapter(item)[self.config.contains_field] = contained
        except (KeyError, AttributeError, TypeError):
            self.inc("contains_field_missing")

    def mark(self, item: Any, verdict: Verdict) -> bool:
        """Flag-only mode: set ``SIMHASH_FLAG_FIELD`` of *item* to the kept page's key.
        Return False (and count ``flag_field_missing``) when the item has no such field."""
        assert verdict.match is not None
        try:
            ItemAdapter(item)[self.config.flag_field] = verdict.match.key
        except (KeyError, AttributeError, TypeError):
            self.inc("flag_field_missing")
            return False
        return True

    def extraction_fell_back(self, reason: str, key: str) -> None:
        """Count a page whose main text could not be found, and log the first few: many
        of them mean SIMHASH_EXTRACTOR does not suit the site."""
        self.inc("extraction/fallback")
        if self.stats is None:
            return
        seen = self.stats.get_value(f"{self.stats_prefix}/extraction/fallback", 0)
        if seen <= FALLBACKS_LOGGED:
            logger.info(
                "No main text found in %s (%s): a wider text was fingerprinted%s",
                key,
                FALLBACK_REASONS.get(reason, reason),
                f"; more such pages are only counted ({self.stats_prefix}/extraction/fallback)"
                if seen == FALLBACKS_LOGGED
                else "",
            )

    def warn_if_all_unchanged(self) -> None:
        """Once, at the end of a crawl: a WARNING when every page it checked was dropped as
        unchanged since an earlier crawl, so that an empty feed is not a mystery."""
        if self.stats is None or not self.config.drop_unchanged or self.config.flag_only:
            return
        value = self.stats.get_value
        unchanged = value(f"{self.stats_prefix}/unchanged", 0)
        if not unchanged or value(f"{self.stats_prefix}/kept", 0):
            return
        logger.warning(
            "All %d pages of this crawl were unchanged since an earlier crawl and were "
            "dropped (%s/unchanged): the output holds none of them. To export them again, "
            "crawl with -a simhash_reset=1 (the index forgets its pages) or "
            "-a simhash_drop_unchanged=0 (unchanged pages are kept)",
            unchanged,
            self.stats_prefix,
        )

    def inc(self, name: str, count: int = 1) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"{self.stats_prefix}/{name}", count)
