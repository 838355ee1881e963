"""Parquet inputs are read, and their kept rows written, a few rows at a time; a huge text
cell reaches the analysis cut where the analysis would cut it, and is written back whole."""

from __future__ import annotations

import pytest

from scrapy_simhash.dedup import AnalysisParams, analyse_fields
from scrapy_simhash.extract.fields import MAX_FIELD_LENGTH
from scrapy_simhash.tools.archive import parquet
from scrapy_simhash.tools.archive.records import Part, read_part, write_kept

pa = pytest.importorskip("pyarrow", reason="needs the [parquet] extra")
pq = pytest.importorskip("pyarrow.parquet", reason="needs the [parquet] extra")

#: max_length short, so that the analysis of the huge cell takes no time.
PARAMS = AnalysisParams(
    top_n=64, seed=None, segmenter="auto", min_terms=20, max_length=5_000, extractor="builtin"
)


def huge_rows() -> list[dict]:
    """A cell past the field bound, of characters of two bytes (cut by characters, not
    bytes), between two small rows; a binary column and a column never read."""
    huge = "mot été " * (MAX_FIELD_LENGTH // 8 + 100)
    return [
        {"url": "https://p.example/a", "text": "first page " * 50, "raw": b"a", "other": "x"},
        {
            "url": "https://p.example/b",
            "text": huge,
            "raw": b"\xc3\xa9" * (MAX_FIELD_LENGTH // 2 + 100),
            "other": "y",
        },
        {"url": "https://p.example/c", "text": "last page " * 50, "raw": b"c", "other": "z"},
    ]


def test_a_huge_text_cell_reaches_python_cut_where_the_analysis_cuts_it(tmp_path):
    rows = huge_rows()
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "in.parquet")
    part = Part(str(tmp_path / "in.parquet"), 0, "parquet")
    items = list(read_part(part, key_field="url", text_fields=("text", "raw")))
    assert [position for position, _ in items] == [1, 2, 3]
    # Only the columns read: the text fields and the key.
    assert all(set(item) == {"url", "text", "raw"} for _, item in items)
    huge = items[1][1]
    assert len(huge["text"]) == MAX_FIELD_LENGTH
    assert huge["text"] == rows[1]["text"][:MAX_FIELD_LENGTH]
    assert huge["raw"] == rows[1]["raw"][:MAX_FIELD_LENGTH]
    assert items[0][1] == {k: rows[0][k] for k in ("url", "text", "raw")}
    # The same analysis as of the whole cell: the field is cut there first.
    whole = analyse_fields(PARAMS, [rows[1]["text"], rows[1]["raw"]])
    assert whole.truncated
    assert analyse_fields(PARAMS, [huge["text"], huge["raw"]]) == whole
    # A row group of huge rows is read a row at a time: a batch of several grows past
    # the huge cell and copies it.
    assert parquet.batch_rows(parquet.parquet_file(part.path), 0) == 1


def test_a_huge_kept_cell_is_written_whole(tmp_path):
    rows = huge_rows()
    source = tmp_path / "in.parquet"
    pq.write_table(pa.Table.from_pylist(rows), source, compression="zstd")
    out = tmp_path / "out.parquet"
    # Every row kept: the file as it is (not written again, in the writer's compression).
    assert write_kept(str(source), "parquet", {1, 2, 3}, str(out), raw_csv=False) == 3
    assert out.read_bytes() == source.read_bytes()
    # The first row dropped: the others whole, the text fields without statistics.
    assert write_kept(str(source), "parquet", {2, 3}, str(out), raw_csv=False,
                      text_fields=("text", "raw")) == 2  # fmt: skip
    assert pq.read_table(out).to_pylist() == rows[1:]
    group = pq.ParquetFile(out).metadata.row_group(0)
    stats = {group.column(c).path_in_schema: group.column(c).is_stats_set for c in range(4)}
    assert stats == {"url": True, "text": False, "raw": False, "other": True}


def test_kept_parquet_rows_are_read_and_written_a_few_at_a_time(tmp_path, monkeypatch):
    rows = [{"url": f"https://p.example/{n}", "text": f"page {n} " * (n + 1)} for n in range(50)]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "in.parquet")
    positions = {n for n in range(1, 51) if n % 7}  # every 7th dropped, across batches
    monkeypatch.setattr(parquet, "PARQUET_BATCH_ROWS", 16)
    monkeypatch.setattr(parquet, "PARQUET_GROUP_ROWS", 20)
    out = tmp_path / "out.parquet"
    assert write_kept(str(tmp_path / "in.parquet"), "parquet", positions, str(out),
                      raw_csv=False) == len(positions)  # fmt: skip
    kept = pq.read_table(out).to_pylist()
    assert kept == [row for n, row in enumerate(rows, 1) if n in positions]
    # Read 16 rows at a time, written once 20 are kept: 28 rows (two batches), then 15.
    meta = pq.ParquetFile(out).metadata
    assert [meta.row_group(g).num_rows for g in range(meta.num_row_groups)] == [28, 15]
    # Nothing kept: a file of the same columns and no rows.
    assert write_kept(str(tmp_path / "in.parquet"), "parquet", set(), str(out),
                      raw_csv=False) == 0  # fmt: skip
    assert pq.read_table(out).schema.names == ["url", "text"] and pq.read_table(out).num_rows == 0
    # Small rows: as many at a time as hold PARQUET_BATCH_BYTES, at most PARQUET_BATCH_ROWS.
    assert parquet.batch_rows(parquet.parquet_file(str(tmp_path / "in.parquet")), 0) == 16
