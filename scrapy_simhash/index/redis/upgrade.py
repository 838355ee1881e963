"""Counting the pages an index stored before sightings as seen: ``scrapy-simhash upgrade``
of a single-slot Redis index of layout version 5, or of a spread one of version 3 (see
:mod:`scrapy_simhash.index.rule`). The pages such an index dropped were never counted;
from the upgrade on, every page checked is. Run while no crawl writes to the index."""

from __future__ import annotations

import json

from ..rule import sighted, sighting


def _sightings(keys: list[str]) -> str:
    seen: list[int] = []
    for key in keys:
        seen = sighted(seen, sighting(key)) or seen
    return ",".join(map(str, seen))


def count_single_slot(client, tag: str) -> int:
    """Write ``{tag}:seen`` from the pages each anchor of ``{tag}:anchors`` lists (its
    first ``MAX_ANCHOR_PAGES + 1``); returns the anchors counted."""
    fingerprints, held = f"{tag}:fp", f"{tag}:pa"
    counted = 0
    for anchor, value in client.hscan_iter(f"{tag}:anchors", count=1000):
        keys = []
        for seq in value.split("|", 1)[1].split(","):
            page = client.hget(held, seq)
            records = page and client.hget(fingerprints, json.loads(page)[0])
            keys += [key for s, key, _ in json.loads(records or "[]") if str(s) == seq]
        if keys:
            client.hset(f"{tag}:seen", anchor, _sightings(keys))
            counted += 1
    return counted


def count_spread(client, prefix: str, homes: int) -> int:
    """Write the ``:seen`` hash of every anchor slot of a spread index from the committed
    records of its anchors (an anchor already ``'b'`` stays so); returns the anchors
    counted."""
    counted = 0
    for home in range(homes):
        tag = f"{{{prefix}:a:{home}}}"
        for anchor, value in client.hscan_iter(f"{tag}:anchors", count=1000):
            if value == "b":
                continue
            keys = [record[1] for record in json.loads(value) if record[3] == 1]
            if keys:
                client.hset(f"{tag}:seen", anchor, _sightings(keys))
                counted += 1
    return counted
