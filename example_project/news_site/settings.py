# Settings for the offline demo crawl of the bundled site in ../site.

BOT_NAME = "news_site"

SPIDER_MODULES = ["news_site.spiders"]
NEWSPIDER_MODULE = "news_site.spiders"

# The add-on, as the README says: the pipeline, and a one-line log of each dropped
# repost (without the whole item and its HTML).
ADDONS = {"scrapy_simhash.Addon": 100}

# Pages whose 64-bit fingerprints differ in at most 3 bits count as duplicates.
SIMHASH_MAX_DISTANCE = 3
# The headline plus the visible text of the page body; the pipeline strips
# nav/header/footer/aside/script/style from "content" before hashing.
SIMHASH_TEXT_FIELDS = ["title", "content"]
# SIMHASH_INDEX_URI is left unset: the index then lives in .scrapy/simhash.db
# inside this project and persists between runs.

# Crawl order decides which copy is kept: the first checked. For a demo whose
# kept copies are always the same, one spider output at a time: a page's item
# goes through the whole pipeline (fingerprint, check, insert) before the links
# after it are scheduled, and reposts are linked only from their original. A
# real project needs neither this nor its cost (Scrapy's default is 100).
CONCURRENT_ITEMS = 1

# The site is local files: no robots.txt to fetch and nobody to be polite to.
ROBOTSTXT_OBEY = False

# Nothing needs to listen on a port for a demo crawl.
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False

# INFO keeps the final stats dump (simhash/kept, simhash/dropped) visible.
LOG_LEVEL = "INFO"

# Scrapy's default, pinned: the spider and the pipeline use asyncio coroutines.
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
# Keep Chinese text readable in exported feeds instead of \u escapes.
FEED_EXPORT_ENCODING = "utf-8"
