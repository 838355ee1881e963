"""The URL rules of a SQLite index (see :mod:`scrapy_simhash.index.skip_rules`): three
tables of its file, made by the first write."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from ...url_rules import MAX_RULES_PER_SITE, Evidence, SkippedRequest


class SqliteSkipRules:
    """Two tables of a SQLite index's file: ``skip_rules`` and ``skip_requests``."""

    def __init__(self, index: Any) -> None:
        self.index = index
        self._made = False

    def _write(self, doing: str, statements: list[tuple[str, tuple]]) -> int:
        index = self.index
        changed = 0
        with index._errors(doing), index._transaction():
            if not self._made:
                index._conn.execute(
                    "CREATE TABLE IF NOT EXISTS skip_rules (site TEXT NOT NULL, "
                    "rule TEXT NOT NULL, observations INTEGER NOT NULL DEFAULT 0, "
                    "distinct_pages INTEGER NOT NULL DEFAULT 0, "
                    "skipped INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (site, rule)) WITHOUT ROWID"
                )
                index._conn.execute(
                    "CREATE TABLE IF NOT EXISTS skip_requests (url TEXT PRIMARY KEY, "
                    "site TEXT NOT NULL, rule TEXT NOT NULL, target TEXT NOT NULL, "
                    "at REAL NOT NULL)"
                )
                index._conn.execute(
                    "CREATE TABLE IF NOT EXISTS skip_copies (url TEXT PRIMARY KEY, "
                    "kept TEXT NOT NULL, rule TEXT NOT NULL)"
                )
            for sql, values in statements:
                changed += max(index._conn.execute(sql, values).rowcount, 0)
        self._made = True
        return changed

    def _read(self, sql: str, values: tuple = ()) -> list[tuple]:
        with self.index._errors("read the URL rules"):
            try:
                return self.index._conn.execute(sql, values).fetchall()
            except sqlite3.OperationalError as e:
                if "no such table" in str(e):
                    return []  # an index no crawl with SIMHASH_SKIP_PREDICTED wrote to
                raise

    def add(
        self, site: str, rules: Iterable[str], *, observations: int = 0, distinct: int = 0
    ) -> None:
        statements = []
        for rule in rules:
            statements.append(
                (
                    "UPDATE skip_rules SET observations = observations + ?, "
                    "distinct_pages = distinct_pages + ? WHERE site = ? AND rule = ?",
                    (observations, distinct, site, rule),
                )
            )
            statements.append(
                (
                    "INSERT OR IGNORE INTO skip_rules (site, rule, observations, "
                    "distinct_pages) SELECT ?, ?, ?, ? WHERE (SELECT COUNT(*) FROM skip_rules "
                    "WHERE site = ?) < ?",
                    (site, rule, observations, distinct, site, MAX_RULES_PER_SITE),
                )
            )
        if statements:
            # The INSERT after the UPDATE: it adds a row only where the UPDATE found none
            # (a row it found is the one the INSERT would collide with).
            self._write("record URL rule evidence", statements)

    def rules(self, site: str | None = None) -> dict[tuple[str, str], Evidence]:
        where, values = ("WHERE site = ?", (site,)) if site is not None else ("", ())
        rows = self._read(
            f"SELECT site, rule, observations, distinct_pages, skipped FROM skip_rules {where}",
            values,
        )
        return {(s, r): Evidence(o, d, k) for s, r, o, d, k in rows}

    def remove(self, rule: str, site: str | None = None) -> int:
        if not self.rules(site):
            return 0
        where = "rule = ?" + (" AND site = ?" if site is not None else "")
        values = (rule,) if site is None else (rule, site)
        return self._write("remove a URL rule", [(f"DELETE FROM skip_rules WHERE {where}", values)])

    def record_skip(self, skipped: SkippedRequest) -> None:
        s = skipped
        statements = [
            (
                "INSERT OR REPLACE INTO skip_requests (url, site, rule, target, at) "
                "VALUES (?, ?, ?, ?, ?)",
                (s.url, s.site, s.rule, s.target, s.at),
            )
        ]
        for rule in s.rule.split("+"):
            statements.append(
                (
                    "UPDATE skip_rules SET skipped = skipped + 1 WHERE site = ? AND rule = ?",
                    (s.site, rule),
                )
            )
        self._write("record a skipped request", statements)

    def skipped(self) -> list[SkippedRequest]:
        rows = self._read("SELECT url, site, rule, target, at FROM skip_requests ORDER BY at")
        return [SkippedRequest(*row) for row in rows]

    def record_copy(self, url: str, kept: str, rule: str = "") -> None:
        self._write(
            "record a copy",
            [
                (
                    "INSERT OR REPLACE INTO skip_copies (url, kept, rule) VALUES (?, ?, ?)",
                    (url, kept, rule),
                )
            ],
        )

    def predict_copies(self, kept: str, targets: dict[str, str]) -> None:
        if targets:
            self._write(
                "record predicted copies",
                [
                    (
                        "INSERT OR IGNORE INTO skip_copies (url, kept, rule) VALUES (?, ?, ?)",
                        (url, kept, rule),
                    )
                    for rule, url in targets.items()
                ],
            )

    def copy_of(self, url: str) -> tuple[str, str] | None:
        rows = self._read("SELECT kept, rule FROM skip_copies WHERE url = ?", (url,))
        return (rows[0][0], rows[0][1]) if rows else None

    def forget_url(self, url: str | None = None) -> int:
        if not self._read("SELECT name FROM sqlite_master WHERE name = 'skip_copies'"):
            return 0  # nothing to forget: no table made on an index that has none
        if url is None:
            statements = [("DELETE FROM skip_copies", ()), ("DELETE FROM skip_requests", ())]
        else:
            statements = [
                ("DELETE FROM skip_copies WHERE url = ?", (url,)),
                ("DELETE FROM skip_requests WHERE url = ?", (url,)),
            ]
        skips = self._read(
            "SELECT COUNT(*) FROM skip_requests" + (" WHERE url = ?" if url else ""),
            (url,) if url else (),
        )
        self._write("forget skipped requests", statements)
        return skips[0][0]
