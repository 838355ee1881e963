"""How each page of an index file was analysed (see :mod:`scrapy_simhash.index.analysed`)::

    analysis_hows(id PRIMARY KEY, how UNIQUE)          each distinct (extractor, version,
                                                       fields) once
    page_analyses(key_hash PRIMARY KEY, how, text_hash)  WITHOUT ROWID: a page's how and
                                                       the hash of its text (about 20 bytes)

Rows are found by a 64-bit hash of the page's key (``page_keys`` holds a 32-bit one, too
short to be a key of its own), so an exact entry has one too. Written inside the check's
transaction; removing a key's entries removes its row.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable

from ..analysed import Analysed, from_how
from .tables import from_signed64, to_signed64

#: The tables and their columns, checked at every open (see layout.LAYOUT).
ANALYSIS_LAYOUT: dict[str, tuple[str, ...]] = {
    "analysis_hows": ("id", "how"),
    "page_analyses": ("key_hash", "how", "text_hash"),
}


def key_hash(key: str) -> int:
    """The signed 64-bit hash ``page_analyses`` finds *key*'s row by."""
    digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


def create_analysis_tables(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE analysis_hows (id INTEGER PRIMARY KEY, how TEXT NOT NULL UNIQUE)")
    conn.execute(
        "CREATE TABLE page_analyses (key_hash INTEGER PRIMARY KEY, how INTEGER NOT NULL, "
        "text_hash INTEGER NOT NULL) WITHOUT ROWID"
    )


def add_analyses(conn: sqlite3.Connection, rows: Iterable[tuple[str, Analysed | None]]) -> None:
    """Store how the pages of ``(key, record)`` were analysed (nothing for ``None``)."""
    values = []
    hows: dict[str, int] = {}
    for key, analysed in rows:
        if analysed is None:
            continue
        how = analysed.how
        if how not in hows:
            conn.execute("INSERT OR IGNORE INTO analysis_hows (how) VALUES (?)", (how,))
            (hows[how],) = conn.execute(
                "SELECT id FROM analysis_hows WHERE how = ?", (how,)
            ).fetchone()
        values.append((key_hash(key), hows[how], to_signed64(analysed.text_hash)))
    conn.executemany(
        "INSERT OR REPLACE INTO page_analyses (key_hash, how, text_hash) VALUES (?, ?, ?)",
        values,
    )


def remove_analyses(conn: sqlite3.Connection, keys: Iterable[str]) -> None:
    conn.executemany(
        "DELETE FROM page_analyses WHERE key_hash = ?", [(key_hash(k),) for k in set(keys)]
    )


def stored_analyses(conn: sqlite3.Connection, keys: Iterable[str]) -> dict[str, Analysed]:
    """``key -> record`` of the keys among *keys* that have one."""
    by_hash = {key_hash(key): key for key in keys}
    hashes = list(by_hash)
    found: dict[str, Analysed] = {}
    for start in range(0, len(hashes), 500):
        chunk = hashes[start : start + 500]
        for hashed, how, text_hash in conn.execute(
            "SELECT key_hash, h.how, text_hash FROM page_analyses a "
            "JOIN analysis_hows h ON h.id = a.how "
            f"WHERE key_hash IN ({','.join('?' * len(chunk))})",
            chunk,
        ):
            found[by_hash[hashed]] = from_how(how, from_signed64(text_hash))
    return found
