"""Contained or near copies checked at the same moments: groups kept more than once.

    python benchmarks/contained_race.py                        # spread and SQLite, 8 and 16
    python benchmarks/contained_race.py --groups 150 --workers 8 --workers 16
    python benchmarks/contained_race.py --index spread --cluster-url 'redis://127.0.0.1:7000/0?cluster=true'
    python benchmarks/contained_race.py --kind near            # near copies (one word changed)

Each group is an article and the article plus a paragraph of its own, checked by every
process at once (see ``tests/contained_race.py``: the even processes check the article,
the odd ones the longer page, released together by a barrier); exactly one key of a group
may be kept. Then one process checks per group a third page, the article plus another
paragraph: it must be dropped (three pages seen holding the article's paragraphs are no
boilerplate). Printed per index and number of processes: the groups kept more than once,
the later copies kept, the outcomes of the race and the seconds taken.

The spread index runs on a six-node Redis Cluster the script starts on free local ports
(``redis-server`` and ``redis-cli`` on PATH), or on ``--cluster-url``; SQLite in a
temporary file. The exit status is 0 when no group was kept twice and no later copy kept.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from contained_race import race  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=150)
    parser.add_argument("--workers", type=int, action="append")
    parser.add_argument("--index", choices=["spread", "sqlite"], action="append")
    parser.add_argument("--cluster-url")
    parser.add_argument("--kind", choices=["contained", "near"], default="contained")
    args = parser.parse_args()
    workers = args.workers or [8, 16]
    kinds = args.index or ["spread", "sqlite"]
    cluster = None
    failed = False
    with tempfile.TemporaryDirectory() as folder:
        try:
            url = args.cluster_url
            if "spread" in kinds and not url:
                from redis_cluster import RedisCluster

                cluster = RedisCluster(Path(folder) / "cluster", node_timeout_ms=10000).start()
                url = cluster.url
            print(f"{'index':8} {'processes':>9} {'groups':>6} {'kept >1':>8} "
                  f"{'later kept':>10} {'seconds':>8}  outcomes")  # fmt: skip
            for kind in kinds:
                for count in workers:
                    if kind == "spread":
                        uri = f"{url}&spread=true&prefix=race-{uuid.uuid4().hex[:8]}"
                    else:
                        uri = f"sqlite:///{folder}/race-{count}.db"
                    started = time.monotonic()
                    result = race(uri, args.groups, count, args.kind)
                    took = time.monotonic() - started
                    failed |= bool(result.kept_twice or result.later_kept)
                    outcomes = ", ".join(f"{k} {v}" for k, v in sorted(result.statuses.items()))
                    row = f"{kind:8} {count:>9} {args.groups:>6} {result.kept_twice:>8} "
                    print(f"{row}{result.later_kept:>10} {took:>8.1f}  {outcomes}", flush=True)
        finally:
            if cluster is not None:
                cluster.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
