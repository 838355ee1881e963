"""The sites' templates of a Redis index (see :mod:`scrapy_simhash.index.templates`): one
hash under its hash tag (one slot, also of a spread index), made by the first write."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .guards import RedisServer


class RedisTemplates:
    """``{prefix}:templates``: site -> its packed template, in base 64 (the index's clients
    decode replies as text)."""

    def __init__(self, store: Any) -> None:
        self.server: RedisServer = store.server
        self._key = f"{self.server.tag}:templates"

    def read(self, site: str) -> bytes | None:
        with self.server.errors("read a site's template"):
            value = self.server.client.hget(self._key, site)
        return None if value is None else base64.b64decode(value)

    def write(self, site: str, data: bytes) -> None:
        with self.server.errors("learn a site's template"):
            self.server.client.hset(self._key, site, base64.b64encode(data).decode("ascii"))

    def forget(self, site: str | None = None) -> int:
        with self.server.errors("forget sites' templates"):
            if site is None:
                count = int(self.server.client.hlen(self._key))
                self.server.client.delete(self._key)
                return count
            return int(self.server.client.hdel(self._key, site))
