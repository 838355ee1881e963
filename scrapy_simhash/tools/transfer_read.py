"""Reading an export's pages (see :mod:`scrapy_simhash.tools.transfer`): the whole file
checked before a page is returned, in bounded memory.

Apart from writing because reading is where a damaged or crafted file must be caught:
decompression is bounded first by the page count of the header (every page takes at least
a byte of the compressed file, and at most 31 bytes of columns before its key), then by
the key lengths those columns give, each at most :data:`MAX_KEY_BYTES`. The keys are not
held: they are checked as they are decompressed, and decompressed again as the pages are
read (a file of many long keys that compress well, a few megabytes holding gigabytes of
keys, costs time, not memory).
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Iterator
from typing import IO, NamedTuple

import numpy as np

from ..anchors import ANCHORS_FORMAT, Anchors
from ..exceptions import ExportFormatError
from ..index.analysed import Analysed
from ..index.base import MAX_KEY_BYTES as INDEX_MAX_KEY_BYTES
from ..index.base import StoredPage
from .transfer_analysed import decode_analysed
from .transfer_columns import MAX_FILE_ANCHORS, ColumnReader, decode_anchors
from .transfer_header import ExportHeader, FileArg, opened, read_header_from

__all__ = ["LATEST_TIME", "MAX_KEY_BYTES", "read_pages"]

_CHUNK = 1 << 20
#: Longest key an export may hold, in UTF-8 bytes: the longest an index stores, a cap on
#: what one page can make an import decompress.
MAX_KEY_BYTES = INDEX_MAX_KEY_BYTES
#: The latest time a page can have been stored at: 9999-12-31 23:59:59 UTC.
LATEST_TIME = 253_402_300_799.0


class _Inflater:
    """The zlib stream of an export's pages, decompressed no further than asked: a small
    crafted file cannot make an import hold more than its header and columns declare."""

    def __init__(self, f: IO[bytes], name: str) -> None:
        self.f = f
        self.name = name
        self.decompressor = zlib.decompressobj()

    def read(self, limit: int) -> bytes:
        """Up to *limit* more bytes of the pages (fewer where the stream ends)."""
        parts: list[bytes] = []
        size = 0
        decompressor = self.decompressor
        while size < limit and not decompressor.eof:
            chunk = decompressor.unconsumed_tail or self.f.read(_CHUNK)
            if not chunk:
                break
            try:
                part = decompressor.decompress(chunk, limit - size)
            except zlib.error:
                raise ExportFormatError(
                    f"{self.name} is damaged (its pages fail the zlib check); export the "
                    "index again or use another copy"
                ) from None
            parts.append(part)
            size += len(part)
        return b"".join(parts)

    def finish(self) -> None:
        """Check that the pages end here, and the file with them."""
        if self.read(1):
            raise ExportFormatError(f"{self.name} is damaged (unexpected bytes after the last key)")
        if not self.decompressor.eof:
            raise ExportFormatError(
                f"{self.name} is truncated: its pages end early; export the index again or "
                "use another copy"
            )
        if self.decompressor.unused_data or self.f.read(1):
            raise ExportFormatError(f"{self.name} has unexpected bytes after its pages")


class _Columns(NamedTuple):
    """The columns before the keys, decoded and checked."""

    fingerprints: np.ndarray
    flags: bytes
    base: float
    deltas: np.ndarray
    lengths: list[int]
    #: Where the keys start in the decompressed pages.
    offset: int


def read_pages(file: FileArg) -> tuple[ExportHeader, Iterator[StoredPage]]:
    """Decode an export: its header, and its pages sorted by fingerprint. The whole file is
    checked before this returns, so a damaged file raises before any page is seen
    (decompression is bounded: see the module's docstring)."""
    with opened(file, "rb") as (f, name):
        header = read_header_from(f, name)
        body = _tell(f)
        n = header.pages
        compressed = _compressed_size(f)
        if n < 0 or (compressed is not None and n > compressed):
            raise ExportFormatError(
                f"{name} is damaged: its header declares {n} pages, more than its "
                f"{compressed} bytes of pages can hold; export the index again or use "
                "another copy"
            )
        inflater = _Inflater(f, name)
        reader, columns = _read_columns(inflater, n, name)
        # Checked, not kept; but a stream that cannot be read twice keeps them.
        kept: list[str] | None = [] if body is None else None
        after = bytearray() if header.format >= 2 else None
        start = reader.data[columns.offset :]
        for key in _keys(inflater, start, columns.lengths, reader, after):
            if kept is not None:
                kept.append(key)
        del reader, start
        anchors, records = _read_after_keys(inflater, header, after, name)
        inflater.finish()

    def pages() -> Iterator[StoredPage]:
        keys = (
            iter(kept)
            if kept is not None
            else _keys_again(file, body, columns.offset, columns.lengths, name)
        )
        times = (columns.deltas.astype(np.float64) / 1_000_000 + columns.base).tolist()
        for key, fp, at, flag, held, record in zip(
            keys, columns.fingerprints.tolist(), times, columns.flags, anchors, records, strict=True
        ):
            yield StoredPage(key, fp, at, exact=bool(flag), anchors=held, analysed=record)

    return header, pages()


def _read_columns(inflater: _Inflater, n: int, name: str) -> tuple[ColumnReader, _Columns]:
    """The columns of *n* pages before their keys: three varints (at most 10 bytes each)
    and a flag byte per page, and the 8-byte base time; with the reader left at the
    keys."""
    reader = ColumnReader(inflater.read(31 * n + 8), name)
    fingerprints = np.cumsum(reader.varints(n), dtype=np.uint64)
    if n > 1 and (fingerprints[1:] < fingerprints[:-1]).any():
        raise reader.damaged("a fingerprint is larger than 64 bits")
    flags = reader.take(n)
    (base,) = struct.unpack("<d", reader.take(8))
    deltas = reader.varints(n)
    # Times a datetime can show (year 1970 to 9999): anything else is a damaged or
    # crafted file, which every later `stats` or `expire` would trip over.
    if not (0.0 <= base <= LATEST_TIME) or (
        n and int(deltas.max()) > (LATEST_TIME - base) * 1_000_000
    ):
        raise reader.damaged("a time stored is out of range (before 1970 or after 9999)")
    lengths = reader.varints(n)
    if n and int(lengths.max()) > MAX_KEY_BYTES:
        raise reader.damaged(f"a key is longer than {MAX_KEY_BYTES} bytes")
    return reader, _Columns(fingerprints, flags, base, deltas, lengths.tolist(), reader.pos)


def _read_after_keys(
    inflater: _Inflater, header: ExportHeader, after: bytearray | None, name: str
) -> tuple[list[Anchors | None], list[Analysed | None]]:
    """The pages' anchors (from format 2) and analysis records (from format 3), which
    follow the keys: *after* holds what was decompressed past them already."""
    n = header.pages
    anchors: list[Anchors | None] = [None] * n
    records: list[Analysed | None] = [None] * n
    if after is None:
        return anchors, records
    # Three varints and at most MAX_FILE_ANCHORS anchors a page, and from format 3 a
    # varint and a text hash.
    limit = (30 + 4 * MAX_FILE_ANCHORS + (18 if header.format >= 3 else 0)) * n
    rest = ColumnReader(bytes(after) + inflater.read(limit), name)
    anchors = decode_anchors(rest, n)
    if header.format >= 3:
        records = decode_analysed(rest, n, header.hows)
    if rest.pos != len(rest.data):
        raise rest.damaged("unexpected bytes after the last anchor")
    if header.anchors != ANCHORS_FORMAT:
        anchors = [None] * n  # made otherwise: they would never match
    return anchors, records


def _compressed_size(f: IO[bytes]) -> int | None:
    """Bytes left in *f*, where it can tell."""
    try:
        here = f.tell()
        end = f.seek(0, os.SEEK_END)
        f.seek(here)
    except (OSError, ValueError):
        return None
    return end - here


def _tell(f: IO[bytes]) -> int | None:
    try:
        return f.tell()
    except (OSError, ValueError):
        return None


def _keys(
    inflater: _Inflater,
    start: bytes,
    lengths: list[int],
    reader: ColumnReader,
    after: bytearray | None = None,
) -> Iterator[str]:
    """The keys of *lengths*, decompressed a chunk at a time after the bytes *start*. The
    bytes of *start* past the keys go to *after* (what follows the keys: the anchors);
    without it they are an error."""
    total = sum(lengths)
    if len(start) > total:
        if after is None:
            raise reader.damaged("unexpected bytes after the last key")
        after += start[total:]
        start = start[:total]
    buffer, pos, left = bytearray(start), 0, total - len(start)
    for length in lengths:
        if len(buffer) - pos < length:
            del buffer[:pos]
            pos = 0
            while len(buffer) < length:
                chunk = inflater.read(min(max(_CHUNK, length), left))
                if not chunk:
                    raise reader.damaged("the pages end early")
                left -= len(chunk)
                buffer += chunk
        raw = bytes(buffer[pos : pos + length])
        pos += length
        try:
            yield raw.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            raise reader.damaged("a key is not UTF-8") from None


def _keys_again(
    file: FileArg, body: int | None, offset: int, lengths: list[int], name: str
) -> Iterator[str]:
    """The keys of an export checked by :func:`read_pages`, decompressed again."""
    with opened(file, "rb") as (f, _):
        if body is not None:
            f.seek(body)
        inflater = _Inflater(f, name)
        columns = inflater.read(offset)
        yield from _keys(inflater, b"", lengths, ColumnReader(columns, name))
