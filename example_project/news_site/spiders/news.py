from pathlib import Path

import scrapy

# example_project/site, found relative to this file so the crawl works from any checkout.
SITE_DIR = Path(__file__).resolve().parents[2] / "site"


class NewsSpider(scrapy.Spider):
    """Crawl the bundled news site over file:// URLs.

    index.html links only to original articles; each original links to its
    reposts from its footer. The item is yielded before those links and
    CONCURRENT_ITEMS = 1 handles them in order, so an original is always
    indexed before its reposts are requested and it is the copy that is kept.
    """

    name = "news"

    async def start(self):
        yield scrapy.Request((SITE_DIR / "index.html").as_uri())

    def parse(self, response):
        # Only article pages produce items; the index is just a list of links.
        if response.css("article"):
            yield {
                "url": response.url,
                "title": self.headline(response),
                # The whole <body> on purpose: boilerplate removal is the pipeline's job.
                "content": response.css("body").get(),
            }
        for href in response.css("a::attr(href)").getall():
            if not href.startswith("#"):
                yield response.follow(href, callback=self.parse)

    @staticmethod
    def headline(response):
        # Prefer the article headline: <title> carries a per-site suffix that
        # differs between the original and its mirrors.
        for query in ("article h1 ::text", "h1 ::text", "title::text"):
            text = " ".join("".join(response.css(query).getall()).split())
            if text:
                return text
        return ""
