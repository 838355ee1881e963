"""The texts of stored and dropped pages, for the report: the index keeps fingerprints,
not texts. A page's text comes from a feed of the crawl's items (``--feed``, keyed by
the key field), else from reading its ``file://`` URL again (and ``http(s)://`` with
*fetch*), each turned into the text the pipeline fingerprints by *text_of*.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable

from ..exceptions import FeedError, SourceError
from .sources import read_source

__all__ = ["PageTexts"]


class PageTexts:
    """Texts by key, read when first asked for; ``None`` where none can be had."""

    def __init__(
        self,
        text_of: Callable[[str | bytes], str],
        *,
        feeds: Iterable[str | os.PathLike[str]] = (),
        key_field: str = "url",
        read_files: bool = True,
        fetch: bool = False,
        max_chars: int = 20_000,
    ) -> None:
        self.text_of = text_of
        self.read_files, self.fetch, self.max_chars = read_files, fetch, max_chars
        self.items: dict[str, str] = {}
        for feed in feeds:
            self._load(feed, key_field)
        self._texts: dict[str, str | None] = {}
        self.failures = 0

    def _load(self, feed: str | os.PathLike[str], key_field: str) -> None:
        """Keep each item of *feed* (JSON lines) as its JSON text, under its key."""
        try:
            with open(feed, encoding="utf-8") as f:
                for number, line in enumerate(f, start=1):
                    if not line.strip():
                        continue
                    try:
                        item = json.loads(line)
                    except ValueError:
                        raise FeedError(f"{feed}:{number}: not a JSON line") from None
                    if isinstance(item, dict) and item.get(key_field):
                        self.items[str(item[key_field])] = line
        except OSError as e:
            raise FeedError(f"Cannot read {os.fspath(feed)}: {e.strerror}") from None

    def readable(self, key: str) -> bool:
        """Whether a text of *key* may be had without reading it (a feed's item, or a URL
        this source may read)."""
        return (
            key in self.items
            or (self.read_files and key.startswith("file://"))
            or (self.fetch and key.startswith(("http://", "https://")))
        )

    def __call__(self, key: str) -> str | None:
        if key not in self._texts:
            self._texts[key] = self._read(key)
        return self._texts[key]

    def _read(self, key: str) -> str | None:
        if not self.readable(key):
            return None
        try:
            if key in self.items:
                text = self.text_of(self.items[key])
            else:
                text = read_source(key, self.text_of)[1]
        except (SourceError, ValueError, OSError):
            self.failures += 1
            return None
        return text[: self.max_chars]
