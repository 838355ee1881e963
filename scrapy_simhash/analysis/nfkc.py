"""NFKC of a text, normalising only the short stretches that need it.

``unicodedata.normalize("NFKC", text)`` looks every character up, and a Chinese text is
never already normal (its full-width punctuation is folded), so the whole text pays: a
tenth of the analysis of a page. Normalisation never reaches across a *boundary*: a
character with combining class 0 that normalisation leaves alone and that never composes
with what precedes it (UAX #15, "stable code points"). Cut at such boundaries, the pieces
normalise independently, so only the stretches that hold other characters are normalised,
each from the boundary before it: the same string as normalising the whole text.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterable

from .speedups import compiled

#: The compiled search for runs, and the compiled normalisation of them (None: the
#: regular expression and the loop below do the same).
marked_runs = compiled("marked_runs")
normalize_runs = compiled("normalize_runs")

# No character in these blocks decomposes, combines or is composed with: CJK ideographs,
# Hangul syllables (composed algorithmically, always normal), surrogates, private use.
_PLAIN_BMP = ((0x3400, 0x4DC0), (0x4E00, 0xA000), (0xAC00, 0xD7A4), (0xD800, 0xF900))
# Hangul vowel and trailing jamo compose with the syllable before them; no decomposition
# in the database says so.
_HANGUL_SECOND = (*range(0x1161, 0x1176), *range(0x11A8, 0x11C3))


def _bmp_to_check() -> list[int]:
    points: list[int] = []
    start = 0
    for first, end in _PLAIN_BMP:
        points.extend(range(start, first))
        start = end
    points.extend(range(start, 0x10000))
    return points


@functools.cache
def _not_boundaries() -> frozenset[int]:
    """The BMP code points before which a text may not be cut (built once, ~50 ms)."""
    normalize, combining, decomposition = (
        unicodedata.normalize,
        unicodedata.combining,
        unicodedata.decomposition,
    )
    bmp = _bmp_to_check()
    points = set(_HANGUL_SECOND)
    points.update(p for p in bmp if combining(c := chr(p)) or normalize("NFKC", c) != c)
    # The second character of a canonical pair composes with the first one before it.
    for p in (*bmp, *range(0x10000, 0x20000)):
        mapping = decomposition(chr(p))
        if mapping and not mapping.startswith("<") and len(pair := mapping.split()) == 2:
            points.add(int(pair[1], 16))
    return frozenset(p for p in points if p < 0x10000)


@functools.cache
def table_runs(points: frozenset[int] | None = None) -> Callable[[str], list[tuple[int, int]]]:
    """text -> the spans of its runs of characters of *points* (BMP code points; by default
    those that are no boundary) and of characters beyond the BMP (rare in text; it keeps
    the search a lookup per character): in C (``scrapy_simhash._speedups``), from a
    bitmap."""
    if marked_runs is None:
        raise ImportError("scrapy_simhash._speedups is not built")
    bitmap = _bitmap(points)
    return lambda text: marked_runs(text, bitmap)  # type: ignore[misc]


@functools.cache
def _bitmap(points: frozenset[int] | None = None) -> bytes:
    """A bit per BMP code point, least significant first: set for *points* (by default
    those that are no boundary)."""
    table = bytearray(0x10000 // 8)
    for p in _not_boundaries() if points is None else points:
        table[p >> 3] |= 1 << (p & 7)
    return bytes(table)


@functools.cache
def regex_runs(points: frozenset[int] | None = None) -> Callable[[str], Iterable[tuple[int, int]]]:
    """:func:`table_runs` with a regular expression (a bitmap in ``re`` for the BMP)."""
    ranges: list[list[int]] = []
    for p in sorted(_not_boundaries() if points is None else points):
        if ranges and ranges[-1][1] == p - 1:
            ranges[-1][1] = p
        else:
            ranges.append([p, p])
    members = "".join(f"\\u{a:04x}-\\u{b:04x}" for a, b in ranges)
    pattern = re.compile(f"[{members}\\U00010000-\\U0010ffff]+")
    return lambda text: [match.span() for match in pattern.finditer(text)]


# Short pieces (up to four characters) the compiled normalize_runs normalised, and their
# NFKC: a Chinese text normalises a piece at every full-width punctuation mark (with the
# character before it), and the same few hundred ("的，", "件，") recur on every page.
_NORMALIZED: dict[str, str] = {}
_CACHE_SIZE = 20_000


def nfkc(text: str) -> str:
    """``unicodedata.normalize("NFKC", text)``, in a fraction of its time on CJK text."""
    if unicodedata.is_normalized("NFKC", text):
        return text
    if normalize_runs is not None:
        if len(_NORMALIZED) > _CACHE_SIZE:
            _NORMALIZED.clear()
        return normalize_runs(text, _bitmap(), unicodedata.normalize, "NFKC", _NORMALIZED)
    return _normalize_runs_python(text, regex_runs(), unicodedata.normalize, "NFKC")


def _normalize_runs_python(
    text: str,
    find_runs: Callable[[str], Iterable[tuple[int, int]]],
    normalize: Callable[[str, str], str],
    form: str,
) -> str:
    """*text* with each of the runs *find_runs* finds normalised by ``normalize(form,
    run)``, from the character before it: the pure-Python form of the compiled
    ``normalize_runs``, which finds the runs with a bitmap."""
    pieces = []
    done = 0
    for start, end in find_runs(text):
        # From the boundary before the run: the character before it (a starter that
        # what follows may compose with, or combining marks may reorder around).
        if start:  # a run starts at least a character after the one before ended
            start -= 1
        pieces.append(text[done:start])
        pieces.append(normalize(form, text[start:end]))
        done = end
    pieces.append(text[done:])
    return "".join(pieces)
