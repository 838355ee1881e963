"""The index under real failures: kill -9, several processes at once, Ctrl-C in a crawl.

Every test runs real processes against a real SQLite file; nothing is simulated.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from pipelines import subprocess_env

from scrapy_simhash.analysis.fingerprint import hamming_distance
from scrapy_simhash.index.sqlite import SqliteIndex

#: Shared by the worker scripts: deterministic documents of 40 pseudo-words; every fifth
#: document repeats the one before it with one word changed.
DOCUMENTS = textwrap.dedent(
    """
    import random

    SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "zu", "pe", "gra", "sho"]
    VOCABULARY = sorted({
        "".join(random.Random(n).choices(SYLLABLES, k=4)) for n in range(4000)
    })

    def document(i):
        base = i - 1 if i % 5 == 4 else i
        words = random.Random(base).choices(VOCABULARY, k=40)
        if base != i:
            words[7] = "changed"
        return " ".join(words)
    """
)

DEDUP_WORKER = DOCUMENTS + textwrap.dedent(
    """
    import sys
    from scrapy_simhash.dedup import Deduplicator
    from scrapy_simhash.analysis.fingerprint import Fingerprinter
    from scrapy_simhash.index.sqlite import SqliteIndex

    path, count = sys.argv[1], int(sys.argv[2])
    with SqliteIndex(path) as index:
        dedup = Deduplicator(index, Fingerprinter())
        for i in range(count):
            verdict = dedup.check_text(document(i), f"https://example.com/{i}")
            # Printed after the check returned, that is after the commit.
            print(verdict.status, i, verdict.analysis.kind, verdict.analysis.value, flush=True)
    """
)


def write_script(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    return path


def integrity(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


def parse(lines: list[str]) -> list[tuple[str, int, str, int]]:
    out = []
    for line in lines:
        parts = line.split()
        if len(parts) == 4:  # the last line may be cut by the kill
            out.append((parts[0], int(parts[1]), parts[2], int(parts[3])))
    return out


def test_kill_9_mid_run_then_resume(tmp_path):
    index_path = tmp_path / "index.db"
    script = write_script(tmp_path, "worker.py", DEDUP_WORKER)
    count = 4000
    worker = subprocess.Popen(
        [sys.executable, str(script), str(index_path), str(count)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(),
    )
    lines = []
    assert worker.stdout is not None
    for line in worker.stdout:
        lines.append(line)
        if len(lines) == 1500:
            worker.send_signal(signal.SIGKILL)
            break
    # Read on through the same buffered file: communicate() would skip what it holds.
    rest = worker.stdout.read()
    errors = worker.stderr.read() if worker.stderr else ""
    assert worker.wait(timeout=60) == -signal.SIGKILL, errors
    reported = parse(lines + rest.splitlines())
    assert 1500 <= len(reported) < count, "the worker was not killed mid-run"
    kept = [r for r in reported if r[0] == "new"]
    assert len(kept) > 1000

    assert integrity(index_path) == "ok"
    with SqliteIndex(index_path) as index:
        for _, i, kind, value in kept:
            key = f"https://example.com/{i}"
            if kind == "simhash":
                assert key in [m.key for m in index.query(value, 0)], f"lost {key}"
            else:
                assert [p.key for p in index.find(key)] == [key], f"lost {key}"
        # Nothing that was not reported as kept (apart from the one being written at the
        # kill) was stored.
        assert len(kept) <= len(index) <= len(kept) + 1

    resumed = subprocess.run(
        [sys.executable, str(script), str(index_path), str(count)],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr
    second = {i: state for state, i, _, _ in parse(resumed.stdout.splitlines())}
    assert len(second) == count
    for _, i, _, _ in kept:
        # Found under its own URL: not stored again.
        assert second[i] == "unchanged", f"document {i}, kept before the kill: {second[i]}"
    assert integrity(index_path) == "ok"


CONCURRENT_WORKER = textwrap.dedent(
    """
    import json, os, sys, time
    from scrapy_simhash.index.sqlite import SqliteIndex

    path, go, plan = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    while not os.path.exists(go):
        time.sleep(0.001)
    kept = []
    # Several processes create the same new index at the same moment, then add pages.
    with SqliteIndex(path) as index:
        for group, fp in plan:
            if index.check_and_add(fp, f"group-{group}/{os.getpid()}").match is None:
                kept.append(group)
    print(json.dumps(kept))
    """
)


def test_four_processes_share_one_index(tmp_path):
    index_path = tmp_path / "index.db"
    go = tmp_path / "go"
    script = write_script(tmp_path, "worker.py", CONCURRENT_WORKER)
    rng = random.Random(17)
    groups = 600
    # Each group: a random base and variants that flip bits only among three positions
    # of their own, so every two variants of a group are within distance 3 and variants
    # of different groups are ~32 bits apart.
    bases = [rng.getrandbits(64) for _ in range(groups)]
    positions = [rng.sample(range(64), 3) for _ in range(groups)]

    def variant(group: int) -> int:
        fp = bases[group]
        for bit in positions[group]:
            if rng.random() < 0.5:
                fp ^= 1 << bit
        return fp

    plans = []
    for _ in range(4):
        order = list(range(groups))
        rng.shuffle(order)
        plans.append([(g, variant(g)) for g in order])
    workers = [
        subprocess.Popen(
            [sys.executable, str(script), str(index_path), str(go), json.dumps(plan)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=subprocess_env(),
        )
        for plan in plans
    ]
    time.sleep(1.0)  # let every worker import and wait at the start line
    go.touch()
    kept: list[int] = []
    for worker in workers:
        out, errors = worker.communicate(timeout=120)
        assert worker.returncode == 0, errors
        assert "locked" not in errors and "Traceback" not in errors, errors
        kept += json.loads(out)
    assert sorted(kept) == list(range(groups)), "a near-duplicate pair was kept twice"
    assert integrity(index_path) == "ok"
    with SqliteIndex(index_path) as index:
        assert len(index) == groups
        for group in range(groups):
            matches = index.query(bases[group])
            assert len(matches) == 1
            assert matches[0].key.startswith(f"group-{group}/")
            assert hamming_distance(matches[0].fingerprint, bases[group]) <= 3


SPIDER = textwrap.dedent(
    """
    import pathlib
    import scrapy

    class LocalSpider(scrapy.Spider):
        name = "local"
        custom_settings = {
            "ADDONS": {"scrapy_simhash.Addon": 100},
            "SIMHASH_TEXT_FIELDS": ["content"],
            "TELNETCONSOLE_ENABLED": False,
            "REMOTE_CONTROL_ENABLED": False,
            "LOG_LEVEL": "INFO",
        }

        async def start(self):
            for path in sorted(pathlib.Path("pages").glob("*.html")):
                yield scrapy.Request(path.resolve().as_uri())

        def parse(self, response):
            if response.url.endswith("/0200.html"):
                self.logger.info("READY")
            yield {"url": response.url, "content": response.text}
    """
)


def local_site(directory: Path, count: int = 1500) -> None:
    """*count* pages of 40 pseudo-words; every fifth a near-copy of the one before. The
    spider says READY at page 200 and is stopped then: the rest only has to outlast the
    signal (it did at 6,000 pages, which took 5 s to write)."""
    namespace: dict = {}
    exec(DOCUMENTS, namespace)
    pages = directory / "pages"
    pages.mkdir()
    for i in range(count):
        (pages / f"{i:04d}.html").write_text(
            f'<html><head><meta charset="utf-8"></head><body><p>{namespace["document"](i)}'
            "</p></body></html>",
            encoding="utf-8",
        )


@pytest.mark.parametrize("workers", [0, 1])
def test_ctrl_c_commits_what_was_accepted(tmp_path, workers):
    index_path = tmp_path / "index.db"
    local_site(tmp_path)
    spider = write_script(tmp_path, "spider.py", SPIDER)
    output, log = tmp_path / "items.jl", tmp_path / "crawl.log"
    crawl = subprocess.Popen(
        [sys.executable, "-m", "scrapy", "runspider", str(spider), "-O", str(output),
         "-s", f"SIMHASH_INDEX_URI=sqlite:///{index_path}", "-s", f"LOG_FILE={log}",
         "-s", f"SIMHASH_WORKERS={workers}"],
        cwd=tmp_path,
        env=subprocess_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        # Its own process group, signalled as a whole, as Ctrl-C in a terminal does: the
        # worker processes get the SIGINT too and must not die before the crawl is done.
        start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while "READY" not in (log.read_text() if log.exists() else ""):
        assert crawl.poll() is None, crawl.stderr.read() if crawl.stderr else ""
        assert time.monotonic() < deadline, "the crawl did not start"
        time.sleep(0.1)
    os.killpg(crawl.pid, signal.SIGINT)
    _, errors = crawl.communicate(timeout=120)
    text = log.read_text()
    assert crawl.returncode == 0, errors + text
    assert "shutting down gracefully" in text
    assert "Traceback" not in text, text

    items = [json.loads(line) for line in output.read_text().splitlines()]
    assert len(items) > 100
    assert not Path(f"{index_path}-wal").exists() or Path(f"{index_path}-wal").stat().st_size == 0
    assert integrity(index_path) == "ok"
    with SqliteIndex(index_path) as index:
        stored = sorted(page.key for page in index.pages())
    # Every item let through is in the index, and nothing else.
    assert stored == sorted(item["url"] for item in items)
    stats = text[text.rindex("Dumping Scrapy stats") :]
    assert f"'simhash/kept': {len(items)}" in stats
    assert "'finish_reason': 'shutdown'" in stats
    assert "simhash/errors" not in stats


@pytest.mark.parametrize("sig", [signal.SIGTERM])
def test_sigterm_closes_the_index(tmp_path, sig):
    # SIGTERM (a service manager stopping the crawl) is shut down like Ctrl-C.
    index_path = tmp_path / "index.db"
    local_site(tmp_path)
    spider = write_script(tmp_path, "spider.py", SPIDER)
    log = tmp_path / "crawl.log"
    crawl = subprocess.Popen(
        [sys.executable, "-m", "scrapy", "runspider", str(spider),
         "-s", f"SIMHASH_INDEX_URI=sqlite:///{index_path}", "-s", f"LOG_FILE={log}"],
        cwd=tmp_path,
        env=subprocess_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while "READY" not in (log.read_text() if log.exists() else ""):
        assert crawl.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)
    crawl.send_signal(sig)
    assert crawl.wait(timeout=120) == 0
    assert not Path(f"{index_path}-wal").exists() or Path(f"{index_path}-wal").stat().st_size == 0
    assert integrity(index_path) == "ok"
    text = log.read_text()
    stats = text[text.rindex("Dumping Scrapy stats") :]
    assert "'finish_reason': 'shutdown'" in stats, "stopped by the signal, not done"
    with SqliteIndex(index_path) as index:
        assert f"'simhash/kept': {len(index)}" in stats
