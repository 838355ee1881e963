"""The records of an archive: where each one is, what it reads as, and its order.

A record's order is explicit and never an engine's id: the file's position in the list
of inputs, then the record's byte offset in the file (Scrapy JSON lines, WARC/WET) or its
row (CSV, JSON, Parquet), packed into one ``int64`` (:func:`record_order`). Any
partitioning of the same inputs gives every record the same order.

Every record reads as an item (a dict), as a feed export would hold it, so that the text
fingerprinted is the text the pipeline fingerprints for the same item fields. A WARC
``response`` (or WET ``conversion``) record reads as ``{KEY_FIELD: WARC-Target-URI,
TEXT_FIELD: the decoded payload}`` with the first configured text field.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...exceptions import FeedError
from ..feeds import FEED_FORMATS
from .extras import optional

#: Bits of a record's order given to its position in the file (bytes or rows): 1 TB.
POSITION_BITS = 40
#: Suffix -> format, beyond the feed formats.
ARCHIVE_FORMATS = {
    **FEED_FORMATS,
    ".warc": "warc",
    ".gz": "warc",  # .warc.gz / .wet.gz, checked in input_format
    ".wet": "warc",
    ".parquet": "parquet",
}
#: Bytes of JSON lines read by one partition.
DEFAULT_BLOCKSIZE = 64 << 20


def record_order(file_index: int, position: int) -> int:
    return (file_index << POSITION_BITS) | position


def split_order(order: int) -> tuple[int, int]:
    return order >> POSITION_BITS, order & ((1 << POSITION_BITS) - 1)


def input_format(path: str | os.PathLike[str]) -> str:
    """The format of an input by its name: ``jsonl``, ``json``, ``csv``, ``warc`` or
    ``parquet``."""
    name = os.fspath(path).lower()
    suffix = Path(name).suffix
    if suffix == ".gz" and not name.endswith((".warc.gz", ".wet.gz", ".arc.gz")):
        raise FeedError(f"{os.fspath(path)}: a .gz input must be a .warc.gz or .wet.gz file")
    try:
        return ARCHIVE_FORMATS[suffix]
    except KeyError:
        raise FeedError(
            f"{os.fspath(path)}: unknown input format {suffix or '(no suffix)'!r}; use one of "
            f"{', '.join(sorted({*ARCHIVE_FORMATS, '.warc.gz', '.wet.gz'} - {'.gz'}))}"
        ) from None


@dataclass(frozen=True)
class Part:
    """One partition of the inputs: file *file_index* of format *fmt*, the records that
    start in bytes ``[start, end)`` (JSON lines) or the whole file (``end`` = -1)."""

    path: str
    file_index: int
    fmt: str
    start: int = 0
    end: int = -1

    def label(self, position: int) -> str:
        """How the decisions table names a record of this file."""
        mark = "@" if self.fmt in ("jsonl", "warc") else ":"
        return f"{Path(self.path).name}{mark}{position}"


def plan_parts(paths: list[str], blocksize: int = DEFAULT_BLOCKSIZE) -> list[Part]:
    """The partitions of *paths* in order: JSON lines cut every *blocksize* bytes, any
    other file whole (a CSV's quoted newlines, a JSON array and a WARC's records cannot
    be cut at a byte offset blindly)."""
    parts = []
    for file_index, path in enumerate(paths):
        fmt = input_format(path)
        try:
            size = os.path.getsize(path)
        except OSError as e:
            raise FeedError(f"Cannot read {path}: {e.strerror}") from None
        if fmt == "jsonl" and size > blocksize:
            parts += [
                Part(path, file_index, fmt, start, min(start + blocksize, size))
                for start in range(0, size, blocksize)
            ]
        else:
            parts.append(Part(path, file_index, fmt))
    return parts


def read_part(
    part: Part, *, key_field: str, text_fields: tuple[str, ...]
) -> Iterator[tuple[int, Any]]:
    """``(position, item)`` for every record of *part*, in order: a Parquet row holds
    the columns *text_fields* and *key_field* only, a WARC record the first text field
    (see the module's doc). Raises :class:`FeedError` naming the file and position of a
    record that cannot be read."""
    try:
        if part.fmt == "jsonl":
            yield from _json_lines(part)
        elif part.fmt == "csv":
            with open(part.path, encoding="utf-8", newline="") as f:
                yield from enumerate(csv.DictReader(f), 1)
        elif part.fmt == "json":
            with open(part.path, encoding="utf-8") as f:
                items = json.load(f)
            if not isinstance(items, list):
                raise FeedError(f"{part.path} holds a JSON {type(items).__name__}, not a list")
            yield from enumerate(items, 1)
        elif part.fmt == "parquet":
            from .parquet import parquet_rows

            yield from parquet_rows(part.path, text_fields, key_field)
        else:
            yield from _warc_records(part, key_field, text_fields[0])
    except OSError as e:
        raise FeedError(f"Cannot read {part.path}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise FeedError(f"{part.path} is not UTF-8 text ({e.reason})") from None
    except json.JSONDecodeError as e:
        raise FeedError(f"{part.path} is not valid JSON ({e.msg})") from None


def _json_lines(part: Part) -> Iterator[tuple[int, Any]]:
    # A line belongs to the partition in which it starts.
    with open(part.path, "rb") as f:
        offset = part.start
        if offset:
            f.seek(offset - 1)
            offset += len(f.readline()) - 1
        end = part.end if part.end >= 0 else float("inf")
        while offset < end:
            line = f.readline()
            if not line:
                break
            if line.strip():
                try:
                    yield offset, json.loads(line)
                except json.JSONDecodeError as e:
                    raise FeedError(
                        f"{part.path} at byte {offset} is not valid JSON ({e.msg})"
                    ) from None
            offset += len(line)


#: WARC record types that hold a page's content.
PAGE_RECORDS = ("response", "conversion", "resource")


def _warc_records(part: Part, key_field: str, text_field: str) -> Iterator[tuple[int, Any]]:
    ArchiveIterator = optional("warcio.archiveiterator", "warc").ArchiveIterator
    from warcio.exceptions import ArchiveLoadFailed

    with open(part.path, "rb") as f:
        records = ArchiveIterator(f)
        their = iter(records)
        offset = end = 0
        while True:
            # warcio's messages are silenced while it reads, never while the caller runs.
            with _quiet_stderr():
                try:
                    record = next(their, None)
                    if record is None:
                        break
                    page = record.rec_type in PAGE_RECORDS
                    # The payload first: asking warcio for the offset first leaves it empty.
                    payload = record.content_stream().read() if page else b""
                    offset = records.get_record_offset()  # reads the record to its end
                    _check_complete(part.path, records, record, offset)
                    end = offset + records.get_record_length()
                except ArchiveLoadFailed as e:
                    # warcio quotes the record's first line: bytes of a binary file.
                    what = str(e).split(":", 1)[0].strip() or "not a WARC record"
                    raise FeedError(
                        f"{part.path} is not a valid WARC/WET file after byte {offset} "
                        f"({what}); check the file, or leave it out"
                    ) from None
                except (EOFError, zlib.error) as e:
                    raise _truncated(part.path, offset, str(e)) from None
            if not page:
                continue
            content_type = (
                record.http_headers.get_header("Content-Type", "")
                if record.http_headers
                else record.rec_headers.get_header("Content-Type", "")
            ) or ""
            yield (
                offset,
                {
                    key_field: record.rec_headers.get_header("WARC-Target-URI"),
                    text_field: payload.decode(_charset(content_type), errors="replace"),
                },
            )
        # warcio ends quietly at a record whose headers are cut: only the blank lines that
        # close the last record may follow it.
        f.seek(end)
        rest = f.read(64)
        if rest.strip(b"\r\n"):
            raise _truncated(part.path, end, "it ends inside a record's headers")


def _check_complete(path: str, records, record, offset: int) -> None:
    """Raise if *record*, read to its end, ended before its Content-Length (a cut
    ``.warc``) or inside its gzip member (a cut or corrupt ``.warc.gz``): the archive is
    incomplete, and what it holds must not be taken for the whole."""
    remaining = getattr(record.raw_stream, "limit", 0)
    if remaining > 0:
        raise _truncated(path, offset, f"its last record lacks {remaining} bytes")
    reader = records.reader
    decompressor = reader.decompressor if reader is not None else None
    # A member ends at its gzip trailer (eof); warcio stops reading at the file's end.
    # (With a next line the file is one gzip stream of many records: warcio says so.)
    if decompressor is not None and not decompressor.eof and not records.next_line:
        raise _truncated(path, offset, "its last gzip member has no end")


def _truncated(path: str, offset: int, why: str) -> FeedError:
    return FeedError(
        f"{path} is truncated or corrupt: {why} (the record at byte {offset}); copy or "
        "download it again, or leave it out"
    )


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    # warcio writes each gzip error and each record whose length is off to stderr, one line
    # per block; _check_complete turns them into one error.
    saved = sys.stderr
    sys.stderr = io.StringIO()
    try:
        yield
    finally:
        sys.stderr = saved


def _charset(content_type: str) -> str:
    for param in content_type.split(";")[1:]:
        name, _, value = param.strip().partition("=")
        if name.lower() == "charset" and value:
            charset = value.strip("\"' ")
            try:
                "".encode(charset)
            except LookupError:
                return "utf-8"
            return charset
    return "utf-8"


def write_kept(
    part_path: str,
    fmt: str,
    positions: set[int],
    output: str,
    *,
    raw_csv: bool,
    text_fields: tuple[str, ...] = (),
) -> int:
    """Write the records of input *part_path* whose positions are in *positions* to
    *output*, in the input's format (bytes copied as they are for JSON lines and WARC;
    Parquet's *text_fields* without statistics, see
    :func:`~.parquet.write_kept_parquet`); return how many."""
    written = 0
    try:
        if fmt in ("jsonl", "warc"):
            with open(part_path, "rb") as f, open(output, "wb") as out:
                for start, length in _spans(part_path, fmt, f):
                    if start in positions:
                        f.seek(start)
                        out.write(f.read(length))
                        written += 1
        elif fmt == "parquet":
            from .parquet import write_kept_parquet

            written = write_kept_parquet(part_path, positions, output, text_fields=text_fields)
        else:
            from ..feeds import read_feed, write_feed

            items = [item for n, item in enumerate(read_feed(part_path), 1) if n in positions]
            write_feed(output, items, raw_csv=raw_csv)
            written = len(items)
    except OSError as e:
        raise FeedError(f"Cannot write {output}: {e.strerror}") from None
    return written


def _spans(path: str, fmt: str, f) -> Iterator[tuple[int, int]]:
    if fmt == "jsonl":
        offset = 0
        for line in f:
            yield offset, len(line)
            offset += len(line)
        return
    ArchiveIterator = optional("warcio.archiveiterator", "warc").ArchiveIterator
    with open(path, "rb") as g:
        records = ArchiveIterator(g)
        for _ in records:
            offset = records.get_record_offset()
            records.read_to_end()
            yield offset, records.get_record_length()


__all__ = [
    "Part",
    "input_format",
    "plan_parts",
    "read_part",
    "record_order",
    "split_order",
    "write_kept",
]
