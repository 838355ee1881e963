"""A page's anchors, sketch and record of how it was analysed, as the hashes of a Redis
index hold them (``{prefix}:pa``, ``{prefix}:sk``, ``{prefix}:an`` and ``{prefix}:how``;
per home in a spread index), and as the scripts take them.

Apart from the check and maintenance because both layouts write and read these values on
every path: the check, the restore of an export, listing, and the spread protocol.
"""

from __future__ import annotations

import json

from ...anchors import Anchors
from ...sketch import Sketch
from ..analysed import Analysed, from_how
from .layout import hex64

__all__ = ["analysed_args", "packed_sketch", "page_anchors", "stored_analysed", "stored_sketch"]


def page_anchors(value: str | None) -> Anchors | None:
    """A page's anchors as ``{prefix}:pa`` stores them (``[hex, words, cover, ...]``)."""
    if value is None:
        return None
    _, words, cover, *hashes = json.loads(value)
    return Anchors(tuple(hashes), (), words, cover)


def packed_sketch(sketch: Sketch | None) -> str:
    """A sketch as ``{prefix}:sk`` stores it: :meth:`Sketch.pack` in hex (``''``: none)."""
    return sketch.pack().hex() if sketch else ""


def analysed_args(analysed: Analysed | None) -> list[str]:
    """How a page was analysed, as the scripts take it: its how and its text hash in hex
    (``''`` twice: no record)."""
    return ["", ""] if analysed is None else [analysed.how, hex64(analysed.text_hash)]


def stored_analysed(value: str | None, hows: dict[str, str]) -> Analysed | None:
    """:func:`analysed_args` as ``{prefix}:an`` stores it, read back with the hows of
    ``{prefix}:how`` (``"#<id>" -> how``)."""
    if not value:
        return None
    how_id, _, text_hash = value.partition(":")
    how = hows.get(f"#{how_id}")
    return None if how is None else from_how(how, int(text_hash, 16))


def stored_sketch(value: str | None) -> Sketch | None:
    """:func:`packed_sketch` read back."""
    return Sketch.unpack(bytes.fromhex(value)) if value else None
