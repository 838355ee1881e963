"""The text sketches of an index file (see :mod:`scrapy_simhash.sketch`)::

    page_sketches(page PRIMARY KEY, sketch)   a page's sketch as Sketch.pack makes it
                                              (5 bytes and 2 a sample, at most 133)

Written and read inside the transactions of the block tables; removing a page removes
its row.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from ...sketch import SKETCH_FORMAT, Sketch

#: The table and its columns, checked at every open (see layout.LAYOUT).
SKETCH_LAYOUT: dict[str, tuple[str, ...]] = {"page_sketches": ("page", "sketch")}


def create_sketch_table(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE page_sketches (page INTEGER PRIMARY KEY, sketch BLOB NOT NULL)")
    conn.execute(
        "INSERT OR REPLACE INTO simhash_meta (name, value) VALUES ('sketch', ?)",
        (SKETCH_FORMAT,),
    )


def add_sketches(conn: sqlite3.Connection, rows: Iterable[tuple[int, Sketch | None]]) -> None:
    """Store the sketches of ``(page id, sketch)`` pages (none for pages without one)."""
    conn.executemany(
        "INSERT OR REPLACE INTO page_sketches (page, sketch) VALUES (?, ?)",
        [(page, sketch.pack()) for page, sketch in rows if sketch],
    )


def remove_sketches(conn: sqlite3.Connection, pages: list[int]) -> None:
    conn.executemany("DELETE FROM page_sketches WHERE page = ?", [(p,) for p in pages])


def stored_sketches(conn: sqlite3.Connection, pages: Iterable[int]) -> dict[int, Sketch]:
    """``page id -> sketch`` of the pages with these ids that have one."""
    pages = list(pages)
    found: dict[int, Sketch] = {}
    for start in range(0, len(pages), 500):
        chunk = pages[start : start + 500]
        for page, blob in conn.execute(
            f"SELECT page, sketch FROM page_sketches WHERE page IN ({','.join('?' * len(chunk))})",
            chunk,
        ):
            sketch = Sketch.unpack(blob)
            if sketch is not None:
                found[page] = sketch
    return found
