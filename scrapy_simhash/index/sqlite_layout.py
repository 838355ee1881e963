"""What an index file must hold, checked at every open, and how its file is named to SQLite."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

#: Every table of the layout and the columns the index reads or writes. Checked at every
#: open (one cheap query per table), so a damaged file is refused there instead of failing
#: on every page of a crawl.
LAYOUT: dict[str, tuple[str, ...]] = {
    "simhash_meta": ("name", "value"),
    "pages": ("id", "fingerprint", "key", "added_at"),
    "block_keys": ("tbl", "bkey", "page_id", "fingerprint"),
    "exact_texts": ("digest", "key", "added_at"),
    "drops": ("id", "key", "kept_key", "distance", "exact", "at"),
}


def missing_layout(conn: sqlite3.Connection) -> list[str]:
    """The tables and columns of :data:`LAYOUT` that the database lacks."""
    missing = []
    for table, columns in LAYOUT.items():
        found = {row[0] for row in conn.execute("SELECT name FROM pragma_table_info(?)", (table,))}
        if not found:
            missing.append(f"the table {table}")
        else:
            missing += [f"the column {table}.{c}" for c in columns if c not in found]
    return missing


def sqlite_file_uri(path: str | os.PathLike[str], mode: str, immutable: bool = False) -> str:
    """A ``file:`` URI for SQLite naming exactly *path*: every byte of the path is
    percent-encoded as needed (``?``, ``#``, ``%`` are part of the name), and *mode* is
    ``ro``, ``rw`` (both never create a file) or ``rwc``."""
    uri = f"{Path(os.path.abspath(path)).as_uri()}?mode={mode}"
    return uri + "&immutable=1" if immutable else uri
