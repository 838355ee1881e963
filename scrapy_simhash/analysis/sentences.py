"""Where a text's anchor units are sentences, not lines (see
:mod:`scrapy_simhash.analysis.anchors`): a hard-wrapped text, whose lines are pieces of
paragraphs cut wherever the width fell, and a text squeezed into one line (a scraped field,
a WET record), whose one line would be one unit. No Scrapy import."""

from __future__ import annotations

import re
from itertools import pairwise

from ..anchors import MIN_LINE_CHARS

#: Characters of scripts written without spaces (Han, kana, Hangul syllables): each is a
#: word of its own when a line's size is counted, and such a text is never hard-wrapped.
UNSPACED = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")

# A sentence ends at a full stop, question or exclamation mark (and a closing quote or
# bracket) before spaces and a capital or a digit, or at a CJK full stop, question or
# exclamation mark. The pattern starts with the mark, not a look-behind: the regex engine
# then jumps from mark to mark (twice as fast as at every character).
_SENTENCE_BREAK = re.compile(r"[.!?][\"')\]]?\s+(?=[\"'(\[]?[A-Z0-9])|[。！？]")


def sentences(text: str) -> list[str]:
    """*text* cut into its sentences: each keeps its mark; the quote or bracket closing it
    and the spaces after it go."""
    pieces, start = [], 0
    for end in _SENTENCE_BREAK.finditer(text):
        pieces.append(text[start : end.start() + 1])
        start = end.end() if end.group()[0] in ".!?" else end.start() + 1
    pieces.append(text[start:])
    return pieces


def units(lines: list[str]) -> list[str]:
    """What the anchors of a text are made of: its *lines* (the extractor's blocks),
    unless the text is hard-wrapped (plain text, mail and newswire wrapped at a fixed
    width), where a line is a piece of a paragraph, cut wherever the width fell: then its
    sentences, so that copies wrapped at other widths, or whose paragraphs were joined
    or split, still share them.

    A text is wrapped when its lines fill a width of 50 to 100 characters (the length of
    its longest lines but a tenth), either way:

    * many of them (40%) go on in the next line, and most of those (70%) were broken
      where the next word would not fit, as a text wrapped word by word is (a page of
      short paragraphs of about one length leaves room for the next one's first word);
    * most of them (60%) fill the width, and most of those end inside a sentence
      (:func:`_filled`): a story of paragraphs of several lines, a table of figures.

    Text in a script written without spaces (Chinese, Japanese) is never taken for
    wrapped: its "words" are whole phrases."""
    width, count = _width(lines)
    if not width:
        return lines
    broken = full = unspaced = 0
    for line, after in pairwise(lines):
        # A line before a blank or an indented one ends a paragraph, wrapped or not.
        if len(line) >= 0.75 * width and after.strip() and not after[:1].isspace():
            if UNSPACED.search(line):
                unspaced += 1
                continue
            broken += len(line.rstrip()) + 1 + len(after.split()[0]) > width
            full += 1
    if full < unspaced or not (
        _filled(lines, width, count) or (full >= 0.4 * count and broken >= 0.7 * full)
    ):
        return lines
    return sentences(" ".join(line.strip() for line in lines))


def _width(lines: list[str]) -> tuple[int, int]:
    """``(width, count)``: the width *lines* would be wrapped at, the length of their
    longest but a tenth (``0`` where it is not 50 to 100 characters, or for fewer than
    four lines), and the *count* of them not empty."""
    sizes = sorted(filter(None, map(len, lines)))
    if len(sizes) < 4:
        return 0, len(sizes)
    width = sizes[(9 * len(sizes)) // 10]
    return (width if 50 <= width <= 100 else 0), len(sizes)


def may_be_wrapped(lines: list[str]) -> bool:
    """Whether :func:`units` may take *lines* for hard-wrapped: they have a width, and
    enough of them (40%) fill it for either of its tests."""
    width, count = _width(lines)
    return bool(width) and sum(1 for line in lines if len(line) >= 0.75 * width) >= 0.4 * count


def _filled(lines: list[str], width: int, count: int) -> bool:
    """Whether most of *lines* (60% of the *count* not empty) fill the *width*, and at
    least half of those end inside a sentence (paragraphs one line long end at a full
    stop)."""
    full = [line.rstrip() for line in lines if len(line) >= 0.75 * width]
    ended = sum(1 for line in full if line.endswith(_ENDS))
    return len(full) >= 0.6 * count and ended <= 0.5 * len(full)


#: How a line that ends a sentence ends.
_ENDS = tuple(".!?:;\"'\u201d\u2019)\u3002\uff01\uff1f\u300d\u300f\uff09")


#: A line longer than this is no paragraph but a text squeezed into one line (a scraped
#: field, a WET record, a page whose blocks were joined): its sentences are its units.
LONG_LINE_CHARS = 2000
#: A shorter line is one too when it holds most of its text (more than half) and is longer
#: than this, four anchors' worth: a text of 1,000 characters squeezed into one line was
#: one unit, one anchor, so a copy of it cut or edited anywhere shared none.
SQUEEZED_LINE_CHARS = 4 * MIN_LINE_CHARS


def _squeezed(lines: list[str]) -> list[bool]:
    """For each of *lines*, whether it is a text squeezed into one line (see
    :data:`LONG_LINE_CHARS` and :data:`SQUEEZED_LINE_CHARS`)."""
    half = sum(map(len, lines)) / 2
    return [
        len(line) > LONG_LINE_CHARS or (len(line) > SQUEEZED_LINE_CHARS and len(line) > half)
        for line in lines
    ]


def sentence_units(found: list[str]) -> list[str]:
    """*found* with each unit that is a text squeezed into one line (see :func:`_squeezed`)
    cut into its sentences: without it, a text without line breaks is one unit, one
    anchor at most, and a copy of it is never found by its paragraphs."""
    squeezed = _squeezed(found)
    if not any(squeezed):
        return found
    cut: list[str] = []
    for unit, split in zip(found, squeezed, strict=True):
        cut += sentences(unit) if split else [unit]
    return cut
