"""One index spread over a Redis Cluster next to the single-slot index, in one run.

Starts a six-node cluster on free local ports (three masters, three replicas; the
redis-server and redis-cli programs must be on PATH), or uses ``--cluster-url``. Then:

1. loads *n* random pages into a spread index (``add_pages``) and prints each master's
   share of the index's keys and memory;
2. runs the same stream of checks through ``check_and_add`` on the spread index and on a
   single-slot index (``cluster=true`` without ``spread``) of the same *n* pages, half
   planted near-duplicates (1 to 3 bits from a stored page: all must be found, else the
   script exits non-zero), half new; prints p50 and p99 per check side by side, and each
   master's share of the commands the spread checks sent;
3. prints the round trips a check waits for, and the pipelines it writes (one to one
   master each, the clean-up included), per new page and per duplicate.

::

    nice python benchmarks/redis_cluster.py --size 100000 --checks 5000
    nice python benchmarks/redis_cluster.py --size 1000000 --checks 20000   # the goal's size
    nice python benchmarks/redis_cluster.py --size 100000 --anchors  # with containment

``--anchors`` gives every page and every check eight paragraph anchors that no other page
has (the containment test runs, and finds nothing): the cost of containment.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import redis

from scrapy_simhash import open_index
from scrapy_simhash.anchors import Anchors
from scrapy_simhash.index.base import StoredPage

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def flip_some_bits(rng: random.Random, fingerprint: int) -> int:
    for bit in rng.sample(range(64), rng.randint(1, 3)):
        fingerprint ^= 1 << bit
    return fingerprint


def masters(url: str) -> list[redis.Redis]:
    cluster = redis.RedisCluster.from_url(url.split("?")[0], decode_responses=True)
    nodes = [
        redis.Redis(host=n.host, port=n.port, decode_responses=True)
        for n in cluster.get_primaries()
    ]
    cluster.close()
    return sorted(nodes, key=lambda r: r.connection_pool.connection_kwargs["port"])


def shares(values: list[float]) -> str:
    total = sum(values) or 1
    return "  ".join(f"{100 * v / total:5.1f}%" for v in values)


def percentile(times: list[float], q: float) -> float:
    return statistics.quantiles(times, n=100)[q - 1] * 1000 if len(times) > 1 else times[0] * 1000


def random_anchors(rng: random.Random, sizes: bool) -> Anchors:
    """Eight anchors of paragraphs of 25 words no other page has (with their sizes, as a
    check gets them, or as an index stores them)."""
    hashes = tuple(rng.getrandbits(32) - 2**31 for _ in range(8))
    return Anchors(hashes, (25,) * 8 if sizes else (), 200, 900)


def run_checks(
    index, probes: list[tuple[int, str, bool]], anchors: bool = False, seed: int = 2
) -> list[float]:
    """Time ``check_and_add`` of each probe; with *anchors*, each gets anchors drawn from
    *seed* (the same seed, the same anchors)."""
    times = []
    rng = random.Random(seed)
    for fp, key, planted in probes:
        held = random_anchors(rng, True) if anchors else None
        started = time.perf_counter()
        match = index.check_and_add(fp, key, held).match
        times.append(time.perf_counter() - started)
        if planted and match is None:
            sys.exit(f"a planted near-duplicate {fp:016x} was not found by {index!r}")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000, help="pages loaded (default 100k)")
    parser.add_argument("--checks", type=int, default=5000, help="checks timed per index")
    parser.add_argument("--cluster-url", help="redis://host:port/0?cluster=true of a cluster")
    parser.add_argument(
        "--anchors", action="store_true", help="pages and checks with 8 paragraph anchors each"
    )
    args = parser.parse_args()

    cluster = None
    url = args.cluster_url
    if url is None:
        from redis_cluster import RedisCluster

        directory = Path(tempfile.mkdtemp(prefix="simhash-cluster-"))
        cluster = RedisCluster(directory, node_timeout_ms=15000).start()
        url = cluster.url
    try:
        nodes = masters(url)
        rng = random.Random(1)
        stored = [rng.getrandbits(64) for _ in range(args.size)]
        pages = [
            StoredPage(
                f"https://example.com/p/{i}",
                fp,
                1e9 + i,
                anchors=random_anchors(rng, False) if args.anchors else None,
            )
            for i, fp in enumerate(stored)
        ]
        run = uuid.uuid4().hex[:8]
        spread_uri = f"{url}&spread=true&prefix=bench-spread-{run}"
        single_uri = f"{url}&prefix=bench-single-{run}"
        keys_before = [n.dbsize() for n in nodes]
        memory_before = [n.info("memory")["used_memory"] for n in nodes]
        with open_index(spread_uri) as spread:
            started = time.perf_counter()
            spread.add_pages(pages)
            load = time.perf_counter() - started
        keys = [n.dbsize() - b for n, b in zip(nodes, keys_before, strict=True)]
        memory = [
            n.info("memory")["used_memory"] - b for n, b in zip(nodes, memory_before, strict=True)
        ]
        with_anchors = ", 8 anchors each" if args.anchors else ""
        print(f"spread index: {args.size:,} pages{with_anchors} loaded in {load:.0f} s")
        print(f"  keys per master:   {shares(keys)}   ({sum(keys):,} keys)")
        print(
            f"  memory per master: {shares(memory)}   ({sum(memory) / args.size:.0f} bytes a page)"
        )
        with open_index(single_uri) as single:
            started = time.perf_counter()
            single.add_pages(pages)
            print(f"single-slot index: loaded in {time.perf_counter() - started:.0f} s")

        probes = []
        for i in range(args.checks):
            if i % 2:
                probes.append(
                    (flip_some_bits(rng, rng.choice(stored)), f"https://dup.example/{i}", True)
                )
            else:
                probes.append((rng.getrandbits(64), f"https://new.example/{i}", False))
        results = {}
        for name, uri in (("single-slot", single_uri), ("spread", spread_uri)):
            with open_index(uri) as index:
                commands_before = [n.info("stats")["total_commands_processed"] for n in nodes]
                named = [(fp, f"{k}#{name}", p) for fp, k, p in probes]
                results[name] = run_checks(index, named, args.anchors)
                if name == "spread":
                    io = index.store.cluster.io
                    io.settle()  # the clean-up written after the last checks
                    commands = [
                        n.info("stats")["total_commands_processed"] - b
                        for n, b in zip(nodes, commands_before, strict=True)
                    ]
                    # Fresh pages (new ones, and near-duplicates of stored pages not
                    # checked yet), so that each kind takes the path it is named after.
                    new = [
                        (rng.getrandbits(64), f"https://fresh.example/{i}", False)
                        for i in range(500)
                    ]
                    near = [flip_some_bits(rng, fp) for fp in stored[-500:]]
                    dup = [(fp, f"https://near.example/{i}", True) for i, fp in enumerate(near)]
                    per = {}
                    for seed, (kind, batch) in enumerate((("new page", new), ("duplicate", dup))):
                        sent, rounds = io.commands, io.rounds
                        run_checks(index, batch, args.anchors, seed=3 + seed)
                        io.settle()
                        per[kind] = (
                            (io.rounds - rounds) / len(batch),
                            (io.commands - sent) / len(batch),
                        )
        print(f"checks: {args.checks:,} per index (half planted near-duplicates, half new)")
        print(f"  {'':12} {'p50 ms':>8} {'p99 ms':>8}")
        for name, times in results.items():
            print(f"  {name:12} {percentile(times, 50):8.2f} {percentile(times, 99):8.2f}")
        ratio50 = percentile(results["spread"], 50) / percentile(results["single-slot"], 50)
        ratio99 = percentile(results["spread"], 99) / percentile(results["single-slot"], 99)
        print(f"  spread / single-slot: p50 {ratio50:.1f}x, p99 {ratio99:.1f}x")
        print(f"  commands per master during the spread checks: {shares(commands)}")
        stats = [n.info("commandstats").get("cmdstat_evalsha", {}) for n in nodes]
        calls_total = sum(x.get("calls", 0) for x in stats)
        usec = sum(x.get("usec", 0) for x in stats) / max(1, calls_total)
        print(f"  server time per script (all scripts of the run, every master): {usec:.1f} us")
        for kind, (rounds, pipelines) in per.items():
            print(
                f"  per {kind}: {rounds:.2f} round trips in a row, {pipelines:.1f} pipelines "
                "to one master (clean-up included)"
            )
    finally:
        if cluster is not None:
            cluster.stop()


if __name__ == "__main__":
    main()
