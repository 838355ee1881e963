"""The compiled removal of stop words leaves exactly the counts of its Python twin."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrapy_simhash.analysis.function_words import (
    _FILTER_BITS,
    _FUNCTION_WORD_FILTER,
    _LANGUAGE_MASKS,
    _LANGUAGES_OF,
    MIN_LANGUAGE_HITS,
    _remove_stop_words_python,
    remove_stop_words,
    remove_stop_words_compiled,
)

compiled = remove_stop_words_compiled

# Function words of one language, of several (ties between languages), and of none.
_WORDS = [
    *("de", "la", "que", "el", "und", "het", "och", "der", "the", "and", "og", "en", "i"),
    *("jest", "hogy", "che", "sunt", "и", "не", "και", "pro", "tram", "mayor", "e", "na"),
]


def both(counts: dict, *filter_: bytes) -> tuple[list, list, object]:
    """(the Python form's items, the compiled form's items, what the compiled form said),
    the compiled form given the function words' filter (or *filter_*)."""
    slow, fast = dict(counts), dict(counts)
    _remove_stop_words_python(slow)
    said = compiled(fast, _LANGUAGE_MASKS, MIN_LANGUAGE_HITS, *(filter_ or [_FUNCTION_WORD_FILTER]))
    return list(slow.items()), list(fast.items()), said


@pytest.mark.needs_compiled
@given(st.dictionaries(st.sampled_from(_WORDS), st.integers(1, 5), max_size=16))
def test_same_counts_as_python(counts):
    slow, fast, said = both(counts)
    assert said is True
    assert fast == slow


@pytest.mark.needs_compiled
@given(
    st.dictionaries(
        st.sampled_from(_WORDS) | st.text(min_size=1, max_size=6), st.integers(1, 5), max_size=24
    )
)
def test_same_counts_as_python_with_and_without_the_filter(counts):
    # Any word: most are ruled out by the filter, a few pass it and are looked up.
    slow, fast, said = both(counts)
    assert said is True
    assert fast == slow
    assert both(counts, b"\xff" * (_FILTER_BITS // 8))[1] == slow  # every word passes
    unfiltered = dict(counts)
    compiled(unfiltered, _LANGUAGE_MASKS, MIN_LANGUAGE_HITS)
    assert list(unfiltered.items()) == slow


@pytest.mark.needs_compiled
def test_the_filter_rules_words_out():
    counts = {"the": 3, "and": 2, "debian": 1}
    # An empty filter rules every word out: nothing is looked up, nothing removed.
    assert compiled(counts, _LANGUAGE_MASKS, MIN_LANGUAGE_HITS, bytes(_FILTER_BITS // 8))
    assert counts == {"the": 3, "and": 2, "debian": 1}
    with pytest.raises(ValueError, match="filter must be"):
        compiled(counts, _LANGUAGE_MASKS, MIN_LANGUAGE_HITS, b"\xff" * 16)


def test_the_filter_passes_every_function_word_and_few_others():
    passed = [word for word in _LANGUAGE_MASKS if _passes(word)]
    assert len(passed) == len(_LANGUAGE_MASKS)
    others = [f"w{n}" for n in range(20_000)]
    assert sum(map(_passes, others)) < 0.06 * len(others)


def _passes(word: str) -> bool:
    value = hash(word) & 0xFFFF_FFFF_FFFF_FFFF
    bits = (value & (_FILTER_BITS - 1), (value >> 16) & (_FILTER_BITS - 1))
    return all(_FUNCTION_WORD_FILTER[bit >> 3] >> (bit & 7) & 1 for bit in bits)


@pytest.mark.needs_compiled
@given(st.dictionaries(st.sampled_from(_WORDS), st.integers(-3, 4), max_size=16))
def test_same_counts_with_zero_and_negative_counts(counts):
    # Counts no text gives, which the hits still add up as Python's ints do.
    slow, fast, _ = both(counts)
    assert fast == slow


@pytest.mark.needs_compiled
def test_every_function_word_alone_and_in_pairs():
    words = sorted(_LANGUAGES_OF)
    for i, word in enumerate(words):
        for count in (1, MIN_LANGUAGE_HITS):
            slow, fast, _ = both({"filler": 2, word: count, words[i - 1]: MIN_LANGUAGE_HITS})
            assert fast == slow, word


@pytest.mark.needs_compiled
@pytest.mark.parametrize(
    "counts",
    [
        {"de": 2**62, "que": 2**62},  # the hits of Spanish overflow 64 bits
        {"de": 2**70},
        {"de": 3.0, "the": 1},  # not an int
        {"de": True, "la": 2},  # a bool is an int, not exactly one
        {("de",): 3, "la": 3},  # not a str
    ],
)
def test_counts_it_leaves_to_python(counts):
    fast = dict(counts)
    assert compiled(fast, _LANGUAGE_MASKS, MIN_LANGUAGE_HITS) is False
    assert fast == counts
    slow = dict(counts)
    _remove_stop_words_python(slow)
    remove_stop_words(fast)
    assert list(fast.items()) == list(slow.items())


def test_removes_the_stop_words_of_the_text_language():
    counts = {"el": 2, "gobierno": 1, "de": 3, "la": 2, "ciudad": 1, "the": 1, "und": 1}
    remove_stop_words(counts)
    # Spanish and English ones go; German "und" is a word of a Spanish text.
    assert counts == {"gobierno": 1, "ciudad": 1, "und": 1}
    few = {"pro": 1, "de": 1, "debian": 4, "the": 1}
    remove_stop_words(few)
    assert few == {"pro": 1, "de": 1, "debian": 4}  # too little Spanish to tell
