"""The URL rules of a SQLite index (see :mod:`scrapy_simhash.index.skip_rules`): three
tables of its file, made by the first write. Every statement is a constant."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterable, Iterator
from typing import Any

from ...url_rules import MAX_RULES_PER_SITE, Evidence, SkippedRequest

_TABLES = (
    "CREATE TABLE IF NOT EXISTS skip_rules (site TEXT NOT NULL, rule TEXT NOT NULL, "
    "observations INTEGER NOT NULL DEFAULT 0, distinct_pages INTEGER NOT NULL DEFAULT 0, "
    "skipped INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (site, rule)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS skip_requests (url TEXT PRIMARY KEY, site TEXT NOT NULL, "
    "rule TEXT NOT NULL, target TEXT NOT NULL, at REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS skip_copies (url TEXT PRIMARY KEY, kept TEXT NOT NULL, "
    "rule TEXT NOT NULL)",
)


class SqliteSkipRules:
    """Three tables of a SQLite index's file: ``skip_rules``, ``skip_requests`` and
    ``skip_copies``."""

    def __init__(self, index: Any) -> None:
        self.index = index
        self._made = False

    @contextlib.contextmanager
    def _writing(self, doing: str) -> Iterator[sqlite3.Connection]:
        """One write transaction on the index's connection; the tables made first."""
        index = self.index
        with index.db.errors(doing), index.db.transaction():
            if not self._made:
                index.db.conn.execute(_TABLES[0])
                index.db.conn.execute(_TABLES[1])
                index.db.conn.execute(_TABLES[2])
            yield index.db.conn
        self._made = True

    @contextlib.contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection | None]:
        """The index's connection to read with; ``None`` where the tables were never made
        (an index no crawl with SIMHASH_SKIP_PREDICTED wrote to): nothing to read."""
        conn = self.index.db.conn
        with self.index.db.errors("read the URL rules"):
            made = (
                self._made
                or conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'skip_copies'").fetchone()
            )
            yield conn if made else None

    def add(
        self, site: str, rules: Iterable[str], *, observations: int = 0, distinct: int = 0
    ) -> None:
        rules = list(rules)
        if not rules:
            return
        with self._writing("record URL rule evidence") as conn:
            for rule in rules:
                updated = conn.execute(
                    "UPDATE skip_rules SET observations = observations + ?, "
                    "distinct_pages = distinct_pages + ? WHERE site = ? AND rule = ?",
                    (observations, distinct, site, rule),
                ).rowcount
                if not updated:
                    conn.execute(
                        "INSERT INTO skip_rules (site, rule, observations, distinct_pages) "
                        "SELECT ?, ?, ?, ? WHERE (SELECT COUNT(*) FROM skip_rules "
                        "WHERE site = ?) < ?",
                        (site, rule, observations, distinct, site, MAX_RULES_PER_SITE),
                    )

    def rules(self, site: str | None = None) -> dict[tuple[str, str], Evidence]:
        with self._reading() as conn:
            if conn is None:
                return {}
            rows = conn.execute(
                "SELECT site, rule, observations, distinct_pages, skipped FROM skip_rules "
                "WHERE ? IS NULL OR site = ?",
                (site, site),
            ).fetchall()
        return {(s, r): Evidence(o, d, k) for s, r, o, d, k in rows}

    def remove(self, rule: str, site: str | None = None) -> int:
        if not any(r == rule for _, r in self.rules(site)):
            return 0
        with self._writing("remove a URL rule") as conn:
            return conn.execute(
                "DELETE FROM skip_rules WHERE rule = ? AND (? IS NULL OR site = ?)",
                (rule, site, site),
            ).rowcount

    def record_skip(self, skipped: SkippedRequest) -> None:
        s = skipped
        with self._writing("record a skipped request") as conn:
            conn.execute(
                "INSERT OR REPLACE INTO skip_requests (url, site, rule, target, at) "
                "VALUES (?, ?, ?, ?, ?)",
                (s.url, s.site, s.rule, s.target, s.at),
            )
            for rule in s.rule.split("+"):
                conn.execute(
                    "UPDATE skip_rules SET skipped = skipped + 1 WHERE site = ? AND rule = ?",
                    (s.site, rule),
                )

    def skipped(self) -> list[SkippedRequest]:
        with self._reading() as conn:
            if conn is None:
                return []
            rows = conn.execute(
                "SELECT url, site, rule, target, at FROM skip_requests ORDER BY at"
            ).fetchall()
        return [SkippedRequest(*row) for row in rows]

    def record_copy(self, url: str, kept: str, rule: str = "") -> None:
        with self._writing("record a copy") as conn:
            conn.execute(
                "INSERT OR REPLACE INTO skip_copies (url, kept, rule) VALUES (?, ?, ?)",
                (url, kept, rule),
            )

    def predict_copies(self, kept: str, targets: dict[str, str]) -> None:
        if not targets:
            return
        with self._writing("record predicted copies") as conn:
            conn.executemany(
                "INSERT OR IGNORE INTO skip_copies (url, kept, rule) VALUES (?, ?, ?)",
                [(url, kept, rule) for rule, url in targets.items()],
            )

    def copy_of(self, url: str) -> tuple[str, str] | None:
        with self._reading() as conn:
            if conn is None:
                return None
            row = conn.execute(
                "SELECT kept, rule FROM skip_copies WHERE url = ?", (url,)
            ).fetchone()
        return (row[0], row[1]) if row else None

    def forget_url(self, url: str | None = None) -> int:
        with self._reading() as conn:
            if conn is None:
                return 0  # nothing to forget: no table is made on an index that has none
            skips = conn.execute(
                "SELECT COUNT(*) FROM skip_requests WHERE ? IS NULL OR url = ?", (url, url)
            ).fetchone()[0]
        with self._writing("forget skipped requests") as conn:
            conn.execute("DELETE FROM skip_copies WHERE ? IS NULL OR url = ?", (url, url))
            conn.execute("DELETE FROM skip_requests WHERE ? IS NULL OR url = ?", (url, url))
        return skips
