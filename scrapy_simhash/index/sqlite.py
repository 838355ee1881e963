"""The embedded default: one SQLite file, safe for several processes at once.

Layout (created and migrated with sqlite-utils)::

    simhash_meta(name PRIMARY KEY, value)           index parameters, created_at
    pages(id PRIMARY KEY, fingerprint, key, added_at)     one row per kept page
    block_keys(tbl, bkey, page_id, fingerprint)     one row per page and table, WITHOUT ROWID,
                                                    primary key (tbl, bkey, page_id)
    exact_texts(digest PRIMARY KEY, key, added_at)  short texts, matched exactly
    drops(id PRIMARY KEY, key, kept_key, distance, exact, at)   the audit log of drops

Fingerprints and keys are stored as signed 64-bit integers (SQLite has no unsigned type).
``block_keys`` repeats the fingerprint so that a probe is answered from the primary key
alone, without a lookup into ``pages`` for every candidate.

Check-and-insert is one ``BEGIN IMMEDIATE`` transaction: of two processes seeing
near-duplicate pages at the same moment, the second waits for the first to commit and
then finds its page. WAL mode lets readers go on meanwhile; every transaction is short,
so the write-ahead log is checkpointed as it goes and truncated on close.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sqlite3
import time
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path

import sqlite_utils

from ..exceptions import (
    ConfigurationError,
    IndexCorrupt,
    IndexNotFound,
    IndexUnavailable,
    Interrupted,
    NotAnIndex,
    UnsupportedIndexURI,
)
from ..features import DEFAULT_FEATURES
from .base import (
    DropRecord,
    IndexBase,
    IndexParameters,
    Match,
    RequestedParameters,
    StoredPage,
    nearest,
    storable_key,
    storable_pages,
)
from .sqlite_layout import missing_layout, sqlite_file_uri
from .uri import path_and_options

#: Marks our files (``PRAGMA application_id``), so another application's database is
#: recognised and left alone. The bytes spell "SmHs".
APPLICATION_ID = 0x536D4873
#: ``PRAGMA user_version``: bumped with every change of the layout above.
SCHEMA_VERSION = 1
SQLITE_HEADER = b"SQLite format 3\x00"
SYNCHRONOUS_MODES = ("OFF", "NORMAL", "FULL", "EXTRA")
#: Page cache per connection, in KiB. SQLite's default (2 MB) holds too little of the upper
#: b-tree levels of a large index: at 1M pages this halves p99 check-and-insert latency.
CACHE_KIB = 32 * 1024
#: Size of the write-ahead log, in pages, at which a commit checkpoints it (copies it into
#: the database file). SQLite's default, 1000, makes every ~90th check-and-insert at 10M
#: pages with 10 tables wait ~15 ms for a checkpoint: that was the whole p99 latency. Fewer,
#: larger checkpoints cost less in total; the log stays bounded (16 MB with 4 KB pages).
AUTOCHECKPOINT_PAGES = 4000
#: Pages per transaction of long maintenance (expire, import, forget, pruning the audit
#: log): each batch is committed whole or not at all, and between two the write lock is
#: free, so that a crawl on the same index waits for one batch, not for the whole command.
BATCH_PAGES = 10_000
#: Pause between two batches, in seconds: longer than SQLite's busy handler sleeps between
#: two attempts (at most 100 ms), so that a process waiting for the lock gets it.
BATCH_PAUSE = 0.1

_SIGN = 1 << 63
_MASK64 = (1 << 64) - 1


def to_signed64(value: int) -> int:
    """Store an unsigned 64-bit value in SQLite's signed INTEGER."""
    return value - (1 << 64) if value >= _SIGN else value


def from_signed64(value: int) -> int:
    return value + (1 << 64) if value < 0 else value


def sqlite_path(uri: str) -> str:
    """The file path of a ``sqlite:///...`` URI or a plain path, exactly as written.

    ``sqlite:///crawl.db`` is ``crawl.db`` (relative), ``sqlite:////data/crawl.db`` is
    ``/data/crawl.db``. Nothing is resolved, expanded or unquoted; a ``?`` belongs to the
    path unless what follows it is options (``name=value&...``).
    """
    path = path_and_options(uri)[0]
    if path.lower().startswith("sqlite:"):
        rest = path[len("sqlite:") :]
        if not rest.startswith("///"):
            raise UnsupportedIndexURI(
                f"{uri!r} is not a SQLite index URI; write sqlite:///relative/path.db or "
                "sqlite:////absolute/path.db"
            )
        path = rest[3:]
    if not path:
        raise UnsupportedIndexURI(f"{uri!r} names no file; write sqlite:///path/to/index.db")
    return path


class SqliteIndex(IndexBase):
    """A near-duplicate index in one SQLite file.

    *path* is used as given (relative to the working directory unless absolute). A missing
    file is created when *create* is true; an existing one must be a scrapy-simhash index
    with matching parameters. *synchronous* is SQLite's setting: ``NORMAL`` (default)
    survives any crash of the process, ``FULL`` also a power cut, at a cost in commits per
    second. *timeout* is how long a write waits for another process's transaction.
    *read_only* opens an existing index without writing anything (also on a read-only
    file system). An empty or foreign file is never turned into an index.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_distance: int | None = None,
        blocks: int | None = None,
        features: str | None = None,
        create: bool = True,
        synchronous: str = "NORMAL",
        timeout: float = 30.0,
        read_only: bool = False,
    ) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self.location = str(self.path)
        synchronous = synchronous.upper()
        if synchronous not in SYNCHRONOUS_MODES:
            raise ConfigurationError(
                f"synchronous={synchronous!r} is not one of {', '.join(SYNCHRONOUS_MODES)}"
            )
        self._timeout = timeout
        requested = RequestedParameters(max_distance, blocks, features)
        if not self._check_file(create and not read_only):
            with self._errors("create"):
                self._create_file(requested.for_new_index(DEFAULT_FEATURES))
        self._conn = self._connect()

        def configure_and_load() -> IndexParameters:
            self._check_application()
            if not read_only:
                self._conn.execute(f"PRAGMA synchronous={synchronous}")
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute(f"PRAGMA wal_autocheckpoint={AUTOCHECKPOINT_PAGES}")
            self._conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
            return self._load(requested)

        try:
            with self._errors("open"):
                try:
                    self.parameters = self._retry_while_locked(configure_and_load)
                except sqlite3.OperationalError as e:
                    # A cleanly closed index on a read-only file system: SQLite cannot make
                    # the -shm file a WAL reader needs. With no -wal file no process has the
                    # index open, and none can write it there: read it as immutable.
                    if not (
                        read_only
                        and "unable to open" in str(e)
                        and not os.path.exists(f"{self.path}-wal")
                    ):
                        raise
                    self._conn.close()
                    self._conn = self._connect(immutable=True)
                    self.parameters = configure_and_load()
        except BaseException:
            self._conn.close()
            raise
        self.plan = self.parameters.plan
        self._probe_sql = "SELECT page_id, fingerprint FROM block_keys WHERE " + " OR ".join(
            ["(tbl = ? AND bkey = ?)"] * self.plan.table_count
        )

    @classmethod
    def from_uri(cls, uri: str, **parameters) -> SqliteIndex:
        """Open ``sqlite:///path?synchronous=FULL&timeout=60`` (or a plain path)."""
        options = path_and_options(uri, {"synchronous": str, "timeout": float})[1]
        path = sqlite_path(uri)
        return cls(path, **parameters, **options)

    # -- opening -----------------------------------------------------------------------

    def _connect(self, *, immutable: bool = False) -> sqlite3.Connection:
        """Connect to the existing file: ``mode=rw`` (or ``ro``) never creates one.

        check_same_thread=False: a crawl opens the index on the reactor thread and checks
        pages in a thread of its own, one call at a time, never two at once."""
        mode = "ro" if self.read_only else "rw"
        with self._errors("open"):
            return sqlite3.connect(
                sqlite_file_uri(self.path, mode, immutable),
                uri=True,
                timeout=self._timeout,
                isolation_level=None,
                check_same_thread=False,
            )

    def _check_file(self, create: bool) -> bool:
        """Refuse what cannot be an index; return whether the file exists."""
        if self.path.is_dir():
            raise NotAnIndex(f"{self.path} is a directory; give the path of an index file")
        if not self.path.exists():
            if not create:
                raise IndexNotFound(f"No index at {self.path}")
            if not self.path.parent.is_dir():
                raise IndexUnavailable(
                    f"Cannot create the index {self.path}: directory {self.path.parent} "
                    "does not exist; create it or choose another path"
                )
            return False
        try:
            with self.path.open("rb") as f:
                header = f.read(len(SQLITE_HEADER))
        except OSError as e:
            raise IndexUnavailable(f"Cannot read the index {self.path}: {e.strerror}") from None
        if not header:
            # New indexes appear complete (see _create_file), so an empty file is never
            # one being created: it is an index truncated by a failed copy or a full disk,
            # or a file made by something else.
            raise NotAnIndex(
                f"{self.path} is empty (0 bytes), so not a scrapy-simhash index; it was left "
                "untouched. Restore the index from a backup, or delete the file to start a "
                "new index there."
            )
        if header != SQLITE_HEADER:
            raise NotAnIndex(
                f"{self.path} is not a SQLite file, so not a scrapy-simhash index; it was left "
                "untouched. Point SIMHASH_INDEX_URI at another file."
            )
        return True

    def _create_file(self, parameters: IndexParameters) -> None:
        """Build a new index beside *path* and link it into place: another process sees
        no file or a complete index, never an empty file; of two processes creating the
        same index at once, the first link wins and the other opens that one."""
        temp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        try:
            conn = sqlite3.connect(sqlite_file_uri(temp, "rwc"), uri=True, isolation_level=None)
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("BEGIN IMMEDIATE")
                self._create_schema(conn, parameters)
                conn.execute("COMMIT")
            finally:
                conn.close()
            try:
                os.link(temp, self.path)
            except FileExistsError:
                pass  # created meanwhile by another process: open that one
            except OSError:
                # A file system without hard links: not atomic against another process
                # creating the same index at this very moment, but never overwrites one.
                if not self.path.exists():
                    os.replace(temp, self.path)
        finally:
            for leftover in (temp, Path(f"{temp}-wal"), Path(f"{temp}-shm")):
                with contextlib.suppress(OSError):
                    leftover.unlink()

    def _check_application(self) -> None:
        app_id = self._conn.execute("PRAGMA application_id").fetchone()[0]
        if app_id == APPLICATION_ID:
            return
        if app_id != 0 or self._has_tables():
            raise NotAnIndex(
                f"{self.path} is a SQLite database of another application (application_id "
                f"{app_id:#x}), not a scrapy-simhash index; it was left untouched. Point "
                "SIMHASH_INDEX_URI at another file."
            )
        raise NotAnIndex(
            f"{self.path} is an empty SQLite database, not a scrapy-simhash index; it was left "
            "untouched. Restore the index from a backup, or delete the file to start a new "
            "index there."
        )

    def _has_tables(self) -> bool:
        return self._conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] > 0

    def _retry_while_locked(self, action):
        """Run *action*, again and again while SQLite says "database is locked", until the
        timeout.

        Where waiting could deadlock, SQLite answers "locked" at once instead of calling
        the busy handler: when several processes open a new file together, all but one
        fail to switch it to WAL mode that way. Every step of opening can be repeated.
        """
        deadline = time.monotonic() + self._timeout
        delay = 0.005
        while True:
            try:
                return action()
            except sqlite3.OperationalError as e:
                if "locked" not in str(e).lower() or time.monotonic() >= deadline:
                    raise
            time.sleep(delay)
            delay = min(delay * 2, 0.25)

    def _load(self, requested: RequestedParameters) -> IndexParameters:
        # One read transaction: a consistent view of the layout and parameters.
        with self._transaction(immediate=False):
            version = self._conn.execute("PRAGMA user_version").fetchone()[0]
            if version == 0 and self._has_tables():
                raise IndexUnavailable(
                    f"The index {self.path} has no schema version (an older or unfinished "
                    f"layout; this scrapy-simhash writes version {SCHEMA_VERSION}). It was "
                    "left untouched: open it with the scrapy-simhash that built it, or point "
                    "SIMHASH_INDEX_URI at a new file"
                )
            if 0 < version < SCHEMA_VERSION:
                raise IndexUnavailable(
                    f"The index {self.path} has schema version {version}, older than this "
                    f"scrapy-simhash's ({SCHEMA_VERSION}), and there is no automatic upgrade. "
                    "It was left untouched: export it with the scrapy-simhash that built it "
                    "and import it into a new index"
                )
            if version > SCHEMA_VERSION:
                raise IndexUnavailable(
                    f"The index {self.path} has schema version {version}, newer than this "
                    f"scrapy-simhash knows ({SCHEMA_VERSION}); upgrade scrapy-simhash"
                )
            missing = missing_layout(self._conn)
            if missing:
                raise IndexCorrupt(
                    f"The index {self.path} is damaged: it lacks {', '.join(missing)}. It was "
                    "left untouched: restore it from a backup (scrapy-simhash export/import) "
                    "or use another file"
                )
            meta = dict(self._conn.execute("SELECT name, value FROM simhash_meta"))
        if not self.read_only:
            self._check_writable()
        try:
            stored = IndexParameters(
                int(meta["max_distance"]), int(meta["blocks"]), meta["features"]
            )
        except (KeyError, ValueError):
            raise IndexCorrupt(
                f"The index {self.path} has no valid parameters in simhash_meta; restore it "
                "from a backup or use another file"
            ) from None
        return requested.check(stored, self.location)

    def _check_writable(self) -> None:
        """Fail now, not at the first page of a crawl, if the file cannot be written: a
        write that is rolled back (it never reaches the disk)."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            self._conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        finally:
            self._conn.execute("ROLLBACK")

    @staticmethod
    def _create_schema(conn: sqlite3.Connection, parameters: IndexParameters) -> None:
        db = sqlite_utils.Database(conn)
        db["simhash_meta"].create({"name": str, "value": str}, pk="name")
        db["simhash_meta"].insert_all(
            [
                {"name": "bits", "value": str(parameters.plan.bits)},
                {"name": "max_distance", "value": str(parameters.max_distance)},
                {"name": "blocks", "value": str(parameters.blocks)},
                {"name": "features", "value": parameters.features},
                {"name": "created_at", "value": str(time.time())},
            ]
        )
        db["pages"].create(
            {"id": int, "fingerprint": int, "key": str, "added_at": float},
            pk="id",
            not_null={"fingerprint", "key", "added_at"},
        )
        db["pages"].create_index(["key"])
        # sqlite-utils has no WITHOUT ROWID tables: this one is 40% smaller and its probes
        # read one b-tree instead of two.
        db.execute(
            "CREATE TABLE block_keys (tbl INTEGER NOT NULL, bkey INTEGER NOT NULL, "
            "page_id INTEGER NOT NULL, fingerprint INTEGER NOT NULL, "
            "PRIMARY KEY (tbl, bkey, page_id)) WITHOUT ROWID"
        )
        db["exact_texts"].create(
            {"digest": int, "key": str, "added_at": float},
            pk="digest",
            not_null={"key", "added_at"},
        )
        db["exact_texts"].create_index(["key"])
        db["drops"].create(
            {
                "id": int,
                "key": str,
                "kept_key": str,
                "distance": int,
                "exact": int,
                "at": float,
            },
            pk="id",
            not_null={"key", "kept_key", "distance", "exact", "at"},
        )
        db["drops"].create_index(["at"])
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    # -- errors and transactions -------------------------------------------------------

    @contextlib.contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        """Turn sqlite3's errors into ours, naming the file and what to do."""
        try:
            yield
        except sqlite3.DatabaseError as e:
            message = str(e)
            lowered = message.lower()
            where = f"the index {self.path} ({doing}: {message})"
            if "locked" in lowered or "busy" in lowered:
                raise IndexUnavailable(
                    f"Timed out after {self._timeout:g} s waiting for another process to "
                    f"release {where}"
                ) from None
            if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
                raise IndexCorrupt(
                    f"{where[0].upper()}{where[1:]} is damaged. It was left untouched: restore "
                    "it from a backup (scrapy-simhash export/import) or use another file"
                ) from None
            if "readonly" in lowered or "read-only" in lowered or "unable to open" in lowered:
                raise IndexUnavailable(
                    f"Cannot write {where}: make the file and its directory writable (SQLite "
                    "also writes -wal and -shm files beside it)"
                ) from None
            if "disk is full" in lowered:
                raise IndexUnavailable(
                    f"Cannot write {where}: free some space on its disk; nothing committed was lost"
                ) from None
            if "disk i/o" in lowered:
                raise IndexUnavailable(
                    f"Cannot read or write {where}: check the disk and the file system it is "
                    "on (full, removed, failing?); nothing committed was lost"
                ) from None
            raise IndexUnavailable(f"SQLite failed on {where}") from None

    @contextlib.contextmanager
    def _transaction(self, immediate: bool = True) -> Iterator[None]:
        self._conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
        try:
            yield
            self._conn.execute("COMMIT")
        except BaseException:
            # Also after a failed COMMIT (SQLite keeps the transaction open when it cannot
            # commit yet): rolled back, so the lock is released and the next call works.
            if self._conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.execute("ROLLBACK")
            raise

    # -- the index ---------------------------------------------------------------------

    def _matches(self, fingerprint: int, max_distance: int, first_only: bool) -> list[Match]:
        args: list[int] = []
        for table, key in enumerate(self.plan.keys(fingerprint)):
            args += (table, to_signed64(key))
        # Filtered on the stored (signed) values: XOR of two signed values, masked to 64
        # bits, is the XOR of the unsigned ones. At 10M pages with 4 tables a probe returns
        # hundreds of candidates; this loop is then most of the cost of a lookup.
        signed = to_signed64(fingerprint)
        candidates = [
            (page_id, from_signed64(fp))
            for page_id, fp in self._conn.execute(self._probe_sql, args).fetchall()
            if ((fp ^ signed) & _MASK64).bit_count() <= max_distance
        ]
        found = nearest(fingerprint, candidates, max_distance)
        if first_only:
            found = found[:1]
        if not found:
            return []
        rows = {
            page_id: (key, added_at, from_signed64(fp))
            for page_id, key, added_at, fp in self._conn.execute(
                f"SELECT id, key, added_at, fingerprint FROM pages "
                f"WHERE id IN ({','.join('?' * len(found))})",
                [page_id for _, page_id in found],
            )
        }
        return [Match(rows[i][0], rows[i][2], d, rows[i][1]) for d, i in found if i in rows]

    def query(self, fingerprint: int, max_distance: int | None = None) -> list[Match]:
        k = self._query_distance(max_distance)
        with self._errors("query"):
            return self._matches(fingerprint, k, first_only=False)

    def add_if_new(self, fingerprint: int, key: str) -> Match | None:
        key = storable_key(key)
        with self._errors("add"), self._transaction():
            found = self._matches(fingerprint, self.plan.max_distance, first_only=True)
            if found:
                return found[0]
            signed = to_signed64(fingerprint)
            page_id = self._conn.execute(
                "INSERT INTO pages (fingerprint, key, added_at) VALUES (?, ?, ?)",
                (signed, key, time.time()),
            ).lastrowid
            self._conn.executemany(
                "INSERT INTO block_keys (tbl, bkey, page_id, fingerprint) VALUES (?, ?, ?, ?)",
                [
                    (table, to_signed64(block_key), page_id, signed)
                    for table, block_key in enumerate(self.plan.keys(fingerprint))
                ],
            )
            return None

    def add_exact_if_new(self, digest: int, key: str) -> Match | None:
        key = storable_key(key)
        signed = to_signed64(digest)
        with self._errors("add"), self._transaction():
            row = self._conn.execute(
                "SELECT key, added_at FROM exact_texts WHERE digest = ?", (signed,)
            ).fetchone()
            if row:
                return Match(row[0], digest, 0, row[1])
            self._conn.execute(
                "INSERT INTO exact_texts (digest, key, added_at) VALUES (?, ?, ?)",
                (signed, key, time.time()),
            )
            return None

    def __len__(self) -> int:
        with self._errors("count"):
            (pages,) = self._conn.execute("SELECT count(*) FROM pages").fetchone()
            (exact,) = self._conn.execute("SELECT count(*) FROM exact_texts").fetchone()
        return pages + exact

    # -- maintenance and audit ---------------------------------------------------------

    def record_drop(self, key: str, match: Match, *, exact: bool = False) -> None:
        with self._errors("record a drop"):
            self._conn.execute(
                "INSERT INTO drops (key, kept_key, distance, exact, at) VALUES (?, ?, ?, ?, ?)",
                (storable_key(key), match.key, match.distance, int(exact), time.time()),
            )

    def drops(self, *, since: float | None = None) -> Iterator[DropRecord]:
        sql = "SELECT key, kept_key, distance, exact, at FROM drops"
        args: tuple = ()
        if since is not None:
            sql, args = sql + " WHERE at >= ?", (since,)
        with self._errors("read the drops"):
            rows = self._conn.execute(sql + " ORDER BY at, id", args).fetchall()
        for key, kept_key, distance, exact, at in rows:
            yield DropRecord(key, kept_key, distance, bool(exact), at)

    _PAGES_SQL = (
        "SELECT key, fingerprint, added_at, 0, id FROM pages {where} UNION ALL "
        "SELECT key, digest, added_at, 1, 0 FROM exact_texts {where} ORDER BY 3, 4, 5"
    )

    def _select_pages(self, where: str = "", args: tuple = ()) -> Iterator[StoredPage]:
        with self._errors("read the pages"):
            cursor = self._conn.execute(self._PAGES_SQL.format(where=where), args + args)
        while True:
            with self._errors("read the pages"):
                rows = cursor.fetchmany(10_000)
            if not rows:
                return
            for key, fp, added_at, exact, _ in rows:
                yield StoredPage(key, from_signed64(fp), added_at, bool(exact))

    def pages(self) -> Iterator[StoredPage]:
        return self._select_pages()

    def find(self, key: str) -> list[StoredPage]:
        with self._errors("find"):
            return list(self._select_pages("WHERE key = ?", (storable_key(key),)))

    def add_pages(self, pages: Iterable[StoredPage]) -> int:
        """See :meth:`NearDuplicateIndex.add_pages`. Committed in batches of
        :data:`BATCH_PAGES`; Ctrl-C raises :class:`Interrupted` with how many were added."""
        added = 0
        pages = storable_pages(pages)
        try:
            first = True
            while batch := list(islice(pages, BATCH_PAGES)):
                if not first:
                    time.sleep(BATCH_PAUSE)
                first = False
                with self._errors("add pages"), self._transaction():
                    added += self._add_batch(batch)
        except KeyboardInterrupt:
            raise Interrupted(added) from None
        return added

    def _add_batch(self, batch: list[StoredPage]) -> int:
        (next_id,) = self._conn.execute("SELECT coalesce(max(id), 0) + 1 FROM pages").fetchone()
        page_rows, key_rows, exact_rows = [], [], []
        seen: set[tuple[str, int]] = set()
        for page in batch:
            signed = to_signed64(page.fingerprint)
            if page.exact:
                exact_rows.append((signed, page.key, page.added_at))
                continue
            if (page.key, signed) in seen or self._conn.execute(
                "SELECT 1 FROM pages WHERE key = ? AND fingerprint = ?",
                (page.key, signed),
            ).fetchone():
                continue
            seen.add((page.key, signed))
            page_rows.append((next_id, signed, page.key, page.added_at))
            key_rows += [
                (table, to_signed64(block_key), next_id, signed)
                for table, block_key in enumerate(self.plan.keys(page.fingerprint))
            ]
            next_id += 1
        before = self._conn.total_changes
        self._conn.executemany(
            "INSERT OR IGNORE INTO exact_texts (digest, key, added_at) VALUES (?, ?, ?)",
            exact_rows,
        )
        added = self._conn.total_changes - before + len(page_rows)
        self._conn.executemany(
            "INSERT INTO pages (id, fingerprint, key, added_at) VALUES (?, ?, ?, ?)",
            page_rows,
        )
        self._conn.executemany(
            "INSERT INTO block_keys (tbl, bkey, page_id, fingerprint) VALUES (?, ?, ?, ?)",
            key_rows,
        )
        return added

    def _delete(self, where: str, args: tuple) -> int:
        """Remove the pages *where* says, in batches of :data:`BATCH_PAGES` (each page with
        its table keys); Ctrl-C raises :class:`Interrupted` with how many were removed."""
        removed = 0
        limited = (*args, BATCH_PAGES)
        try:
            while True:
                with self._errors("remove pages"), self._transaction():
                    doomed = self._conn.execute(
                        f"SELECT id, fingerprint FROM pages {where} LIMIT ?", limited
                    ).fetchall()
                    key_rows = [
                        (table, to_signed64(block_key), page_id)
                        for page_id, fp in doomed
                        for table, block_key in enumerate(self.plan.keys(from_signed64(fp)))
                    ]
                    self._conn.executemany(
                        "DELETE FROM block_keys WHERE tbl = ? AND bkey = ? AND page_id = ?",
                        key_rows,
                    )
                    self._conn.executemany(
                        "DELETE FROM pages WHERE id = ?", [(page_id,) for page_id, _ in doomed]
                    )
                    exact = self._conn.execute(
                        f"DELETE FROM exact_texts WHERE rowid IN "
                        f"(SELECT rowid FROM exact_texts {where} LIMIT ?)",
                        limited,
                    ).rowcount
                removed += len(doomed) + exact
                if len(doomed) < BATCH_PAGES and exact < BATCH_PAGES:
                    return removed
                time.sleep(BATCH_PAUSE)
        except KeyboardInterrupt:
            raise Interrupted(removed) from None

    def forget(self, key: str) -> int:
        return self._delete("WHERE key = ?", (storable_key(key),))

    def expire(self, older_than: float) -> int:
        return self._delete("WHERE added_at < ?", (older_than,))

    def expire_drops(self, older_than: float) -> int:
        removed = 0
        try:
            while True:
                with self._errors("remove audit-log entries"), self._transaction():
                    batch = self._conn.execute(
                        "DELETE FROM drops WHERE id IN (SELECT id FROM drops WHERE at < ? LIMIT ?)",
                        (older_than, BATCH_PAGES),
                    ).rowcount
                removed += batch
                if batch < BATCH_PAGES:
                    return removed
                time.sleep(BATCH_PAUSE)
        except KeyboardInterrupt:
            raise Interrupted(removed) from None

    def vacuum(self) -> None:
        """Rebuild the file without the space of removed pages (``VACUUM``) and truncate
        the write-ahead log. Needs as much free disk as the index takes; other processes
        wait meanwhile."""
        with self._errors("vacuum"):
            self._conn.execute("VACUUM")
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        """Checkpoint and truncate the write-ahead log, then close. Idempotent."""
        conn, self._conn = getattr(self, "_conn", None), None
        if conn is None:
            return
        try:
            if not self.read_only:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.DatabaseError:
            pass  # another process is reading; the last one to close checkpoints
        finally:
            conn.close()

    def __repr__(self) -> str:
        return f"SqliteIndex({self.location!r}, {self.parameters})"
