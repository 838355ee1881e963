"""The embedded default: one SQLite file, safe for several processes at once.

The layout of the file is in :mod:`~scrapy_simhash.index.sqlite.layout`, opening and
creating it in :mod:`~scrapy_simhash.index.sqlite.file`, reading and checking its
parameters and upgrading it in :mod:`~scrapy_simhash.index.sqlite.meta`, what SQLite's
errors mean in :mod:`~scrapy_simhash.index.sqlite.errors`, maintenance (listing,
restoring, removing, compacting) in :mod:`~scrapy_simhash.index.sqlite.maintenance`.

Check-and-insert is one ``BEGIN IMMEDIATE`` transaction: of two processes seeing
near-duplicate pages at the same moment, the second waits for the first to commit and
then finds its page; a changed page replaces the entries under its key in the same
transaction. WAL mode lets readers go on meanwhile; every transaction is short,
so the write-ahead log is checkpointed as it goes and truncated on close.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...anchors import Anchors
from ...exceptions import ConfigurationError, SimhashIndexError
from ...sketch import Sketch
from ..analysed import Analysed
from ..base import (
    IndexBase,
    IndexParameters,
    Match,
    Outcome,
    RequestedParameters,
    as_match,
    nearest,
    probe_of,
    storable_key,
    stored_outcome,
)
from ..rule import Candidate, Probe, anchor_candidates, boilerplate, by_anchors, sighting
from ..uri import path_and_options
from ..uri import timeout as timeout_option
from .analyses import add_analyses, remove_analyses
from .anchors import (
    add_anchors,
    anchor_hits,
    page_summaries,
    remove_anchors,
    seen_holding,
    sight,
)
from .errors import translate
from .file import check_application, sqlite_path
from .layout import APPLICATION_ID, SCHEMA_VERSION, sqlite_file_uri
from .maintenance import BATCH_PAGES, BATCH_PAUSE, SqliteMaintenance
from .meta import SqliteMeta
from .sketches import add_sketches, remove_sketches, stored_sketches
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


class SqliteIndex(SqliteMeta, SqliteMaintenance, IndexBase):
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
        self.path = Path(path)
        self.read_only = read_only
        self._upgrade_anchors = upgrade and not read_only
        self.location = str(self.path)
        synchronous = synchronous.upper()
        if synchronous not in SYNCHRONOUS_MODES:
            raise ConfigurationError(
                f"synchronous={synchronous!r} is not one of {', '.join(SYNCHRONOUS_MODES)}"
            )
        self._timeout = timeout
        self._synchronous = synchronous
        self._conn: sqlite3.Connection | None = None
        # The pages seen holding the anchors of the page being checked (see seen_holding).
        self._seen_now: tuple[dict, dict] | None = None
        try:
            self.parameters = self._open(
                RequestedParameters(max_distance, blocks, features),
                create=create and not read_only,
            )
        except BaseException:
            self.close()
            raise
        self.plan = self.parameters.plan

    @classmethod
    def from_uri(cls, uri: str, **parameters) -> SqliteIndex:
        """Open ``sqlite:///path?synchronous=FULL&timeout=60`` (or a plain path)."""
        options = path_and_options(uri, {"synchronous": str, "timeout": timeout_option})[1]
        path = sqlite_path(uri)
        return cls(path, **parameters, **options)

    def _configure_and_load(self) -> IndexParameters:
        """Configure the connection (WAL, checkpoints, cache), then read the parameters
        (see SqliteMeta._load)."""
        check_application(self._conn, self.path)
        if not self.read_only:
            self._conn.execute(f"PRAGMA synchronous={self._synchronous}")
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(f"PRAGMA wal_autocheckpoint={AUTOCHECKPOINT_PAGES}")
        self._conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        return self._load()

    def _connect(self, *, immutable: bool = False) -> sqlite3.Connection:
        """Connect to the existing file: ``mode=rw`` (or ``ro``) never creates one.

        check_same_thread=False: a crawl opens the index on the reactor thread and checks
        pages in a thread of its own, one call at a time, never two at once."""
        mode = "ro" if self.read_only else "rw"
        with self._errors("open"):
            return sqlite3.connect(
                sqlite_file_uri(self.path, mode, immutable),
                uri=True,
                timeout=self._timeout,
                isolation_level=None,
                check_same_thread=False,
            )

    # -- errors and transactions -------------------------------------------------------

    _driver_errors = (sqlite3.DatabaseError,)

    def _translate(self, error: BaseException, doing: str) -> SimhashIndexError:
        """sqlite3's errors as ours, naming the file and what to do."""
        return translate(error, self.path, self._timeout, doing)

    @contextlib.contextmanager
    def _transaction(self, immediate: bool = True) -> Iterator[None]:
        """One transaction; afterwards ``_committed`` says whether it was committed, also
        when Ctrl-C interrupted it (see SqliteMaintenance._batched)."""
        self._conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
        self._committed = False
        try:
            yield
            # Set before COMMIT and cleared below if the transaction is still open: a
            # Ctrl-C that arrives during the COMMIT call is raised once it has returned.
            self._committed = True
            self._conn.execute("COMMIT")
        except BaseException:
            # Also after a failed COMMIT (SQLite keeps the transaction open when it cannot
            # commit yet): rolled back, so the lock is released and the next call works.
            if self._conn.in_transaction:
                self._committed = False
                with contextlib.suppress(sqlite3.Error):
                    self._conn.execute("ROLLBACK")
            raise

    # -- the index ---------------------------------------------------------------------

    def _near(self, fingerprint: int, max_distance: int) -> list[Candidate]:
        """Inside a check's transaction: the pages within *max_distance*, nearest first."""
        permuted, args = self.tables.probe(fingerprint)
        rows = self._conn.execute(self.tables.probe_sql, args).fetchall()
        fingerprints = self.tables.candidates(rows, permuted, max_distance)
        if not fingerprints:
            return []
        pages = {
            page_id: (key, added_at, from_signed64(fp))
            for page_id, key, added_at, fp in self._conn.execute(
                f"SELECT id, key, added_at, fingerprint FROM page_view "
                f"WHERE fingerprint IN ({','.join('?' * len(fingerprints))})",
                [to_signed64(fp) for fp in fingerprints],
            )
        }
        found = nearest(fingerprint, [(i, page[2]) for i, page in pages.items()], max_distance)
        sketches = stored_sketches(self._conn, [i for _, i in found]) if self.min_share else {}
        return [
            Candidate(i, pages[i][0], pages[i][2], pages[i][1], i, d, sketch=sketches.get(i))
            for d, i in found
        ]

    def _anchored(self, probe: Probe) -> list[Candidate]:
        """Inside a check's transaction: the pages sharing long paragraphs with *probe*."""
        assert probe.anchors is not None
        hits = anchor_hits(self._conn, probe.anchors.hashes)
        seen, _ = self._seen_now or seen_holding(self._conn, hits, hits)
        pages = by_anchors(hits, boilerplate(seen, probe.key))
        if not pages:
            return []
        facts = page_summaries(self._conn, pages)
        sketches = stored_sketches(self._conn, facts) if self.min_share else {}
        stored = {}
        for page, (summary, key, signed, added_at) in facts.items():
            fingerprint = from_signed64(signed)
            distance = (probe.fingerprint ^ fingerprint).bit_count()
            stored[page] = Candidate(
                page, key, fingerprint, added_at, page, distance,
                summary=summary, sketch=sketches.get(page),
            )  # fmt: skip
        return anchor_candidates(probe, pages, stored)

    def query(self, fingerprint: int, max_distance: int | None = None) -> list[Match]:
        k = self._query_distance(max_distance)
        with self._errors("query"):
            return [as_match(c, fingerprint) for c in self._near(fingerprint, k)]

    def check_and_add(
        self,
        fingerprint: int,
        key: str,
        anchors: Anchors | None = None,
        sketch: Sketch | None = None,
        *,
        analysed: Analysed | None = None,
    ) -> Outcome:
        probe = probe_of(key, fingerprint, anchors, sketch)
        with self._errors("add"), self._transaction():
            hashes = probe.anchors.hashes if probe.anchors else ()
            hits = anchor_hits(self._conn, hashes) if hashes else {}
            seen = seen_holding(self._conn, hits, hashes)
            self._seen_now = seen
            try:
                decision = self._decide(probe)
            finally:
                self._seen_now = None
            outcome = self._outcome(decision, probe)
            if outcome is not None:  # not stored: seen all the same
                sight(self._conn, *seen, sighting(probe.key))
                return outcome
            replaced = self._remove_stored(self._conn, probe.key)
            page = self.tables.add(self._conn, fingerprint, probe.key, time.time())
            add_anchors(self._conn, [(page, anchors)] if anchors else [])
            add_sketches(self._conn, [(page, sketch)])
            add_analyses(self._conn, [(probe.key, analysed)])
        return stored_outcome(decision, fingerprint, bool(replaced))

    def query_contained(
        self, fingerprint: int, anchors: Anchors, sketch: Sketch | None = None
    ) -> Match | None:
        if not anchors:
            return None
        probe = probe_of("", fingerprint, anchors, sketch)
        with self._errors("query"), self._transaction(immediate=False):
            outcome = self._outcome(self._decide(probe, near=False), probe)
        return None if outcome is None else outcome.match

    def check_and_add_exact(
        self, digest: int, key: str, *, analysed: Analysed | None = None
    ) -> Outcome:
        key = storable_key(key)
        signed = to_signed64(digest)
        with self._errors("add"), self._transaction():
            row = self._conn.execute(
                "SELECT key, added_at FROM exact_texts WHERE digest = ?", (signed,)
            ).fetchone()
            if row:
                status = "unchanged" if row[0] == key else "duplicate"
                return Outcome(status, Match(row[0], digest, 0, row[1]))
            replaced = self._remove_stored(self._conn, key)
            self._conn.execute(
                "INSERT INTO exact_texts (digest, key, added_at) VALUES (?, ?, ?)",
                (signed, key, time.time()),
            )
            add_analyses(self._conn, [(key, analysed)])
        return Outcome("changed" if replaced else "new")

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

    def __len__(self) -> int:
        with self._errors("count"):
            (pages,) = self._conn.execute("SELECT count(*) FROM pages").fetchone()
            (exact,) = self._conn.execute("SELECT count(*) FROM exact_texts").fetchone()
        return pages + exact

    def journal(self, crawl: str | None = None, **kwargs: Any) -> Journal:
        """The journal of a crawl's pages not yet in its output (see
        :mod:`scrapy_simhash.index.journal`), kept in two tables of the file."""
        from .journal import SqliteJournal

        return SqliteJournal(self, crawl, **kwargs)

    def close(self) -> None:
        """Checkpoint and truncate the write-ahead log, then close. Idempotent."""
        conn, self._conn = getattr(self, "_conn", None), None
        if conn is None:
            return
        try:
            if not self.read_only:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.DatabaseError:
            pass  # another process is reading; the last one to close checkpoints
        finally:
            conn.close()

    def __repr__(self) -> str:
        return f"SqliteIndex({self.location!r}, {self.parameters})"
