"""SqliteIndex on real files: what it refuses, what it leaves untouched, how it stores.

The behaviour every backend shares is in test_index_contract.py; this module covers what
only a file can do wrong: damaged, foreign or read-only files, full disks, odd paths, the
write-ahead log.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import random
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from scrapy_simhash import open_index
from scrapy_simhash.cli import main
from scrapy_simhash.exceptions import (
    ConfigurationError,
    IndexCorrupt,
    IndexNotFound,
    IndexParameterMismatch,
    IndexUnavailable,
    NotAnIndex,
    UnsupportedIndexURI,
)
from scrapy_simhash.index.sqlite import index as sqlite_module
from scrapy_simhash.index.sqlite import meta as sqlite_meta
from scrapy_simhash.index.sqlite.index import APPLICATION_ID, SqliteIndex


def fill(path: Path, count: int = 2000, seed: int = 1) -> list[int]:
    rng = random.Random(seed)
    fps = [rng.getrandbits(64) for _ in range(count)]
    with SqliteIndex(path) as index:
        for i, fp in enumerate(fps):
            index.check_and_add(fp, f"https://example.com/{i}")
    return fps


def state(path: Path) -> tuple[str, int, list[str]]:
    """Content hash and mtime of *path*, and which files sit beside it."""
    data = path.read_bytes()
    siblings = sorted(p.name for p in path.parent.iterdir())
    return hashlib.sha256(data).hexdigest(), path.stat().st_mtime_ns, siblings


def assert_refused(path: Path, error: type[Exception], *words: str) -> str:
    before = state(path)
    with pytest.raises(error) as info:
        open_index(f"sqlite:///{path}")
    message = str(info.value)
    assert str(path) in message
    for word in words:
        assert word in message, message
    assert state(path) == before, "the file was changed"
    return message


@pytest.fixture(scope="module")
def _filled(tmp_path_factory) -> Path:
    """An index of 2,000 pages, filled once for the module (the tests damage copies)."""
    path = tmp_path_factory.mktemp("filled") / "index.db"
    fill(path)
    return path


@pytest.fixture
def index_file(_filled, tmp_path) -> Path:
    """A copy of the filled index, alone in its directory, as fill() leaves one."""
    assert [p.name for p in _filled.parent.iterdir()] == ["index.db"]
    path = tmp_path / "index.db"
    shutil.copyfile(_filled, path)
    return path


# -- files that are not (usable) indexes ---------------------------------------------------


def test_file_that_is_not_sqlite(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("not a database\n" * 100)
    assert_refused(path, NotAnIndex, "not a SQLite file", "left untouched", "SIMHASH_INDEX_URI")


def test_sqlite_file_of_another_application(tmp_path):
    path = tmp_path / "places.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE bookmarks (url TEXT)")
    conn.execute("INSERT INTO bookmarks VALUES ('https://example.com/')")
    conn.commit()
    conn.close()
    assert_refused(path, NotAnIndex, "another application", "left untouched")


def test_sqlite_file_marked_by_another_application(tmp_path):
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA application_id = 1234")
    conn.commit()
    conn.close()
    assert_refused(path, NotAnIndex, "0x4d2", "left untouched")


def test_our_files_are_marked(index_file):
    conn = sqlite3.connect(index_file)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert conn.execute("PRAGMA user_version").fetchone()[0] == sqlite_module.SCHEMA_VERSION
    conn.close()


@pytest.mark.parametrize("keep", [0.5, 0.1])
def test_truncated_index(index_file, keep):
    data = index_file.read_bytes()
    index_file.write_bytes(data[: int(len(data) * keep)])
    assert_refused(index_file, IndexCorrupt, "damaged", "left untouched", "backup")


def test_truncated_inside_the_header(index_file):
    index_file.write_bytes(index_file.read_bytes()[:50])
    assert_refused(index_file, IndexCorrupt, "damaged")


def test_damaged_pages_are_reported_when_read(index_file):
    # A damaged page deep in the file is only seen when read; checking the whole file on
    # every open would take minutes for a large index.
    data = bytearray(index_file.read_bytes())
    rng = random.Random(3)
    for offset in range(4096 * 3, len(data), 4096):
        data[offset : offset + 64] = rng.randbytes(64)
    index_file.write_bytes(bytes(data))
    before = state(index_file)
    with pytest.raises(IndexCorrupt) as info, open_index(str(index_file)) as index:
        len(index)
        for _ in range(200):
            index.query(rng.getrandbits(64))
    assert str(index_file) in str(info.value)
    assert "damaged" in str(info.value)
    assert state(index_file)[0] == before[0]


def test_other_parameters(index_file):
    before = state(index_file)
    with pytest.raises(IndexParameterMismatch) as info:
        open_index(str(index_file), blocks=4)
    assert "blocks: index has 5, requested 4" in str(info.value)
    assert str(index_file) in str(info.value)
    # A larger distance needs other tables (a smaller one is answered: see test_rebuild).
    with pytest.raises(IndexParameterMismatch, match="max_distance: index has 3, requested 4"):
        open_index(str(index_file), max_distance=4)
    with pytest.raises(IndexParameterMismatch, match="seed-"):
        open_index(str(index_file), features="simhash64/terms-v1/top128/seed-ffff")
    assert state(index_file) == before


def set_user_version(path: Path, version: int) -> None:
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {version}")
    conn.commit()
    conn.close()


def test_newer_schema(index_file):
    set_user_version(index_file, sqlite_module.SCHEMA_VERSION + 1)
    assert_refused(index_file, IndexUnavailable, "newer", "upgrade scrapy-simhash")


def test_older_schema(index_file, monkeypatch):
    # Pretend this scrapy-simhash writes a later layout than the file has (the version is
    # checked where the parameters are read).
    monkeypatch.setattr(sqlite_meta, "SCHEMA_VERSION", sqlite_module.SCHEMA_VERSION + 1)
    assert_refused(index_file, IndexUnavailable, "older", "no automatic upgrade", "untouched")


def test_tables_without_schema_version(index_file):
    set_user_version(index_file, 0)
    assert_refused(index_file, IndexUnavailable, "no schema version", "left untouched")


def test_damaged_parameters(index_file):
    conn = sqlite3.connect(index_file)
    conn.execute("DELETE FROM simhash_meta WHERE name = 'blocks'")
    conn.commit()
    conn.close()
    assert_refused(index_file, IndexCorrupt, "no valid parameters")


@pytest.mark.parametrize("create", [True, False])
def test_empty_file_is_never_turned_into_an_index(tmp_path, create):
    # An index truncated to 0 bytes (a failed copy, a full disk) would otherwise restart
    # its history without a word.
    path = tmp_path / "index.db"
    path.write_bytes(b"")
    before = state(path)
    for read_only in (False, True):
        with pytest.raises(NotAnIndex) as info:
            SqliteIndex(path, create=create, read_only=read_only)
        assert "empty (0 bytes)" in str(info.value)
        assert "delete the file to start a new index" in str(info.value)
    assert state(path) == before


def test_empty_sqlite_database_is_not_an_index(tmp_path):
    path = tmp_path / "empty.db"
    sqlite3.connect(path).execute("VACUUM").connection.close()
    assert path.stat().st_size > 0
    assert_refused(path, NotAnIndex, "empty SQLite database", "left untouched")


def test_create_false_never_creates(tmp_path):
    path = tmp_path / "index.db"
    for read_only in (False, True):
        with pytest.raises(IndexNotFound):
            open_index(str(path), create=False, read_only=read_only)
    assert list(tmp_path.iterdir()) == []


def test_new_index_appears_complete(tmp_path):
    # Created beside its path and linked into place: no empty file and no temporary
    # file is ever left behind, and the file at the path is an index from the start.
    path = tmp_path / "index.db"
    with SqliteIndex(path) as index:
        assert sorted(
            p.name for p in tmp_path.iterdir() if not p.name.endswith(("-wal", "-shm"))
        ) == ["index.db"]
        index.check_and_add(1, "a")
    with SqliteIndex(path, create=False, read_only=True) as index:
        assert len(index) == 1


@pytest.mark.parametrize(
    "table", ["block_3", "page_keys", "pages", "exact_texts", "drops", "simhash_meta"]
)
def test_missing_table_is_refused_at_open(index_file, table):
    conn = sqlite3.connect(index_file)
    conn.execute(f"DROP TABLE {table}")
    conn.commit()
    conn.close()
    assert_refused(index_file, IndexCorrupt, f"the table {table}", "damaged", "backup")


def test_missing_column_is_refused_at_open(index_file):
    conn = sqlite3.connect(index_file)
    conn.execute("ALTER TABLE drops DROP COLUMN kept_key")
    conn.commit()
    conn.close()
    assert_refused(index_file, IndexCorrupt, "the column drops.kept_key", "damaged")


@pytest.fixture
def read_only_file(index_file):
    """*index_file* made read-only for this process (for root: the immutable attribute,
    which root cannot write through either)."""
    index_file.chmod(0o444)
    immutable = os.geteuid() == 0
    if immutable:
        result = subprocess.run(["chattr", "+i", str(index_file)], capture_output=True)
        if result.returncode != 0:
            pytest.skip("root and no chattr +i here: cannot make a file read-only for root")
    try:
        yield index_file
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(index_file)], check=True)
        index_file.chmod(0o644)


def test_read_only_file_is_refused_at_open_for_writing(read_only_file):
    before = state(read_only_file)
    with pytest.raises(IndexUnavailable) as info:
        open_index(str(read_only_file))
    assert "writable" in str(info.value)
    assert str(read_only_file) in str(info.value)
    # Bytes and mtime unchanged (SQLite may leave its empty -wal and -shm files beside).
    assert state(read_only_file)[:2] == before[:2]
    # Reading needs no write access.
    with open_index(str(read_only_file), create=False, read_only=True) as index:
        assert len(index) == 2000


def test_directory_instead_of_file(tmp_path):
    with pytest.raises(NotAnIndex, match="is a directory"):
        open_index(str(tmp_path))


def test_missing_directory(tmp_path):
    path = tmp_path / "missing" / "index.db"
    with pytest.raises(IndexUnavailable, match="does not exist"):
        open_index(str(path))
    assert not path.parent.exists()


def test_relative_path_makes_its_directory_as_the_default_does(tmp_path, monkeypatch):
    """sqlite:///.scrapy/news.db in a fresh project: made like .scrapy/simhash.db."""
    monkeypatch.chdir(tmp_path)
    with open_index("sqlite:///.scrapy/news.db") as index:
        index.check_and_add(1, "a")
    assert (tmp_path / ".scrapy" / "news.db").is_file()
    # Reading never creates anything.
    with pytest.raises(IndexNotFound):
        open_index("sqlite:///other/news.db", create=False)
    assert not (tmp_path / "other").exists()
    # A file where the directory should be is still an error.
    (tmp_path / "blocked").write_text("a file", encoding="utf-8")
    with pytest.raises(IndexUnavailable, match="directory blocked is not a directory"):
        open_index("sqlite:///blocked/news.db")
    with pytest.raises(IndexUnavailable, match="cannot make its directory blocked/sub"):
        open_index("sqlite:///blocked/sub/news.db")


# -- read-only and full file systems: a small tmpfs of our own -----------------------------


@pytest.fixture
def tmpfs(tmp_path):
    """Mount a small tmpfs (needs root and mount permission; skipped otherwise)."""
    mount = tmp_path / "mnt"
    mount.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("no mount command: cannot make a read-only or full file system here")
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        pytest.skip(
            "cannot mount a tmpfs here (needs root and CAP_SYS_ADMIN; chmod alone does not "
            f"stop root from writing): {result.stderr.strip()}"
        )

    def remount(mode: str) -> None:
        subprocess.run(["mount", "-o", f"remount,{mode}", str(mount)], check=True)

    try:
        yield mount, remount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_read_only_directory(tmpfs):
    mount, remount = tmpfs
    path = mount / "index.db"
    fill(path, 200)
    remount("ro")
    before = state(path)
    with pytest.raises(IndexUnavailable) as info:
        open_index(f"sqlite:///{path}")
    assert str(path) in str(info.value)
    assert "writable" in str(info.value)
    with pytest.raises(IndexUnavailable, match="writable"):
        open_index(str(mount / "new.db"))
    assert state(path) == before


def test_reading_a_cleanly_closed_index_on_a_read_only_file_system(tmpfs, tmp_path, monkeypatch):
    mount, remount = tmpfs
    path = mount / "index.db"
    fps = fill(path, 200)
    remount("ro")
    before = state(path)
    with SqliteIndex(path, create=False, read_only=True) as index:
        assert len(index) == 200
        assert len(list(index.pages())) == 200
        assert index.query(fps[7], 0)[0].key == "https://example.com/7"
        assert list(index.drops()) == []
    # The commands that only read, too.
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for args in (["stats", "--json"], ["dropped", "--csv"], ["export", "backup.simhash"]):
        result = runner.invoke(main, [*args, "--index", str(path)])
        assert result.exit_code == 0, result.output
    assert (
        json.loads(runner.invoke(main, ["stats", "--json", "--index", str(path)]).output)["pages"]
        == 200
    )
    assert (tmp_path / "backup.simhash").stat().st_size > 0
    assert state(path) == before


def test_full_disk(tmpfs):
    mount, _ = tmpfs
    path = mount / "index.db"
    rng = random.Random(5)
    stored = []
    with pytest.raises(IndexUnavailable) as info, SqliteIndex(path) as index:
        for i in range(200_000):
            fp = rng.getrandbits(64)
            index.check_and_add(fp, f"https://example.com/{i}")
            stored.append(fp)
    message = str(info.value)
    assert str(path) in message
    assert "free some space" in message
    assert len(stored) > 100
    # Everything committed before the disk filled up is there, and the file is sound.
    with SqliteIndex(path) as index:
        assert len(index) == len(stored)
        assert index.store.db.conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        for fp in rng.sample(stored, 100):
            assert index.query(fp, 0)


# -- what reaches SQL, and how the path is used --------------------------------------------

HOSTILE_KEYS = [
    "https://example.com/?q=' OR 1=1 --",
    "x'); DROP TABLE pages; --",
    'a"b`c[d]',
    "%_\\",
    "line\nbreak\ttab\x00nul",
    "🦆 emoji and 中文",
]


def test_keys_are_bound_parameters(tmp_path):
    path = tmp_path / "index.db"
    rng = random.Random(9)
    with SqliteIndex(path) as index:
        fps = {}
        for key in HOSTILE_KEYS:
            fps[key] = rng.getrandbits(64)
            # An exact entry first, replaced by the page's fingerprint (one entry per key):
            # the key is looked up and deleted by in both tables.
            assert index.check_and_add_exact(rng.getrandbits(64), key).status == "new"
            assert index.check_and_add(fps[key], key).status == "changed"
            assert index.check_and_add_exact(rng.getrandbits(64), f"{key}/short").match is None
        for key, fp in fps.items():
            (match,) = index.query(fp, 0)
            assert match.key == key
            assert [(page.key, page.exact) for page in index.find(key)] == [(key, False)]
            assert [page.exact for page in index.find(f"{key}/short")] == [True]
        assert index.find("%") == []
        assert len(index) == 2 * len(HOSTILE_KEYS)
        tables = {r[0] for r in index.store.db.conn.execute("SELECT name FROM sqlite_master")}
    assert {"pages", "page_keys", "block_0", "exact_texts", "simhash_meta"} <= tables


#: The only SQL in the SQLite backend that is not a plain literal: each interpolates a constant, a
#: validated setting, a "?" list or a WHERE clause written as a literal by its caller.
REVIEWED_SQL = {
    "f'SELECT id, key FROM page_view WHERE id IN ({marks})'",
    "f\"SELECT anchor, pages FROM anchor_seen WHERE anchor IN ({','.join('?' * len(hashes))})\"",
    "f\"SELECT page, sketch FROM page_sketches WHERE page IN ({','.join('?' * len(chunk))})\"",
    "f'PRAGMA application_id = {APPLICATION_ID}'",
    "f'PRAGMA user_version = {SCHEMA_VERSION}'",
    "f'PRAGMA synchronous={self.db.synchronous}'",
    "f'PRAGMA synchronous={index.db.synchronous}'",  # the journal's own connection
    "f'PRAGMA cache_size=-{CACHE_KIB}'",
    "f'PRAGMA wal_autocheckpoint={AUTOCHECKPOINT_PAGES}'",
    "tables.probe_sql",
    "PAGES_TABLE",
    "PAGE_VIEW",
    "'BEGIN IMMEDIATE' if immediate else 'BEGIN'",
    "self._PAGES_SQL.format(pages=pages_where or where, exact=where)",
    "f'SELECT id, fingerprint, key FROM page_view {pages_where or where} LIMIT ?'",
    "f'SELECT id, fingerprint, key FROM page_view WHERE {PAGES_BY_KEY}'",
    "f'DELETE FROM exact_texts WHERE rowid IN (SELECT rowid FROM exact_texts {where} LIMIT ?) "
    "RETURNING key'",
    # The analysis records: a "?" list.
    'f"SELECT key_hash, h.how, text_hash FROM page_analyses a JOIN analysis_hows h ON '
    "h.id = a.how WHERE key_hash IN ({','.join('?' * len(chunk))})\"",
    "sql + ' ORDER BY at, id'",
    'f"SELECT id, key, added_at, fingerprint FROM page_view '
    "WHERE fingerprint IN ({','.join('?' * len(fingerprints))})\"",
    # The block tables: names block_0, block_1, ... and permutations made of integers.
    "f'CREATE TABLE {name} (pfp INTEGER PRIMARY KEY) WITHOUT ROWID'",
    # The triggers that keep them in step with pages (statements made of the same).
    "'CREATE TEMP TRIGGER simhash_page_added AFTER INSERT ON main.pages BEGIN ' "
    "+ ' '.join(added) + ' END'",
    "'CREATE TEMP TRIGGER simhash_page_removed AFTER DELETE ON main.pages WHEN NOT EXISTS "
    "(SELECT 1 FROM pages WHERE fingerprint = OLD.fingerprint) BEGIN ' + ' '.join(removed) "
    "+ ' END'",
    'f"INSERT OR IGNORE INTO {name} (pfp) SELECT DISTINCT '
    "{self.permutation_sql(t, 'fingerprint')} FROM pages ORDER BY 1\"",
    # The URL rules' tables (index/sqlite/skip_rules.py): constant statements.
    "_TABLES[0]",
    "_TABLES[1]",
    "_TABLES[2]",
    # The sites' templates' table (index/sqlite/templates.py): a constant statement.
    "_TABLE",
    # The anchor tables: "?" lists, and a probe of one constant part per anchor.
    "probe_sql",
    "f\"SELECT page, hashes FROM page_anchors WHERE page IN ({','.join('?' * len(chunk))})\"",
    'f"SELECT page, words, cover, hashes FROM page_anchors '
    "WHERE page IN ({','.join('?' * len(chunk))})\"",
    'f"SELECT page, words, cover, length(hashes), key, fingerprint, added_at FROM page_anchors '
    "JOIN page_view ON id = page WHERE page IN ({','.join('?' * len(pages))})\"",
}


def test_sql_is_built_from_constants_only():
    """A review, kept as a test: a new interpolated SQL string fails here until reviewed."""
    # Every module of the SQLite backend: the package index/sqlite/.
    modules = Path(sqlite_module.__file__).parent.glob("*.py")
    trees = [ast.parse(path.read_text(encoding="utf-8")) for path in modules]
    calls = [node for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Call)]
    assert len(trees) >= 4
    sql = {
        ast.unparse(call.args[0])
        for call in calls
        if isinstance(call.func, ast.Attribute)
        and call.func.attr in ("execute", "executemany")
        and call.args
        and not isinstance(call.args[0], ast.Constant)
    }
    assert sql <= REVIEWED_SQL, sql - REVIEWED_SQL
    for call in calls:
        name = getattr(call.func, "attr", getattr(call.func, "id", ""))
        if name in ("_delete", "_select_pages") and call.args:
            assert isinstance(call.args[0], ast.Constant), ast.unparse(call)
        if name == "connect" and "uri" in {k.arg for k in call.keywords}:
            # A "file:" URI only as built by sqlite_file_uri, which quotes the path.
            assert ast.unparse(call.args[0]).startswith("sqlite_file_uri("), ast.unparse(call)


def test_path_is_not_a_sqlite_uri(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with open_index("file:index.db") as index:
        index.check_and_add(1, "a")
    assert (tmp_path / "file:index.db").is_file()
    assert not (tmp_path / "index.db").exists()
    # SQLite's own URI options are not ours: refused, and no file made.
    with pytest.raises(UnsupportedIndexURI, match="'mode'"):
        open_index("file:other.db?mode=memory")
    with pytest.raises(UnsupportedIndexURI, match="'mode'"):
        open_index("sqlite:///other.db?mode=ro")
    assert not list(tmp_path.glob("other.db*"))


def test_question_mark_belongs_to_a_plain_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    with open_index("data/what?.db") as index:
        index.check_and_add(1, "a")
    assert (tmp_path / "data" / "what?.db").is_file()
    assert not (tmp_path / "data" / "what").exists()
    with open_index("sqlite:///data/what?.db", create=False) as index:
        assert len(index) == 1
    # Options still follow the last "?", with or without the sqlite: scheme.
    with open_index("data/what?.db?timeout=5", create=False) as index:
        assert len(index) == 1 and index.store.db.timeout == 5
    with open_index("sqlite:///data/what?.db?synchronous=FULL&timeout=7") as index:
        assert len(index) == 1 and index.store.db.timeout == 7
    # "#", "%" and "&" are part of a name too, never read as URI syntax.
    with open_index("data/a#b%20c?d&e.db") as index:
        index.check_and_add(1, "b")
    assert (tmp_path / "data" / "a#b%20c?d&e.db").is_file()
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["a#b%20c?d&e.db", "what?.db"]


def test_dot_dot_is_taken_as_written(tmp_path, monkeypatch):
    (tmp_path / "a" / "b").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "a")
    with open_index("sqlite:///b/../index.db") as index:
        assert index.location == "b/../index.db"
    assert (tmp_path / "a" / "index.db").is_file()
    with pytest.raises(IndexUnavailable, match="does not exist"):
        open_index("sqlite:///missing/../index2.db")


def test_synchronous_is_a_uri_option(tmp_path):
    with open_index(f"sqlite:///{tmp_path / 'a.db'}?synchronous=FULL") as index:
        assert index.store.db.conn.execute("PRAGMA synchronous").fetchone()[0] == 2
    with open_index(f"sqlite:///{tmp_path / 'a.db'}") as index:
        assert index.store.db.conn.execute("PRAGMA synchronous").fetchone()[0] == 1
    with pytest.raises(ConfigurationError, match="'SOMETIMES' is not one of"):
        open_index(f"sqlite:///{tmp_path / 'a.db'}?synchronous=sometimes")


def test_busy_index_times_out_with_a_clear_error(tmp_path):
    path = tmp_path / "index.db"
    with open_index(f"sqlite:///{path}?timeout=0.2") as index:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(IndexUnavailable) as info:
                index.check_and_add(1, "a")
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert "Timed out after 0.2 s waiting for another process" in str(info.value)
        assert str(path) in str(info.value)
        assert index.check_and_add(1, "a").match is None


def test_failed_commit_is_rolled_back(tmp_path):
    path = tmp_path / "index.db"
    rng = random.Random(4)
    with open_index(f"sqlite:///{path}?timeout=0.2") as index:
        # Without WAL (a file system without shared memory), COMMIT waits for readers to
        # finish and fails after the timeout with the transaction still open in SQLite.
        assert index.store.db.conn.execute("PRAGMA journal_mode=DELETE").fetchone() == ("delete",)
        reader = sqlite3.connect(path, isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM pages").fetchone()
        fp = rng.getrandbits(64)
        with pytest.raises(IndexUnavailable, match="Timed out"):
            index.check_and_add(fp, "a")
        reader.execute("COMMIT")
        reader.close()
        assert not index.store.db.conn.in_transaction
        # The lock is released: another process writes at once, and so does this index.
        other = sqlite3.connect(path, timeout=0, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        other.execute("ROLLBACK")
        other.close()
        assert index.check_and_add(fp, "a").match is None
        assert index.query(fp, 0)[0].key == "a"


# -- the write-ahead log -------------------------------------------------------------------

#: A checkpoint size small enough that a few thousand commits go through it many times:
#: the same property as at the default size (the log is reused, never grows past one
#: checkpoint and one transaction), in a second instead of 50,000 commits.
CHECKPOINT_PAGES = 32
COMMITS = 1_500


@pytest.mark.slow
def test_wal_stays_bounded_and_is_truncated_on_close(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite_module, "AUTOCHECKPOINT_PAGES", CHECKPOINT_PAGES)
    # The log is checkpointed when it reaches CHECKPOINT_PAGES pages (4 KB each); one
    # transaction more may be in it by then (a page and its 5 table keys: a few pages).
    wal_bound = (CHECKPOINT_PAGES + 32) * 4096
    # Unbounded, the log would hold every commit: many times the bound.
    assert 20 * wal_bound < COMMITS * 4096
    path = tmp_path / "index.db"
    wal = Path(f"{path}-wal")
    rng = random.Random(11)
    largest = 0
    # A second index open on the same file the whole time, idle after a query: it must not
    # hold a read transaction that stops the log from being checkpointed.
    with SqliteIndex(path) as idle, SqliteIndex(path) as busy:
        assert busy.store.db.conn.execute("PRAGMA wal_autocheckpoint").fetchone() == (
            CHECKPOINT_PAGES,
        )
        idle.query(0)
        assert not idle.store.db.conn.in_transaction
        for i in range(COMMITS):
            busy.check_and_add(rng.getrandbits(64), f"k{i}")
            if i % 25 == 0:
                largest = max(largest, wal.stat().st_size)
                assert not busy.store.db.conn.in_transaction
        assert len(idle) == COMMITS
    assert largest < wal_bound, f"the WAL grew to {largest} bytes"
    assert not wal.exists() or wal.stat().st_size == 0
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()
