"""Pages carrying one note, for the tests that boilerplate is counted in pages seen."""

from __future__ import annotations

import pytest

from scrapy_simhash import open_index
from scrapy_simhash.analysis.anchors import text_anchors
from scrapy_simhash.anchors import MAX_ANCHOR_PAGES, Anchors
from scrapy_simhash.exceptions import IndexUnavailable


def anchors_of(*paragraphs: int) -> Anchors:
    """The anchors of a text of distinct paragraphs long enough to be anchors."""
    return text_anchors("\n".join(" ".join(f"w{n}x{i}" for i in range(24)) for n in paragraphs))


def note_pages():
    """``MAX_ANCHOR_PAGES`` pages (``(fingerprint, key, anchors)``) each carrying a note
    and as much text of its own (none contained in another), then a page of the note
    alone, then another: once those pages are counted as seen, the first is contained in
    one of them (the sixth page seen), and the note is boilerplate for the second (the
    seventh)."""
    pages = [
        (
            0x5555 << (10 * n),
            f"https://note.example/{n}",
            anchors_of(100, 101, 102, *range(10 * n, 10 * n + 3)),
        )
        for n in range(MAX_ANCHOR_PAGES)
    ]
    note = (0xFFFF_FFFF << 32, "https://note.example/note", anchors_of(100, 101, 102))
    again = (0xFFFF_FFFF, "https://note.example/again", anchors_of(100, 101, 102))
    return pages, note, again


def store_pages(uri: str, pages) -> None:
    with open_index(uri) as index:
        for fingerprint, key, anchors in pages:
            assert index.check_and_add(fingerprint, key, anchors).status == "new"


def assert_upgrade_counts_them(uri: str, note, again) -> None:
    """The index at *uri* (its sightings removed, its version set back) is refused, then
    upgraded: its stored pages count as seen."""
    with pytest.raises(IndexUnavailable, match="counting boilerplate in pages seen"):
        open_index(uri)
    with open_index(uri, upgrade=True) as index:
        assert index.check_and_add(*note).status == "duplicate"
        assert index.check_and_add(*again).status == "new"
