"""What only the Redis index does: URIs, passwords, scripts, outages, many processes, TTL.

The contract every backend meets runs against Redis in test_index_contract.py. These tests
talk to real ``redis-server`` processes started by the fixtures in conftest.py.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import random
import socket
import subprocess
import time
import uuid
from itertools import combinations
from pathlib import Path

import pytest
from redis_package import import_redis
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_simhash import open_index
from scrapy_simhash.analysis.anchors import text_anchors
from scrapy_simhash.analysis.fingerprint import hamming_distance
from scrapy_simhash.anchors import ANCHORS_FORMAT
from scrapy_simhash.exceptions import (
    ConfigurationError,
    IndexNotFound,
    IndexParameterMismatch,
    IndexUnavailable,
    NotAnIndex,
    UnsupportedIndexURI,
)
from scrapy_simhash.index.base import StoredPage
from scrapy_simhash.sketch import SKETCH_FORMAT

redis = import_redis()

from scrapy_simhash.index.redis.index import duration  # noqa: E402 (needs redis)

ROOT = Path(__file__).resolve().parents[2]
FP = 0xF0E1_D2C3_B4A5_9687
PASSWORD = "s3cr3t-Pa55"


def flip(fp: int, *bits: int) -> int:
    for bit in bits:
        fp ^= 1 << bit
    return fp


@pytest.fixture
def prefix(redis_prefix) -> str:
    return redis_prefix


@pytest.fixture
def uri(redis_server, prefix) -> str:
    return f"{redis_server.url}?prefix={prefix}"


@pytest.fixture
def client(redis_client):
    return redis_client


# -- URIs, prefixes, parameters ----------------------------------------------------------


def test_key_layout_under_the_prefix(uri, prefix, client):
    with open_index(uri) as index:
        assert index.location == f"{uri}"
        index.check_and_add(FP, "https://a.example/")
        index.check_and_add_exact(5, "https://b.example/")
    names = set(client.scan_iter(match="{" + prefix + "}:*"))
    tables = {name for name in names if ":t:" in name}
    assert names - tables == {
        f"{{{prefix}}}:{k}" for k in ("meta", "n", "fp", "exact", "order", "keys")
    }
    assert all(client.ttl(name) == -1 for name in names), "no key has a time to live"
    assert len(tables) == 10, "one set per table"
    for name in tables:
        assert client.object("encoding", name) == "intset"
    meta = client.hgetall(f"{{{prefix}}}:meta")
    assert meta["format"] == "scrapy-simhash"
    assert (meta["max_distance"], meta["blocks"], meta["bucket_bits"]) == ("3", "5", "16")
    stored = json.loads(client.hget(f"{{{prefix}}}:fp", f"{FP:016x}"))
    assert stored[0][1] == "https://a.example/"


@pytest.mark.parametrize(
    ("version", "says"),
    [
        ("2", "export it with the scrapy-simhash that built it"),
        ("3", "scrapy-simhash upgrade --index"),
        ("4", "written before text sketches.*scrapy-simhash upgrade --index"),
        ("5", "written before counting boilerplate in pages seen.*scrapy-simhash upgrade"),
        ("7", "upgrade scrapy-simhash"),
    ],
)
def test_another_layout_version_is_refused_and_left_untouched(uri, client, prefix, version, says):
    with open_index(uri) as index:
        index.check_and_add(FP, "a")
    meta = f"{{{prefix}}}:meta"
    client.hset(meta, "version", version)
    before = {name: client.type(name) for name in client.scan_iter(match="{" + prefix + "}:*")}
    with pytest.raises(IndexUnavailable, match=f"layout version {version}.*{says}"):
        open_index(uri)
    after = {name: client.type(name) for name in client.scan_iter(match="{" + prefix + "}:*")}
    assert after == before and client.hget(meta, "version") == version


def test_default_prefix_is_simhash(redis_server):
    with open_index(redis_server.url.replace("/0", "/15")) as index:
        assert index.prefix == "simhash"
        assert index.location == f"redis://127.0.0.1:{redis_server.port}/15?prefix=simhash"


def test_bad_uris(redis_server):
    base = redis_server.url
    with pytest.raises(UnsupportedIndexURI, match="Unknown option 'prefx'"):
        open_index(f"{base}?prefx=a")
    with pytest.raises(UnsupportedIndexURI, match=r"ttl='soon' .*'soon' is not a duration"):
        open_index(f"{base}?ttl=soon")
    with pytest.raises(UnsupportedIndexURI, match="database 'x'"):
        open_index(f"redis://127.0.0.1:{redis_server.port}/x")
    with pytest.raises(UnsupportedIndexURI, match="need TLS: use rediss://"):
        open_index(f"{base}?ssl_cert_reqs=none")
    with pytest.raises(ConfigurationError, match="no braces"):
        open_index(base + "?prefix=%7Bp%7D")
    with pytest.raises(ConfigurationError, match="makes 11-bit keys; use blocks=7 to 10"):
        open_index(f"{base}?prefix=short-keys", max_distance=5, blocks=6)


def test_durations():
    assert duration("3600") == 3600
    assert duration("90s") == 90
    assert duration("45min") == 45 * 60
    assert duration("12h") == 12 * 3600
    assert duration("30d") == 30 * 86400
    assert duration("1.5w") == 1.5 * 7 * 86400
    for bad in ("", "0", "-1d", "3y", "d", "45m"):
        with pytest.raises(ValueError):
            duration(bad)


@pytest.mark.parametrize(
    ("max_distance", "blocks", "bucket_bits"),
    [(3, 5, 16), (3, 4, 16), (3, 6, 12), (2, 4, 20), (4, 6, 16), (1, 3, 32), (0, 1, 16)],
)
def test_script_rebuilds_the_stored_fingerprint_for_every_layout(
    uri, max_distance, blocks, bucket_bits
):
    """The Lua script puts the bits outside the key back where they came from (blocks
    across bit 32 included) and finds the same matches as brute force."""
    rng = random.Random(blocks * 100 + max_distance)
    with open_index(f"{uri}&bucket_bits={bucket_bits}", max_distance=max_distance,
                    blocks=blocks) as index:  # fmt: skip
        stored = []
        for i in range(200):
            fp = rng.getrandbits(64)
            if index.check_and_add(fp, str(i)).match is None:
                stored.append(fp)
        for fp in rng.sample(stored, 50):
            probe = flip(fp, *rng.sample(range(64), rng.randint(0, max_distance)))
            best = min(hamming_distance(probe, other) for other in stored)
            match = index.check_and_add(probe, "probe").match
            assert match is not None
            assert match.distance == best == hamming_distance(probe, match.fingerprint)
            assert match.key == str(stored.index(match.fingerprint))  # key of that very page


def test_create_false_and_bucket_bits_are_checked(uri):
    with pytest.raises(IndexNotFound, match="No index at redis://"):
        open_index(uri, create=False)
    with open_index(uri + "&bucket_bits=12") as index:
        assert index.bucket_bits == 12
        index.check_and_add(FP, "a")
    with open_index(uri, create=False) as index:
        assert index.bucket_bits == 12
        assert index.check_and_add(flip(FP, 1, 40, 63), "b").match.key == "a"
    with pytest.raises(IndexParameterMismatch, match="bucket_bits: index has 12, requested 16"):
        open_index(uri + "&bucket_bits=16")


def test_foreign_keys_under_the_prefix_are_not_an_index(uri, prefix, client):
    client.set(f"{{{prefix}}}:something", "theirs")
    with pytest.raises(NotAnIndex, match="no scrapy-simhash parameters"):
        open_index(uri)
    assert client.get(f"{{{prefix}}}:something") == "theirs", "left untouched"
    assert client.exists(f"{{{prefix}}}:meta") == 0

    other = prefix + "-other"
    client.hset(f"{{{other}}}:meta", mapping={"format": "another-tool"})
    with pytest.raises(NotAnIndex, match="not scrapy-simhash's"):
        open_index(uri.replace(prefix, other))
    assert client.hgetall(f"{{{other}}}:meta") == {"format": "another-tool"}


def test_keys_of_other_prefixes_do_not_matter(uri, prefix, client):
    client.set(f"{prefix}:plain", "x")  # no braces: another application's key
    with open_index(uri) as index:
        assert len(index) == 0
        # What the index writes, forgets, expires and compacts leaves that key alone.
        assert index.check_and_add(FP, "a").status == "new"
        assert index.forget("a") == 1
        index.add_pages([StoredPage("b", FP, 1.0)])
        assert index.expire(2.0) == 1
        index.compact()
        assert len(index) == 0
    assert client.get(f"{prefix}:plain") == "x", "another application's key survives"


def test_warns_when_appendonly_is_off(uri, caplog):
    with caplog.at_level(logging.WARNING, logger="scrapy_simhash.index.redis"):
        open_index(uri).close()
    assert [r.getMessage() for r in caplog.records] == [
        f"Redis at {uri} has appendonly off: a restart of the server loses every page "
        "stored since its last snapshot. Turn it on with: CONFIG SET appendonly yes "
        "(and in redis.conf)"
    ]


def test_no_warning_with_appendonly_and_debug_when_config_is_refused(make_redis_server, caplog):
    server = make_redis_server("--appendonly", "yes", "--rename-command", "CONFIG", "")
    with caplog.at_level(logging.DEBUG, logger="scrapy_simhash.index.redis"):
        open_index(server.url).close()
    (record,) = [r for r in caplog.records if "appendonly" in r.getMessage()]
    assert record.levelno == logging.DEBUG
    assert record.getMessage().startswith(f"Could not read the appendonly setting of {server.url}")


# -- passwords ---------------------------------------------------------------------------


def test_password_never_shows(make_redis_server, caplog):
    server = make_redis_server("--requirepass", PASSWORD)
    good = f"redis://:{PASSWORD}@127.0.0.1:{server.port}/0?prefix=p"
    with caplog.at_level(logging.DEBUG):
        with open_index(good) as index:
            index.check_and_add(FP, "a")
            assert PASSWORD not in index.location
            assert PASSWORD not in repr(index)
            assert index.location == f"redis://127.0.0.1:{server.port}/0?prefix=p"
        with pytest.raises(IndexUnavailable) as excinfo:
            open_index(good.replace(PASSWORD, PASSWORD + "x"))
        message = str(excinfo.value)
        assert f"127.0.0.1:{server.port}" in message
        assert "refused the credentials" in message
        assert PASSWORD not in message
        with pytest.raises(UnsupportedIndexURI) as excinfo:
            open_index(good + "&nope=1")
        assert PASSWORD not in str(excinfo.value)
        assert ":***@" in str(excinfo.value)
    assert caplog.records, "the appendonly warning at least"
    assert all(PASSWORD not in r.getMessage() for r in caplog.records)


HOSTILE = "Xq9/Zr7#Wk3?Vt5@Yp1:Hn6"
PIECES = ("Xq9", "Zr7", "Wk3", "Vt5", "Yp1", "Hn6")


def leaks(text: str) -> list[str]:
    return [piece for piece in PIECES if piece in text]


def test_hostile_passwords_never_show(make_redis_server, caplog, tmp_path, monkeypatch):
    """A password with unescaped '/', '#', '?', '@' and ':', or given as an option, is
    refused with a message that shows none of it; written in %XX form it works, and no
    message, log line, repr or command output shows it."""
    from urllib.parse import quote

    from click.testing import CliRunner
    from scrapy.utils.test import get_crawler

    from scrapy_simhash import SimhashDedupMiddleware
    from scrapy_simhash.cli import main
    from scrapy_simhash.settings import SimhashSettings

    server = make_redis_server("--requirepass", HOSTILE)
    where = f"127.0.0.1:{server.port}/0"
    raw = [
        f"redis://:{HOSTILE}@{where}?prefix=p",
        f"redis://user:{HOSTILE}@{where}?prefix=p",
        f"redis://{HOSTILE}@{where}",
        f"redis://{where}?prefix=p&password={HOSTILE.replace('#', '').replace('?', '')}",
        f"redis://{where}?password={quote(HOSTILE, safe='')}",
    ]
    for uri in raw:
        with pytest.raises(UnsupportedIndexURI) as excinfo:
            open_index(uri)
        assert leaks(str(excinfo.value)) == [], (uri, str(excinfo.value))
        assert leaks(repr(SimhashSettings(index_uri=uri))) == []
    good = f"redis://:{quote(HOSTILE, safe='')}@{where}?prefix=p"
    monkeypatch.chdir(tmp_path)
    with caplog.at_level(logging.DEBUG):
        with open_index(good) as index:
            assert index.check_and_add(FP, "a").match is None
            assert leaks(index.location + repr(index)) == []
        for uri in [*raw, good, good.replace("Xq9", "Xq8"), good + "&nope=1"]:
            result = CliRunner().invoke(main, ["stats", "--index", uri])
            assert leaks(result.output) == [], (uri, result.output)
        settings = {
            "SIMHASH_INDEX_URI": good,
            "ITEM_PIPELINES": {"scrapy_simhash.SimhashDedupPipeline": 300},
        }
        SimhashDedupMiddleware.from_crawler(get_crawler(settings_dict=settings))
    assert "are both enabled on the index redis://:***@" in caplog.text
    assert leaks(caplog.text) == []


def test_user_and_password_with_acl(make_redis_server):
    """An ACL user limited to the index's keys; a password with URL-special characters
    written in %XX form."""
    from urllib.parse import quote

    password = "p@ss/w:rd%#?"
    server = make_redis_server()
    admin = redis.Redis(port=server.port)
    admin.acl_setuser(
        "crawler", enabled=True, passwords=[f"+{password}"], keys=["{crawl}:*"], commands=["+@all"]
    )
    admin.close()
    uri = f"redis://crawler:{quote(password, safe='')}@127.0.0.1:{server.port}/0?prefix=crawl"
    with open_index(uri) as index:
        assert index.check_and_add(FP, "a").match is None
        assert index.check_and_add(flip(FP, 2), "b").match.key == "a"


@pytest.mark.slow
def test_rediss_with_tls_and_password(make_redis_server, tmp_path):
    import shutil

    if shutil.which("openssl") is None:
        pytest.skip("needs openssl to make a certificate")
    cert, key = tmp_path / "server.crt", tmp_path / "server.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        tls_port = sock.getsockname()[1]
    make_redis_server(
        "--tls-port", str(tls_port), "--tls-cert-file", str(cert), "--tls-key-file", str(key),
        "--tls-auth-clients", "no", "--requirepass", PASSWORD,
    )  # fmt: skip
    base = f"rediss://:{PASSWORD}@127.0.0.1:{tls_port}/0?prefix=tls"
    with open_index(f"{base}&ssl_ca_certs={cert}") as index:
        assert index.location == f"rediss://127.0.0.1:{tls_port}/0?prefix=tls"
        assert index.check_and_add(FP, "a").match is None
    with open_index(f"{base}&ssl_cert_reqs=none") as index:
        assert index.check_and_add(flip(FP, 5), "b").match.key == "a"
    with pytest.raises(
        IndexUnavailable, match=f"Cannot reach Redis at rediss://127.0.0.1:{tls_port}"
    ):
        open_index(base)  # the self-made certificate is not trusted by default
    assert PASSWORD not in index.location


def test_wrong_key_types_are_a_corrupt_index(uri, prefix, client):
    from scrapy_simhash.exceptions import IndexCorrupt

    with open_index(uri) as index:
        client.set(f"{{{prefix}}}:fp", "not a hash")
        with pytest.raises(IndexCorrupt, match="another program wrote under the prefix"):
            index.check_and_add(FP, "a")
        with pytest.raises(IndexCorrupt, match="wrong type"):
            index.add_pages([StoredPage("a", FP, 1.0)])
        client.set(f"{{{prefix}}}:order", "not a sorted set")
        with pytest.raises(IndexCorrupt, match="wrong type"):
            list(index.pages())


def test_out_of_memory_says_so(make_redis_server):
    server = make_redis_server("--maxmemory", "3mb", "--maxmemory-policy", "noeviction")
    rng = random.Random(3)
    with open_index(f"{server.url}?prefix=full") as index:
        with pytest.raises(IndexUnavailable, match=r"is out of memory .* raise its maxmemory"):
            for i in range(100_000):
                index.check_and_add(rng.getrandbits(64), f"https://a.example/{i}")
        assert len(index) > 100, "it was not full from the start"


# -- scripts, outages, restarts ----------------------------------------------------------


def test_script_flush_is_survived(uri, client):
    with open_index(uri) as index:
        assert index.check_and_add(FP, "a").match is None
        client.script_flush()
        assert index.check_and_add(flip(FP, 7), "b").match.key == "a"
        client.script_flush()
        assert index.check_and_add_exact(1, "c").match is None
        client.script_flush()
        index.forget("c")
        assert len(index) == 1


def test_server_down_at_open_names_host_and_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(IndexUnavailable) as excinfo:
        open_index(f"redis://:{PASSWORD}@127.0.0.1:{port}/0?timeout=2")
    message = str(excinfo.value)
    assert message.startswith(f"Cannot reach Redis at redis://127.0.0.1:{port}/0?prefix=simhash")
    assert "start the server or fix SIMHASH_INDEX_URI" in message
    assert PASSWORD not in message


@pytest.mark.slow
def test_server_restart_mid_crawl_then_reconnect(make_redis_server):
    server = make_redis_server("--appendonly", "yes")
    with open_index(f"{server.url}?prefix=restart") as index:
        assert index.check_and_add(FP, "a").match is None
        server.stop()
        calls = [
            lambda: index.check_and_add(flip(FP, 1), "b").match,
            lambda: index.check_and_add_exact(3, "c").match,
            lambda: index.query(FP),
            lambda: len(index),
            lambda: list(index.pages()),
        ]
        down = f"Cannot reach Redis at .*:{server.port}"
        with pytest.raises(IndexUnavailable, match=down):
            calls[0]()
        # Then, for the reconnect pause, calls fail at once without trying the server again:
        # a listener on its port counts the connections they make (none), where a time
        # bound would fail on a loaded machine.
        with socket.create_server(("127.0.0.1", server.port)) as listener:
            listener.setblocking(False)
            for call in calls[1:]:
                with pytest.raises(IndexUnavailable, match=down):
                    call()
            with pytest.raises(BlockingIOError):
                listener.accept()  # no connection waiting: none was tried
        server.start("--appendonly", "yes")
        time.sleep(index.reconnect_pause)
        assert index.check_and_add(flip(FP, 1), "b").match.key == "a", "reconnected, data kept"
        assert len(index) == 1


ARTICLE = (
    "The city council approved a new tram line on Tuesday after a long debate about costs. "
    "The line will connect the harbour district with the university campus and the central "
    "station, and the first trams are expected to run in the spring of next year, according "
    "to the transport department. Residents of the eastern suburbs welcomed the decision."
)


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_pipeline_keeps_items_while_redis_is_down_then_dedups_again(make_redis_server):
    """SIMHASH_ON_INDEX_ERROR='keep': an outage lets items through, counted; after the
    restart the same pipeline checks items again."""
    from scrapy.utils.test import get_crawler

    from scrapy_simhash import NearDuplicate, SimhashDedupPipeline

    server = make_redis_server("--appendonly", "yes")
    crawler = get_crawler(
        settings_dict={
            "SIMHASH_INDEX_URI": f"{server.url}?prefix=pipe&timeout=2",
            "TELNETCONSOLE_ENABLED": False,
            "REMOTE_CONTROL_ENABLED": False,
        }
    )
    crawler.stats.open_spider()
    pipeline = SimhashDedupPipeline.from_crawler(crawler)
    pipeline.open_spider()
    try:
        first = {"url": "https://a.example/1", "title": "Tram", "content": ARTICLE}
        assert await pipeline.process_item(first) is first
        server.stop()
        second = {"url": "https://b.example/1", "title": "Tram", "content": ARTICLE}
        assert await pipeline.process_item(second) is second, "kept unchecked"
        assert crawler.stats.get_value("simhash/errors/index") == 1
        server.start("--appendonly", "yes")
        time.sleep(pipeline.dedup.index.reconnect_pause)
        with pytest.raises(NearDuplicate):
            await pipeline.process_item(dict(second))
    finally:
        pipeline.close_spider()


# -- many processes ----------------------------------------------------------------------


def _hammer(uri: str, worker: int, clusters: list[list[int]], start, results) -> None:
    order = [fp for cluster in clusters for fp in cluster]
    random.Random(worker).shuffle(order)
    kept = []
    with open_index(uri) as index:
        start.wait()
        for fp in order:
            if index.check_and_add(fp, f"w{worker}-{fp:016x}").match is None:
                kept.append(fp)
    results.put((worker, kept))


def _open_new_indexes_at_once(uris: list[str], worker: int, barrier, results) -> None:
    errors = []
    for uri in uris:
        barrier.wait(timeout=60)
        try:
            with open_index(uri) as index:
                index.check_and_add(FP, f"w{worker}")
        except Exception as e:
            errors.append(f"{type(e).__name__}: {e}")
    results.put(errors)


@pytest.mark.slow
def test_processes_creating_one_new_index_at_once_all_open_it(redis_server):
    # The first process writes the parameters and then its pages; another that found no
    # parameters a moment before must not take those pages for foreign keys.
    uris = [f"{redis_server.url}?prefix=new-{uuid.uuid4().hex[:8]}" for _ in range(25)]
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(4), context.Queue()
    workers = [
        context.Process(target=_open_new_indexes_at_once, args=(uris, i, barrier, results))
        for i in range(4)
    ]
    for worker in workers:
        worker.start()
    errors = [e for _ in workers for e in results.get(timeout=120)]
    for worker in workers:
        worker.join(timeout=60)
    assert errors == []
    for uri in uris:
        with open_index(uri) as index:
            assert len(index) == 1, "one page per index: the others were near-duplicates"


@pytest.mark.slow
def test_processes_adding_near_duplicates_at_once_keep_one_of_each(uri):
    rng = random.Random(5)
    bases = [rng.getrandbits(64) for _ in range(150)]
    assert min(hamming_distance(a, b) for a, b in combinations(bases, 2)) > 6
    # Every member of a cluster is within 3 bits of every other: exactly one may be kept.
    clusters = []
    for base in bases:
        bits = rng.sample(range(64), 3)
        clusters.append([flip(base, *bits[:n]) for n in range(4)] + [flip(base, *bits[1:])])
    with open_index(uri):
        pass  # created once, so the workers only open it
    context = multiprocessing.get_context("spawn")
    start, results = context.Event(), context.Queue()
    workers = [
        context.Process(target=_hammer, args=(uri, i, clusters, start, results)) for i in range(4)
    ]
    for worker in workers:
        worker.start()
    time.sleep(0.5)
    start.set()
    kept = [fp for _ in workers for fp in results.get(timeout=120)[1]]
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    assert len(kept) == len(clusters), "each cluster kept exactly once across processes"
    for cluster in clusters:
        assert sum(fp in cluster for fp in kept) == 1
    with open_index(uri) as index:
        assert len(index) == len(clusters)
        assert sorted(p.fingerprint for p in index.pages()) == sorted(kept)


# -- expiry ------------------------------------------------------------------------------


def test_ttl_expired_pages_are_swept_by_a_check_not_at_open(uri, client, prefix):
    now = time.time()
    with open_index(uri) as index:
        index.add_pages(
            [
                StoredPage("old", FP, now - 2 * 86400),
                StoredPage("old-short", 9, now - 3 * 86400, exact=True),
                StoredPage("recent", flip(FP, *range(8)), now - 3600),
            ]
        )
        index.record_drop("x", index.check_and_add(flip(FP, 0), "x").match)
    with open_index(uri + "&ttl=1d") as index:
        assert index.ttl == 86400
        assert [p.key for p in index.pages()] == ["recent"], "expired pages are not listed"
        assert len(index) == 3, "opening removes nothing"
        assert index.check_and_add(flip(FP, 0), "new").match is None, "the old page expired"
        assert len(index) == 2, "the first check swept the expired pages"
    with open_index(uri) as index:
        assert [d.key for d in index.drops()] == ["x"], "drops younger than the ttl stay"


@pytest.mark.slow
def test_ttl_sweep_runs_again_after_its_interval(uri, client, prefix):
    with open_index(uri + "&ttl=2.4") as index:  # sweeps at most every 0.1 s
        assert index.check_and_add(FP, "a").match is None
        time.sleep(2.6)
        assert index.check_and_add(flip(FP, 1), "b").match is None, "a expired before b was checked"
        assert [p.key for p in index.pages()] == ["b"]


# -- Redis Cluster -----------------------------------------------------------------------


def _cluster_ports(count: int) -> list[int]:
    """Ports whose cluster bus port (port + 10000) is free too."""
    rng = random.Random()
    ports: list[int] = []
    while len(ports) < count:
        port = rng.randint(20000, 45000)
        try:
            for candidate in (port, port + 10000):
                with socket.socket() as sock:
                    sock.bind(("127.0.0.1", candidate))
        except OSError:
            continue
        ports.append(port)
    return ports


@pytest.fixture
def redis_cluster(make_redis_server):
    """A three-node Redis Cluster (no replicas) on 127.0.0.1."""
    import shutil

    if shutil.which("redis-cli") is None:
        pytest.fail("redis-cli is missing (it comes with redis-server)")
    ports = _cluster_ports(3)
    for port in ports:
        make_redis_server(
            "--cluster-enabled", "yes", "--cluster-config-file", f"nodes-{port}.conf", port=port
        )
    subprocess.run(
        ["redis-cli", "--cluster", "create", *[f"127.0.0.1:{p}" for p in ports],
         "--cluster-replicas", "0", "--cluster-yes"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    for port in ports:
        client = redis.Redis(port=port, decode_responses=True)
        while client.cluster("info")["cluster_state"] != "ok":
            assert time.monotonic() < deadline, "the cluster did not become ready"
            time.sleep(0.1)
        client.close()
    return ports


def test_redis_cluster_one_index_in_one_slot_atomic_across_processes(redis_cluster):
    uri = f"redis://127.0.0.1:{redis_cluster[0]}/0?prefix=crawl&cluster=true"
    with open_index(uri) as index:
        assert index.location == uri
        assert index.check_and_add(FP, "a").match is None
        assert index.check_and_add(flip(FP, 1, 33), "b").match.key == "a"
        assert index.check_and_add_exact(4, "c").match is None
        assert index.check_and_add_exact(4, "d").match.key == "c"
        index.record_drop("b", index.query(flip(FP, 1, 33))[0])
        assert index.add_pages([StoredPage("e", flip(FP, *range(10)), 5.0)]) == 1
        assert [p.key for p in index.pages()] == ["e", "a", "c"]
        assert index.expire(10.0) == 1
        assert index.forget("c") == 1
        assert [d.key for d in index.drops()] == ["b"]
        assert len(index) == 1
    cluster = redis.RedisCluster(host="127.0.0.1", port=redis_cluster[0], decode_responses=True)
    try:
        names = list(cluster.scan_iter(match="{crawl}:*"))
        assert len(names) > 10
        assert {cluster.keyslot(name) for name in names} == {cluster.keyslot("{crawl}")}
    finally:
        cluster.close()
    with pytest.raises(UnsupportedIndexURI, match="only database 0"):
        open_index(uri.replace("/0?", "/1?"))

    # Paragraph anchors: their keys are in the index's slot, checked in its script.
    lines = [" ".join(f"w{n}x{i}" for i in range(24)) for n in range(10)]
    with open_index(uri.replace("prefix=crawl", "prefix=anchored")) as index:
        assert index.check_and_add(FP, "a", text_anchors("\n".join(lines))).status == "new"
        far = flip(FP, *range(0, 64, 3))
        outcome = index.check_and_add(far, "b", text_anchors("\n".join(lines[:7])))
        assert (outcome.status, outcome.match.key, outcome.match.contained) == (
            "duplicate",
            "a",
            True,
        )
        assert index.forget("a") == 1
        assert index.check_and_add(far, "b", text_anchors("\n".join(lines[:7]))).status == "new"

    # Processes racing on near-duplicates, through another node of the cluster.
    uri = f"redis://127.0.0.1:{redis_cluster[1]}/0?cluster=true&prefix=race"
    rng = random.Random(9)
    clusters = []
    for _ in range(60):
        base, bits = rng.getrandbits(64), rng.sample(range(64), 3)
        clusters.append([flip(base, *bits[:n]) for n in range(4)])
    with open_index(uri):
        pass
    context = multiprocessing.get_context("spawn")
    start, results = context.Event(), context.Queue()
    workers = [
        context.Process(target=_hammer, args=(uri, i, clusters, start, results)) for i in range(3)
    ]
    for worker in workers:
        worker.start()
    start.set()
    kept = [fp for _ in workers for fp in results.get(timeout=120)[1]]
    for worker in workers:
        worker.join(timeout=60)
    assert min(hamming_distance(a[0], b[0]) for a, b in combinations(clusters, 2)) > 6
    for worker in workers:
        assert worker.exitcode == 0
    for cluster in clusters:
        assert sum(fp in cluster for fp in kept) == 1, "each cluster kept exactly once"


def test_an_index_written_before_anchors_is_upgraded_by_the_command_only(uri, client, prefix):
    with open_index(uri) as index:
        index.check_and_add(FP, "a")
    meta = f"{{{prefix}}}:meta"
    client.hset(meta, "version", "3")
    client.hdel(meta, "anchors")
    with pytest.raises(IndexUnavailable, match="scrapy-simhash upgrade --index"):
        open_index(uri)
    assert client.hget(meta, "version") == "3"
    with open_index(uri, upgrade=True) as index:
        assert [page.key for page in index.pages()] == ["a"]
    assert client.hget(meta, "version") == "6"
    assert client.hget(meta, "anchors") == ANCHORS_FORMAT
    assert client.hget(meta, "sketch") == SKETCH_FORMAT
    open_index(uri).close()


def test_an_index_written_before_sketches_is_upgraded_by_the_command_only(uri, client, prefix):
    """Layout 4 (no sketches): refused, left untouched, until ``scrapy-simhash upgrade``
    adds the sketches' format; its pages are kept, with no sketch (an unknown share)."""
    with open_index(uri) as index:
        index.check_and_add(FP, "a")
    meta = f"{{{prefix}}}:meta"
    client.hset(meta, "version", "4")
    client.hdel(meta, "sketch")
    with pytest.raises(IndexUnavailable, match=r"text sketches.*scrapy-simhash upgrade --index"):
        open_index(uri)
    assert client.hget(meta, "version") == "4" and client.hget(meta, "sketch") is None
    with open_index(uri, upgrade=True) as index:
        assert [page.key for page in index.pages()] == ["a"]
    assert client.hget(meta, "version") == "6"
    assert client.hget(meta, "sketch") == SKETCH_FORMAT
    open_index(uri).close()
    client.hset(meta, "sketch", "another")
    with pytest.raises(IndexParameterMismatch, match="text sketches of the format 'another'"):
        open_index(uri)


def test_an_index_written_before_sightings_counts_its_stored_pages_as_seen(uri, client, prefix):
    """Layout 5 (no sightings): refused until ``scrapy-simhash upgrade``, which counts the
    pages stored under each anchor as seen holding it."""
    from note_pages import assert_upgrade_counts_them, note_pages, store_pages

    pages, note, again = note_pages()
    store_pages(uri, pages)
    meta = f"{{{prefix}}}:meta"
    client.hset(meta, "version", "5")
    client.delete(f"{{{prefix}}}:seen")
    assert_upgrade_counts_them(uri, note, again)
    assert client.hget(meta, "version") == "6"
