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

The header is read in :mod:`~.transfer_header`, the columns are encoded in
:mod:`~.transfer_columns`, and the pages are read back, checked and bounded, in
:mod:`~.transfer_read`; this module writes a file and imports one into an index.

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

import numpy as np

from ..anchors import ANCHORS_FORMAT, Anchors
from ..exceptions import ExportFormatError, IndexParameterMismatch
from ..index.analysed import Analysed
from ..index.base import NearDuplicateIndex, StoredPage
from .transfer_analysed import encode_analysed
from .transfer_columns import MAX_FILE_ANCHORS, encode_anchors, encode_varints
from .transfer_header import (
    FORMAT_VERSION,
    MAGIC,
    READ_VERSIONS,
    ExportHeader,
    FileArg,
    opened,
    read_header,
)
from .transfer_read import LATEST_TIME, MAX_KEY_BYTES, read_pages

__all__ = [
    "FORMAT_VERSION",
    "LATEST_TIME",
    "MAGIC",
    "MAX_FILE_ANCHORS",
    "MAX_KEY_BYTES",
    "READ_VERSIONS",
    "ExportFormatError",
    "ExportHeader",
    "export_index",
    "import_index",
    "import_pages",
    "read_header",
    "read_pages",
]

_U64 = np.uint64


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
    hows, analysed = encode_analysed([records[i] for i in order.tolist()], encode_varints)
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
    with opened(file, "wb") as (f, _):
        f.write(MAGIC + bytes([FORMAT_VERSION]) + struct.pack(">I", len(head)) + head)
        for part in (
            encode_varints(np.diff(fps, prepend=_U64(0))),
            np.frombuffer(bytes(flags), dtype=np.uint8)[order].tobytes() if count else b"",
            struct.pack("<d", base),
            encode_varints(micros),
            encode_varints(np.array([len(k) for k in encoded], dtype=_U64)),
            b"".join(encoded),
            *encode_anchors([anchors[i] for i in order.tolist()]),
            *analysed,
        ):
            f.write(compressor.compress(part))
        f.write(compressor.flush())
    return count


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
