"""A master of a Redis Cluster killed under a spread index's checks (a cluster of the
test's own: the session's stays whole for the other tests)."""

from __future__ import annotations

import multiprocessing
import os
import random
import time
from pathlib import Path

from test_redis_spread import planted_groups

from scrapy_simhash import open_index
from scrapy_simhash.exceptions import IndexUnavailable


def _check_through_failover(uri: str, worker: int, groups, start, stop, log_path: str) -> None:
    """Check members of the groups at random until *stop*; log each outcome (errors too)."""
    rng = random.Random(worker)
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    with open_index(uri) as index:
        start.wait()
        turn = 0
        while not stop.is_set():
            turn += 1
            number = rng.randrange(len(groups))
            fp = rng.choice(groups[number])
            key = f"w{worker}-{turn}-{fp:016x}"
            try:
                kept = index.check_and_add(fp, key).match is None
            except IndexUnavailable as e:
                os.write(fd, f"error {str(e).replace(chr(10), ' ')}\n".encode())
                continue
            os.write(fd, (f"kept {number} {fp:016x} {key}\n" if kept else "checked\n").encode())
    os.close(fd)


def _outcomes(paths) -> list[list[str]]:
    return [Path(p).read_text().splitlines() if os.path.exists(p) else [] for p in paths]


def test_a_master_killed_during_checks_fails_over_and_loses_nothing_acknowledged(
    make_redis_cluster, tmp_path
):
    """Three processes check near-duplicates while a master is SIGKILLed: checks fail while
    its slots fail over (IndexUnavailable, which the pipeline counts as an index error),
    then go on; every page acknowledged before, during and after is stored, once per group.
    The killed node comes back as a replica, so that writes are confirmed on one again."""
    cluster = make_redis_cluster()
    uri = f"{cluster.url}&spread=true&lease=1s&prefix=failover"
    groups = planted_groups(30, 400)
    with open_index(uri):
        pass
    context = multiprocessing.get_context("spawn")
    start, stop = context.Event(), context.Event()
    paths = [str(tmp_path / f"w{i}.log") for i in range(3)]
    workers = [
        context.Process(
            target=_check_through_failover, args=(uri, i, groups, start, stop, paths[i])
        )
        for i in range(3)
    ]
    for worker in workers:
        worker.start()
    start.set()
    deadline = time.monotonic() + 60
    while not all(_outcomes(paths)):
        assert time.monotonic() < deadline, "the workers check"
        time.sleep(0.05)
    victim = cluster.masters()[0]
    cluster.kill(victim)
    cluster.wait_failed_over(victim)
    cluster.restart(victim)
    cluster.wait_ready()
    time.sleep(1.5)  # a check waiting for a replica meanwhile fails after the lease (1 s)
    before = [len(lines) for lines in _outcomes(paths)]
    time.sleep(1.5)
    stop.set()
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    outcomes = _outcomes(paths)
    assert all(
        not any(line.startswith("error") for line in lines[b:]) and len(lines) > b + 3
        for lines, b in zip(outcomes, before, strict=True)
    ), "the checks go on once a replica confirms writes again"
    acknowledged = [line.split() for lines in outcomes for line in lines]
    acknowledged = [
        (int(p[1]), int(p[2], 16), p[3]) for p in acknowledged if len(p) == 4 and p[0] == "kept"
    ]
    with open_index(uri) as index:
        for _, fp, key in acknowledged:
            assert [p.fingerprint for p in index.find(key)] == [fp], "acknowledged: kept"
        stored = list(index.pages())
    per_group: dict[int, int] = {}
    for page in stored:
        number = next(n for n, g in enumerate(groups) if page.fingerprint in g)
        per_group[number] = per_group.get(number, 0) + 1
    assert set(per_group.values()) == {1}, "no group kept twice"
    errors = sum(line.startswith("error") for lines in outcomes for line in lines)
    print(f"{len(acknowledged)} pages acknowledged, {errors} checks failed in the failover")
