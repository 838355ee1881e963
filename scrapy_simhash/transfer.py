"""Export and import an index as one compact, portable file (for backups and moving).

Any backend exports to the same format and any backend imports it: SQLite to Redis, a
crawl machine to a laptop. The layout, all integers unsigned LEB128 varints unless said::

    b"SIMHASHX"                  magic
    1 byte                       format version (1)
    4 bytes, big-endian          length of the JSON header
    JSON header                  {"format", "max_distance", "blocks", "features", "pages",
                                  "exported_at"}
    zlib stream of the body, whose pages are sorted by fingerprint:
        fingerprints             the first, then the difference to the one before
        flags                    one byte per page: 1 = an exact-text entry
        base time                8 bytes, little-endian double: the earliest added_at
        times                    microseconds after the base time, one per page
        keys                     UTF-8 length, then the UTF-8 bytes, one per page

Sorted 64-bit fingerprints are about ``2**64 / n`` apart, so their differences take
``64 - log2(n)`` bits instead of 64: at a million pages, 6 bytes each instead of 8 (more
with the varint's 1-in-8 overhead, less after zlib). Keys dominate the size; zlib shrinks
URLs of one site several times.

Only the fingerprint features have to agree between the export and the target index:
block keys are computed again on import, so an export can also move pages into an index
with another ``max_distance`` or number of blocks.
"""

from __future__ import annotations

import json
import os
import struct
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Union

from .exceptions import IndexParameterMismatch, SimhashError
from .index.base import IndexParameters, NearDuplicateIndex, StoredPage

__all__ = ["ExportFormatError", "ExportHeader", "export_index", "import_index", "read_header"]

MAGIC = b"SIMHASHX"
FORMAT_VERSION = 1
_CHUNK = 1 << 20

FileArg = Union[str, "os.PathLike[str]", IO[bytes]]


class ExportFormatError(SimhashError, ValueError):
    """A file given to import is not a scrapy-simhash export, or is damaged."""


@dataclass(frozen=True)
class ExportHeader:
    """What an export file says about itself, readable without decoding the pages."""

    parameters: IndexParameters
    pages: int
    exported_at: float
    format: int = FORMAT_VERSION


# -- varints -----------------------------------------------------------------------------


def _put_varint(out: bytearray, value: int) -> None:
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


class _Reader:
    def __init__(self, data: bytes, name: str) -> None:
        self.data = data
        self.pos = 0
        self.name = name

    def damaged(self, what: str) -> ExportFormatError:
        return ExportFormatError(
            f"{self.name} is damaged ({what} at byte {self.pos} of its pages); "
            "export the index again or use another copy"
        )

    def varint(self) -> int:
        data, pos, shift, value = self.data, self.pos, 0, 0
        while True:
            if pos >= len(data):
                self.pos = pos
                raise self.damaged("the pages end early")
            byte = data[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                self.pos = pos
                return value
            shift += 7
            if shift > 70:
                self.pos = pos
                raise self.damaged("a number is too long")

    def take(self, size: int) -> bytes:
        if self.pos + size > len(self.data):
            raise self.damaged("the pages end early")
        chunk = self.data[self.pos : self.pos + size]
        self.pos += size
        return chunk


# -- files -------------------------------------------------------------------------------


@contextmanager
def _opened(file: FileArg, mode: str) -> Iterator[tuple[IO[bytes], str]]:
    if isinstance(file, (str, os.PathLike)):
        try:
            f = open(file, mode)  # noqa: SIM115 (closed below)
        except OSError as e:
            raise ExportFormatError(f"Cannot open {os.fspath(file)}: {e.strerror}") from None
        with f:
            yield f, os.fspath(file)
    else:
        yield file, getattr(file, "name", None) or "the export file"


def export_index(index: NearDuplicateIndex, file: FileArg) -> int:
    """Write every page of *index* to *file* (a path or a binary file); return how many."""
    pages = sorted(index.pages(), key=lambda p: (p.fingerprint, p.exact, p.key, p.added_at))
    parameters = index.parameters
    header = {
        "format": FORMAT_VERSION,
        "max_distance": parameters.max_distance,
        "blocks": parameters.blocks,
        "features": parameters.features,
        "pages": len(pages),
        "exported_at": time.time(),
    }
    body = bytearray()
    previous = 0
    for page in pages:
        _put_varint(body, page.fingerprint - previous)
        previous = page.fingerprint
    body += bytes(1 if page.exact else 0 for page in pages)
    base = min((page.added_at for page in pages), default=0.0)
    body += struct.pack("<d", base)
    for page in pages:
        _put_varint(body, max(0, round((page.added_at - base) * 1_000_000)))
    for page in pages:
        key = page.key.encode("utf-8", "surrogatepass")
        _put_varint(body, len(key))
        body += key
    head = json.dumps(header, sort_keys=True).encode("utf-8")
    with _opened(file, "wb") as (f, _):
        f.write(MAGIC + bytes([FORMAT_VERSION]) + struct.pack(">I", len(head)) + head)
        f.write(zlib.compress(bytes(body), 6))
    return len(pages)


def _read_header(f: IO[bytes], name: str) -> ExportHeader:
    start = f.read(len(MAGIC) + 5)
    if start[: len(MAGIC)] != MAGIC:
        raise ExportFormatError(
            f"{name} is not a scrapy-simhash export (it does not start with {MAGIC!r}); "
            "give a file written by `scrapy-simhash export`"
        )
    if len(start) < len(MAGIC) + 5:
        raise ExportFormatError(f"{name} is truncated: it ends inside its header")
    version = start[len(MAGIC)]
    if version != FORMAT_VERSION:
        raise ExportFormatError(
            f"{name} has export format {version}; this scrapy-simhash reads format "
            f"{FORMAT_VERSION}: upgrade scrapy-simhash"
        )
    (size,) = struct.unpack(">I", start[len(MAGIC) + 1 :])
    raw = f.read(size)
    try:
        head = json.loads(raw.decode("utf-8"))
        return ExportHeader(
            IndexParameters(int(head["max_distance"]), int(head["blocks"]), head["features"]),
            int(head["pages"]),
            float(head["exported_at"]),
            int(head["format"]),
        )
    except (ValueError, KeyError, TypeError):
        what = "truncated" if len(raw) < size else "damaged"
        raise ExportFormatError(f"{name} is {what}: its header cannot be read") from None


def read_header(file: FileArg) -> ExportHeader:
    """Read the parameters and page count of an export without decoding its pages."""
    with _opened(file, "rb") as (f, name):
        return _read_header(f, name)


def read_pages(file: FileArg) -> tuple[ExportHeader, list[StoredPage]]:
    """Decode an export completely: its header and its pages, sorted by fingerprint."""
    with _opened(file, "rb") as (f, name):
        header = _read_header(f, name)
        decompressor = zlib.decompressobj()
        parts = []
        try:
            while chunk := f.read(_CHUNK):
                parts.append(decompressor.decompress(chunk))
            parts.append(decompressor.flush())
        except zlib.error:
            raise ExportFormatError(
                f"{name} is damaged (its pages fail the zlib check); export the index again "
                "or use another copy"
            ) from None
        if not decompressor.eof:
            raise ExportFormatError(
                f"{name} is truncated: its pages end early; export the index again or use "
                "another copy"
            )
        if decompressor.unused_data:
            raise ExportFormatError(f"{name} has unexpected bytes after its pages")
    reader = _Reader(b"".join(parts), name)
    n = header.pages
    fingerprints, value = [], 0
    for _ in range(n):
        value += reader.varint()
        fingerprints.append(value)
    flags = reader.take(n)
    (base,) = struct.unpack("<d", reader.take(8))
    times = [base + reader.varint() / 1_000_000 for _ in range(n)]
    keys = [reader.take(reader.varint()).decode("utf-8", "surrogatepass") for _ in range(n)]
    if reader.pos != len(reader.data):
        raise reader.damaged("unexpected bytes after the last key")
    if fingerprints and fingerprints[-1] >= 1 << 64:
        raise reader.damaged("a fingerprint is larger than 64 bits")
    pages = [
        StoredPage(key, fp, at, exact=bool(flag))
        for key, fp, at, flag in zip(keys, fingerprints, times, flags, strict=True)
    ]
    return header, pages


def import_index(index: NearDuplicateIndex, file: FileArg) -> int:
    """Add the pages of the export *file* to *index*; return how many were added (pages
    already stored are skipped). The export's features must match the index's."""
    header, pages = read_pages(file)
    ours, theirs = index.parameters.features, header.parameters.features
    if ours != theirs:
        name = file if isinstance(file, (str, os.PathLike)) else "the export"
        raise IndexParameterMismatch(
            f"{os.fspath(name)} holds fingerprints of other features ({theirs!r}) than the "
            f"index at {index.location} ({ours!r}); they cannot be compared. Import it into a "
            "new index, which then takes the export's parameters."
        )
    return index.add_pages(pages)
