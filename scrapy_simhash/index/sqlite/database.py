"""The file of a SQLite index and its one connection: what the parts of
:class:`~.index.SqliteStore` (its parameters, its check, its maintenance, the crawl
journal and the URL rules) share, and nothing of what each does with it."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from .errors import translate
from .layout import sqlite_file_uri


class Database:
    """The index's file at *path*: connections to it (never creating it), its driver's
    errors as ours, and transactions on :attr:`conn`. *synchronous* and *timeout* are
    SQLite's settings (see :class:`~.index.SqliteIndex`)."""

    def __init__(self, path: Path, *, synchronous: str, timeout: float, read_only: bool) -> None:
        self.path = path
        self.synchronous = synchronous
        self.timeout = timeout
        self.read_only = read_only
        #: The connection checks and maintenance run on (``None`` until opened, and
        #: once closed).
        self.conn: sqlite3.Connection | None = None
        #: Whether the last :meth:`transaction` was committed (see there).
        self.committed = False

    def connect(self, *, immutable: bool = False) -> sqlite3.Connection:
        """A new connection to the existing file: ``mode=rw`` (or ``ro``) never creates
        one.

        check_same_thread=False: a crawl opens the index on the reactor thread and checks
        pages in a thread of its own, one call at a time, never two at once."""
        mode = "ro" if self.read_only else "rw"
        with self.errors("open"):
            return sqlite3.connect(
                sqlite_file_uri(self.path, mode, immutable),
                uri=True,
                timeout=self.timeout,
                isolation_level=None,
                check_same_thread=False,
            )

    @contextlib.contextmanager
    def errors(self, doing: str) -> Iterator[None]:
        """sqlite3's errors as ours, naming the file and what to do."""
        try:
            yield
        except sqlite3.DatabaseError as e:
            raise translate(e, self.path, self.timeout, doing) from None

    @contextlib.contextmanager
    def transaction(self, immediate: bool = True) -> Iterator[None]:
        """One transaction on :attr:`conn`; afterwards :attr:`committed` says whether it
        was committed, also when Ctrl-C interrupted it (see SqliteMaintenance._batched)."""
        conn = self.conn
        assert conn is not None
        conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
        self.committed = False
        try:
            yield
            # Set before COMMIT and cleared below if the transaction is still open: a
            # Ctrl-C that arrives during the COMMIT call is raised once it has returned.
            self.committed = True
            conn.execute("COMMIT")
        except BaseException:
            # Also after a failed COMMIT (SQLite keeps the transaction open when it cannot
            # commit yet): rolled back, so the lock is released and the next call works.
            if conn.in_transaction:
                self.committed = False
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        """Checkpoint and truncate the write-ahead log, then close. Idempotent."""
        conn, self.conn = self.conn, None
        if conn is None:
            return
        try:
            if not self.read_only:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.DatabaseError:
            pass  # another process is reading; the last one to close checkpoints
        finally:
            conn.close()
