"""The compiled heaviest gives exactly the (term, weight) pairs of its Python twin."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrapy_simhash.analysis.heaviest import _heaviest_python, heaviest, heaviest_compiled

compiled = heaviest_compiled

# Few IDF values, so that weights tie; the last is the "median" for unknown terms.
_TABLE = {"debian": 7.5, "中文": 9.25, "a": 2.5, "b": 2.5, "\U0001f600x": 13.0}
_MEDIAN = 9.25
#: No IDF of _TABLE (or the median) is above it.
_BOUND = 13.0


def new_idf_into(idf: dict[str, float], calls: list[str]):
    def new_idf(term: str) -> float:
        calls.append(term)
        value = idf[term] = _TABLE.get(term, _MEDIAN)
        return value

    return new_idf


def exact(pairs: list[tuple[str, float]] | None) -> list[tuple[str, str]] | None:
    """The pairs with their weights as hex: -0.0 and 0.0 differ, as any last bit does."""
    return None if pairs is None else [(term, weight.hex()) for term, weight in pairs]


def both(counts, top_n: int, cached: dict[str, float] | None = None, bound: float | None = None):
    """(Python's pairs, the compiled pairs), each from its own copy of the IDF cache; the
    compiled form given *bound*, if any."""
    slow_idf, fast_idf = dict(cached or {}), dict(cached or {})
    slow_calls: list[str] = []
    fast_calls: list[str] = []
    slow = _heaviest_python(counts, slow_idf, new_idf_into(slow_idf, slow_calls), top_n)
    extra = () if bound is None else (bound,)
    fast = compiled(counts, fast_idf, new_idf_into(fast_idf, fast_calls), top_n, *extra)
    if fast is not None and bound is None:  # the same values cached, new terms looked up once
        assert fast_idf == slow_idf
        assert sorted(fast_calls) == sorted(slow_calls) == sorted(set(slow_calls))
    elif fast is not None:  # some terms counted once need no look-up
        assert fast_idf.items() <= slow_idf.items()
        assert set(fast_calls) <= set(slow_calls)
        assert len(fast_calls) == len(set(fast_calls))
    return exact(slow), exact(fast)


_TERMS = st.text(
    alphabet=st.sampled_from("ab中文\U0001f600\ud800\udfffxé") | st.characters(), max_size=4
)
_COUNTS = (
    st.integers(-3, 6)
    | st.integers(2**52, 2**64)
    | st.floats(allow_nan=False, allow_infinity=True)
    | st.sampled_from([0.0, -0.0, 0.5, 1.0, True, False])
)


@pytest.mark.needs_compiled
@given(st.dictionaries(_TERMS, _COUNTS, max_size=60), st.integers(1, 12))
def test_same_as_python(counts, top_n):
    slow, fast = both(counts, top_n)
    assert fast == slow  # never None here: no NaN weight can come of these


@pytest.mark.needs_compiled
@given(st.dictionaries(_TERMS, st.integers(1, 3), max_size=300), st.integers(1, 200))
def test_ties_across_the_cut(counts, top_n):
    # Weights of three values only: the top_n cut falls inside a tie nearly always.
    slow, fast = both(Counter(counts), top_n)
    assert fast == slow


@pytest.mark.needs_compiled
@given(st.dictionaries(_TERMS, _COUNTS, max_size=60), st.integers(1, 12))
def test_same_with_a_bound(counts, top_n):
    slow, fast = both(counts, top_n, bound=_BOUND)
    assert fast == slow


@pytest.mark.needs_compiled
@given(
    st.dictionaries(_TERMS, st.integers(1, 3) | st.sampled_from([0.5, 1.0, 0, -0.0]), max_size=300),
    st.integers(1, 200),
    st.sampled_from([_BOUND, 100.0, math.inf]),
)
def test_same_with_a_bound_across_the_cut(counts, top_n, bound):
    slow, fast = both(Counter(counts), top_n, bound=bound)
    assert fast == slow


@pytest.mark.needs_compiled
def test_a_bound_spares_the_look_ups_of_terms_that_cannot_make_the_cut():
    # 5 terms counted twice (weight 2 x 9.25 = 18.5 > 13.0, the bound), 100 counted once.
    counts = {f"twice{i}": 2 for i in range(5)} | {f"once{i}": 1 for i in range(100)}
    calls: list[str] = []
    pairs = compiled(counts, {}, new_idf_into({}, calls), 5, _BOUND)
    assert [term for term, _ in pairs] == sorted(f"twice{i}" for i in range(5))
    assert sorted(calls) == sorted(f"twice{i}" for i in range(5))
    # Where the cut falls among terms counted once, they are all looked up.
    calls.clear()
    assert both(counts, 6, bound=_BOUND)[0] == exact(
        compiled(counts, {}, new_idf_into({}, calls), 6, _BOUND)
    )
    assert len(calls) == 105


@pytest.mark.needs_compiled
def test_a_term_counted_once_tied_at_the_cut_is_weighed():
    # "a" (once, IDF at the bound) weighs 13.0, as much as each term counted twice: the tie
    # at the cut is broken by the term, and "a" comes first.
    cached = {"a": 13.0} | {term: 6.5 for term in "bcdef"}
    counts = {"a": 1} | dict.fromkeys("bcdef", 2)
    slow, fast = both(counts, 5, cached=cached, bound=13.0)
    assert fast == slow
    assert [term for term, _ in fast] == list("abcde")


@pytest.mark.needs_compiled
def test_equal_weights_are_cut_by_code_point():
    terms = [chr(p) + chr(q) for p in (0x61, 0xE9, 0x4E2D, 0x1F601) for q in range(0x20, 0xA0)]
    random.Random(1).shuffle(terms)
    counts = dict.fromkeys(terms, 1)  # all unknown to the table: all the median IDF
    slow, fast = both(counts, 128)
    assert fast == slow
    assert [term for term, _ in fast] == sorted(terms)[:128]


@pytest.mark.needs_compiled
def test_terms_sharing_their_first_code_points():
    # The compiled sort orders by the first three code points, then by the whole term.
    terms = ["abc", "abcd", "abc\x00", "abd", "ab", "abca", "abc\U0010ffff", "\ud800ab", "ab\ud800"]
    for seed in range(20):
        random.Random(seed).shuffle(terms)
        slow, fast = both(dict.fromkeys(terms, 2), 5)
        assert fast == slow


@pytest.mark.needs_compiled
def test_cached_and_new_idf_mixed():
    counts = Counter({"debian": 3, "中文": 2, "new": 5, "other": 1})
    slow, fast = both(counts, 3, cached={"debian": 1.25, "other": 100.0})
    assert fast == slow
    assert [term for term, _ in fast] == ["other", "new", "中文"]


@pytest.mark.needs_compiled
def test_signed_zero_and_infinity():
    counts = {"p": 0.0, "n": -0.0, "i": math.inf, "m": -math.inf, "z": 0}
    slow, fast = both(counts, 4)
    assert fast == slow
    assert fast[0] == ("i", math.inf.hex())


@pytest.mark.needs_compiled
def test_nan_is_left_to_python():
    counts = {"a": math.nan, "b": 1}
    assert compiled(counts, {}, new_idf_into({}, []), 2) is None
    assert exact(heaviest(counts, {}, new_idf_into({}, []), 2)) == exact(
        _heaviest_python(counts, {}, new_idf_into({}, []), 2)
    )


@pytest.mark.needs_compiled
def test_huge_counts_overflow_as_in_python():
    for function in (_heaviest_python, compiled):
        with pytest.raises(OverflowError):
            function({"a": 1, "b": 10**400}, {}, new_idf_into({}, []), 1)
    # Large but convertible ints round as Python converts them.
    slow, fast = both({"a": 2**53 + 1, "b": 2**63 + 2**11 + 1, "c": 2**1000}, 2)
    assert fast == slow


@pytest.mark.needs_compiled
def test_other_types_are_left_to_python():
    class Loud(Counter):
        def __iter__(self):
            return iter(sorted(super().__iter__(), reverse=True))

    assert compiled({1: 1, "a": 2}, {}, new_idf_into({}, []), 1) is None
    assert compiled({"a": 1.5j}, {}, new_idf_into({}, []), 1) is None
    assert compiled({"a": 1}, {"a": 3}, new_idf_into({}, []), 1) is None  # an int IDF
    # A subclass may iterate in its own way: the dispatcher leaves it to Python.
    counts = Loud({"a": 1, "b": 1})
    assert heaviest(counts, {}, new_idf_into({}, []), 1) == _heaviest_python(
        counts, {}, new_idf_into({}, []), 1
    )


@pytest.mark.needs_compiled
def test_empty_and_bad_top_n():
    assert both({}, 1) == ([], [])
    with pytest.raises(ValueError):
        compiled({"a": 1}, {}, new_idf_into({}, []), 0)


@pytest.mark.needs_compiled
def test_a_large_text_in_any_order():
    rng = random.Random(7)
    counts = {f"w{i}": rng.choice([1, 1, 1, 2, 3, 40]) for i in range(20_000)}
    for order in (sorted(counts), sorted(counts, reverse=True), list(counts)):
        for bound in (None, _BOUND):
            slow, fast = both({term: counts[term] for term in order}, 128, bound=bound)
            assert fast == slow
