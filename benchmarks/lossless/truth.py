"""The ground truth of the lossless benchmark: how much of a dropped page's text the kept
page holds, computed from the raw HTML of both pages with lxml alone (nothing of
scrapy_simhash is imported, so the measure cannot share a bug with what it measures).

* A page's text: the text of ``<body>`` (the whole document when it has none) without
  ``script``, ``style``, ``noscript``, ``template``, ``nav``, ``header``, ``footer`` and
  ``aside`` elements, and without any element whose ``class`` or ``id`` names a
  sidebar, menu, nav, footer, related, toc or breadcrumb part (:func:`is_chrome`); but
  an element that wraps the page's main content (:func:`holds_main`) is never removed:
  ``<body class="has-sidebar">`` or ``<div class="navbar">`` left unclosed around the
  whole page would otherwise leave no text at all.
  Block elements are separated by whitespace; whitespace is then collapsed to single
  spaces and the text case-folded.
* Its grams: the set of its character 5-grams (a text shorter than 5 characters is one
  gram; an empty text has none).
* :func:`share` of a drop: ``|grams(dropped) & grams(kept)| / |grams(dropped)|``; 1.0 when
  the dropped page has no text at all (nothing was lost).
"""

from __future__ import annotations

import re

import lxml.html

GRAM = 5
#: The goal of issue #41: every drop keeps at least this share of the dropped page's text.
GOAL = 0.8

#: Elements that are never text.
NEVER_TEXT = ("script", "style", "noscript", "template")
#: Elements that are the page's chrome, not its text.
CHROME_TAGS = ("nav", "header", "footer", "aside")
#: A class or id word containing one of these names a part of the page's chrome
#: (``sphinxsidebar``, ``mainmenu``, ``footer-widgets``, ``related-posts``, ``breadcrumbs``).
CHROME_ANYWHERE = ("sidebar", "menu", "footer", "related", "breadcrumb")
#: These two are short enough to occur inside ordinary words (``canvas``, ``unavailable``,
#: ``stock``, ``photocredit``): they count only at a word's start or end (``nav``,
#: ``navbar``, ``navheader``, ``topnav``, ``toc``, ``toctree``, ``pagetoc``).
CHROME_EDGE = ("nav", "toc")
_WORD = re.compile(r"[^\W_]+")
_SPACE = re.compile(r"\s+")
#: Elements whose text is set apart from their neighbours' (a space is put around them).
BLOCKS = frozenset(
    re.findall(
        r"\w+",
        "address article blockquote br dd details dialog div dl dt fieldset figcaption figure "
        "form h1 h2 h3 h4 h5 h6 hr li main ol p pre section summary table tbody td tfoot th "
        "thead tr ul caption option select textarea button label",
    )
)


def is_chrome(value: str | None) -> bool:
    """Whether a ``class`` or ``id`` value names a sidebar, menu, nav, footer, related,
    toc or breadcrumb part of a page."""
    if not value:
        return False
    for word in _WORD.findall(value.lower()):
        if any(name in word for name in CHROME_ANYWHERE):
            return True
        if any(word.startswith(name) or word.endswith(name) for name in CHROME_EDGE):
            return True
    return False


def holds_main(element) -> bool:
    """Whether *element* wraps the page's main content (a ``main``, an ``article``, an
    ``h1`` or a ``role="main"`` element inside it): a layout wrapper (``<div
    class="content-sidebar">``, ``<body class="has-sidebar">``, a ``navbar`` div left
    unclosed), not a sidebar, and never dropped."""
    return bool(element.xpath(".//main|.//article|.//h1|.//*[@role='main']"))


def page_text(html: str | bytes) -> str:
    """The page's own text as defined above: whitespace collapsed, case-folded."""
    if isinstance(html, str):
        html = html.encode("utf-8", "surrogatepass")
    if not html.strip():
        return ""
    try:
        root = lxml.html.document_fromstring(html)
    except (lxml.etree.ParserError, ValueError):
        return ""
    body = root.find("body")
    top = body if body is not None else root
    doomed = [
        element
        for element in top.iter()
        if element is not top
        and (
            not isinstance(element.tag, str)  # comments, processing instructions
            or element.tag in NEVER_TEXT
            or (
                (
                    element.tag in CHROME_TAGS
                    or is_chrome(element.get("class"))
                    or is_chrome(element.get("id"))
                )
                and not holds_main(element)
            )
        )
    ]
    for element in doomed:
        if element.getparent() is not None:
            element.drop_tree()  # keeps the tail: text after the element is not its
    parts: list[str] = []
    _collect(top, parts)
    return _SPACE.sub(" ", "".join(parts)).strip().casefold()


def _collect(element, parts: list[str]) -> None:
    block = element.tag in BLOCKS
    if block:
        parts.append(" ")
    if element.text:
        parts.append(element.text)
    for child in element:
        if isinstance(child.tag, str):
            _collect(child, parts)
        if child.tail:
            parts.append(child.tail)
    if block:
        parts.append(" ")


def grams(text: str) -> frozenset[str]:
    """The set of character 5-grams of *text* (already normalised by :func:`page_text`)."""
    if not text:
        return frozenset()
    if len(text) < GRAM:
        return frozenset([text])
    return frozenset(text[i : i + GRAM] for i in range(len(text) - GRAM + 1))


def share_of(dropped: frozenset[str], kept: frozenset[str]) -> float:
    """The share of the grams *dropped* that *kept* holds (1.0 for no grams)."""
    if not dropped:
        return 1.0
    return len(dropped & kept) / len(dropped)


def share(dropped_html: str | bytes, kept_html: str | bytes) -> float:
    """The share of the dropped page's text that the kept page holds, from their HTML."""
    return share_of(grams(page_text(dropped_html)), grams(page_text(kept_html)))
