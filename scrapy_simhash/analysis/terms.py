"""Text -> weighted terms: the features a SimHash is built from.

Chinese runs are segmented with jieba's dictionary (HMM off, so that the fast Rust port
``rjieba`` gives exactly the same words); every other script is split into Unicode words.
Latin words are lower-cased. Tokens that carry no content are not features: punctuation,
whitespace, URLs, e-mail addresses, single letters, common function words (of English
and 23 other languages) and attribution lines (sources, bylines, copyright notices: see
:mod:`scrapy_simhash.analysis.attribution`). Without that filter every page shares its
most frequent "terms" with every other page, and unrelated pages collide. Numbers are
features: on templated pages (earnings reports, price lists, match results) the figures are
what tells one page from the next.

Each remaining term is weighted by TF x IDF, with jieba's bundled IDF dictionary and the
median IDF for words it lacks, and only the ``top_n`` heaviest terms are kept. No term may
carry more than ``MAX_TERM_SHARE`` of their total weight: a word that one text repeats
("Debian" 60 times on a short page) would otherwise decide every bit of its fingerprint
alone, and every page dominated by that word would collide.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import re
import statistics
import tempfile
import threading
from collections import Counter
from pathlib import Path

from ..features import DEFAULT_TOP_N
from .attribution import strip_attribution
from .function_words import remove_stop_words, stop_words_for
from .heaviest import capped, heaviest
from .words import HAN_RUN, WORD, count_long_words, count_words, is_content_word, lower

# Han run or word, in order (for TermExtractor.tokens), as scrapy_simhash.analysis.words splits.
_HAN_OR_WORD = re.compile(f"({HAN_RUN.pattern})|{WORD.pattern}")
# Applied to lower-cased text only (a case-insensitive pattern is twice as slow).
_URL = re.compile(r"(?:https?|ftp)://\S+|www\.[^\s/]+\S*")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")

# TERMS_VERSION, bumped whenever a change changes which terms or weights a page produces,
# and DEFAULT_TOP_N are in scrapy_simhash/features.py (an index reads them there).
#: The largest share of the total weight of the kept terms that one term may carry.
MAX_TERM_SHARE = 0.1
#: Distinct terms whose IDF a TermExtractor keeps at hand before it starts afresh.
IDF_CACHE_SIZE = 100_000


@functools.cache
def jieba_idf() -> tuple[dict[str, float], float]:
    """Return jieba's bundled IDF dictionary and its median value (loaded once, read-only)."""
    # Found without importing jieba.analyse, whose import parses this file a second time.
    spec = importlib.util.find_spec("jieba")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("jieba is not installed; pip install jieba")
    path = Path(spec.submodule_search_locations[0], "analyse", "idf.txt")
    idf: dict[str, float] = {}
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            word, _, value = line.strip().partition(" ")
            if value:
                idf[word] = float(value)
    return idf, statistics.median(idf.values())


@functools.cache
def largest_idf() -> float:
    """The largest IDF a term can have: jieba's largest, or the median given to the rest."""
    table, median = jieba_idf()
    return max(max(table.values(), default=median), median)


def private_cache_dir() -> str:
    """A directory only this user can write, for jieba's dictionary cache.

    jieba caches its parsed dictionary with ``marshal`` in the shared temp directory by
    default, where another user could plant a file that it then loads.
    """
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = os.path.join(base, "scrapy-simhash")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        if os.stat(path).st_uid == os.getuid() and os.access(path, os.W_OK):
            return path
    except OSError:
        pass
    return tempfile.mkdtemp(prefix="scrapy-simhash-")


class Segmenter:
    """Splits Chinese text into dictionary words, with jieba or (same words) rjieba.

    *backend* is ``"auto"`` (rjieba when installed), ``"jieba"`` or ``"rjieba"``.
    The dictionary loads on first use, not on construction.
    """

    def __init__(self, backend: str = "auto") -> None:
        if backend not in ("auto", "jieba", "rjieba"):
            raise ValueError(f"segmenter backend {backend!r} is not one of auto, jieba, rjieba")
        # Looked up, not imported: importing rjieba loads its dictionary (0.2 s), which a
        # crawl's process that hands analysis to workers never needs.
        self._auto = backend == "auto"
        if self._auto:
            backend = "rjieba" if importlib.util.find_spec("rjieba") is not None else "jieba"
        self.backend = backend
        self._cut = None
        self._lock = threading.Lock()

    def cut(self, text: str) -> list[str]:
        if self._cut is None:
            with self._lock:
                if self._cut is None:
                    self._cut = self._load()
        return self._cut(text)

    def _load(self):
        if self.backend == "rjieba":
            try:
                import rjieba
            except ImportError:
                if not self._auto:
                    raise
                # Installed but broken: jieba gives the same words, only slower.
                logging.getLogger(__name__).warning(
                    "rjieba is installed but cannot be imported; segmenting with jieba",
                    exc_info=True,
                )
                self.backend = "jieba"
            else:
                return functools.partial(rjieba.cut, hmm=False)
        import jieba

        # jieba logs "Building prefix dict..." to stderr at DEBUG; keep the crawl log clean.
        logging.getLogger("jieba").setLevel(logging.WARNING)
        tokenizer = jieba.Tokenizer()
        tokenizer.tmp_dir = private_cache_dir()
        tokenizer.initialize()
        # HMM off: the HMM guesses unknown words, which rjieba does differently, and it is
        # quadratic on long runs of one character.
        return lambda text: list(tokenizer.cut(text, HMM=False))


class TermExtractor:
    """Extracts the *top_n* TF-IDF weighted terms of a text.

    >>> TermExtractor(top_n=3).terms("the cat sat on the cat mat")[0][0]
    'cat'
    """

    def __init__(self, *, top_n: int = DEFAULT_TOP_N, segmenter: str | Segmenter = "auto") -> None:
        if top_n < 1:
            raise ValueError(f"top_n={top_n} must be at least 1")
        self.top_n = top_n
        self.segmenter = segmenter if isinstance(segmenter, Segmenter) else Segmenter(segmenter)
        # Term -> IDF, for the terms met so far (see _new_idf).
        self._idf: dict[str, float] = {}

    def tokens(self, text: str) -> list[str]:
        """Return the content-bearing tokens of *text*, in order, Latin words lower-cased.

        The same tokens as :meth:`term_counts` counts (which is faster, in no order).
        """
        text = strip_attribution(text)
        matches = list(_HAN_OR_WORD.finditer(_strip_addresses(text.lower())))
        stop = stop_words_for(Counter(m.group() for m in matches if not m.group(1)))
        tokens: list[str] = []
        for match in matches:
            if match.group(1):
                tokens.extend(word for word in self.segmenter.cut(match.group(1)) if len(word) > 1)
            elif _is_content_word(word := match.group(), stop):
                tokens.append(word)
        return tokens

    def term_counts(self, text: str) -> Counter[str]:
        """Return how often each content-bearing token occurs in *text*."""
        lowered = lower(text)
        stripped = strip_attribution(text, lowered)
        if stripped is not text:
            lowered = lower(stripped)
        text = _strip_addresses(lowered)
        # Counted in one pass (in C, where the accelerator is built), without the words
        # that never carry content; the stop-word test below runs once per distinct word.
        counts: Counter[str] = Counter()
        han_text = count_words(text, counts)
        remove_stop_words(counts)
        if han_text:
            # One call for all Han runs: the segmenter treats the line breaks between them
            # as boundaries, exactly as if each run were cut on its own, at a fraction of
            # the overhead.
            count_long_words(self.segmenter.cut(han_text), counts)
        return counts

    def top_terms(self, counts: Counter[str]) -> list[tuple[str, float]]:
        """Weight *counts* by TF x IDF; return the ``top_n`` heaviest, heaviest first (ties
        by the term), each weight capped at ``MAX_TERM_SHARE`` of their total."""
        if not counts:
            return []
        return capped(
            heaviest(counts, self._idf, self._new_idf, self.top_n, largest_idf()),
            MAX_TERM_SHARE,
        )

    def _new_idf(self, term: str) -> float:
        """The IDF of *term* (jieba's, or its median), kept in a dict of the terms seen
        before: a page's terms mostly recur on other pages, and a small dict is read from
        the processor's cache where jieba's 270,000 words are read from memory."""
        idf = self._idf
        if len(idf) > IDF_CACHE_SIZE:
            idf.clear()
        table, median = jieba_idf()
        value = idf[term] = table.get(term, median)
        return value

    def terms(self, text: str) -> list[tuple[str, float]]:
        """Return ``(term, weight)`` pairs, heaviest first, at most ``top_n`` of them."""
        return self.top_terms(self.term_counts(text))


def _strip_addresses(text: str) -> str:
    """Blank out URLs and e-mail addresses.

    Neither can span a line break or a space, so the patterns run only on the lines that
    hold "://", "www." or "@", and on each only from the space before the first to the
    space after the last: a pattern tried at every position of a page costs more than all
    the rest of the tokenising, and so does one tried at every position of a paragraph
    that holds an address.
    """
    spans: dict[int, tuple[int, int]] = {}  # line start -> the part of it to search
    for marker in ("://", "www.", "@"):
        at = text.find(marker)
        while at >= 0:
            line_start = text.rfind("\n", 0, at) + 1
            line_end = text.find("\n", at)
            line_end = len(text) if line_end < 0 else line_end
            last = text.rfind(marker, at, line_end)
            start = text.rfind(" ", line_start, at) + 1 or line_start
            end = text.find(" ", last + len(marker), line_end)
            end = line_end if end < 0 else end
            if line_start in spans:
                start, end = min(start, spans[line_start][0]), max(end, spans[line_start][1])
            spans[line_start] = (start, end)
            at = text.find(marker, line_end)
    if not spans:
        return text
    pieces = []
    done = 0
    for start, end in sorted(spans.values()):
        stretch = text[start:end]
        if "://" in stretch or "www." in stretch:
            stretch = _URL.sub(" ", stretch)
        if "@" in stretch:
            stretch = _EMAIL.sub(" ", stretch)
        pieces += (text[done:start], stretch)
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


def _is_content_word(word: str, stop: frozenset[str]) -> bool:
    """A number, or a word of two or more characters that is not one of *stop*."""
    return word not in stop and is_content_word(word)
