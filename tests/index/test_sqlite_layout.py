"""The SQLite layout, schema version 2: block tables keyed by permuted fingerprints, probes
that stay on an index, and the in-place upgrade of version-1 files.

``tests/data/index-v1.db`` was written by scrapy-simhash with schema version 1 (commit
e5ae630: 40 pages ``https://v1.example/page/N``, one exact entry, one drop), then vacuumed
in rollback-journal mode; the tests use a copy switched back to WAL mode, as the files of
version 1 are.
"""

from __future__ import annotations

import contextlib
import random
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlite_checks import assert_tables_match_pages
from test_sqlite_index import state

from scrapy_simhash.cli import main
from scrapy_simhash.exceptions import IndexCorrupt, IndexUnavailable, SimhashIndexError
from scrapy_simhash.index.analysed import Analysed
from scrapy_simhash.index.blocks import BlockPlan
from scrapy_simhash.index.sqlite import SqliteIndex
from scrapy_simhash.index.sqlite.layout import SCHEMA_VERSION
from scrapy_simhash.index.sqlite.tables import MASK64, BlockTables, to_signed64

V1_FILE = Path(__file__).parents[1] / "data" / "index-v1.db"
EXTREMES = [0, 1, MASK64, 1 << 63, (1 << 63) - 1, 0xF0E1_D2C3_B4A5_9687]


@pytest.fixture
def v1_copy(tmp_path) -> Path:
    path = tmp_path / "old.db"
    shutil.copyfile(V1_FILE, path)
    sql(path, "PRAGMA journal_mode=WAL")
    return path


def sql(path: Path, *statements: str) -> list[tuple]:
    """Run *statements* on the file *path*, outside any index, and commit; the rows of
    the last one."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        for statement in statements:
            rows = conn.execute(statement).fetchall()
        conn.commit()
    return rows


def v1_contents(path: Path, pages: str = "pages") -> tuple[list[tuple], list[tuple], list[tuple]]:
    """Pages (from *pages*: ``page_view`` once upgraded), exact entries and drops."""
    return (
        sql(path, f"SELECT id, fingerprint, key, added_at FROM {pages} ORDER BY id"),
        sql(path, "SELECT digest, key, added_at FROM exact_texts"),
        sql(path, "SELECT key, kept_key, distance, exact, at FROM drops"),
    )


def user_version(path: Path) -> int:
    return sql(path, "PRAGMA user_version")[0][0]


# -- the permutations ----------------------------------------------------------------------


@pytest.mark.parametrize("blocks", [4, 5, 6])
def test_permutations_are_inverted_and_the_sql_computes_the_same(tmp_path, blocks):
    tables = BlockTables(BlockPlan(max_distance=3, blocks=blocks))
    rng = random.Random(blocks)
    fps = EXTREMES + [rng.getrandbits(64) for _ in range(200)]
    conn = sqlite3.connect(":memory:")
    for t in range(tables.plan.table_count):
        sql = f"SELECT {tables.permutation_sql(t, '?')}"
        for fp in fps:
            value = tables.permute(fp, t)
            assert tables.unpermute(value, t) == fp
            assert conn.execute(sql.replace("?", str(to_signed64(fp)))).fetchone()[0] == (
                to_signed64(value)
            )
    last = tables.plan.table_count - 1
    assert all(tables.permute(fp, last) == fp for fp in fps), "the last table is pages"


@pytest.mark.parametrize("blocks", [4, 5])
def test_a_probe_range_holds_exactly_the_fingerprints_sharing_a_key(blocks):
    plan = BlockPlan(max_distance=3, blocks=blocks)
    tables = BlockTables(plan)
    rng = random.Random(7)
    for fp in EXTREMES + [rng.getrandbits(64) for _ in range(50)]:
        _, args = tables.probe(fp)
        for _ in range(20):
            other = fp ^ (1 << rng.randrange(64))
            for t, key in enumerate(plan.keys(fp)):
                low, high = args[2 * t], args[2 * t + 1]
                inside = low <= to_signed64(tables.permute(other, t)) <= high
                assert inside == (plan.keys(other)[t] == key)


# -- every probe stays on an index (SQLite 3.40 full-scans `(a, b) IN (VALUES ...)`) -------


def test_every_lookup_uses_an_index(tmp_path):
    with SqliteIndex(tmp_path / "index.db") as index:
        for i in range(50):
            index.check_and_add(random.Random(i).getrandbits(64), f"k{i}")
        conn, tables = index.store.db.conn, index.store.tables
        _, args = tables.probe(12345)
        statements = [
            (tables.probe_sql, args),
            ("SELECT id, key FROM page_view WHERE fingerprint IN (?, ?)", (1, 2)),
            ("SELECT id FROM page_view WHERE id IN (SELECT page_id FROM page_keys "
             "WHERE key_hash = ?) AND key = ?", (1, "k1")),
            ("SELECT 1 FROM page_view WHERE key = ? AND fingerprint = ?", ("k1", 1)),
            ("SELECT id FROM sites WHERE prefix = ?", ("https://a.example/",)),
            ("DELETE FROM block_0 WHERE pfp = ?", (1,)),
            ("SELECT 1 FROM pages WHERE fingerprint = ?", (1,)),
        ]  # fmt: skip
        for sql, params in statements:
            plan = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params)]
            steps = [step for step in plan if step.startswith(("SCAN", "SEARCH"))]
            assert steps, plan
            for step in steps:
                assert step.startswith("SEARCH"), (sql, plan)
                assert "PRIMARY KEY" in step or "INDEX" in step, (sql, plan)
        table_steps = [s for s in plan_of(conn, tables.probe_sql, args) if s.startswith("SEARCH")]
        assert len(table_steps) == index.plan.table_count, "one range search per table"


def plan_of(conn: sqlite3.Connection, sql: str, params) -> list[str]:
    return [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params)]


# -- version-1 files -----------------------------------------------------------------------


def test_a_version_1_file_is_upgraded_in_place_when_opened_for_writing(v1_copy, caplog):
    pages, exact, drops = v1_contents(v1_copy)
    assert user_version(v1_copy) == 1 and len(pages) == 40
    with SqliteIndex(v1_copy, create=False) as index:
        assert "Upgrading the index" in caplog.text
        conn = index.store.db.conn
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert "block_keys" not in tables and "idx_pages_key" not in tables
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert_tables_match_pages(index)
        assert len(index) == 41
        assert [d.key for d in index.drops()] == ["https://v1.example/copy-of-3"]
        # Every page is found, under its key and near its fingerprint.
        for _, fp, key, added_at in pages:
            (match,) = index.query(fp & MASK64, 0)
            assert (match.key, match.added_at) == (key, added_at)
            assert index.check_and_add(fp & MASK64, key).status == "unchanged"
            assert index.check_and_add((fp & MASK64) ^ 0b11, "another").status == "duplicate"
        assert index.check_and_add_exact(12345, "https://v1.example/short").status == "unchanged"
        assert index.check_and_add(1, "https://v1.example/page/0").status == "changed"
        assert_tables_match_pages(index)
    # Upgraded once: opened again, nothing is done.
    caplog.clear()
    with SqliteIndex(v1_copy, create=False, read_only=True) as index:
        assert len(index) == 41
    assert "Upgrading" not in caplog.text
    now = v1_contents(v1_copy, "page_view")
    assert now[0][:-1] == pages[1:], "as they were, but page 0 (changed, now the last)"
    assert now[0][-1][1:3] == (1, "https://v1.example/page/0")
    assert now[1:] == (exact, drops)


def test_a_version_1_file_opened_read_only_is_refused_with_the_command(v1_copy):
    before = state(v1_copy)
    with pytest.raises(IndexUnavailable) as info:
        SqliteIndex(v1_copy, create=False, read_only=True)
    message = str(info.value)
    assert "\n" not in message
    assert f"scrapy-simhash vacuum --index {v1_copy}" in message
    assert state(v1_copy)[:2] == before[:2], "the file is unchanged"
    # The command it names upgrades the file (and gives the old tables' space back).
    result = CliRunner().invoke(main, ["vacuum", "--index", str(v1_copy)])
    assert result.exit_code == 0, result.output
    assert user_version(v1_copy) == SCHEMA_VERSION
    assert sql(v1_copy, "PRAGMA freelist_count") == [(0,)]
    with SqliteIndex(v1_copy, create=False, read_only=True) as index:
        assert len(index) == 41


def test_a_failed_upgrade_leaves_the_version_1_file_as_it_was(v1_copy):
    # A table in the way of the upgrade's last block table: it fails after creating and
    # filling the others, and everything it did is rolled back.
    sql(v1_copy, "CREATE TABLE block_8 (x)")
    contents = v1_contents(v1_copy)
    with pytest.raises(SimhashIndexError):
        SqliteIndex(v1_copy, create=False)
    assert user_version(v1_copy) == 1
    assert v1_contents(v1_copy) == contents
    tables = {name for (name,) in sql(v1_copy, "SELECT name FROM sqlite_master")}
    assert "block_keys" in tables and "page_keys" not in tables and "block_0" not in tables
    assert sql(v1_copy, "SELECT count(*) FROM block_keys") == [(40 * 10,)]
    sql(v1_copy, "DROP TABLE block_8")
    with SqliteIndex(v1_copy, create=False) as index:
        assert len(index) == 41
        assert_tables_match_pages(index)


def test_a_version_1_file_without_its_tables_is_refused_as_damaged(v1_copy):
    sql(v1_copy, "DROP TABLE block_keys")
    before = state(v1_copy)
    with pytest.raises(IndexCorrupt, match="the table block_keys"):
        SqliteIndex(v1_copy, create=False)
    assert state(v1_copy) == before


# -- version-2 files (before paragraph anchors) --------------------------------------------


#: What makes a version-5 file a version-4 one (without sightings and analysis records).
V4_FROM_V5 = ("DROP TABLE anchor_seen", "DROP TABLE page_analyses", "DROP TABLE analysis_hows")
#: What makes a version-5 file a version-3 one (without its sketches either).
V3_FROM_V4 = (
    *V4_FROM_V5,
    "DROP TABLE page_sketches",
    "DELETE FROM simhash_meta WHERE name = 'sketch'",
    "ALTER TABLE drops DROP COLUMN share",
)


def test_a_version_4_file_is_upgraded_counting_its_stored_pages_as_seen(tmp_path):
    from scrapy_simhash.analysis.anchors import text_anchors
    from scrapy_simhash.anchors import MAX_ANCHOR_PAGES

    def anchors(*paragraphs: str):
        return text_anchors("\n".join(paragraphs))

    note = [f"{word} " * 30 for word in ("delivery", "returns")]
    path = tmp_path / "v4.db"
    with SqliteIndex(path) as index:
        for n in range(MAX_ANCHOR_PAGES):
            own = f"page {'x' * (n + 1)} has a paragraph of its own " * 5
            assert index.check_and_add(0x5555 << (10 * n), f"https://v4.example/{n}",
                                       anchors(*note, own)).status == "new"  # fmt: skip
    sql(path, *V4_FROM_V5, "PRAGMA user_version = 4")
    with pytest.raises(IndexUnavailable, match="counting boilerplate in pages seen"):
        SqliteIndex(path, create=False)
    assert user_version(path) == 4, "left untouched"
    result = CliRunner().invoke(main, ["upgrade", "--index", str(path)])
    assert result.exit_code == 0, result.output
    assert user_version(path) == SCHEMA_VERSION
    assert sql(path, "SELECT count(*) FROM anchor_seen") == [(0,)]  # stored: seen by rows
    with SqliteIndex(path, create=False) as index:
        # Five pages seen: the note's page is contained in the first (a sixth page seen);
        # the next is the seventh, and the note is boilerplate for it.
        assert index.check_and_add(0xFFFF_FFFF << 32, "https://v4.example/note",
                                   anchors(*note)).status == "duplicate"  # fmt: skip
        assert index.check_and_add(0xFFFF_FFFF, "https://v4.example/again",
                                   anchors(*note)).status == "new"  # fmt: skip


def test_a_version_3_file_is_refused_until_the_upgrade_command_and_keeps_its_pages(tmp_path):
    path = tmp_path / "v3.db"
    with SqliteIndex(path) as index:
        index.check_and_add(12345, "https://v3.example/a")
    sql(path, *V3_FROM_V4, "PRAGMA user_version = 3")
    with pytest.raises(IndexUnavailable) as info:
        SqliteIndex(path, create=False)
    assert "before text sketches" in str(info.value)
    assert f"scrapy-simhash upgrade --index {path}" in str(info.value)
    assert user_version(path) == 3, "left untouched"
    result = CliRunner().invoke(main, ["upgrade", "--index", str(path)])
    assert result.exit_code == 0, result.output
    assert user_version(path) == SCHEMA_VERSION
    with SqliteIndex(path, create=False) as index:
        assert [page.key for page in index.pages()] == ["https://v3.example/a"]
        assert index.check_and_add(12345, "https://v3.example/a").status == "unchanged"
        index.record_drop("https://v3.example/b", index.query(12345)[0])
        assert [d.share for d in index.drops()] == [None]


def test_a_version_4_file_is_refused_until_the_upgrade_command_then_records_analyses(tmp_path):
    path = tmp_path / "v4.db"
    with SqliteIndex(path) as index:
        index.check_and_add(12345, "https://v4.example/a")
    sql(path, *V4_FROM_V5, "PRAGMA user_version = 4")
    for read_only in (False, True):
        with pytest.raises(IndexUnavailable) as info:
            SqliteIndex(path, create=False, read_only=read_only)
        assert "before records of how each page was analysed" in str(info.value)
        assert user_version(path) == 4, "left untouched"
    result = CliRunner().invoke(main, ["upgrade", "--index", str(path)])
    assert result.exit_code == 0, result.output
    assert user_version(path) == SCHEMA_VERSION
    analysed = Analysed(("title", "-summary", "content"), "builtin", "terms-v13", 2**64 - 1)
    with SqliteIndex(path, create=False) as index:
        assert [page.analysed for page in index.find("https://v4.example/a")] == [None]
        index.check_and_add(2**63, "https://v4.example/b", analysed=analysed)
        index.check_and_add_exact(77, "https://v4.example/c", analysed=analysed)
    with SqliteIndex(path, create=False, read_only=True) as index:
        assert [p.analysed for p in index.pages()] == [None, analysed, analysed]
        assert index.find("https://v4.example/c")[0].analysed.held == ("title", "content")
    assert sql(path, "SELECT count(*) FROM analysis_hows") == [(1,)]


def test_a_version_2_file_is_refused_until_the_upgrade_command(tmp_path):
    path = tmp_path / "v2.db"
    with SqliteIndex(path) as index:
        index.check_and_add(12345, "https://v2.example/a")
    sql(
        path,
        "DROP TABLE anchors",
        "DROP TABLE page_anchors",
        "DELETE FROM simhash_meta WHERE name = 'anchors'",
        *V3_FROM_V4,
        "PRAGMA user_version = 2",
    )
    with pytest.raises(IndexUnavailable) as info:
        SqliteIndex(path, create=False)
    assert f"scrapy-simhash upgrade --index {path}" in str(info.value)
    assert user_version(path) == 2, "left untouched"
    result = CliRunner().invoke(main, ["upgrade", "--index", str(path)])
    assert result.exit_code == 0, result.output
    assert "stores paragraph anchors, sketches and how each page was analysed (1 pages)" in (
        result.output
    )
    assert user_version(path) == SCHEMA_VERSION
    with SqliteIndex(path, create=False) as index:
        assert [page.key for page in index.pages()] == ["https://v2.example/a"]
        assert index.check_and_add(12345, "https://v2.example/a").status == "unchanged"


def test_the_anchor_lookups_use_their_primary_keys(tmp_path):
    with SqliteIndex(tmp_path / "index.db") as index:
        conn = index.store.db.conn
        from scrapy_simhash.index.sqlite.anchors import anchor_hits

        anchor_hits(conn, (1, 2))
        for statement, params in [
            ("SELECT anchor, page FROM anchors WHERE anchor = ? ORDER BY page LIMIT 6", (1,)),
            ("DELETE FROM anchors WHERE anchor = ? AND page = ?", (1, 2)),
            ("SELECT page, hashes FROM page_anchors WHERE page IN (?, ?)", (1, 2)),
        ]:
            steps = [
                s for s in plan_of(conn, statement, params) if s.startswith(("SCAN", "SEARCH"))
            ]
            assert steps and all(s.startswith("SEARCH") for s in steps), (statement, steps)
