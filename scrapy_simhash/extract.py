"""Main-content extractors: HTML -> the text a reader came for.

Pages of one site share navigation, sidebars and footers; if those are fingerprinted,
distinct pages of the site look alike. An extractor keeps the main content only.

* ``"builtin"`` (default): :func:`scrapy_simhash.text.visible_text` with boilerplate
  removal (scripts, styles, navigation, headers, footers, sidebars, forms, and elements
  whose ARIA role, id or class marks them as such). Fast, no extra dependency.
* ``"trafilatura"``: ``trafilatura.extract`` (pip install 'scrapy-simhash[trafilatura]'),
  a main-text extractor with many heuristics; comments are left out. On a page where it
  finds no main text, the built-in extractor's text is used instead.
* ``"none"``: all visible text, boilerplate included.

No Scrapy import: :func:`get_extractor` returns a plain function.
"""

from __future__ import annotations

from collections.abc import Callable

from .exceptions import ConfigurationError
from .text import visible_text

Extractor = Callable[[str], str]

EXTRACTORS = ("builtin", "trafilatura", "none")


def builtin_extractor(html: str) -> str:
    return visible_text(html, remove_boilerplate=True)


def no_extractor(html: str) -> str:
    return visible_text(html, remove_boilerplate=False)


def trafilatura_extractor() -> Extractor:
    """Return an extractor backed by trafilatura; ConfigurationError if it is missing."""
    try:
        import trafilatura
    except ImportError as e:
        raise ConfigurationError(
            f"SIMHASH_EXTRACTOR='trafilatura' needs trafilatura, which cannot be imported "
            f"({e}); pip install 'scrapy-simhash[trafilatura]', or use 'builtin'"
        ) from None

    def extract(html: str) -> str:
        text = trafilatura.extract(
            html, include_comments=False, include_tables=True, deduplicate=False, fast=True
        )
        return text if text else builtin_extractor(html)

    return extract


def get_extractor(name: str) -> Extractor:
    """Return the extractor called *name* (one of :data:`EXTRACTORS`)."""
    if name == "builtin":
        return builtin_extractor
    if name == "none":
        return no_extractor
    if name == "trafilatura":
        return trafilatura_extractor()
    raise ConfigurationError(
        f"SIMHASH_EXTRACTOR={name!r} is not one of {', '.join(EXTRACTORS)}; 'builtin' is the "
        "default"
    )
