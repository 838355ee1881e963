"""The sites' templates of a Redis index (see :mod:`scrapy_simhash.index.templates`): one
hash under its hash tag (one slot, also of a spread index), made by the first write."""

from __future__ import annotations

import base64
from typing import Any


class RedisTemplates:
    """``{prefix}:templates``: site -> its packed template, in base 64 (the index's clients
    decode replies as text)."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self._key = f"{store._tag}:templates"

    def read(self, site: str) -> bytes | None:
        with self.store._errors("read a site's template"):
            value = self.store._client.hget(self._key, site)
        return None if value is None else base64.b64decode(value)

    def write(self, site: str, data: bytes) -> None:
        with self.store._errors("learn a site's template"):
            self.store._client.hset(self._key, site, base64.b64encode(data).decode("ascii"))

    def forget(self, site: str | None = None) -> int:
        with self.store._errors("forget sites' templates"):
            if site is None:
                count = int(self.store._client.hlen(self._key))
                self.store._client.delete(self._key)
                return count
            return int(self.store._client.hdel(self._key, site))
