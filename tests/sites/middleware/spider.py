"""The spider of the middleware crawl test (tests/test_middleware.py).

Run as ``scrapy runspider spider.py -a stats_out=stats.json -O items.jl``; it follows every
link of the local site under ``site/``, opting out of the middleware for links with
``class="nocheck"``, and writes the crawl's stats as JSON to *stats_out*.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import scrapy

SITE = Path(__file__).resolve().parent / "site"


class MiddlewareSiteSpider(scrapy.Spider):
    name = "middleware_site"
    custom_settings: ClassVar[dict] = {
        "SPIDER_MIDDLEWARES": {"scrapy_simhash.SimhashDedupMiddleware": 600},
        "TELNETCONSOLE_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,
        "CONCURRENT_REQUESTS": 2,
        "LOG_LEVEL": "INFO",
    }

    def __init__(self, stats_out: str = "stats.json", **kwargs):
        super().__init__(**kwargs)
        self.stats_out = stats_out

    async def start(self):
        yield scrapy.Request((SITE / "index.html").as_uri())

    def parse(self, response):
        yield {"url": response.url, "title": response.css("h1::text").get()}
        for link in response.css("aside a"):
            meta = {"dont_simhash": True} if "nocheck" in link.attrib.get("class", "") else {}
            yield response.follow(link, meta=meta)

    def closed(self, reason):
        stats = {k: v for k, v in self.crawler.stats.get_stats().items() if isinstance(v, int)}
        Path(self.stats_out).write_text(json.dumps(stats, indent=1), encoding="utf-8")
