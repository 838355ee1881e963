"""Check-and-insert per second for the Redis index next to SQLite, in one run.

Both indexes are loaded with the same *n* random 64-bit fingerprints (``add_pages``, which
pipelines Redis scripts 1,000 at a time and batches SQLite inserts in one transaction),
then both get the same stream of probes through the real per-item ``add_if_new`` path:
half are planted near-duplicates (a stored fingerprint with 1 to 3 bits flipped, which
must all be found: the script exits non-zero otherwise), half are new random
fingerprints (stored). The stream is run by one process, then split over ``--processes``
processes at once (Redis serves them all; SQLite serialises their write transactions).

Memory per fingerprint: Redis ``INFO memory`` used_memory before and after loading, over
*n*; SQLite: the file size over *n*. Keys are URLs of about 35 characters.

Needs ``redis-server`` on PATH (the script starts its own on a free port, without
persistence, and stops it), or ``--redis-url`` of a server you run (a fresh prefix is used
and deleted afterwards)::

    nice python benchmarks/redis_vs_sqlite.py --size 100000          # a quick look
    nice python benchmarks/redis_vs_sqlite.py --size 1000000         # the README's figures
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import redis
from results import write_results  # benchmarks/results.py, beside this script

from scrapy_simhash.index.base import StoredPage
from scrapy_simhash.index.redis import RedisIndex
from scrapy_simhash.index.sqlite import SqliteIndex

MAX_DISTANCE = 3
ROUNDS = 4


def flip_some_bits(rng: random.Random, fingerprint: int) -> int:
    for bit in rng.sample(range(64), rng.randint(1, 3)):
        fingerprint ^= 1 << bit
    return fingerprint


def open_backend(name: str, location: str):
    if name == "redis":
        url, prefix = location.split("#")
        client = redis.Redis.from_url(url, decode_responses=True, socket_timeout=60)
        return RedisIndex(client, prefix=prefix, location=f"{url}?prefix={prefix}")
    return SqliteIndex(location)


def run_probes(name: str, location: str, probes, barrier, results) -> None:
    """add_if_new for each probe; puts (seconds, latencies_ns, planted_missed, new_matched).
    The index is opened first; the clock starts when every process is ready."""
    with open_backend(name, location) as index:
        barrier.wait()
        latencies = []
        missed = matched_new = 0
        started = time.perf_counter()
        for fingerprint, key, planted in probes:
            t0 = time.perf_counter_ns()
            match = index.check_and_add(fingerprint, key).match
            latencies.append(time.perf_counter_ns() - t0)
            if planted and match is None:
                missed += 1
            if not planted and match is not None:
                matched_new += 1
        elapsed = time.perf_counter() - started
    results.put((elapsed, latencies, missed, matched_new))


def measure(name: str, location: str, probes, processes: int) -> dict:
    """Run *probes* through add_if_new in *processes* processes at once."""
    context = multiprocessing.get_context("fork")
    results, barrier = context.Queue(), context.Barrier(processes)
    chunks = [probes[i::processes] for i in range(processes)]
    workers = [
        context.Process(target=run_probes, args=(name, location, chunk, barrier, results))
        for chunk in chunks
    ]
    for worker in workers:
        worker.start()
    outcomes = [results.get() for _ in workers]
    for worker in workers:
        worker.join()
    return {
        "calls": len(probes),
        "wall": max(seconds for seconds, _, _, _ in outcomes),
        "latencies": [ns for _, lat, _, _ in outcomes for ns in lat],
        "missed": sum(o[2] for o in outcomes),
        "matched_new": sum(o[3] for o in outcomes),
    }


def summary(runs: list[dict]) -> dict:
    latencies = sorted(ns for run in runs for ns in run["latencies"])
    return {
        "per_s": sum(run["calls"] for run in runs) / sum(run["wall"] for run in runs),
        "p50_ms": latencies[len(latencies) // 2] / 1e6,
        "p99_ms": latencies[int(len(latencies) * 0.99)] / 1e6,
        "missed": sum(run["missed"] for run in runs),
        "matched_new": sum(run["matched_new"] for run in runs),
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_redis(directory: Path) -> tuple[subprocess.Popen, str]:
    if shutil.which("redis-server") is None:
        sys.exit("redis-server is not on PATH: install it or pass --redis-url")
    port = free_port()
    process = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(directory), "--logfile", str(directory / "r.log")],
    )  # fmt: skip
    client = redis.Redis(port=port)
    for _ in range(200):
        try:
            client.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    client.close()
    return process, f"redis://127.0.0.1:{port}/0"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1_000_000, help="fingerprints loaded")
    parser.add_argument("--probes", type=int, default=20_000, help="add_if_new calls")
    parser.add_argument("--processes", type=int, default=2, help="for the concurrent run")
    parser.add_argument("--redis-url", help="a server of yours (default: start one)")
    parser.add_argument("--dir", help="where the SQLite file goes (default: a temp dir)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-write", action="store_true", help="print only, write no results")
    args = parser.parse_args()
    # The server started here runs without persistence on purpose: no appendonly warning.
    logging.getLogger("scrapy_simhash.index.redis").setLevel(logging.ERROR)

    rng = random.Random(args.seed)
    stored = [rng.getrandbits(64) for _ in range(args.size)]
    pages = [
        StoredPage(f"https://news.example.com/a/{i:09d}.html", fp, 1.7e9 + i)
        for i, fp in enumerate(stored)
    ]
    half = args.probes // 2

    def probe_stream(run: int) -> list[tuple[int, str, bool]]:
        planted = [(flip_some_bits(rng, fp), True) for fp in rng.sample(stored, half)]
        fresh = [(rng.getrandbits(64), False) for _ in range(args.probes - half)]
        stream = planted + fresh
        rng.shuffle(stream)
        return [(fp, f"https://probe.example/{run}/{i}", p) for i, (fp, p) in enumerate(stream)]

    # The 1-process run and the N-process run each get their own probes.
    single, multi = probe_stream(1), probe_stream(2)

    workdir = Path(args.dir or tempfile.mkdtemp(prefix="redis-vs-sqlite-"))
    workdir.mkdir(parents=True, exist_ok=True)
    server = None
    url = args.redis_url
    if url is None:
        server, url = start_redis(workdir)
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    locations = {"redis": f"{url}#{prefix}", "sqlite": str(workdir / f"{prefix}.db")}
    rows: dict[str, dict] = {}
    try:
        for name in ("redis", "sqlite"):
            location = locations[name]
            admin = redis.Redis.from_url(url) if name == "redis" else None
            before = admin.info("memory")["used_memory"] if admin else 0
            with open_backend(name, location) as index:
                started = time.perf_counter()
                loaded = index.add_pages(pages)
                load_s = time.perf_counter() - started
                assert loaded == args.size, (name, loaded)
            records = 0
            if admin:
                size = admin.info("memory")["used_memory"] - before
                records = admin.memory_usage("{" + prefix + "}:fp", samples=0) or 0
                admin.close()
            else:
                size = Path(location).stat().st_size
            rows[name] = {"load": args.size / load_s, "bytes": size / args.size,
                          "records": records / args.size}  # fmt: skip
            print(f"{name}: loaded", file=sys.stderr, flush=True)
        admin = redis.Redis.from_url(url)
        admin.config_resetstat()  # from here on, only add_if_new runs scripts
        # Rounds alternate between the backends, so that a change in the machine's load
        # during the run weighs on both alike.
        for label, stream, processes in (("one", single, 1), ("many", multi, args.processes)):
            runs: dict[str, list[dict]] = {"redis": [], "sqlite": []}
            for round_ in range(ROUNDS):
                for name in ("redis", "sqlite"):
                    part = stream[round_::ROUNDS]
                    runs[name].append(measure(name, locations[name], part, processes))
            for name in runs:
                rows[name][label] = summary(runs[name])
        script_us = admin.info("commandstats")["cmdstat_evalsha"]["usec_per_call"]
        admin.close()
    finally:
        if args.redis_url:
            client = redis.Redis.from_url(url)
            names = list(client.scan_iter(match="{" + prefix + "}:*", count=10_000))
            for i in range(0, len(names), 10_000):
                client.delete(*names[i : i + 10_000])
            client.close()
        if server is not None:
            server.terminate()
            server.wait()
        if args.dir is None:
            shutil.rmtree(workdir, ignore_errors=True)

    print(
        f"\n{args.size:,} fingerprints loaded; {args.probes:,} add_if_new calls per run "
        f"({half:,} planted near-duplicates, {args.probes - half:,} new); max distance "
        f"{MAX_DISTANCE}, 10 tables; {os.cpu_count()} CPUs shared by client and server\n"
    )
    header = (
        f"{'backend':8} {'load/s':>9} {'add_if_new/s':>13} {'p50 ms':>7} {'p99 ms':>7} "
        f"{f'add_if_new/s ({args.processes} procs)':>25} {'bytes/fingerprint':>18}"
    )
    print(header)
    failed = False
    for name, row in rows.items():
        one, many = row["one"], row["many"]
        print(
            f"{name:8} {row['load']:9,.0f} {one['per_s']:13,.0f} {one['p50_ms']:7.3f} "
            f"{one['p99_ms']:7.3f} {many['per_s']:25,.0f} {row['bytes']:18,.0f}"
        )
        for run in (one, many):
            if run["missed"]:
                print(f"  {name}: {run['missed']} planted near-duplicates NOT found")
                failed = True
            if run["matched_new"]:
                print(f"  {name}: {run['matched_new']} random probes matched (chance)")
    r, s = rows["redis"], rows["sqlite"]
    print(f"\nredis server time per add_if_new script: {script_us:.1f} µs")
    print(
        f"redis bytes per fingerprint: {r['records']:,.0f} in the page records "
        f"({{prefix}}:fp: key, time, sequence number), {r['bytes'] - r['records']:,.0f} in "
        "the table sets and the rest"
    )
    print(
        f"redis / sqlite: add_if_new {r['one']['per_s'] / s['one']['per_s']:.2f}x "
        f"(1 process), {r['many']['per_s'] / s['many']['per_s']:.2f}x "
        f"({args.processes} processes); memory {r['bytes'] / s['bytes']:.2f}x the SQLite file"
    )
    print("recall on planted near-duplicates: " + ("FAILED" if failed else "100%"))
    if not args.no_write:
        figures = {"rows": rows, "redis_script_us": script_us, "recall_all_found": not failed}
        write_results("redis_vs_sqlite", {"args": vars(args), **figures}, argv=None)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
