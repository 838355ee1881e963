"""Where an index keeps its sites' templates (see :mod:`scrapy_simhash.template`): beside
the pages, one value a site, so that every process of a crawl and every later crawl
shares what was learned.

Outside the index's versioned layout, as the URL rules are: the SQLite table and the Redis
hash are made by the first write, and an index without them has learned no template yet.
A site's value is read, changed and written back whole by the page that teaches it: two
processes teaching one site at the same moment may each count their page without the
other's, which makes its template a page later, never wrong.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..template import Template
from .beside import beside


class TemplateStore(Protocol):
    def read(self, site: str) -> bytes | None:
        """The packed :class:`~scrapy_simhash.template.Template` of *site*, ``None`` for
        none learned."""

    def write(self, site: str, data: bytes) -> None:
        """Keep *data* as the template of *site*."""

    def forget(self, site: str | None = None) -> int:
        """Forget the template of *site* (of every site with ``None``); return how many
        were forgotten."""


class MemoryTemplates:
    """The store of a :class:`~scrapy_simhash.index.memory.MemoryIndex` (one process)."""

    def __init__(self, index: Any = None) -> None:  # keeps its own, not the index's
        self._sites: dict[str, bytes] = {}

    def read(self, site: str) -> bytes | None:
        return self._sites.get(site)

    def write(self, site: str, data: bytes) -> None:
        self._sites[site] = data

    def forget(self, site: str | None = None) -> int:
        if site is None:
            count = len(self._sites)
            self._sites.clear()
            return count
        return 1 if self._sites.pop(site, None) is not None else 0


def templates_for(index: Any) -> TemplateStore:
    """The store of *index*'s backend: beside its pages (one per index object)."""

    return beside(index, "templates")


def read_template(store: TemplateStore, site: str) -> Template:
    """The template learned of *site* (empty for none)."""
    return Template.unpack(store.read(site))
