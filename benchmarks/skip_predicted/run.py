"""Does ``SIMHASH_SKIP_PREDICTED`` save downloads of copies without losing a distinct page?

    python -m benchmarks.skip_predicted                      # 200 pages, three orders
    python -m benchmarks.skip_predicted --pages 100 --orders bfs

A site built from the Python 3.11 documentation (``../shared/corpora/doc-sites``: the
first ``--pages`` pages of at least 150 words of main text, in path order) is served on
127.0.0.1 with the URL variants real sites repeat (see :mod:`.site`). Each crawl order is
crawled twice, from ``/list/``, each time into a new SQLite index with the add-on: without
and with ``SIMHASH_SKIP_PREDICTED``. Orders: ``dfs`` (Scrapy's default, last in first
out), ``bfs`` (``DEPTH_PRIORITY=1`` and FIFO queues), ``random`` (each request a random
priority, seeded).

Printed per order and run: downloads (requests the server answered), copies downloaded
(downloads of a content already downloaded), distinct contents kept (in the feed), the
crawl process's CPU seconds per download, and for the run with the option the distinct
contents the run without kept and it never downloaded (``lost``, the goal: none); a
content downloaded but dropped by the index in one order and kept in the other (a list
of a few pages' summaries that another list holds, e.g.) is listed apart
(``kept_elsewhere``): that is the pipeline's verdict, not a skip.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import lxml.html

from benchmarks.results import dump, stamp

from .site import Document, Server, Site

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpora" / "doc-sites" / "python-3.11.tar.xz"
ORDERS = ("dfs", "bfs", "random")
SPIDER = """
import os, random
import scrapy

class Site(scrapy.Spider):
    name = "site"
    start_urls = [os.environ["SKIP_START"]]
    shuffled = random.Random(7)

    def parse(self, response):
        yield {"url": response.url, "title": response.css("title::text").get(""),
               "content": response.text}
        for href in response.css("a::attr(href)").getall():
            priority = self.shuffled.randrange(1000) if os.environ["SKIP_ORDER"] == "random" else 0
            yield response.follow(href, priority=priority)
"""


def documents(count: int) -> list[Document]:
    """The first *count* pages of the Python documentation with 150 words of main text."""
    found = []
    with tarfile.open(CORPUS) as archive:
        members = sorted(
            (m for m in archive.getmembers() if m.name.endswith(".html")), key=lambda m: m.name
        )
        for member in members:
            root = lxml.html.document_fromstring(archive.extractfile(member).read())
            main = root.xpath("//*[@role='main']")
            if not main:
                continue
            paragraphs = [" ".join(p.text_content().split()) for p in main[0].iter("p")]
            paragraphs = [p for p in paragraphs if p]
            if sum(len(p.split()) for p in paragraphs) < 150:
                continue
            title = " ".join(root.findtext(".//title", "").split())
            section = member.name.split("/")[1] if member.name.count("/") > 1 else "top"
            found.append(Document(title, tuple(paragraphs), section))
            if len(found) == count:
                break
    return found


def crawl(
    server: Server, order: str, skip: bool, folder: Path, extra: dict[str, str] | None = None
) -> dict:
    """One crawl of the served site (*extra*: more Scrapy settings); its figures."""
    server.requests.clear()
    name = f"{order}-{'skip' if skip else 'plain'}"
    spider, feed = folder / "site_spider.py", folder / f"{name}.jsonl"
    spider.write_text(SPIDER, encoding="utf-8")
    settings = {
        "ADDONS": json.dumps({"scrapy_simhash.Addon": 100}),
        "SIMHASH_INDEX_URI": f"sqlite:///{folder / (name + '.db')}",
        "SIMHASH_SKIP_PREDICTED": str(skip),
        "ROBOTSTXT_OBEY": "False",
        "TELNETCONSOLE_ENABLED": "False",
        "CONCURRENT_REQUESTS": "4",
        **(extra or {}),
    }
    if order == "bfs":
        settings |= {
            "DEPTH_PRIORITY": "1",
            "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
            "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
        }
    command = [sys.executable, "-m", "scrapy", "runspider", "-L", "WARNING", str(spider)]
    command += ["-O", str(feed)]
    for key, value in settings.items():
        command += ["-s", f"{key}={value}"]
    env = dict(os.environ, SKIP_START=server.url + "/list/", SKIP_ORDER=order)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, check=True, env=env, cwd=folder)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    downloaded = [server.content_id(path) for path in server.requests]
    seen: set[str | None] = set()
    kinds: dict[str, int] = {}
    for path, content in zip(server.requests, downloaded, strict=True):
        if content in seen:
            kinds[variant_kind(path)] = kinds.get(variant_kind(path), 0) + 1
        seen.add(content)
    with sqlite3.connect(folder / (name + ".db")) as db:
        skipped = (
            db.execute(
                "SELECT COUNT(*) FROM sqlite_master WHERE name = 'skip_requests'"
            ).fetchone()[0]
            and db.execute("SELECT COUNT(*) FROM skip_requests").fetchone()[0]
        )
    kept = {server.content_id(json.loads(line)["url"]) for line in feed.open(encoding="utf-8")}
    return {
        "order": order,
        "skip": skip,
        "downloads": len(downloaded),
        "copies_downloaded": len(downloaded) - len(set(downloaded)),
        "copies_by_kind": kinds,
        "skipped": skipped,
        "distinct_kept": len(kept),
        "kept": sorted(k for k in kept if k is not None),
        "downloaded": sorted({d for d in downloaded if d is not None}),
        "cpu_s": round(cpu, 2),
        "cpu_ms_per_download": round(1000 * cpu / max(1, len(downloaded)), 2),
        # A skipped request is a request too: what the spider asked for.
        "cpu_ms_per_request": round(1000 * cpu / max(1, len(downloaded) + skipped), 2),
        "wall_s": round(wall, 1),
    }


def variant_kind(path: str) -> str:
    """Which kind of URL variant *path* is (for the breakdown of the copies downloaded)."""
    if "?" in path:
        return "query " + path.split("?", 1)[1].split("=", 1)[0]
    for kind in ("/print/", "/amp/", "index.html", "/list/page/1/"):
        if kind in path:
            return kind
    return "original"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--orders", nargs="+", choices=ORDERS, default=list(ORDERS))
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    parser.add_argument("--keep", type=Path, help="keep the indexes and feeds in this folder")
    args = parser.parse_args(argv)
    if not CORPUS.exists():
        print(f"{CORPUS} is missing: this benchmark needs shared/corpora/doc-sites")
        return 2
    site = Site(documents(args.pages))
    results = []
    header = (
        f"{'order':7} {'option':6} {'downloads':>9} {'copies':>6} {'kept':>5} {'lost':>4} "
        f"{'skipped':>7} {'cpu ms/req':>10}"
    )
    print(f"{len(site.documents)} documents; {header}")
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    folder = contextlib.nullcontext(str(args.keep)) if args.keep else tempfile.TemporaryDirectory()
    with folder as tmp, Server(site) as server:
        for order in args.orders:
            plain = crawl(server, order, False, Path(tmp))
            skip = crawl(server, order, True, Path(tmp))
            # Skipped: kept without the option, never downloaded with it. (A content
            # downloaded but not kept is the index's verdict in another crawl order.)
            skip["lost"] = sorted(set(plain["kept"]) - set(skip["downloaded"]))
            skip["kept_elsewhere"] = sorted(
                set(plain["kept"]) - set(skip["kept"]) - set(skip["lost"])
            )
            plain["lost"] = []
            for run in (plain, skip):
                results.append(run)
                print(
                    f"{'':{len(str(len(site.documents))) + 12}}{order:7} "
                    f"{'on' if run['skip'] else 'off':6} {run['downloads']:9} "
                    f"{run['copies_downloaded']:6} {run['distinct_kept']:5} {len(run['lost']):4} "
                    f"{run['skipped']:7} {run['cpu_ms_per_request']:10}"
                )
                print(f"{'':20}copies by kind: {run['copies_by_kind']}")
    if args.json:
        args.json.write_text(dump({**stamp(argv), "runs": results}), encoding="utf-8")
    return 0
