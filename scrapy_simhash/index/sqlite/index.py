"""The embedded default: one SQLite file, safe for several processes at once.

:class:`SqliteIndex` is the policy (:class:`~scrapy_simhash.index.policy.Index`) over a
:class:`SqliteStore`. The layout of the file is in
:mod:`~scrapy_simhash.index.sqlite.layout`, opening and creating it in
:mod:`~scrapy_simhash.index.sqlite.file`, reading and checking its parameters and
upgrading it in :mod:`~scrapy_simhash.index.sqlite.meta`, what SQLite's errors mean in
:mod:`~scrapy_simhash.index.sqlite.errors`, maintenance (listing, restoring, removing,
compacting) in :mod:`~scrapy_simhash.index.sqlite.maintenance`, what a check reads in
:mod:`~scrapy_simhash.index.sqlite.reading`.

Check-and-insert is one ``BEGIN IMMEDIATE`` transaction: of two processes seeing
near-duplicate pages at the same moment, the second waits for the first to commit and
then finds its page; a changed page replaces the entries under its key in the same
transaction. WAL mode lets readers go on meanwhile; every transaction is short,
so the write-ahead log is checkpointed as it goes and truncated on close.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...exceptions import ConfigurationError
from ..analysed import Analysed
from ..parameters import IndexParameters, RequestedParameters
from ..policy import Index
from ..rule import Candidate, Decision, sighting
from ..store import Checked, Decide, Page
from ..stored import DropRecord, StoredPage
from ..uri import path_and_options
from ..uri import timeout as timeout_option
from .analyses import add_analyses, remove_analyses
from .anchors import add_anchors, anchor_hits, remove_anchors, seen_holding, sight
from .database import Database
from .file import sqlite_path
from .layout import APPLICATION_ID, SCHEMA_VERSION
from .maintenance import BATCH_PAGES, BATCH_PAUSE, SqliteMaintenance
from .meta import SqliteMeta
from .reading import SqliteReading, near_pages
from .sketches import add_sketches, remove_sketches
from .tables import PAGES_BY_KEY, from_signed64, key_hash, to_signed64

if TYPE_CHECKING:
    from ..journal import Journal

__all__ = [
    "APPLICATION_ID",
    "BATCH_PAGES",
    "BATCH_PAUSE",
    "SCHEMA_VERSION",
    "SqliteIndex",
    "from_signed64",
    "sqlite_path",
    "to_signed64",
]

SYNCHRONOUS_MODES = ("OFF", "NORMAL", "FULL", "EXTRA")
#: Page cache per connection, in KiB. It holds the interior b-tree pages, which every check
#: reads (0.9 MB for all tables at 1M pages); the leaves are read at random, from the OS
#: cache. Not more: while the file is under 1 GB, a commit after SQLite rebalanced b-tree
#: pages out of page-number order scans the whole cache (balance_nonroot swaps page numbers
#: through the never-used page at 1 GB; the end of the transaction then drops cached pages
#: past the end of the file). With 32 MB that scan took ~0.4 ms: the p99 of check-and-insert
#: at 1M pages (docs/performance.md).
CACHE_KIB = 8 * 1024
#: Size of the write-ahead log, in pages, at which a commit checkpoints it (copies it into
#: the database file). SQLite's default, 1000, makes every ~90th check-and-insert at 10M
#: pages with 10 tables wait ~15 ms for a checkpoint: that was the whole p99 latency. Fewer,
#: larger checkpoints cost less in total; the log stays bounded (16 MB with 4 KB pages).
AUTOCHECKPOINT_PAGES = 4000


class SqliteStore:
    """The store of a SQLite index (see :mod:`~scrapy_simhash.index.store`): one file,
    one connection (:class:`~.database.Database`), its parameters read by a
    :class:`~.meta.SqliteMeta`, its audit log and maintenance a
    :class:`~.maintenance.SqliteMaintenance`'s; the arguments are :class:`SqliteIndex`'s."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: str = "NORMAL",
        timeout: float = 30.0,
        read_only: bool = False,
        upgrade: bool = False,
    ) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self.location = str(self.path)
        synchronous = synchronous.upper()
        if synchronous not in SYNCHRONOUS_MODES:
            raise ConfigurationError(
                f"synchronous={synchronous!r} is not one of {', '.join(SYNCHRONOUS_MODES)}"
            )
        self.db = Database(self.path, synchronous=synchronous, timeout=timeout, read_only=read_only)
        self.meta = SqliteMeta(self.db, self._configure, upgrade=upgrade and not read_only)
        self.errors = self.db.errors

    def _configure(self, conn: sqlite3.Connection) -> None:
        """Set up the connection: WAL, checkpoints, cache (see the constants above)."""
        if not self.read_only:
            conn.execute(f"PRAGMA synchronous={self.db.synchronous}")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA wal_autocheckpoint={AUTOCHECKPOINT_PAGES}")
        conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")

    def read_parameters(self) -> IndexParameters | None:
        return self.meta.read_parameters()

    def create(self, parameters: IndexParameters) -> IndexParameters:
        return self.meta.create(parameters)

    def opened(self, parameters: IndexParameters, max_distance: int) -> None:
        assert self.meta.tables is not None  # read with the parameters
        self.tables = self.meta.tables
        self.maintenance = SqliteMaintenance(self.db, self.tables)

    # -- the check -----------------------------------------------------------------------

    def near(self, fingerprint: int, max_distance: int) -> list[Candidate]:
        with self.db.errors("query"):
            return near_pages(self.db.conn, self.tables, fingerprint, max_distance, False)

    def check(self, page: Page, decide: Decide) -> Checked:
        """One ``BEGIN IMMEDIATE`` transaction: the sightings, the candidates, the
        verdict, and the page stored when it matched nothing."""
        probe, conn = page.probe, self.db.conn
        with self.db.errors("add"), self.db.transaction():
            hashes = probe.anchors.hashes if probe.anchors else ()
            hits = anchor_hits(conn, hashes) if hashes else {}
            seen = seen_holding(conn, hits, hashes)
            decision = decide(SqliteReading(conn, self.tables, page.shares, seen))
            if decision.candidate is not None:  # not stored: seen all the same
                sight(conn, *seen, sighting(probe.key))
                return Checked(decision, None)
            replaced = self._remove_stored(conn, probe.key)
            stored = self.tables.add(conn, probe.fingerprint, probe.key, time.time())
            add_anchors(conn, [(stored, probe.anchors)] if probe.anchors else [])
            add_sketches(conn, [(stored, probe.sketch)])
            add_analyses(conn, [(probe.key, page.analysed)])
        return Checked(decision, replaced)

    def read(self, page: Page, decide: Decide) -> Decision:
        with self.db.errors("query"), self.db.transaction(immediate=False):
            return decide(SqliteReading(self.db.conn, self.tables, page.shares))

    def check_exact(
        self, digest: int, key: str, analysed: Analysed | None
    ) -> tuple[str, float] | int:
        signed = to_signed64(digest)
        with self.db.errors("add"), self.db.transaction():
            row = self.db.conn.execute(
                "SELECT key, added_at FROM exact_texts WHERE digest = ?", (signed,)
            ).fetchone()
            if row:
                return row[0], row[1]
            replaced = self._remove_stored(self.db.conn, key)
            self.db.conn.execute(
                "INSERT INTO exact_texts (digest, key, added_at) VALUES (?, ?, ?)",
                (signed, key, time.time()),
            )
            add_analyses(self.db.conn, [(key, analysed)])
        return replaced

    def _remove_stored(self, conn: sqlite3.Connection, key: str) -> int:
        """Inside a transaction of *conn* (a check's, or the crawl journal's recovering a
        dead crawl on its own connection, which has the same triggers): remove what is
        stored under *key* (a page with its table keys, anchors, sketch and analysis
        record; an exact entry); return how many entries."""
        doomed = conn.execute(
            f"SELECT id, fingerprint, key FROM page_view WHERE {PAGES_BY_KEY}",
            (key_hash(key), key),
        ).fetchall()
        self.tables.remove(conn, doomed)
        remove_anchors(conn, [page_id for page_id, _, _ in doomed])
        remove_sketches(conn, [page_id for page_id, _, _ in doomed])
        exact = conn.execute("DELETE FROM exact_texts WHERE key = ?", (key,)).rowcount
        remove_analyses(conn, [key])
        return len(doomed) + exact

    def count(self) -> int:
        with self.db.errors("count"):
            (pages,) = self.db.conn.execute("SELECT count(*) FROM pages").fetchone()
            (exact,) = self.db.conn.execute("SELECT count(*) FROM exact_texts").fetchone()
        return pages + exact

    def journal(self, crawl: str | None = None, **kwargs: Any) -> Journal:
        """The crawl journal, kept in two tables of the file."""
        from .journal import SqliteJournal

        return SqliteJournal(self, crawl, **kwargs)

    def close(self) -> None:
        """Checkpoint and truncate the write-ahead log, then close. Idempotent."""
        self.db.close()

    # -- the audit log and maintenance: SqliteMaintenance's ------------------------------

    def add_drop(self, record: DropRecord) -> None:
        self.maintenance.add_drop(record)

    def drops(self, since: float | None) -> Iterator[DropRecord]:
        return self.maintenance.drops(since)

    def expire_drops(self, older_than: float) -> int:
        return self.maintenance.expire_drops(older_than)

    def pages(self) -> Iterator[StoredPage]:
        return self.maintenance.pages()

    def find(self, key: str) -> list[StoredPage]:
        return self.maintenance.find(key)

    def add_pages(self, pages: Iterable[StoredPage]) -> int:
        return self.maintenance.add_pages(pages)

    def forget(self, key: str) -> int:
        return self.maintenance.forget(key)

    def expire(self, older_than: float) -> int:
        return self.maintenance.expire(older_than)

    def size(self) -> int:
        return self.maintenance.size()

    def compact(self) -> bool:
        return self.maintenance.compact()


class SqliteIndex(Index):
    """A near-duplicate index in one SQLite file.

    *path* is used as given (relative to the working directory unless absolute). A missing
    file is created when *create* is true; an existing one must be a scrapy-simhash index
    with matching parameters. *synchronous* is SQLite's setting: ``NORMAL`` (default)
    survives any crash of the process, ``FULL`` also a power cut, at a cost in commits per
    second. *timeout* is how long a write waits for another process's transaction.
    *read_only* opens an existing index without writing anything (also on a read-only
    file system). An empty or foreign file is never turned into an index. *upgrade*
    adds the anchor and sketch tables to an index written before them (else it is
    refused).
    """

    store: SqliteStore

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_distance: int | None = None,
        blocks: int | None = None,
        features: str | None = None,
        create: bool = True,
        synchronous: str = "NORMAL",
        timeout: float = 30.0,
        read_only: bool = False,
        upgrade: bool = False,
    ) -> None:
        store = SqliteStore(
            path, synchronous=synchronous, timeout=timeout, read_only=read_only, upgrade=upgrade
        )
        self.path, self.read_only = store.path, read_only
        requested = RequestedParameters(max_distance, blocks, features)
        super().__init__(store, requested, create=create and not read_only)

    @classmethod
    def from_uri(cls, uri: str, **parameters) -> SqliteIndex:
        """Open ``sqlite:///path?synchronous=FULL&timeout=60`` (or a plain path)."""
        options = path_and_options(uri, {"synchronous": str, "timeout": timeout_option})[1]
        path = sqlite_path(uri)
        return cls(path, **parameters, **options)

    def vacuum(self) -> None:
        """:meth:`compact` by its SQLite name."""
        self.compact()
