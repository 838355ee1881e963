"""The sites' templates of a SQLite index (see :mod:`scrapy_simhash.index.templates`): one
table of its file, made by the first write."""

from __future__ import annotations

from typing import Any

_TABLE = "CREATE TABLE IF NOT EXISTS site_templates (site TEXT PRIMARY KEY, template BLOB NOT NULL)"


class SqliteTemplates:
    """The table ``site_templates`` of a SQLite index's file: a site's packed template."""

    def __init__(self, index: Any) -> None:
        self.index = index
        self._made = False

    def _exists(self) -> bool:
        if not self._made:
            found = self.index._conn.execute(
                "SELECT 1 FROM sqlite_master WHERE name = 'site_templates'"
            ).fetchone()
            self._made = found is not None
        return self._made

    def read(self, site: str) -> bytes | None:
        with self.index._errors("read a site's template"):
            if not self._exists():
                return None
            row = self.index._conn.execute(
                "SELECT template FROM site_templates WHERE site = ?", (site,)
            ).fetchone()
        return row[0] if row else None

    def write(self, site: str, data: bytes) -> None:
        index = self.index
        with index._errors("learn a site's template"), index._transaction():
            if not self._made:
                index._conn.execute(_TABLE)
            index._conn.execute(
                "INSERT OR REPLACE INTO site_templates (site, template) VALUES (?, ?)",
                (site, data),
            )
        self._made = True

    def forget(self, site: str | None = None) -> int:
        index = self.index
        with index._errors("forget sites' templates"):
            if not self._exists():
                return 0
            with index._transaction():
                return index._conn.execute(
                    "DELETE FROM site_templates WHERE ? IS NULL OR site = ?", (site, site)
                ).rowcount
