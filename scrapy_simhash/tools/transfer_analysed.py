"""The columns of an export (format 3, see :mod:`scrapy_simhash.tools.transfer`) that say how
each page was analysed (see :mod:`scrapy_simhash.index.analysed`)::

    header "hows"                the distinct hows of the file, a list of strings
    how numbers                  one varint per page: 0 for no record, else 1 + its how's
                                 place in the list
    text hashes                  8 bytes each, little-endian, page after page with a record

No Scrapy import.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..index.analysed import Analysed, from_how

__all__ = ["decode_analysed", "encode_analysed", "header_hows"]


def encode_analysed(
    records: list[Analysed | None], encode_varints: Any
) -> tuple[list[str], list[bytes]]:
    """The hows of *records* (for the header) and their two columns."""
    hows: dict[str, int] = {}
    numbers = []
    for record in records:
        if record is None:
            numbers.append(0)
        else:
            numbers.append(hows.setdefault(record.how, len(hows) + 1))
    hashes = [record.text_hash for record in records if record is not None]
    columns = [
        encode_varints(np.array(numbers, dtype=np.uint64)),
        np.array(hashes, dtype="<u8").tobytes(),
    ]
    return list(hows), columns


def decode_analysed(reader: Any, n: int, hows: tuple[str, ...]) -> list[Analysed | None]:
    """The records of *n* pages read by *reader* (see :func:`encode_analysed`)."""
    numbers = reader.varints(n).tolist()
    if n and max(numbers) > len(hows):
        raise reader.damaged("a page names a how the header does not list")
    held = sum(1 for number in numbers if number)
    hashes = np.frombuffer(reader.take(8 * held), dtype="<u8").tolist()
    found: list[Analysed | None] = []
    at = 0
    for number in numbers:
        if not number:
            found.append(None)
            continue
        found.append(from_how(hows[number - 1], hashes[at]))
        at += 1
    return found


def header_hows(value: object) -> tuple[str, ...]:
    """The header's ``hows`` (absent before format 3); ``TypeError`` if it is not a list
    of strings each naming an extractor."""
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(h, str) and h for h in value):
        raise TypeError(value)
    return tuple(value)
