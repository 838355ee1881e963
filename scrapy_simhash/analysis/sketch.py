"""The sketch of a text (see :mod:`scrapy_simhash.sketch`): its words as anchors compare
them, every number one token, hashed in runs of :data:`~scrapy_simhash.sketch.SHINGLE_WORDS`
and sampled by value. A run is hashed as one string (MurmurHash3, or BLAKE2b with a
secret), as the fingerprint's terms are: a page's shingles are as hard to guess."""

from __future__ import annotations

import re
from bisect import bisect_left

from ..sketch import PROBE_SAMPLES, SHINGLE_WORDS, Sketch
from .anchors import squeeze
from .fingerprint import hash_term

#: A token: a run of letters and digits in a spaced script, or one Han, kana or Hangul
#: character (a word of its own, as :func:`~scrapy_simhash.analysis.anchors.words` counts).
_UNSPACED = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(f"[{_UNSPACED}]|[^\\s{_UNSPACED}]+")
#: Every number is one token: a copy with its dates, prices or version numbers changed
#: holds the same text. Not the digits of a word (``mp3``, ``ipv6``, ``word12``): beside
#: a letter of a spaced script a digit is part of the word.
_LETTER = "A-Za-z\u00c0-\u024f\u0370-\u03ff\u0400-\u04ff"
_NUMBER = re.compile(rf"(?<![{_LETTER}\d])\d+(?:[.,]\d+)*(?![{_LETTER}\d])")


def tokens(text: str) -> list[str]:
    """The words of *text* as sketches compare them."""
    return _TOKEN.findall(squeeze(_NUMBER.sub("0", text.casefold())))


def shingle_hashes(text: str, seed: bytes | int | None = None) -> list[int]:
    """The distinct 64-bit hashes of the shingles of *text*, sorted; a text shorter than
    a shingle is one shingle. Hashed as the fingerprint's terms are (with *seed*)."""
    words = tokens(text)
    if not words:
        return []
    span = min(SHINGLE_WORDS, len(words))
    shingles = {" ".join(words[i : i + span]) for i in range(len(words) - span + 1)}
    return sorted(hash_term(shingle, seed) for shingle in shingles)


def text_sketch(text: str, seed: bytes | int | None = None) -> Sketch:
    """The sketch of *text* as the page being checked keeps it: its shingle hashes at the
    lowest level that leaves at most :data:`~scrapy_simhash.sketch.PROBE_SAMPLES`."""
    hashes = shingle_hashes(text, seed)
    level = 0
    while bisect_left(hashes, 1 << (64 - level)) > PROBE_SAMPLES:
        level += 1
    kept = hashes[: bisect_left(hashes, 1 << (64 - level))]
    return Sketch(level, len(hashes), tuple(kept), whole=True)
