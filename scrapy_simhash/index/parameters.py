"""What an index was built for, and the checks that refuse anything else on open.

:class:`IndexParameters` are stored in every index; :class:`RequestedParameters` are those
asked for when opening one. The stored layout's version and the formats of its anchors and
sketches are checked beside them: an index is refused, untouched, with both values and
what to do, never rebuilt on its own.

Apart from :mod:`~.base` (the interface every index implements): each backend reads and
stores these its own way, and checks them with the same functions and the same words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..anchors import ANCHORS_FORMAT
from ..exceptions import IndexCorrupt, IndexParameterMismatch, IndexUnavailable
from ..sketch import SKETCH_FORMAT
from .blocks import BlockPlan, default_blocks


@dataclass(frozen=True)
class IndexParameters:
    """What an index was built for; stored in the index and checked on every open."""

    max_distance: int
    blocks: int
    features: str  #: the fingerprinter's signature: fingerprints of other features never mix

    @property
    def plan(self) -> BlockPlan:
        return BlockPlan(max_distance=self.max_distance, blocks=self.blocks)


@dataclass(frozen=True)
class RequestedParameters:
    """Parameters asked for when opening an index; ``None`` means "whatever is stored"
    (or the default, for a new index)."""

    max_distance: int | None = None
    blocks: int | None = None
    features: str | None = None

    def for_new_index(self, default_features: str) -> IndexParameters:
        k = 3 if self.max_distance is None else self.max_distance
        blocks = default_blocks(k) if self.blocks is None else self.blocks
        params = IndexParameters(k, blocks, self.features or default_features)
        params.plan  # noqa: B018  (validates the combination before anything is written)
        return params

    def check(self, stored: IndexParameters, location: str) -> IndexParameters:
        """Return *stored* if it satisfies this request, else raise with both values.
        A smaller ``max_distance`` than the stored one is satisfied: an index finds every
        page within its distance, so it answers any smaller one too."""
        asked_beyond = self.max_distance is not None and self.max_distance > stored.max_distance
        wanted = {
            "max_distance": self.max_distance if asked_beyond else None,
            "blocks": self.blocks,
            "features": self.features,
        }
        differences = [
            f"{name}: index has {getattr(stored, name)!r}, requested {value!r}"
            for name, value in wanted.items()
            if value is not None and value != getattr(stored, name)
        ]
        if differences:
            rebuild = (
                f" To keep its pages, build a copy for distance {self.max_distance} and point "
                f"SIMHASH_INDEX_URI at it: scrapy-simhash rebuild --index {location} "
                f"--max-distance {self.max_distance} --into NEW-INDEX."
                if asked_beyond and len(differences) == 1
                else ""
            )
            raise IndexParameterMismatch(
                f"The index at {location} was built with other parameters ("
                + "; ".join(differences)
                + "). Use the index's parameters, or point SIMHASH_INDEX_URI at a new index "
                "(an index is never rebuilt on its own: it would lose every stored page)." + rebuild
            )
        return stored


def stored_parameters(meta: Mapping[str, str], location: str, where: str) -> IndexParameters:
    """The parameters in the stored *meta* (read from *where*), else :class:`IndexCorrupt`."""
    try:
        return IndexParameters(int(meta["max_distance"]), int(meta["blocks"]), meta["features"])
    except (KeyError, ValueError):
        raise IndexCorrupt(
            f"The index at {location} has no valid parameters in {where}; restore it from "
            "a backup (scrapy-simhash export/import) or use another index"
        ) from None


def check_layout_version(version: int, supported: int, location: str, what: str) -> None:
    """Refuse a layout (*what*: "schema version", "layout version") other than
    *supported*: a newer one needs a newer scrapy-simhash, an older one an export with
    the scrapy-simhash that built it (there is no upgrade in place)."""
    if version > supported:
        raise IndexUnavailable(
            f"The index at {location} has {what} {version}, newer than this scrapy-simhash "
            f"knows ({supported}); upgrade scrapy-simhash"
        )
    if version < supported:
        raise IndexUnavailable(
            f"The index at {location} has {what} {version}, older than this "
            f"scrapy-simhash's ({supported}), and there is no automatic upgrade. It was left "
            "untouched: export it with the scrapy-simhash that built it (scrapy-simhash "
            "export) and import the file into a new index with this one"
        )


def check_anchors_format(stored: str | None, location: str) -> None:
    """Refuse an index whose paragraph anchors were made otherwise than this
    scrapy-simhash makes them (they would never match)."""
    if stored != ANCHORS_FORMAT:
        raise IndexParameterMismatch(
            f"The index at {location} stores paragraph anchors of the format {stored!r}; "
            f"this scrapy-simhash makes {ANCHORS_FORMAT!r}, and the two never match. Use "
            "the scrapy-simhash that built it, or point SIMHASH_INDEX_URI at a new index "
            "(scrapy-simhash export, then import into the new one, keeps its pages)"
        )


def check_sketch_format(stored: str | None, location: str) -> None:
    """Refuse an index whose sketches were made otherwise than this scrapy-simhash makes
    them (their samples would never match)."""
    if stored != SKETCH_FORMAT:
        raise IndexParameterMismatch(
            f"The index at {location} stores text sketches of the format {stored!r}; "
            f"this scrapy-simhash makes {SKETCH_FORMAT!r}, and the two never match. Use "
            "the scrapy-simhash that built it, or point SIMHASH_INDEX_URI at a new index "
            "(scrapy-simhash export, then import into the new one, keeps its pages)"
        )
