"""Maintenance and audit of a SQLite index: the audit log, listing, restoring, removing
and compacting pages. Long operations run in batches of :data:`BATCH_PAGES`, each
committed whole, so that a crawl on the same index waits for one batch at most."""

from __future__ import annotations

import contextlib
import itertools
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import TYPE_CHECKING

from ...exceptions import Interrupted
from ..stored import DropRecord, StoredPage, storable_key, storable_pages
from .analyses import add_analyses, remove_analyses, stored_analyses
from .anchors import add_anchors, remove_anchors, stored_anchors
from .layout import DROP_SHARED, DROP_UNCHANGED
from .sketches import add_sketches, remove_sketches, stored_sketches
from .tables import (
    PAGES_BY_KEY,
    BlockTables,
    from_signed64,
    key_hash,
    to_signed64,
)

if TYPE_CHECKING:
    from .database import Database


#: Pages per transaction of long maintenance (expire, import, forget, pruning the audit
#: log): each batch is committed whole or not at all, and between two the write lock is
#: free, so that a crawl on the same index waits for one batch, not for the whole command.
BATCH_PAGES = 10_000
#: Pause between two batches, in seconds: longer than SQLite's busy handler sleeps between
#: two attempts (at most 100 ms), so that a process waiting for the lock gets it.
BATCH_PAUSE = 0.1


#: Numbers the walks of :meth:`SqliteMaintenance.pages` through the temporary table.
_WALKS = itertools.count(1)
#: Pages read in one short transaction by :meth:`SqliteMaintenance.pages`.
_WALK_BATCH = 2000


class SqliteMaintenance:
    """The audit log and the maintenance of the index in *db*, whose block tables are
    *tables*: a part of :class:`~scrapy_simhash.index.sqlite.index.SqliteStore`."""

    def __init__(self, db: Database, tables: BlockTables) -> None:
        self.db = db
        self.tables = tables

    def add_drop(self, record: DropRecord) -> None:
        # The column `exact` holds the kind as bits (see sqlite_layout.DROP_UNCHANGED): a
        # kind without a new column, so that existing files keep their layout.
        kind = int(record.exact) | (DROP_UNCHANGED if record.unchanged else 0)
        kind |= DROP_SHARED * record.shared
        with self.db.errors("record a drop"):
            self.db.conn.execute(
                "INSERT INTO drops (key, kept_key, distance, exact, at, share) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (record.key, record.kept_key, record.distance, kind, record.at, record.share),
            )

    def drops(self, since: float | None) -> Iterator[DropRecord]:
        sql = "SELECT key, kept_key, distance, exact, at, share FROM drops"
        args: tuple = ()
        if since is not None:
            sql, args = sql + " WHERE at >= ?", (since,)
        with self.db.errors("read the drops"):
            rows = self.db.conn.execute(sql + " ORDER BY at, id", args).fetchall()
        for key, kept_key, distance, kind, at, share in rows:
            yield DropRecord(
                key,
                kept_key,
                distance,
                bool(kind & 1),
                at,
                bool(kind & DROP_UNCHANGED),
                kind // DROP_SHARED,
                share,
            )

    _PAGES_SQL = (
        "SELECT key, fingerprint, added_at, 0, id FROM page_view {pages} UNION ALL "
        "SELECT key, digest, added_at, 1, 0 FROM exact_texts {exact} ORDER BY 3, 4, 5"
    )

    def _select_pages(
        self, where: str = "", args: tuple = (), pages_where: str = "", pages_args: tuple = ()
    ) -> Iterator[StoredPage]:
        """Pages and exact entries *where* says (*pages_where* for pages, if given)."""
        with self.db.errors("read the pages"):
            cursor = self.db.conn.execute(
                self._PAGES_SQL.format(pages=pages_where or where, exact=where),
                (pages_args if pages_where else args) + args,
            )
        while True:
            with self.db.errors("read the pages"):
                rows = cursor.fetchmany(10_000)
            if not rows:
                return
            with self.db.errors("read the pages"):
                ids = [i for *_, exact, i in rows if not exact]
                anchors = stored_anchors(self.db.conn, ids)
                sketches = stored_sketches(self.db.conn, ids)
                analysed = stored_analyses(self.db.conn, [row[0] for row in rows])
            for key, fp, added_at, exact, page_id in rows:
                found = None if exact else anchors.get(page_id)
                sketch = None if exact else sketches.get(page_id)
                yield StoredPage(
                    key, from_signed64(fp), added_at, bool(exact), found, sketch, analysed.get(key)
                )

    def pages(self) -> Iterator[StoredPage]:
        """Every page, in the order stored, read in short transactions: the order is
        written once to a temporary table (a quick read), then the pages are read from
        it a batch at a time. A caller that takes long over each page (``rebuild``,
        ``export``) holds no snapshot meanwhile, so a crawl's writes beside it can be
        checkpointed and the write-ahead log stays small."""
        walk = next(_WALKS)
        with self.db.errors("read the pages"):
            self.db.conn.execute(
                "CREATE TEMP TABLE IF NOT EXISTS page_walk (walk INTEGER NOT NULL, "
                "seq INTEGER NOT NULL, id INTEGER NOT NULL, exact INTEGER NOT NULL, "
                "PRIMARY KEY (walk, seq)) WITHOUT ROWID"
            )
            count = self.db.conn.execute(
                "INSERT INTO temp.page_walk (walk, seq, id, exact) SELECT ?, "
                "row_number() OVER (ORDER BY added_at, exact, id), id, exact FROM ("
                "SELECT id, added_at, 0 AS exact FROM pages UNION ALL "
                "SELECT digest, added_at, 1 FROM exact_texts)",
                (walk,),
            ).rowcount
        try:
            for first in range(1, count + 1, _WALK_BATCH):
                span = (walk, first, first + _WALK_BATCH - 1)
                with self.db.errors("read the pages"):
                    rows = self.db.conn.execute(
                        "SELECT p.key, p.fingerprint, p.added_at, 0, w.seq, p.id "
                        "FROM temp.page_walk w JOIN page_view p ON p.id = w.id "
                        "WHERE w.walk = ? AND w.seq BETWEEN ? AND ? AND w.exact = 0 "
                        "UNION ALL SELECT e.key, e.digest, e.added_at, 1, w.seq, 0 "
                        "FROM temp.page_walk w JOIN exact_texts e ON e.digest = w.id "
                        "WHERE w.walk = ? AND w.seq BETWEEN ? AND ? AND w.exact = 1 "
                        "ORDER BY 5",
                        span + span,
                    ).fetchall()
                    ids = [r[5] for r in rows if not r[3]]
                    held = stored_anchors(self.db.conn, ids)
                    sketches = stored_sketches(self.db.conn, ids)
                    analysed = stored_analyses(self.db.conn, [r[0] for r in rows])
                for key, fp, added_at, exact, _, page_id in rows:
                    anchors = None if exact else held.get(page_id)
                    sketch = None if exact else sketches.get(page_id)
                    yield StoredPage(
                        key, from_signed64(fp), added_at, bool(exact), anchors, sketch,
                        analysed.get(key),
                    )  # fmt: skip
        finally:
            with contextlib.suppress(sqlite3.Error):  # a closed or failing index
                if self.db.conn is not None:
                    self.db.conn.execute("DELETE FROM temp.page_walk WHERE walk = ?", (walk,))

    def find(self, key: str) -> list[StoredPage]:
        with self.db.errors("find"):
            key = storable_key(key)
            by_key = (f"WHERE {PAGES_BY_KEY}", (key_hash(key), key))
            return list(self._select_pages("WHERE key = ?", (key,), *by_key))

    def _batched(
        self,
        doing: str,
        step: Callable[[], tuple[int, bool]],
        prepare: Callable[[], bool] = lambda: True,
    ) -> int:
        """Run *step* in one transaction after another, pausing :data:`BATCH_PAUSE`
        between two, while it says there is more (and *prepare*, run outside the
        transaction before each, says there is something to do); return the rows it
        changed. Ctrl-C raises :class:`Interrupted` with the rows committed: a batch
        counts once its COMMIT has returned, whenever the signal arrives."""
        done = pending = 0
        try:
            first = True
            while prepare():
                if not first:
                    time.sleep(BATCH_PAUSE)
                first, pending = False, 0
                with self.db.errors(doing), self.db.transaction():
                    pending, more = step()
                done, pending = done + pending, 0
                if not more:
                    break
        except KeyboardInterrupt:
            raise Interrupted(done + (pending if self.db.committed else 0)) from None
        return done

    def add_pages(self, pages: Iterable[StoredPage]) -> int:
        """See :meth:`NearDuplicateIndex.add_pages`. Committed in batches of
        :data:`BATCH_PAGES`; Ctrl-C raises :class:`Interrupted` with how many were added."""
        pages = storable_pages(pages)
        batch: list[StoredPage] = []

        def read() -> bool:  # outside the transaction: the lock is held for writing only
            nonlocal batch
            batch = list(islice(pages, BATCH_PAGES))
            return bool(batch)

        return self._batched("add pages", lambda: (self._add_batch(batch), True), read)

    def _add_batch(self, batch: list[StoredPage]) -> int:
        (next_id,) = self.db.conn.execute("SELECT coalesce(max(id), 0) + 1 FROM pages").fetchone()
        page_rows, exact_rows, anchor_rows, sketch_rows, analysis_rows = [], [], [], [], []
        seen: set[tuple[str, int]] = set()
        for page in batch:
            signed = to_signed64(page.fingerprint)
            if page.exact:
                exact_rows.append((signed, page.key, page.added_at))
                analysis_rows.append((page.key, page.analysed))
                continue
            if (page.key, signed) in seen or self.db.conn.execute(
                "SELECT 1 FROM page_view WHERE key = ? AND fingerprint = ?",
                (page.key, signed),
            ).fetchone():
                continue
            seen.add((page.key, signed))
            page_rows.append((next_id, signed, page.key, page.added_at))
            analysis_rows.append((page.key, page.analysed))
            if page.anchors:
                anchor_rows.append((next_id, page.anchors))
            if page.sketch:
                sketch_rows.append((next_id, page.sketch))
            next_id += 1
        before = self.db.conn.total_changes
        self.db.conn.executemany(
            "INSERT OR IGNORE INTO exact_texts (digest, key, added_at) VALUES (?, ?, ?)",
            exact_rows,
        )
        added = self.db.conn.total_changes - before + len(page_rows)
        self.tables.add_many(self.db.conn, page_rows)
        add_anchors(self.db.conn, anchor_rows)
        add_sketches(self.db.conn, sketch_rows)
        add_analyses(self.db.conn, analysis_rows)
        return added

    def _delete(self, where: str, args: tuple, pages_where: str = "", pages_args=()) -> int:
        """Remove the pages and exact entries *where* says (*pages_where* for pages, if
        given), in batches of :data:`BATCH_PAGES` (each page with its table rows); Ctrl-C
        raises :class:`Interrupted` with how many were removed."""
        limited = (*args, BATCH_PAGES)
        pages_limited = (*pages_args, BATCH_PAGES) if pages_where else limited

        def step() -> tuple[int, bool]:
            doomed = self.db.conn.execute(
                f"SELECT id, fingerprint, key FROM page_view {pages_where or where} LIMIT ?",
                pages_limited,
            ).fetchall()
            self.tables.remove(self.db.conn, doomed)
            remove_anchors(self.db.conn, [page_id for page_id, _, _ in doomed])
            remove_sketches(self.db.conn, [page_id for page_id, _, _ in doomed])
            exact_keys = self.db.conn.execute(
                f"DELETE FROM exact_texts WHERE rowid IN "
                f"(SELECT rowid FROM exact_texts {where} LIMIT ?) RETURNING key",
                limited,
            ).fetchall()
            remove_analyses(
                self.db.conn, [key for _, _, key in doomed] + [k for (k,) in exact_keys]
            )
            exact = len(exact_keys)
            return len(doomed) + exact, len(doomed) == BATCH_PAGES or exact == BATCH_PAGES

        return self._batched("remove pages", step)

    def forget(self, key: str) -> int:
        key = storable_key(key)
        return self._delete("WHERE key = ?", (key,), f"WHERE {PAGES_BY_KEY}", (key_hash(key), key))

    def expire(self, older_than: float) -> int:
        return self._delete("WHERE added_at < ?", (older_than,))

    def expire_drops(self, older_than: float) -> int:
        def step() -> tuple[int, bool]:
            removed = self.db.conn.execute(
                "DELETE FROM drops WHERE id IN (SELECT id FROM drops WHERE at < ? LIMIT ?)",
                (older_than, BATCH_PAGES),
            ).rowcount
            return removed, removed == BATCH_PAGES

        return self._batched("remove audit-log entries", step)

    def size(self) -> int:
        """Bytes of the file and its write-ahead log."""
        return sum(
            os.path.getsize(name)
            for name in (self.db.path, f"{self.db.path}-wal")
            if os.path.exists(name)
        )

    def compact(self) -> bool:
        """Rebuild the file without the space of removed pages (``VACUUM``) and truncate
        the write-ahead log. Needs as much free disk as the index takes; other processes
        wait meanwhile."""
        with self.db.errors("vacuum"):
            self.db.conn.execute("VACUUM")
            self.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return True
