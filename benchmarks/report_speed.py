"""How long ``scrapy-simhash report`` takes on a large index, and how long Chromium takes
to open what it wrote.

Builds a SQLite index of *pages* synthetic stored pages (random fingerprints, keys on 200
sites, added in bulk with ``add_pages``) and *drops* synthetic drops (``record_drop``,
kept pages drawn so that a few clusters are large and most are small; some by
containment, with shares), then times, each as a user runs it:

* ``scrapy-simhash report -o report.html --clusters clusters.csv`` (a subprocess, its
  imports included; no texts: the keys are not readable pages);
* ``chromium --headless --dump-dom file://.../report.html`` (wall time, a fresh profile),
  checking the DOM it prints holds the clusters.

Goals (issue #44): written in under 30 s, opened in under 3 s, on 100,000 pages::

    python benchmarks/report_speed.py --pages 100000 --drops 20000
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scrapy_simhash.index import open_index
from scrapy_simhash.index.base import Match, StoredPage

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def key(i: int) -> str:
    return f"https://site{i % 200}.example/articles/{i}.html"


def build(uri: str, pages: int, drops: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    with open_index(uri, max_distance=3) as index:
        index.add_pages(
            StoredPage(key(i), rng.getrandbits(64), 1_700_000_000.0 + i) for i in range(pages)
        )
        for j in range(drops):
            kept = min(pages - 1, int(rng.paretovariate(0.8)) - 1)  # a few large clusters
            kept = kept if rng.random() < 0.5 else rng.randrange(pages)
            contained = rng.random() < 0.2
            match = Match(
                key(kept),
                0,
                rng.randint(0, 3) if not contained else rng.randint(4, 20),
                0.0,
                shared=(1, 2, 3) if contained else (),
                share=rng.uniform(0.6, 1.0),
            )
            index.record_drop(f"https://copies{j % 50}.example/{j}.html", match)


def timed(command: list[str], **kwargs) -> tuple[float, subprocess.CompletedProcess]:
    """Wall time of *command*; prints its CPU time too (wall time grows on a busy machine)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True, **kwargs)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    print(f"  ({Path(command[0]).name} ... {command[-1][-40:]}: {cpu:.2f} s of CPU)")
    return seconds, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--drops", type=int, default=20_000)
    parser.add_argument("--dir", type=Path, default=None, help="Keep the files here.")
    args = parser.parse_args()
    work = args.dir or Path(tempfile.mkdtemp(prefix="report-speed-"))
    work.mkdir(parents=True, exist_ok=True)
    db = work / "index.db"
    db.unlink(missing_ok=True)
    uri = f"sqlite:///{db}"

    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    started = time.perf_counter()
    build(uri, args.pages, args.drops)
    print(
        f"index: {args.pages} pages, {args.drops} drops built in "
        f"{time.perf_counter() - started:.1f} s"
    )

    cli = [sys.executable, "-m", "scrapy_simhash"]
    html, table = work / "report.html", work / "clusters.csv"
    seconds, done = timed(
        [*cli, "report", "-o", str(html), "--index", uri, "--clusters", str(table)], cwd=work
    )
    print(done.stdout.strip())
    print(
        f"report written: {seconds:.2f} s (goal < 30 s); {html.stat().st_size / 1e6:.1f} MB, "
        f"clusters table {table.stat().st_size / 1e6:.1f} MB"
    )

    chromium = shutil.which("chromium")
    if chromium is None:
        print("chromium: not installed (apt-get install chromium); not opened")
        return
    empty = work / "empty.html"
    empty.write_text("<!DOCTYPE html><title>empty</title><p>empty</p>", encoding="utf-8")
    for page in (empty, html):
        seconds, done = dump_dom(chromium, page)
        clusters = done.stdout.count('class="cluster"')
        print(f"chromium --dump-dom {page.name}: {seconds:.2f} s; {clusters} clusters in the DOM")
    print("(goal: the report opens in < 3 s; the empty page is Chromium's own start-up)")


def dump_dom(chromium: str, page: Path) -> tuple[float, subprocess.CompletedProcess]:
    """Wall time of ``chromium --dump-dom`` on *page*, with a fresh profile."""
    profile = Path(tempfile.mkdtemp(prefix="report-chromium-"))
    try:
        return timed(
            [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
            timeout=120,
        )
    finally:
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    main()
