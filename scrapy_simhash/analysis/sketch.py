"""The sketch of a text (see :mod:`scrapy_simhash.sketch`): its words as anchors compare
them, but with their numbers as they are, hashed in runs of
:data:`~scrapy_simhash.sketch.SHINGLE_WORDS` and sampled by value. Words are hashed as the
fingerprint's terms are (MurmurHash3, or BLAKE2b with a secret): a page's shingles are as
hard to guess.

Anchors read every number as ``0``, so that a copy with its dates or prices changed is
still *found*; the share check that *confirms* a drop reads numbers as they are, so that
pages whose numbers are what they say (results, prices, timetables, a table of figures)
are not dropped for the words around them. A copy with a date changed still holds nearly
all of its text."""

from __future__ import annotations

import re
import sys
from bisect import bisect_left

from ..sketch import PROBE_SAMPLES, SHINGLE_WORDS, Sketch
from .anchors import squeeze
from .fingerprint import hash_term
from .speedups import compiled

#: A word: a run of characters other than spaces in a spaced script, or one Han, kana or
#: Hangul character (a word of its own, as :func:`~scrapy_simhash.analysis.anchors.words`
#: counts).
_UNSPACED = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(f"[{_UNSPACED}]|[^ {_UNSPACED}]+")
_SKETCH_FORM = compiled("sketch_form")


def sketch_form(text: str) -> str:
    """*text* as sketches compare it: as anchors do (case-folded, punctuation dropped,
    single spaces between words), its numbers as they are."""
    if _SKETCH_FORM is not None:
        return _SKETCH_FORM(text)
    return squeeze(text.casefold())


def tokens(text: str) -> list[str]:
    """The words of *text* as sketches compare them."""
    return _TOKEN.findall(sketch_form(text))


_MASK64 = (1 << 64) - 1
_ODD = (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F)


def _mix(x: int) -> int:
    """splitmix64's finaliser: every bit of the result depends on every bit of *x*."""
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & _MASK64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)


def combine_shingles(hashes: list[int], span: int) -> list[int]:
    """The sorted distinct hashes of every run of *span* consecutive word *hashes* (a list
    shorter than a run is one run): each word folded in with an odd multiplier and
    :func:`_mix` (the pure-Python twin of the accelerator's ``shingles``)."""
    if not hashes:
        return []
    span = min(span, len(hashes))
    runs = set()
    for i in range(len(hashes) - span + 1):
        x = hashes[i]
        for j in range(1, span):
            x = _mix((x * _ODD[j - 1] + hashes[i + j]) & _MASK64)
        runs.add(_mix(x))
    return sorted(runs)


_SHINGLES = compiled("shingles")
_TEXT_SHINGLES = compiled("text_shingles")


def shingle_hashes(
    text: str, seed: bytes | int | None = None, limit: int | None = None
) -> tuple[int, list[int]]:
    """``(count, hashes)``: how many shingles *text* has (repeats counted), and the
    smallest *limit* of their distinct 64-bit hashes (all without one), sorted; a text
    shorter than a shingle is one shingle. Each word is hashed as the fingerprint's
    terms are (with *seed*), once; a shingle's hash folds its words'
    (:func:`combine_shingles`)."""
    form = sketch_form(text)
    if _TEXT_SHINGLES is not None and not seed:
        found = _TEXT_SHINGLES(form, SHINGLE_WORDS, sys.maxsize if limit is None else limit)
        if found is not None:
            return found
    known: dict[str, int] = {}
    hashes = []
    for word in _TOKEN.findall(form):
        if word not in known:
            known[word] = hash_term(word, seed)
        hashes.append(known[word])
    runs = (_SHINGLES or combine_shingles)(hashes, SHINGLE_WORDS)
    count = max(1, len(hashes) - SHINGLE_WORDS + 1) if hashes else 0
    return count, runs if limit is None else runs[:limit]


def text_sketch(text: str, seed: bytes | int | None = None) -> Sketch:
    """The sketch of *text* as the page being checked keeps it: its shingle hashes at the
    lowest level that leaves at most :data:`~scrapy_simhash.sketch.PROBE_SAMPLES`."""
    count, hashes = shingle_hashes(text, seed, PROBE_SAMPLES + 1)
    level = 0
    while bisect_left(hashes, 1 << (64 - level)) > PROBE_SAMPLES:
        level += 1
    kept = hashes[: bisect_left(hashes, 1 << (64 - level))]
    return Sketch(level, count, tuple(kept), whole=True)
