"""Does the pipeline slow a crawl down? Items/s of one local crawl with it and without it.

    python benchmarks/crawl_speed.py                # Debian Handbook pages, 3 copies each
    python benchmarks/crawl_speed.py --pages DIR    # your own .html files
    python benchmarks/crawl_speed.py --copies 2 --rounds 1
    python benchmarks/crawl_speed.py --workers 1 --waiting   # and a pipeline that only waits
    python benchmarks/crawl_speed.py --workers 1 --analysing  # and one that analyses, no index
    python benchmarks/crawl_speed.py --workers 1 --round-trip # and one that sends titles only
    python benchmarks/crawl_speed.py --workers 1 --neighbour  # and no pipeline beside a busy core

A site is built in a temporary directory from real pages: every page of the Debian Handbook
(6 languages, 762 pages) in ``--copies`` copies, each copy with a small edit (a "mirror"
line and a date), so that the pipeline keeps the first copy and drops the others, as on a
site with reposts. It is served by ``python -m http.server`` on 127.0.0.1, and crawled by a
plain Scrapy spider (32 concurrent requests, every page requested from ``start``; items
carry the URL, the title and the whole ``<body>``):

* off: no item pipeline;
* a pipeline that only waits (``--waiting``): an ``async def process_item`` that awaits one
  turn of the event loop and drops the copies (the simhash pipeline drops those and
  about 400 of the handbook's own pages, near-duplicates of others): what Scrapy itself
  spends on a pipeline that waits and drops, the least any such pipeline costs;
* a pipeline that only analyses (``--analysing``): ``SimhashDedupPipeline`` with one worker
  process, which hands each item to the worker and awaits its analysis, then drops the
  copies as the waiting one does, with no index: the share of the pipeline's cost that
  is the worker round trip, against the index's thread and the drops;
* a pipeline that only round-trips (``--round-trip``): the same, but it hands the worker
  each item's title alone, whose analysis is next to nothing: what the round trip to a
  worker process costs the crawl by itself, the floor of any pipeline that analyses in
  another process (pickling and sending a whole item instead of its title, 17 KB on
  average here, adds 5-15 us of CPU per item to the crawl's process);
* on: ``SimhashDedupPipeline`` with a SQLite index, for each ``SIMHASH_WORKERS`` value;
* a busy neighbour (``--neighbour``): no item pipeline, while another process beside the
  crawl runs a Python loop that keeps one core busy, with no tie to the crawl: what any
  second process busy beside the crawl costs it on this machine (the CPUs' shared caches,
  and on a machine of two cores the crawl's own threads and the HTTP server left one).
  The simhash pipeline's worker is such a process, busy part of the time.

Each crawl runs in its own process; items/s is (scraped + dropped) / (finish - start) from
Scrapy's stats, and the CPU time of the crawl's process, of its worker processes and of the
HTTP server (read from ``/proc`` where there is one) is shown per item. All three share
the machine's cores, so on a small machine the pipeline's cost is its CPU per item, in the
crawl's process and in the workers together. Modes alternate over ``--rounds`` rounds and
the best round of each counts (other load on the machine only ever slows a round down).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"


def mirror(html: str, copy: int) -> str:
    """Copy number *copy* of a page: the original (0), or with a "mirror" line and a date."""
    if not copy:
        return html
    mark = f"<p>Mirror {copy}: retrieved 2024-0{copy % 9 + 1}-1{copy % 9}.</p>"
    return html.replace("<body>", "<body>" + mark, 1)


def keep_first_copy(item):
    """*item* if its page is the first copy of the site's page; else it is dropped."""
    from scrapy.exceptions import DropItem

    if "/copy0/" not in item["url"]:
        raise DropItem("a copy", log_level="DEBUG")
    return item


class WaitingPipeline:
    """Awaits one turn of the event loop per item and drops every copy but the first."""

    async def process_item(self, item):
        import asyncio

        loop = asyncio.get_running_loop()
        turn = loop.create_future()
        loop.call_soon(turn.set_result, None)
        await turn
        return keep_first_copy(item)


def analysing_pipeline(fields: tuple[str, ...] | None = None):
    """SimhashDedupPipeline that analyses each item in its worker and drops every copy
    but the first, without checking an index (its internals: a benchmark's tool only).
    It analyses the item's *fields* (default: its ``SIMHASH_TEXT_FIELDS``)."""
    from itemadapter import ItemAdapter

    from scrapy_simhash import SimhashDedupPipeline

    class AnalysingPipeline(SimhashDedupPipeline):
        async def process_item(self, item):
            adapter = ItemAdapter(item)
            values = [adapter.get(name) for name in fields or self.config.text_fields]
            await self.runner.analyse(values, adapter["url"])
            return keep_first_copy(item)

    return AnalysingPipeline


def build_site(source: Path | None, copies: int, root: Path) -> int:
    if source is None:
        pages = sorted((CORPORA / "debian-handbook").glob("*/*.html"))
        if not pages:
            sys.exit(f"no pages under {CORPORA / 'debian-handbook'}; pass --pages DIR")
        base = CORPORA / "debian-handbook"
    else:
        pages = sorted(source.rglob("*.htm*"))
        base = source
    count = 0
    for copy in range(copies):
        for page in pages:
            html = mirror(page.read_text(encoding="utf-8", errors="replace"), copy)
            target = root / f"copy{copy}" / page.relative_to(base)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(html, encoding="utf-8")
            count += 1
    return count


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_crawl(site: Path, port: int, mode: str, workdir: Path) -> dict:
    """One crawl in a fresh process; returns its stats."""
    out = workdir / f"stats-{mode}-{time.monotonic_ns()}.json"
    neighbour = None
    if mode == "neighbour":
        neighbour = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        subprocess.run(
            [sys.executable, __file__, "--crawl", mode, str(site), str(port), str(out)],
            check=True,
            cwd=workdir,
        )
    finally:
        if neighbour is not None:
            neighbour.kill()
            neighbour.wait()
    return json.loads(out.read_text())


def crawl_main(mode: str, site: Path, port: int, out: Path) -> None:
    """The child process: crawl every page of *site* once, write the stats to *out*."""
    import scrapy
    from scrapy.crawler import CrawlerProcess

    urls = [
        f"http://127.0.0.1:{port}/{p.relative_to(site).as_posix()}"
        for p in sorted(site.rglob("*.html"))
    ]

    class SiteSpider(scrapy.Spider):
        name = "site"

        async def start(self):
            for url in urls:
                yield scrapy.Request(url, dont_filter=True)

        def parse(self, response):
            yield {
                "url": response.url,
                "title": response.css("title::text").get(""),
                "content": response.css("body").get(""),
            }

    settings = {
        "LOG_LEVEL": "WARNING",
        "TELNETCONSOLE_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,
        "ROBOTSTXT_OBEY": False,
        "CONCURRENT_REQUESTS": 32,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 32,
        "DOWNLOAD_DELAY": 0,
        "SIMHASH_DROP_LOG_LEVEL": "DEBUG",
    }
    if mode == "waiting":
        settings["ITEM_PIPELINES"] = {WaitingPipeline: 300}
    elif mode in ("analysing", "round-trip"):
        fields = ("title",) if mode == "round-trip" else None
        settings["ITEM_PIPELINES"] = {analysing_pipeline(fields): 300}
        settings["SIMHASH_INDEX_URI"] = "memory:"  # opened, never asked
        settings["SIMHASH_WORKERS"] = 1
    elif mode not in ("off", "neighbour"):  # the neighbour runs beside the crawl
        settings["ITEM_PIPELINES"] = {"scrapy_simhash.SimhashDedupPipeline": 300}
        settings["SIMHASH_INDEX_URI"] = f"sqlite:///{out.with_suffix('.db')}"
        settings["SIMHASH_WORKERS"] = int(mode.removeprefix("workers="))
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(SiteSpider)
    process.crawl(crawler)
    process.start()
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    stats = {
        k: (v.isoformat() if hasattr(v, "isoformat") else v)
        for k, v in crawler.stats.get_stats().items()
    }
    stats["cpu_crawl_process"] = own.ru_utime + own.ru_stime
    stats["cpu_workers"] = children.ru_utime + children.ru_stime
    out.write_text(json.dumps(stats))


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of process *pid*, where ``/proc`` tells it."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def items_per_second(stats: dict) -> tuple[int, float]:
    from datetime import datetime

    items = stats.get("item_scraped_count", 0) + stats.get("item_dropped_count", 0)
    seconds = (
        datetime.fromisoformat(stats["finish_time"]) - datetime.fromisoformat(stats["start_time"])
    ).total_seconds()
    return items, items / seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=Path, help="directory of .html files to serve")
    parser.add_argument("--copies", type=int, default=3, help="copies of every page")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--workers", default="0,1,2", help="SIMHASH_WORKERS values to run, comma-separated"
    )
    parser.add_argument(
        "--analysing",
        action="store_true",
        help="also the pipeline with one worker that analyses each item, with no index",
    )
    parser.add_argument(
        "--round-trip",
        action="store_true",
        help="also the pipeline with one worker that is handed each item's title alone",
    )
    parser.add_argument(
        "--waiting",
        action="store_true",
        help="also a pipeline that only awaits one loop turn and drops the copies",
    )
    parser.add_argument(
        "--neighbour",
        action="store_true",
        help="also the crawl without the pipeline beside a process that keeps a core busy",
    )
    args = parser.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="simhash-crawl-"))
    try:
        site = workdir / "site"
        pages = build_site(args.pages, args.copies, site)
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
            cwd=site,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            time.sleep(1.0)
            modes = ["off", "waiting"] if args.waiting else ["off"]
            modes += ["neighbour"] if args.neighbour else []
            modes += ["round-trip"] if args.round_trip else []
            modes += ["analysing"] if args.analysing else []
            modes += [f"workers={w.strip()}" for w in args.workers.split(",")]
            best: dict[str, tuple[dict, float]] = {}
            for _ in range(args.rounds):
                for mode in modes:
                    server_before = process_cpu_seconds(server.pid)
                    stats = run_crawl(site, port, mode, workdir)
                    server_after = process_cpu_seconds(server.pid)
                    if server_before is not None and server_after is not None:
                        stats["cpu_server"] = server_after - server_before
                    items, rate = items_per_second(stats)
                    if items != pages:
                        print(f"warning: {mode} handled {items} of {pages} pages")
                    if mode not in best or rate > best[mode][1]:
                        best[mode] = (stats, rate)
        finally:
            server.terminate()
            server.wait()
        size = sum(p.stat().st_size for p in site.rglob("*.html")) / 1e6
        print(
            f"{pages} pages ({size:.0f} MB of HTML) served on 127.0.0.1, {os.cpu_count()} cores, "
            f"best of {args.rounds} round(s)\n"
        )
        print(
            "| crawl | items/s | vs pipeline off | kept | dropped "
            "| CPU ms/item, crawl process | CPU ms/item, workers | CPU ms/item, HTTP server |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        base = best["off"][1]
        for mode in modes:
            stats, rate = best[mode]
            name = {
                "off": "pipeline off",
                "waiting": "a pipeline that only waits",
                "round-trip": "a pipeline that only round-trips titles (one worker, no index)",
                "analysing": "a pipeline that only analyses (one worker, no index)",
                "neighbour": "pipeline off, a busy process beside the crawl",
            }.get(mode, f"pipeline on, SIMHASH_{mode.upper()}")
            kept = stats.get("item_scraped_count", 0)
            dropped = stats.get("item_dropped_count", 0)
            own = stats["cpu_crawl_process"] * 1e3 / pages
            workers = stats["cpu_workers"] * 1e3 / pages
            server = f"{stats['cpu_server'] * 1e3 / pages:.1f}" if "cpu_server" in stats else "?"
            print(
                f"| {name} | {rate:.0f} | {rate / base:.0%} | {kept} | {dropped} "
                f"| {own:.1f} | {workers:.1f} | {server} |"
            )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--crawl":
        crawl_main(sys.argv[2], Path(sys.argv[3]), int(sys.argv[4]), Path(sys.argv[5]))
    else:
        main()
