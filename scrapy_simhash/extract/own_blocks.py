"""A page's own blocks: what a page holds that is not chrome, and when they, rather than
its main text, are what is fingerprinted.

A page is dropped only on evidence that covers its own content. The main text of an
article is that evidence: its paragraphs are what the page is about. A page without an
article (a menu page, a list of posts, an alphabetical index, a table of contents, a tag
page) has short blocks of its own: headings with a one-line description each, list
entries, table cells, its headline. Its main text, judged as an article's would be, can be
the one block of prose it has, and that block is often one it shares with its siblings: a
note box, a warning, a code sample, a quote, a licence footer, a sidebar's "about" box.
Fingerprinted alone, it makes every sibling a near-duplicate of the first.

So a main text that is short (under ``OWN_CHARS``, fewer than two paragraphs of
``PARAGRAPH_CHARS``) must hold ``OWN_SHARE`` of the page's own text (its visible text without any
element marked chrome, link lists included: an index's entries are links); else the page's
own short blocks are fingerprinted, with the lines of the main text that are its own. A
main text that lies in chrome (a licence footer) holds none of it. Those texts are marked
``fallback="own"``; :func:`scrapy_simhash.dedup.analyse_text` matches the ones of few
terms exactly.

No Scrapy import.
"""

from __future__ import annotations

from collections.abc import Callable

from .body import BODY_CHARS, BODY_PARAGRAPHS, Line, reading_length
from .chrome import chrome_elements
from .region import PARAGRAPH_CHARS
from .text import HEADINGS, block_text, drop_trees, visible_tree

#: A main text at least this long (reading length) is evidence enough on its own.
OWN_CHARS = 600
#: A shorter one, without two paragraphs, must hold this share of the page's own text.
OWN_SHARE = 0.6
#: Own blocks besides the main text's lines that a page needs for them to replace it.
OWN_LINES = 3


def without_chrome(html: str) -> str:
    """The visible text of *html* without any element marked chrome, declared or named
    (see :func:`chrome_elements`), one block per line, link lines and short lines
    included: the page's own blocks, as a list page, an index or a menu page holds its
    content (its entries, its headings with their one-line descriptions, its table
    cells). Teaser grids are kept: on a list page they are its entries. Marked elements go
    whatever they hold (a licence footer, or a sidebar's "about" box, can be all of a list
    page's paragraph text), unless one only named chrome holds a heading and too much of
    the page to be chrome: it wraps the page (``<div class="Page-ad-margins">``)."""
    root = visible_tree(html)
    if root is None:
        return ""
    wrappers: list = []
    declared, named = chrome_elements(root, wrappers)
    dropped = drop_trees(declared)
    drop_trees(named, dropped)
    drop_trees((e for e in wrappers if next(e.iter(*HEADINGS), None) is None), dropped)
    return block_text(root)


def with_own_blocks(lines: list[Line], text: str, own: Callable[[], str]) -> str | None:
    """The page's own blocks in the page's order (its short lines and the lines of *text*,
    the main text made of *lines*), when *text* holds too little of them; ``None`` when
    *text* is evidence enough. *own* gives the page's own text (:func:`without_chrome`),
    computed only when needed."""
    if reading_length(text) >= OWN_CHARS or (
        sum(line.length >= PARAGRAPH_CHARS for line in lines) >= BODY_PARAGRAPHS
    ):
        return None
    kept = set(text.split("\n"))
    blocks = own().split("\n")
    # The share of the page's own text that the main text holds: none when the main text
    # was chrome (a licence footer, a sidebar's "about" box).
    held = sum(len(line) for line in blocks if line in kept)
    if held >= OWN_SHARE * sum(map(len, blocks)):
        return None
    widened = [line for line in blocks if line in kept or reading_length(line) < BODY_CHARS]
    # A page whose markers took all but a line or two of it (a skip link beside a page
    # inside its own <header>) has no own blocks to speak of: its main text stands.
    if sum(line not in kept for line in widened) < OWN_LINES:
        return None
    return "\n".join(widened)
