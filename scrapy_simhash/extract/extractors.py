"""Main-content extractors: HTML -> the text a reader came for.

Pages of one site share navigation, sidebars and footers; if those are fingerprinted,
distinct pages of the site look alike. An extractor keeps the main content only.

* ``"builtin"`` (default): :func:`scrapy_simhash.extract.main_text.main_text`: the article's
  region, chrome and link lists removed, falling back to a wider text where that fails;
  of that, the body (the article's paragraphs, where they are most of it), which is what
  two copies of one article on two sites share. Fast, no extra dependency.
* ``"trafilatura"``: ``trafilatura.extract`` (pip install 'scrapy-simhash[trafilatura]'),
  a main-text extractor with many heuristics; comments are left out. On a page where it
  finds no main text, the built-in extractor's text is used instead.
* ``"none"``: all visible text, boilerplate included.

Every extractor returns a :class:`~scrapy_simhash.extract.main_text.MainText`, a ``str`` whose
``fallback`` says when the main text could not be found and a wider text was used (the
crawl counts those under ``simhash/extraction/fallback``).

No Scrapy import: :func:`get_extractor` returns a plain function.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable

from ..exceptions import ConfigurationError
from ..features import TERMS_VERSION
from .main_text import MainText, main_text
from .text import composed, page_text

Extractor = Callable[[str], MainText]

EXTRACTORS = ("builtin", "trafilatura", "none")

#: Why an extractor fingerprinted a wider text than the main text it looked for, by the
#: reason its :class:`~scrapy_simhash.extract.main_text.MainText` carries in ``fallback``.
FALLBACK_REASONS = {
    "own": "the main text was short and held little of the page's own blocks (a list, an "
    "index, a menu page, a note beside headings): the page's own blocks were fingerprinted, "
    "without what it marks chrome",
    "region": "the article's region held too little of the page's text",
    "chrome": "the page's text without its chrome was too short; only the menus, sidebars, "
    "header and footer it declares were left out",
    "page": "even the page's text without the menus, sidebars, header and footer it "
    "declares was too short",
    "trafilatura": "trafilatura found no main text",
}

# trafilatura.extract is not thread-safe: concurrent calls corrupt the heap under lxml and
# the process dies ("double free or corruption", SIGSEGV; adbar/trafilatura#840, #925).
# The pipeline and the middleware analyse pages in a thread pool, so the calls of all
# threads take turns here.
# The built-in extractor needs no lock.
_TRAFILATURA_LOCK = threading.Lock()


def visible_text(html: str, *, remove_boilerplate: bool = True) -> str:
    """Return the visible text of an HTML document or fragment, one block per line.

    With *remove_boilerplate* (the default) only the page's main text is kept (see
    :func:`scrapy_simhash.extract.main_text.main_text`); without it, all the text a reader
    sees. Malformed HTML never raises: lxml repairs what it can, and an input it cannot
    parse has its tags stripped without a tree.
    """
    if remove_boilerplate:
        return str(main_text(html))
    return composed(page_text(html))


def builtin_extractor(html: str, *, min_words: int = 20, body: bool = True) -> MainText:
    return main_text(html, min_words=min_words, body=body)


def no_extractor(html: str) -> MainText:
    return MainText.of(visible_text(html, remove_boilerplate=False))


def trafilatura_extractor(*, min_words: int = 20) -> Extractor:
    """Return an extractor backed by trafilatura; ConfigurationError if it is missing."""
    try:
        import trafilatura
    except ImportError as e:
        raise ConfigurationError(
            f"SIMHASH_EXTRACTOR='trafilatura' needs trafilatura, which cannot be imported "
            f"({e}); pip install 'scrapy-simhash[trafilatura]', or use 'builtin'"
        ) from None

    def extract(html: str) -> MainText:
        with _TRAFILATURA_LOCK:
            text = trafilatura.extract(
                html, include_comments=False, include_tables=True, deduplicate=False, fast=True
            )
        if text:
            return MainText.of(text)
        return MainText.of(builtin_extractor(html, min_words=min_words), "trafilatura")

    return extract


def extractor_version(name: str) -> str:
    """The version of the extractor called *name*, as an index records it beside each
    page: the fingerprint's terms version for ``builtin`` and ``none`` (they change with
    it), trafilatura's own for ``trafilatura``; ``""`` when it cannot be told."""
    if name == "trafilatura":
        try:
            from importlib.metadata import version

            return version("trafilatura")
        except Exception:  # not installed: the extractor itself says so
            return ""
    return f"terms-v{TERMS_VERSION}" if name in ("builtin", "none") else ""


def get_extractor(name: str, *, min_words: int = 20, body: bool = True) -> Extractor:
    """Return the extractor called *name* (one of :data:`EXTRACTORS`).

    *min_words*: a main text with fewer distinct words, on a page that has many, is taken
    for a failed extraction (usually ``SIMHASH_MIN_TERMS``). *body*: ``"builtin"`` gives
    the body of the main text, what is fingerprinted (``False``: all of the main text, as
    a reader sees it)."""
    if name == "builtin":
        return functools.partial(builtin_extractor, min_words=min_words, body=body)
    if name == "none":
        return no_extractor
    if name == "trafilatura":
        return trafilatura_extractor(min_words=min_words)
    raise ConfigurationError(
        f"SIMHASH_EXTRACTOR={name!r} is not one of {', '.join(EXTRACTORS)}; 'builtin' is the "
        "default"
    )
