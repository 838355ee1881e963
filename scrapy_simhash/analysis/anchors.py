"""Paragraph anchors of a text (see :mod:`scrapy_simhash.anchors`): the hashes of its
largest :func:`units`, sized in :func:`words` and normalised by :func:`anchor_form`."""

from __future__ import annotations

import re
import sys
import zlib
from collections.abc import Callable

from ..anchors import DEFAULT_ANCHORS, MIN_LINE_CHARS, Anchors
from .fingerprint import hash_term
from .sentences import UNSPACED, may_be_wrapped, sentence_units, units
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


def words(line: str) -> int:
    """The size of *line* in words, a Han, kana or Hangul character counting as one: a
    line of Chinese holds several times the words of a line of English of its length, so
    characters would make an English paragraph outweigh a Chinese one three times its size."""
    spaced = len(line.split())
    if line.isascii():
        return spaced
    unspaced = len(UNSPACED.findall(line))
    return spaced + unspaced if unspaced else spaced


def squeeze(text: str) -> str:
    """*text* with punctuation and symbols dropped and runs of them and of whitespace made
    one space, none at either end (the pure-Python twin of the accelerator's)."""
    return " ".join(_PUNCTUATION.sub(" ", text).split())


#: A number, as anchors see it: a run of ASCII digits that no ASCII letter touches
#: (``2026`` and the ``12`` of ``12月``, not the ``6`` of ``ipv6``).
_NUMBER = re.compile("(?<![a-z0-9])[0-9]+(?![a-z0-9])")


def anchor_form(line: str) -> str:
    """*line* as anchors compare it: case-folded, with punctuation and symbols dropped
    and runs of spaces made one (quotes and dashes differ between two sites' copies),
    and every number made ``0`` (a copy with its dates, prices or version numbers
    changed holds the same paragraphs, and is found; the share check that confirms it
    reads numbers as they are); the pure-Python
    twin of the accelerator's."""
    return _NUMBER.sub("0", squeeze(line.casefold()))


def to_signed32(value: int) -> int:
    return value - (1 << 32) if value >= 1 << 31 else value


def anchor_of(form: str, seed: bytes | int | None = None) -> int:
    """The anchor of a unit whose :func:`anchor_form` is *form*: the low 32 bits of its
    term hash, signed."""
    return to_signed32(hash_term(form, seed) & _MASK32)


#: ``(words of all units, [(size, unit) of the long ones])``
Sized = tuple[int, list[tuple[int, str]]]


def unit_sizes(units: list[str], min_chars: int) -> Sized:
    """``(words of all units, [(size, unit) for each unit of at least min_chars
    characters])``, sizes by :func:`words` (the pure-Python twin of the accelerator's)."""
    sized = [(words(unit), unit) for unit in units if len(unit) >= min_chars]
    rest = sum(words(unit) for unit in units if len(unit) < min_chars)
    return rest + sum(size for size, _ in sized), sized


def _ranked(
    units: list[str], min_chars: int, sizing: Callable[..., Sized] = unit_sizes
) -> tuple[int, int, list[tuple[int, str]]]:
    """``(words of all units, words of the long ones, [(size, unit) of the long ones,
    largest first, ties by their text])``, sized by *sizing* (:func:`unit_sizes`)."""
    total, sized = sizing(units, min_chars)
    sized.sort(key=lambda s: (-s[0], s[1]))
    return total, sum(size for size, _ in sized), sized


#: ``(words of all units, words of the long ones, [(size, form, is a paragraph) of the long ones
#: ranked, up to the one that makes count distinct forms], whether long ones are left after
#: it)``
Formed = tuple[int, int, list[tuple[int, str, bool]], bool]


def _formed(
    ranked: tuple[int, int, list[tuple[int, str]]],
    min_chars: int,
    count: int,
    form_of: Callable[[str], str] = anchor_form,
) -> Formed:
    """*ranked* (of :func:`_ranked`) with the units' forms by *form_of*, up to the one
    that makes *count* distinct forms of at least *min_chars* characters: only the units
    that may become anchors are normalised."""
    total, long_words, sized = ranked
    forms, distinct = [], set()
    for at, (size, unit) in enumerate(sized, 1):
        form = form_of(unit)
        forms.append((size, form, _is_paragraph(unit, form, min_chars)))
        if len(form) >= min_chars:
            distinct.add(form)
            if len(distinct) == count:
                return total, long_words, forms, at < len(sized)
    return total, long_words, forms, False


#: A run of short lines ends after a line whose hash is 0 modulo this (once the run is
#: long enough to be an anchor): about one line in four.
RUN_BOUNDARY = 4


def line_runs(lines: list[str], min_chars: int = MIN_LINE_CHARS) -> list[str]:
    """The units of a text made of short lines: runs of consecutive lines, each ended by a
    line chosen by its own content (its hash, see :data:`RUN_BOUNDARY`) once the run is
    *min_chars* long. Where a run ends depends on the lines alone, not on their place: a
    copy with a line deleted or inserted, or cut short, differs in the runs around the
    edit only, and shares the others (content-defined chunking, as rsync's). A line long
    enough to be an anchor is a unit of its own."""
    form_of = _ANCHOR_FORM or anchor_form
    runs: list[str] = []
    run: list[str] = []
    size = -1  # the run's form: its lines' forms, a space between each two
    for line in lines:
        form = form_of(line)
        if not form:
            continue
        if len(form) >= min_chars:
            if run:  # a paragraph ends the run before it
                runs.append("\n".join(run))
                run, size = [], -1
            runs.append(line)
            continue
        run.append(line)
        size += len(form) + 1
        if (
            size >= min_chars
            and zlib.crc32(form.encode("utf-8", "surrogatepass")) % RUN_BOUNDARY == 0
        ):
            runs.append("\n".join(run))
            run, size = [], -1
    if run:
        runs.append("\n".join(run))
    return runs


def text_units(text: str, min_chars: int = MIN_LINE_CHARS) -> list[str]:
    """The units of *text* that :func:`text_anchors` anchors: the sentences of a
    hard-wrapped text (see :func:`units`); else its paragraphs, the sentences of a line
    that is a text squeezed into one (see :func:`sentence_units`), and its short lines and
    short sentences in runs (see :func:`line_runs`): a text with one squeezed line keeps
    the runs of its other lines."""
    lines = text.splitlines()
    found = units(lines) if may_be_wrapped(lines) else lines
    if found is not lines:
        return sentence_units(found)
    return line_runs(sentence_units(lines), min_chars)


def _chosen(
    forms: list[tuple[int, str, bool]], seed: bytes | int | None, count: int, min_chars: int
) -> dict[int, tuple[int, bool]]:
    """``anchor -> (size, is a paragraph)`` of the first *count* distinct anchors of
    *forms*."""
    chosen: dict[int, tuple[int, bool]] = {}
    for size, form, paragraph in forms:
        if len(form) >= min_chars:
            chosen.setdefault(anchor_of(form, seed), (size, paragraph))
            if len(chosen) == count:
                break
    return chosen


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
    ranked = _ranked(text_units(text, min_chars), min_chars, _UNIT_SIZES or unit_sizes)
    form_of = _ANCHOR_FORM or anchor_form
    total, long_words, forms, more = _formed(ranked, min_chars, count, form_of)
    if not forms or not total:
        return Anchors()
    chosen = _chosen(forms, seed, count, min_chars)
    if len(chosen) < count and more:
        # Two distinct forms of one anchor (once in four billion pairs): all the forms.
        chosen = _chosen(
            _formed(ranked, min_chars, sys.maxsize, form_of)[2], seed, count, min_chars
        )
    if not chosen:
        return Anchors()
    if more and not any(paragraph for _, paragraph in chosen.values()):
        _with_largest_paragraph(chosen, ranked[2][len(forms) :], seed, min_chars)
    cover = min(1000, 1000 * long_words // total)
    sizes = tuple(size for size, _ in chosen.values())
    paragraphs = tuple(anchor for anchor, (_, paragraph) in chosen.items() if paragraph)
    return Anchors(tuple(chosen), sizes, sum(sizes), cover, paragraphs)


def _is_paragraph(unit: str, form: str, min_chars: int) -> bool:
    """Whether *unit* (of *form*) is a paragraph: one line (not a run of short lines) of
    at least twice *min_chars* (an entry of a list, a heading, a table of contents' line
    with its description, is shorter)."""
    return "\n" not in unit and len(form) >= 2 * min_chars


def _with_largest_paragraph(
    chosen: dict[int, tuple[int, bool]],
    rest: list[tuple[int, str]],
    seed: bytes | int | None,
    min_chars: int,
) -> None:
    """Make the largest paragraph of *rest* (the ranked units not taken) the last of
    *chosen*, where none of those is a paragraph: a page's lists can outweigh its
    paragraphs, and :meth:`~scrapy_simhash.anchors.Anchors.shares_a_paragraph` must see
    one of them."""
    form_of = _ANCHOR_FORM or anchor_form
    for size, unit in rest:
        if "\n" in unit or len(unit) < 2 * min_chars:
            continue
        form = form_of(unit)
        if _is_paragraph(unit, form, min_chars):
            anchor = anchor_of(form, seed)
            if anchor not in chosen:
                del chosen[next(reversed(chosen))]
                chosen[anchor] = (size, True)
            return


_UNIT_SIZES = compiled("unit_sizes")
_ANCHOR_FORM = compiled("anchor_form")


def anchor_lines(text: str, seed: bytes | int | None = None) -> dict[int, str]:
    """``anchor -> unit`` for every unit of *text* long enough to be an anchor: the
    paragraphs (or sentences) behind a containment verdict, for people to read."""
    lines = {}
    form_of = _ANCHOR_FORM or anchor_form
    for line in text_units(text):
        form = form_of(line)
        if len(form) >= MIN_LINE_CHARS:
            lines.setdefault(anchor_of(form, seed), line.strip())
    return lines
