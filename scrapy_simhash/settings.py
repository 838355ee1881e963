"""The ``SIMHASH_*`` settings: names, defaults, and one validated, frozen config object.

No Scrapy import: :meth:`SimhashSettings.from_settings` takes anything with Scrapy's
``Settings`` getters (``get``, ``getbool``, ``getint``, ``getlist``); how one value is
read as its type is in :mod:`~scrapy_simhash.setting_values`.
"""

from __future__ import annotations

import difflib
import logging
from collections import ChainMap
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any

from .analysis.fingerprint import Fingerprinter, seed_from_secret
from .anchors import DEFAULT_ANCHORS
from .dedup import AnalysisParams, Deduplicator
from .exceptions import ConfigurationError
from .extract.extractors import Extractor, get_extractor
from .features import DEFAULT_TOP_N
from .index import open_index
from .index.base import NearDuplicateIndex
from .index.blocks import FINGERPRINT_BITS, BlockPlan, default_blocks
from .index.uri import DEFAULT_INDEX_FILE, index_uri, redact
from .setting_values import SettingReader, log_level, media_types, setting_bool, setting_list
from .sketch import DEFAULT_MIN_SHARE

__all__ = [
    "DEFAULTS",
    "DEFAULT_INDEX_FILE",
    "ON_INDEX_ERROR_CHOICES",
    "SPIDER_ARGUMENTS",
    "SimhashSettings",
    "index_uri",
    "setting_bool",
    "setting_list",
    "unknown_settings",
    "with_spider_arguments",
]

#: Every setting with its default, the one table of them (SimhashSettings reads its
#: defaults here); the settings table of docs/usage.md lists the same.
DEFAULTS: dict[str, Any] = {
    "SIMHASH_ENABLED": True,
    "SIMHASH_INDEX_URI": None,
    "SIMHASH_MAX_DISTANCE": 3,
    "SIMHASH_BLOCKS": None,
    "SIMHASH_TEXT_FIELDS": ["title", "content"],
    "SIMHASH_KEY_FIELD": "url",
    "SIMHASH_TOP_N": DEFAULT_TOP_N,
    "SIMHASH_MIN_TERMS": 20,
    "SIMHASH_ANCHORS": True,
    "SIMHASH_MIN_SHARE": DEFAULT_MIN_SHARE,
    "SIMHASH_SITE_TEMPLATES": False,
    "SIMHASH_MAX_TEXT_LENGTH": 2_000_000,
    "SIMHASH_REMOVE_BOILERPLATE": True,
    "SIMHASH_EXTRACTOR": "builtin",
    "SIMHASH_WORKERS": 0,
    "SIMHASH_WORKER_TIMEOUT": 60.0,
    "SIMHASH_SEGMENTER": "auto",
    "SIMHASH_SECRET": None,
    "SIMHASH_DROP_LOG_LEVEL": "INFO",
    "SIMHASH_ON_INDEX_ERROR": "keep",
    "SIMHASH_FLAG_ONLY": False,
    "SIMHASH_DROP_UNCHANGED": True,
    "SIMHASH_RESET": False,
    "SIMHASH_FLAG_FIELD": "simhash_duplicate_of",
    "SIMHASH_CONTAINS_FIELD": "simhash_contains",
    "SIMHASH_MIDDLEWARE_CONTENT_TYPES": ["text/html", "application/xhtml+xml"],
    "SIMHASH_SKIP_PREDICTED": False,
    "SIMHASH_SKIP_MIN_COPIES": 3,
    "SIMHASH_SKIP_CHECK_EVERY": 20,
}

ON_INDEX_ERROR_CHOICES = ("keep", "close")


@dataclass(frozen=True)
class SimhashSettings:
    """Validated values of the ``SIMHASH_*`` settings (defaults: :data:`DEFAULTS`)."""

    index_uri: str | None = DEFAULTS["SIMHASH_INDEX_URI"]
    max_distance: int = DEFAULTS["SIMHASH_MAX_DISTANCE"]
    blocks: int | None = DEFAULTS["SIMHASH_BLOCKS"]
    text_fields: tuple[str, ...] = tuple(DEFAULTS["SIMHASH_TEXT_FIELDS"])
    key_field: str = DEFAULTS["SIMHASH_KEY_FIELD"]
    top_n: int = DEFAULTS["SIMHASH_TOP_N"]
    min_terms: int = DEFAULTS["SIMHASH_MIN_TERMS"]
    #: Paragraph anchors: a page contained in a kept one (or containing it) is a duplicate
    #: too (see :mod:`scrapy_simhash.anchors`); off, pages are matched by distance only.
    anchors: bool = DEFAULTS["SIMHASH_ANCHORS"]
    #: The share of a page's text the kept page must hold for it to be dropped (see
    #: :mod:`scrapy_simhash.sketch`); 0 drops what looks alike without asking.
    min_share: float = DEFAULTS["SIMHASH_MIN_SHARE"]
    #: Learn each site's template from its pages; a page is checked on its own text.
    site_templates: bool = DEFAULTS["SIMHASH_SITE_TEMPLATES"]
    max_text_length: int = DEFAULTS["SIMHASH_MAX_TEXT_LENGTH"]
    remove_boilerplate: bool = DEFAULTS["SIMHASH_REMOVE_BOILERPLATE"]
    #: Main-content extractor for HTML fields: "builtin", "trafilatura" or "none".
    extractor: str = DEFAULTS["SIMHASH_EXTRACTOR"]
    #: 0: fingerprint in a thread; N > 0: in N worker processes (:mod:`.crawl.workers`).
    workers: int = DEFAULTS["SIMHASH_WORKERS"]
    #: Seconds a worker process may take over one page before it is killed.
    worker_timeout: float = DEFAULTS["SIMHASH_WORKER_TIMEOUT"]
    segmenter: str = DEFAULTS["SIMHASH_SEGMENTER"]
    #: 32 hex digits or a passphrase; keys the term hash (never shown in a repr).
    secret: str | None = field(default=DEFAULTS["SIMHASH_SECRET"], repr=False)
    drop_log_level: int = getattr(logging, DEFAULTS["SIMHASH_DROP_LOG_LEVEL"])
    on_index_error: str = DEFAULTS["SIMHASH_ON_INDEX_ERROR"]
    #: Keep duplicates, marked in ``flag_field`` (items) instead of dropped.
    flag_only: bool = DEFAULTS["SIMHASH_FLAG_ONLY"]
    #: Drop a re-crawled page whose text is unchanged since it was stored under its key.
    drop_unchanged: bool = DEFAULTS["SIMHASH_DROP_UNCHANGED"]
    #: Forget every page of the index when the crawl opens it (as DELTAFETCH_RESET).
    reset: bool = DEFAULTS["SIMHASH_RESET"]
    flag_field: str = DEFAULTS["SIMHASH_FLAG_FIELD"]
    #: Flag-only: the item field (and middleware ``response.meta`` key) set to the stored
    #: page a kept page contains (it holds that page's text and adds its own).
    contains_field: str = DEFAULTS["SIMHASH_CONTAINS_FIELD"]
    #: Media types of the responses the middleware fingerprints (``type/*`` allowed).
    middleware_content_types: tuple[str, ...] = tuple(DEFAULTS["SIMHASH_MIDDLEWARE_CONTENT_TYPES"])
    #: Learn each site's URL rules from its drops and skip the requests a confirmed rule
    #: predicts to be copies (:mod:`scrapy_simhash.crawl.skip`).
    skip_predicted: bool = DEFAULTS["SIMHASH_SKIP_PREDICTED"]
    #: Copies a URL rule must have explained, with no distinct page, before it skips.
    skip_min_copies: int = DEFAULTS["SIMHASH_SKIP_MIN_COPIES"]
    #: 1 in this many requests a rule would skip is downloaded and checked all the same.
    skip_check_every: int = DEFAULTS["SIMHASH_SKIP_CHECK_EVERY"]
    #: The 16 bytes derived from *secret* (``None`` without one): what keys the term hash.
    seed: bytes | None = field(init=False, repr=False, compare=False)
    fingerprinter: Fingerprinter = field(init=False, repr=False, compare=False)
    #: The function that reduces an HTML field to its main text.
    html_extractor: Extractor = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._check_plan()
        self._check_fields()
        self._check_bounds()
        self._check_choices()
        try:
            seed = None if self.secret in (None, "") else seed_from_secret(self.secret)
        except ValueError as e:
            raise ConfigurationError(f"SIMHASH_SECRET: {e}") from None
        try:
            fingerprinter = Fingerprinter(top_n=self.top_n, seed=seed, segmenter=self.segmenter)
        except ValueError as e:
            raise ConfigurationError(f"SIMHASH_TOP_N/SIMHASH_SEGMENTER: {e}") from None
        object.__setattr__(self, "seed", seed)
        object.__setattr__(self, "fingerprinter", fingerprinter)
        object.__setattr__(
            self, "html_extractor", get_extractor(self.extractor_name, min_words=self.min_terms)
        )

    def _check_plan(self) -> None:
        """The distance, and the block plan it makes with SIMHASH_BLOCKS."""
        if not 0 <= self.max_distance < FINGERPRINT_BITS // 2:
            raise ConfigurationError(
                f"SIMHASH_MAX_DISTANCE={self.max_distance} must be between 0 and "
                f"{FINGERPRINT_BITS // 2 - 1}; 3 is usual for 64-bit fingerprints"
            )
        blocks = default_blocks(self.max_distance) if self.blocks is None else self.blocks
        try:
            BlockPlan(max_distance=self.max_distance, blocks=blocks)
        except ConfigurationError as e:
            given = (
                f"SIMHASH_BLOCKS={blocks}"
                if self.blocks is not None
                # Not set by the user: say that it is the default, and how to change it.
                else f"the default SIMHASH_BLOCKS (SIMHASH_MAX_DISTANCE + 2 = {blocks})"
            )
            raise ConfigurationError(
                f"{given} with SIMHASH_MAX_DISTANCE={self.max_distance}: {e}"
            ) from None

    def _check_fields(self) -> None:
        """The item fields named: none empty."""
        for name, value in (
            ("SIMHASH_KEY_FIELD", self.key_field),
            ("SIMHASH_FLAG_FIELD", self.flag_field),
            ("SIMHASH_CONTAINS_FIELD", self.contains_field),
        ):
            if not value.strip():
                raise ConfigurationError(f"{name} is empty; name an item field, e.g. 'url'")
        if not self.text_fields:
            raise ConfigurationError(
                "SIMHASH_TEXT_FIELDS is empty; list the item fields that hold the page text, "
                'e.g. ["title", "content"]'
            )

    def _check_bounds(self) -> None:
        """Every number within its bounds."""
        # Upper bounds far above any use, below what would fail on every page (a C
        # integer overflowing) or never end (a timeout of inf).
        for name, value, least, most in (
            ("SIMHASH_TOP_N", self.top_n, 1, 1_000_000),
            ("SIMHASH_MIN_TERMS", self.min_terms, 0, 1_000_000),
            ("SIMHASH_MAX_TEXT_LENGTH", self.max_text_length, 1, 1_000_000_000),
            ("SIMHASH_WORKERS", self.workers, 0, 1024),
        ):
            if not least <= value <= most:
                raise ConfigurationError(f"{name}={value} must be from {least} to {most:,}")
        for name, value in (
            ("SIMHASH_SKIP_MIN_COPIES", self.skip_min_copies),
            ("SIMHASH_SKIP_CHECK_EVERY", self.skip_check_every),
        ):
            if value < 1:
                raise ConfigurationError(f"{name}={value} must be 1 or more")
        if not 0 <= self.min_share <= 1:
            raise ConfigurationError(
                f"SIMHASH_MIN_SHARE={self.min_share} must be from 0 to 1: the share of a "
                "page's text the kept page must hold for it to be dropped (0.8 is usual; 0 "
                "drops what looks alike without checking)"
            )
        if not 0 < self.worker_timeout <= 86_400:
            raise ConfigurationError(
                f"SIMHASH_WORKER_TIMEOUT={self.worker_timeout} must be more than 0 seconds "
                "and at most a day (86400); 60 is usual"
            )

    def _check_choices(self) -> None:
        """What to do on an index error, and the media types the middleware reads."""
        if self.on_index_error not in ON_INDEX_ERROR_CHOICES:
            raise ConfigurationError(
                f"SIMHASH_ON_INDEX_ERROR={self.on_index_error!r} must be 'keep' (let items "
                "through, counted) or 'close' (stop the spider)"
            )
        if not self.middleware_content_types:
            raise ConfigurationError(
                "SIMHASH_MIDDLEWARE_CONTENT_TYPES is empty; list the media types of the "
                'responses to check, e.g. ["text/html"], or disable the middleware'
            )

    def __repr__(self) -> str:
        # The index URI may hold a password: shown redacted, like everywhere else.
        values = {f.name: getattr(self, f.name) for f in fields(self) if f.repr}
        if values["index_uri"]:
            values["index_uri"] = redact(values["index_uri"])
        shown = ", ".join(f"{name}={value!r}" for name, value in values.items())
        return f"{type(self).__name__}({shown})"

    @property
    def analysis_params(self) -> AnalysisParams:
        """These settings as the plain values a worker process analyses pages with."""
        return AnalysisParams(
            top_n=self.top_n,
            seed=self.seed,
            segmenter=self.segmenter,
            extractor=self.extractor_name,
            **self._analysis,
        )

    @property
    def _analysis(self) -> dict[str, Any]:
        """How texts are analysed, as both the deduplicator and worker processes take it."""
        return dict(
            min_terms=self.min_terms,
            max_length=self.max_text_length,
            anchors=self.anchor_count,
            sketch=self.min_share > 0,
            templates=self.site_templates,
        )

    def open_index(self, uri: str, *, create: bool = True) -> NearDuplicateIndex:
        """The index at *uri*, opened (or, with *create*, created) for these settings'
        threshold, block plan and features: an index built otherwise is refused with both
        values shown (:class:`~scrapy_simhash.exceptions.IndexParameterMismatch`)."""
        index = open_index(
            uri,
            max_distance=self.max_distance,
            blocks=self.blocks,
            features=self.fingerprinter.signature,
            create=create,
        )
        index.min_share = self.min_share
        return index

    def deduplicator(self, index: NearDuplicateIndex) -> Deduplicator:
        """A deduplicator on *index* (open, and of these settings' features) that analyses
        texts as these settings say."""
        return Deduplicator(index, self.fingerprinter, **self._analysis)

    def open_deduplicator(self, uri: str, *, create: bool = True) -> Deduplicator:
        """The one way from settings to a working deduplicator: :meth:`open_index`, then
        :meth:`deduplicator` on it (the index is closed again if that fails). The crawl's
        pipeline and middleware and the ``dedup`` command call it."""
        index = self.open_index(uri, create=create)
        try:
            return self.deduplicator(index)
        except BaseException:
            index.close()
            raise

    @property
    def anchor_count(self) -> int:
        """Paragraph anchors per text: the format's count, or 0 when they are off."""
        return DEFAULT_ANCHORS if self.anchors else 0

    @property
    def extractor_name(self) -> str:
        """The extractor in use: SIMHASH_REMOVE_BOILERPLATE=False turns "builtin" into
        "none" (all visible text)."""
        if self.extractor == "builtin" and not self.remove_boilerplate:
            return "none"
        return self.extractor

    @classmethod
    def from_settings(cls, settings: Any) -> SimhashSettings:
        """Read and check every ``SIMHASH_*`` setting of *settings* (anything with
        ``get``): a value of the wrong type is a :class:`ConfigurationError` naming the
        setting, never a silent fallback (see :mod:`~scrapy_simhash.setting_values`)."""
        read = SettingReader(settings, DEFAULTS)
        blocks = read.get("SIMHASH_BLOCKS")
        return cls(
            index_uri=read.getstr("SIMHASH_INDEX_URI", optional=True),
            max_distance=read.getint("SIMHASH_MAX_DISTANCE"),
            blocks=None if blocks in (None, "") else read.getint("SIMHASH_BLOCKS"),
            text_fields=read.getlist("SIMHASH_TEXT_FIELDS"),
            key_field=read.getstr("SIMHASH_KEY_FIELD").strip(),
            top_n=read.getint("SIMHASH_TOP_N"),
            min_terms=read.getint("SIMHASH_MIN_TERMS"),
            anchors=read.getbool("SIMHASH_ANCHORS"),
            min_share=read.getfloat("SIMHASH_MIN_SHARE"),
            site_templates=read.getbool("SIMHASH_SITE_TEMPLATES"),
            max_text_length=read.getint("SIMHASH_MAX_TEXT_LENGTH"),
            remove_boilerplate=read.getbool("SIMHASH_REMOVE_BOILERPLATE"),
            extractor=read.getstr("SIMHASH_EXTRACTOR").strip().lower(),
            workers=read.getint("SIMHASH_WORKERS"),
            worker_timeout=read.getfloat("SIMHASH_WORKER_TIMEOUT"),
            segmenter=read.getstr("SIMHASH_SEGMENTER"),
            secret=read.getstr("SIMHASH_SECRET", optional=True),
            drop_log_level=log_level(read.get("SIMHASH_DROP_LOG_LEVEL")),
            on_index_error=read.getstr("SIMHASH_ON_INDEX_ERROR").lower(),
            flag_only=read.getbool("SIMHASH_FLAG_ONLY"),
            drop_unchanged=read.getbool("SIMHASH_DROP_UNCHANGED"),
            reset=read.getbool("SIMHASH_RESET"),
            flag_field=read.getstr("SIMHASH_FLAG_FIELD").strip(),
            contains_field=read.getstr("SIMHASH_CONTAINS_FIELD").strip(),
            middleware_content_types=media_types(read.getlist("SIMHASH_MIDDLEWARE_CONTENT_TYPES")),
            skip_predicted=read.getbool("SIMHASH_SKIP_PREDICTED"),
            skip_min_copies=read.getint("SIMHASH_SKIP_MIN_COPIES"),
            skip_check_every=read.getint("SIMHASH_SKIP_CHECK_EVERY"),
        )


#: Spider arguments (``scrapy crawl news -a simhash_reset=1``) that set a setting for one
#: crawl, as scrapy-deltafetch's ``deltafetch_reset`` does.
SPIDER_ARGUMENTS = {
    "simhash_reset": "SIMHASH_RESET",
    "simhash_drop_unchanged": "SIMHASH_DROP_UNCHANGED",
}


def with_spider_arguments(settings: Any, spider: object) -> Any:
    """*settings* with the :data:`SPIDER_ARGUMENTS` that *spider* was given (as its
    attributes) in place of the settings they name."""
    given = {
        setting: getattr(spider, argument)
        for argument, setting in SPIDER_ARGUMENTS.items()
        if hasattr(spider, argument)
    }
    return ChainMap(given, settings) if given else settings


def unknown_settings(names: Iterable[str]) -> list[str]:
    """A message for each ``SIMHASH_*`` name in *names* that is no setting (a typo would
    otherwise be silently ignored), with the closest setting's name."""
    messages = []
    for name in names:
        if not name.startswith("SIMHASH_") or name in DEFAULTS:
            continue
        # Compared without the prefix that every name shares, which would make all close.
        close = difflib.get_close_matches(
            name.removeprefix("SIMHASH_"), [n.removeprefix("SIMHASH_") for n in DEFAULTS], n=1
        )
        messages.append(
            f"{name} is not a setting of scrapy-simhash"
            + (
                f"; did you mean SIMHASH_{close[0]}?"
                if close
                else "; see the settings in docs/usage.md"
            )
        )
    return messages
