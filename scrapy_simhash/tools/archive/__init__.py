"""Deduplicate an archive: the crawl-time filter's decisions over a whole batch."""
