"""The paragraph anchors of an index file (see :mod:`scrapy_simhash.anchors`).

Two tables, written and read inside the transactions of the block tables::

    anchors(anchor, page)   WITHOUT ROWID, primary key (anchor, page): finds the pages
                            holding an anchor; how many there are is the anchor's count
    page_anchors(page PRIMARY KEY, words, cover, hashes)   a page's anchors (4 bytes each,
                            little-endian, signed) and the summary the containment test
                            compares: removing a page removes its rows from ``anchors``

    anchor_seen(anchor PRIMARY KEY, pages)   the sightings of an anchor besides the pages
                            stored under it (see scrapy_simhash.index.rule): the key hashes
                            of pages seen holding it and not stored (dropped, unchanged),
                            packed as ``hashes``; the anchor as an unsigned 32-bit rowid
                            (a negative one takes 9 bytes)

A check reads at most ``MAX_ANCHOR_PAGES + 1`` rows of each of its anchors: an anchor on
more pages is boilerplate, and how many more does not matter. The pages seen holding an
anchor are those rows' pages and its ``anchor_seen`` row, at most ``MAX_SIGHTINGS``; a
check that does not store its page adds it there, in the same transaction. A stored page
is counted by its rows alone: most anchors are on one page, and writing a sighting for
each would cost every new page a write per anchor (+120 bytes a page, +50% CPU a
check). So a page removed (``forget``, ``expire``, replaced) stops counting here, where
the other backends keep it seen.
"""

from __future__ import annotations

import sqlite3
from array import array
from collections.abc import Iterable

from ...anchors import MAX_ANCHOR_PAGES, Anchors
from ..rule import sighted, sighting

#: The tables and columns, checked at every open (see layout.LAYOUT).
ANCHOR_LAYOUT: dict[str, tuple[str, ...]] = {
    "anchors": ("anchor", "page"),
    "page_anchors": ("page", "words", "cover", "hashes"),
    "anchor_seen": ("anchor", "pages"),
}


def create_anchor_tables(conn: sqlite3.Connection) -> None:
    conn.execute(
        "CREATE TABLE anchors (anchor INTEGER NOT NULL, page INTEGER NOT NULL, "
        "PRIMARY KEY (anchor, page)) WITHOUT ROWID"
    )
    conn.execute(
        "CREATE TABLE page_anchors (page INTEGER PRIMARY KEY, words INTEGER NOT NULL, "
        "cover INTEGER NOT NULL, hashes BLOB NOT NULL)"
    )


def create_seen_table(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE anchor_seen (anchor INTEGER PRIMARY KEY, pages BLOB NOT NULL)")


_U32 = 0xFFFF_FFFF


def _signed(rowid: int) -> int:
    return rowid - (1 << 32) if rowid >> 31 else rowid


def sightings(conn: sqlite3.Connection, hashes: Iterable[int]) -> dict[int, tuple[int, ...]]:
    """``anchor -> its sightings`` of those of *hashes* that have any."""
    hashes = [anchor & _U32 for anchor in hashes]
    if not hashes:
        return {}
    rows = conn.execute(
        f"SELECT anchor, pages FROM anchor_seen WHERE anchor IN ({','.join('?' * len(hashes))})",
        hashes,
    )
    return {_signed(anchor): unpack(blob) for anchor, blob in rows}


def write_sightings(conn: sqlite3.Connection, rows: Iterable[tuple[int, Iterable[int]]]) -> None:
    """Store ``(anchor, its sightings)`` rows, replacing what the anchors had."""
    conn.executemany(
        "INSERT OR REPLACE INTO anchor_seen (anchor, pages) VALUES (?, ?)",
        ((anchor & _U32, pack(seen)) for anchor, seen in rows),
    )


def seen_holding(
    conn: sqlite3.Connection, hits: dict[int, list[int]], hashes: Iterable[int]
) -> tuple[dict[int, list[int]], dict[int, tuple[int, ...]]]:
    """The pages seen holding each of *hashes*: ``(anchor -> sightings, anchor -> its
    anchor_seen row)``, the sightings being the keys of the pages *hits* (of
    :func:`anchor_hits`) lists, then the row's."""
    hashes = list(hashes)
    extra = sightings(conn, hashes)
    ids = sorted({page for pages in hits.values() for page in pages})
    keys: dict[int, str] = {}
    if ids:
        marks = ",".join("?" * len(ids))
        keys = dict(conn.execute(f"SELECT id, key FROM page_view WHERE id IN ({marks})", ids))
    seen: dict[int, list[int]] = {}
    for anchor in hashes:
        listed: list[int] = []
        for page in [sighting(keys[i]) for i in hits.get(anchor, ()) if i in keys]:
            listed = sighted(listed, page) or listed
        for page in extra.get(anchor, ()):
            listed = sighted(listed, page) or listed
        seen[anchor] = listed
    return seen, extra


def sight(
    conn: sqlite3.Connection,
    seen: dict[int, list[int]],
    extra: dict[int, tuple[int, ...]],
    page: int,
) -> None:
    """Inside a write transaction: count *page* (a :func:`~..rule.sighting`), not stored,
    among the pages seen holding the anchors of *seen* (of :func:`seen_holding`)."""
    write_sightings(
        conn,
        [
            (anchor, [*extra.get(anchor, ()), page])
            for anchor, listed in seen.items()
            if sighted(listed, page) is not None
        ],
    )


def pack(hashes: Iterable[int]) -> bytes:
    packed = array("i", hashes)
    if array("i", [1]).tobytes() != b"\x01\x00\x00\x00":
        packed.byteswap()
    return packed.tobytes()


def unpack(blob: bytes) -> tuple[int, ...]:
    values = array("i")
    values.frombytes(blob)
    if array("i", [1]).tobytes() != b"\x01\x00\x00\x00":
        values.byteswap()
    return tuple(values)


def add_anchors(conn: sqlite3.Connection, rows: list[tuple[int, Anchors]]) -> None:
    """Store the anchors of ``(page id, anchors)`` pages (none stored for empty ones)."""
    rows = [(page, anchors) for page, anchors in rows if anchors]
    if not rows:
        return
    conn.executemany(
        "INSERT INTO page_anchors (page, words, cover, hashes) VALUES (?, ?, ?, ?)",
        [(page, a.words, a.cover, pack(a.hashes)) for page, a in rows],
    )
    conn.executemany(
        "INSERT OR IGNORE INTO anchors (anchor, page) VALUES (?, ?)",
        [(anchor, page) for page, a in rows for anchor in a.hashes],
    )


def remove_anchors(conn: sqlite3.Connection, pages: list[int]) -> None:
    """Remove the anchors of the pages with these ids."""
    if not pages:
        return
    found = []
    for start in range(0, len(pages), 500):
        chunk = pages[start : start + 500]
        found += conn.execute(
            f"SELECT page, hashes FROM page_anchors WHERE page IN ({','.join('?' * len(chunk))})",
            chunk,
        ).fetchall()
    if not found:
        return
    conn.executemany(
        "DELETE FROM anchors WHERE anchor = ? AND page = ?",
        [(anchor, page) for page, blob in found for anchor in unpack(blob)],
    )
    conn.executemany("DELETE FROM page_anchors WHERE page = ?", [(page,) for page, _ in found])


def anchor_hits(conn: sqlite3.Connection, hashes: tuple[int, ...]) -> dict[int, list[int]]:
    """For each of *hashes* stored: the ids of up to ``MAX_ANCHOR_PAGES + 1`` pages
    holding it, oldest first. One statement, each part a range of the primary key."""
    limit = MAX_ANCHOR_PAGES + 1
    probe_sql = " UNION ALL ".join(
        f"SELECT * FROM (SELECT anchor, page FROM anchors WHERE anchor = ? ORDER BY page "
        f"LIMIT {limit})"
        for _ in hashes
    )
    hits: dict[int, list[int]] = {}
    for anchor, page in conn.execute(probe_sql, hashes):
        hits.setdefault(anchor, []).append(page)
    return hits


def page_summaries(
    conn: sqlite3.Connection, pages: Iterable[int]
) -> dict[int, tuple[tuple[int, int, int], str, int, float]]:
    """``page id -> ((anchors, words, cover), key, signed fingerprint, added_at)`` of the
    pages with these ids."""
    pages = list(pages)
    rows = conn.execute(
        f"SELECT page, words, cover, length(hashes), key, fingerprint, added_at "
        f"FROM page_anchors JOIN page_view ON id = page "
        f"WHERE page IN ({','.join('?' * len(pages))})",
        pages,
    )
    return {
        page: ((size // 4, words, cover), key, fingerprint, added_at)
        for page, words, cover, size, key, fingerprint, added_at in rows
    }


def stored_anchors(conn: sqlite3.Connection, pages: list[int]) -> dict[int, Anchors]:
    """``page id -> anchors`` of the pages with these ids that have some."""
    found: dict[int, Anchors] = {}
    for start in range(0, len(pages), 500):
        chunk = pages[start : start + 500]
        for page, words, cover, blob in conn.execute(
            f"SELECT page, words, cover, hashes FROM page_anchors "
            f"WHERE page IN ({','.join('?' * len(chunk))})",
            chunk,
        ):
            found[page] = Anchors(unpack(blob), (), words, cover)
    return found
