"""The key layout of a Redis index spread over a Redis Cluster (``?cluster=true&spread=true``).

A single-slot index keeps every key under one hash tag, so one master holds it all. A
spread index routes each table by the value of the first block of its key: table
``(i, j, ...)`` of the block plan lives under the hash tag ``{prefix:g:i:<value of block
i>}`` (a *group*). A fingerprint then touches one group per first block, ``k + 1`` of
them (4 for the default plan), and two fingerprints within distance ``k`` agree on at
least ``blocks - k`` blocks, so they share the table keyed on the first ``blocks - k`` of
those, which lives in the group of the first: they always meet in one slot, where one
Lua script sees both. The groups of one block take ``2**width`` tags (8,192 for 13 bits),
spread over every master by CRC16 like any other keys::

    {p}:meta                           hash    parameters, layout=spread, homes, ...
    {p:g:<i>:<v>}:t:<table>:<bucket>   set     the table's members, as in the single-slot
                                               layout (see :mod:`.layout`)
    {p:g:<i>:<v>}:fp                   hash    hex -> [[txn, key, "added_at", committed]]
    {p:x:<h>}:exact                    hash    digest hex -> [[txn, key, "added_at", committed]]
    {p:h:<h>}:keys                     hash    key -> its entries ["f:<txn>:<hex>", ...]
    {p:h:<h>}:order                    zset    "f:<txn>:<hex>:<key>" scored by time stored
    {p:h:<h>}:n                        hash    pages (the count of this home)
    {p:h:<h>}:a:<txn>                  string  "a": the attempt <txn> was aborted (1 day)
    {p:d:<s>}:drops                    stream  the audit log, one of ``DROP_STREAMS``

A page's *home* (``{p:h:<crc32(key) % homes>}``) holds what is known by its key: the
entries under the key, the order of pages, the count and the commit records; exact
entries live in the group of their digest. An index of ``homes`` = 1,024 homes spreads
its keys and its commits over the masters within a few percent.

**Commit records.** An entry in a group carries the attempt (*txn*) that wrote it and a
flag: 1 when its attempt is known committed, 0 while it may be pending. The decisive
record of an attempt is at the home of its key: committed when its member is listed under
the key in ``:keys``, aborted when ``:a:<txn>`` exists, pending otherwise. Both are
written by scripts in that one slot, so exactly one of them ever happens (see
:mod:`.spread`).

**Paragraph anchors** (containment, see :mod:`scrapy_simhash.anchors`) route by their own
value, each in an *anchor slot* ``{p:a:<anchor % homes>}``::

    {p:a:<h>}:anchors                  hash    anchor -> [[txn, key, "added_at", committed,
                                               hex, words, cover, [anchors]], ...] or 'b'
    {p:a:<h>}:seen                     hash    anchor -> "<page>,<page>,...": its sightings
                                               (see scrapy_simhash.index.rule)
    {p:h:<h>}:pa                       hash    "f:<txn>:<hex>" -> [words, cover, [anchors]]
    {p:h:<h>}:sk                       hash    "f:<txn>:<hex>" -> the page's sketch
                                               (scrapy_simhash.sketch, packed, in hex)
    {p:h:<h>}:an                       hash    "f:<txn>:<hex>" or "x:..." -> "<how id>:
                                               <text hash in hex>": how the page was
                                               analysed (scrapy_simhash.index.analysed)
    {p:h:<h>}:how                      hash    how -> id and "#<id>" -> how, per home

Each record carries the page's whole list of anchors: two copies checked at once may meet
in the slot of only one of the anchors they share, and that one meeting must decide. An
anchor's sightings count the pages seen holding it (kept or dropped; a retried attempt is
the same page); once they are full, its records become ``'b'`` (boilerplate) for good.
The home keeps each page's anchors, to remove them with the page.
"""

from __future__ import annotations

import itertools
import os
import re
import time
import zlib
from dataclasses import dataclass

from ...exceptions import ConfigurationError
from ..base import IndexParameters
from .layout import TableLayout, table_layouts

#: ``layout`` in ``{prefix}:meta`` of a spread index.
SPREAD = "spread"
#: Bumped with every change of the layout above (3: text sketches at the homes, their
#: format in the meta hash; 4: the anchors' sightings).
SPREAD_VERSION = 4
#: The layout before sightings: upgraded by ``scrapy-simhash upgrade`` only.
PRE_SEEN_SPREAD_VERSION = 3
#: The layout before the sketches: upgraded by ``scrapy-simhash upgrade`` only.
PRE_SKETCH_SPREAD_VERSION = 2
DEFAULT_HOMES = 1024
DROP_STREAMS = 16
#: Seconds an aborted attempt's record lives: far longer than any attempt may take.
ABORT_TTL = 86400
#: An attempt older than this (the server's clock against the client's) is never
#: committed: its abort record, if any, is certain to be still there.
MAX_ATTEMPT_AGE = 600


def crc(text: str) -> int:
    return zlib.crc32(text.encode("utf-8", "backslashreplace"))


@dataclass(frozen=True)
class Group:
    """The tables of one first block: ``(block, tables, layouts)``."""

    block: int
    shift: int
    width: int
    tables: tuple[int, ...]  #: indexes into the plan's tables
    layouts: tuple[TableLayout, ...]

    def value(self, fingerprint: int) -> int:
        return (fingerprint >> self.shift) & ((1 << self.width) - 1)


def groups(parameters: IndexParameters, bucket_bits: int) -> list[Group]:
    """The groups of a plan: one per block that comes first in some table."""
    plan = parameters.plan
    layouts = table_layouts(parameters, bucket_bits)
    by_block: dict[int, list[int]] = {}
    for t, table in enumerate(plan.tables):
        by_block.setdefault(table[0], []).append(t)
    found = []
    for block, tables in sorted(by_block.items()):
        shift, width = plan.spans[block]
        found.append(Group(block, shift, width, tuple(tables), tuple(layouts[t] for t in tables)))
    return found


#: The hash tags of a spread index's slots, after ``{prefix:``: groups, exact entries, homes,
#: anchors, drop streams and journals (see the module's docstring and the journal).
_SLOT_TAG = re.compile(r"^(?P<prefix>.+):(?:g:[0-9]+:[0-9]+|[xhadj]:[0-9]+)$")


def check_prefix_free(prefix: str, location: str) -> None:
    """Refuse to create an index (of either layout) under *prefix* when it has the shape of
    a slot of a spread index: the two would share keys (a single-slot index
    ``prefix=p:h:3`` is home 3 of the spread index ``p``), and each would read the other's
    pages as its own."""
    found = _SLOT_TAG.match(prefix)
    if found:
        raise ConfigurationError(
            f"{location}: the prefix {prefix!r} names a slot of a spread index "
            f"(prefix {found['prefix']!r}), whose keys it would share. Choose a prefix that "
            "does not end in ':<letter>:<number>' in SIMHASH_INDEX_URI (?prefix=...)."
        )


class Keys:
    """The names of a spread index's keys."""

    def __init__(self, prefix: str, homes: int) -> None:
        self.prefix = prefix
        self.homes = homes
        self.meta = "{" + prefix + "}:meta"

    def group(self, block: int, value: int) -> str:
        return f"{{{self.prefix}:g:{block}:{value}}}"

    def exact(self, digest: int) -> str:
        return f"{{{self.prefix}:x:{digest % self.homes}}}"

    def home_of(self, key: str) -> str:
        return self.home(crc(key) % self.homes)

    def home(self, number: int) -> str:
        return f"{{{self.prefix}:h:{number}}}"

    def anchor(self, anchor: int) -> str:
        return f"{{{self.prefix}:a:{anchor % self.homes}}}"

    def drops(self, number: int) -> str:
        return f"{{{self.prefix}:d:{number}}}:drops"

    def all_homes(self) -> list[str]:
        return [self.home(h) for h in range(self.homes)]


class Attempts:
    """Attempt ids, ordered as their priority: older first. ``<time in us, 16 digits>
    <client, 8 hex><counter, 6 digits>``; a restarted check takes a new one."""

    def __init__(self) -> None:
        self.client = int.from_bytes(os.urandom(4), "big")
        self._counter = itertools.count()

    def new(self) -> str:
        return f"{int(time.time() * 1e6):016d}{self.client:08x}{next(self._counter) % 10**6:06d}"


def txn_order(txn: str) -> int:
    """The order an attempt id gives its page among the stored ones, as a number (see
    :class:`Attempts`): by time, then client, then counter, as the ids sort."""
    return (int(txn[:16]) << 56) | (int(txn[16:24], 16) << 24) | int(txn[24:30])


def member(exact: bool, txn: str, hex_value: str) -> str:
    """An entry as listed under its key: ``f:<txn>:<hex>`` or ``x:...``."""
    return f"{'x' if exact else 'f'}:{txn}:{hex_value}"


def parse_member(text: str) -> tuple[bool, str, str]:
    """(exact, txn, hex) of a listed entry (or an order member, whose key follows)."""
    kind, txn, hex_value = text.split(":", 3)[:3]
    return kind == "x", txn, hex_value


@dataclass(frozen=True)
class Found:
    """An entry a group returned: near the probe, committed or maybe pending."""

    distance: int
    hex: str
    txn: str
    key: str
    added_at: float
    committed: bool
    exact: bool
    #: Found by containment: the anchors it shares with the probe (empty: by distance).
    shared: tuple[int, ...] = ()
    #: Found by containment: its anchors' summary (see scrapy_simhash.anchors).
    summary: tuple[int, int, int] | None = None
