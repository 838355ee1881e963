"""The crawl journal (see :mod:`.journal`) of a SQLite index: two tables of its file,
created when a crawl first needs them, outside the index's versioned layout (a file
without them is a complete index).

There is no server to expire a lease: a crawl of this host is dead when its process is
gone; a crawl of another host (a file on a shared disk) when its heartbeat has not changed
for the lease, timed by the observer's own monotonic clock (see :meth:`Journal.dead`).
The lease is renewed, exported pages' keys removed, and dead crawls recovered on a
connection of its own, so that none of them waits behind the crawl's queued checks (only,
at most for the index's ``timeout``, behind one write of this or another process). That
connection writes pages as the index's own does (the same ``synchronous`` and the
triggers that keep the block tables in step), and forgets a dead crawl's pages with the
index's own removal, in one transaction per dead crawl."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Iterator
from typing import Any

from ..journal import CrawlRecord, Journal


class SqliteJournal(Journal):
    _own: sqlite3.Connection | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: One transaction at a time on the journal's own connection (renewals,
        #: settlements and re-added keys may come from two threads).
        self._own_lock = threading.RLock()

    def _prepare(self) -> None:
        index = self.index
        with index.db.errors("open the crawl journal"), index.db.transaction():
            index.db.conn.execute(
                "CREATE TABLE IF NOT EXISTS journal_crawls (crawl TEXT PRIMARY KEY, "
                "host TEXT NOT NULL, pid INTEGER NOT NULL, started TEXT NOT NULL, "
                "beat REAL NOT NULL)"
            )
            index.db.conn.execute(
                "CREATE TABLE IF NOT EXISTS journal_pending (crawl TEXT NOT NULL, "
                "key TEXT NOT NULL, PRIMARY KEY (crawl, key)) WITHOUT ROWID"
            )

    @contextlib.contextmanager
    def _own_connection(self) -> Iterator[sqlite3.Connection]:
        """The journal's own connection (for the journal keeper's thread), one user at a
        time; opened on first use, closed by :meth:`end`."""
        with self._own_lock:
            if self._own is None:
                index = self.index
                own = index.db.connect()
                try:
                    # It removes the pages of dead crawls: written as the index's own
                    # connection writes them (its triggers are this connection's alone).
                    own.execute(f"PRAGMA synchronous={index.db.synchronous}")
                    index.tables.install(own)
                except BaseException:
                    own.close()
                    raise
                self._own = own
            yield self._own

    @contextlib.contextmanager
    def _own_transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction on the journal's own connection."""
        with self._own_connection() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                raise

    def _values(self, record: CrawlRecord) -> tuple:
        return (record.crawl, record.host, record.pid, record.started, record.beat)

    def _renew(self, record: CrawlRecord) -> bool:
        with self.index.db.errors("renew the crawl's lease"), self._own_transaction() as conn:
            updated = conn.execute(
                "UPDATE journal_crawls SET host = ?, pid = ?, started = ?, beat = ? "
                "WHERE crawl = ?",
                (record.host, record.pid, record.started, record.beat, record.crawl),
            ).rowcount
            if not updated:
                conn.execute(
                    "INSERT OR IGNORE INTO journal_crawls (crawl, host, pid, started, beat) "
                    "VALUES (?, ?, ?, ?, ?)",
                    self._values(record),
                )
        return not updated

    def _records(self) -> list[CrawlRecord]:
        with self.index.db.errors("read the crawl journal"), self._own_connection() as conn:
            rows = conn.execute(
                "SELECT crawl, host, pid, started, beat FROM journal_crawls"
            ).fetchall()
        return [CrawlRecord(*row) for row in rows]

    def _add_pending(self, key: str) -> bool:
        index = self.index
        with index.db.errors("write the crawl journal"), index.db.transaction():
            index.db.conn.execute(
                "INSERT OR IGNORE INTO journal_pending (crawl, key) VALUES (?, ?)",
                (self.crawl, key),
            )
            # The record is there, or is written again in the same transaction: a pending
            # key never sits in a journal that no record names.
            return bool(
                index.db.conn.execute(
                    "INSERT OR IGNORE INTO journal_crawls (crawl, host, pid, started, beat) "
                    "VALUES (?, ?, ?, ?, ?)",
                    self._values(self._record(time.time())),
                ).rowcount
            )

    def _readd_pending(self, keys: list[str]) -> None:
        with self.index.db.errors("write the crawl journal"), self._own_transaction() as conn:
            conn.executemany(
                "INSERT OR IGNORE INTO journal_pending (crawl, key) VALUES (?, ?)",
                [(self.crawl, key) for key in keys],
            )

    def _remove_pending(self, keys: list[str]) -> None:
        with self.index.db.errors("write the crawl journal"), self._own_transaction() as conn:
            conn.executemany(
                "DELETE FROM journal_pending WHERE crawl = ? AND key = ?",
                [(self.crawl, key) for key in keys],
            )

    def _pending(self, crawl: str) -> list[str]:
        with self.index.db.errors("read the crawl journal"), self._own_connection() as conn:
            return self._pending_on(conn, crawl)

    @staticmethod
    def _pending_on(conn: sqlite3.Connection, crawl: str) -> list[str]:
        rows = conn.execute("SELECT key FROM journal_pending WHERE crawl = ?", (crawl,))
        return [key for (key,) in rows]

    def _forget_pending(self, record: CrawlRecord) -> int:
        # One transaction: the keys read, their pages forgotten and the record dropped,
        # while the record is as read. A crawl that renewed meanwhile was alive: its pages
        # and keys stay (it exports them, or forgets them at its end).
        index = self.index
        with index.db.errors("forget the pages of a dead crawl"), self._own_transaction() as conn:
            if not conn.execute(
                "SELECT 1 FROM journal_crawls WHERE crawl = ? AND beat = ?",
                (record.crawl, record.beat),
            ).fetchone():
                return 0  # renewed, or recovered by another crawl
            keys = self._pending_on(conn, record.crawl)
            forgotten = sum(bool(index._remove_stored(conn, key)) for key in keys)
            self._drop_dead_on(conn, record, keys)
        return forgotten

    def _drop_dead(self, record: CrawlRecord, keys: list[str]) -> None:
        with self.index.db.errors("write the crawl journal"), self._own_transaction() as conn:
            self._drop_dead_on(conn, record, keys)

    @staticmethod
    def _drop_dead_on(conn: sqlite3.Connection, record: CrawlRecord, keys: list[str]) -> None:
        # Only while the record is as read (its beat unchanged): a crawl that renewed
        # its lease meanwhile was alive, and keeps its record and its keys.
        conn.executemany(
            "DELETE FROM journal_pending WHERE crawl = ? AND key = ? AND EXISTS "
            "(SELECT 1 FROM journal_crawls WHERE crawl = ? AND beat = ?)",
            [(record.crawl, key, record.crawl, record.beat) for key in keys],
        )
        conn.execute(
            "DELETE FROM journal_crawls WHERE crawl = ? AND beat = ? AND NOT EXISTS "
            "(SELECT 1 FROM journal_pending WHERE crawl = ?)",
            (record.crawl, record.beat, record.crawl),
        )

    def _drop(self, crawl: str) -> None:
        index = self.index
        try:
            with index.db.errors("write the crawl journal"), index.db.transaction():
                index.db.conn.execute("DELETE FROM journal_pending WHERE crawl = ?", (crawl,))
                index.db.conn.execute("DELETE FROM journal_crawls WHERE crawl = ?", (crawl,))
        finally:
            if crawl == self.crawl:
                self.close()

    def close(self) -> None:
        with self._own_lock:
            own, self._own = self._own, None
            if own is not None:
                own.close()
