"""The compiled removal of stop words leaves exactly the counts of its Python twin."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrapy_simhash.function_words import (
    _LANGUAGE_MASKS,
    _LANGUAGES_OF,
    MIN_LANGUAGE_HITS,
    remove_stop_words,
    remove_stop_words_compiled,
    remove_stop_words_python,
)

compiled = remove_stop_words_compiled
needs_compiled = pytest.mark.skipif(compiled is None, reason="the C accelerator is not built")

# Function words of one language, of several (ties between languages), and of none.
_WORDS = [
    *("de", "la", "que", "el", "und", "het", "och", "der", "the", "and", "og", "en", "i"),
    *("jest", "hogy", "che", "sunt", "и", "не", "και", "pro", "tram", "mayor", "e", "na"),
]


def both(counts: dict) -> tuple[list, list, object]:
    """(the Python form's items, the compiled form's items, what the compiled form said)."""
    slow, fast = dict(counts), dict(counts)
    remove_stop_words_python(slow)
    said = compiled(fast, _LANGUAGE_MASKS, MIN_LANGUAGE_HITS)
    return list(slow.items()), list(fast.items()), said


@needs_compiled
@given(st.dictionaries(st.sampled_from(_WORDS), st.integers(1, 5), max_size=16))
def test_same_counts_as_python(counts):
    slow, fast, said = both(counts)
    assert said is True
    assert fast == slow


@needs_compiled
@given(st.dictionaries(st.sampled_from(_WORDS), st.integers(-3, 4), max_size=16))
def test_same_counts_with_zero_and_negative_counts(counts):
    # Counts no text gives, which the hits still add up as Python's ints do.
    slow, fast, _ = both(counts)
    assert fast == slow


@needs_compiled
def test_every_function_word_alone_and_in_pairs():
    words = sorted(_LANGUAGES_OF)
    for i, word in enumerate(words):
        for count in (1, MIN_LANGUAGE_HITS):
            slow, fast, _ = both({"filler": 2, word: count, words[i - 1]: MIN_LANGUAGE_HITS})
            assert fast == slow, word


@needs_compiled
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
    remove_stop_words_python(slow)
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
