"""The parameters of a SQLite index in ``simhash_meta``, read and checked on every open
(schema version, the anchors' and the sketches' formats, the block tables), and the
upgrades in place of a file written before anchors, sketches or sightings.

A part of :class:`~.index.SqliteStore` (see ``Index._open``), as
:mod:`~scrapy_simhash.index.redis.meta` is for a Redis index: what is stored about the
index, not how its pages are checked. The connection it reads through is the
:class:`~.database.Database`'s, configured by the store.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from typing import TYPE_CHECKING

from ...anchors import ANCHORS_FORMAT
from ...exceptions import IndexCorrupt, IndexUnavailable
from ...sketch import SKETCH_FORMAT
from ..parameters import (
    IndexParameters,
    check_anchors_format,
    check_layout_version,
    check_sketch_format,
    stored_parameters,
)
from .file import check_application, check_file, create_file, retry_while_locked
from .layout import (
    PRE_ANCHORS_VERSION,
    PRE_SEEN_VERSION,
    PRE_SKETCH_VERSION,
    SCHEMA_VERSION,
    UPGRADABLE_VERSION,
    missing_layout,
    upgrade_from_v1,
    upgrade_from_v2,
    upgrade_from_v3,
    upgrade_from_v4,
)
from .tables import BlockTables

if TYPE_CHECKING:
    from collections.abc import Callable

    from .database import Database

#: The logger of :mod:`~.index`, whose messages these were before the module was split.
logger = logging.getLogger("scrapy_simhash.index.sqlite.index")


class SqliteMeta:
    """The parameters of the index in *db*: read (and the file upgraded, with *upgrade*)
    on open, after *configure* has set up the connection; the block tables they name
    are :attr:`tables` then."""

    def __init__(
        self,
        db: Database,
        configure: Callable[[sqlite3.Connection], None],
        *,
        upgrade: bool,
    ) -> None:
        self.db = db
        self._configure = configure
        self._upgrade_anchors = upgrade
        self.location = str(db.path)
        self.path = db.path
        self.read_only = db.read_only
        self.tables: BlockTables | None = None

    def read_parameters(self) -> IndexParameters | None:
        if not check_file(self.path):
            return None
        if self.db.conn is not None:  # created by create: connected again below
            self.db.conn.close()
        self.db.conn = self.db.connect()
        try:
            return retry_while_locked(self._configure_and_load, self.db.timeout)
        except sqlite3.OperationalError as e:
            # A cleanly closed index on a read-only file system: SQLite cannot make the
            # -shm file a WAL reader needs. With no -wal file no process has the index
            # open, and none can write it there: read it as immutable.
            if not (
                self.read_only
                and "unable to open" in str(e)
                and not os.path.exists(f"{self.path}-wal")
            ):
                raise
            self.db.conn.close()
            self.db.conn = self.db.connect(immutable=True)
            return self._configure_and_load()

    def _configure_and_load(self) -> IndexParameters:
        check_application(self.db.conn, self.path)
        self._configure(self.db.conn)
        return self._load()

    def create(self, parameters: IndexParameters) -> IndexParameters:
        with self.db.errors("create"):
            create_file(self.path, parameters)
        stored = self.read_parameters()
        assert stored is not None  # the file exists now: ours, or another process's
        return stored

    def _load(self) -> IndexParameters:
        """Upgrade a file written before this layout (when asked to), then read its
        parameters and check its schema version, formats and tables."""
        if self._version() == UPGRADABLE_VERSION:
            self._upgrade()
        if self._version() in (PRE_ANCHORS_VERSION, PRE_SKETCH_VERSION, PRE_SEEN_VERSION):
            self._add_anchor_tables()
        # One read transaction: a consistent view of the layout and parameters.
        with self.db.transaction(immediate=False):
            version = self._version()
            if (
                version == 0
                and self.db.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            ):
                raise IndexUnavailable(
                    f"The index {self.path} has no schema version (an older or unfinished "
                    f"layout; this scrapy-simhash writes version {SCHEMA_VERSION}). It was "
                    "left untouched: open it with the scrapy-simhash that built it, or point "
                    "SIMHASH_INDEX_URI at a new file"
                )
            if version:
                check_layout_version(version, SCHEMA_VERSION, self.location, "schema version")
            missing = missing_layout(self.db.conn)
            if not missing:
                parameters = self._stored_parameters()
                stored = self.db.conn.execute(
                    "SELECT value FROM simhash_meta WHERE name = 'anchors'"
                ).fetchone()
                check_anchors_format(stored and stored[0], self.location)
                stored = self.db.conn.execute(
                    "SELECT value FROM simhash_meta WHERE name = 'sketch'"
                ).fetchone()
                check_sketch_format(stored and stored[0], self.location)
                self.tables = BlockTables(parameters.plan)
                missing = self.tables.missing(self.db.conn)
            self._refuse_missing(missing)
        if not self.read_only:
            self.tables.install(self.db.conn)
            self._check_writable()
        return parameters

    def _stored_parameters(self) -> IndexParameters:
        meta = dict(self.db.conn.execute("SELECT name, value FROM simhash_meta"))
        return stored_parameters(meta, self.location, "simhash_meta")

    def _refuse_missing(self, missing: list[str]) -> None:
        if missing:
            raise IndexCorrupt(
                f"The index {self.path} is damaged: it lacks {', '.join(missing)}. It was "
                "left untouched: restore it from a backup (scrapy-simhash export/import) "
                "or use another file"
            )

    def _version(self) -> int:
        return self.db.conn.execute("PRAGMA user_version").fetchone()[0]

    def _upgrade(self) -> None:
        """Upgrade a version-1 file in place, in one transaction (see upgrade_from_v1).
        Read-only, it is refused with the command that upgrades it."""
        if self.read_only:
            raise IndexUnavailable(
                f"The index {self.path} has schema version {UPGRADABLE_VERSION}, which this "
                f"scrapy-simhash upgrades in place when it opens the file for writing; it was "
                f"left untouched. Upgrade it with: scrapy-simhash vacuum --index {self.path}"
            )
        started = time.monotonic()
        with self.db.transaction():
            if self._version() != UPGRADABLE_VERSION:
                return  # upgraded meanwhile by another process
            found = {row[0] for row in self.db.conn.execute("SELECT name FROM sqlite_master")}
            needed = ("simhash_meta", "pages", "block_keys")
            self._refuse_missing([f"the table {t}" for t in needed if t not in found])
            upgrade_from_v1(self.db.conn, self._stored_parameters().plan, str(self.path))
        logger.warning(
            "Upgraded the index %s in %.1f s; `scrapy-simhash vacuum` gives the space its "
            "old tables took back to the disk",
            self.path, time.monotonic() - started,
        )  # fmt: skip

    def _add_anchor_tables(self) -> None:
        """Upgrade a version-2 file (no anchors), version-3 file (no sketches) or
        version-4 file (no analysis records) when asked to, else refuse it naming the
        command that does."""
        version = self._version()
        if not self._upgrade_anchors:
            missing = {
                PRE_ANCHORS_VERSION: "paragraph anchors",
                PRE_SKETCH_VERSION: "text sketches",
            }.get(
                version,
                "counting boilerplate in pages seen, and before records of how each page "
                "was analysed",
            )
            kept = (
                "its pages count as seen; diagnostics say what they assume of how they were read"
                if version == PRE_SEEN_VERSION
                else "a page that looks like one of them is kept too, as the share of its "
                "text they hold is unknown"
            )
            raise IndexUnavailable(
                f"The index {self.path} has schema version {version}, written before "
                f"{missing} (this scrapy-simhash writes version {SCHEMA_VERSION}); it was "
                f"left untouched. Upgrade it (its pages are kept; {kept}) with: "
                f"scrapy-simhash upgrade --index {self.path}"
            )
        with self.db.transaction():
            if self._version() == PRE_ANCHORS_VERSION:
                upgrade_from_v2(self.db.conn)
            elif self._version() == PRE_SKETCH_VERSION:
                upgrade_from_v3(self.db.conn)
            elif self._version() == PRE_SEEN_VERSION:
                upgrade_from_v4(self.db.conn)
        logger.warning(
            "Upgraded the index %s to schema version %d (paragraph anchors %s, sketches %s)",
            self.path, SCHEMA_VERSION, ANCHORS_FORMAT, SKETCH_FORMAT,
        )  # fmt: skip

    def _check_writable(self) -> None:
        """Fail now, not at the first page of a crawl, if the file cannot be written: a
        write that is rolled back (it never reaches the disk)."""
        self.db.conn.execute("BEGIN IMMEDIATE")
        try:
            self.db.conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        finally:
            self.db.conn.execute("ROLLBACK")
