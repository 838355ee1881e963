"""The Redis backend (``pip install 'scrapy-simhash[redis]'``): key layout (:mod:`.layout`),
Lua scripts (:mod:`.scripts`), URIs and clients (:mod:`.uri`), what the server says about
persistence and eviction (:mod:`.guards`), maintenance (:mod:`.maintenance`), and
:class:`RedisIndex` (:mod:`.index`)."""

from .index import RedisIndex

__all__ = ["RedisIndex"]
