"""Marks: private-use characters written into the tree before its text is serialised, so
that each line of the text knows what block it came from and how much of it is link
text. :mod:`scrapy_simhash.extract.main_text` writes them, judges its lines by them, and
removes them.

No Scrapy import.
"""

from __future__ import annotations

import re

import lxml.etree

from .text import HEADINGS

# Two marks around link text, so that each line knows how much of it is link text; one
# mark more says what block a line is.
LINK_START, LINK_END = "\ue000", "\ue001"
LINK_TEXT = re.compile("\ue000([^\ue001]*)\ue001?")
BR = "\ue003"
PARA = "\ue002"
ITEM = "\ue004"  # a list item or table cell: structured content (specifications, steps)
# A heading, one mark per rank: U+E005 for h1 to U+E00A for h6.
HEADING_MARK = {tag: chr(0xE005 + rank) for rank, tag in enumerate(HEADINGS)}
HEADING_RANK = {mark: rank + 1 for rank, mark in enumerate(HEADING_MARK.values())}
HEADING_MARKS = re.compile("[" + "".join(HEADING_RANK) + "]")
# Every mark, for the lines that are marks only, and as a pattern to remove them.
MARK_CHARS = LINK_START + LINK_END + PARA + BR + ITEM + "".join(HEADING_RANK)
MARKS = re.compile("[" + MARK_CHARS + "]")


def mark_links(root: lxml.etree._Element, region: lxml.etree._Element) -> None:
    """Mark the link text of *root*, and the lines after a ``<br>`` in *region*."""
    for link in root.iter("a"):
        link.text = LINK_START + (link.text or "")
        link.tail = LINK_END + (link.tail or "")
        # A link around blocks (a whole teaser card) spans several lines: each is marked.
        for inner in link.iterdescendants():
            if inner.text and not inner.text.isspace():
                inner.text = LINK_START + inner.text
            if inner.tail and not inner.tail.isspace():
                inner.tail = LINK_START + inner.tail
    # A line after a <br> goes on its block: hard-wrapped prose, or a paragraph's list of
    # short lines, is judged as the block it is.
    for br in region.iter("br"):
        if br.tail and not br.tail.isspace():
            br.tail = BR + br.tail.lstrip()


def mark_blocks(parts: list[lxml.etree._Element], region: lxml.etree._Element) -> None:
    """Mark the paragraphs and headings of *parts*, and the list items and table cells
    of *region*."""
    for part in parts:
        for paragraph in part.iter("p"):
            paragraph.text = PARA + (paragraph.text or "")
        for heading in part.iter(HEADINGS):
            heading.text = HEADING_MARK[heading.tag] + (heading.text or "")
    for item in region.iter("li", "td", "th", "dt", "dd"):
        item.text = ITEM + (item.text or "")
