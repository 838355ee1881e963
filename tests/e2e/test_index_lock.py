"""A crawl while another process holds the index's write lock: it must go on.

A real ``scrapy runspider`` and a second process that holds ``BEGIN IMMEDIATE`` on the same
SQLite file (as a long ``expire``, ``import`` or ``vacuum`` does); nothing is simulated.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from pipelines import subprocess_env
from test_reliability import DOCUMENTS

from scrapy_simhash.analysis.fingerprint import hamming_distance
from scrapy_simhash.dedup import analyse_fields
from scrapy_simhash.index.sqlite import SqliteIndex
from scrapy_simhash.settings import SimhashSettings

#: Takes the write lock when the file "go" appears, says so in "held", holds it for the
#: given seconds, then lets go.
HOLDER = textwrap.dedent(
    """
    import os, sqlite3, sys, time

    path, hold = sys.argv[1], float(sys.argv[2])
    while not os.path.exists("go"):
        time.sleep(0.005)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    held = time.time()
    with open("held.tmp", "w") as f:
        f.write(str(held))
    os.rename("held.tmp", "held")
    time.sleep(hold)
    released = time.time()
    conn.execute("ROLLBACK")
    conn.close()
    print(held, released)
    """
)

#: Crawls the originals, waits until every one has gone through the pipeline, starts the
#: holder, then crawls a near-copy of each original while the lock is held. A LoopingCall
#: logs a TICK every 0.1 s: while the reactor runs, the ticks go on.
SPIDER = DOCUMENTS + textwrap.dedent(
    """
    import asyncio, pathlib, time
    import scrapy
    from scrapy import signals
    from twisted.internet import task

    class LockedSpider(scrapy.Spider):
        name = "locked"
        custom_settings = {
            "ADDONS": {"scrapy_simhash.Addon": 100},
            "SIMHASH_TEXT_FIELDS": ["content"],
            "TELNETCONSOLE_ENABLED": False,
            "REMOTE_CONTROL_ENABLED": False,
            "LOG_LEVEL": "INFO",
        }
        count = 40

        async def start(self):
            self.finished = 0
            for name in ("item_scraped", "item_dropped"):
                self.crawler.signals.connect(self.item_done, getattr(signals, name))
            self.ticks = task.LoopingCall(lambda: self.logger.info("TICK %.3f", time.time()))
            self.ticks.start(0.1)
            for i in range(self.count):
                yield scrapy.Request(pathlib.Path(f"pages/a{i}.html").resolve().as_uri())
            while self.finished < self.count:
                await asyncio.sleep(0.01)
            pathlib.Path("go").touch()
            while not pathlib.Path("held").exists():
                await asyncio.sleep(0.005)
            for i in range(self.count):
                yield scrapy.Request(pathlib.Path(f"pages/b{i}.html").resolve().as_uri())

        def item_done(self, *args, **kwargs):
            self.finished += 1

        def parse(self, response):
            self.logger.info("PARSED %.3f %s", time.time(), response.url)
            yield {"url": response.url, "content": response.text}

        def closed(self, reason):
            self.ticks.stop()
    """
)


def build_site(directory: Path, count: int = 40) -> None:
    """*count* originals (``a<i>``) of 40 pseudo-words and a near-copy of each (``b<i>``:
    one word changed), chosen among the documents of :data:`DOCUMENTS` whose copy is
    within distance 3 as the pipeline analyses them."""
    namespace: dict = {}
    exec(DOCUMENTS, namespace)
    config = SimhashSettings()
    params = config.analysis_params
    pages = directory / "pages"
    pages.mkdir()
    i = n = 0
    while i < count:
        # document(5n + 4) is document(5n + 3) with one word changed.
        html = [
            f'<html><head><meta charset="utf-8"></head><body><p>{namespace["document"](m)}'
            "</p></body></html>"
            for m in (5 * n + 3, 5 * n + 4)
        ]
        n += 1
        original, copy = (analyse_fields(params, [page]) for page in html)
        if original.kind != "simhash" or hamming_distance(original.value, copy.value) > 3:
            continue
        (pages / f"a{i}.html").write_text(html[0], encoding="utf-8")
        (pages / f"b{i}.html").write_text(html[1], encoding="utf-8")
        i += 1


def test_crawl_goes_on_while_another_process_holds_the_write_lock(tmp_path):
    """The lock is held 3 s; a check waits at most 2 s (``?timeout=2``). The reactor ticks
    and the copies download during the hold; the first check waiting on the lock times out
    and is let through, counted; the copies checked after the hold are dropped. Every item
    ends in one counted outcome."""
    index_path = tmp_path / "index.db"
    build_site(tmp_path)
    (tmp_path / "spider.py").write_text(SPIDER, encoding="utf-8")
    (tmp_path / "holder.py").write_text(HOLDER, encoding="utf-8")
    output, log = tmp_path / "items.jl", tmp_path / "crawl.log"
    holder = subprocess.Popen(
        [sys.executable, "holder.py", str(index_path), "3"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        crawl = subprocess.run(
            [sys.executable, "-m", "scrapy", "runspider", "spider.py", "-O", str(output),
             "-s", f"SIMHASH_INDEX_URI=sqlite:///{index_path}?timeout=2",
             "-s", f"LOG_FILE={log}"],
            cwd=tmp_path,
            env=subprocess_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )  # fmt: skip
        held_out, held_err = holder.communicate(timeout=30)
    finally:
        holder.kill()
        holder.wait()
    text = log.read_text()
    assert crawl.returncode == 0, crawl.stderr + text
    assert holder.returncode == 0, held_err
    held, released = map(float, held_out.split())

    def times(word: str) -> list[float]:
        return [float(t) for t in re.findall(rf"\b{word} (\d+\.\d+)", text)]

    # The reactor ran all through the hold: while the first copy's check waited for the
    # lock (from its page being parsed to the check timing out), the timer ticked and other
    # pages were parsed. An order of lines in the log, not a length of time, so a loaded
    # machine cannot break it; a reactor blocked by the wait would log nothing in between.
    ticks = times("TICK")
    assert ticks and ticks[0] < held, "the timer did not run before the hold"
    lines = text.splitlines()
    failed = next(i for i, line in enumerate(lines) if "Simhash index failed on" in line)
    waiting = re.search(r"failed on (\S+):", lines[failed]).group(1)
    parsed = next(i for i, line in enumerate(lines) if "PARSED" in line and waiting in line)
    between = lines[parsed + 1 : failed]
    assert any("TICK" in line for line in between), "the reactor stopped during the wait"
    assert any("PARSED" in line for line in between), "no download during the wait"
    # Downloads went on: the copies were parsed while the lock was held.
    assert any(held < t < released for t in times("PARSED")), "no download during the hold"

    stats = text[text.rindex("Dumping Scrapy stats") :]

    def stat(name: str) -> int:
        found = re.search(rf"'simhash/{re.escape(name)}': (\d+)", stats)
        return int(found.group(1)) if found else 0

    count = 40
    assert stat("checked") == 2 * count
    # Every item in exactly one outcome.
    assert stat("kept") + stat("dropped") + stat("errors/index") == 2 * count, stats
    assert stat("kept") == count, "an original was not kept, or a copy was"
    # Checks that waited longer than the timeout were let through and counted; the rest,
    # checked once the lock was released, found their originals.
    assert 1 <= stat("errors/index") < count, stats
    assert stat("dropped") == count - stat("errors/index")
    assert stat("errors/index") == text.count("Simhash index failed on")
    items = [json.loads(line) for line in output.read_text().splitlines()]
    assert len(items) == stat("kept") + stat("errors/index")
    with SqliteIndex(index_path) as index:
        assert len(index) == count
        assert sorted(page.key for page in index.pages()) == sorted(
            (tmp_path / "pages" / f"a{i}.html").as_uri() for i in range(count)
        )
