"""The compiled combine gives the SimHash that the numpy one gives, for any weights."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrapy_simhash.analysis.fingerprint import (
    Fingerprinter,
    combine_cached,
    combine_numpy,
    simhash,
)
from scrapy_simhash.analysis.fingerprint import combine_compiled as compiled

pytestmark = pytest.mark.skipif(compiled is None, reason="the C accelerator is not built")

_LIMIT = 2.0**63 / 1000  # scaled by 1000, a weight must stay below 2**63


def rows_for(count: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(8 * count)


@given(
    st.lists(
        st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)
        | st.sampled_from([0.0, 0.0005, 0.0015, 2.5e-3, -0.0005, 1.0]),
        min_size=1,
        max_size=200,
    ),
    st.integers(0, 2**32),
)
def test_same_as_numpy(weights, seed):
    rows = rows_for(len(weights), seed)
    assert compiled(rows, weights) == combine_numpy(rows, weights)


@given(st.lists(st.floats(min_value=-_LIMIT, max_value=_LIMIT), min_size=1, max_size=64))
def test_same_as_numpy_near_the_limit_where_sums_wrap(weights):
    rows = rows_for(len(weights), len(weights))
    expected = None
    try:
        expected = combine_numpy(rows, weights)
    except ValueError:
        assert compiled(rows, weights) is None
    else:
        assert compiled(rows, weights) == expected


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, _LIMIT * 2])
def test_weights_out_of_range_raise_in_both(bad):
    pairs = [("a", 1.0), ("b", bad)]
    with pytest.raises(ValueError, match="finite"):
        simhash(pairs)
    rows = rows_for(2, 0)
    assert compiled(rows, [1.0, bad]) is None
    with pytest.raises(ValueError, match="finite"):
        combine_numpy(rows, [1.0, bad])


def test_integer_and_text_weights_as_numpy_takes_them():
    assert simhash([("a", 3), ("b", 2)]) == simhash([("a", 3.0), ("b", 2.0)])
    # numpy converts a numeric string; the compiled combine leaves such input to it.
    assert simhash([("a", "3"), ("b", 2.0)]) == simhash([("a", 3.0), ("b", 2.0)])


_PAIRS = st.lists(
    st.tuples(
        st.text(max_size=6),
        st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)
        | st.sampled_from([0.0, 0.0005, 0.0015, -0.0005]),
    ),
    min_size=1,
    max_size=150,
)


@given(_PAIRS, st.sampled_from([None, b"k" * 16]))
def test_cached_pairs_give_the_simhash_of_the_pairs(pairs, seed):
    cache: dict[str, bytes] = {}
    expected = simhash(pairs, seed, cache=cache)  # fills the cache
    assert combine_cached(pairs, cache) == expected == simhash(pairs, seed)


@given(_PAIRS)
def test_a_fingerprinter_gives_the_same_with_its_cache_cold_and_warm(pairs):
    fingerprinter = Fingerprinter()
    cold = fingerprinter.simhash(pairs)
    assert fingerprinter.simhash(pairs) == cold == simhash(pairs)


def test_cached_pairs_leave_what_is_not_plain_to_the_caller():
    pairs = [("a", 1.5), ("b", 2.0)]
    cache: dict[str, bytes] = {}
    simhash(pairs, cache=cache)
    assert combine_cached(pairs, cache) == simhash(pairs)
    assert combine_cached([("a", 1.5), ("new", 2.0)], cache) is None  # not cached
    assert combine_cached([("a", 1.5), ("b", 2)], cache) is None  # an int weight
    assert combine_cached([("a", 1.5), ["b", 2.0]], cache) is None  # not a tuple
    assert combine_cached([("a", 1.5), ("b", math.inf)], cache) is None  # out of range
    assert combine_cached([], cache) is None
    assert combine_cached(pairs, {"a": cache["a"], "b": b"short"}) is None
    # The caller's answers for those: the same as without the compiled form.
    fingerprinter = Fingerprinter()
    assert fingerprinter.simhash([("a", 1.5), ("b", 2)]) == simhash([("a", 1.5), ("b", 2.0)])
    assert fingerprinter.simhash([]) == 0
    with pytest.raises(ValueError, match="finite"):
        fingerprinter.simhash([("a", 1.5), ("b", math.inf)])
