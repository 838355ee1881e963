"""The parameters of a spread Redis index in its meta hash: created, read and checked on
every open (layout, version, the anchors' and the sketches' formats), and the upgrade of
an index written before text sketches (by ``scrapy-simhash upgrade`` only). A part of
:class:`~.spread.SpreadStore`, handed its :class:`~.cluster.Cluster`."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from ...anchors import ANCHORS_FORMAT
from ...exceptions import ConfigurationError, IndexUnavailable, NotAnIndex
from ...sketch import SKETCH_FORMAT
from ..base import (
    IndexParameters,
    check_anchors_format,
    check_layout_version,
    check_sketch_format,
    stored_parameters,
)
from .layout import DEFAULT_BUCKET_BITS, FORMAT
from .spread_layout import (
    DEFAULT_HOMES,
    DROP_STREAMS,
    PRE_SEEN_SPREAD_VERSION,
    PRE_SKETCH_SPREAD_VERSION,
    SPREAD,
    SPREAD_VERSION,
    Keys,
    check_prefix_free,
    groups,
)
from .spread_scripts import CREATE_META
from .upgrade import count_spread

if TYPE_CHECKING:
    from .cluster import Cluster

logger = logging.getLogger("scrapy_simhash.index.redis")


class SpreadMeta:
    """The parameters of the index on *cluster*: read (and the index upgraded, with
    *upgrade*) on open, created with *bucket_bits* (the default when ``None``); the
    index's bucket bits are :attr:`bucket_bits` then, and the cluster's keys have as
    many homes as the parameters say."""

    def __init__(self, cluster: Cluster, *, upgrade: bool, bucket_bits: int | None) -> None:
        self.cluster = cluster
        self.bucket_bits = DEFAULT_BUCKET_BITS
        self.requested_bucket_bits = bucket_bits
        self._upgrade = upgrade

    @property
    def location(self) -> str:
        return self.cluster.location

    def read_parameters(self) -> IndexParameters | None:
        meta = self.cluster.client.hgetall(self.cluster.keys.meta)
        return self._parse_meta(meta) if meta else None

    def create(self, parameters: IndexParameters) -> IndexParameters:
        bits = self.requested_bucket_bits or DEFAULT_BUCKET_BITS
        groups(parameters, bits)  # validates before anything is written
        check_prefix_free(self.cluster.server.prefix, self.location)
        fields = {
            "format": FORMAT,
            "layout": SPREAD,
            "version": str(SPREAD_VERSION),
            "max_distance": str(parameters.max_distance),
            "blocks": str(parameters.blocks),
            "features": parameters.features,
            "bucket_bits": str(bits),
            "homes": str(DEFAULT_HOMES),
            "drop_streams": str(DROP_STREAMS),
            "anchors": ANCHORS_FORMAT,
            "sketch": SKETCH_FORMAT,
            "created_at": repr(time.time()),
        }
        args = [x for item in fields.items() for x in item]
        reply = self.cluster.client.eval(CREATE_META, 1, self.cluster.keys.meta, *args)
        return self._parse_meta(dict(zip(reply[::2], reply[1::2], strict=True)))

    def _parse_meta(self, meta: dict[str, str]) -> IndexParameters:
        if meta.get("format") != FORMAT:
            raise NotAnIndex(
                f"{self.location} holds a key {self.cluster.keys.meta} that is not "
                "scrapy-simhash's; it was left untouched. Choose another prefix in "
                "SIMHASH_INDEX_URI"
            )
        if meta.get("layout") != SPREAD:
            raise NotAnIndex(
                f"The index at {self.location} keeps all its keys in one slot (it was "
                "created without spread=true): open it without spread=true, or copy it into "
                "a spread index with: scrapy-simhash rebuild --index OLD --into NEW"
            )
        version = int(meta.get("version", "0"))
        if version in (PRE_SKETCH_SPREAD_VERSION, PRE_SEEN_SPREAD_VERSION):
            meta = self._add_sketches(meta, version)
            version = SPREAD_VERSION
        check_layout_version(version, SPREAD_VERSION, self.location, "layout version")
        check_anchors_format(meta.get("anchors"), self.location)
        check_sketch_format(meta.get("sketch"), self.location)
        stored = stored_parameters(meta, self.location, self.cluster.keys.meta)
        self.bucket_bits = int(meta.get("bucket_bits", DEFAULT_BUCKET_BITS))
        if self.requested_bucket_bits not in (None, self.bucket_bits):
            raise ConfigurationError(
                f"The index at {self.location} was built with bucket_bits={self.bucket_bits}, "
                f"not {self.requested_bucket_bits}"
            )
        self.cluster.keys = Keys(self.cluster.server.prefix, int(meta.get("homes", DEFAULT_HOMES)))
        return stored

    def _add_sketches(self, meta: dict[str, str], version: int) -> dict[str, str]:
        """Upgrade an index written before text sketches (its pages keep none: they hold
        an unknown share of a page's text) or before sightings (its stored pages are
        counted as seen) when asked to, else refuse it naming the command."""
        if not self._upgrade:
            missing = (
                "text sketches"
                if version == PRE_SKETCH_SPREAD_VERSION
                else "counting boilerplate in pages seen"
            )
            raise IndexUnavailable(
                f"The index at {self.location} has layout version {version}, written before "
                f"{missing} (this scrapy-simhash writes version {SPREAD_VERSION}); it was "
                "left untouched. Upgrade it (its pages are kept; a page that looks like one "
                "of them is kept too, as the share of its text they hold is unknown) with: "
                f"scrapy-simhash upgrade --index {self.location}"
            )
        added = {"version": str(SPREAD_VERSION), "sketch": SKETCH_FORMAT}
        with self.cluster.server.errors("upgrade"):
            count_spread(
                self.cluster.client,
                self.cluster.server.prefix,
                int(meta.get("homes", DEFAULT_HOMES)),
            )
            self.cluster.client.hset(self.cluster.keys.meta, mapping=added)
        logger.warning(
            "Upgraded the index at %s to layout version %d (sketches %s)",
            self.location, SPREAD_VERSION, SKETCH_FORMAT,
        )  # fmt: skip
        return {**meta, **added}
