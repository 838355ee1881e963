"""Where an index keeps its URL rules (see :mod:`scrapy_simhash.url_rules`) and the requests
they skipped: beside the pages, so that every process of a crawl and every later crawl
shares them.

Outside the index's versioned layout, as the crawl journal is: the SQLite tables and the
Redis keys are made by the first write, an index without them simply has no rules, and a
store of an index opened read-only never writes. The store counts evidence; whether a rule
is confirmed is :func:`scrapy_simhash.url_rules.confirmed`'s to say.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from ..url_rules import (
    MAX_RULES_PER_SITE,
    Evidence,
    apply,
    candidates,
    learned,
    site,
)


@dataclass(frozen=True)
class SkippedRequest:
    """A request not downloaded: *rule* (one or more, joined by ``+``) mapped *url* to
    *target*, a page kept in the index."""

    url: str
    site: str
    rule: str
    target: str
    at: float


class SkipRuleStore(Protocol):
    def add(
        self, site: str, rules: Iterable[str], *, observations: int = 0, distinct: int = 0
    ) -> None:
        """Add evidence for each of *rules* on *site*; a new rule beyond
        :data:`~scrapy_simhash.url_rules.MAX_RULES_PER_SITE` of its site is ignored."""

    def rules(self, site: str | None = None) -> dict[tuple[str, str], Evidence]:
        """(site, rule) -> evidence, of one site or all."""

    def remove(self, rule: str, site: str | None = None) -> int:
        """Forget *rule* (on *site*, or on every site); return how many were removed."""

    def record_skip(self, skipped: SkippedRequest) -> None:
        """Keep *skipped* (the latest skip of a URL), and count it for its rules."""

    def skipped(self) -> list[SkippedRequest]:
        """The requests skipped, oldest first."""

    def record_copy(self, url: str, kept: str, rule: str = "") -> None:
        """Keep that the page of *url* is a copy of the page stored under *kept*: dropped
        as one (*rule* empty), or predicted by *rule* from *kept*'s URL."""

    def predict_copies(self, kept: str, targets: dict[str, str]) -> None:
        """Keep, for each rule -> URL of *targets*, that the rule (once confirmed) predicts
        the page of that URL to be a copy of the page stored under *kept*; a URL known
        already keeps what is known of it."""

    def copy_of(self, url: str) -> tuple[str, str] | None:
        """(kept URL, rule) of the page *url* is a copy of (see :meth:`record_copy`)."""

    def forget_url(self, url: str | None = None) -> int:
        """Forget the skip and the copy of *url* (of every URL with ``None``); return how
        many skips were forgotten."""


class MemorySkipRules:
    """The store of a :class:`~scrapy_simhash.index.memory.MemoryIndex` (one process)."""

    def __init__(self) -> None:
        self._rules: dict[tuple[str, str], Evidence] = {}
        self._per_site: dict[str, int] = {}
        self._skipped: dict[str, SkippedRequest] = {}
        self._copies: dict[str, tuple[str, str]] = {}

    def add(
        self, site: str, rules: Iterable[str], *, observations: int = 0, distinct: int = 0
    ) -> None:
        for rule in rules:
            old = self._rules.get((site, rule))
            if old is None:
                if self._per_site.get(site, 0) >= MAX_RULES_PER_SITE:
                    continue
                self._per_site[site] = self._per_site.get(site, 0) + 1
                old = Evidence()
            self._rules[site, rule] = Evidence(
                old.observations + observations, old.distinct + distinct, old.skipped
            )

    def rules(self, site: str | None = None) -> dict[tuple[str, str], Evidence]:
        return {k: v for k, v in self._rules.items() if site is None or k[0] == site}

    def remove(self, rule: str, site: str | None = None) -> int:
        gone = [k for k in self._rules if k[1] == rule and (site is None or k[0] == site)]
        for key in gone:
            del self._rules[key]
            self._per_site[key[0]] -= 1
        return len(gone)

    def record_skip(self, skipped: SkippedRequest) -> None:
        self._skipped.pop(skipped.url, None)
        self._skipped[skipped.url] = skipped
        for rule in skipped.rule.split("+"):
            old = self._rules.get((skipped.site, rule))
            if old is not None:
                self._rules[skipped.site, rule] = Evidence(
                    old.observations, old.distinct, old.skipped + 1
                )

    def skipped(self) -> list[SkippedRequest]:
        return list(self._skipped.values())

    def record_copy(self, url: str, kept: str, rule: str = "") -> None:
        self._copies[url] = (kept, rule)

    def predict_copies(self, kept: str, targets: dict[str, str]) -> None:
        for rule, url in targets.items():
            self._copies.setdefault(url, (kept, rule))

    def copy_of(self, url: str) -> tuple[str, str] | None:
        return self._copies.get(url)

    def forget_url(self, url: str | None = None) -> int:
        if url is None:
            count = len(self._skipped)
            self._skipped.clear()
            self._copies.clear()
            return count
        self._copies.pop(url, None)
        return 1 if self._skipped.pop(url, None) is not None else 0


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


class RedisSkipRules:
    """Two hashes under a Redis index's hash tag (one slot, also of a spread index):
    ``{prefix}:skip:rules`` (site and rule -> evidence) and ``{prefix}:skip:requests``."""

    _SEP = "\x1f"

    def __init__(self, index: Any) -> None:
        self.index = index
        self._rules_key = f"{index._tag}:skip:rules"
        self._requests_key = f"{index._tag}:skip:requests"
        self._copies_key = f"{index._tag}:skip:copies"

    @property
    def _client(self) -> Any:
        return self.index._client

    def add(
        self, site: str, rules: Iterable[str], *, observations: int = 0, distinct: int = 0
    ) -> None:
        rules = list(rules)
        if not rules:
            return
        with self.index._errors("record URL rule evidence"):
            known = self.rules(site)
            room = MAX_RULES_PER_SITE - len(known)
            pipe = self._client.pipeline(transaction=False)
            for rule in rules:
                if (site, rule) not in known:
                    if room <= 0:
                        continue
                    room -= 1
                field = f"{site}{self._SEP}{rule}{self._SEP}"
                if observations:
                    pipe.hincrby(self._rules_key, field + "o", observations)
                if distinct:
                    pipe.hincrby(self._rules_key, field + "d", distinct)
            pipe.execute()

    def rules(self, site: str | None = None) -> dict[tuple[str, str], Evidence]:
        with self.index._errors("read the URL rules"):
            stored = self._client.hgetall(self._rules_key)
        counts: dict[tuple[str, str], dict[str, int]] = {}
        for field, value in stored.items():
            field = field.decode() if isinstance(field, bytes) else field
            rule_site, rule, what = field.split(self._SEP)
            if site is None or rule_site == site:
                counts.setdefault((rule_site, rule), {})[what] = int(value)
        return {k: Evidence(c.get("o", 0), c.get("d", 0), c.get("k", 0)) for k, c in counts.items()}

    def remove(self, rule: str, site: str | None = None) -> int:
        gone = [k for k in self.rules(site) if k[1] == rule]
        if gone:
            with self.index._errors("remove a URL rule"):
                self._client.hdel(
                    self._rules_key,
                    *(f"{s}{self._SEP}{r}{self._SEP}{w}" for s, r in gone for w in "odk"),
                )
        return len(gone)

    def record_skip(self, skipped: SkippedRequest) -> None:
        s = skipped
        with self.index._errors("record a skipped request"):
            pipe = self._client.pipeline(transaction=False)
            pipe.hset(
                self._requests_key,
                s.url,
                json.dumps({"site": s.site, "rule": s.rule, "target": s.target, "at": s.at}),
            )
            for rule in s.rule.split("+"):
                pipe.hincrby(self._rules_key, f"{s.site}{self._SEP}{rule}{self._SEP}k", 1)
            pipe.execute()

    def skipped(self) -> list[SkippedRequest]:
        with self.index._errors("read the skipped requests"):
            stored = self._client.hgetall(self._requests_key)
        found = []
        for url, value in stored.items():
            url = url.decode() if isinstance(url, bytes) else url
            record = json.loads(value)
            found.append(
                SkippedRequest(url, record["site"], record["rule"], record["target"], record["at"])
            )
        return sorted(found, key=lambda s: s.at)

    def record_copy(self, url: str, kept: str, rule: str = "") -> None:
        with self.index._errors("record a copy"):
            self._client.hset(self._copies_key, url, f"{kept}{self._SEP}{rule}")

    def predict_copies(self, kept: str, targets: dict[str, str]) -> None:
        if targets:
            with self.index._errors("record predicted copies"):
                pipe = self._client.pipeline(transaction=False)
                for rule, url in targets.items():
                    pipe.hsetnx(self._copies_key, url, f"{kept}{self._SEP}{rule}")
                pipe.execute()

    def copy_of(self, url: str) -> tuple[str, str] | None:
        with self.index._errors("read the copies"):
            value = self._client.hget(self._copies_key, url)
        if value is None:
            return None
        value = value.decode() if isinstance(value, bytes) else value
        kept, _, rule = value.partition(self._SEP)
        return kept, rule

    def forget_url(self, url: str | None = None) -> int:
        with self.index._errors("forget skipped requests"):
            if url is not None:
                self._client.hdel(self._copies_key, url)
                return int(self._client.hdel(self._requests_key, url))
            count = int(self._client.hlen(self._requests_key))
            self._client.delete(self._requests_key, self._copies_key)
            return count


def skip_rules_for(index: Any) -> SkipRuleStore:
    """The store of *index*'s backend: beside its pages (one per index object)."""
    store = getattr(index, "_skip_rules", None)
    if store is not None:
        return store
    module = type(index).__module__
    if module.startswith("scrapy_simhash.index.sqlite"):
        store = SqliteSkipRules(index)
    elif module.startswith("scrapy_simhash.index.redis"):
        store = RedisSkipRules(index)
    elif module.startswith("scrapy_simhash.index.memory"):
        store = MemorySkipRules()
    else:
        raise TypeError(f"No URL rules for {type(index).__name__}")
    index._skip_rules = store
    return store


_NONE = Evidence()


def learn(index: Any, url: str, copy_of: str | None) -> None:
    """Record what the page of *url* teaches *index*'s URL rules. In the index's thread,
    after the check.

    Dropped as a copy of the page stored under *copy_of*: one observation of each rule
    that maps either URL to the other (a copy's URL and its original's name the same
    page, whichever came first). Kept as distinct (*copy_of* ``None``): a distinct page
    against each rule that maps *url* to a stored page, or that predicted *url* to be a
    copy; and each other rule of the site that maps *url* to a URL predicts that URL to be
    a copy of this page (the middleware uses the prediction only while the rule is
    confirmed)."""
    store = skip_rules_for(index)
    where = site(url)
    if copy_of is not None:
        rules = list(dict.fromkeys(learned(url, copy_of) + learned(copy_of, url)))
        if rules:
            store.add(where, rules, observations=1)
        store.record_copy(url, copy_of)  # a variant of *url* is then a copy too
        return
    known = store.rules(where)
    targets = dict(candidates(url))
    for _, rule in known:
        if rule not in targets:
            target = apply(rule, url)
            if target is not None:
                targets[rule] = target
    stored: dict[str, bool] = {}
    wrong = []
    for rule, target in targets.items():
        if target != url:
            if target not in stored:
                stored[target] = bool(index.find(target))
            if stored[target]:
                wrong.append(rule)
    predicted = store.copy_of(url)
    if predicted is not None and predicted[1]:
        wrong.append(predicted[1])  # it predicted a copy, and this page is distinct
    if wrong:
        store.add(where, list(dict.fromkeys(wrong)), distinct=1)
    # Each rule the site has shown that maps *url* to a URL not stored predicts that URL to
    # be a copy of this page: used once the rule is confirmed (then or later), retired by a
    # distinct page. (Only rules shown: a site without variants stores no predictions.)
    store.predict_copies(
        url,
        {
            rule: target
            for rule, target in targets.items()
            if target != url
            and not stored[target]
            and rule not in wrong
            and known.get((where, rule), _NONE).observations
        },
    )
