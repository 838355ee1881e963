"""One contract, every backend: what any NearDuplicateIndex must do.

Backends are listed in ``BACKENDS``; each entry opens a fresh index at a location that
``reopen`` can open again (for persistent backends).
"""

from __future__ import annotations

import random
import time
import uuid

import pytest

from scrapy_simhash import Match, NearDuplicateIndex, open_index
from scrapy_simhash.analysis.anchors import text_anchors
from scrapy_simhash.analysis.fingerprint import hamming_distance
from scrapy_simhash.anchors import MAX_ANCHOR_PAGES, Anchors
from scrapy_simhash.exceptions import IndexParameterMismatch
from scrapy_simhash.index.analysed import Analysed
from scrapy_simhash.index.policy import Index
from scrapy_simhash.index.store import Store


class Backend:
    name = ""
    persistent = True

    def __init__(self, tmp_path, request):
        self.tmp_path = tmp_path
        self.request = request

    def uri(self) -> str:
        raise NotImplementedError

    def open(self, **params) -> NearDuplicateIndex:
        return open_index(self.uri(), **params)


class MemoryBackend(Backend):
    name = "memory"
    persistent = False

    def uri(self) -> str:
        return "memory:"


class SqliteBackend(Backend):
    name = "sqlite"

    def uri(self) -> str:
        return f"sqlite:///{self.tmp_path / 'index.db'}"


class RedisBackend(Backend):
    """A fresh key prefix per test on the session's redis-server (see conftest.py)."""

    name = "redis"

    def __init__(self, tmp_path, request):
        super().__init__(tmp_path, request)
        self.server = request.getfixturevalue("redis_server")
        self.prefix = f"contract-{uuid.uuid4().hex[:12]}"

    def uri(self) -> str:
        return f"{self.server.url}?prefix={self.prefix}"


class RedisSpreadBackend(Backend):
    """A fresh key prefix per test, spread over the session's Redis Cluster."""

    name = "redis-spread"

    def __init__(self, tmp_path, request):
        super().__init__(tmp_path, request)
        self.cluster = request.getfixturevalue("redis_cluster")
        self.prefix = f"contract-{uuid.uuid4().hex[:12]}"

    def uri(self) -> str:
        return f"{self.cluster.url}&spread=true&prefix={self.prefix}"


BACKENDS = {b.name: b for b in (MemoryBackend, SqliteBackend, RedisBackend, RedisSpreadBackend)}


#: The markers of a backend's tests (conftest.py cannot see a fixture asked for at run
#: time, and checks that these are right).
MARKS = {
    "redis": [pytest.mark.redis],
    "redis-spread": [pytest.mark.redis, pytest.mark.cluster, pytest.mark.slow],
}


@pytest.fixture(params=[pytest.param(name, marks=MARKS.get(name, [])) for name in sorted(BACKENDS)])
def backend(request, tmp_path) -> Backend:
    return BACKENDS[request.param](tmp_path, request)


@pytest.fixture
def index(backend):
    with backend.open() as index:
        yield index


def flip(fp: int, *bits: int) -> int:
    for bit in bits:
        fp ^= 1 << bit
    return fp


FP = 0xF0E1_D2C3_B4A5_9687


def test_is_a_near_duplicate_index(index):
    assert isinstance(index, NearDuplicateIndex)
    assert index.plan.max_distance == 3
    assert len(index) == 0


def test_is_the_one_index_over_a_store(index):
    """Every backend is the one policy over a store of its own (docs/internals.md)."""
    assert isinstance(index, Index)
    assert isinstance(index.store, Store)
    assert not isinstance(index.store, Index)


def test_check_and_add_stores_then_finds_within_distance(index):
    assert index.check_and_add(FP, "https://a.example/1").match is None
    assert len(index) == 1
    match = index.check_and_add(flip(FP, 0, 31, 63), "https://b.example/1").match
    assert match == Match("https://a.example/1", FP, 3, match.added_at)
    assert len(index) == 1, "a duplicate must not be stored"


def test_beyond_max_distance_is_new(index):
    index.check_and_add(FP, "a")
    assert index.check_and_add(flip(FP, 1, 2, 3, 4), "b").match is None
    assert len(index) == 2


def test_returns_nearest_match(index):
    index.check_and_add(FP, "far")
    index.check_and_add(flip(FP, 10, 20, 30, 40, 50, 60), "other")  # 6 from FP: stored
    # 5 from FP, 1 from other:
    match = index.check_and_add(flip(FP, 10, 20, 30, 40, 50), "probe").match
    assert (match.key, match.distance) == ("other", 1)


@pytest.mark.parametrize("first", ["found via the last table", "found via the first table"])
def test_of_equally_near_pages_the_earliest_stored_is_the_match(index, first):
    # With the default plan (5 blocks of 13, 13, 13, 13, 12 bits), a page 3 bits away in
    # blocks 0-2 shares only the key of the last table with FP, one 3 bits away in blocks
    # 2-4 only the key of the first table; they are 4 bits apart, so both are stored.
    via_last, via_first = flip(FP, 0, 13, 26), flip(FP, 26, 39, 52)
    order = [via_last, via_first] if first == "found via the last table" else [via_first, via_last]
    assert index.check_and_add(order[0], "earlier").match is None
    assert index.check_and_add(order[1], "later").match is None
    match = index.check_and_add(FP, "probe").match
    assert (match.key, match.fingerprint, match.distance) == ("earlier", order[0], 3)
    assert [m.key for m in index.query(FP)] == ["earlier", "later"]


def test_query_lists_all_within_distance_nearest_first(index):
    index.check_and_add(FP, "a")
    index.check_and_add(flip(FP, 0, 1, 2, 3, 4, 5, 6, 7), "b")
    probe = flip(FP, 0, 1, 2, 3)  # 4 from a, 4 from b
    assert index.query(probe) == []
    probe = flip(FP, 0, 1)  # 2 from a, 6 from b
    assert [(m.key, m.distance) for m in index.query(probe)] == [("a", 2)]
    assert index.query(probe, max_distance=1) == []
    with pytest.raises(ValueError, match="beyond"):
        index.query(probe, max_distance=4)


def test_exact_entries(index):
    assert index.check_and_add_exact(12345, "short-1").match is None
    match = index.check_and_add_exact(12345, "short-2").match
    assert (match.key, match.distance) == ("short-1", 0)
    assert index.check_and_add_exact(12346, "short-3").match is None
    assert len(index) == 2


def test_extreme_fingerprints(index):
    top = 0x8000_0000_FFFF_0000  # sign bit set: stored as a negative integer in SQLite
    for fp, key in ((0, "zero"), ((1 << 64) - 1, "ones"), (top, "top")):
        assert index.check_and_add(fp, key).match is None
    assert index.query((1 << 64) - 2)[0].key == "ones"
    assert index.query(top ^ 1)[0].fingerprint == top


def test_recall_is_exact_on_random_pairs(index):
    rng = random.Random(7)
    stored = [rng.getrandbits(64) for _ in range(300)]
    kept = [fp for fp in stored if index.check_and_add(fp, hex(fp)).match is None]
    for fp in kept[:100]:
        bits = rng.sample(range(64), rng.randint(0, 3))
        probe = flip(fp, *bits)
        expected = sorted(
            (hamming_distance(probe, other), hex(other))
            for other in kept
            if hamming_distance(probe, other) <= 3
        )
        assert sorted((m.distance, m.key) for m in index.query(probe)) == expected


def test_parameters_persist_and_are_checked(backend):
    if not backend.persistent:
        pytest.skip("parameters of a non-persistent index cannot be reopened")
    with backend.open(max_distance=2, blocks=4) as index:
        index.check_and_add(FP, "a")
    with backend.open() as index:
        assert (index.plan.max_distance, index.plan.blocks) == (2, 4)
        assert index.query(flip(FP, 5))[0].key == "a"
    with pytest.raises(IndexParameterMismatch) as excinfo:
        backend.open(max_distance=3)
    assert "max_distance: index has 2, requested 3" in str(excinfo.value)
    with pytest.raises(IndexParameterMismatch, match="features"):
        backend.open(features="simhash64/terms-v0/top64/seed-0")


def test_reopen_keeps_everything(backend):
    if not backend.persistent:
        pytest.skip("not persistent")
    with backend.open() as index:
        index.check_and_add(FP, "a")
        index.check_and_add_exact(99, "b")
    with backend.open() as index:
        assert len(index) == 2
        assert index.check_and_add(flip(FP, 3), "c").match.key == "a"
        assert index.check_and_add_exact(99, "d").match.key == "b"


# -- maintenance and audit ---------------------------------------------------------------


def test_record_drop_and_read_the_audit_log(index):
    index.check_and_add(FP, "kept")
    match = index.check_and_add(flip(FP, 1, 2), "dropped").match
    index.record_drop("dropped", match)
    exact_match = Match("short-kept", 99, 0, 1.0)
    index.record_drop("short-dropped", exact_match, exact=True)
    records = list(index.drops())
    assert [(r.key, r.kept_key, r.distance, r.exact) for r in records] == [
        ("dropped", "kept", 2, False),
        ("short-dropped", "short-kept", 0, True),
    ]
    assert records[0].at <= records[1].at
    assert list(index.drops(since=records[1].at)) == records[1:]
    assert list(index.drops(since=records[1].at + 1)) == []
    assert len(index) == 1, "the audit log is not counted as stored pages"


def test_pages_lists_everything_stored(index):
    index.check_and_add(FP, "a")
    index.check_and_add_exact(7, "short")
    index.check_and_add(flip(FP, 0, 1, 2, 3, 4, 5), "b")
    index.check_and_add(flip(FP, 0), "dup")  # a duplicate: not stored
    pages = list(index.pages())
    assert [p.key for p in pages if not p.exact] == ["a", "b"], "in the order stored"
    assert sorted((p.key, p.fingerprint, p.exact) for p in pages) == [
        ("a", FP, False),
        ("b", flip(FP, 0, 1, 2, 3, 4, 5), False),
        ("short", 7, True),
    ]
    assert all(p.added_at > 0 for p in pages)


def test_find_by_key(index):
    index.check_and_add(FP, "https://a.example/")
    index.check_and_add_exact((1 << 64) - 1, "https://b.example/")
    (page,) = index.find("https://a.example/")
    assert (page.key, page.fingerprint, page.exact) == ("https://a.example/", FP, False)
    (page,) = index.find("https://b.example/")
    assert (page.fingerprint, page.exact) == ((1 << 64) - 1, True)
    assert index.find("https://c.example/") == []


def test_add_pages_stores_as_given_and_skips_what_is_stored(index):
    from scrapy_simhash.index.base import StoredPage

    index.check_and_add(FP, "a")
    pages = [
        StoredPage("a", FP, 1000.0),  # already stored: skipped
        StoredPage("a-copy", flip(FP, 1), 1001.0),  # a near-duplicate: stored as given
        StoredPage("top", 0x8000_0000_0000_0001, 1002.0),
        StoredPage("top", 0x8000_0000_0000_0001, 1002.0),  # twice in the input: once
        StoredPage("short", 5, 1003.0, exact=True),
    ]
    assert index.add_pages(pages) == 3
    assert index.add_pages(pages) == 0
    assert index.add_pages([]) == 0
    assert len(index) == 4
    assert index.find("a-copy") == [StoredPage("a-copy", flip(FP, 1), 1001.0)]
    assert {m.key for m in index.query(flip(FP, 1))} == {"a", "a-copy"}
    assert index.query(0x8000_0000_0000_0003)[0].key == "top"
    assert index.check_and_add_exact(5, "other").match.key == "short"


def test_a_lone_surrogate_in_a_key_is_stored_escaped(index):
    from scrapy_simhash.index.base import StoredPage

    # Not UTF-8, so neither SQLite nor Redis can store it as is; every backend stores the
    # same escaped key, and finds it under the key as given.
    key, stored = "https://a.example/\ud800", "https://a.example/\\ud800"
    assert index.check_and_add_exact(7, key).status == "new"
    assert index.check_and_add(FP, key).status == "changed", "found under the escaped key"
    assert index.query(FP, 0)[0].key == stored
    assert [page.key for page in index.find(key)] == [stored]
    assert index.check_and_add(FP, key).status == "unchanged"
    match = index.check_and_add(flip(FP, 1), "\udfff").match
    assert match.key == stored
    index.record_drop("\udfff", match)
    assert [(d.key, d.kept_key) for d in index.drops()] == [("\\udfff", stored)]
    far = flip(FP, 10, 20, 30, 40, 50)
    assert index.add_pages([StoredPage("\udc80x", far, 1000.0)]) == 1
    assert index.find("\udc80x") == [StoredPage("\\udc80x", far, 1000.0)]
    assert index.forget(key) == 1
    assert len(index) == 1


def test_forget_removes_a_key_so_it_can_be_stored_again(index):
    from scrapy_simhash.index.base import StoredPage

    index.check_and_add(FP, "a")
    index.check_and_add(flip(FP, 0, 1, 2, 3, 4, 5, 6), "b")
    # A restored export may hold two entries under one key (a check keeps one).
    assert index.add_pages([StoredPage("a", 11, time.time(), exact=True)]) == 1
    assert index.forget("a") == 2
    assert index.forget("a") == 0
    assert index.find("a") == []
    assert len(index) == 1
    assert index.query(FP) == [], "its block keys are gone too"
    assert index.check_and_add(flip(FP, 1), "a-again").match is None
    assert index.check_and_add_exact(11, "a-again").match is None


def test_expire_removes_pages_stored_before_a_time(index):
    from scrapy_simhash.index.base import StoredPage

    index.add_pages(
        [
            StoredPage("old", FP, 100.0),
            StoredPage("old-short", 3, 150.0, exact=True),
            StoredPage("new", flip(FP, 0, 1, 2, 3, 4, 5, 6, 7), 300.0),
        ]
    )
    assert index.expire(200.0) == 2
    assert [p.key for p in index.pages()] == ["new"]
    assert index.query(flip(FP, 1)) == []
    assert index.check_and_add(flip(FP, 1), "fresh").match is None
    assert index.expire(0.0) == 0


def test_expire_drops_removes_audit_log_entries_recorded_before_a_time(index):
    index.check_and_add(FP, "kept")
    index.record_drop("old-a", index.check_and_add(flip(FP, 1), "old-a").match)
    index.record_drop("old-b", index.check_and_add(flip(FP, 2), "old-b").match)
    cutoff = time.time()
    while time.time() <= cutoff:  # the next entry is strictly later than the cutoff
        time.sleep(0.001)
    index.record_drop("new", index.check_and_add(flip(FP, 3), "new").match)
    assert index.expire_drops(cutoff) == 2
    assert [record.key for record in index.drops()] == ["new"]
    assert index.expire_drops(cutoff) == 0
    assert [page.key for page in index.pages()] == ["kept"], "pages are not touched"


def test_audit_log_and_pages_persist(backend):
    if not backend.persistent:
        pytest.skip("not persistent")
    with backend.open() as index:
        index.check_and_add(FP, "a")
        index.record_drop("b", index.check_and_add(flip(FP, 2), "b").match)
    with backend.open() as index:
        assert [(d.key, d.kept_key, d.distance) for d in index.drops()] == [("b", "a", 1)]
        assert [p.key for p in index.pages()] == ["a"]


# -- the same rules everywhere: add_pages skips, pages() order, size and compact ----------


def test_add_pages_skip_rules_are_the_same_on_every_backend(index):
    from scrapy_simhash.index.base import StoredPage

    pages = [
        StoredPage("a", FP, 10.0),
        StoredPage("a", FP, 11.0),  # same key and fingerprint: skipped, whatever the time
        StoredPage("a", flip(FP, 9), 12.0),  # same key, another fingerprint: stored
        StoredPage("b", FP, 13.0),  # same fingerprint, another key: stored
        StoredPage("x", 5, 14.0, exact=True),
        StoredPage("y", 5, 15.0, exact=True),  # a digest already stored, another key: skipped
        StoredPage("x", 6, 16.0, exact=True),  # same key, another digest: stored
    ]
    assert index.add_pages(pages) == 5
    assert [(p.key, p.fingerprint, p.added_at) for p in index.pages()] == [
        ("a", FP, 10.0),
        ("a", flip(FP, 9), 12.0),
        ("b", FP, 13.0),
        ("x", 5, 14.0),
        ("x", 6, 16.0),
    ]


def test_pages_are_ordered_by_time_then_fingerprints_before_exact_entries(index):
    from scrapy_simhash.index.base import StoredPage

    far = [flip(FP, *range(i, 64, 8)) for i in range(4)]  # pairwise far apart
    pages = [
        StoredPage("x1", 1, 5.0, exact=True),
        StoredPage("f3", far[3], 5.0),
        StoredPage("late", far[0], 9.0),
        StoredPage("f1", far[1], 5.0),
        StoredPage("early", far[2], 1.0),
    ]
    assert index.add_pages(pages) == 5
    assert [p.key for p in index.pages()] == ["early", "f3", "f1", "x1", "late"]


def test_size_and_compact(index):
    for i in range(200):
        index.check_and_add(flip(FP, *range(i % 64, 64, 5)) ^ (i << 20), f"k{i}")
    size = index.size()
    assert size is None or size > 0
    stored = len(list(index.pages()))
    assert index.expire(time.time() + 1) == stored > 0
    compacted = index.compact()
    assert isinstance(compacted, bool)
    after = index.size()
    if size is not None and compacted:
        assert after < size, "compacting gives the space of removed pages back"
    assert len(index) == 0


# -- re-crawls: unchanged, changed, duplicate ---------------------------------------------


def test_a_recrawl_of_the_same_page_is_unchanged_not_a_duplicate(index):
    assert index.check_and_add(FP, "a").status == "new"
    outcome = index.check_and_add(flip(FP, 1), "a")
    assert outcome.status == "unchanged"
    assert (outcome.match.key, outcome.match.fingerprint, outcome.match.distance) == ("a", FP, 1)
    assert len(index) == 1, "nothing stored"
    assert index.check_and_add(flip(FP, 2), "b").status == "duplicate"


def test_the_own_key_entry_is_preferred_to_a_nearer_page(index):
    index.check_and_add(FP, "other")
    from scrapy_simhash.index.base import StoredPage

    # "a" stored 3 bits away from FP (a restored export may hold a near pair).
    index.add_pages([StoredPage("a", flip(FP, 10, 20, 30), time.time())])
    outcome = index.check_and_add(FP, "a")
    assert (outcome.status, outcome.match.key, outcome.match.distance) == ("unchanged", "a", 3)
    outcome = index.check_and_add(FP, "c")
    assert (outcome.status, outcome.match.key) == ("duplicate", "other"), "the nearest"


def test_a_changed_page_replaces_the_entry_under_its_key(index):
    changed = flip(FP, *range(0, 64, 4))  # far from FP
    assert index.check_and_add(FP, "a").status == "new"
    assert index.check_and_add(flip(FP, 40), "b").status == "duplicate"
    outcome = index.check_and_add(changed, "a")
    assert (outcome.status, outcome.match) == ("changed", None)
    assert [(p.key, p.fingerprint) for p in index.find("a")] == [("a", changed)]
    assert len(index) == 1, "one entry per key: the newest"
    assert index.query(FP) == [], "the old fingerprint's table keys are gone too"
    assert index.check_and_add(flip(FP, 40), "b").status == "new", "b is no duplicate now"
    assert index.check_and_add(changed, "a").status == "unchanged"
    # Between the kinds: a page whose text became short, and long again.
    assert index.check_and_add_exact(99, "a").status == "changed"
    assert [(p.fingerprint, p.exact) for p in index.find("a")] == [(99, True)]
    assert index.check_and_add_exact(99, "a").status == "unchanged"
    assert index.check_and_add_exact(99, "z").status == "duplicate"
    assert index.check_and_add(changed, "a").status == "changed"
    assert [(p.fingerprint, p.exact) for p in index.find("a")] == [(changed, False)]
    assert len(index) == 2
    assert index.check_and_add(changed, "a").match.key == "a", "the match"


def test_changed_pages_keep_the_tables_consistent(index):
    """Many rewrites of a few keys: every stored fingerprint is found, nothing else."""
    rng = random.Random(5)
    latest: dict[str, int] = {}
    for _ in range(300):
        key = f"k{rng.randrange(20)}"
        fp = rng.getrandbits(64)
        if index.check_and_add(fp, key).status in ("new", "changed"):
            latest[key] = fp
    stored = {(p.key, p.fingerprint) for p in index.pages()}
    assert stored == set(latest.items())
    assert len(index) == len(latest)
    for key, fp in latest.items():
        assert [m.key for m in index.query(fp, 0)] == [key]


def test_concurrent_checks_keep_one_entry_per_key(backend):
    """Check-and-replace is atomic: clients checking the same keys at once (each with its
    own connection) leave one entry per key, and each key was new exactly once."""
    if not backend.persistent:
        pytest.skip("not shared between clients")
    import threading

    with backend.open():
        pass  # created once, before the clients race
    statuses: list[str] = []
    errors: list[BaseException] = []

    def client(seed: int) -> None:
        rng = random.Random(seed)
        try:
            with backend.open() as index:
                for _ in range(60):
                    outcome = index.check_and_add(rng.getrandbits(64), f"k{rng.randrange(6)}")
                    statuses.append(outcome.status)
        except BaseException as e:  # reported below, in the test's thread
            errors.append(e)

    threads = [threading.Thread(target=client, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with backend.open() as index:
        pages = list(index.pages())
        assert sorted(p.key for p in pages) == [f"k{i}" for i in range(6)]
        assert len(index) == 6
        for page in pages:
            assert [m.key for m in index.query(page.fingerprint, 0)] == [page.key]
    assert statuses.count("new") == 6
    assert statuses.count("changed") + statuses.count("duplicate") + 6 + statuses.count(
        "unchanged"
    ) == len(statuses)


def test_a_smaller_distance_is_checked_with_the_tables_of_the_larger(backend):
    # Built for 3; opened for 1, checks and queries stop at 1 (SIMHASH_MAX_DISTANCE lowered
    # without a rebuild), and reopened without asking, at 3 again.
    if not backend.persistent:
        pytest.skip("a non-persistent index cannot be reopened")
    with backend.open():
        pass
    with backend.open(max_distance=1) as index:
        assert (index.max_distance, index.plan.max_distance) == (1, 3)
        index.check_and_add(FP, "a")
        assert index.check_and_add(flip(FP, 1, 2), "b").status == "new"
        assert index.check_and_add(flip(FP, 1, 2, 3), "c").match.key == "b"
        assert [m.key for m in index.query(flip(FP, 9, 10))] == []
    with backend.open() as index:
        assert index.max_distance == 3
        assert {m.key for m in index.query(flip(FP, 9, 10))} == {"a"}


# -- paragraph anchors: containment beside the distance ------------------------------------


def paragraph(n: int, words: int = 24) -> str:
    """A distinct line long enough to be an anchor (about 7 characters a word)."""
    return " ".join(f"w{n}x{i}" for i in range(words))


def anchors_of(*paragraphs: int, short_lines: int = 0) -> Anchors:
    lines = [paragraph(n) for n in paragraphs] + ["a short line"] * short_lines
    return text_anchors("\n".join(lines))


FAR = flip(FP, *range(0, 64, 3))  # 22 bits from FP: never near


def test_a_page_contained_in_a_stored_one_is_a_duplicate_with_the_shared_anchors(index):
    kept = anchors_of(*range(10))
    assert index.check_and_add(FP, "original", kept).status == "new"
    copy = anchors_of(*range(7))  # cut short: seven of its ten paragraphs
    outcome = index.check_and_add(FAR, "copy", copy)
    assert outcome.status == "duplicate"
    assert outcome.match.key == "original"
    assert outcome.match.contained
    assert outcome.match.distance == hamming_distance(FP, FAR)
    assert len(outcome.match.shared) >= 4
    assert set(outcome.match.shared) <= set(copy.hashes) & set(kept.hashes)
    assert len(index) == 1, "a contained page is not stored"


def test_a_page_that_contains_a_stored_one_is_a_duplicate_too(index):
    index.check_and_add(FP, "excerpt", anchors_of(*range(5)))
    outcome = index.check_and_add(FAR, "with standfirst and captions", anchors_of(*range(-3, 5)))
    assert (outcome.status, outcome.match.key) == ("duplicate", "excerpt")


@pytest.mark.parametrize("first", ["with code", "prose only"])
def test_of_two_pages_with_the_same_anchors_the_one_they_make_is_contained(index, first):
    # The same 8 paragraphs, its anchors; one page also holds many short lines (code, a
    # list), smaller than its paragraphs: the other, all paragraphs, is contained in it.
    pages = {
        "with code": anchors_of(*range(8), short_lines=150),
        "prose only": anchors_of(*range(8)),
    }
    assert pages["prose only"].hashes == pages["with code"].hashes
    second = next(name for name in pages if name != first)
    assert index.check_and_add(FP, first, pages[first]).status == "new"
    outcome = index.check_and_add(FAR, second, pages[second])
    assert (outcome.status, outcome.match.key) == ("duplicate", first)


def test_one_shared_paragraph_is_no_evidence(index):
    index.check_and_add(FP, "a", anchors_of(1, 2))
    assert index.check_and_add(FAR, "b", anchors_of(1, 3)).status == "new"


def test_a_shared_block_that_is_not_most_of_either_page_is_not_containment(index):
    # Two distinct pages with the same two-paragraph note: 2 of 6 anchors.
    index.check_and_add(FP, "a", anchors_of(100, 101, 1, 2, 3, 4))
    assert index.check_and_add(FAR, "b", anchors_of(100, 101, 5, 6, 7, 8)).status == "new"


def test_a_page_whose_long_lines_are_little_of_its_text_is_not_told_by_them(index):
    # Its only anchors are a note that another page has; the rest is short lines, in runs
    # too short to be anchors (a paragraph or the end cuts each run before 80 characters).
    index.check_and_add(FP, "a", anchors_of(100, 101, 1, 2))
    short = ["a short line"] * 6
    page = text_anchors("\n".join([*short, paragraph(100), *short, paragraph(101), *short]))
    assert page.hashes == anchors_of(100, 101).hashes
    assert page.cover < 500
    assert index.check_and_add(FAR, "b", page).status == "new"


def test_anchors_on_many_pages_are_boilerplate_and_ignored(index):
    # A page of just the two paragraphs of a licence note is contained in the first page
    # that has them; once they are on more than MAX_ANCHOR_PAGES pages, they are no
    # evidence: the same page is new.
    note = anchors_of(100, 101)
    index.check_and_add(FP, "first", anchors_of(100, 101, 1, 2, 3))
    assert index.check_and_add(FAR, "probe", note).match.key == "first"
    for n in range(MAX_ANCHOR_PAGES):  # the note and three paragraphs of their own
        fp = flip(FP, 8 * n, 8 * n + 1, 8 * n + 2, 8 * n + 3, 8 * n + 4)
        own = anchors_of(100, 101, 10 * n + 10, 10 * n + 11, 10 * n + 12)
        assert index.check_and_add(fp, f"page-{n}", own).status == "new"
    assert index.check_and_add(FAR, "probe", note).status == "new"


def test_a_note_that_dropped_pages_carry_becomes_boilerplate_after_the_limit(index):
    # A page holding only a note (three long paragraphs), then pages carrying the note
    # and a paragraph of their own: each contains the note's page and is dropped, so only
    # that page is ever stored. The pages seen count all the same: once more than
    # MAX_ANCHOR_PAGES pages were seen holding the note, it is boilerplate, and the next
    # pages are kept. Checking a dropped page again never counts it twice.
    index.check_and_add(FP, "note", anchors_of(100, 101, 102))
    statuses = []
    for n in range(MAX_ANCHOR_PAGES + 3):
        fp = flip(FAR, 8 * n, 8 * n + 1, 8 * n + 2, 8 * n + 3, 8 * n + 4)
        page = anchors_of(100, 101, 102, 10 * n + 10)
        outcome = index.check_and_add(fp, f"page-{n}", page)
        statuses.append(outcome.status)
        if n == 0:
            assert outcome.match.key == "note"
            for _ in range(MAX_ANCHOR_PAGES + 1):  # a retried check is one page seen
                assert index.check_and_add(fp, "page-0", page).status == "duplicate"
    # The note's page and page-0 ... page-4: five other pages; page-5 sees six.
    assert statuses == ["duplicate"] * (MAX_ANCHOR_PAGES) + ["new"] * 3
    assert len(index) == 4


def test_containment_in_the_pages_own_key_replaces_it(index):
    index.check_and_add(FP, "page", anchors_of(*range(10)))
    assert index.check_and_add(FAR, "page", anchors_of(*range(8))).status == "changed"
    assert [p.fingerprint for p in index.find("page")] == [FAR]


def test_anchors_are_listed_restored_and_removed_with_their_page(backend):
    if not backend.persistent:
        pytest.skip("restored into the same backend, reopened")
    kept = anchors_of(*range(10))
    with backend.open() as index:
        index.check_and_add(FP, "a", kept)
        index.check_and_add(FAR, "b")  # no anchors
        pages = list(index.pages())
        assert [(p.key, p.anchors) for p in pages] == [("a", kept.stored()), ("b", None)]
        index.forget("a")
        index.forget("b")
        assert (
            index.check_and_add(flip(FAR, 1, 2, 3, 4, 5), "c", anchors_of(*range(8))).status
            == "new"
        )
        index.forget("c")
        assert index.add_pages(pages) == 2
        outcome = index.check_and_add(flip(FAR, 1, 2, 3, 4, 5), "c", anchors_of(*range(8)))
        assert (outcome.status, outcome.match.key) == ("duplicate", "a")
        assert index.expire(time.time() + 1) == 2
        assert index.check_and_add(FP, "d", anchors_of(*range(8))).status == "new"


def test_a_containment_drop_is_in_the_audit_log_with_its_shared_anchors(index):
    index.check_and_add(FP, "original", anchors_of(*range(10)))
    match = index.check_and_add(FAR, "copy", anchors_of(*range(8))).match
    index.record_drop("copy", match)
    index.record_drop("near", Match("original", FP, 1, match.added_at))
    records = list(index.drops())
    assert [(r.key, r.shared) for r in records] == [("copy", len(match.shared)), ("near", 0)]


def test_concurrent_copies_that_contain_each_other_are_kept_once(backend):
    """The containment test is in the atomic check-and-insert: two clients checking two
    copies of one article at the same moment (each with its own connection) keep exactly
    one of them, and the other is its duplicate."""
    if not backend.persistent:
        pytest.skip("not shared between clients")
    import threading

    with backend.open():
        pass
    pairs = 40
    barrier = threading.Barrier(2)
    outcomes: dict[tuple[int, int], object] = {}
    errors: list[BaseException] = []

    def client(side: int) -> None:
        rng = random.Random(side)
        try:
            with backend.open() as index:
                for n in range(pairs):
                    # Far from anything: only the anchors can tell the two copies.
                    fingerprint = rng.getrandbits(64)
                    base = 1000 * n
                    paragraphs = range(base, base + 8) if side else range(base + 2, base + 8)
                    barrier.wait()
                    outcomes[n, side] = index.check_and_add(
                        fingerprint, f"copy-{n}-{side}", anchors_of(*paragraphs)
                    )
        except BaseException as e:
            errors.append(e)
            barrier.abort()

    threads = [threading.Thread(target=client, args=(side,)) for side in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for n in range(pairs):
        statuses = sorted(outcomes[n, side].status for side in (0, 1))
        assert statuses == ["duplicate", "new"], n
        dropped = next(outcomes[n, side] for side in (0, 1) if outcomes[n, side].match)
        assert dropped.match.key.startswith(f"copy-{n}-")
    with backend.open() as index:
        assert len(index) == pairs


def test_query_contained_finds_what_a_check_would_and_stores_nothing(index):
    index.check_and_add(FP, "original", anchors_of(*range(10)))
    match = index.query_contained(FAR, anchors_of(*range(8)))
    assert (match.key, match.fingerprint, match.contained) == ("original", FP, True)
    assert index.query_contained(FAR, anchors_of(*range(20, 28))) is None
    assert len(index) == 1


# -- the share check: a drop confirmed by the share of the page's text the kept one holds --


def _article(seed: int, words: int) -> str:
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return " ".join(
        "".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(words)
    )


def _sketch(text: str):
    from scrapy_simhash.analysis.fingerprint import Fingerprinter
    from scrapy_simhash.dedup import Analyser

    sketch = Analyser(Fingerprinter(), anchors=0).analyse(text).sketch
    assert sketch is not None
    return sketch


def test_a_near_page_holding_too_little_of_the_text_is_kept_and_told_refused(index):
    # The stored page is half of the new one: near by fingerprint (set here), but
    # dropping the new page would lose the other half of its text.
    whole = _article(1, 3000)
    half = whole[: len(whole) // 2]
    assert index.check_and_add(FP, "half", sketch=_sketch(half)).status == "new"
    outcome = index.check_and_add(flip(FP, 5), "whole", sketch=_sketch(whole))
    assert (outcome.status, outcome.match) == ("new", None)
    assert outcome.refused is not None
    assert outcome.refused.key == "half" and outcome.refused.distance == 1
    assert outcome.refused.share is not None and outcome.refused.share < index.min_share
    assert len(index) == 2
    assert {p.key: bool(p.sketch) for p in index.pages()} == {"half": True, "whole": True}


def test_a_copy_holding_most_of_the_text_is_dropped_with_its_share_in_the_audit_log(index):
    whole = _article(2, 3000)
    assert index.check_and_add(FP, "original", sketch=_sketch(whole)).status == "new"
    copy = whole[: len(whole) * 19 // 20]  # cut a little short: all of it is held
    outcome = index.check_and_add(flip(FP, 7, 9), "copy", sketch=_sketch(copy))
    assert outcome.status == "duplicate" and outcome.match.key == "original"
    assert outcome.match.share is not None and outcome.match.share >= 0.8
    assert len(index) == 1
    index.record_drop("copy", outcome.match)
    (record,) = index.drops()
    assert (record.key, record.kept_key) == ("copy", "original")
    assert record.share == pytest.approx(outcome.match.share)


def test_sketches_are_listed_found_and_restored_with_their_page(backend):
    if not backend.persistent:
        pytest.skip("restored into the same backend, reopened")
    sketch = _sketch(_article(3, 2000))
    with backend.open() as index:
        index.check_and_add(FP, "a", sketch=sketch)
        index.check_and_add(FAR, "b")  # no sketch
        pages = list(index.pages())
        assert [(p.key, p.sketch) for p in pages] == [("a", sketch.stored()), ("b", None)]
        assert [p.sketch for p in index.find("a")] == [sketch.stored()]
        assert index.forget("a") == 1 and index.forget("b") == 1
        assert index.add_pages(pages) == 2
        assert [(p.key, p.sketch) for p in index.pages()] == [("a", sketch.stored()), ("b", None)]
    with backend.open() as index:
        outcome = index.check_and_add(flip(FP, 1), "again", sketch=sketch)
        assert (outcome.status, outcome.match.key) == ("duplicate", "a")
        assert outcome.match.share == 1.0


def test_how_each_page_was_analysed_is_stored_replaced_removed_and_restored_with_it(index):
    read = Analysed(("title", "-summary", "content"), "builtin", "terms-v13", 2**64 - 1)
    other = Analysed(("body",), "trafilatura", "2.0.0", 7)
    index.check_and_add(FP, "a", analysed=read)
    index.check_and_add_exact(12345, "x", analysed=other)
    index.check_and_add(FAR, "b")  # stored without a record
    assert index.check_and_add(FP, "a", analysed=other).status == "unchanged"
    assert [p.analysed for p in index.find("a")] == [read], "an unchanged page keeps its own"
    assert [p.analysed for p in index.find("x")] == [other]
    pages = list(index.pages())
    assert [(p.key, p.analysed) for p in pages] == [("a", read), ("x", other), ("b", None)]
    changed = flip(FAR, *range(20))
    assert index.check_and_add(changed, "a", analysed=other).status == "changed"
    assert [p.analysed for p in index.find("a")] == [other]
    assert index.check_and_add(FP, "a").status == "changed"
    assert [p.analysed for p in index.find("a")] == [None], "no record outlives its page"
    assert index.forget("x") == 1 and index.forget("a") == 1 and index.forget("b") == 1
    assert index.add_pages(pages) == 3
    assert [(p.key, p.analysed) for p in index.pages()] == [("a", read), ("x", other), ("b", None)]


def test_a_stored_page_without_a_sketch_holds_an_unknown_share_and_is_refused(index):
    index.check_and_add(FP, "old")  # stored before sketches
    outcome = index.check_and_add(flip(FP, 3), "new", sketch=_sketch(_article(4, 2000)))
    assert outcome.status == "new"
    assert outcome.refused.key == "old" and outcome.refused.share is None


def test_concurrent_copies_beside_a_refused_page_are_kept_once(backend):
    """Two clients check two copies of one article at the same moment, both near a
    stored page that holds too little of it (refused, so each check decides on what it
    read before storing): exactly one copy is kept, the other is its duplicate."""
    if not backend.persistent:
        pytest.skip("not shared between clients")
    import threading

    rounds = 20
    texts = [_article(100 + n, 1600) for n in range(rounds)]
    stub = {n: _sketch(texts[n][: len(texts[n]) // 3]) for n in range(rounds)}
    whole = {n: _sketch(texts[n]) for n in range(rounds)}
    bases = [random.Random(n).getrandbits(64) for n in range(rounds)]
    with backend.open() as index:
        for n in range(rounds):
            index.check_and_add(bases[n], f"stub-{n}", sketch=stub[n])
    barrier = threading.Barrier(2)
    outcomes: dict[tuple[int, int], object] = {}
    errors: list[BaseException] = []

    def client(side: int) -> None:
        try:
            with backend.open() as index:
                for n in range(rounds):
                    barrier.wait()
                    outcomes[n, side] = index.check_and_add(
                        flip(bases[n], 20 + side), f"copy-{n}-{side}", sketch=whole[n]
                    )
        except BaseException as e:
            errors.append(e)
            barrier.abort()

    threads = [threading.Thread(target=client, args=(side,)) for side in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for n in range(rounds):
        pair = [outcomes[n, side] for side in (0, 1)]
        assert sorted(o.status for o in pair) == ["duplicate", "new"], n
        kept = next(o for o in pair if o.status == "new")
        assert kept.refused is not None and kept.refused.key == f"stub-{n}"
        dropped = next(o for o in pair if o.status == "duplicate")
        assert dropped.match.key.startswith(f"copy-{n}-") and dropped.match.share == 1.0
    with backend.open() as index:
        assert len(index) == 2 * rounds
