"""The archive job decides as the crawl-time filter does, record for record: on planted
fingerprints against the package's own index, and on feeds built from real stories
against the real Deduplicator over the same ordered items."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from archive_feeds import (
    COMPARED,
    assert_same_as_pipeline,
    edited,
    feed_items,
    job_of,
    pipeline_verdicts,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_simhash.index import open_index
from scrapy_simhash.index.blocks import BlockPlan
from scrapy_simhash.settings import SimhashSettings
from scrapy_simhash.tools.archive import run_local
from scrapy_simhash.tools.archive.batch import (
    EMPTY,
    SHORT,
    SIMHASH,
    Batch,
    decide_batch,
    replay,
)
from scrapy_simhash.tools.archive.candidates import (
    choose_plan,
    near_pairs,
    popcount,
    popcount_by_bytes,
)
from scrapy_simhash.tools.archive.decide import DROPPED, KEPT, NEAR, Edges, decide
from scrapy_simhash.tools.feeds import read_feed, write_feed

PLAN = BlockPlan(max_distance=3, blocks=5)


def chain(start: int, steps: int) -> list[int]:
    """v0..v{steps}: each one bit away from the one before (a different bit each time)."""
    values = [start]
    for step in range(steps):
        values.append(values[-1] ^ (1 << (step * 7 % 64)))
    return values


def same_outcomes(a, b) -> None:
    for name in COMPARED:
        assert getattr(a, name).tolist() == getattr(b, name).tolist(), name


def test_a_chain_keeps_every_fourth_link_as_the_index_does():
    values = chain(0x0123456789ABCDEF, 20)
    records = Batch.of(range(21), [SIMHASH] * 21, values, [f"v{i}" for i in range(21)])
    outcomes = decide_batch(records, Batch.of_pages([]), PLAN, 3)
    assert outcomes.key[outcomes.kept].tolist() == ["v0", "v4", "v8", "v12", "v16", "v20"]
    # v1..v3 match v0, v5..v7 match v4: the nearest earlier kept link.
    assert outcomes.matched[1:4].tolist() == [0, 0, 0]
    assert outcomes.distance[1:4].tolist() == [1, 2, 3]
    with open_index("memory:", max_distance=3, blocks=5) as index:
        outcomes_of_index = [index.check_and_add(v, f"v{i}") for i, v in enumerate(values)]
        kept = [f"v{i}" for i, o in enumerate(outcomes_of_index) if o.match is None]
    assert kept == outcomes.key[outcomes.kept].tolist()


def test_rounds_and_the_order_finish_agree():
    values = chain(77, 20)
    edges = near_pairs(PLAN, 3, np.arange(21), np.array(values, dtype=np.uint64))
    graph = Edges.of(edges.earlier, edges.later, NEAR, edges.distance)
    in_rounds = decide(graph, remainder=0)
    in_order = decide(graph, max_rounds=0)
    assert in_rounds.rounds > 5 and in_rounds.finished_in_order == 0
    assert in_order.finished_in_order == 21
    assert in_rounds.state.tolist() == in_order.state.tolist()
    assert in_rounds.state.tolist() == [KEPT, DROPPED, DROPPED, DROPPED] * 5 + [KEPT]


def planted(seed: int, n: int) -> tuple[Batch, Batch]:
    """*n* records in a shuffled order: random fingerprints, near copies (0-5 bits off),
    chains, short texts, texts without text; and index pages near some of them."""
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 2**64 - 1, n, dtype=np.uint64)
    for _ in range(n // 4):
        a, b = rng.integers(0, n, 2)
        flip = 0
        for bit in rng.choice(64, rng.integers(0, 6), replace=False):
            flip |= 1 << int(bit)
        values[b] = int(values[a]) ^ flip
    for start in range(0, min(n - 21, 200), 50):
        values[start : start + 21] = chain(int(values[start]), 20)
    kinds = rng.choice([SIMHASH] * 8 + [SHORT, EMPTY], n)
    orders = rng.permutation(n).astype(np.int64) * 5 + 3
    records = Batch.of(orders, kinds, values, [f"r{o}" for o in orders])
    picked = rng.choice(n, n // 10, replace=False)
    stored = Batch.of(
        np.arange(-len(picked), 0),
        np.where(kinds[picked] == EMPTY, SIMHASH, kinds[picked]),
        values[picked] ^ np.uint64(1 << 40),
        [f"stored{i}" for i in range(len(picked))],
    )
    return records, stored


@pytest.mark.parametrize("with_index", [False, True])
def test_planted_fingerprints_decide_as_the_index(with_index):
    records, stored = planted(3, 6000)
    stored = stored if with_index else Batch.of_pages([])
    outcomes = decide_batch(records, stored, PLAN, 3)
    assert "rounds" in outcomes.how
    assert 0 < (~outcomes.kept).sum() < len(records) // 2
    same_outcomes(outcomes, replay(records, stored, PLAN, 3))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, 40), min_size=1, max_size=60),
    st.lists(st.integers(0, 63), min_size=60, max_size=60),
    st.integers(0, 2**64 - 1),
)
def test_any_clustered_input_decides_as_the_index(cluster_of, bits, base):
    # Few distinct bits around few bases: dense near-duplicate graphs, long chains.
    values = [
        base ^ (1 << bits[i]) ^ (1 << bits[(i * 7) % 60]) ^ c for i, c in enumerate(cluster_of)
    ]
    n = len(values)
    records = Batch.of(range(n), [SIMHASH] * n, values, [f"k{i}" for i in range(n)])
    outcomes = decide_batch(records, Batch.of_pages([]), PLAN, 3)
    same_outcomes(outcomes, replay(records, Batch.of_pages([]), PLAN, 3))


def test_repeated_keys_are_replayed_through_the_index():
    values = chain(5, 8)
    keys = ["a", "b", "a", "c", "b", "d", "a", "e", "f"]
    records = Batch.of(range(9), [SIMHASH] * 9, values, keys)
    outcomes = decide_batch(records, Batch.of_pages([]), PLAN, 3)
    assert "keys repeat" in outcomes.how
    # v2 is under a's own key within the distance: unchanged, not a duplicate.
    assert outcomes.status[2] == 2 and outcomes.matched_key[2] == "a"


def test_the_job_chooses_more_blocks_for_a_billion_records():
    assert choose_plan(3, None, 10_000_000)[0].blocks == 5
    plan, why = choose_plan(3, None, 1_000_000_000)
    assert plan.blocks == 6 and "20 tables" in why
    assert choose_plan(3, 4, 1_000_000_000)[0].blocks == 4


def test_popcount_counts_bits():
    values = np.array([0, 1, 2**64 - 1, 0xF0F0], dtype=np.uint64)
    assert popcount(values).tolist() == [0, 1, 64, 8]


def test_popcount_without_bitwise_count_numpy_1(monkeypatch):
    # NumPy 1.24-1.26 has no np.bitwise_count: the byte table counts the same bits.
    rng = np.random.default_rng(5)
    values = rng.integers(0, 2**64 - 1, size=2000, dtype=np.uint64, endpoint=True)
    values[:3] = [0, 2**64 - 1, 1 << 63]
    expected = [bin(int(v)).count("1") for v in values]
    assert popcount_by_bytes(values).tolist() == expected
    assert popcount_by_bytes(values[::3]).tolist() == expected[::3]  # not contiguous
    assert popcount_by_bytes(np.empty(0, np.uint64)).tolist() == []
    monkeypatch.delattr(np, "bitwise_count", raising=False)
    assert not hasattr(np, "bitwise_count")
    assert popcount(values).tolist() == expected
    assert popcount(values).dtype == np.int8
    # Near pairs found without it are the same.
    fingerprints = np.array([0, 1, 3, 7, 15, 1 << 40], dtype=np.uint64)
    pairs = near_pairs(PLAN, 3, np.arange(6), fingerprints)
    brute = [
        (a, b)
        for a in range(6)
        for b in range(a + 1, 6)
        if bin(int(fingerprints[a] ^ fingerprints[b])).count("1") <= 3
    ]
    assert sorted(zip(pairs.earlier.tolist(), pairs.later.tolist(), strict=True)) == brute


@pytest.fixture(scope="module")
def config() -> SimhashSettings:
    return SimhashSettings.from_settings({})


@pytest.mark.corpus
def test_a_feed_decides_as_the_pipeline(corpora, config, tmp_path):
    items = feed_items(corpora)
    feed = tmp_path / "items.jl"
    write_feed(feed, items)
    result = run_local([str(feed)], job_of(config))
    verdicts = pipeline_verdicts(config, read_feed(feed))
    assert_same_as_pipeline(result.outcomes, verdicts)
    dropped = sum(v.match is not None for v in verdicts)
    assert dropped > 30
    # Each chain keeps some later links, not its first alone (as components would).
    kept_links = [
        k
        for k, kept in zip(result.outcomes.key, result.outcomes.kept, strict=True)
        if kept and "chain" in k
    ]
    assert len(kept_links) > 3


@pytest.mark.corpus
def test_several_inputs_are_read_in_order_file_then_line(corpora, config, tmp_path):
    items = feed_items(corpora, seed=12, limit=120)
    first, second = tmp_path / "1.csv", tmp_path / "2.jl"
    write_feed(first, items[:100])
    write_feed(second, items[100:])
    result = run_local([str(first), str(second)], job_of(config))
    verdicts = pipeline_verdicts(config, read_feed(first) + read_feed(second))
    assert_same_as_pipeline(result.outcomes, verdicts)


@pytest.mark.corpus
def test_an_index_export_makes_the_job_incremental(corpora, config, tmp_path):
    items = feed_items(corpora, seed=13, limit=200)
    half = len(items) // 2
    uri = f"sqlite:///{tmp_path / 'index.db'}"
    pipeline_verdicts(config, items[:half], uri)  # a crawl stored the first half
    feed = tmp_path / "later.jl"
    write_feed(feed, items[half:])
    with open_index(uri) as index:
        stored = list(index.pages())
    result = run_local([str(feed)], job_of(config), stored=stored)
    assert "rounds" in result.outcomes.how
    verdicts = pipeline_verdicts(config, read_feed(feed), uri)
    assert_same_as_pipeline(result.outcomes, verdicts)
    assert any(v.match is not None and v.match.key in {p.key for p in stored} for v in verdicts)


@pytest.mark.corpus
def test_a_recrawl_with_repeated_urls_decides_as_the_pipeline(corpora, config, tmp_path):
    items = feed_items(corpora, seed=14, limit=100)
    rng = random.Random(3)
    again = [dict(item) for item in rng.sample(items, 30)]
    for item in again[:10]:
        item["content"] = edited(item.get("content") or "x", rng, 1)
    feed = tmp_path / "twice.jl"
    write_feed(feed, items + again)
    result = run_local([str(feed)], job_of(config))
    assert "keys repeat" in result.outcomes.how
    verdicts = pipeline_verdicts(config, read_feed(feed))
    assert {"unchanged"} <= {v.status for v in verdicts}
    assert_same_as_pipeline(result.outcomes, verdicts)


def test_items_without_a_key_field_get_distinct_keys(config, tmp_path):
    feed = tmp_path / "nameless.jl"
    text = " ".join(f"word{i}" for i in range(60))
    feed.write_text(json.dumps({"content": text}) + "\n" + json.dumps({"content": text}) + "\n")
    outcomes = run_local([str(feed)], job_of(config)).outcomes
    assert outcomes.kept.tolist() == [True, False]
    assert outcomes.key[0] != outcomes.key[1]


class Contained:
    """A second kind of evidence for the test: given pairs (earlier, later) of orders."""

    kind, name = 2, "contained"

    def __init__(self, pairs):
        self.pairs = pairs

    def edges(self, records):
        present = set(records.order.tolist())
        pairs = [(a, b) for a, b in self.pairs if a in present and b in present]
        return Edges.of([a for a, _ in pairs], [b for _, b in pairs], self.kind, [0] * len(pairs))


def test_a_second_kind_of_evidence_drops_only_under_an_earlier_kept_record():
    values = [0xFFFF_0000_0000_0000 >> (i * 13) for i in range(4)]  # far apart
    records = Batch.of(range(4), [SIMHASH] * 4, values, ["a", "b", "c", "d"])
    # b is contained in a; c in b (dropped, so no evidence); d in c (kept).
    outcomes = decide_batch(
        records, Batch.of_pages([]), PLAN, 3, evidence=(Contained([(0, 1), (1, 2), (2, 3)]),)
    )
    assert outcomes.kept.tolist() == [True, False, True, False]
    assert outcomes.matched[[1, 3]].tolist() == [0, 2]
    assert outcomes.evidence[[1, 3]].tolist() == [2, 2]
