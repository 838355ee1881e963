"""Containment on a spread Redis index: the calls of a page's paragraph anchors in their
anchor slots (see :mod:`~.spread_layout`), and the test of :func:`scrapy_simhash.anchors.
contained` made by the client on what those calls return.

A page's anchors are read and reserved in the first round of its check, beside its
groups; a page found contained, committed or pending, is a match exactly as a near one
is (a pending one is resolved through its commit record), after the near ones: the
distance test stays first. Two copies checked at once share at least two anchors, and in
the slot of each shared anchor one script runs after the other and sees it; its record
carries the other's whole list of anchors, so that one meeting decides.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ...anchors import MIN_SHARED, Anchors
from ..rule import is_boilerplate, sighting
from .spread_io import Call
from .spread_layout import Found

if TYPE_CHECKING:
    from .cluster import Cluster


def stored_anchors(anchors: Anchors | None) -> str:
    """*anchors* as the records and the home store them (``''`` for none)."""
    if not anchors:
        return ""
    return json.dumps([anchors.words, anchors.cover, list(anchors.hashes)])


def read_anchors(value: str | None) -> Anchors | None:
    """:func:`stored_anchors` read back."""
    if not value:
        return None
    words, cover, hashes = json.loads(value)
    return Anchors(tuple(hashes), (), words, cover)


class SpreadAnchors:
    """The calls of a page's anchors on *cluster*, and what they return: a part of
    :class:`~.spread.SpreadStore`."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster

    def calls(
        self,
        anchors: Anchors | None,
        txn: str,
        tail: str,
        hex_value: str,
        reserve: bool,
        committed: bool = False,
        key: str = "",
    ) -> list[Call]:
        """The calls reading (and, with *reserve*, reserving) *anchors*, one per anchor
        slot; reserving counts the page under *key* among those seen holding them."""
        if not anchors:
            return []
        by_tag: dict[str, list[str]] = {}
        for anchor in anchors.hashes:
            by_tag.setdefault(self.cluster.keys.anchor(anchor), []).append(str(anchor))
        head = [txn, tail, hex_value, anchors.words, anchors.cover, json.dumps(anchors.hashes)]
        head += ["1" if reserve else "0", "1" if committed else "0", sighting(key)]
        sha = self.cluster.sha["check_anchors"]
        return [
            (tag, sha, [f"{tag}:anchors", f"{tag}:seen"], [*head, *mine])
            for tag, mine in by_tag.items()
        ]

    def settle(self, txn: str, where: dict[str, list[str]], commit: bool) -> list[Call]:
        """Calls marking committed (or removing) the records of *txn* under the anchors of
        ``where`` (anchor slot -> anchors)."""
        sha, flag = self.cluster.sha["settle_anchors"], "1" if commit else "0"
        return [
            (tag, sha, [f"{tag}:anchors"], [txn, flag, *hashes])
            for tag, hashes in where.items()
            if hashes
        ]

    def own(self, calls: list[Call]) -> dict[str, list[str]]:
        """Anchor slot -> the page's anchors there, from its :meth:`_anchor_calls`."""
        return {tag: list(args[9:]) for tag, _, _, args in calls}

    def release_page(self, txn: str, value: str) -> list[Call]:
        """Calls removing the records of a page whose anchors the home stored as *value*."""
        anchors = read_anchors(value)
        if anchors is None:
            return []
        where: dict[str, list[str]] = {}
        for anchor in anchors.hashes:
            where.setdefault(self.cluster.keys.anchor(anchor), []).append(str(anchor))
        return self.settle(txn, where, False)

    def contained(
        self, calls: list[Call], replies: list[str], anchors: Anchors, key: str, value: int
    ) -> tuple[list[Found], list[tuple[str, str, Found]]]:
        """The pages the anchor replies show sharing at least ``MIN_SHARED`` of *anchors*
        (the candidates of :func:`~scrapy_simhash.index.rule.decide` found by anchors),
        other than those under *key*: (each one found, (slot, anchor, entry) where it was
        found). An anchor that is boilerplate for the page (by its sightings, see
        :func:`~scrapy_simhash.index.rule.is_boilerplate`) is no evidence: how many records
        it lists does not matter (some may be attempts pending or aborted)."""
        records: dict[str, list] = {}
        where: dict[str, list[tuple[str, str]]] = {}
        evidence: set[int] = set()
        page = sighting(key)
        for (tag, *_), reply in zip(calls, replies, strict=True):
            for anchor, listed, seen in json.loads(reply):
                if listed == "b" or is_boilerplate([int(s) for s in seen.split(",") if s], page):
                    continue
                evidence.add(int(anchor))
                for record in listed or []:
                    records.setdefault(record[0], record)
                    where.setdefault(record[0], []).append((tag, anchor))
        found, places = [], []
        for txn, (_, other, at, committed, hex_value, words, cover, hashes) in records.items():
            if other == key:
                continue  # never a page's own (see rule.decide)
            shared, _ = anchors.shared_with(h for h in hashes if h in evidence)
            if len(shared) < MIN_SHARED:
                continue  # no candidate (see rule.by_anchors)
            distance = (value ^ int(hex_value, 16)).bit_count()
            entry = Found(distance, hex_value, txn, other, float(at), committed == 1, False,
                          tuple(sorted(shared)), (len(hashes), words, cover))  # fmt: skip
            found.append(entry)
            places += [(tag, anchor, entry) for tag, anchor in where[txn]]
        return found, places

    def cleanup(self, places: list[tuple[str, str, Found]], states: dict[str, str]) -> list[Call]:
        """Calls marking the records found committed as such and removing aborted ones."""
        calls = []
        for tag, anchor, found in places:
            state = states.get(found.txn)
            if state in ("c", "a") and not found.committed:
                calls += self.settle(found.txn, {tag: [anchor]}, state == "c")
        return calls
