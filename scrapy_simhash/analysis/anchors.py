"""Paragraph anchors of a text (see :mod:`scrapy_simhash.anchors`): the hashes of its
largest :func:`units`, sized in :func:`words` and normalised by :func:`anchor_form`."""

from __future__ import annotations

import re

from ..anchors import DEFAULT_ANCHORS, MIN_LINE_CHARS, Anchors
from .fingerprint import hash_term
from .speedups import compiled

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


#: Characters of scripts written without spaces (Han, kana, Hangul syllables): each is a
#: word of its own when a line's size is counted.
_UNSPACED = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def words(line: str) -> int:
    """The size of *line* in words, a Han, kana or Hangul character counting as one: a
    line of Chinese holds several times the words of a line of English of its length, so
    characters would make an English paragraph outweigh a Chinese one three times its size."""
    spaced = len(line.split())
    if line.isascii():
        return spaced
    unspaced = len(_UNSPACED.findall(line))
    return spaced + unspaced if unspaced else spaced


def squeeze(text: str) -> str:
    """*text* with punctuation and symbols dropped and runs of them and of whitespace made
    one space, none at either end (the pure-Python twin of the accelerator's)."""
    return " ".join(_PUNCTUATION.sub(" ", text).split())


def anchor_form(line: str) -> str:
    """*line* as anchors compare it: case-folded, with punctuation and symbols dropped
    and runs of spaces made one (quotes and dashes differ between two sites' copies)."""
    return (_SQUEEZE or squeeze)(line.casefold())


def to_signed32(value: int) -> int:
    return value - (1 << 32) if value >= 1 << 31 else value


#: Where a sentence of a hard-wrapped text ends: after ., ! or ? (and a closing quote or
#: bracket) before a capital, a digit or an opening quote; after a CJK full stop.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[\"'(\[]?[A-Z0-9])|(?<=[。！？])")


#: How a line that ends a sentence ends.
_ENDS = tuple(".!?:;\"'”’)。！？」』）")


def units(lines: list[str]) -> list[str]:
    """What the anchors of a text are made of: its *lines* (the extractor's blocks),
    unless the text is hard-wrapped (plain text, mail and newswire wrapped at a fixed
    width), where a line is a piece of a paragraph, cut wherever the width fell: then its
    sentences, so that copies wrapped at other widths, or whose paragraphs were joined
    or split, still share them.

    A text is wrapped when most of its lines (60%) fill a width of 50 to 100 characters
    (the length of its longest lines but a tenth), and most of those end inside a
    sentence: a page of paragraphs of about one length ends them at a full stop."""
    sizes = sorted(len(line) for line in lines if line.strip())
    if len(sizes) < 4:
        return lines
    width = sizes[(9 * len(sizes)) // 10]
    if not 50 <= width <= 100:
        return lines
    full = [line.rstrip() for line in lines if len(line) >= 0.75 * width]
    if len(full) < 0.6 * len(sizes):
        return lines
    if sum(1 for line in full if line.endswith(_ENDS)) > 0.5 * len(full):
        return lines
    return _SENTENCE_END.split(" ".join(line.strip() for line in lines))


def unit_sizes(units: list[str], min_chars: int) -> tuple[int, list[tuple[int, str]]]:
    """``(words of all units, [(size, unit) for each unit of at least min_chars
    characters])``, sizes by :func:`words` (the pure-Python twin of the accelerator's)."""
    sized = [(words(unit), unit) for unit in units if len(unit) >= min_chars]
    rest = sum(words(unit) for unit in units if len(unit) < min_chars)
    return rest + sum(size for size, _ in sized), sized


def text_anchors(
    text: str,
    seed: bytes | int | None = None,
    *,
    count: int = DEFAULT_ANCHORS,
    min_chars: int = MIN_LINE_CHARS,
) -> Anchors:
    """The anchors of *text*: the hashes of its *count* largest distinct :func:`units`
    (lines, or a wrapped text's sentences) of at least *min_chars* characters of
    :func:`anchor_form`, keyed with *seed* as the fingerprint's terms are.

    Units are ranked by their size in :func:`words`, largest first (ties by their text,
    so that two copies choose the same), and only those taken are normalised. ``words``
    is the size of the anchored units, ``cover`` the per mille of the text's words in
    units long enough to be anchors."""
    if count <= 0:
        return Anchors()
    total, sized = (_UNIT_SIZES or unit_sizes)(units(text.splitlines()), min_chars)
    if not sized or not total:
        return Anchors()
    sized.sort(key=lambda s: (-s[0], s[1]))
    chosen: dict[int, int] = {}
    for size, unit in sized:
        form = anchor_form(unit)
        if len(form) >= min_chars:
            chosen.setdefault(to_signed32(hash_term(form, seed) & _MASK32), size)
            if len(chosen) == count:
                break
    if not chosen:
        return Anchors()
    cover = min(1000, 1000 * sum(size for size, _ in sized) // total)
    sizes = tuple(chosen.values())
    return Anchors(tuple(chosen), sizes, sum(sizes), cover)


_UNIT_SIZES = compiled("unit_sizes")
_SQUEEZE = compiled("squeeze")


def anchor_lines(text: str, seed: bytes | int | None = None) -> dict[int, str]:
    """``anchor -> unit`` for every unit of *text* long enough to be an anchor: the
    paragraphs (or sentences) behind a containment verdict, for people to read."""
    lines = {}
    for line in units(text.splitlines()):
        form = anchor_form(line)
        if len(form) >= MIN_LINE_CHARS:
            lines.setdefault(to_signed32(hash_term(form, seed) & _MASK32), line.strip())
    return lines
