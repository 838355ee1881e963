"""Real ``scrapy`` crawls in a child process over local ``file://`` pages, for the tests
that need a whole crawl (its log, its feed, a kill in the middle of it)."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
from pathlib import Path

from pipelines import subprocess_env

SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "zu", "pe", "gra", "sho", "tin"]


def page_text(number: int) -> str:
    """The text of page *number*: 60 pseudo-words, far from every other page's."""
    rng = random.Random(number)
    return " ".join("".join(rng.choices(SYLLABLES, k=3)) for _ in range(60))


def write_site(directory: Path, pages: int) -> Path:
    """*pages* distinct HTML pages in *directory*/site; returns that directory."""
    site = directory / "site"
    site.mkdir(exist_ok=True)
    for number in range(pages):
        path = site / f"{number}.html"
        if not path.exists():
            path.write_text(
                f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>Page {number}'
                f"</title></head><body><p>{page_text(number)}</p></body></html>",
                encoding="utf-8",
            )
    return site


CRAWL = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    import scrapy
    from scrapy.crawler import CrawlerProcess

    site, pages, uri, feed = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    extra = dict(arg.split("=", 1) for arg in sys.argv[5:])
    overwrite = extra.pop("overwrite", "0") == "1"  # as -O does


    class Pages(scrapy.Spider):
        name = "pages"

        async def start(self):
            for number in range(pages):
                yield scrapy.Request((site / f"{number}.html").as_uri())

        def parse(self, response):
            yield {"url": response.url, "content": response.text}


    settings = {
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "INFO",
        "ITEM_PIPELINES": {"scrapy_simhash.SimhashDedupPipeline": 300},
        "SIMHASH_INDEX_URI": uri,
        "SIMHASH_TEXT_FIELDS": ["content"],
        "FEEDS": {feed: {"format": "jsonlines", "overwrite": overwrite}} if feed != "-" else {},
        "CONCURRENT_REQUESTS": 16,
    }
    settings.update(extra)
    process = CrawlerProcess(settings)
    process.crawl(Pages)
    process.start()
    """
)


def crawl_command(tmp_path: Path, uri: str, pages: int, feed: str = "-", **settings: str):
    """The command line of a crawl of *pages* local pages into the index *uri*, writing
    its items to *feed* (JSON lines; ``-``: none)."""
    script = tmp_path / "crawl_script.py"
    if not script.exists():
        script.write_text(CRAWL, encoding="utf-8")
    site = write_site(tmp_path, pages)
    extra = [f"{name}={value}" for name, value in settings.items()]
    return [sys.executable, str(script), str(site), str(pages), uri, feed, *extra]


def run_crawl(
    tmp_path: Path, uri: str, pages: int, feed: str = "-", *, timeout: float = 300, **settings: str
) -> str:
    """Run a crawl to its end; return its log."""
    out = subprocess.run(
        crawl_command(tmp_path, uri, pages, feed, **settings),
        capture_output=True,
        text=True,
        env=subprocess_env(),
        cwd=tmp_path,
        timeout=timeout,
    )
    return out.stderr
