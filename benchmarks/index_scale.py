"""How the SQLite index scales: 100k, 1M and 10M fingerprints against two peers.

For each size the script stores *n* random 64-bit fingerprints, plants near-duplicates
(a stored fingerprint with 1 to 3 bits flipped) and measures, each method in its own
process (so that peak RSS is that method's alone):

* ``sqlite bN``: :class:`~scrapy_simhash.index.sqlite.SqliteIndex` with N blocks
  (4 blocks = 4 tables of 16-bit keys, 5 blocks = 10 tables of 25/26-bit keys), bulk-loaded
  once, then probed with ``query`` and grown with the per-item ``add_if_new`` path;
* ``numpy``: brute force, XOR + ``np.bitwise_count`` over every stored fingerprint;
* ``SimhashIndex``: the ``simhash`` package's in-memory index (``pip install simhash``,
  or the ``bench`` extra),
  only up to ``--simhash-max`` fingerprints (it is slow to build and large in memory).

Recall on the planted near-duplicates must be 100% for every method (all are exact);
the script says so and exits non-zero otherwise. It also measures commits per second of
``add_if_new`` with ``synchronous=NORMAL`` and ``FULL``.

``--anchors N`` gives every stored page and every checked item N paragraph anchors
(random 32-bit values; 8 is the most a page has): the cost of containment beside the
distance, in bytes per page and in the latency of check-and-insert. Without it, pages have
none, as with ``SIMHASH_ANCHORS = False``.

Run it small first::

    python benchmarks/index_scale.py --sizes 100000 --blocks 4,5

The full run (10M fingerprints with 5 blocks needs about 3 GB in --dir, and 10-20 min)::

    nice python benchmarks/index_scale.py --sizes 100000,1000000,10000000 --dir /tmp/bench
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from results import write_results  # benchmarks/results.py, beside this script

from scrapy_simhash.anchors import Anchors
from scrapy_simhash.index.blocks import BlockPlan
from scrapy_simhash.index.sqlite import SqliteIndex

MAX_DISTANCE = 3
CHUNK = 500_000


def peak_rss_mb() -> float:
    """Peak RSS of this process's own memory.

    Not ``ru_maxrss``: on Linux a child inherits in it the peak RSS of the parent that
    spawned it (kept across exec), which here holds all the fingerprints.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentile_ms(samples_ns: list[int], q: float) -> float:
    return float(np.percentile(np.asarray(samples_ns), q)) / 1e6


def flip_bits(rng: np.random.Generator, values: np.ndarray) -> np.ndarray:
    """Each value with 1 to 3 distinct random bits flipped."""
    out = values.copy()
    for i in range(len(out)):
        bits = rng.choice(64, size=int(rng.integers(1, MAX_DISTANCE + 1)), replace=False)
        mask = 0
        for bit in bits:
            mask |= 1 << int(bit)
        out[i] ^= np.uint64(mask)
    return out


def make_data(
    n: int, probes: int, inserts: int, seed: int, anchors: int = 0
) -> dict[str, np.ndarray]:
    """Stored fingerprints, planted near-duplicate probes (of stored ones) and random probes,
    and items for check-and-insert: half new (random), half near-duplicates of stored ones;
    with *anchors*, that many random anchors for every stored page and every item."""
    rng = np.random.default_rng(seed + n)
    stored = rng.integers(0, 2**64, size=n, dtype=np.uint64, endpoint=False)
    planted_of = rng.choice(n, size=probes // 2, replace=False)
    new_dup_of = rng.choice(n, size=inserts // 2, replace=False)
    extra = {}
    if anchors:
        extra = {
            "stored_anchors": rng.integers(-(2**31), 2**31, size=(n, anchors), dtype=np.int32),
            "item_anchors": rng.integers(-(2**31), 2**31, size=(inserts, anchors), dtype=np.int32),
        }
    return {
        **extra,
        "stored": stored,
        "planted_of": planted_of,
        "planted": flip_bits(rng, stored[planted_of]),
        "random": rng.integers(0, 2**64, size=probes - probes // 2, dtype=np.uint64),
        "new": rng.integers(0, 2**64, size=inserts - inserts // 2, dtype=np.uint64),
        "new_dup_of": new_dup_of,
        "new_dup": flip_bits(rng, stored[new_dup_of]),
    }


# -- workers: each runs in its own process and prints one JSON object ------------------


def build_sqlite(path: Path, data_file: Path, blocks: int) -> dict:
    """Create an index with SqliteIndex, then bulk-load it: the pages in one go, then the
    block tables and page_keys filled from them in key order, as an upgrade fills them."""
    # Imported here, not at the top: the measuring step (measure_sqlite) also runs with the
    # package of schema version 1 on PYTHONPATH, which has no such module.
    from scrapy_simhash.index.sqlite.tables import BlockTables, site_id, split_key

    stored = np.load(data_file)["stored"]
    started = time.perf_counter()
    SqliteIndex(path, max_distance=MAX_DISTANCE, blocks=blocks).close()
    tables = BlockTables(BlockPlan(max_distance=MAX_DISTANCE, blocks=blocks))
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.execute("PRAGMA cache_size=-262144")
    conn.execute("BEGIN")
    signed = stored.view(np.int64)
    ids = np.arange(1, len(stored) + 1, dtype=np.int64)
    now = time.time()
    # The keys are https://example.com/{i}: site and path as SqliteIndex stores them.
    assert split_key("https://example.com/1") == ("https://example.com/", "1")
    site = site_id(conn, "https://example.com/")
    for start in range(0, len(stored), CHUNK):
        end = start + CHUNK
        conn.executemany(
            "INSERT INTO pages (id, fingerprint, site, path, added_at) VALUES (?, ?, ?, ?, ?)",
            (
                (i, fp, site, str(i), now)
                for i, fp in zip(ids[start:end].tolist(), signed[start:end].tolist(), strict=True)
            ),
        )
    tables.fill(conn)
    data = np.load(data_file)
    if "stored_anchors" in data:
        fill_anchors(conn, data["stored_anchors"])
    conn.execute("COMMIT")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.close()
    return {"build_s": time.perf_counter() - started, "bytes": path.stat().st_size}


def fill_anchors(conn: sqlite3.Connection, anchors: np.ndarray) -> None:
    """Store *anchors* (one row of anchors per page, page ids from 1) as SqliteIndex does,
    each table in key order."""
    from scrapy_simhash.index.sqlite.anchors import pack

    n, count = anchors.shape
    conn.executemany(
        "INSERT INTO page_anchors (page, words, cover, hashes) VALUES (?, ?, ?, ?)",
        ((i + 1, 100 * count, 1000, pack(row)) for i, row in enumerate(anchors.tolist())),
    )
    pages = np.repeat(np.arange(1, n + 1, dtype=np.int64), count)
    keys = (anchors.reshape(-1).astype(np.int64) << 32) | pages
    keys.sort()
    conn.executemany(
        "INSERT OR IGNORE INTO anchors (anchor, page) VALUES (?, ?)",
        zip((keys >> 32).tolist(), (keys & 0xFFFF_FFFF).tolist(), strict=True),
    )


def measure_sqlite(path: Path, data_file: Path, synchronous: str) -> dict:
    """Lookups and check-and-insert on a loaded index (fresh process: RSS is the index's)."""
    data = np.load(data_file)
    planted, random_probes = data["planted"].tolist(), data["random"].tolist()
    planted_keys = [f"https://example.com/{i + 1}" for i in data["planted_of"].tolist()]
    with SqliteIndex(path, synchronous=synchronous) as index:
        found = 0
        started = time.perf_counter()
        for fp, key in zip(planted, planted_keys, strict=True):
            found += any(m.key == key for m in index.query(fp))
        for fp in random_probes:
            index.query(fp)
        lookup_s = time.perf_counter() - started
        result = {
            "lookups_per_s": (len(planted) + len(random_probes)) / lookup_s,
            "recall": found / len(planted),
        }
        result.update(check_and_insert(index, data))
    result["rss_mb"] = peak_rss_mb()
    result["bytes"] = path.stat().st_size
    return result


def check_and_insert(index, data) -> dict:
    """Interleave new fingerprints and near-duplicates of stored ones through add_if_new."""
    new, dups = data["new"].tolist(), data["new_dup"].tolist()
    items = data["item_anchors"].tolist() if "item_anchors" in data else None
    latencies: list[int] = []
    # CPU time of this thread per call: the wait for a core taken by other work on the
    # machine is not in it, so its p99 compares runs on a loaded machine.
    cpu: list[int] = []
    caught = kept_new = 0
    for i in range(max(len(new), len(dups))):
        for fp, is_dup in ((new[i], False), (dups[i], True)) if i < len(dups) else ((new[i], 0),):
            anchors = None
            if items is not None:
                row = items[2 * i + int(bool(is_dup))]
                anchors = Anchors(tuple(row), (100,) * len(row), 100 * len(row), 1000)
            started, cpu_started = time.perf_counter_ns(), time.thread_time_ns()
            match = index.check_and_add(
                fp, f"https://example.com/new/{i}/{int(is_dup)}", anchors
            ).match
            latencies.append(time.perf_counter_ns() - started)
            cpu.append(time.thread_time_ns() - cpu_started)
            if is_dup:
                caught += match is not None
            else:
                kept_new += match is None
    total_ns = sum(latencies)
    return {
        "inserts_per_s": len(latencies) / (total_ns / 1e9),
        "p50_ms": percentile_ms(latencies, 50),
        "p99_ms": percentile_ms(latencies, 99),
        "p99_cpu_ms": percentile_ms(cpu, 99),
        "insert_recall": caught / len(dups),
        "kept_new": kept_new / len(new),
    }


def measure_numpy(data_file: Path) -> dict:
    data = np.load(data_file)
    stored, planted_of = data["stored"], data["planted_of"]
    extra = len(data["new"]) + len(data["new_dup"])
    # Preallocated, as a real brute-force store would: appending is then O(1).
    fps = np.empty(len(stored) + extra, dtype=np.uint64)
    fps[: len(stored)] = stored
    count = len(stored)
    del stored, data_file

    def near(fp: int) -> np.ndarray:
        return np.flatnonzero(np.bitwise_count(fps[:count] ^ np.uint64(fp)) <= MAX_DISTANCE)

    # Brute force is slow at scale: time at most ~200 probes of each kind.
    planted = data["planted"][:100].tolist()
    random_probes = data["random"][:100].tolist()
    started = time.perf_counter()
    found = sum(int(planted_of[i]) in near(fp) for i, fp in enumerate(planted))
    for fp in random_probes:
        near(fp)
    lookup_s = time.perf_counter() - started
    latencies, caught = [], 0
    for is_dup, fp in [(True, fp) for fp in data["new_dup"][:100].tolist()] + [
        (False, fp) for fp in data["new"][:100].tolist()
    ]:
        started_ns = time.perf_counter_ns()
        hit = near(fp)
        if not len(hit):
            fps[count] = fp
            count += 1
        latencies.append(time.perf_counter_ns() - started_ns)
        caught += is_dup and bool(len(hit))
    return {
        "lookups_per_s": (len(planted) + len(random_probes)) / lookup_s,
        "recall": found / len(planted),
        "inserts_per_s": len(latencies) / (sum(latencies) / 1e9),
        "p50_ms": percentile_ms(latencies, 50),
        "p99_ms": percentile_ms(latencies, 99),
        "insert_recall": caught / min(100, len(data["new_dup"])),
        "rss_mb": peak_rss_mb(),
        "bytes": None,
    }


def measure_simhash_package(data_file: Path) -> dict:
    from simhash import Simhash, SimhashIndex

    data = np.load(data_file)
    started = time.perf_counter()
    index = SimhashIndex([], f=64, k=MAX_DISTANCE)
    for i, fp in enumerate(data["stored"].tolist()):
        index.add(str(i), Simhash(fp))
    build_s = time.perf_counter() - started
    planted = data["planted"].tolist()
    planted_of = [str(i) for i in data["planted_of"].tolist()]
    started = time.perf_counter()
    found = sum(
        of in index.get_near_dups(Simhash(fp)) for fp, of in zip(planted, planted_of, strict=True)
    )
    for fp in data["random"].tolist():
        index.get_near_dups(Simhash(fp))
    lookup_s = time.perf_counter() - started
    latencies, caught = [], 0
    new = data["new"].tolist()
    for i, fp in enumerate(data["new_dup"].tolist()):
        for is_dup, value in ((True, fp), (False, new[i] if i < len(new) else None)):
            if value is None:
                continue
            started_ns = time.perf_counter_ns()
            probe = Simhash(value)
            hit = index.get_near_dups(probe)
            if not hit:
                index.add(f"new{i}", probe)
            latencies.append(time.perf_counter_ns() - started_ns)
            caught += is_dup and bool(hit)
    return {
        "build_s": build_s,
        "lookups_per_s": (len(planted) + len(data["random"])) / lookup_s,
        "recall": found / len(planted),
        "inserts_per_s": len(latencies) / (sum(latencies) / 1e9),
        "p50_ms": percentile_ms(latencies, 50),
        "p99_ms": percentile_ms(latencies, 99),
        "insert_recall": caught / len(data["new_dup"]),
        "rss_mb": peak_rss_mb(),
        "bytes": None,
    }


def measure_commits(directory: Path, synchronous: str, count: int) -> dict:
    """Commits per second of add_if_new on a small index: the cost of the sync mode."""
    path = directory / f"commits-{synchronous}.db"
    rng = np.random.default_rng(7)
    fps = rng.integers(0, 2**64, size=count, dtype=np.uint64).tolist()
    with SqliteIndex(path, synchronous=synchronous) as index:
        started = time.perf_counter()
        for i, fp in enumerate(fps):
            index.check_and_add(fp, f"k{i}")
        elapsed = time.perf_counter() - started
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return {"commits_per_s": count / elapsed}


WORKERS = {
    "build-sqlite": lambda a: build_sqlite(Path(a.path), Path(a.data), a.worker_blocks),
    "sqlite": lambda a: measure_sqlite(Path(a.path), Path(a.data), a.synchronous),
    "numpy": lambda a: measure_numpy(Path(a.data)),
    "simhash": lambda a: measure_simhash_package(Path(a.data)),
    "commits": lambda a: measure_commits(Path(a.path), a.synchronous, a.count),
}


def run_worker(*args: str) -> dict:
    result = subprocess.run(
        [sys.executable, __file__, "--worker", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"worker {args[0]} failed:\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


# -- the report --------------------------------------------------------------------------


def fmt(value, spec: str) -> str:
    if value is None:
        return "-".rjust(int(spec.split(".")[0]))
    return format(value, spec)


def human(n: int) -> str:
    return f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{n // 1000}k"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,1000000", help="comma-separated index sizes")
    parser.add_argument("--blocks", default="4,5", help="comma-separated SIMHASH_BLOCKS values")
    parser.add_argument("--probes", type=int, default=2000, help="lookups per size")
    parser.add_argument("--inserts", type=int, default=2000, help="add_if_new calls per size")
    parser.add_argument(
        "--simhash-max", type=int, default=1_000_000, help="largest size for SimhashIndex"
    )
    parser.add_argument("--no-numpy", action="store_true", help="skip numpy brute force")
    parser.add_argument("--commits", type=int, default=2000, help="commits per sync mode")
    parser.add_argument("--dir", default=None, help="where to build the indexes (default: tmp)")
    parser.add_argument("--keep", action="store_true", help="keep the index files")
    parser.add_argument("--seed", type=int, default=20_240_601)
    parser.add_argument(
        "--anchors",
        default="0",
        help="comma-separated paragraph anchors per page to measure (e.g. 0,8)",
    )
    parser.add_argument("--no-write", action="store_true", help="print only, write no results")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--worker-blocks", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--synchronous", default="NORMAL", help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        print(json.dumps(WORKERS[args.worker](args)))
        return 0

    has_simhash = importlib.util.find_spec("simhash") is not None
    if not has_simhash:
        print(
            "The simhash package is not installed (pip install 'scrapy-simhash[bench]'): "
            "SimhashIndex is left out."
        )
    sizes = [int(s) for s in args.sizes.split(",")]
    blocks_list = [int(b) for b in args.blocks.split(",")]
    workdir = Path(args.dir or tempfile.mkdtemp(prefix="simhash-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    python = sys.version.split()[0]
    print(f"SQLite {sqlite3.sqlite_version}, numpy {np.__version__}, Python {python}")
    print(
        f"{args.probes} lookups (half planted near-duplicates at distance 1-3, half random) "
        f"and {args.inserts} add_if_new (half new, half near-duplicates) per size\n"
    )
    header = (
        f"{'size':>5} {'method':<16} {'build s':>8} {'lookups/s':>10} {'recall':>7} "
        f"{'insert/s':>9} {'p50 ms':>7} {'p99 ms':>7} {'p99 CPU':>7} {'B/fp':>6} {'RSS MB':>7}"
    )
    print(header)
    print("-" * len(header))
    failed = False
    rows = []
    commits: dict[str, float] = {}
    try:
        for n in sizes:
            data_file = workdir / f"data-{n}.npz"
            methods: list[tuple[str, dict]] = []
            for anchors, blocks in [
                (a, b) for a in [int(x) for x in args.anchors.split(",")] for b in blocks_list
            ]:
                np.savez(data_file, **make_data(n, args.probes, args.inserts, args.seed, anchors))
                path = workdir / f"index-{n}-b{blocks}-a{anchors}.db"
                build = run_worker(
                    "build-sqlite", "--path", str(path), "--data", str(data_file),
                    "--worker-blocks", str(blocks),
                )  # fmt: skip
                result = run_worker("sqlite", "--path", str(path), "--data", str(data_file))
                result["build_s"] = build["build_s"]
                result["bytes"] = build["bytes"]
                methods.append((f"sqlite b{blocks}" + (f" a{anchors}" if anchors else ""), result))
                if not args.keep:
                    for suffix in ("", "-wal", "-shm"):
                        Path(f"{path}{suffix}").unlink(missing_ok=True)
            np.savez(data_file, **make_data(n, args.probes, args.inserts, args.seed))
            if not args.no_numpy:
                methods.append(("numpy", run_worker("numpy", "--data", str(data_file))))
            if n <= args.simhash_max and has_simhash:
                methods.append(("SimhashIndex", run_worker("simhash", "--data", str(data_file))))
            data_file.unlink()
            for name, r in methods:
                recall = min(r["recall"], r["insert_recall"])
                failed |= recall < 1.0
                print(
                    f"{human(n):>5} {name:<16} {fmt(r.get('build_s'), '8.1f')} "
                    f"{r['lookups_per_s']:10,.0f} {recall:7.1%} {r['inserts_per_s']:9,.0f} "
                    f"{r['p50_ms']:7.3f} {r['p99_ms']:7.3f} {fmt(r.get('p99_cpu_ms'), '7.3f')} "
                    f"{fmt(r['bytes'] and r['bytes'] / n, '6.0f')} {r['rss_mb']:7.0f}",
                    flush=True,
                )
                rows.append((n, name, r))
            print()
        print("Ratios in the same run (lookups/s):")
        for n in sizes:
            by_name = {name: r for size, name, r in rows if size == n}
            for name, r in by_name.items():
                if not name.startswith("sqlite"):
                    continue
                ratios = [
                    f"{r['lookups_per_s'] / by_name[peer]['lookups_per_s']:,.1f}x {peer}"
                    for peer in ("numpy", "SimhashIndex")
                    if peer in by_name
                ]
                print(f"  {human(n):>5} {name}: " + (", ".join(ratios) or "no peer measured"))
        if args.commits:
            print(f"\nadd_if_new commits/s on a small index in {workdir} (one commit each):")
            for mode in ("NORMAL", "FULL"):
                r = run_worker(
                    "commits", "--path", str(workdir), "--synchronous", mode,
                    "--count", str(args.commits),
                )  # fmt: skip
                print(f"  synchronous={mode:<6} {r['commits_per_s']:9,.0f} commits/s")
                commits[mode] = r["commits_per_s"]
    finally:
        if not args.keep and not args.dir:
            shutil.rmtree(workdir, ignore_errors=True)
    if not args.no_write:
        figures = [{"size": n, "method": name, **r} for n, name, r in rows]
        versions = {"sqlite": sqlite3.sqlite_version, "numpy": np.__version__}
        write_results(
            "index_scale",
            {"args": vars(args), "versions": versions, "rows": figures, "commits_per_s": commits},
            argv=argv,
        )
    if failed:
        print("\nFAILED: an exact method missed a planted near-duplicate", file=sys.stderr)
        return 1
    print("\nRecall on every planted near-duplicate: 100% for every method.")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
