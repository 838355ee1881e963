"""The crawl journal (see :mod:`.journal`) of a SQLite index: two tables of its file,
created when a crawl first needs them, outside the index's versioned layout (a file
without them is a complete index)."""

from __future__ import annotations

from ..journal import CrawlRecord, Journal


class SqliteJournal(Journal):
    def _prepare(self) -> None:
        index = self.index
        with index._errors("open the crawl journal"), index._transaction():
            index._conn.execute(
                "CREATE TABLE IF NOT EXISTS journal_crawls (crawl TEXT PRIMARY KEY, "
                "host TEXT NOT NULL, pid INTEGER NOT NULL, started TEXT NOT NULL, "
                "beat REAL NOT NULL)"
            )
            index._conn.execute(
                "CREATE TABLE IF NOT EXISTS journal_pending (crawl TEXT NOT NULL, "
                "key TEXT NOT NULL, PRIMARY KEY (crawl, key)) WITHOUT ROWID"
            )

    def _register(self, record: CrawlRecord) -> None:
        index = self.index
        with index._errors("renew the crawl's lease"), index._transaction():
            index._conn.execute(
                "INSERT OR REPLACE INTO journal_crawls (crawl, host, pid, started, beat) "
                "VALUES (?, ?, ?, ?, ?)",
                (record.crawl, record.host, record.pid, record.started, record.beat),
            )

    def _records(self) -> list[CrawlRecord]:
        with self.index._errors("read the crawl journal"):
            rows = self.index._conn.execute(
                "SELECT crawl, host, pid, started, beat FROM journal_crawls"
            ).fetchall()
        return [CrawlRecord(*row) for row in rows]

    def _add_pending(self, key: str) -> None:
        index = self.index
        with index._errors("write the crawl journal"), index._transaction():
            index._conn.execute(
                "INSERT OR IGNORE INTO journal_pending (crawl, key) VALUES (?, ?)",
                (self.crawl, key),
            )

    def _remove_pending(self, keys: list[str]) -> None:
        index = self.index
        with index._errors("write the crawl journal"), index._transaction():
            index._conn.executemany(
                "DELETE FROM journal_pending WHERE crawl = ? AND key = ?",
                [(self.crawl, key) for key in keys],
            )

    def _pending(self, crawl: str) -> list[str]:
        with self.index._errors("read the crawl journal"):
            rows = self.index._conn.execute(
                "SELECT key FROM journal_pending WHERE crawl = ?", (crawl,)
            ).fetchall()
        return [key for (key,) in rows]

    def _drop(self, crawl: str) -> None:
        index = self.index
        with index._errors("write the crawl journal"), index._transaction():
            index._conn.execute("DELETE FROM journal_pending WHERE crawl = ?", (crawl,))
            index._conn.execute("DELETE FROM journal_crawls WHERE crawl = ?", (crawl,))
