"""The paragraph anchors of an index file (see :mod:`scrapy_simhash.anchors`).

Two tables, written and read inside the transactions of the block tables::

    anchors(anchor, page)   WITHOUT ROWID, primary key (anchor, page): finds the pages
                            holding an anchor; how many there are is the anchor's count
    page_anchors(page PRIMARY KEY, words, cover, hashes)   a page's anchors (4 bytes each,
                            little-endian, signed) and the summary the containment test
                            compares: removing a page removes its rows from ``anchors``

    anchor_seen(anchor PRIMARY KEY, pages)   the sightings of an anchor (the anchor as
                            an unsigned 32-bit rowid: a negative one takes 9 bytes; see
                            scrapy_simhash.index.rule): up to MAX_SIGHTINGS hashes of the
                            keys of pages seen holding it, kept or dropped, packed as
                            ``hashes``; never removed with a page

A check reads at most ``MAX_ANCHOR_PAGES + 1`` rows of each of its anchors: an anchor on
more pages is boilerplate, and how many more does not matter. It records its page's
sightings in the same transaction, before it decides.
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


def sight(conn: sqlite3.Connection, hashes: Iterable[int], page: int) -> dict[int, tuple[int, ...]]:
    """Inside a write transaction: count *page* (a :func:`~..rule.sighting`) among the
    pages seen holding each of *hashes*; ``anchor -> its sightings`` after that."""
    hashes = list(hashes)
    seen = sightings(conn, hashes)
    changed = []
    for anchor in hashes:
        more = sighted(seen.get(anchor, ()), page)
        if more is not None:
            seen[anchor] = tuple(more)
            changed.append((anchor, more))
    write_sightings(conn, changed)
    return seen


def count_stored_as_seen(conn: sqlite3.Connection) -> None:
    """Inside the upgrade's transaction: the pages stored under each anchor as its
    sightings (an index written before sightings counted no page it dropped)."""
    rows = conn.execute(
        "SELECT anchor, key FROM anchors JOIN page_view ON id = page ORDER BY anchor, page"
    )
    seen: dict[int, list[int]] = {}
    for anchor, key in rows:
        more = sighted(seen.get(anchor, ()), sighting(key))
        if more is not None:
            seen[anchor] = more
    write_sightings(conn, seen.items())


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
