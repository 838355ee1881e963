"""Paragraph anchors of a text (see :mod:`scrapy_simhash.anchors`): the hashes of its
longest lines, normalised by :func:`anchor_form`."""

from __future__ import annotations

import re

from ..anchors import DEFAULT_ANCHORS, MIN_LINE_CHARS, Anchors
from .fingerprint import hash_term

#: Anchors are 32-bit values (signed: four bytes in SQLite). Two unrelated paragraphs
#: collide once in four billion; a match needs two shared anchors of one page.
_MASK32 = 0xFFFF_FFFF
_NOT_WORD = re.compile(r"[\W_]+")


def anchor_form(line: str) -> str:
    """*line* as anchors compare it: case-folded, with punctuation and symbols dropped
    and runs of spaces made one (quotes and dashes differ between two sites' copies)."""
    return _NOT_WORD.sub(" ", line.casefold()).strip()


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
    :func:`anchor_form`, keyed with *seed* as the fingerprint's terms are. Ties in
    length are broken by the hash, so that two copies choose the same lines."""
    if count <= 0:
        return Anchors()
    lines: dict[int, int] = {}
    total = long = 0
    for line in text.splitlines():
        if len(line) < min_chars:
            total += len(line)  # about its anchor form: a short line is never one
            continue
        form = anchor_form(line)
        total += len(form)
        if len(form) >= min_chars:
            long += len(form)
            lines[to_signed32(hash_term(form, seed) & _MASK32)] = len(form)
    if not lines:
        return Anchors()
    chosen = sorted(lines.items(), key=lambda item: (-item[1], item[0]))[:count]
    lengths = tuple(n for _, n in chosen)
    return Anchors(
        tuple(h for h, _ in chosen), lengths, sum(lengths), min(1000, 1000 * long // total)
    )


def anchor_lines(text: str, seed: bytes | int | None = None) -> dict[int, str]:
    """``anchor -> line`` for every line of *text* long enough to be an anchor: the
    paragraphs behind a containment verdict, for people to read."""
    lines = {}
    for line in text.splitlines():
        form = anchor_form(line)
        if len(form) >= MIN_LINE_CHARS:
            lines.setdefault(to_signed32(hash_term(form, seed) & _MASK32), line.strip())
    return lines
