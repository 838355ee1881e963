"""The index spread over a Redis Cluster: its protocol under concurrency, dead clients and a
master's failover, on a real six-node cluster (the contract suite runs on it too, see
test_index_contract.py)."""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import time
import uuid
from itertools import combinations
from pathlib import Path

import pytest

from scrapy_simhash import open_index
from scrapy_simhash.analysis.fingerprint import hamming_distance
from scrapy_simhash.exceptions import IndexUnavailable, NotAnIndex
from scrapy_simhash.index.redis.layout import hex64, record_tail

FP = 0xF0E1_D2C3_B4A5_9687


def flip(fp: int, *bits: int) -> int:
    for bit in bits:
        fp ^= 1 << bit
    return fp


@pytest.fixture
def uri(redis_cluster) -> str:
    return f"{redis_cluster.url}&spread=true&lease=1s&prefix=spread-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def patient_uri(redis_cluster) -> str:
    """A lease of 2 minutes: a check that returns sooner did not wait for one (a bound on
    time that no load on the machine comes near)."""
    return f"{redis_cluster.url}&spread=true&lease=120s&prefix=spread-{uuid.uuid4().hex[:10]}"


def planted_groups(seed: int, count: int) -> list[list[int]]:
    """*count* groups of five fingerprints, every two of a group within distance 3, groups
    more than 6 apart. The flipped bits fall in different blocks, so the members of a
    group meet in different groups (slots) of the layout."""
    rng = random.Random(seed)
    bases = [rng.getrandbits(64) for _ in range(count)]
    assert min(hamming_distance(a, b) for a, b in combinations(bases, 2)) > 6
    groups = []
    for base in bases:
        bits = [rng.randrange(13 * b, 13 * b + 12) for b in rng.sample(range(5), 3)]
        groups.append([flip(base, *bits[:n]) for n in range(4)] + [flip(base, *bits[1:])])
    return groups


def _check_groups(uri: str, worker: int, groups, start, log_path: str) -> None:
    """Check every member of every group, groups in the same order in every worker (so
    near-duplicates meet), members shuffled; log each page acknowledged as kept."""
    rng = random.Random(worker)
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    with open_index(uri) as index:
        start.wait()
        for number, group in enumerate(groups):
            members = list(group)
            rng.shuffle(members)
            for fp in members:
                if index.check_and_add(fp, f"w{worker}-{fp:016x}").match is None:
                    os.write(fd, f"{number} {fp:016x}\n".encode())
            digest = number + 1  # and a digest per group, checked by every worker
            if index.check_and_add_exact(digest, f"w{worker}-x{number}").match is None:
                os.write(fd, f"x{number} {digest:016x}\n".encode())
    os.close(fd)


def _acknowledged(paths) -> list[tuple[str, int]]:
    found = []
    for path in paths:
        if os.path.exists(path):
            for line in Path(path).read_text().splitlines():
                group, fp = line.split()
                found.append((group, int(fp, 16)))
    return found


def _start(uri: str, groups, count: int, tmp_path, context):
    start = context.Event()
    logs = [str(tmp_path / f"kept-{i}.log") for i in range(count)]
    workers = [
        context.Process(target=_check_groups, args=(uri, i, groups, start, logs[i]))
        for i in range(count)
    ]
    for worker in workers:
        worker.start()
    return start, workers, logs


@pytest.mark.parametrize("round_", [1])
def test_processes_checking_near_duplicates_at_once_keep_exactly_one_per_group(
    uri, tmp_path, round_
):
    groups = planted_groups(round_, 30)
    with open_index(uri):
        pass  # created once, so that the workers only open it
    context = multiprocessing.get_context("spawn")
    start, workers, logs = _start(uri, groups, 4, tmp_path, context)
    time.sleep(1.0)
    start.set()
    for worker in workers:
        worker.join(timeout=240)
        assert worker.exitcode == 0
    kept = _acknowledged(logs)
    per_group = {str(n): 0 for n in range(len(groups))}
    for group, _ in kept:
        per_group[group] = per_group.get(group, 0) + 1
    assert set(per_group.values()) == {1}, "each group, and each digest, kept exactly once"
    with open_index(uri) as index:
        stored = sorted(p.fingerprint for p in index.pages())
        assert stored == sorted(fp for _, fp in kept)
        assert len(index) == len(kept)


def _check_until_killed(uri: str, worker: int, groups, start, log_path: str) -> None:
    """Check members of the groups at random, forever (until killed); log each check, and
    each page acknowledged as kept with its key."""
    rng = random.Random(worker)
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    with open_index(uri) as index:
        start.wait()
        for turn in range(10**6):
            number, group = rng.choice(groups)
            fp = rng.choice(group)
            key = f"w{worker}-{turn}-{fp:016x}"
            kept = index.check_and_add(fp, key).match is None
            os.write(fd, (f"kept {number} {fp:016x} {key}\n" if kept else "checked\n").encode())


def test_clients_killed_at_random_points_lose_nothing_acknowledged(uri, tmp_path):
    """Clients SIGKILLed at random moments, round after round on new groups: every page
    acknowledged is stored, and afterwards a check of every member keeps each group exactly
    once, waiting at most the lease (1 s) for any page a dead client left pending."""
    with open_index(uri):
        pass
    context = multiprocessing.get_context("spawn")
    rng = random.Random(11)
    groups: list[list[int]] = []
    logs = []
    for round_ in range(2):
        fresh = planted_groups(20 + round_, 15)
        numbered = [(len(groups) + i, group) for i, group in enumerate(fresh)]
        groups += fresh
        start = context.Event()
        paths = [str(tmp_path / f"r{round_}-{i}.log") for i in range(3)]
        workers = [
            context.Process(target=_check_until_killed, args=(uri, i, numbered, start, paths[i]))
            for i in range(3)
        ]
        for worker in workers:
            worker.start()
        start.set()
        for worker, path in zip(workers, paths, strict=True):
            deadline = time.monotonic() + 60
            while not (os.path.exists(path) and os.path.getsize(path)):  # checking by now
                assert time.monotonic() < deadline and worker.is_alive()
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 0.2))
            os.kill(worker.pid, signal.SIGKILL)
            worker.join(timeout=30)
        logs += paths
    acknowledged = []
    for path in logs:
        for line in Path(path).read_text().splitlines():
            parts = line.split()
            if len(parts) == 4:  # a line cut by the kill was never acknowledged
                acknowledged.append((int(parts[1]), int(parts[2], 16), parts[3]))
    assert acknowledged, "the workers acknowledged pages before they were killed"
    with open_index(uri) as index:
        for _, fp, key in acknowledged:
            assert [p.fingerprint for p in index.find(key)] == [fp], "acknowledged, so stored"
        for number, group in enumerate(groups):
            for fp in group:
                index.check_and_add(fp, f"after-{number}-{fp:016x}")
        # Each check returned (a dead client blocks one for a lease at most: see
        # test_a_client_dead_after_reserving_blocks_an_older_check_for_one_lease).
        stored = list(index.pages())
    for number, group in enumerate(groups):
        assert sum(p.fingerprint in group for p in stored) == 1, f"group {number}: one kept"
    assert len(stored) == len(groups)


def _dead_reservation(index, fingerprint: int, key: str, txn: str) -> list[str]:
    """What a client killed right after reserving leaves: its pending entries."""
    tail = record_tail(key, time.time())
    calls = index.store.calls.reserve_calls(fingerprint, False, txn, tail, True)
    _, reserved, _ = index.store._candidates(calls, False)
    return reserved


def test_a_client_dead_after_reserving_blocks_an_older_check_for_one_lease(uri):
    with open_index(uri) as index:
        # An attempt older than any other: the next check waits for it, then aborts it.
        oldest = f"{0:016d}{0:08x}{0:06d}"
        assert len(_dead_reservation(index, FP, "dead", oldest)) == 4
        assert index.query(FP) == [], "a pending page is no match for a reader"
        started = time.monotonic()
        assert index.check_and_add(flip(FP, 1), "alive").match is None, "the dead page was aborted"
        waited = time.monotonic() - started
        assert waited >= index.lease  # a lower bound: no load on the machine breaks it
        # A younger attempt left pending is aborted at once: sooner than a lease of 2 minutes.
        youngest = f"{9 * 10**15:016d}{0:08x}{0:06d}"
        assert _dead_reservation(index, flip(FP, 30, 40, 50, 60), "dead-2", youngest)
        with open_index(uri.replace("lease=1s", "lease=120s")) as patient:
            started = time.monotonic()
            assert patient.check_and_add(flip(FP, 30, 40, 50), "alive-2").match is None
            assert time.monotonic() - started < patient.lease
        assert [m.key for m in index.query(flip(FP, 1))] == ["alive"]
        # The checks that met the dead pages removed them from the groups they shared.
        assert _records(index, FP) == []
        # Vacuum removes what no check met.
        far = FP ^ ((1 << 64) - 1)
        assert len(_dead_reservation(index, far, "dead-3", oldest)) == 4
        assert _records(index, far) == [oldest] * 4
        index.compact()
        assert _records(index, far) == []
        assert len(index) == 2


def _records(index, fingerprint: int) -> list[str]:
    """The attempts of the records stored under *fingerprint* in all its groups."""
    import json

    found = []
    for tag, *_ in index.store.calls.group_calls(fingerprint):
        value = index.store.server.client.hget(f"{tag}:fp", hex64(fingerprint))
        found += [record[0] for record in json.loads(value or "[]")]
    return found


def _commit(index, fingerprint: int, key: str, txn: str) -> bool:
    """Phase 2 of a check that reserved *fingerprint* under the attempt *txn*."""
    reply = index.store.cluster.io.call(
        index.keys.home_of(key),
        index.store.cluster.sha["commit"],
        index.store.calls.home_keys(key, txn),
        [key, f"f:{txn}:{hex64(fingerprint)}", repr(time.time()), txn[:16], 600, 86400],
        wait=True,
    )
    return bool(int(reply[0]))


def test_a_slow_check_aborted_by_an_older_one_cannot_commit_afterwards(patient_uri):
    with open_index(patient_uri) as index:
        # A check that reserved first but started later (a younger attempt), then stalled.
        slow = f"{int(time.time() * 1e6) + 10**9:016d}{0:08x}{0:06d}"
        assert _dead_reservation(index, FP, "slow", slow)
        # An older check meets it pending, aborts it at once and commits.
        started = time.monotonic()
        assert index.check_and_add(flip(FP, 3), "older").match is None
        assert time.monotonic() - started < index.lease, "no waiting for a younger one"
        # The slow one wakes up: its commit is refused, it never acknowledges.
        assert _commit(index, FP, "slow", slow) is False
        assert [p.key for p in index.pages()] == ["older"]
        # A fresh attempt of it finds the older page.
        assert index.check_and_add(FP, "slow").match.key == "older"


def test_a_client_dead_after_its_commit_is_kept_and_found(patient_uri):
    with open_index(patient_uri) as index:
        txn = index.store.cluster.attempts.new()
        _dead_reservation(index, FP, "committed", txn)
        assert _commit(index, FP, "committed", txn)
        # Killed before marking its entries committed: readers ask its home.
        started = time.monotonic()
        assert index.check_and_add(flip(FP, 2), "later").match.key == "committed"
        assert time.monotonic() - started < index.lease
        assert [p.key for p in index.pages()] == ["committed"]


def test_spread_and_single_slot_indexes_refuse_each_other(redis_cluster):
    prefix = f"both-{uuid.uuid4().hex[:8]}"
    with open_index(f"{redis_cluster.url}&prefix={prefix}") as index:
        assert index.check_and_add(FP, "a").status == "new"
    with pytest.raises(NotAnIndex, match="rebuild"):
        open_index(f"{redis_cluster.url}&spread=true&prefix={prefix}")
    spread = f"{redis_cluster.url}&spread=true&prefix={prefix}-s"
    open_index(spread).close()
    with pytest.raises(NotAnIndex, match="spread=true"):
        open_index(f"{redis_cluster.url}&prefix={prefix}-s")


def test_no_index_is_created_under_the_prefix_of_a_spread_index_slot(redis_cluster):
    from scrapy_simhash.exceptions import ConfigurationError

    prefix = f"slots-{uuid.uuid4().hex[:8]}"
    spread = f"{redis_cluster.url}&spread=true&prefix={prefix}"
    with open_index(spread) as index:
        assert index.check_and_add(FP, "a").status == "new"
        home = index.keys.home_of("a").strip("{}")
    # The single-slot index 'p:h:<n>' would be home <n> of the spread index 'p'.
    for inside in (home, f"{prefix}:g:0:12", f"{prefix}:a:7"):
        with pytest.raises(ConfigurationError, match="names a slot of a spread index"):
            open_index(f"{redis_cluster.url}&prefix={inside}")
        with pytest.raises(ConfigurationError, match="names a slot of a spread index"):
            open_index(f"{redis_cluster.url}&spread=true&prefix={inside}")
    with open_index(spread) as index:
        assert [p.key for p in index.pages()] == ["a"]
        assert index.check_and_add(FP, "b").status == "duplicate"


def test_rebuild_converts_a_single_slot_index_into_a_spread_one_and_back(redis_cluster):
    from scrapy_simhash.tools.rebuild import rebuild_index

    prefix = f"conv-{uuid.uuid4().hex[:8]}"
    single = f"{redis_cluster.url}&prefix={prefix}"
    spread = f"{redis_cluster.url}&spread=true&prefix={prefix}-spread"
    back = f"{redis_cluster.url}&prefix={prefix}-back"
    with open_index(single) as index:
        for i, fp in enumerate(planted_groups(4, 30)):
            index.check_and_add(fp[0], f"k{i}")
        index.check_and_add_exact(77, "short")
        expected = [(p.key, p.fingerprint, p.exact) for p in index.pages()]
    assert rebuild_index(single, spread, max_distance=3).pages == 31
    assert rebuild_index(spread, back, max_distance=3).pages == 31
    for uri in (spread, back):
        with open_index(uri) as index:
            assert [(p.key, p.fingerprint, p.exact) for p in index.pages()] == expected
            assert index.check_and_add(flip(expected[0][1], 5), "near").match.key == "k0"


def test_keys_and_commands_spread_over_every_master(redis_cluster, uri):
    with open_index(uri) as index:
        rng = random.Random(2)
        for i in range(300):
            index.check_and_add(rng.getrandbits(64), f"https://example.com/{i}")
        masters: dict[str, int] = {}
        for page in index.pages():
            for tag in [index.keys.home_of(page.key)] + [
                index.keys.group(g.block, g.value(page.fingerprint))
                for g in index.store.cluster.groups
            ]:
                name = index.store.cluster.io.master_of(tag)
                masters[name] = masters.get(name, 0) + 1
    assert len(masters) == 3
    assert min(masters.values()) > 0.2 * sum(masters.values())


def test_a_check_fails_rather_than_acknowledging_without_a_replica(redis_cluster):
    prefix = f"r2-{uuid.uuid4().hex[:8]}"
    uri = f"{redis_cluster.url}&spread=true&replicas=2&lease=0.2s&prefix={prefix}"
    with open_index(uri) as index, pytest.raises(IndexUnavailable, match="replica"):
        index.check_and_add(FP, "a")


def test_checks_go_on_after_a_master_forgets_the_scripts(redis_cluster, uri):
    """A master that lost its scripts (restarted, or a replica promoted) answers NOSCRIPT:
    the calls are sent again once the scripts are loaded there."""
    import redis

    with open_index(uri) as index:
        assert index.check_and_add(FP, "a").status == "new"
        for name in {
            index.store.cluster.io.master_of(tag) for tag, *_ in index.store.calls.group_calls(FP)
        }:
            host, port = name.rsplit(":", 1)
            redis.Redis(host=host, port=int(port)).script_flush()
        assert index.check_and_add(flip(FP, 7), "b").match.key == "a"
        assert index.check_and_add(FP ^ ((1 << 64) - 1), "c").status == "new"
        assert len(index) == 2


def _anchors(*paragraphs: int):
    from scrapy_simhash.analysis.anchors import text_anchors

    return text_anchors("\n".join(" ".join(f"w{n}x{i}" for i in range(24)) for n in paragraphs))


def test_a_copy_met_in_the_slot_of_one_shared_anchor_is_decided_there(uri):
    """Two copies checked at once may each see the other in the slot of a different shared
    anchor: one record, which carries the page's whole list of anchors, must decide."""
    far = FP ^ ((1 << 64) - 1)
    with open_index(uri) as index:
        for n, (txn, commit) in enumerate(
            [(index.store.cluster.attempts.new(), True), (f"{0:016d}{0:08x}{0:06d}", False)]
        ):
            key, value = f"original-{n}", flip(FP, 20 * n)
            original = _anchors(*range(10 * n, 10 * n + 10))
            copy = _anchors(*range(10 * n, 10 * n + 8))
            tail = record_tail(key, time.time())
            calls = index.store.anchors.calls(original, txn, tail, hex64(value), True)
            assert len(calls) > 1
            # Reserved in the slot of one anchor it shares with the copy, and no other:
            mine = {str(h) for h in copy.hashes}
            met = next(call for call in calls if mine & set(call[3][8:]))
            index.store.cluster.io.batch([met])
            if commit:  # ... then committed at its home (its client died before the rest)
                assert _commit(index, value, key, txn)
            started = time.monotonic()
            outcome = index.check_and_add(far ^ n, f"copy-{n}", copy)
            if commit:
                assert (outcome.status, outcome.match.key) == ("duplicate", key)
                assert outcome.match.contained
            else:  # an older attempt left pending: waited for one lease, then aborted
                assert outcome.status == "new"
                assert time.monotonic() - started >= index.lease
        assert sorted(p.key for p in index.pages()) == ["copy-1", "original-0"]
        dead = f"{0:016d}"
        held = index.store.server.client.hgetall(f"{met[0]}:anchors").values()
        assert not any(dead in value for value in held), "the check removed what it aborted"
        # What a dead client left where no check met it goes at the next vacuum.
        alone = _anchors(*range(100, 110))
        calls = index.store.anchors.calls(
            alone, f"{dead}{0:08x}{1:06d}", '"gone","1.0"', "0" * 16, True
        )
        index.store.cluster.io.batch(calls)
        slots = [f"{call[0]}:anchors" for call in calls]
        assert all(dead in "".join(index.store.server.client.hgetall(s).values()) for s in slots)
        index.compact()
        assert not any(
            dead in "".join(index.store.server.client.hgetall(s).values()) for s in slots
        )


def test_an_index_written_before_sketches_is_upgraded_by_the_command_only(redis_cluster, uri):
    """Layout 2 (no sketches): refused, left untouched, until ``scrapy-simhash upgrade``
    adds the sketches' format; its pages are kept."""
    import redis

    from scrapy_simhash.sketch import SKETCH_FORMAT

    with open_index(uri) as index:
        assert index.check_and_add(FP, "a").status == "new"
        meta = index.keys.meta
    port = redis_cluster.ports[0]
    client = redis.RedisCluster(host="127.0.0.1", port=port, decode_responses=True)
    try:
        client.hset(meta, "version", "2")
        client.hdel(meta, "sketch")
        says = r"text sketches.*scrapy-simhash upgrade --index"
        with pytest.raises(IndexUnavailable, match=says):
            open_index(uri)
        assert client.hget(meta, "version") == "2" and client.hget(meta, "sketch") is None
        with open_index(uri, upgrade=True) as index:
            assert [page.key for page in index.pages()] == ["a"]
        assert (client.hget(meta, "version"), client.hget(meta, "sketch")) == ("4", SKETCH_FORMAT)
        open_index(uri).close()
    finally:
        client.close()


def test_an_index_written_before_sightings_counts_its_stored_pages_as_seen(redis_cluster, uri):
    """Layout 3 (no sightings): refused until ``scrapy-simhash upgrade``, which counts the
    committed pages each anchor lists as seen holding it."""
    import redis
    from note_pages import assert_upgrade_counts_them, note_pages, store_pages

    pages, note, again = note_pages()
    store_pages(uri, pages)
    with open_index(uri) as index:
        meta, prefix = index.keys.meta, index.prefix
    client = redis.RedisCluster(
        host="127.0.0.1", port=redis_cluster.ports[0], decode_responses=True
    )
    try:
        client.hset(meta, "version", "3")
        for anchor in note[2].hashes:
            client.delete(f"{{{prefix}:a:{anchor % 1024}}}:seen")
        assert_upgrade_counts_them(uri, note, again)
        assert client.hget(meta, "version") == "4"
    finally:
        client.close()
