"""The sites' templates of a Redis index (see :mod:`scrapy_simhash.index.templates`): one
hash under its hash tag (one slot, also of a spread index), made by the first write."""

from __future__ import annotations

import base64
from typing import Any


class RedisTemplates:
    """``{prefix}:templates``: site -> its packed template, in base 64 (the index's clients
    decode replies as text)."""

    def __init__(self, index: Any) -> None:
        self.index = index
        self._key = f"{index._tag}:templates"

    def read(self, site: str) -> bytes | None:
        with self.index._errors("read a site's template"):
            value = self.index._client.hget(self._key, site)
        return None if value is None else base64.b64decode(value)

    def write(self, site: str, data: bytes) -> None:
        with self.index._errors("learn a site's template"):
            self.index._client.hset(self._key, site, base64.b64encode(data).decode("ascii"))

    def forget(self, site: str | None = None) -> int:
        with self.index._errors("forget sites' templates"):
            if site is None:
                count = int(self.index._client.hlen(self._key))
                self.index._client.delete(self._key)
                return count
            return int(self.index._client.hdel(self._key, site))
