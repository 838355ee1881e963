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
from scrapy_simhash.exceptions import IndexParameterMismatch
from scrapy_simhash.fingerprint import hamming_distance


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


BACKENDS = {b.name: b for b in (MemoryBackend, SqliteBackend, RedisBackend)}


@pytest.fixture(params=sorted(BACKENDS))
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


def test_add_if_new_stores_then_finds_within_distance(index):
    assert index.add_if_new(FP, "https://a.example/1") is None
    assert len(index) == 1
    match = index.add_if_new(flip(FP, 0, 31, 63), "https://b.example/1")
    assert match == Match("https://a.example/1", FP, 3, match.added_at)
    assert len(index) == 1, "a duplicate must not be stored"


def test_beyond_max_distance_is_new(index):
    index.add_if_new(FP, "a")
    assert index.add_if_new(flip(FP, 1, 2, 3, 4), "b") is None
    assert len(index) == 2


def test_returns_nearest_match(index):
    index.add_if_new(FP, "far")
    index.add_if_new(flip(FP, 10, 20, 30, 40, 50, 60), "other")  # 6 from FP: stored
    match = index.add_if_new(flip(FP, 10, 20, 30, 40, 50), "probe")  # 5 from FP, 1 from other
    assert (match.key, match.distance) == ("other", 1)


@pytest.mark.parametrize("first", ["found via the last table", "found via the first table"])
def test_of_equally_near_pages_the_earliest_stored_is_the_match(index, first):
    # With the default plan (5 blocks of 13, 13, 13, 13, 12 bits), a page 3 bits away in
    # blocks 0-2 shares only the key of the last table with FP, one 3 bits away in blocks
    # 2-4 only the key of the first table; they are 4 bits apart, so both are stored.
    via_last, via_first = flip(FP, 0, 13, 26), flip(FP, 26, 39, 52)
    order = [via_last, via_first] if first == "found via the last table" else [via_first, via_last]
    assert index.add_if_new(order[0], "earlier") is None
    assert index.add_if_new(order[1], "later") is None
    match = index.add_if_new(FP, "probe")
    assert (match.key, match.fingerprint, match.distance) == ("earlier", order[0], 3)
    assert [m.key for m in index.query(FP)] == ["earlier", "later"]


def test_query_lists_all_within_distance_nearest_first(index):
    index.add_if_new(FP, "a")
    index.add_if_new(flip(FP, 0, 1, 2, 3, 4, 5, 6, 7), "b")
    probe = flip(FP, 0, 1, 2, 3)  # 4 from a, 4 from b
    assert index.query(probe) == []
    probe = flip(FP, 0, 1)  # 2 from a, 6 from b
    assert [(m.key, m.distance) for m in index.query(probe)] == [("a", 2)]
    assert index.query(probe, max_distance=1) == []
    with pytest.raises(ValueError, match="beyond"):
        index.query(probe, max_distance=4)


def test_exact_entries(index):
    assert index.add_exact_if_new(12345, "short-1") is None
    match = index.add_exact_if_new(12345, "short-2")
    assert (match.key, match.distance) == ("short-1", 0)
    assert index.add_exact_if_new(12346, "short-3") is None
    assert len(index) == 2


def test_extreme_fingerprints(index):
    top = 0x8000_0000_FFFF_0000  # sign bit set: stored as a negative integer in SQLite
    for fp, key in ((0, "zero"), ((1 << 64) - 1, "ones"), (top, "top")):
        assert index.add_if_new(fp, key) is None
    assert index.query((1 << 64) - 2)[0].key == "ones"
    assert index.query(top ^ 1)[0].fingerprint == top


def test_recall_is_exact_on_random_pairs(index):
    rng = random.Random(7)
    stored = [rng.getrandbits(64) for _ in range(300)]
    kept = [fp for fp in stored if index.add_if_new(fp, hex(fp)) is None]
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
        index.add_if_new(FP, "a")
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
        index.add_if_new(FP, "a")
        index.add_exact_if_new(99, "b")
    with backend.open() as index:
        assert len(index) == 2
        assert index.add_if_new(flip(FP, 3), "c").key == "a"
        assert index.add_exact_if_new(99, "d").key == "b"


# -- maintenance and audit ---------------------------------------------------------------


def test_record_drop_and_read_the_audit_log(index):
    index.add_if_new(FP, "kept")
    match = index.add_if_new(flip(FP, 1, 2), "dropped")
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
    index.add_if_new(FP, "a")
    index.add_exact_if_new(7, "short")
    index.add_if_new(flip(FP, 0, 1, 2, 3, 4, 5), "b")
    index.add_if_new(flip(FP, 0), "dup")  # a duplicate: not stored
    pages = list(index.pages())
    assert [p.key for p in pages if not p.exact] == ["a", "b"], "in the order stored"
    assert sorted((p.key, p.fingerprint, p.exact) for p in pages) == [
        ("a", FP, False),
        ("b", flip(FP, 0, 1, 2, 3, 4, 5), False),
        ("short", 7, True),
    ]
    assert all(p.added_at > 0 for p in pages)


def test_find_by_key(index):
    index.add_if_new(FP, "https://a.example/")
    index.add_exact_if_new((1 << 64) - 1, "https://b.example/")
    (page,) = index.find("https://a.example/")
    assert (page.key, page.fingerprint, page.exact) == ("https://a.example/", FP, False)
    (page,) = index.find("https://b.example/")
    assert (page.fingerprint, page.exact) == ((1 << 64) - 1, True)
    assert index.find("https://c.example/") == []


def test_add_pages_stores_as_given_and_skips_what_is_stored(index):
    from scrapy_simhash.index.base import StoredPage

    index.add_if_new(FP, "a")
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
    assert index.add_exact_if_new(5, "other").key == "short"


def test_a_lone_surrogate_in_a_key_is_stored_escaped(index):
    from scrapy_simhash.index.base import StoredPage

    # Not UTF-8, so neither SQLite nor Redis can store it as is; every backend stores the
    # same escaped key, and finds it under the key as given.
    key, stored = "https://a.example/\ud800", "https://a.example/\\ud800"
    assert index.add_if_new(FP, key) is None
    assert index.add_exact_if_new(7, key) is None
    assert index.query(FP, 0)[0].key == stored
    assert [page.key for page in index.find(key)] == [stored, stored]
    match = index.add_if_new(flip(FP, 1), "\udfff")
    assert match.key == stored
    index.record_drop("\udfff", match)
    assert [(d.key, d.kept_key) for d in index.drops()] == [("\\udfff", stored)]
    far = flip(FP, 10, 20, 30, 40, 50)
    assert index.add_pages([StoredPage("\udc80x", far, 1000.0)]) == 1
    assert index.find("\udc80x") == [StoredPage("\\udc80x", far, 1000.0)]
    assert index.forget(key) == 2
    assert len(index) == 1


def test_forget_removes_a_key_so_it_can_be_stored_again(index):
    index.add_if_new(FP, "a")
    index.add_if_new(flip(FP, 0, 1, 2, 3, 4, 5, 6), "b")
    index.add_exact_if_new(11, "a")
    assert index.forget("a") == 2
    assert index.forget("a") == 0
    assert index.find("a") == []
    assert len(index) == 1
    assert index.query(FP) == [], "its block keys are gone too"
    assert index.add_if_new(flip(FP, 1), "a-again") is None
    assert index.add_exact_if_new(11, "a-again") is None


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
    assert index.add_if_new(flip(FP, 1), "fresh") is None
    assert index.expire(0.0) == 0


def test_expire_drops_removes_audit_log_entries_recorded_before_a_time(index):
    index.add_if_new(FP, "kept")
    index.record_drop("old-a", index.add_if_new(flip(FP, 1), "old-a"))
    index.record_drop("old-b", index.add_if_new(flip(FP, 2), "old-b"))
    cutoff = time.time()
    while time.time() <= cutoff:  # the next entry is strictly later than the cutoff
        time.sleep(0.001)
    index.record_drop("new", index.add_if_new(flip(FP, 3), "new"))
    assert index.expire_drops(cutoff) == 2
    assert [record.key for record in index.drops()] == ["new"]
    assert index.expire_drops(cutoff) == 0
    assert [page.key for page in index.pages()] == ["kept"], "pages are not touched"


def test_audit_log_and_pages_persist(backend):
    if not backend.persistent:
        pytest.skip("not persistent")
    with backend.open() as index:
        index.add_if_new(FP, "a")
        index.record_drop("b", index.add_if_new(flip(FP, 2), "b"))
    with backend.open() as index:
        assert [(d.key, d.kept_key, d.distance) for d in index.drops()] == [("b", "a", 1)]
        assert [p.key for p in index.pages()] == ["a"]
