"""The block tables of an index file, and the rows that tie a page to them.

Each table of the block plan (see :mod:`scrapy_simhash.index.blocks`) is a ``WITHOUT ROWID``
table of one column, ``pfp``: the page's fingerprint with its bits permuted so that the
table's key bits come first. Pages sharing a key then lie in one range of the primary key,
and a probe is one range search per table. A row holds the whole fingerprint (permuted),
so a candidate's distance is computed from the row itself (the Hamming distance does not
change when both sides are permuted alike) and no page id is stored: the few candidates
within the distance are then looked up in ``pages`` by fingerprint. A fingerprint stored
under several keys (possible through ``add_pages``) has one row, removed with its last page.

The permutation takes the key's blocks from the most significant down, then the other
blocks the same way. For the plan's last table, keyed on the most significant blocks, that
is the identity: the index on ``pages.fingerprint``, needed anyway to find a page by its
fingerprint, serves as that table, which is therefore not stored twice.

``page_keys(key_hash, page_id)`` finds the entry stored under a key: a 32-bit hash of the
key instead of an index on the text (12 bytes a page instead of 40 or more with URLs);
the key itself is compared on every hit, so a collision costs one row read, never a wrong
answer.

A key is stored in two parts (see :func:`split_key`): its site, ``https://host/``, once in
``sites``, and the rest in ``pages.path``; the view ``page_view`` puts them together again.
The pages of a crawl share a handful of sites, so a page's row is some 20 bytes shorter.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterable

from ..blocks import BlockPlan

MASK64 = (1 << 64) - 1
#: The ``WHERE`` clause selecting the pages stored under a key; arguments: its
#: :func:`key_hash`, the key.
PAGES_BY_KEY = "id IN (SELECT page_id FROM page_keys WHERE key_hash = ?) AND key = ?"
#: The pages with their keys put together again.
PAGE_VIEW = (
    "CREATE VIEW page_view AS SELECT pages.id AS id, fingerprint, prefix || path AS key, "
    "added_at FROM pages JOIN sites ON sites.id = pages.site"
)
PAGES_TABLE = (
    "CREATE TABLE pages (id INTEGER PRIMARY KEY, fingerprint INTEGER NOT NULL, "
    "site INTEGER NOT NULL, path TEXT NOT NULL, added_at REAL NOT NULL)"
)
_SIGN = 1 << 63


def to_signed64(value: int) -> int:
    """Store an unsigned 64-bit value in SQLite's signed INTEGER."""
    return value - (1 << 64) if value >= _SIGN else value


def from_signed64(value: int) -> int:
    return value + (1 << 64) if value < 0 else value


def key_hash(key: str) -> int:
    """The 32-bit hash ``page_keys`` stores for *key* (signed, so SQLite stores 4 bytes)."""
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=4).digest()
    return int.from_bytes(digest, "little", signed=True)


def split_key(key: str) -> tuple[str, str]:
    """*key* as ``(site, path)``: the site is the key up to the first ``/`` after its
    ``://`` (``https://example.com/``), or empty for a key that is not such a URL.
    Lossless: ``site + path == key``."""
    start = key.find("://")
    if start < 0:
        return "", key
    end = key.find("/", start + 3)
    if end < 0:
        return key, ""
    return key[: end + 1], key[end + 1 :]


def site_id(conn: sqlite3.Connection, site: str) -> int:
    """The id of *site* in ``sites``, added if new (inside the caller's transaction: not
    cached, so that a rolled-back site is never used)."""
    row = conn.execute("SELECT id FROM sites WHERE prefix = ?", (site,)).fetchone()
    if row:
        return row[0]
    return conn.execute("INSERT INTO sites (prefix) VALUES (?)", (site,)).lastrowid


class BlockTables:
    """The stored tables of *plan*: permutations, probe SQL and the rows of a page."""

    def __init__(self, plan: BlockPlan) -> None:
        self.plan = plan
        count = plan.table_count
        #: The stored tables: every table of the plan but the last (``pages.fingerprint``).
        self.names = tuple(f"block_{t}" for t in range(count - 1))
        #: For each table: (source shift, mask, destination shift) of each block.
        self._moves: list[list[tuple[int, int, int]]] = []
        #: For each table: the bits of a permuted fingerprint below its key.
        self._low_bits: list[int] = []
        #: For each table: (block, destination shift) of each block, for probe().
        self._targets: list[list[tuple[int, int]]] = []
        self._spans = [(shift, (1 << width) - 1) for shift, width in plan.spans]
        for table in plan.tables:
            rest = [b for b in range(plan.blocks) if b not in table]
            order = sorted(table, reverse=True) + sorted(rest, reverse=True)
            moves, top = [], plan.bits
            for block in order:
                shift, width = plan.spans[block]
                top -= width
                moves.append((shift, (1 << width) - 1, top))
            self._moves.append(moves)
            targets = [(block, to) for block, (_, _, to) in zip(order, moves, strict=True)]
            self._targets.append(targets)
            self._low_bits.append(plan.bits - sum(plan.spans[b][1] for b in table))
        self._probe = self._compile_probe()
        identity = [(shift, (1 << width) - 1, shift) for shift, width in plan.spans]
        assert sorted(self._moves[-1]) == sorted(identity), "the last table is pages itself"
        selects = [
            f"SELECT {t}, pfp FROM {name} WHERE pfp BETWEEN ? AND ?"
            for t, name in enumerate(self.names)
        ]
        selects.append(
            f"SELECT {count - 1}, fingerprint FROM pages WHERE fingerprint BETWEEN ? AND ?"
        )
        #: One range search per table; every one on a primary key or index (see the tests).
        self.probe_sql = " UNION ALL ".join(selects)

    def permute(self, fingerprint: int, table: int) -> int:
        value = 0
        for shift, mask, to in self._moves[table]:
            value |= ((fingerprint >> shift) & mask) << to
        return value

    def unpermute(self, value: int, table: int) -> int:
        fingerprint = 0
        for shift, mask, to in self._moves[table]:
            fingerprint |= ((value >> to) & mask) << shift
        return fingerprint

    def probe(self, fingerprint: int) -> tuple[list[int], list[int]]:
        """The permuted *fingerprint* of each table (unsigned) and the probe's arguments:
        the range of each table's key (signed, as stored)."""
        return self._probe(fingerprint)

    def _compile_probe(self) -> Callable[[int], tuple[list[int], list[int]]]:
        """:meth:`probe` as straight-line code for this plan: every check runs it, and
        it is 3-4 times faster than loops over the tables and blocks (40 us for 10 tables
        on the benchmark machine, as much as the SQL of the probe)."""
        lines = ["def probe(fp):"]
        lines += [f"    p{b} = (fp >> {s}) & {m}" for b, (s, m) in enumerate(self._spans)]
        ranges = []
        for t, (targets, low) in enumerate(zip(self._targets, self._low_bits, strict=True)):
            lines.append(f"    v{t} = " + " | ".join(f"(p{b} << {to})" for b, to in targets))
            # The key is at least one bit wide, so a range never crosses the sign bit.
            lines.append(
                f"    s{t} = (v{t} >> {low} << {low}) - ({1 << 64} if v{t} >= {_SIGN} else 0)"
            )
            ranges += [f"s{t}", f"s{t} | {(1 << low) - 1}"]
        values = ", ".join(f"v{t}" for t in range(len(self._targets)))
        lines.append(f"    return [{values}], [{', '.join(ranges)}]")
        namespace: dict = {}
        exec("\n".join(lines), namespace)  # the source is made of integers only
        return namespace["probe"]

    def candidates(
        self, rows: Iterable[tuple[int, int]], permuted: list[int], max_distance: int
    ) -> set[int]:
        """The fingerprints (unsigned) of the probe's *rows* within *max_distance*: the
        distance is taken between permuted values, and only those within are inverted.
        At 10M pages with 4 tables a probe returns hundreds of rows; this loop is then most
        of the cost of a lookup."""
        found = set()
        # value is signed, permuted[table] unsigned: XOR masked to 64 bits is the same.
        for table, value in rows:
            if ((value ^ permuted[table]) & MASK64).bit_count() <= max_distance:
                found.add(self.unpermute(value & MASK64, table))
        return found

    def stored_rows(self, fingerprint: int) -> list[tuple[str, int]]:
        """``(table name, pfp)`` of *fingerprint* in each stored table."""
        return [
            (name, to_signed64(self.permute(fingerprint, t))) for t, name in enumerate(self.names)
        ]

    def add(self, conn: sqlite3.Connection, fingerprint: int, key: str, added_at: float) -> int:
        """Store a page with its key; the triggers of :meth:`install` add its table rows.
        Returns the page's id."""
        site, path = split_key(key)
        page_id = conn.execute(
            "INSERT INTO pages (fingerprint, site, path, added_at) VALUES (?, ?, ?, ?)",
            (to_signed64(fingerprint), site_id(conn, site), path, added_at),
        ).lastrowid
        conn.execute(
            "INSERT INTO page_keys (key_hash, page_id) VALUES (?, ?)", (key_hash(key), page_id)
        )
        return page_id

    def add_many(self, conn: sqlite3.Connection, pages: list[tuple[int, int, str, float]]) -> None:
        """:meth:`add` for ``(page id, signed fingerprint, key, added_at)`` rows, two
        statements for all (restoring an export: 20% faster than one page at a time)."""
        sites: dict[str, int] = {}  # inside one transaction: ids it added are valid in it
        rows, keys = [], []
        for page_id, fingerprint, key, added_at in pages:
            site, path = split_key(key)
            if site not in sites:
                sites[site] = site_id(conn, site)
            rows.append((page_id, fingerprint, sites[site], path, added_at))
            keys.append((key_hash(key), page_id))
        conn.executemany(
            "INSERT INTO pages (id, fingerprint, site, path, added_at) VALUES (?, ?, ?, ?, ?)", rows
        )
        conn.executemany("INSERT INTO page_keys (key_hash, page_id) VALUES (?, ?)", keys)

    def remove(self, conn: sqlite3.Connection, doomed: list[tuple[int, int, str]]) -> None:
        """Remove the pages ``(id, signed fingerprint, key)`` with their key rows; the
        triggers of :meth:`install` remove the table rows of a fingerprint's last page."""
        conn.executemany(
            "DELETE FROM page_keys WHERE key_hash = ? AND page_id = ?",
            [(key_hash(key), page_id) for page_id, _, key in doomed],
        )
        conn.executemany("DELETE FROM pages WHERE id = ?", [(page_id,) for page_id, _, _ in doomed])

    def install(self, conn: sqlite3.Connection) -> None:
        """Triggers of this connection (``TEMP``: not stored in the file) that keep the
        block tables in step with ``pages``: a page's rows are added with it, and removed
        with the last page of their fingerprint. Computed in SQL, the rows of a check cost
        one statement instead of one per table (with 10 tables, 10-15% of a check)."""
        added = [
            f"INSERT OR IGNORE INTO {name} (pfp) "
            f"VALUES ({self.permutation_sql(t, 'NEW.fingerprint')});"
            for t, name in enumerate(self.names)
        ]
        removed = [
            f"DELETE FROM {name} WHERE pfp = {self.permutation_sql(t, 'OLD.fingerprint')};"
            for t, name in enumerate(self.names)
        ]
        conn.execute("DROP TRIGGER IF EXISTS temp.simhash_page_added")
        conn.execute("DROP TRIGGER IF EXISTS temp.simhash_page_removed")
        if not self.names:
            return
        conn.execute(
            "CREATE TEMP TRIGGER simhash_page_added AFTER INSERT ON main.pages BEGIN "
            + " ".join(added)
            + " END"
        )
        conn.execute(
            "CREATE TEMP TRIGGER simhash_page_removed AFTER DELETE ON main.pages WHEN NOT "
            "EXISTS (SELECT 1 FROM pages WHERE fingerprint = OLD.fingerprint) BEGIN "
            + " ".join(removed)
            + " END"
        )

    def permutation_sql(self, table: int, column: str) -> str:
        """SQL computing the permuted value (signed) of *column* for *table*."""
        return " | ".join(
            f"((({column} >> {shift}) & {mask}) << {to})" for shift, mask, to in self._moves[table]
        )

    def create(self, conn: sqlite3.Connection) -> None:
        """Create ``page_keys`` and the block tables (empty)."""
        conn.execute("CREATE INDEX pages_fingerprint ON pages (fingerprint)")
        conn.execute(
            "CREATE TABLE page_keys (key_hash INTEGER NOT NULL, page_id INTEGER NOT NULL, "
            "PRIMARY KEY (key_hash, page_id)) WITHOUT ROWID"
        )
        for name in self.names:
            conn.execute(f"CREATE TABLE {name} (pfp INTEGER PRIMARY KEY) WITHOUT ROWID")

    def fill(self, conn: sqlite3.Connection) -> None:
        """Fill ``page_keys`` and the block tables from ``pages`` (upgrading a file, or
        loading one in bulk), in key order: SQLite sorts, in bounded memory."""
        conn.create_function("simhash_key_hash", 1, key_hash, deterministic=True)
        conn.execute(
            "INSERT INTO page_keys (key_hash, page_id) "
            "SELECT simhash_key_hash(key), id FROM page_view ORDER BY 1, 2"
        )
        for t, name in enumerate(self.names):
            conn.execute(
                f"INSERT OR IGNORE INTO {name} (pfp) "
                f"SELECT DISTINCT {self.permutation_sql(t, 'fingerprint')} FROM pages ORDER BY 1"
            )

    def missing(self, conn: sqlite3.Connection) -> list[str]:
        """The block tables the database lacks."""
        present = {
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'block%'"
            )
        }
        return [f"the table {name}" for name in self.names if name not in present]
