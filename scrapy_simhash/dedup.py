"""Text in, verdict out: the step the pipeline, the middleware and the CLI share.

:class:`Analyser` does the CPU work (normalise, segment, fingerprint) and touches no index,
so it can run in a thread or another process. :class:`Deduplicator` holds an index and an
analyser; its :meth:`~Deduplicator.check` does the atomic check-and-insert.

Texts with fewer than ``min_terms`` distinct terms are too short for SimHash distances to
mean much (a one-word change moves many bits of a fingerprint of five terms, and unrelated
short texts share heavy terms by chance): they are matched exactly on their normalised text
instead, never by distance. The text of an HTML page of short blocks takes that path below
``BLOCKS_EXACT_FACTOR`` times ``min_terms`` (:func:`analyse_text`).
"""

from __future__ import annotations

import functools
import logging
from collections import OrderedDict
from dataclasses import dataclass, field, fields, replace
from typing import Literal

from .analysis.anchors import text_anchors
from .analysis.fingerprint import Fingerprinter, hash_term
from .analysis.sketch import text_sketch
from .analysis.template import read_with
from .anchors import DEFAULT_ANCHORS, Anchors
from .exceptions import SimhashIndexError
from .extract.body import mostly_paragraphs
from .extract.extractors import Extractor, get_extractor
from .extract.fields import CROWDED, field_text
from .extract.main_text import MainText
from .extract.text import exact_form, normalize_characters
from .index.analysed import Analysed
from .index.base import Match, NearDuplicateIndex, Outcome, Status
from .index.rule import sighting
from .index.templates import read_template, templates_for
from .sketch import Sketch
from .template import Template, site_of

logger = logging.getLogger(__name__)

#: Sites whose learned templates a deduplicator keeps (the first forgotten first): a site's
#: template changes no more once learned, and is read from the index each page until then.
LEARNED_SITES = 256

#: ``simhash``: fingerprinted and matched by distance; ``short``: matched exactly;
#: ``empty``: no text at all, never a duplicate.
TextKind = Literal["simhash", "short", "empty"]


@dataclass(frozen=True)
class Analysis:
    """What :meth:`Analyser.analyse` found in a text."""

    kind: TextKind
    #: The SimHash (``simhash``) or the 64-bit digest of the normalised text (``short``).
    value: int
    #: Number of distinct terms found (before the top-N cut).
    terms: int
    #: True when the text was longer than ``max_length`` and cut.
    truncated: bool = False
    #: Why the main text of an HTML field could not be found and a wider text was
    #: analysed instead (see :class:`~scrapy_simhash.extract.main_text.MainText`), else ``None``.
    fallback: str | None = None
    #: The paragraph anchors of a ``simhash`` text (see :mod:`scrapy_simhash.anchors`);
    #: ``None`` when anchors are off or the text has no line long enough.
    anchors: Anchors | None = None
    #: The sketch of a ``simhash`` text (see :mod:`scrapy_simhash.sketch`): what tells
    #: how much of it a stored page holds; ``None`` when the share check is off.
    sketch: Sketch | None = None
    #: A 64-bit hash of the text analysed (normalised and cut), keyed as the terms are:
    #: what tells a diagnostic it reads the very text the crawl did.
    text_hash: int = 0
    #: The text analysed, kept for the check when the site's template is read (see
    #: :class:`Deduplicator`), else ``""``.
    text: str = field(default="", repr=False, compare=False)


@dataclass(frozen=True)
class Verdict:
    """The outcome of a check. *status* (see :data:`~scrapy_simhash.index.base.Status`):
    ``new``, ``changed`` (its key stored another text, now replaced), ``unchanged`` (the
    text stored under its own key: a re-crawl) or ``duplicate``. *match* is the stored
    page it matched (``unchanged``, ``duplicate``), else ``None``."""

    analysis: Analysis
    match: Match | None
    status: Status
    #: A stored page that looked alike but holds too little of this page's text to drop
    #: it (see :attr:`~scrapy_simhash.index.base.Outcome.refused`).
    refused: Match | None = None
    #: Characters of the text left out as its site's template (see
    #: :mod:`scrapy_simhash.template`): the page was checked on the rest, its own text.
    template: int = 0

    @property
    def is_duplicate(self) -> bool:
        """Only another page's text: an unchanged re-crawl is not a duplicate."""
        return self.status == "duplicate"

    @property
    def test(self) -> str | None:
        """Which test matched: ``near`` (within the distance), ``contained`` (the
        largest paragraphs of one page, most of its text, are in the other), ``exact`` (a
        short text); ``None`` without a match."""
        if self.match is None:
            return None
        if self.match.contained:
            return "contained"
        return "exact" if self.analysis.kind == "short" else "near"


class Analyser:
    """Text -> :class:`Analysis`: the CPU work (normalise, segment, fingerprint), with no
    index, so that it runs in a thread or a worker process.

    *min_terms*: texts with fewer distinct terms take the exact-match path.
    *max_length*: texts are cut to this many characters before analysis, which bounds the
    time one page can take. *anchors*: how many paragraph anchors a text gets (0: none,
    pages are matched by distance only). *sketch*: whether a text gets a sketch (without
    one, no drop is confirmed by the share of the text the kept page holds). *templates*:
    whether the analysis keeps its text, for the check to read with its site's template.
    """

    def __init__(
        self,
        fingerprinter: Fingerprinter,
        *,
        min_terms: int = 20,
        max_length: int = 2_000_000,
        anchors: int = DEFAULT_ANCHORS,
        sketch: bool = True,
        templates: bool = False,
    ) -> None:
        self.fingerprinter = fingerprinter
        self.min_terms = min_terms
        self.max_length = max_length
        self.anchors = anchors
        self.sketch = sketch
        self.templates = templates and sketch

    def analyse(self, text: str, *, min_terms: int | None = None) -> Analysis:
        """*min_terms*: this text's bar for the exact-match path, if not ``min_terms``."""
        truncated = len(text) > self.max_length
        if truncated:
            text = text[: self.max_length]
        text = normalize_characters(text)
        if not text or text.isspace():
            return Analysis("empty", 0, 0, truncated)
        # Blank ends (an empty last field) change nothing the analysis reads.
        text_hash = hash_term(text.strip(), self.fingerprinter.seed)
        terms = self.fingerprinter.term_extractor
        counts = terms.term_counts(text)
        if len(counts) < (self.min_terms if min_terms is None else min_terms):
            digest = hash_term(exact_form(text), self.fingerprinter.seed)
            return Analysis("short", digest, len(counts), truncated, text_hash=text_hash)
        top = terms.top_terms(counts)
        fingerprint = self.fingerprinter.simhash(top)
        anchors = (
            text_anchors(text, self.fingerprinter.seed, count=self.anchors)
            if self.anchors
            else None
        )
        sketch = text_sketch(text, self.fingerprinter.seed) if self.sketch else None
        return Analysis(
            "simhash",
            fingerprint,
            len(counts),
            truncated,
            anchors=anchors or None,
            sketch=sketch or None,
            text_hash=text_hash,
            text=text if self.templates else "",
        )


class Deduplicator:
    """Checks texts against *index*: an :class:`Analyser` (built from *fingerprinter*,
    *min_terms* and *max_length*, see there) and the index's atomic check-and-insert.
    Callers run :meth:`check` without yielding to other work in between.

    With *templates* (and a sketch), a page whose key names a site is checked on its own
    text: what a candidate must hold leaves out the blocks its site's other pages hold,
    learned in the index from the pages checked (see :mod:`scrapy_simhash.template`)."""

    def __init__(
        self,
        index: NearDuplicateIndex,
        fingerprinter: Fingerprinter,
        *,
        min_terms: int = 20,
        max_length: int = 2_000_000,
        anchors: int = DEFAULT_ANCHORS,
        sketch: bool = True,
        templates: bool = False,
    ) -> None:
        self.index = index
        #: Sites whose template is learned in full (it changes no more), as read last.
        self._learned: OrderedDict[str, Template] = OrderedDict()
        self.analyser = Analyser(
            fingerprinter,
            min_terms=min_terms,
            max_length=max_length,
            anchors=anchors,
            sketch=sketch,
            templates=templates,
        )

    @property
    def fingerprinter(self) -> Fingerprinter:
        return self.analyser.fingerprinter

    @property
    def min_terms(self) -> int:
        return self.analyser.min_terms

    @property
    def max_length(self) -> int:
        return self.analyser.max_length

    def analyse(self, text: str, *, min_terms: int | None = None) -> Analysis:
        """:meth:`Analyser.analyse`: touches no index."""
        return self.analyser.analyse(text, min_terms=min_terms)

    def check(self, analysis: Analysis, key: str, *, analysed: Analysed | None = None) -> Verdict:
        """Check-and-insert *analysis* under *key* (see
        :meth:`~scrapy_simhash.index.base.NearDuplicateIndex.check_and_add`), with
        *analysed*, how its text was read, if given. Empty texts are never stored:
        ``new``, whatever the key stored."""
        template = 0
        if analysis.kind == "simhash":
            site = site_read(analysis, key)
            if site is None:
                outcome = self.index.check_and_add(
                    analysis.value, key, analysis.anchors, analysis.sketch, analysed=analysed
                )
            else:
                outcome, template = self._check_on_site(analysis, key, site, analysed)
        elif analysis.kind == "short":
            outcome = self.index.check_and_add_exact(analysis.value, key, analysed=analysed)
        else:
            return Verdict(analysis, None, "new")
        return Verdict(analysis, outcome.match, outcome.status, outcome.refused, template)

    def _check_on_site(
        self, analysis: Analysis, key: str, site: str, analysed: Analysed | None
    ) -> tuple[Outcome, int]:
        """The check of a page of *site*, on its own text, and the characters of its
        template left out; then what it teaches the site's template (a failure to keep
        that costs the lesson, never the verdict)."""
        store = templates_for(self.index)
        template = self._learned.get(site) or read_template(store, site)
        page = sighting(key)
        read = read_with(template, page, analysis, self.fingerprinter.seed, self.analyser.anchors)
        outcome = self.index.check_and_add(
            analysis.value, key, read.anchors, read.sketch, analysed=analysed
        )
        if template.learned(read.blocks, page):
            try:
                store.write(site, template.pack())
            except SimhashIndexError as e:
                logger.error("Could not learn the template of %s from %s: %s", site, key, e)
        elif site not in self._learned:
            self._learned[site] = template  # read from the index no more
            if len(self._learned) > LEARNED_SITES:
                self._learned.popitem(last=False)
        return outcome, read.left_out

    def check_text(self, text: str, key: str) -> Verdict:
        """Analyse *text* (as :func:`analyse_text`: an extractor's result says which
        text it is) and check it under *key*."""
        return self.check(analyse_text(self, text), key)


def site_read(analysis: Analysis, key: str) -> str | None:
    """The site whose template the page under *key* is read with (see
    :mod:`scrapy_simhash.template`), by the crawl's check and the archive job alike;
    ``None`` for a page read without one: no site, a text too short for a fingerprint,
    no text kept (templates off) or no sketch."""
    if analysis.kind != "simhash" or not analysis.text or analysis.sketch is None:
        return None
    return site_of(key)


@dataclass(frozen=True)
class AnalysisParams:
    """Everything that decides how item fields are analysed, as plain values, so that a
    worker process can rebuild the same analysis (see :func:`analyse_fields`)."""

    top_n: int
    #: The term hash's key (see :class:`~scrapy_simhash.analysis.fingerprint.Fingerprinter`).
    seed: bytes | int | None
    segmenter: str
    min_terms: int
    max_length: int
    #: Extractor name, as :func:`scrapy_simhash.extract.extractors.get_extractor` takes it.
    extractor: str
    #: Paragraph anchors per text (0: none).
    anchors: int = DEFAULT_ANCHORS
    #: Whether texts get a sketch (the share check).
    sketch: bool = True
    #: Whether the analysis keeps its text for its site's template.
    templates: bool = False

    def __repr__(self) -> str:
        # A secret seed is never shown; without one the repr rebuilds the same params.
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        if values["seed"]:
            values["seed"] = "<secret>"
        shown = ", ".join(f"{name}={value!r}" for name, value in values.items())
        return f"{type(self).__name__}({shown})"


def analyse_fields(params: AnalysisParams, values: list[object]) -> Analysis:
    """Analyse the text of item fields *values*; a module-level function of plain
    arguments, so that a worker process (:mod:`scrapy_simhash.crawl.workers`) can run it."""
    analyser, extractor = _analyser(params)
    return analyse_text(analyser, fields_text(values, extractor))


#: The text of an HTML page of short blocks (paragraphs of ``BODY_CHARS`` hold less than
#: ``BODY_SHARE`` of it: a list, an index, a menu page, a reference page of a table) with
#: fewer distinct terms than this many times ``min_terms`` is matched on its exact text:
#: what sets two such pages of a site apart is a word or two (the tag a tag page lists, an
#: index page's letter, the table a reference page describes), less than a SimHash
#: distance can tell from the noise of a template.
BLOCKS_EXACT_FACTOR = 4


def analyse_text(analyser: Analyser | Deduplicator, text: str) -> Analysis:
    """:meth:`Analyser.analyse` of *text*, which tells if it came from HTML (a
    :class:`~scrapy_simhash.extract.main_text.MainText`) and if its extraction fell back."""
    min_terms = None
    if isinstance(text, MainText) and not mostly_paragraphs(text):
        min_terms = BLOCKS_EXACT_FACTOR * analyser.min_terms
    analysis = analyser.analyse(text, min_terms=min_terms)
    if getattr(text, "crowded", False):  # tags cut before parsing: counted as truncated
        analysis = replace(analysis, truncated=True)
    fallback = getattr(text, "fallback", None)
    return replace(analysis, fallback=fallback) if fallback else analysis


def fields_text(values: list[object], extractor: Extractor | None) -> str:
    """The text of item fields *values*, one field after the other: what is analysed,
    in a worker process or in the crawl's. When a field was HTML, the result is a
    :class:`~scrapy_simhash.extract.main_text.MainText`, which says why when its extraction fell
    back to a wider text."""
    fallbacks: list[str] = []
    text = "\n".join(
        field_text(value, extractor=extractor, fallbacks=fallbacks) for value in values
    )
    if not fallbacks:
        return text
    reasons = [reason for reason in fallbacks if reason and reason != CROWDED]
    marked = MainText.of(text, reasons[0] if reasons else None)
    if CROWDED in fallbacks:
        marked.crowded = True  # type: ignore[attr-defined]
    return marked


@functools.lru_cache(maxsize=4)
def _analyser(params: AnalysisParams) -> tuple[Analyser, Extractor]:
    # Built once per worker process (the segmenter's dictionary takes a second to load).
    fingerprinter = Fingerprinter(top_n=params.top_n, seed=params.seed, segmenter=params.segmenter)
    analyser = Analyser(
        fingerprinter,
        min_terms=params.min_terms,
        max_length=params.max_length,
        anchors=params.anchors,
        sketch=params.sketch,
        templates=params.templates,
    )
    return analyser, get_extractor(params.extractor, min_words=params.min_terms)
