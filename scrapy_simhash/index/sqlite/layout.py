"""The layout of an index file: its tables (created here, checked at every open), the
marks that tell our files from others, signed storage of 64-bit values, and how the file
is named to SQLite.

Layout, schema version 2::

    simhash_meta(name PRIMARY KEY, value)           index parameters, created_at
    sites(id PRIMARY KEY, prefix UNIQUE)            the sites of the keys: https://host/
    pages(id PRIMARY KEY, fingerprint, site, path, added_at)  one row per kept page, its key
                                                    as site + path; fingerprint indexed (it
                                                    is also the last block table)
    page_view(id, fingerprint, key, added_at)       pages with their keys put together
    page_keys(key_hash, page_id)                    WITHOUT ROWID: finds a page by its key
    block_0 ... block_{tables - 2}(pfp PRIMARY KEY) WITHOUT ROWID: one per block table, the
                                                    fingerprint permuted (see sqlite_tables)
    exact_texts(digest PRIMARY KEY, key, added_at)  short texts, matched exactly
    drops(id PRIMARY KEY, key, kept_key, distance, exact, at)   the audit log of drops;
                                                    exact: 1 matched exactly, +2 unchanged,
                                                    + 8 x the anchors shared when contained
    anchors, page_anchors                           paragraph anchors (see anchors.py beside it)

Version 5 added ``anchor_seen`` (sightings: boilerplate is counted in pages seen, kept or
dropped, see anchors.py beside it), and ``analysis_hows`` and ``page_analyses`` (see
analyses.py beside it): how each page was analysed. :func:`upgrade_from_v4` adds them,
explicitly (``scrapy-simhash upgrade``); the pages stored under each anchor count as seen,
and keep no record of how they were analysed (diagnostics say what they assume of them).

Version 4 added ``page_sketches`` (see sketches.py beside it), ``drops.share`` and
``simhash_meta.sketch`` (the sketches' format): :func:`upgrade_from_v3` adds them,
explicitly (``scrapy-simhash upgrade``); its pages keep no sketch, and a page that looks
like one of them is kept, as no share of its text can be confirmed.

Version 3 added the anchor tables and ``simhash_meta.anchors`` (the anchors' format):
:func:`upgrade_from_v2` adds them to a version-2 file, explicitly (``scrapy-simhash
upgrade``); its pages keep no anchors and are found by distance only.

Fingerprints and keys are stored as signed 64-bit integers (SQLite has no unsigned type).
``exact_texts.key`` is indexed: a check finds the entry stored under its key.

Version 1 stored every table in one ``block_keys(tbl, bkey, page_id, fingerprint)`` and
indexed ``pages.key``: 360-410 bytes a page with 10 tables. :func:`upgrade_from_v1` turns
such a file into version 2 in one transaction.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from pathlib import Path

from ...anchors import ANCHORS_FORMAT
from ..base import IndexParameters
from ..blocks import BlockPlan
from .analyses import ANALYSIS_LAYOUT, create_analysis_tables
from .anchors import ANCHOR_LAYOUT, create_anchor_tables, create_seen_table
from .sketches import SKETCH_LAYOUT, create_sketch_table
from .tables import PAGE_VIEW, PAGES_TABLE, BlockTables, split_key

#: Marks our files (``PRAGMA application_id``), so another application's database is
#: recognised and left alone. The bytes spell "SmHs".
APPLICATION_ID = 0x536D4873
#: ``PRAGMA user_version``: bumped with every change of the layout above.
SCHEMA_VERSION = 5
#: The oldest version opened: it is upgraded in place (see :func:`upgrade_from_v1`).
UPGRADABLE_VERSION = 1
#: The version before the anchors: upgraded by ``scrapy-simhash upgrade`` only.
PRE_ANCHORS_VERSION = 2
#: The version before the sketches: upgraded by ``scrapy-simhash upgrade`` only.
PRE_SKETCH_VERSION = 3
#: The version before sightings and analysis records: upgraded by ``scrapy-simhash
#: upgrade`` only.
PRE_SEEN_VERSION = 4
SQLITE_HEADER = b"SQLite format 3\x00"
#: The upgrade logs under the name of the backend that runs it, where its messages are.
logger = logging.getLogger("scrapy_simhash.index.sqlite")
#: The bit of ``drops.exact`` that marks a page dropped as unchanged since the last crawl.
DROP_UNCHANGED = 2
#: ``drops.exact`` holds the number of anchors shared by a page dropped as contained,
#: times this (the bits above the kinds: the column and the file's layout stay).
DROP_SHARED = 8

#: Every table of the layout and the columns the index reads or writes. Checked at every
#: open (one cheap query per table), so a damaged file is refused there instead of failing
#: on every page of a crawl.
LAYOUT: dict[str, tuple[str, ...]] = {
    "simhash_meta": ("name", "value"),
    "sites": ("id", "prefix"),
    "pages": ("id", "fingerprint", "site", "path", "added_at"),
    "page_view": ("id", "fingerprint", "key", "added_at"),
    "page_keys": ("key_hash", "page_id"),
    "exact_texts": ("digest", "key", "added_at"),
    "drops": ("id", "key", "kept_key", "distance", "exact", "at", "share"),
    **ANCHOR_LAYOUT,
    **SKETCH_LAYOUT,
    **ANALYSIS_LAYOUT,
}


def missing_layout(conn: sqlite3.Connection) -> list[str]:
    """The tables and columns of :data:`LAYOUT` that the database lacks. The view
    ``page_view`` is checked only once its tables are there (SQLite cannot read a view
    whose table is missing)."""
    missing: list[str] = []
    for table, columns in LAYOUT.items():
        if table == "page_view" and missing:
            break
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
    # Imported here, once per new index: a crawl that opens an existing one never needs it
    # (sqlite-utils brings click and more: objects every full garbage collection walks).
    import sqlite_utils

    db = sqlite_utils.Database(conn)
    db["simhash_meta"].create({"name": str, "value": str}, pk="name")
    db["simhash_meta"].insert_all(
        [
            {"name": "bits", "value": str(parameters.plan.bits)},
            {"name": "max_distance", "value": str(parameters.max_distance)},
            {"name": "blocks", "value": str(parameters.blocks)},
            {"name": "features", "value": parameters.features},
            {"name": "created_at", "value": str(time.time())},
            {"name": "anchors", "value": ANCHORS_FORMAT},
        ]
    )
    _create_v2_tables(conn, parameters.plan)
    create_anchor_tables(conn)
    create_seen_table(conn)
    create_sketch_table(conn)
    create_analysis_tables(conn)
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
            "share": float,
        },
        pk="id",
        not_null={"key", "kept_key", "distance", "exact", "at"},
    )
    db["drops"].create_index(["at"])
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _create_v2_tables(conn: sqlite3.Connection, plan: BlockPlan) -> None:
    conn.execute("CREATE TABLE sites (id INTEGER PRIMARY KEY, prefix TEXT NOT NULL UNIQUE)")
    conn.execute(PAGES_TABLE)
    conn.execute(PAGE_VIEW)
    BlockTables(plan).create(conn)


def upgrade_from_v1(conn: sqlite3.Connection, plan: BlockPlan, name: str) -> None:
    """Turn a schema-version-1 file into version 2, inside the caller's transaction: the
    new tables are filled from ``pages``, then ``block_keys`` and the index on the key
    text are dropped. Interrupted, the transaction is rolled back and the file is still
    a complete version-1 index. The space of the dropped tables is reused by new pages;
    ``scrapy-simhash vacuum`` gives it back to the disk."""
    (pages,) = conn.execute("SELECT count(*) FROM pages").fetchone()
    logger.warning(
        "Upgrading the index %s from schema version %d to %d (%d pages, one transaction: "
        "an interrupted upgrade leaves it as it was)",
        name, UPGRADABLE_VERSION, SCHEMA_VERSION, pages,
    )  # fmt: skip
    conn.execute("DROP TABLE block_keys")
    conn.execute("ALTER TABLE pages RENAME TO pages_v1")
    _create_v2_tables(conn, plan)
    conn.create_function("simhash_site", 1, lambda key: split_key(key)[0], deterministic=True)
    conn.execute("INSERT INTO sites (prefix) SELECT DISTINCT simhash_site(key) FROM pages_v1")
    conn.execute(
        "INSERT INTO pages (id, fingerprint, site, path, added_at) "
        "SELECT pages_v1.id, fingerprint, sites.id, substr(key, length(prefix) + 1), added_at "
        "FROM pages_v1 JOIN sites ON prefix = simhash_site(key) ORDER BY pages_v1.id"
    )
    conn.execute("DROP TABLE pages_v1")
    BlockTables(plan).fill(conn)
    upgrade_from_v2(conn)


def upgrade_from_v2(conn: sqlite3.Connection) -> None:
    """Add the anchor tables to a version-2 file, inside the caller's transaction: its
    pages have no anchors (they are found by distance only); pages stored from now on
    have theirs."""
    create_anchor_tables(conn)
    conn.execute(
        "INSERT OR REPLACE INTO simhash_meta (name, value) VALUES ('anchors', ?)",
        (ANCHORS_FORMAT,),
    )
    upgrade_from_v3(conn)


def upgrade_from_v3(conn: sqlite3.Connection) -> None:
    """Add the sketch table and ``drops.share`` to a version-3 file, inside the caller's
    transaction: its pages have no sketch; pages stored from now on have theirs."""
    create_sketch_table(conn)
    conn.execute("ALTER TABLE drops ADD COLUMN share REAL")
    upgrade_from_v4(conn)


def upgrade_from_v4(conn: sqlite3.Connection) -> None:
    """Add ``anchor_seen`` and the analysis tables to a version-4 file, inside the
    caller's transaction: the pages stored under each anchor count as seen by their rows
    (those it dropped were never counted); its pages have no record of how they were
    analysed, pages stored from now on have one."""
    create_seen_table(conn)
    create_analysis_tables(conn)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
