"""What the pipeline costs the crawl's own process per item, part by part, without downloads.

    python benchmarks/pipeline_cost.py                 # Debian Handbook pages, 3 copies each
    python benchmarks/pipeline_cost.py --pages DIR     # your own .html files
    python benchmarks/pipeline_cost.py --workers 2 --rounds 5

``crawl_speed.py`` measures the whole crawl, in which the pipeline's share is a small
difference between two noisy figures. This runs the pipeline alone on the crawl's event
loop (Twisted's asyncio reactor, as ``scrapy crawl`` runs it), with the items a crawl of
``crawl_speed.py``'s site would give it (``url``, ``title``, the whole ``<body>``; every
page in ``--copies`` copies, each with a small edit), 32 at a time, and reads the CPU time
of the crawl's thread and of the whole process (the index's thread is the rest; the
worker processes are not counted: they run beside the crawl). Parts, alternating over
``--rounds`` rounds, best round of each:

* no pipeline: an ``async def`` that returns the item (the cost of this harness);
* worker round trip: sending the fields to a worker process and reading its analysis;
* check-and-insert: the index check of analyses computed beforehand, in the index's thread;
* ``process_item``: all of it, as the crawl calls it (a fresh SQLite index each round).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from crawl_speed import CORPORA, mirror
from results import write_results

CONCURRENCY = 32
_BODY = re.compile(r"<body.*</body>", re.DOTALL | re.IGNORECASE)
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.DOTALL | re.IGNORECASE)


def load_items(source: Path | None, copies: int) -> list[dict]:
    """The items of ``crawl_speed.py``'s site: every page in *copies* copies, each copy
    with a "mirror" line (so that the pipeline keeps the first and drops the others)."""
    base = source or CORPORA / "debian-handbook"
    pages = sorted(base.rglob("*.htm*"))
    if not pages:
        sys.exit(f"no pages under {base}; pass --pages DIR")
    items = []
    for copy in range(copies):
        for page in pages:
            html = mirror(page.read_text(encoding="utf-8", errors="replace"), copy)
            body, title = _BODY.search(html), _TITLE.search(html)
            items.append(
                {
                    "url": f"http://127.0.0.1/copy{copy}/{page.relative_to(base).as_posix()}",
                    "title": title.group(1) if title else "",
                    "content": body.group(0) if body else html,
                }
            )
    return items


async def feed(call: Callable[[dict], Awaitable[object]], items: list[dict]) -> tuple[float, float]:
    """Run *call* over *items*, 32 at a time; (CPU s of this thread, CPU s of the process)."""
    from scrapy.exceptions import DropItem

    slots = asyncio.Semaphore(CONCURRENCY)

    async def one(item: dict) -> None:
        async with slots:
            with contextlib.suppress(DropItem):
                await call(dict(item))

    thread, process = time.thread_time(), time.process_time()
    await asyncio.gather(*(one(item) for item in items))
    return time.thread_time() - thread, time.process_time() - process


async def measure(
    items: list[dict], workers: int, rounds: int, folder: Path, templates: bool = False
) -> dict:
    from scrapy.utils.test import get_crawler

    from scrapy_simhash import SimhashDedupPipeline

    def pipeline(name: str) -> SimhashDedupPipeline:
        crawler = get_crawler(
            settings_dict={
                "SIMHASH_INDEX_URI": f"sqlite:///{folder / name}.db",
                "SIMHASH_WORKERS": workers,
                "SIMHASH_KEY_FIELD": "url",
                "SIMHASH_TEXT_FIELDS": ["title", "content"],
                "SIMHASH_DROP_LOG_LEVEL": "DEBUG",
                "SIMHASH_SITE_TEMPLATES": templates,
                "TELNETCONSOLE_ENABLED": False,
            }
        )
        crawler.stats.open_spider()
        made = SimhashDedupPipeline.from_crawler(crawler)
        made.open_spider()
        return made

    async def nothing(item: dict) -> dict:
        return item

    async def warm_up(checker: SimhashDedupPipeline) -> None:
        # The workers start and load their tables; the index is not touched.
        await feed(lambda item: checker.runner.analyse([item["content"]], "warm-up"), items[:50])

    async def parts(checker: SimhashDedupPipeline) -> dict[str, tuple[float, float]]:
        runner = checker.runner
        analyses: dict[str, object] = {}

        async def round_trip(item: dict) -> None:
            values = [item["title"], item["content"]]
            analyses[item["url"]] = await runner.analyse(values, item["url"])

        async def check(item: dict) -> None:
            await runner.decide(analyses[item["url"]], item["url"])

        await warm_up(checker)
        return {
            "worker round trip": await feed(round_trip, items),
            "check-and-insert": await feed(check, items),
        }

    async def whole(checker: SimhashDedupPipeline) -> dict[str, tuple[float, float]]:
        await warm_up(checker)
        return {"`process_item`": await feed(checker.process_item, items)}

    best: dict[str, tuple[float, float]] = {}
    for number in range(rounds):
        found = {"no pipeline": await feed(nothing, items)}
        # A fresh index for each: the check-and-insert of the same pages again would
        # find them all unchanged.
        for name, measure_part in (("parts", parts), ("whole", whole)):
            checker = pipeline(f"{name}-{number}")
            try:
                found.update(await measure_part(checker))
            finally:
                checker.close_spider()
        for part, times in found.items():
            if part not in best or times[0] < best[part][0]:
                best[part] = times
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=Path, help="directory of .html files")
    parser.add_argument("--copies", type=int, default=3, help="copies of every page")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=1, help="SIMHASH_WORKERS")
    parser.add_argument("--templates", action="store_true", help="SIMHASH_SITE_TEMPLATES")
    parser.add_argument("--no-write", action="store_true", help="print only, write no results")
    args = parser.parse_args(argv)
    items = load_items(args.pages, args.copies)

    from scrapy.utils.defer import deferred_from_coro
    from scrapy.utils.reactor import install_reactor

    install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
    from twisted.internet import reactor

    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="simhash-cost-") as folder:

        async def run() -> None:
            found = await measure(items, args.workers, args.rounds, Path(folder), args.templates)
            results.update(found)

        done = deferred_from_coro(run())
        done.addErrback(lambda failure: results.update(error=failure))
        done.addBoth(lambda _: reactor.stop())
        reactor.run()
    if "error" in results:
        results["error"].raiseException()
    print(
        f"{len(items)} items, {CONCURRENCY} at a time, SIMHASH_WORKERS={args.workers}, "
        f"SIMHASH_SITE_TEMPLATES={args.templates}, "
        f"best of {args.rounds} round(s); CPU ms per item\n"
    )
    print("| part | crawl's thread | index's thread and others | whole process |")
    print("|---|---:|---:|---:|")
    per = 1e3 / len(items)
    parts = {}
    for part, (thread, process) in results.items():
        parts[part] = {"crawl_thread_ms": thread * per, "process_ms": process * per}
        print(
            f"| {part} | {thread * per:.3f} | {max(0.0, process - thread) * per:.3f} "
            f"| {process * per:.3f} |"
        )
    if not args.no_write:
        figures = {"items": len(items), "concurrency": CONCURRENCY, "cpu_ms_per_item": parts}
        write_results("pipeline_cost", {"args": vars(args), **figures}, argv=argv)


if __name__ == "__main__":
    main()
