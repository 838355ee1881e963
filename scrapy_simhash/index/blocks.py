"""The block plan: which bits of a fingerprint each index table is keyed on.

Manku, Jain and Das Sarma (WWW 2007), generalised. Cut the 64 bits into ``blocks`` runs
of (nearly) equal width. Two fingerprints within Hamming distance ``k`` differ in at most
``k`` bits, hence in at most ``k`` blocks, hence agree exactly on at least ``blocks - k``
blocks. So make one table for every choice of ``blocks - k`` blocks, keyed on the bits of
those blocks: any pair within distance ``k`` shares the key of at least one table. Recall
is exact, not probabilistic.

For k = 3::

    blocks = 4 -> C(4,1) =  4 tables, 16-bit keys  (least space, most candidates per probe)
    blocks = 5 -> C(5,2) = 10 tables, 25/26-bit keys
    blocks = 6 -> C(6,3) = 20 tables, 31-33-bit keys (most space, fewest candidates)

A probe returns the stored fingerprints that share a key; each is then checked with an
exact Hamming distance. Longer keys mean fewer random candidates per probe: about
``n / 2**key_bits`` for ``n`` stored fingerprints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from math import comb

from ..exceptions import ConfigurationError
from ..features import FINGERPRINT_BITS

#: More tables than this costs more per insert than any probe saves.
MAX_TABLES = 256


def default_blocks(max_distance: int) -> int:
    """The default number of blocks for *max_distance*: ``k + 2``.

    ``k + 1`` blocks (4 tables for k = 3) keys each table on only 16 bits, which returns
    hundreds of candidates per probe once millions of pages are stored; ``k + 2`` (10
    tables of 25-26 bits) keeps probes to a handful of candidates at 10 million pages for
    2.5 times the storage.
    """
    return max_distance + 2


@dataclass(frozen=True)
class BlockPlan:
    """The tables of an index for fingerprints of *bits* bits and distance *max_distance*."""

    max_distance: int = 3
    blocks: int = 5
    bits: int = FINGERPRINT_BITS
    #: (shift, width) of each block, least significant block first.
    spans: tuple[tuple[int, int], ...] = field(init=False, repr=False)
    #: For each table, the indexes of the blocks its key is made of.
    tables: tuple[tuple[int, ...], ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        k, b, bits = self.max_distance, self.blocks, self.bits
        if bits != FINGERPRINT_BITS:
            raise ConfigurationError(f"bits={bits} is not supported; fingerprints have 64 bits")
        if not 0 <= k < bits // 2:
            raise ConfigurationError(
                f"max_distance={k} must be between 0 and {bits // 2 - 1}; "
                "3 is the usual choice for 64-bit fingerprints"
            )
        if b <= k:
            raise ConfigurationError(
                f"blocks={b} must be greater than max_distance={k}; use {k + 1} or more"
            )
        if b > bits:
            raise ConfigurationError(f"blocks={b} must be at most {bits}; use {k + 2}")
        if comb(b, k) > MAX_TABLES:
            raise ConfigurationError(
                f"blocks={b} with max_distance={k} makes {comb(b, k)} tables "
                f"(more than {MAX_TABLES}); use between {k + 1} and {k + 3}"
            )
        width, extra = divmod(bits, b)
        spans, shift = [], 0
        for i in range(b):
            size = width + (1 if i < extra else 0)
            spans.append((shift, size))
            shift += size
        object.__setattr__(self, "spans", tuple(spans))
        object.__setattr__(self, "tables", tuple(combinations(range(b), b - k)))

    @property
    def table_count(self) -> int:
        return len(self.tables)

    def key_bits(self, table: int) -> int:
        """Width in bits of the keys of *table*."""
        return sum(self.spans[i][1] for i in self.tables[table])

    def keys(self, fingerprint: int) -> list[int]:
        """Return the key of *fingerprint* in each table (table order), each < 2**key_bits."""
        parts = [(fingerprint >> shift) & ((1 << width) - 1) for shift, width in self.spans]
        keys = []
        for table in self.tables:
            key = 0
            for i in table:
                key = (key << self.spans[i][1]) | parts[i]
            keys.append(key)
        return keys
