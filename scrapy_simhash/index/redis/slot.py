"""The one hash slot of a single-slot Redis index: its server, the names of its keys (see
:mod:`.layout`) and, once its parameters are read, its tables. What the parts of
:class:`~.index.RedisStore` (its parameters, its check, its maintenance) share, and
nothing of what each does with it, as a SQLite store's parts share its ``Database``."""

from __future__ import annotations

import time
from typing import Any

from ...exceptions import IndexCorrupt
from ..parameters import IndexParameters
from .guards import RedisServer
from .layout import TableLayout, table_layouts


class Slot:
    """The keys under *server*'s hash tag; pages stored more than *ttl* seconds ago
    have expired."""

    def __init__(self, server: RedisServer, ttl: float | None) -> None:
        self.server = server
        self.location = server.location
        self.ttl = ttl
        tag = server.tag
        self.meta_key = f"{tag}:meta"
        self.counters_key = f"{tag}:n"
        self.fp_key = f"{tag}:fp"
        self.exact_key = f"{tag}:exact"
        self.drops_key = f"{tag}:drops"
        self.order_key = f"{tag}:order"
        self.keys_key = f"{tag}:keys"
        self.anchors_key = f"{tag}:anchors"
        self.page_anchors_key = f"{tag}:pa"
        self.sketches_key = f"{tag}:sk"
        self.analysed_key = f"{tag}:an"
        self.hows_key = f"{tag}:how"
        #: The tables of the block plan (set by :meth:`lay_out` once the index is open).
        self.layouts: list[TableLayout] = []
        #: Per table, the bits of a fingerprint that are its table key.
        self.key_masks: list[int] = []

    @property
    def client(self) -> Any:
        return self.server.client

    def lay_out(self, parameters: IndexParameters, bucket_bits: int) -> None:
        self.layouts = table_layouts(parameters, bucket_bits)
        self.key_masks = [((1 << 64) - 1) ^ layout.rest_mask for layout in self.layouts]

    def table_keys(self, fingerprint: int) -> tuple[list[str], list[int]]:
        """The table sets *fingerprint* is listed in, and its member in each."""
        keys, members = [], []
        for table, layout in enumerate(self.layouts):
            bucket, member = layout.split(fingerprint)
            keys.append(f"{self.server.tag}:t:{table}:{bucket}")
            members.append(member)
        return keys, members

    def script_keys(self, fingerprint: int) -> tuple[list[str], list[int]]:
        """The keys of the scripts that store or remove *fingerprint*, and its members."""
        keys, members = self.table_keys(fingerprint)
        return [*keys, self.fp_key, self.counters_key, self.order_key], members

    def exact_keys(self) -> list[str]:
        return [
            self.exact_key,
            self.counters_key,
            self.order_key,
            self.meta_key,
            self.keys_key,
            self.fp_key,
        ]

    def cutoff(self) -> str:
        """Pages stored before this time have expired ('' without a ttl)."""
        return "" if self.ttl is None else repr(time.time() - self.ttl)

    def vanished(self) -> IndexCorrupt:
        return IndexCorrupt(
            f"The index at {self.location} lost its keys while in use ({self.meta_key} "
            "or its counters are gone): they were deleted, or the server evicted them "
            "(maxmemory-policy). Pages stored until now are forgotten; restore the index "
            "from a backup (scrapy-simhash export/import), set maxmemory-policy "
            "noeviction, and open it again"
        )
