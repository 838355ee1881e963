"""Teaser grids: runs of short sibling cards of one kind, each with a link and text of its
own (a headline to another page, with its lead, date or author), as "more articles" boxes
and river pages show them. :func:`scrapy_simhash.extract.main_text.main_text` removes them before
it looks for the article: their leads are not link text, so the line filter alone would
keep them, and they would count as the page's paragraphs when the region is chosen.

No Scrapy import.
"""

from __future__ import annotations

import lxml.etree

from .text import INLINE_TAGS, drop_trees, text_length

#: Sibling teasers (linked cards of one kind) come in runs of at least this many...
TEASER_RUN = 3
#: ... each at most this long, with at least this share of link text, and not only links.
TEASER_CHARS = 600
TEASER_LINK_SHARE = 0.1
#: ... and at least this many characters of text outside its link (a lead, a date).
TEASER_OWN_CHARS = 10

# Elements with at least TEASER_RUN children that hold a link (as each teaser does): found
# in C, not by a walk in Python; a third of the elements with that many children.
_WITH_CHILDREN = lxml.etree.XPath(f"/descendant::*[*[descendant::a][{TEASER_RUN}]]")
# Blocks a card holds its headline and lead in.
_BLOCKS = ("p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "li", "br", "figure", "header")
_LINK_TEXTS = lxml.etree.XPath(".//a//text()", smart_strings=False)
# Paragraphs are the article's own text, even when each holds a link, and table rows and
# cells its tables: never cards.
_NOT_TEASERS = frozenset(["p", "br", "hr", "tr", "td", "th", "option"])


def drop_teasers(root: lxml.etree._Element) -> None:
    """Remove teaser grids from *root*: runs of sibling elements of one kind (tag and
    class), each short and holding a link (a headline to another page, with its lead,
    date or author), as "more articles" lists and river pages show them. A teaser's lead
    is text of its own beside its link, so the line filter alone would keep it; the
    article's own text is paragraphs, not a run of linked cards."""
    groups: dict = {}
    found: list = []
    for element in _WITH_CHILDREN(root):
        if element.tag in INLINE_TAGS:
            continue
        groups.clear()
        for child in element.iterchildren(lxml.etree.Element):  # elements only, in C
            tag = child.tag  # each read of a tag makes a new string
            if tag not in _NOT_TEASERS:
                groups.setdefault((tag, child.get("class")), []).append(child)
        for members in groups.values():
            if len(members) < TEASER_RUN:
                continue
            # At least two thirds are teasers: stop at the first member too many that is not.
            spare = len(members) - (2 * len(members) + 2) // 3
            teasers = []
            for member in members:
                if _is_teaser(member):
                    teasers.append(member)
                else:
                    spare -= 1
                    if spare < 0:
                        break
            else:
                if len(teasers) >= TEASER_RUN:
                    found += teasers
    # Removed after the walk: a tree is not changed under its own iterator. A card inside
    # a card of an outer grid went with it.
    drop_trees(found)


def _is_teaser(element: lxml.etree._Element) -> bool:
    # A list of plain links is left to the line filter, which drops its title with it.
    length = text_length(element)
    if not 0 < length <= TEASER_CHARS:
        return False
    links = sum(map(len, map(str.strip, _LINK_TEXTS(element))))  # no Python frame per text
    if not TEASER_LINK_SHARE * length <= links <= length - TEASER_OWN_CHARS:
        return False
    # A card holds a headline and a lead in blocks of their own; a paragraph that cites a
    # link is running text of its own (<div class="para">), whatever it is named.
    # The first one found ends the search, in C (an XPath asking the same took seven to
    # nine times as long: it collects every match first).
    if next(element.iterdescendants(*_BLOCKS), None) is None:
        return False
    running = len((element.text or "").strip()) + sum(
        len((child.tail or "").strip()) for child in element
    )
    return running < 0.5 * (length - links)
