"""The Redis backend (``pip install 'scrapy-simhash[redis]'``): key layout (:mod:`.layout`),
Lua scripts (:mod:`.scripts`), URIs and clients (:mod:`.uri`), the server, its errors and what
it says about persistence and eviction (:mod:`.guards`), the keys of a single-slot index
(:mod:`.slot`), maintenance (:mod:`.maintenance`), and
:class:`RedisIndex` (:mod:`.index`)."""

from .index import RedisIndex

__all__ = ["RedisIndex"]
