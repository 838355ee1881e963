"""Parquet inputs: their rows read, and the kept ones written, a few at a time.

A page's text may be one cell of a hundred megabytes. What pyarrow holds for it is
bounded here, and nothing beyond it:

* a page of the file at a time (``pre_buffer`` off, a buffered stream), not the row
  group's whole column chunks: one copy of the cell less;
* as many rows at a time as hold about :data:`PARQUET_BATCH_BYTES` by their row group's
  average: a batch of one huge row is decoded into an array of its size, where a batch
  of several grows past it and copies it;
* only the columns read (the text fields and the key), each text cell cut in Arrow to
  :data:`~scrapy_simhash.extract.fields.MAX_FIELD_LENGTH` characters, where the
  analysis cuts a field first, before it becomes a Python string.

What remains is pyarrow's: a page decompressed and the array decoded from it (and, for a
dictionary-encoded column, the dictionary of its row group), two to three times the cell.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

from ...exceptions import FeedError
from ...extract.fields import MAX_FIELD_LENGTH
from .extras import optional

#: Bytes of rows (by their row group's average) read at a time, and the rows at most.
PARQUET_BATCH_BYTES = 4 << 20
PARQUET_BATCH_ROWS = 1024
#: Bytes of the file read at a time (pyarrow's buffered stream; a larger page whole).
PARQUET_BUFFER_BYTES = 1 << 20
#: Kept rows written as one row group once they hold this many bytes, or rows.
PARQUET_GROUP_BYTES = 64 << 20
PARQUET_GROUP_ROWS = 65_536


def parquet_file(path: str):
    """*path* opened as Parquet, or a :class:`FeedError` saying it is not Parquet."""
    pq = optional("pyarrow.parquet", "parquet")
    try:
        return pq.ParquetFile(path, pre_buffer=False, buffer_size=PARQUET_BUFFER_BYTES)
    except optional("pyarrow", "parquet").ArrowException as e:
        raise FeedError(
            f"{path} is not a Parquet file, or a corrupt one ({str(e).splitlines()[0][:200]})"
        ) from None


def parquet_fields(path: str) -> list[str]:
    """The names of the columns of Parquet file *path*."""
    return list(parquet_file(path).schema_arrow.names)


def batch_rows(source, group: int) -> int:
    """Rows of row group *group* of *source* read at a time (see the module's doc)."""
    meta = source.metadata.row_group(group)
    per_row = meta.total_byte_size // max(meta.num_rows, 1)
    return max(1, min(PARQUET_BATCH_ROWS, PARQUET_BATCH_BYTES // max(per_row, 1)))


def _batches(source, columns: list[str] | None = None) -> Iterator[Any]:
    for group in range(source.num_row_groups):
        yield from source.iter_batches(
            batch_size=batch_rows(source, group), row_groups=[group], columns=columns
        )


def parquet_rows(
    path: str, text_fields: tuple[str, ...], key_field: str
) -> Iterator[tuple[int, Any]]:
    """``(row, item)`` for every row of Parquet file *path* (rows counted from 1): the
    item holds the columns *text_fields* and *key_field* the file has, each text cell
    cut to :data:`MAX_FIELD_LENGTH` characters (bytes for a binary column)."""
    pc = optional("pyarrow.compute", "parquet")
    source = parquet_file(path)
    wanted = {*text_fields, key_field}
    columns = [name for name in source.schema_arrow.names if name in wanted]
    cut = set(text_fields) - {key_field}  # a key is stored as it is, however long
    row = 0
    try:
        for batch in _batches(source, columns):
            rows = batch.num_rows
            values = [
                _cut(pc, batch.column(i)) if name in cut else batch.column(i)
                for i, name in enumerate(batch.schema.names)
            ]
            names, values = batch.schema.names, [v.to_pylist() for v in values]
            del batch  # the rows as Python values only, while they are analysed
            for n in range(rows):
                row += 1
                yield row, {name: column[n] for name, column in zip(names, values, strict=True)}
    except optional("pyarrow", "parquet").ArrowException as e:
        raise FeedError(
            f"{path} cannot be read as Parquet after row {row} ({str(e).splitlines()[0][:200]})"
        ) from None


def _cut(pc, column):
    """*column*'s cells cut to MAX_FIELD_LENGTH characters (bytes for binary), as
    :func:`~scrapy_simhash.extract.fields.field_text` cuts a field before reading it."""
    if column.nbytes <= MAX_FIELD_LENGTH:
        return column  # no cell can be longer (a character is at least a byte)
    pa = optional("pyarrow", "parquet")
    kind = column.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return pc.utf8_slice_codeunits(column, 0, MAX_FIELD_LENGTH)
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        return pc.binary_slice(column, 0, MAX_FIELD_LENGTH)
    return column


def write_kept_parquet(
    path: str, positions: set[int], output: str, *, text_fields: tuple[str, ...] = ()
) -> int:
    """The rows of Parquet file *path* at *positions* (counted from 1) to *output*,
    read a few rows at a time and written in row groups of a bounded size; the file
    copied as it is when every row is kept. The *text_fields* are written without
    min/max statistics: pyarrow copies a cell four times to make them (the least and
    greatest of its page and of its row group), and a page's text bounds no search."""
    pa = optional("pyarrow", "parquet")
    pq = optional("pyarrow.parquet", "parquet")
    source = parquet_file(path)
    if len(positions) == source.metadata.num_rows:
        shutil.copyfile(path, output)
        return len(positions)
    names = source.schema_arrow.names
    statistics = [name for name in names if name not in text_fields]
    written = row = 0
    group: list[Any] = []
    group_bytes = group_rows = 0
    with pq.ParquetWriter(output, source.schema_arrow, write_statistics=statistics) as writer:
        for batch in _batches(source):
            wanted = [row + n in positions for n in range(1, batch.num_rows + 1)]
            row += batch.num_rows
            # A batch kept whole is written as it is: a filter would copy its cells.
            kept = batch if all(wanted) else batch.filter(pa.array(wanted))
            del batch
            if kept.num_rows:
                group.append(kept)
                written += kept.num_rows
                group_bytes += kept.nbytes
                group_rows += kept.num_rows
            del kept
            if group_bytes >= PARQUET_GROUP_BYTES or group_rows >= PARQUET_GROUP_ROWS:
                writer.write_table(pa.Table.from_batches(group))
                group, group_bytes, group_rows = [], 0, 0
        if group:
            writer.write_table(pa.Table.from_batches(group))
    return written


__all__ = ["parquet_fields", "parquet_file", "parquet_rows", "write_kept_parquet"]
