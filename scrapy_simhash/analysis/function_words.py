"""Function words ("the", "de", "und"): the stop words of a text's language, which are no
terms. A text's language is the one whose function words occur most often in it.

:func:`remove_stop_words` has two forms that leave the same counts for any input:
:func:`_remove_stop_words_python`, and a compiled one (``scrapy_simhash._speedups``, built
on installation where a C compiler is present; ``SCRAPY_SIMHASH_PURE_PYTHON=1`` chooses
the Python one) that reads each word's languages as a bitmask, in a fraction of the time.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from .speedups import compiled

#: English function words, as common in every English page as "the" (jieba's own list
#: holds 31 of them; these are the words of highest frequency in general English text).
ENGLISH_STOP_WORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because
    been before being below between both but by can could did do does doing down
    during each few for from further had has have having he her here hers herself
    him himself his how i if in into is it its itself just let me more most my
    myself no nor not now of off on once one only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves
    then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves s t d ll m re ve
    """.split()  # noqa: SIM905 (a list literal takes a line per word)
)


#: Languages whose function words are not features either, in a text written in them.
#: Words unknown to jieba's IDF dictionary all get its median IDF, so without these lists
#: "de", "que", "und", "der" would be among the heaviest terms of every Spanish or German
#: page, and distinct pages of one language would share most of their fingerprint
#: (measured: 4 false drops among 884 real pages of many sites; 1 with the lists, and that
#: one a real copy). Only the list of the text's own language applies: "mayor" is a
#: Spanish function word and an English noun.
STOP_WORD_LANGUAGES = (
    "bulgarian",
    "catalan",
    "czech",
    "danish",
    "dutch",
    "finnish",
    "french",
    "german",
    "greek",
    "hungarian",
    "indonesian",
    "italian",
    "malaysian",
    "norwegian",
    "polish",
    "portuguese",
    "romanian",
    "russian",
    "slovak",
    "spanish",
    "swedish",
    "turkish",
    "ukrainian",
)


#: Occurrences of a language's function words that tell a text's language at least (fewer:
#: too little to tell, as "Pro" in a Chinese text is no Spanish).
MIN_LANGUAGE_HITS = 3


def _stop_word_lists() -> dict[str, frozenset[str]]:
    """Language -> its stop words, as the ``stop-words`` package lists them (words of
    letters only, lower-cased); English is ours."""
    import stop_words

    letters_only = re.compile(r"^[^\W\d_]+$")
    lists = {"english": ENGLISH_STOP_WORDS}
    for language in STOP_WORD_LANGUAGES:
        lists[language] = frozenset(
            w.lower() for w in stop_words.get_stop_words(language) if letters_only.match(w)
        )
    return lists


def _languages_of(lists: dict[str, frozenset[str]]) -> dict[str, list[str]]:
    """Word -> the languages it is a function word of, to tell a text's language by them."""
    languages: dict[str, list[str]] = {}
    for language, words in lists.items():
        for word in words:
            languages.setdefault(word, []).append(language)
    return languages


_STOP_WORD_LISTS = _stop_word_lists()
_LANGUAGES_OF = _languages_of(_STOP_WORD_LISTS)
# What applies to a text of each language, built once rather than for every text.
_STOP_WORDS_FOR = {
    language: words | ENGLISH_STOP_WORDS for language, words in _STOP_WORD_LISTS.items()
}


def stop_words_for(counts: Counter[str] | dict[str, int]) -> frozenset[str]:
    """The stop words that apply to a text whose words occur *counts* times: English
    ones, and those of the language whose function words occur most often in it."""
    return _stop_words_among(counts, counts.keys() & _LANGUAGES_OF.keys())


def _stop_words_among(counts: Counter[str] | dict[str, int], common: set[str]) -> frozenset[str]:
    """:func:`stop_words_for`, given the text's words that are function words of some
    language, *common* (found by a set intersection in C, not a lookup per word in the
    large table)."""
    if not common:
        return ENGLISH_STOP_WORDS
    hits: dict[str, int] = {}  # not a Counter: its __missing__ is a Python call per miss
    for word in common:
        count = counts[word]
        for language in _LANGUAGES_OF[word]:
            hits[language] = hits.get(language, 0) + count
    best = max(hits.values())
    leaders = [name for name, count in hits.items() if count == best]
    if len(leaders) > 1 and "english" not in leaders:
        # Languages with as many hits: the one whose function words come first in the text
        # (and first in _LANGUAGES_OF's order, for one word), as the text's order fills
        # a dict of hits.
        hits = {}
        for word in [word for word in counts if word in common]:
            for language in _LANGUAGES_OF[word]:
                hits[language] = 0
        language = next(name for name in hits if name in leaders)
    else:
        language = "english" if "english" in leaders else leaders[0]
    if best < MIN_LANGUAGE_HITS:
        return ENGLISH_STOP_WORDS
    return _STOP_WORDS_FOR[language]


def _remove_stop_words_python(counts: Counter[str] | dict[str, int]) -> None:
    """Remove from *counts* (word -> how often it occurs in a text) the stop words that
    apply to the text (see :func:`stop_words_for`)."""
    # Stop words are known once the text's language is: by its function words, which are
    # also the only words that can be stop words.
    common = counts.keys() & _LANGUAGES_OF.keys()
    for word in _stop_words_among(counts, common).intersection(common):
        counts.pop(word)  # dict.pop, in C (Counter.__delitem__ is Python)


# Word -> the languages it is a function word of, as bits in the order of _STOP_WORD_LISTS
# (English first, bit 0), for the compiled form.
_LANGUAGE_BITS = {language: 1 << bit for bit, language in enumerate(_STOP_WORD_LISTS)}
_LANGUAGE_MASKS = {
    word: sum(_LANGUAGE_BITS[language] for language in languages)
    for word, languages in _LANGUAGES_OF.items()
}
remove_stop_words_compiled = compiled("remove_stop_words")
#: Bits of the compiled form's filter (a power of two, as in _speedups_stop_words.c).
_FILTER_BITS = 1 << 16


def _filter_of(words: Iterable[str]) -> bytes:
    """Two bits per word of *words*, from its hash (this process's: str hashes are salted
    per process), for the compiled form to rule out most words before it looks them up:
    with the 6,000 function words, about 3% of other words pass."""
    bits = bytearray(_FILTER_BITS // 8)
    for word in words:
        value = hash(word) & 0xFFFF_FFFF_FFFF_FFFF
        for bit in (value & (_FILTER_BITS - 1), (value >> 16) & (_FILTER_BITS - 1)):
            bits[bit >> 3] |= 1 << (bit & 7)
    return bytes(bits)


_FUNCTION_WORD_FILTER = _filter_of(_LANGUAGE_MASKS)


def remove_stop_words(counts: Counter[str] | dict[str, int]) -> None:
    """:func:`_remove_stop_words_python`, compiled where the accelerator is built."""
    compiled_form = remove_stop_words_compiled
    if compiled_form is None or not compiled_form(
        counts, _LANGUAGE_MASKS, MIN_LANGUAGE_HITS, _FUNCTION_WORD_FILTER
    ):
        _remove_stop_words_python(counts)
