"""The sites' templates of a SQLite index (see :mod:`scrapy_simhash.index.templates`): one
table of its file, made by the first write."""

from __future__ import annotations

from typing import Any

_TABLE = "CREATE TABLE IF NOT EXISTS site_templates (site TEXT PRIMARY KEY, template BLOB NOT NULL)"


class SqliteTemplates:
    """The table ``site_templates`` of a SQLite index's file: a site's packed template."""

    def __init__(self, store: Any) -> None:
        self.db = store.db
        self._made = False

    def _exists(self) -> bool:
        if not self._made:
            found = self.db.conn.execute(
                "SELECT 1 FROM sqlite_master WHERE name = 'site_templates'"
            ).fetchone()
            self._made = found is not None
        return self._made

    def read(self, site: str) -> bytes | None:
        with self.db.errors("read a site's template"):
            if not self._exists():
                return None
            row = self.db.conn.execute(
                "SELECT template FROM site_templates WHERE site = ?", (site,)
            ).fetchone()
        return row[0] if row else None

    def write(self, site: str, data: bytes) -> None:
        db = self.db
        with db.errors("learn a site's template"), db.transaction():
            if not self._made:
                db.conn.execute(_TABLE)
            db.conn.execute(
                "INSERT OR REPLACE INTO site_templates (site, template) VALUES (?, ?)",
                (site, data),
            )
        self._made = True

    def forget(self, site: str | None = None) -> int:
        db = self.db
        with db.errors("forget sites' templates"):
            if not self._exists():
                return 0
            with db.transaction():
                return db.conn.execute(
                    "DELETE FROM site_templates WHERE ? IS NULL OR site = ?", (site, site)
                ).rowcount
