"""The columns of an export's body (see :mod:`scrapy_simhash.tools.transfer`): unsigned
LEB128 varints encoded and decoded a whole column at a time (numpy), and the paragraph
anchors' columns.

Apart from the file's layout and its reading because every column of every format version
is made of these pieces, and a damaged column is reported the same way wherever it is.
"""

from __future__ import annotations

import numpy as np

from ..anchors import Anchors
from ..exceptions import ExportFormatError

__all__ = ["MAX_FILE_ANCHORS", "ColumnReader", "decode_anchors", "encode_anchors", "encode_varints"]

#: At most this many anchors a page in a file (a sane cap for what an import reads).
MAX_FILE_ANCHORS = 64

_U64 = np.uint64


def encode_varints(values: np.ndarray) -> bytes:
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


class ColumnReader:
    """The decompressed bytes of some columns of the export *name*, read in order."""

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


def encode_anchors(anchors: list[Anchors | None]) -> list[bytes]:
    """The anchors columns of the pages *anchors* (see :mod:`~.transfer`)."""
    held = [a for a in anchors if a]
    hashes = [h for a in held for h in a.hashes]
    return [
        encode_varints(np.array([len(a) if a else 0 for a in anchors], dtype=_U64)),
        encode_varints(np.array([a.words for a in held], dtype=_U64)),
        encode_varints(np.array([a.cover for a in held], dtype=_U64)),
        np.array(hashes, dtype="<i4").tobytes(),
    ]


def decode_anchors(reader: ColumnReader, n: int) -> list[Anchors | None]:
    """The anchors of *n* pages read by *reader* (see :func:`encode_anchors`)."""
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
