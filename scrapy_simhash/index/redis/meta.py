"""The parameters of a single-slot Redis index in ``{prefix}:meta``: created, read and
checked on every open (format, layout version, the anchors' and the sketches' formats,
bucket bits), and the upgrade of an index written before anchors, sketches or sightings.

A part of :class:`~.index.RedisStore` (see ``Index._open``), handed its
:class:`~.slot.Slot`, as :mod:`~.spread_meta` is for a spread index: what is stored about
the index, not how its pages are checked.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from ...anchors import ANCHORS_FORMAT
from ...exceptions import IndexUnavailable, NotAnIndex
from ...sketch import SKETCH_FORMAT
from ..base import (
    IndexParameters,
    check_anchors_format,
    check_layout_version,
    check_sketch_format,
    stored_parameters,
)
from .layout import (
    DEFAULT_BUCKET_BITS,
    FORMAT,
    LAYOUT_VERSION,
    PRE_ANCHORS_VERSION,
    PRE_SEEN_VERSION,
    PRE_SKETCH_VERSION,
    table_layouts,
)
from .scripts import CREATE_META
from .spread_layout import SPREAD, check_prefix_free
from .upgrade import count_single_slot

if TYPE_CHECKING:
    from .slot import Slot

#: The logger of :mod:`~.index`, whose messages these were before the module was split.
logger = logging.getLogger("scrapy_simhash.index.redis.index")


class RedisMeta:
    """The parameters of the index in *slot*: read (and the index upgraded, with
    *upgrade*) on open, created with *bucket_bits* (the default when ``None``); the
    index's bucket bits are :attr:`bucket_bits` then."""

    def __init__(self, slot: Slot, *, upgrade: bool, bucket_bits: int | None) -> None:
        self.slot = slot
        self.bucket_bits = DEFAULT_BUCKET_BITS
        self._upgrade_anchors = upgrade
        self.requested_bucket_bits = bucket_bits
        self._create_meta = slot.client.register_script(CREATE_META)

    def read_parameters(self) -> IndexParameters | None:
        meta = self.slot.client.hgetall(self.slot.meta_key)
        if not meta:  # no index here yet: none is made where a spread index may write
            check_prefix_free(self.slot.server.prefix, self.slot.location)
        if not meta and self.slot.server.has_keys():
            # Keys but no parameters. Another process may have just created this index:
            # its parameters are written first, in one script, before any other key.
            meta = self.slot.client.hgetall(self.slot.meta_key)
            if not meta:
                raise NotAnIndex(
                    f"{self.slot.location} has keys under {self.slot.server.tag}: but no "
                    f"scrapy-simhash parameters in {self.slot.meta_key}; they were left "
                    "untouched. Choose another prefix in SIMHASH_INDEX_URI (?prefix=...)."
                )
        return self._parse_meta(meta) if meta else None

    def create(self, parameters: IndexParameters) -> IndexParameters:
        bits = self.requested_bucket_bits
        bits = DEFAULT_BUCKET_BITS if bits is None else bits
        table_layouts(parameters, bits)  # validates before anything is written
        fields = {
            "format": FORMAT,
            "version": str(LAYOUT_VERSION),
            "max_distance": str(parameters.max_distance),
            "blocks": str(parameters.blocks),
            "features": parameters.features,
            "bucket_bits": str(bits),
            "created_at": repr(time.time()),
            "anchors": ANCHORS_FORMAT,
            "sketch": SKETCH_FORMAT,
        }
        args = [x for item in fields.items() for x in item]
        reply = self._create_meta(keys=[self.slot.meta_key], args=args)
        return self._parse_meta(dict(zip(reply[::2], reply[1::2], strict=True)))

    def _parse_meta(self, meta: dict[str, str]) -> IndexParameters:
        if meta.get("format") != FORMAT:
            raise NotAnIndex(
                f"{self.slot.location} holds a key {self.slot.meta_key} that is not "
                "scrapy-simhash's; it was left untouched. Choose another prefix in "
                "SIMHASH_INDEX_URI (?prefix=...)."
            )
        if meta.get("layout") == SPREAD:
            raise NotAnIndex(
                f"The index at {self.slot.location} is spread over a Redis Cluster: open it with "
                "cluster=true&spread=true in SIMHASH_INDEX_URI"
            )
        version = int(meta.get("version", "0"))
        if version in (PRE_ANCHORS_VERSION, PRE_SKETCH_VERSION, PRE_SEEN_VERSION):
            meta = self._upgrade(meta, version)
            version = LAYOUT_VERSION
        check_layout_version(version, LAYOUT_VERSION, self.slot.location, "layout version")
        check_anchors_format(meta.get("anchors"), self.slot.location)
        check_sketch_format(meta.get("sketch"), self.slot.location)
        stored = stored_parameters(meta, self.slot.location, self.slot.meta_key)
        try:
            self.bucket_bits = int(meta["bucket_bits"])
        except (KeyError, ValueError):
            stored_parameters({}, self.slot.location, self.slot.meta_key)  # raises IndexCorrupt
        return stored

    def _upgrade(self, meta: dict[str, str], version: int) -> dict[str, str]:
        """Upgrade an index written before paragraph anchors or before text sketches when
        asked to (its pages keep none: they are found by distance only, and hold an
        unknown share of a page's text), or before sightings (its stored pages count as
        seen, see :mod:`.upgrade`), else refuse it naming the command."""
        if not self._upgrade_anchors:
            missing = {
                PRE_ANCHORS_VERSION: "paragraph anchors",
                PRE_SKETCH_VERSION: "text sketches",
            }.get(version, "counting boilerplate in pages seen")
            raise IndexUnavailable(
                f"The index at {self.slot.location} has layout version {version}, written before "
                f"{missing} (this scrapy-simhash writes version {LAYOUT_VERSION}); it was "
                "left untouched. Upgrade it (its pages are kept; a page that looks like one "
                "of them is kept too, as the share of its text they hold is unknown) with: "
                f"scrapy-simhash upgrade --index {self.slot.location}"
            )
        added = {"version": str(LAYOUT_VERSION), "sketch": SKETCH_FORMAT}
        if version == PRE_ANCHORS_VERSION:
            added["anchors"] = ANCHORS_FORMAT
        with self.slot.server.errors("upgrade"):
            if version == PRE_SEEN_VERSION:
                count_single_slot(self.slot.client, self.slot.server.tag)
            self.slot.client.hset(self.slot.meta_key, mapping=added)
        logger.warning(
            "Upgraded the index at %s to layout version %d (paragraph anchors %s, sketches %s)",
            self.slot.location, LAYOUT_VERSION, ANCHORS_FORMAT, SKETCH_FORMAT,
        )  # fmt: skip
        return {**meta, **added}
