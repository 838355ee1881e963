"""The compiled count_words gives exactly what the regular expressions give, on any text."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections import Counter

import pytest
from code_points import every_character
from hypothesis import given
from hypothesis import strategies as st

from scrapy_simhash.analysis import words
from scrapy_simhash.analysis import words as words_module
from scrapy_simhash.analysis.words import _count_words_python

compiled = words.count_words_compiled

# Every code point but the surrogates (a str may hold them, UTF-8 may not).


def both(text: str) -> tuple[tuple[list, str], tuple[list, str]]:
    """(items in order, Han text) from the regular expressions and from the C code."""
    slow: Counter[str] = Counter()
    fast: Counter[str] = Counter()
    slow_han = _count_words_python(text, slow)
    fast_han = compiled(text, fast)
    return (list(slow.items()), slow_han), (list(fast.items()), fast_han)


@pytest.mark.slow
@pytest.mark.needs_compiled
def test_every_code_point_is_classified_as_re_does():
    # Each character between two spaces, then between two letters, then next to Han:
    # a word character makes a word of its own, joins "a", or splits a Han run.
    for glue in (" ", "a", "中"):
        slow, fast = both(glue.join(every_character()))
        assert slow == fast


@pytest.mark.needs_compiled
def test_shuffled_code_points():
    chars = list(every_character()[:0x10000]) + list("中文 abc_1") * 20000
    for seed in range(3):
        random.Random(seed).shuffle(chars)
        slow, fast = both("".join(chars))
        assert slow == fast


@pytest.mark.needs_compiled
def test_words_counts_and_han_runs():
    counts: Counter[str] = Counter()
    han = compiled("Hello 世界, foo_bar 3.11 é中文x hello Hello _ __ _a ٣ ²", counts)
    assert han == "世界\n中文"
    # Single characters only when a decimal digit (any script's), underscores never alone.
    assert list(counts.items()) == [
        ("Hello", 2),
        ("foo_bar", 1),
        ("3", 1),
        ("11", 1),
        ("hello", 1),
        ("_a", 1),
        ("٣", 1),
    ]


@pytest.mark.needs_compiled
@given(
    st.text(alphabet=st.sampled_from("中文a_1 .\u00e9\u0301\u4e00\u9fd5\u9fd6") | st.characters())
)
def test_same_as_regular_expressions(text):
    slow, fast = both(text)
    assert slow == fast


def test_pure_python_is_used_when_asked():
    env = {**os.environ, "SCRAPY_SIMHASH_PURE_PYTHON": "1"}
    code = (
        "from scrapy_simhash.analysis import words; "
        "print(words.count_words is words._count_words_python)"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "True", out.stderr


@pytest.mark.needs_compiled
@given(st.lists(st.text(alphabet="中文的了是a", max_size=3)))
def test_long_words_counted_as_in_python(words):
    slow: Counter[str] = Counter({"debian": 2})
    fast: Counter[str] = Counter({"debian": 2})
    words_module_python = words_module._count_long_words_python
    words_module_python(words, slow)
    words_module.count_long_words_compiled(words, fast)
    assert list(slow.items()) == list(fast.items())
    assert all(len(word) != 1 for word in fast)


@pytest.mark.needs_compiled
@given(
    st.lists(
        st.sampled_from(["foo", "bar", "x1", "été", "中文", "ab\ud800", "\U0001f600z", "7", "42"])
        | st.text(alphabet="abcé1_\ud800\U0001d400", min_size=1, max_size=3),
        max_size=400,
    ),
    st.sampled_from([" ", "\n", "中", "\U0001f600", "-"]),
)
def test_repeated_words_of_every_string_kind(words, glue):
    # Latin-1, UCS-2 and UCS-4 texts; words repeated, and more distinct ones than the
    # compiled form's first table holds.
    slow, fast = both(glue.join(words))
    assert slow == fast


@pytest.mark.needs_compiled
def test_many_distinct_words():
    text = " ".join(f"w{i} x{i % 7} é{i}" for i in range(5000))
    slow, fast = both(text)
    assert slow == fast
    assert len(fast[0]) == 10_000 + 7


@pytest.mark.needs_compiled
def test_counts_already_there_are_added_to():
    # As Counter.update adds: an int by the number of occurrences, a float one at a time
    # (1e16 + 1 rounds back to 1e16, so two additions of 1 differ from one of 2).
    text = "big big small small small new"
    slow = Counter({"big": 1e16, "small": 2, "other": 5})
    fast = Counter(slow)
    _count_words_python(text, slow)
    compiled(text, fast)
    assert list(slow.items()) == list(fast.items())
    assert fast["big"] == 1e16 and fast["small"] == 5 and fast["new"] == 1


@pytest.mark.needs_compiled
def test_counts_whose_addition_changes_the_dict():
    # A count's __add__ is Python code: it may remove the entry being added to (the
    # compiled form holds the count while it adds, and does not crash).
    def meddling_counts() -> Counter[str]:
        class Meddling(int):
            def __add__(self, other):
                counts.clear()
                return int(self) + other

        counts: Counter[str] = Counter({"word": Meddling(1)})
        return counts

    slow, fast = meddling_counts(), meddling_counts()
    _count_words_python("word word other", slow)
    compiled("word word other", fast)
    assert list(slow.items()) == list(fast.items()) == [("word", 3), ("other", 1)]
