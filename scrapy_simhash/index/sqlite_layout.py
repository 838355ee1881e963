"""The layout of an index file: its tables (created here, checked at every open), the
marks that tell our files from others, signed storage of 64-bit values, and how the file
is named to SQLite.

Layout (created with sqlite-utils)::

    simhash_meta(name PRIMARY KEY, value)           index parameters, created_at
    pages(id PRIMARY KEY, fingerprint, key, added_at)     one row per kept page
    block_keys(tbl, bkey, page_id, fingerprint)     one row per page and table, WITHOUT ROWID,
                                                    primary key (tbl, bkey, page_id)
    exact_texts(digest PRIMARY KEY, key, added_at)  short texts, matched exactly
    drops(id PRIMARY KEY, key, kept_key, distance, exact, at)   the audit log of drops;
                                                    exact: 1 matched exactly, +2 unchanged

Fingerprints and keys are stored as signed 64-bit integers (SQLite has no unsigned type).
``block_keys`` repeats the fingerprint so that a probe is answered from the primary key
alone, without a lookup into ``pages`` for every candidate. ``pages.key`` and
``exact_texts.key`` are indexed: a check finds the entry stored under its key.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import sqlite_utils

from .base import IndexParameters

#: Marks our files (``PRAGMA application_id``), so another application's database is
#: recognised and left alone. The bytes spell "SmHs".
APPLICATION_ID = 0x536D4873
#: ``PRAGMA user_version``: bumped with every change of the layout above.
SCHEMA_VERSION = 1
SQLITE_HEADER = b"SQLite format 3\x00"
#: The bit of ``drops.exact`` that marks a page dropped as unchanged since the last crawl.
DROP_UNCHANGED = 2

_SIGN = 1 << 63
MASK64 = (1 << 64) - 1


def to_signed64(value: int) -> int:
    """Store an unsigned 64-bit value in SQLite's signed INTEGER."""
    return value - (1 << 64) if value >= _SIGN else value


def from_signed64(value: int) -> int:
    return value + (1 << 64) if value < 0 else value


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


def create_schema(conn: sqlite3.Connection, parameters: IndexParameters) -> None:
    """Create the tables of an empty database and mark it as ours."""
    db = sqlite_utils.Database(conn)
    db["simhash_meta"].create({"name": str, "value": str}, pk="name")
    db["simhash_meta"].insert_all(
        [
            {"name": "bits", "value": str(parameters.plan.bits)},
            {"name": "max_distance", "value": str(parameters.max_distance)},
            {"name": "blocks", "value": str(parameters.blocks)},
            {"name": "features", "value": parameters.features},
            {"name": "created_at", "value": str(time.time())},
        ]
    )
    db["pages"].create(
        {"id": int, "fingerprint": int, "key": str, "added_at": float},
        pk="id",
        not_null={"fingerprint", "key", "added_at"},
    )
    db["pages"].create_index(["key"])
    # sqlite-utils has no WITHOUT ROWID tables: this one is 40% smaller and its probes
    # read one b-tree instead of two.
    db.execute(
        "CREATE TABLE block_keys (tbl INTEGER NOT NULL, bkey INTEGER NOT NULL, "
        "page_id INTEGER NOT NULL, fingerprint INTEGER NOT NULL, "
        "PRIMARY KEY (tbl, bkey, page_id)) WITHOUT ROWID"
    )
    db["exact_texts"].create(
        {"digest": int, "key": str, "added_at": float},
        pk="digest",
        not_null={"key", "added_at"},
    )
    db["exact_texts"].create_index(["key"])
    db["drops"].create(
        {
            "id": int,
            "key": str,
            "kept_key": str,
            "distance": int,
            "exact": int,
            "at": float,
        },
        pk="id",
        not_null={"key", "kept_key", "distance", "exact", "at"},
    )
    db["drops"].create_index(["at"])
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
