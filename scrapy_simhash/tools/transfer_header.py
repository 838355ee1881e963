"""The start of an export file (see :mod:`scrapy_simhash.tools.transfer`): the magic, the
format version and the JSON header, which say what the file holds without decoding its
pages; and how a file is opened, by path or as a binary file.

Apart from the pages because the header is read on its own (``read_header``, and before an
import creates an index), and every field of it is checked before it is believed.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Union

from ..anchors import ANCHORS_FORMAT
from ..exceptions import ExportFormatError
from ..index.base import IndexParameters
from .transfer_analysed import header_hows

__all__ = [
    "FORMAT_VERSION",
    "MAGIC",
    "READ_VERSIONS",
    "ExportHeader",
    "FileArg",
    "opened",
    "read_header",
    "read_header_from",
]

MAGIC = b"SIMHASHX"
FORMAT_VERSION = 3
#: The versions read: 1 (no anchors), 2 (no records of how pages were analysed) and 3.
READ_VERSIONS = (1, 2, 3)

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


@contextmanager
def opened(file: FileArg, mode: str) -> Iterator[tuple[IO[bytes], str]]:
    """*file* open in *mode* (a path is opened and closed here), with its name for
    messages."""
    if isinstance(file, (str, os.PathLike)):
        try:
            f = open(file, mode)  # noqa: SIM115 (closed below)
        except OSError as e:
            raise ExportFormatError(f"Cannot open {os.fspath(file)}: {e.strerror}") from None
        with f:
            yield f, os.fspath(file)
    else:
        yield file, getattr(file, "name", None) or "the export file"


def read_header(file: FileArg) -> ExportHeader:
    """Read the parameters and page count of an export without decoding its pages."""
    with opened(file, "rb") as (f, name):
        return read_header_from(f, name)


def read_header_from(f: IO[bytes], name: str) -> ExportHeader:
    """The header of the export *f* (named *name* in messages), which is left at the
    start of the pages."""
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
        return _parsed(json.loads(raw.decode("utf-8")))
    except RecursionError:
        raise ExportFormatError(f"{name} is damaged: its header is nested too deeply") from None
    except (ValueError, KeyError, TypeError):
        what = "truncated" if len(raw) < size else "damaged"
        raise ExportFormatError(f"{name} is {what}: its header cannot be read") from None


def _parsed(head: object) -> ExportHeader:
    """The header's JSON *head*, checked field by field; ``ValueError``, ``KeyError`` or
    ``TypeError`` for a field missing or out of range."""
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


def _whole(value: object, low: int, high: int) -> int:
    """*value* if it is a whole number from *low* to *high* (not a bool, a float or a
    text); raises ``ValueError`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(value)
    return value
