from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_simhash.exceptions import ConfigurationError
from scrapy_simhash.index.blocks import BlockPlan, default_blocks


@pytest.mark.parametrize(
    ("k", "blocks", "tables", "key_bits"),
    [(3, 4, 4, {16}), (3, 5, 10, {25, 26}), (3, 6, 20, {31, 32, 33}), (0, 1, 1, {64})],
)
def test_table_shapes(k, blocks, tables, key_bits):
    plan = BlockPlan(max_distance=k, blocks=blocks)
    assert plan.table_count == tables
    assert {plan.key_bits(t) for t in range(tables)} == key_bits
    assert sum(width for _, width in plan.spans) == 64


def test_default_blocks():
    assert default_blocks(3) == 5


@pytest.mark.parametrize(
    ("k", "blocks", "message"),
    [
        (3, 3, "blocks=3 must be greater than max_distance=3; use 4 or more"),
        (3, 65, "at most 64"),
        (3, 20, "tables"),
        (-1, 4, "between 0 and 31"),
    ],
)
def test_invalid_plans_say_what_to_use(k, blocks, message):
    with pytest.raises(ConfigurationError, match=message):
        BlockPlan(max_distance=k, blocks=blocks)


def test_keys_fit_their_width():
    plan = BlockPlan(3, 5)
    keys = plan.keys(2**64 - 1)
    assert keys == [2 ** plan.key_bits(t) - 1 for t in range(plan.table_count)]
    assert plan.keys(0) == [0] * plan.table_count


pair_within_k = st.tuples(
    st.integers(0, 2**64 - 1),
    st.sampled_from([(3, 4), (3, 5), (3, 6), (2, 3), (1, 2), (4, 6)]),
    st.data(),
)


@pytest.mark.slow
@settings(max_examples=500, deadline=None)  # 500 examples; no deadline on a loaded machine
@given(pair_within_k)
def test_every_pair_within_k_shares_a_key(args):
    """The pigeonhole guarantee: recall is exact, not probabilistic."""
    fp, (k, blocks), data = args
    plan = BlockPlan(max_distance=k, blocks=blocks)
    flips = data.draw(st.sets(st.integers(0, 63), max_size=k))
    other = fp
    for bit in flips:
        other ^= 1 << bit
    shared = [a == b for a, b in zip(plan.keys(fp), plan.keys(other), strict=True)]
    assert any(shared)


def test_a_pair_beyond_k_can_miss_every_table():
    # The guarantee is tight: k + 1 flips, one per block, share no key with b = k + 1.
    plan = BlockPlan(max_distance=3, blocks=4)
    fp = 0
    other = sum(1 << shift for shift, _ in plan.spans)
    assert not any(a == b for a, b in zip(plan.keys(fp), plan.keys(other), strict=True))
