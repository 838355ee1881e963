"""A site's template as plain values: the blocks (lines of main text) that recur across
different pages of one site, learned from the crawl itself (the text side, which cuts a
text into blocks, is :mod:`scrapy_simhash.analysis.template`).

Sites repeat text around each page's own: a sidebar of recent posts, a shipping note on
every product, a teaser box, a notice. Extractors leave some of it in the main text, and
whatever HTML calls it, it is not the page's own text. A copy of an article reposted
into another site's template holds all of the article, and the share check would see
that only when it reads the article alone: the page's *own* text is what the kept page
must hold for a drop (see :func:`template_blocks`, and
:func:`~scrapy_simhash.analysis.template.read_with`).

**What is learned.** For each site, the blocks of the first :data:`LEARN_PAGES` pages
checked (kept or dropped): per block the page that first held it (its sighting, as the
rule counts pages: :func:`~scrapy_simhash.index.rule.sighting`) and how many pages held
it. A block of a page is *template* when another page of the site held it. At most
:data:`MAX_BLOCKS` blocks a site; what is learned is kept in the index, so later crawls
and other processes share it (one value per site, a few kilobytes).

**What is never hidden.** Two URLs of one article share all of their blocks: a page whose
blocks seen on the site make :data:`COPY_SHARE` or more of its text is taken as a copy,
and all of its text is its own. A candidate holding 80% of all of a page's text still
confirms a drop; the template adds the candidates that hold the page's own text
(:func:`~scrapy_simhash.index.rule.decide`), and the page's anchors are those of its own
text, so that the template's long units neither find candidates nor fail the containment
test.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

#: Pages of a site whose blocks are learned: enough to see what its pages repeat.
LEARN_PAGES = 16
#: Blocks kept a site (the first seen).
MAX_BLOCKS = 2_000
#: A page whose blocks seen on its site before make this share of its text (in
#: characters) is taken as a copy of a page of the site, not as a page in its template.
COPY_SHARE = 0.8
#: Pages a block is counted in, at most.
_MAX_COUNT = 0xFFFF
_HEADER = struct.Struct("<II")


@dataclass
class Template:
    """What a site's pages were seen to hold: ``pages`` checked (learned from at most
    :data:`LEARN_PAGES` of them) and, per block, ``(first, count)``: the sighting of the
    first page that held it and how many pages did."""

    pages: int = 0
    blocks: dict[int, tuple[int, int]] = field(default_factory=dict)

    def pack(self) -> bytes:
        """As an index stores it: the header, then the blocks, firsts and counts."""
        n = len(self.blocks)
        items = sorted(self.blocks.items())
        return _HEADER.pack(self.pages, n) + struct.pack(
            f"<{n}i{n}i{n}H",
            *(b for b, _ in items),
            *(first for _, (first, _) in items),
            *(min(count, _MAX_COUNT) for _, (_, count) in items),
        )

    @classmethod
    def unpack(cls, data: bytes | None) -> Template:
        """The template :meth:`pack` made; an empty one for no data, or for data it did
        not make (cut short, written by something else): learned again, and replaced."""
        try:
            pages, n = _HEADER.unpack_from(data or b"")
            values = struct.unpack_from(f"<{n}i{n}i{n}H", data, _HEADER.size)
        except (struct.error, TypeError):
            return cls()
        blocks = {values[i]: (values[n + i], values[2 * n + i]) for i in range(n)}
        return cls(pages, blocks)

    def learned(self, blocks: Mapping[int, int], page: int) -> bool:
        """Count that *page* (a sighting) holds *blocks* (``block -> characters``);
        whether anything changed (nothing does once :data:`LEARN_PAGES` were learned)."""
        if self.pages >= LEARN_PAGES:
            return False
        self.pages += 1
        for block in blocks:
            known = self.blocks.get(block)
            if known is None:
                if len(self.blocks) < MAX_BLOCKS:
                    self.blocks[block] = (page, 1)
            elif known[0] != page:
                self.blocks[block] = (known[0], known[1] + 1)
        return True


def template_blocks(template: Template, blocks: Mapping[int, int], page: int) -> frozenset[int]:
    """The blocks of a page (``block -> characters``; *page*: its sighting) that are its
    site's template: held by another page of the site. None when those make
    :data:`COPY_SHARE` of the page's text or more: the page is a copy, not a template's
    page."""
    known = template.blocks
    found = frozenset(b for b in blocks if b in known and (known[b][0] != page or known[b][1] > 1))
    if not found:
        return found
    total = sum(blocks.values())
    if sum(blocks[b] for b in found) >= COPY_SHARE * total:
        return frozenset()
    return found


def site_of(key: str) -> str | None:
    """The site whose template a page of *key* is read with: a URL's host (and port); a
    ``file://`` URL's folder (a saved site keeps its pages together); ``None`` for a key
    that names no site, whose page has no template."""
    parts = urlsplit(key)
    if parts.scheme == "file":
        folder = parts.path.rpartition("/")[0]
        return f"file://{folder}/" if folder else None
    if parts.scheme and parts.netloc:
        return parts.netloc.lower()
    return None
