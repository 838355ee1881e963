"""Paragraph anchors of a text (see :mod:`scrapy_simhash.anchors`): the hashes of its
longest lines, normalised by :func:`anchor_form`."""

from __future__ import annotations

import re

from ..anchors import DEFAULT_ANCHORS, MIN_LINE_CHARS, Anchors
from .fingerprint import hash_term

#: Anchors are 32-bit values (signed: four bytes in SQLite). Two unrelated paragraphs
#: collide once in four billion; a match needs two shared anchors of one page.
_MASK32 = 0xFFFF_FFFF
#: Punctuation and symbols: ASCII's, general punctuation (quotes, dashes, ellipses), CJK
#: punctuation and the fullwidth forms NFKC leaves. As one character class: faster than
#: ``\W`` (a Unicode lookup per character) or ``str.translate`` on text beyond Latin-1.
_PUNCTUATION_POINTS = sorted(
    {
        *(c for c in range(0x21, 0x7F) if not chr(c).isalnum()),
        *range(0xA1, 0xC0),
        0xD7,
        0xF7,
        *range(0x2010, 0x2070),
        *range(0x3000, 0x3040),
        *range(0xFE30, 0xFE70),
        *(c for c in range(0xFF01, 0xFF66) if not chr(c).isalnum()),
    }
)
_PUNCTUATION = re.compile("[" + re.escape("".join(map(chr, _PUNCTUATION_POINTS))) + "]+")


def anchor_form(line: str) -> str:
    """*line* as anchors compare it: case-folded, with punctuation and symbols dropped
    and runs of spaces made one (quotes and dashes differ between two sites' copies)."""
    return " ".join(_PUNCTUATION.sub(" ", line.casefold()).split())


def to_signed32(value: int) -> int:
    return value - (1 << 32) if value >= 1 << 31 else value


def text_anchors(
    text: str,
    seed: bytes | int | None = None,
    *,
    count: int = DEFAULT_ANCHORS,
    min_chars: int = MIN_LINE_CHARS,
) -> Anchors:
    """The anchors of *text* (its lines are the extractor's blocks): the hashes of its
    *count* longest distinct lines of at least *min_chars* characters of
    :func:`anchor_form`, keyed with *seed* as the fingerprint's terms are.

    Lines are ranked by their length as written, longest first (ties by their text, so
    that two copies choose the same lines), and only the lines taken are normalised:
    normalising every line took as long as a third of the fingerprint. ``cover`` counts
    lengths as written too."""
    if count <= 0:
        return Anchors()
    lines = text.splitlines()
    total = sum(map(len, lines))
    long_lines = [line for line in lines if len(line) >= min_chars]
    if not long_lines or not total:
        return Anchors()
    long_lines.sort(key=lambda line: (-len(line), line))
    chosen: dict[int, int] = {}
    for line in long_lines:
        form = anchor_form(line)
        if len(form) >= min_chars:
            chosen.setdefault(to_signed32(hash_term(form, seed) & _MASK32), len(form))
            if len(chosen) == count:
                break
    if not chosen:
        return Anchors()
    cover = min(1000, 1000 * sum(map(len, long_lines)) // total)
    lengths = tuple(chosen.values())
    return Anchors(tuple(chosen), lengths, sum(lengths), cover)


def anchor_lines(text: str, seed: bytes | int | None = None) -> dict[int, str]:
    """``anchor -> line`` for every line of *text* long enough to be an anchor: the
    paragraphs behind a containment verdict, for people to read."""
    lines = {}
    for line in text.splitlines():
        form = anchor_form(line)
        if len(form) >= MIN_LINE_CHARS:
            lines.setdefault(to_signed32(hash_term(form, seed) & _MASK32), line.strip())
    return lines
