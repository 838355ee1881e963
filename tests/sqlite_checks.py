"""What every test of a SQLite index's maintenance checks afterwards: its tables agree
with its pages."""

from __future__ import annotations

from scrapy_simhash.index.sqlite import SqliteIndex
from scrapy_simhash.index.sqlite.tables import MASK64, key_hash


def assert_tables_match_pages(index: SqliteIndex) -> None:
    """Every page has its row in every block table and in page_keys, and no row is left
    of a page removed."""
    conn, tables = index.store.db.conn, index.store.tables
    pages = conn.execute("SELECT id, fingerprint, key FROM page_view").fetchall()
    assert sorted(conn.execute("SELECT key_hash, page_id FROM page_keys")) == sorted(
        (key_hash(key), page_id) for page_id, _, key in pages
    )
    fingerprints = {fp & MASK64 for _, fp, _ in pages}
    for table, name in enumerate(tables.names):
        rows = {pfp for (pfp,) in conn.execute(f"SELECT pfp FROM {name}")}
        assert rows == {tables.stored_rows(fp)[table][1] for fp in fingerprints}, name
