"""Export and import an index as one compact, portable file (for backups and moving).

Any backend exports to the same format and any backend imports it: SQLite to Redis, a
crawl machine to a laptop. The layout, all integers unsigned LEB128 varints unless said::

    b"SIMHASHX"                  magic
    1 byte                       format version (3; 1 and 2 are read too)
    4 bytes, big-endian          length of the JSON header
    JSON header                  {"format", "max_distance", "blocks", "features", "pages",
                                  "exported_at", "anchors" (their format; from version 2),
                                  "hows" (from version 3)}
    zlib stream of the body, whose pages are sorted by fingerprint:
        fingerprints             the first, then the difference to the one before
        flags                    one byte per page: 1 = an exact-text entry
        base time                8 bytes, little-endian double: the earliest added_at
        times                    microseconds after the base time, one per page
        key lengths              length in bytes of each page's UTF-8 key
        keys                     the UTF-8 keys, one after the other
    and from version 2, the paragraph anchors (see scrapy_simhash.anchors):
        anchor counts            one per page (0: none)
        words, covers            one each per page with anchors
        anchors                  4 bytes each, little-endian signed, page after page
    and from version 3, how each page was analysed (see transfer_analysed.py):
        how numbers              one per page (0: no record)
        text hashes              8 bytes each, page after page with a record

Sorted 64-bit fingerprints are about ``2**64 / n`` apart, so their differences take
``64 - log2(n)`` bits instead of 64: at a million pages, 6 bytes each instead of 8 (more
with the varint's 1-in-8 overhead, less after zlib). Keys dominate the size; zlib shrinks
URLs of one site several times. Encoding and decoding work on whole columns (numpy), so
a page costs a few dozen bytes of memory on the way, not a Python object.

Version 1 files (written before anchors) are imported as they are: their pages have no
anchors and are found by distance only; so are the anchors of a file whose anchors' format
is not this scrapy-simhash's, which are left out.

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
from array import array
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Union

import numpy as np

from ..anchors import ANCHORS_FORMAT, Anchors
from ..exceptions import ExportFormatError, IndexParameterMismatch
from ..index.analysed import Analysed
from ..index.base import MAX_KEY_BYTES as INDEX_MAX_KEY_BYTES
from ..index.base import IndexParameters, NearDuplicateIndex, StoredPage
from .transfer_analysed import decode_analysed, encode_analysed, header_hows

__all__ = [
    "ExportFormatError",
    "ExportHeader",
    "export_index",
    "import_index",
    "import_pages",
    "read_header",
    "read_pages",
]

MAGIC = b"SIMHASHX"
FORMAT_VERSION = 3
#: The versions read: 1 (no anchors), 2 (no records of how pages were analysed) and 3.
READ_VERSIONS = (1, 2, 3)
#: At most this many anchors a page in a file (a sane cap for what an import reads).
MAX_FILE_ANCHORS = 64
_CHUNK = 1 << 20
#: Longest key an export may hold, in UTF-8 bytes: the longest an index stores, a cap on
#: what one page can make an import decompress.
MAX_KEY_BYTES = INDEX_MAX_KEY_BYTES
#: The latest time a page can have been stored at: 9999-12-31 23:59:59 UTC.
LATEST_TIME = 253_402_300_799.0

FileArg = Union[str, "os.PathLike[str]", IO[bytes]]


@dataclass(frozen=True)
class ExportHeader:
    """What an export file says about itself, readable without decoding the pages."""

    parameters: IndexParameters
    pages: int
    exported_at: float
    format: int = FORMAT_VERSION
    #: The format of the pages' paragraph anchors (``None``: a file without anchors).
    anchors: str | None = ANCHORS_FORMAT
    #: The distinct hows of the pages' analysis records (see
    #: :mod:`~scrapy_simhash.tools.transfer_analysed`); ``()`` before format 3.
    hows: tuple[str, ...] = ()


# -- varints, a column at a time -------------------------------------------------------

_U64 = np.uint64


def _encode_varints(values: np.ndarray) -> bytes:
    """Unsigned LEB128 of every value of a uint64 array, concatenated."""
    values = values.astype(_U64, copy=False)
    if not len(values):
        return b""
    sizes = np.ones(len(values), dtype=np.int64)
    for k in range(1, 10):
        sizes += values >= _U64(1 << (7 * k))
    starts = np.cumsum(sizes) - sizes
    out = np.zeros(int(sizes.sum()), dtype=np.uint8)
    for k in range(int(sizes.max())):
        has = sizes > k
        part = ((values[has] >> _U64(7 * k)) & _U64(0x7F)).astype(np.uint8)
        part[sizes[has] > k + 1] |= 0x80
        out[starts[has] + k] = part
    return out.tobytes()


class _Reader:
    def __init__(self, data: bytes, name: str) -> None:
        self.data = data
        self.bytes = np.frombuffer(data, dtype=np.uint8)
        self.pos = 0
        self.name = name

    def damaged(self, what: str) -> ExportFormatError:
        return ExportFormatError(
            f"{self.name} is damaged ({what} at byte {self.pos} of its pages); "
            "export the index again or use another copy"
        )

    def varints(self, count: int) -> np.ndarray:
        """The next *count* varints, as a uint64 array."""
        if count == 0:
            return np.zeros(0, dtype=_U64)
        rest = self.bytes[self.pos :]
        # A varint takes at most 10 bytes: look no further than that, whatever follows.
        ends = np.flatnonzero(rest[: 10 * count] < 0x80)[:count]
        if len(ends) < count:
            raise self.damaged("the pages end early")
        starts = np.concatenate(([0], ends[:-1] + 1))
        sizes = ends - starts + 1
        if sizes.max() > 10:
            raise self.damaged("a number is too long")
        total = int(ends[-1]) + 1
        chunk = rest[:total].astype(_U64) & _U64(0x7F)
        place = np.arange(total) - np.repeat(starts, sizes)
        if ((place == 9) & (chunk > 1)).any():
            raise self.damaged("a number is larger than 64 bits")
        self.pos += total
        return np.add.reduceat(chunk << (place * 7).astype(_U64), starts)

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
    fingerprints, times, flags, keys = array("Q"), array("d"), bytearray(), []
    anchors: list[Anchors | None] = []
    records: list[Analysed | None] = []
    for page in index.pages():
        fingerprints.append(page.fingerprint)
        times.append(page.added_at)
        flags.append(1 if page.exact else 0)
        keys.append(page.key)
        anchors.append(page.anchors)
        records.append(page.analysed)
    count = len(keys)
    fps = np.frombuffer(fingerprints, dtype=_U64) if count else np.zeros(0, dtype=_U64)
    order = np.argsort(fps, kind="stable")
    fps = fps[order]
    added = np.frombuffer(times, dtype=np.float64)[order] if count else np.zeros(0)
    base = float(added.min()) if count else 0.0
    micros = np.maximum(np.round((added - base) * 1_000_000), 0).astype(_U64)
    encoded = [keys[i].encode("utf-8", "surrogatepass") for i in order.tolist()]
    del keys
    hows, analysed = encode_analysed([records[i] for i in order.tolist()], _encode_varints)
    parameters = index.parameters
    header = {
        "format": FORMAT_VERSION,
        "max_distance": parameters.max_distance,
        "blocks": parameters.blocks,
        "features": parameters.features,
        "pages": count,
        "exported_at": time.time(),
        "anchors": ANCHORS_FORMAT,
        "hows": hows,
    }
    compressor = zlib.compressobj(6)
    head = json.dumps(header, sort_keys=True).encode("utf-8")
    with _opened(file, "wb") as (f, _):
        f.write(MAGIC + bytes([FORMAT_VERSION]) + struct.pack(">I", len(head)) + head)
        for part in (
            _encode_varints(np.diff(fps, prepend=_U64(0))),
            np.frombuffer(bytes(flags), dtype=np.uint8)[order].tobytes() if count else b"",
            struct.pack("<d", base),
            _encode_varints(micros),
            _encode_varints(np.array([len(k) for k in encoded], dtype=_U64)),
            b"".join(encoded),
            *_encode_anchors([anchors[i] for i in order.tolist()]),
            *analysed,
        ):
            f.write(compressor.compress(part))
        f.write(compressor.flush())
    return count


def _encode_anchors(anchors: list[Anchors | None]) -> list[bytes]:
    """The anchors columns of the pages *anchors* (see the module's docstring)."""
    held = [a for a in anchors if a]
    hashes = [h for a in held for h in a.hashes]
    return [
        _encode_varints(np.array([len(a) if a else 0 for a in anchors], dtype=_U64)),
        _encode_varints(np.array([a.words for a in held], dtype=_U64)),
        _encode_varints(np.array([a.cover for a in held], dtype=_U64)),
        np.array(hashes, dtype="<i4").tobytes(),
    ]


def _decode_anchors(reader: _Reader, n: int) -> list[Anchors | None]:
    counts = reader.varints(n).tolist()
    if n and max(counts) > MAX_FILE_ANCHORS:
        raise reader.damaged(f"a page has more than {MAX_FILE_ANCHORS} anchors")
    held = sum(1 for c in counts if c)
    words, covers = reader.varints(held).tolist(), reader.varints(held).tolist()
    hashes = np.frombuffer(reader.take(4 * sum(counts)), dtype="<i4").tolist()
    found: list[Anchors | None] = []
    at = i = 0
    for count in counts:
        if not count:
            found.append(None)
            continue
        found.append(Anchors(tuple(hashes[at : at + count]), (), words[i], covers[i]))
        at, i = at + count, i + 1
    return found


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
    if version not in READ_VERSIONS:
        raise ExportFormatError(
            f"{name} has export format {version}; this scrapy-simhash reads format "
            f"{FORMAT_VERSION}: upgrade scrapy-simhash"
        )
    (size,) = struct.unpack(">I", start[len(MAGIC) + 1 :])
    raw = f.read(size)
    try:
        head = json.loads(raw.decode("utf-8"))
        if not isinstance(head, dict):
            raise TypeError(head)
        parameters = IndexParameters(
            _whole(head["max_distance"], 0, 63),
            _whole(head["blocks"], 1, 64),
            head["features"],
        )
        if not isinstance(parameters.features, str):
            raise TypeError(parameters.features)
        parameters.plan  # noqa: B018 - raises ConfigurationError for a plan that cannot work
        exported_at = head["exported_at"]
        if isinstance(exported_at, bool) or not isinstance(exported_at, int | float):
            raise TypeError(exported_at)
        anchors = head.get("anchors")
        if anchors is not None and not isinstance(anchors, str):
            raise TypeError(anchors)
        return ExportHeader(
            parameters,
            _whole(head["pages"], 0, 2**63 - 1),
            float(exported_at),
            _whole(head["format"], 0, 255),
            anchors,
            header_hows(head.get("hows")),
        )
    except RecursionError:
        raise ExportFormatError(f"{name} is damaged: its header is nested too deeply") from None
    except (ValueError, KeyError, TypeError):
        what = "truncated" if len(raw) < size else "damaged"
        raise ExportFormatError(f"{name} is {what}: its header cannot be read") from None


def _whole(value: object, low: int, high: int) -> int:
    """*value* if it is a whole number from *low* to *high* (not a bool, a float or a
    text); raises ``ValueError`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(value)
    return value


def read_header(file: FileArg) -> ExportHeader:
    """Read the parameters and page count of an export without decoding its pages."""
    with _opened(file, "rb") as (f, name):
        return _read_header(f, name)


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


def _compressed_size(f: IO[bytes]) -> int | None:
    """Bytes left in *f*, where it can tell."""
    try:
        here = f.tell()
        end = f.seek(0, os.SEEK_END)
        f.seek(here)
    except (OSError, ValueError):
        return None
    return end - here


def read_pages(file: FileArg) -> tuple[ExportHeader, Iterator[StoredPage]]:
    """Decode an export: its header, and its pages sorted by fingerprint. The whole file is
    checked before this returns, so a damaged file raises before any page is seen.

    Decompression is bounded: first by the page count of the header (every page takes at
    least a byte of the compressed file, and at most 31 bytes of columns before its key),
    then by the key lengths those columns give, each at most :data:`MAX_KEY_BYTES`. The
    keys are not held: they are checked as they are decompressed, and decompressed again
    as the pages are read (a file of many long keys that compress well, a few megabytes
    holding gigabytes of keys, costs time, not memory)."""
    with _opened(file, "rb") as (f, name):
        header = _read_header(f, name)
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
        # The columns before the keys: three varints (at most 10 bytes each) and a flag
        # byte per page, and the 8-byte base time.
        columns = inflater.read(31 * n + 8)
        reader = _Reader(columns, name)
        fingerprints = np.cumsum(reader.varints(n), dtype=_U64)
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
        offset = reader.pos
        lengths = lengths.tolist()
        # Checked, not kept; but a stream that cannot be read twice keeps them.
        kept: list[str] | None = [] if body is None else None
        after = bytearray() if header.format >= 2 else None
        for key in _keys(inflater, columns[offset:], lengths, reader, after):
            if kept is not None:
                kept.append(key)
        anchors: list[Anchors | None] = [None] * n
        records: list[Analysed | None] = [None] * n
        if after is not None:
            # Three varints and at most MAX_FILE_ANCHORS anchors a page, and from format 3
            # a varint and a text hash.
            limit = (30 + 4 * MAX_FILE_ANCHORS + (18 if header.format >= 3 else 0)) * n
            rest = _Reader(bytes(after) + inflater.read(limit), name)
            anchors = _decode_anchors(rest, n)
            if header.format >= 3:
                records = decode_analysed(rest, n, header.hows)
            if rest.pos != len(rest.data):
                raise rest.damaged("unexpected bytes after the last anchor")
            if header.anchors != ANCHORS_FORMAT:
                anchors = [None] * n  # made otherwise: they would never match
        inflater.finish()
    del columns

    def pages() -> Iterator[StoredPage]:
        keys = iter(kept) if kept is not None else _keys_again(file, body, offset, lengths, name)
        times = (deltas.astype(np.float64) / 1_000_000 + base).tolist()
        for key, fp, at, flag, held, record in zip(
            keys, fingerprints.tolist(), times, flags, anchors, records, strict=True
        ):
            yield StoredPage(key, fp, at, exact=bool(flag), anchors=held, analysed=record)

    return header, pages()


def _tell(f: IO[bytes]) -> int | None:
    try:
        return f.tell()
    except (OSError, ValueError):
        return None


def _keys(
    inflater: _Inflater,
    start: bytes,
    lengths: list[int],
    reader: _Reader,
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
    with _opened(file, "rb") as (f, _):
        if body is not None:
            f.seek(body)
        inflater = _Inflater(f, name)
        columns = inflater.read(offset)
        yield from _keys(inflater, b"", lengths, _Reader(columns, name))


def import_index(index: NearDuplicateIndex, file: FileArg) -> int:
    """Add the pages of the export *file* to *index*; return how many were added (pages
    already stored are skipped). The export's features must match the index's."""
    header, pages = read_pages(file)
    return import_pages(index, header, pages, file)


def import_pages(
    index: NearDuplicateIndex, header: ExportHeader, pages: Iterator[StoredPage], file: FileArg
) -> int:
    """Add the *pages* :func:`read_pages` read from *file* to *index*: :func:`import_index`
    for a caller that reads the whole file first (and so refuses a damaged one before it
    creates an index for it)."""
    ours, theirs = index.parameters.features, header.parameters.features
    if ours != theirs:
        name = file if isinstance(file, (str, os.PathLike)) else "the export"
        raise IndexParameterMismatch(
            f"{os.fspath(name)} holds fingerprints of other features ({theirs!r}) than the "
            f"index at {index.location} ({ours!r}); they cannot be compared. Import it into a "
            "new index, which then takes the export's parameters."
        )
    return index.add_pages(pages)
