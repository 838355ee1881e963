"""What keeps a Redis index whole and a check cheap: the eviction policy checked at open, keys
that vanish under a crawl, expiry in bounded batches, pages read in batches, commands that
only read. Against real ``redis-server`` processes started by the fixtures in conftest.py.
"""

from __future__ import annotations

import logging
import time

import pytest
from redis_package import import_redis

from scrapy_simhash import open_index
from scrapy_simhash.exceptions import ConfigurationError, IndexCorrupt, IndexUnavailable
from scrapy_simhash.index.base import StoredPage

redis = import_redis()

from scrapy_simhash.index.redis.index import SWEEP_BATCH  # noqa: E402 (needs redis)

FP = 0xF0E1_D2C3_B4A5_9687


def flip(fp: int, *bits: int) -> int:
    for bit in bits:
        fp ^= 1 << bit
    return fp


def far_apart(count: int, start: int = 0) -> list[int]:
    """Fingerprints at least 8 bits from each other (and from FP's neighbours)."""
    import random

    rng = random.Random(start)
    return [rng.getrandbits(64) for _ in range(count)]


@pytest.fixture
def prefix(redis_prefix) -> str:
    return redis_prefix


@pytest.fixture
def client(redis_client):
    return redis_client


def commands_during(client, action) -> dict[str, int]:
    """Calls per command that the server ran during *action* (scripts' calls included)."""
    client.config_resetstat()
    action()
    stats = client.info("commandstats")
    return {
        name.removeprefix("cmdstat_"): value["calls"]
        for name, value in stats.items()
        if name not in ("cmdstat_info", "cmdstat_config|resetstat")
    }


# -- the eviction policy -----------------------------------------------------------------


@pytest.mark.parametrize("policy", ["allkeys-lru", "allkeys-lfu", "allkeys-random"])
def test_a_server_that_evicts_our_keys_is_refused_with_what_to_set(make_redis_server, policy):
    server = make_redis_server("--maxmemory", "20mb", "--maxmemory-policy", policy)
    with pytest.raises(ConfigurationError) as excinfo:
        open_index(f"{server.url}?prefix=p")
    message = str(excinfo.value)
    assert f"maxmemory-policy {policy}" in message
    assert "CONFIG SET maxmemory-policy noeviction" in message
    assert "allow_eviction=true" in message
    client = redis.Redis(port=server.port)
    assert client.dbsize() == 0, "nothing was written"
    client.close()


def test_eviction_allowed_explicitly_opens_with_a_warning(make_redis_server, caplog):
    server = make_redis_server("--maxmemory", "20mb", "--maxmemory-policy", "allkeys-lru")
    uri = f"{server.url}?prefix=p&allow_eviction=true"
    with (
        caplog.at_level(logging.WARNING, logger="scrapy_simhash.index.redis"),
        open_index(uri) as index,
    ):
        assert index.check_and_add(FP, "a").match is None
    assert any("allkeys-lru" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("policy", ["noeviction", "volatile-lru", "volatile-ttl"])
def test_policies_that_never_evict_our_keys_open(make_redis_server, policy, caplog):
    server = make_redis_server("--maxmemory", "20mb", "--maxmemory-policy", policy)
    uri = f"{server.url}?prefix=p"
    with (
        caplog.at_level(logging.WARNING, logger="scrapy_simhash.index.redis"),
        open_index(uri) as index,
    ):
        assert index.check_and_add(FP, "a").match is None
    assert not any("maxmemory-policy" in r.getMessage() for r in caplog.records)


def test_a_server_refusing_config_is_opened_with_a_warning(make_redis_server, caplog):
    server = make_redis_server("--rename-command", "CONFIG", "")
    with caplog.at_level(logging.WARNING, logger="scrapy_simhash.index.redis"):
        open_index(server.url).close()
    (record,) = [r for r in caplog.records if "maxmemory-policy" in r.getMessage()]
    assert record.levelno == logging.WARNING
    assert "make sure it is noeviction" in record.getMessage()


def test_a_policy_changed_to_evict_under_a_crawl_fails_the_checks(make_redis_server, monkeypatch):
    import scrapy_simhash.index.redis.guards as module

    monkeypatch.setattr(module, "POLICY_RECHECK", 0.0)  # read it at every check
    server = make_redis_server("--maxmemory", "20mb", "--maxmemory-policy", "noeviction")
    admin = redis.Redis(port=server.port)
    with open_index(f"{server.url}?prefix=p") as index:
        assert index.check_and_add(FP, "a").match is None
        admin.config_set("maxmemory-policy", "allkeys-lru")
        with pytest.raises(IndexUnavailable, match="maxmemory-policy allkeys-lru"):
            index.check_and_add(flip(FP, 1), "b")
        with pytest.raises(IndexUnavailable, match="until it is noeviction again"):
            index.check_and_add_exact(5, "c")
        admin.config_set("maxmemory-policy", "noeviction")
        assert index.check_and_add(flip(FP, 1), "b").match.key == "a", "checks resume"
    admin.close()


@pytest.mark.parametrize("lost", ["meta", "everything"])
def test_keys_that_vanish_under_a_crawl_fail_loudly(redis_server, client, prefix, lost):
    with open_index(f"{redis_server.url}?prefix={prefix}") as index:
        assert index.check_and_add(FP, "a").match is None
        if lost == "meta":
            client.delete(f"{{{prefix}}}:meta")
        else:
            client.delete(*client.keys(f"{{{prefix}}}:*"))
        for call in (
            lambda: index.check_and_add(flip(FP, 1), "b").match,
            lambda: index.check_and_add(~FP & (2**64 - 1), "c").match,
            lambda: index.check_and_add_exact(5, "d").match,
            lambda: index.add_pages([StoredPage("e", 12345, 1.0)]),
        ):
            with pytest.raises(IndexCorrupt, match="lost its keys while in use"):
                call()
    assert client.exists(f"{{{prefix}}}:fp") == (lost == "meta"), "and nothing was added"


def test_counters_reset_under_a_crawl_fail_loudly(redis_server, client, prefix):
    with open_index(f"{redis_server.url}?prefix={prefix}") as index:
        for i, fp in enumerate(far_apart(3)):
            assert index.check_and_add(fp, str(i)).match is None
        client.delete(f"{{{prefix}}}:n")
        with pytest.raises(IndexCorrupt, match="lost its keys while in use"):
            index.check_and_add(FP, "x")


# -- expiry: bounded work in a check, never a match after the ttl ------------------------


def test_a_check_sweeps_a_bounded_batch_and_expired_pages_never_match(redis_server, client, prefix):
    uri = f"{redis_server.url}?prefix={prefix}"
    now = time.time()
    expired = 5 * SWEEP_BATCH + 7
    with open_index(uri + "&ttl=2.4") as index:  # a sweep is due at most every 0.1 s
        index.add_pages(
            [StoredPage(f"old-{i}", fp, now - 3600) for i, fp in enumerate(far_apart(expired))]
            + [StoredPage("recent", FP, now)]
        )
        assert len(index) == expired + 1
        time.sleep(0.15)
        calls = commands_during(
            client, lambda: index.check_and_add(flip(FP, 40, 41, 42, 43), "n").match
        )
        assert len(index) == expired + 2 - SWEEP_BATCH, "one batch swept, no more"
        assert "hscan" not in calls and "hgetall" not in calls
        # About 20 commands a page removed (its tables, records, anchors and sketch).
        assert sum(calls.values()) < 22 * SWEEP_BATCH, calls
        # The next checks go on with the backlog, a batch each.
        for i, fp in enumerate(far_apart(4, start=99)):
            assert index.check_and_add(fp, f"m{i}").match is None
        assert len(index) == expired + 6 - 5 * SWEEP_BATCH
        # A page past its ttl is no match, even before it is swept.
        old = far_apart(expired)[-1]
        assert index.check_and_add(flip(old, 0), "variant").match is None
        assert len(index) == 7, "the last check swept the rest"
    with open_index(uri) as index:
        assert sorted(p.key for p in index.pages()) == [
            "m0",
            "m1",
            "m2",
            "m3",
            "n",
            "recent",
            "variant",
        ]


def test_expired_exact_entries_are_replaced(redis_server, prefix):
    uri = f"{redis_server.url}?prefix={prefix}"
    with open_index(uri) as index:
        index.add_pages([StoredPage("old", 77, time.time() - 3600, exact=True)])
    with open_index(uri + "&ttl=60") as index:
        index.store.maintenance._next_sweep = float(
            "inf"
        )  # no sweep: the check alone must see the expiry
        assert index.check_and_add_exact(77, "new").match is None
        assert index.check_and_add_exact(77, "again").match.key == "new"
        assert [(p.key, p.exact) for p in index.pages()] == [("new", True)]
        assert len(index) == 1


def test_commands_that_only_read_never_expire_pages(redis_server, prefix, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from scrapy_simhash.cli import main

    uri = f"{redis_server.url}?prefix={prefix}"
    with open_index(uri) as index:
        index.add_pages([StoredPage("old", FP, time.time() - 3600), StoredPage("new", 5, 1e10)])
    monkeypatch.chdir(tmp_path)
    for command in (["stats"], ["export", str(tmp_path / "x.simhash")], ["dropped"]):
        result = CliRunner().invoke(main, [*command, "--index", uri + "&ttl=60"])
        assert result.exit_code == 0, result.output
    with open_index(uri + "&ttl=60") as index:
        assert [p.key for p in index.pages()] == ["new"], "expired: not listed"
    with open_index(uri) as index:
        assert sorted(p.key for p in index.pages()) == ["new", "old"], "but not deleted"


# -- pages in batches ----------------------------------------------------------------------


def test_pages_are_read_in_batches_in_the_order_stored(redis_server, client, prefix, monkeypatch):
    import scrapy_simhash.index.redis.maintenance as module

    monkeypatch.setattr(module, "_BATCH", 50)
    at = time.time() - 100
    stored = [StoredPage(f"p{i}", fp, at) for i, fp in enumerate(far_apart(180))]  # one moment
    stored += [StoredPage(f"x{i}", i, at - 1 + i / 1000, exact=True) for i in range(40)]
    with open_index(f"{redis_server.url}?prefix={prefix}") as index:
        assert index.add_pages(stored) == len(stored)
        pages = index.pages()
        calls = commands_during(client, lambda: next(pages))
        assert calls.get("zrangebyscore") == 1 and calls.get("hget", 0) <= 50, calls
        assert "hscan" not in calls
        listed = [next(pages) for _ in range(len(stored) - 1)]
        assert list(pages) == []
    expected = sorted(stored, key=lambda p: p.added_at)  # stable: ties in the order stored
    assert listed == expected[1:]


@pytest.mark.parametrize("slot", ["h:3", "g:0:4095", "x:12", "a:0", "d:1", "j:2"])
def test_an_index_is_not_created_under_a_prefix_shaped_as_a_spread_slot(
    redis_server, prefix, client, slot
):
    url = f"{redis_server.url}?prefix={prefix}:{slot}"
    with pytest.raises(ConfigurationError, match=f"prefix {prefix!r}.*Choose a prefix"):
        open_index(url)
    assert not list(client.scan_iter(match=f"{{{prefix}*"))
    # Not a slot's shape: created as usual.
    with open_index(f"{redis_server.url}?prefix={prefix}:{slot}x") as index:
        assert index.check_and_add(FP, "a").status == "new"
